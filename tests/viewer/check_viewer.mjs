// Opens a Trace Event JSON file in a real trace viewer, speedscope (pinned in package.json,
// installed by scripts/setup), served over a local HTTP server and loaded by headless Debian
// Chromium through playwright-core. The viewer must import it with no console error or
// warning, and the model it built is read back through its own Export: per track, the slices
// it opened (those at depth 0 are instances, deeper ones their phases), printed as
// tests/lit/check_trace.py prints the file's own, so a test can compare the two. A screenshot
// of the viewer goes to SCREENSHOT.
// Usage: node check_viewer.mjs TRACE.json SCREENSHOT.png
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const [tracePath, screenshot] = process.argv.slice(2);
if (!tracePath || !screenshot) {
  console.error('usage: check_viewer.mjs TRACE.json SCREENSHOT.png');
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
const app = path.join(here, 'node_modules', 'speedscope', 'dist', 'release');
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json',
                '.wasm': 'application/wasm', '.png': 'image/png', '.ico': 'image/x-icon', '.woff2': 'font/woff2' };

// The viewer's files, and the trace as /trace.json (speedscope fetches a #profileURL only over HTTP).
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://localhost');
  const file = url.pathname === '/trace.json' ? tracePath
    : path.join(app, path.normalize(url.pathname === '/' ? '/index.html' : url.pathname));
  fs.readFile(file, (err, data) => {
    if (err) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
    res.end(data);
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));

const problems = [];
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
         '--disable-sync'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  page.setDefaultTimeout(60000);
  page.on('console', (m) => {
    // Chromium's software WebGL (SwiftShader, no GPU here) reports its own slow paths as
    // warnings; they say nothing about the trace or the viewer.
    if (m.type() === 'warning' && /^\[\.WebGL-[^\]]*\]GL Driver Message \([^)]*, Performance,/.test(m.text())) return;
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    d.dismiss();
  });
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  await page.goto(`http://127.0.0.1:${server.address().port}/#profileURL=/trace.json`);
  // Loaded: the toolbar offers Export and names the first track, with "(1/N)" after its
  // name when there are N > 1.
  await page.getByText('Export').waitFor();
  const counter = await page.getByText(/\(1\/\d+\)$/).first().textContent({ timeout: 1000 }).catch(() => '(1/1)');
  const shown = Number(counter.match(/\(1\/(\d+)\)$/)[1]);
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByText('Export').click()]);
  const model = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
  // The screenshot shows the second track (the first queue's, with its phases, in Tandem's traces).
  if (shown > 1) {
    await page.keyboard.press('n');
    await page.getByText(new RegExp(`\\(2/${shown}\\)$`)).first().waitFor();
  }
  await page.screenshot({ path: screenshot });
  if (model.profiles.length === 0) problems.push('the viewer built no track');
  if (model.profiles.length !== shown) problems.push(`the toolbar shows ${shown} tracks, the model has ${model.profiles.length}`);

  const lines = [];
  for (const profile of model.profiles) {
    // speedscope names a track "PROCESS (pid P), THREAD (tid T)".
    const name = profile.name.replace(/^.* \(pid \d+\), /, '').replace(/ \(tid \d+\)$/, '');
    let depth = 0;
    let instances = 0;
    let phases = 0;
    for (const e of profile.events) {
      if (e.type === 'O') {
        if (depth === 0) ++instances;
        else ++phases;
        ++depth;
      } else {
        --depth;
      }
    }
    if (depth !== 0) problems.push(`track ${name}: ${depth} slices left open`);
    lines.push([name, `track ${name}: ${instances} slices` + (phases ? `, ${phases} phases` : '')]);
  }
  // By track name, as check_trace.py orders them.
  lines.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  if (problems.length === 0) console.log(lines.map((l) => l[1]).join('\n'));
} catch (e) {
  problems.push(String(e));
} finally {
  await browser.close();
  server.close();
}
if (problems.length) {
  for (const p of problems.slice(0, 20)) console.error(`check_viewer: ${p}`);
  process.exit(1);
}
