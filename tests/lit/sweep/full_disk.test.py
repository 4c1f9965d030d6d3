"""Runs a 90-point sweep whose CSV may not grow past about 40 of its rows (RLIMIT_FSIZE, with
SIGXFSZ ignored so that the write fails with EFBIG as on a full disk), prints how it ended and
what the CSV kept, then resumes it without the limit and compares the result with an
uninterrupted run. Usage: full_disk.test.py TANDEM KERNEL MODEL DIR"""
import os
import resource
import signal
import subprocess
import sys

tandem, kernel, model, d = sys.argv[1:]
sweep = os.path.join(d, "s.yaml")
with open(sweep, "w") as f:
    f.write(f"kernels: {kernel}\nmodel: {model}\npipeline: none\nparameters:\n  dma.engines: [1, 2, 4]\n"
            f"  dma.fixed_cost_ns: [{', '.join(str(10 * i) for i in range(30))}]\nmetrics: [total_ns, races]\n")
whole = os.path.join(d, "whole.csv")
subprocess.run([tandem, "sweep", sweep, "-o", whole], check=True, capture_output=True)
text = open(whole).read()
header, rows = text.splitlines()[0], text.splitlines()[1:]
# Room for the header and about 40 rows; more than a point's scratch model file needs.
limit = len(header) + 1 + sum(len(r) + 1 for r in rows[:40]) + len(rows[40]) // 2
assert limit > os.path.getsize(model) + 1024, (limit, os.path.getsize(model))


def limited():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))


csv = os.path.join(d, "s.csv")
full = subprocess.run([tandem, "sweep", sweep, "-o", csv], capture_output=True, text=True, preexec_fn=limited)
lines = full.stderr.splitlines()
print(f"full: exit {full.returncode}, {len(lines)} line{'s' if len(lines) != 1 else ''}")
print(full.stderr.strip())
kept = open(csv).read()
complete = [r for r in kept.splitlines()[1:] if r.count(",") == header.count(",")]
print(f"kept: {len(complete)} complete rows of {len(rows)}, {'none torn' if kept.endswith(chr(10)) else 'one torn'}")
resume = subprocess.run([tandem, "sweep", sweep, "-o", csv, "--resume"], capture_output=True, text=True)
print(f"resume: exit {resume.returncode}")
print("same as an uninterrupted run:", open(csv).read() == text)
