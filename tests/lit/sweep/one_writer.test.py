"""Starts a long sweep writing CSV, runs a second sweep on the same CSV while the first runs,
prints how the second ended and whether the first's header is intact, stops the first
(SIGTERM), then runs the second again. Usage: one_writer.test.py TANDEM LONG_SWEEP SWEEP CSV"""
import os
import signal
import subprocess
import sys
import time

tandem, long_sweep, sweep, csv = sys.argv[1:]
first = subprocess.Popen([tandem, "sweep", long_sweep, "-o", csv], stderr=subprocess.DEVNULL)
deadline = time.time() + 60
while not (os.path.exists(csv) and os.path.getsize(csv) > 0) and time.time() < deadline:
    time.sleep(0.1)
header = open(csv).readline()
second = subprocess.run([tandem, "sweep", sweep, "-o", csv], capture_output=True, text=True)
print(f"second sweep: exit {second.returncode}")
print(second.stderr.strip())
print("first sweep's header kept:", open(csv).readline() == header and header.startswith("point,kernel,dma.fixed_cost_ns"))
first.send_signal(signal.SIGTERM)
first.wait()
after = subprocess.run([tandem, "sweep", sweep, "-o", csv], capture_output=True, text=True)
print(f"after: exit {after.returncode}")
