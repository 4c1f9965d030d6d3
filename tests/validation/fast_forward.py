#!/usr/bin/env python3
"""Fast-forward changes no result: every kernel under the directory (workloads/ and the lit
kernels) gives the same `tandem sim --json` output, exit code and error under `none`, `default`
and `auto` with fast-forward on (the default) and with --no-fast-forward. It prints how many
runs skipped steady periods (`--progress`'s last line), so that a change that stops skipping
shows. Usage: fast_forward.py TANDEM DIR"""
import concurrent.futures
import glob
import re
import subprocess
import sys

tandem, root = sys.argv[1], sys.argv[2]
jobs = [(k, p) for k in sorted(glob.glob(f"{root}/**/*.kir", recursive=True)) for p in ("none", "default", "auto")]
if not jobs:
    sys.exit(f"no kernels under {root}")
SKIPPED = re.compile(r"(\d+) of them in steady periods fast-forwarded")


def run(job):
    kernel, pipeline = job
    outs = []
    for extra in ([], ["--no-fast-forward"]):
        p = subprocess.run([tandem, "sim", kernel, f"--passes={pipeline}", "--json", "--progress"] + extra,
                           capture_output=True, text=True)
        # The progress line's rate and time differ from run to run; errors must not.
        err = [line for line in p.stderr.splitlines() if not line.startswith("tandem sim:")]
        outs.append((p.returncode, p.stdout, err, SKIPPED.search(p.stderr)))
    (code, out, err, skipped), (full_code, full_out, full_err, _) = outs
    return kernel, pipeline, (code, out, err) == (full_code, full_out, full_err), int(skipped.group(1)) if skipped else 0


differ = skipping = 0
with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    for kernel, pipeline, same, skipped in pool.map(run, jobs):
        skipping += skipped > 0
        if not same:
            differ += 1
            print(f"{kernel} [{pipeline}]: the result differs with --no-fast-forward")
print(f"{len(jobs)} runs, {skipping} of them skipped steady periods; {differ} differ with --no-fast-forward")
sys.exit(1 if differ else 0)
