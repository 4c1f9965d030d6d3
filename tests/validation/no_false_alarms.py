#!/usr/bin/env python3
"""No false alarms: every kernel in workloads/ simulates clean under `none` and `default`,
nominal and in 20 perturbed runs (the race checker finds nothing; exit 0), and `default`
validates (`tandem opt --verify`: every pass keeps what the kernel computes). The kernels of
workloads/trn/calibration/ (full-size published matmuls, about 10^5 dynamic instructions
each) get 3 perturbed runs, which keeps the test within ctest's time limit.
Usage: no_false_alarms.py TANDEM WORKLOADS_DIR"""
import concurrent.futures
import glob
import subprocess
import sys

tandem, workloads = sys.argv[1], sys.argv[2]
jobs = [(k, p) for k in sorted(glob.glob(f"{workloads}/**/*.kir", recursive=True)) for p in ("none", "default")]
if not jobs:
    sys.exit(f"no kernels under {workloads}")


def run(job):
    kernel, pipeline = job
    runs = 3 if "/calibration/" in kernel else 20
    proc = subprocess.run([tandem, "sim", kernel, f"--passes={pipeline}", f"--perturb-runs={runs}"],
                          capture_output=True, text=True)
    if proc.returncode == 0 and pipeline != "none":
        proc = subprocess.run([tandem, "opt", kernel, f"--passes={pipeline}", "--verify"], capture_output=True, text=True)
        proc.stdout = ""
    return kernel, pipeline, proc.returncode, proc.stdout.splitlines()[:3] + proc.stderr.splitlines()[:3]


failures = 0
with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    for kernel, pipeline, code, head in pool.map(run, jobs):
        status = ("clean" if pipeline == "none" else "clean, validates") if code == 0 else f"exit {code}"
        print(f"{kernel} [{pipeline}]: {status}")
        if code != 0:
            failures += 1
            for line in head:
                print("    " + line)
print(f"{len(jobs) - failures} of {len(jobs)} runs clean")
sys.exit(1 if failures else 0)
