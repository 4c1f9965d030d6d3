"""Starts a long search writing LOG, runs a second search on the same log while the first
runs, prints how the second ended and whether the first's header is intact, stops the first
(SIGTERM), then runs the second again. Usage: one_writer.test.py TANDEM LONG_KERNEL KERNEL LOG"""
import os
import signal
import subprocess
import sys
import time

tandem, long_kernel, kernel, log = sys.argv[1:]
first = subprocess.Popen([tandem, "tune", long_kernel, "--log", log], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
deadline = time.time() + 60
while not (os.path.exists(log) and os.path.getsize(log) > 0) and time.time() < deadline:
    time.sleep(0.1)
header = open(log).readline()
for resume in ([], ["--resume"]):
    second = subprocess.run([tandem, "tune", kernel, "--budget", "2", "--log", log] + resume, capture_output=True,
                            text=True)
    print(f"second search{' --resume' if resume else ''}: exit {second.returncode}")
    print(second.stderr.strip())
print("first search's header kept:", open(log).readline() == header and header.startswith("# tandem tune log 1: "))
first.send_signal(signal.SIGTERM)
first.wait()
after = subprocess.run([tandem, "tune", kernel, "--budget", "2", "--log", log], capture_output=True, text=True)
print(f"after: exit {after.returncode}")
