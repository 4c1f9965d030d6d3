#!/usr/bin/env python3
"""Starts CMD, waits until a file matching PATTERN (a glob) exists, sends it SIGNAL (INT or
TERM) and waits for it to end. Prints how it ended ("killed by SIGINT" or "exit N") for
FileCheck; exits 1 when no such file appeared within a minute.
Usage: interrupt.py SIGNAL PATTERN CMD ARGS..."""
import glob
import signal
import subprocess
import sys
import time

sig = getattr(signal, "SIG" + sys.argv[1])
pattern = sys.argv[2]
# lit's workers ignore SIGINT, and an ignored signal stays ignored across exec: restore it.
proc = subprocess.Popen(sys.argv[3:], stdout=subprocess.DEVNULL,
                        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
deadline = time.time() + 60
while not glob.glob(pattern):
    if proc.poll() is not None or time.time() > deadline:
        proc.kill()
        print(f"interrupt: no file matching {pattern} appeared", file=sys.stderr)
        sys.exit(1)
    time.sleep(0.05)
proc.send_signal(sig)
try:
    code = proc.wait(timeout=60)
except subprocess.TimeoutExpired:
    proc.kill()
    print(f"interrupt: still running a minute after {signal.Signals(sig).name}", file=sys.stderr)
    sys.exit(1)
print(f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit {code}")
