#!/usr/bin/env python3
"""Loads an HTML report in headless Chromium at a given window width and measures its text in
the page (the rectangles Chromium laid out for each text node, HTML and SVG alike): no two
may overlap, none may be clipped, by the window's edges or by the nearest box that hides
its overflow (an inline SVG does), and none may render smaller than 11 px. A text's rendered
size is its computed font size times the scale its SVG applies on the way to the screen (the
vertical scale of the text's screen transform: a viewBox wider than the box the SVG is drawn
in shrinks its text). Prints "layout ok at W px: N text boxes, the smallest S px", or the
problems on stderr and exits 1. Also writes a screenshot at that width (kept as a test
artifact).
Usage: check_layout.py REPORT.html WIDTH SCREENSHOT.png"""
import html as h
import json
import os
import re
import subprocess
import sys
import tempfile

MIN_TEXT_PX = 11  # the smallest text a report may render, at every window width

MEASURE = r"""
<script>
(function () {
  const MIN_TEXT_PX = %MIN%;
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
  // The size a text renders at, in screen px: an SVG text's font size is in user units, which
  // its screen transform scales (the y axis carries the glyphs' height, rotated or not).
  const rendered = (el) => {
    const size = parseFloat(getComputedStyle(el).fontSize);
    const m = el instanceof SVGGraphicsElement ? el.getScreenCTM() : null;
    return m ? size * Math.hypot(m.c, m.d) : size;
  };
  const problems = [];
  let smallest = Infinity;
  for (const b of boxes) {
    const px = rendered(b.el);
    smallest = Math.min(smallest, px);
    if (px < MIN_TEXT_PX - 0.05) problems.push('text under ' + MIN_TEXT_PX + ' px: "' + b.text + '" renders at ' + px.toFixed(1) + ' px');
  }
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
  out.textContent = JSON.stringify({boxes: boxes.length, smallest: smallest, problems: problems});
  document.body.appendChild(out);
})();
</script>
"""


def main(report, width, screenshot):
    html = open(report, encoding="utf-8").read()
    with tempfile.TemporaryDirectory() as tmp:
        page = os.path.join(tmp, "page.html")
        with open(page, "w", encoding="utf-8") as f:
            f.write(html.replace("</body>", MEASURE.replace("%MIN%", str(MIN_TEXT_PX)) + "</body>"))
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
        print(f"check_layout: {width} px: the smallest text renders at {result['smallest']:.1f} px", file=sys.stderr)
        sys.exit(1)
    print(f"layout ok at {width} px: {result['boxes']} text boxes, the smallest {result['smallest']:.1f} px")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
