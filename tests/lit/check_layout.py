#!/usr/bin/env python3
"""Loads an HTML report in headless Chromium at a given window width and measures its text in
the page (the rectangles Chromium laid out for each text node, HTML and SVG alike): no two
may overlap, and none may be clipped, by the window's edges or by the nearest box that hides
its overflow (an inline SVG does). Prints "layout ok at W px: N text boxes", or the problems
on stderr and exits 1. Also writes a screenshot at that width (kept as a test artifact).
Usage: check_layout.py REPORT.html WIDTH SCREENSHOT.png"""
import html as h
import json
import os
import re
import subprocess
import sys
import tempfile

MEASURE = r"""
<script>
(function () {
  const boxes = [];
  // Leaf text: each text node's own rectangles (Range), HTML and SVG alike.
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.textContent.trim()) continue;
    const el = n.parentElement;
    if (!el || el.closest('title,script,style')) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    for (const r of range.getClientRects())
      if (r.width > 0 && r.height > 0) boxes.push({el, r, text: n.textContent.trim().slice(0, 40)});
  }
  const problems = [];
  const W = document.documentElement.clientWidth;
  for (const b of boxes) {
    if (b.r.right > W + 0.5 || b.r.left < -0.5) problems.push('clipped by the window: "' + b.text + '"');
    for (let a = b.el; a && a !== document.body; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
      const c = a.getBoundingClientRect();
      if (b.r.right > c.right + 0.5 || b.r.left < c.left - 0.5) problems.push('clipped by its box: "' + b.text + '"');
      break;
    }
  }
  for (let i = 0; i < boxes.length; ++i)
    for (let j = i + 1; j < boxes.length; ++j) {
      const p = boxes[i].r, q = boxes[j].r;
      const w = Math.min(p.right, q.right) - Math.max(p.left, q.left);
      const h = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
      if (w > 1 && h > 1) problems.push('overlap: "' + boxes[i].text + '" and "' + boxes[j].text + '"');
    }
  const out = document.createElement('pre');
  out.id = 'layout-check';
  out.textContent = JSON.stringify({boxes: boxes.length, problems: problems});
  document.body.appendChild(out);
})();
</script>
"""


def main(report, width, screenshot):
    html = open(report, encoding="utf-8").read()
    with tempfile.TemporaryDirectory() as tmp:
        page = os.path.join(tmp, "page.html")
        with open(page, "w", encoding="utf-8") as f:
            f.write(html.replace("</body>", MEASURE + "</body>"))
        common = ["chromium", "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
                  f"--window-size={width},1200"]
        dom = subprocess.run(common + ["--dump-dom", "file://" + page], capture_output=True, text=True, timeout=120)
        subprocess.run(common + ["--screenshot=" + os.path.abspath(screenshot), "file://" + os.path.abspath(report)],
                       capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="layout-check">(.*?)</pre>', dom.stdout, re.S)
    if not m:
        sys.exit(f"check_layout: no measurement at {width} px (chromium exited {dom.returncode})")
    result = json.loads(h.unescape(m.group(1)))
    if result["problems"]:
        for p in sorted(set(result["problems"]))[:40]:
            print(f"check_layout: {width} px: {p}", file=sys.stderr)
        sys.exit(1)
    print(f"layout ok at {width} px: {result['boxes']} text boxes")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
