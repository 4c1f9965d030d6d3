#!/usr/bin/env python3
"""Loads an HTML report in headless Chromium: it must render with no console message, and the
DOM Chromium built is printed (for FileCheck). A screenshot goes to SCREENSHOT.
Usage: check_report.py REPORT.html SCREENSHOT.png"""
import os
import subprocess
import sys

report, screenshot = os.path.abspath(sys.argv[1]), sys.argv[2]
common = ["chromium", "--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr", "--v=0",
          "--window-size=1280,2400"]
dom = subprocess.run(common + ["--dump-dom", "file://" + report], capture_output=True, text=True, timeout=120)
shot = subprocess.run(common + ["--screenshot=" + screenshot, "file://" + report], capture_output=True, text=True,
                      timeout=120)
problems = []
for name, proc in (("--dump-dom", dom), ("--screenshot", shot)):
    if proc.returncode != 0:
        problems.append(f"chromium {name} exited {proc.returncode}")
    problems += [f"console: {line}" for line in proc.stderr.splitlines() if "CONSOLE" in line]
if not os.path.exists(screenshot) or os.path.getsize(screenshot) == 0:
    problems.append("no screenshot")
if problems:
    print("check_report: " + "; ".join(problems), file=sys.stderr)
    sys.exit(1)
print(dom.stdout)
