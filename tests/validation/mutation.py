#!/usr/bin/env python3
"""Mutation check of the race checker on the GEMM K loop under the default pipeline.

The scheduled kernel (`tandem opt --passes=default,assign-engines`, every edge a `dep` line)
is simulated once per mutant, each mutant missing one synchronisation edge, nominally and in
20 perturbed runs. An independent witness reads each run's trace: if an instance of the
edge's destination started before the instance of its source it depended on had completed,
the removal let a read see a different producer (or a write land out of order) in that run,
and the checker must have reported a race in that same run (exit 3). Edges whose ordering
other synchronisation still implies (the barrier, an engine's own order) never fire the
witness. Prints mutants caught / total.
Usage: mutation.py TANDEM WORKLOADS_DIR"""
import json
import os
import re
import subprocess
import sys
import tempfile

tandem, workloads = sys.argv[1], sys.argv[2]
RUNS = 20

scheduled = subprocess.run([tandem, "opt", f"{workloads}/trn/gemm_k.kir", "--passes=default,assign-engines"],
                           check=True, capture_output=True, text=True).stdout
lines = scheduled.splitlines()
deps = [i for i, l in enumerate(lines) if l.strip().startswith("dep ")]
DEP = re.compile(r"dep %(\S+) -> %(\S+) (\w+)(?: distance=(\d+))?")
NAME = re.compile(r"%([^\[]+)(?:\[k=(\d+)\])?$")


def witness(trace, src, dst, distance):
    """Did some instance of dst start before the src instance it waits for completed?"""
    start, end = {}, {}
    for e in trace["traceEvents"]:
        # A slice is a 'B'/'E' pair on its track; instances only, not their phases.
        if e.get("ph") not in ("B", "E") or e.get("cat") == "phase":
            continue
        m = NAME.match(e["name"])
        key = (m.group(1), int(m.group(2)) if m.group(2) else None)
        (start if e["ph"] == "B" else end)[key] = e["ts"]
    srcs = [k for k in end if k[0] == src]
    dsts = [k for k in start if k[0] == dst]
    last = max((k[1] for k in srcs if k[1] is not None), default=None)
    for d in dsts:
        for s in srcs:
            if s[1] is not None and d[1] is not None:
                if d[1] != s[1] + distance:
                    continue
            elif s[1] is not None and s[1] != last:  # loop -> after the loop: the last instance
                continue
            if start[d] < end[s] - 1e-9:
                return True
    return False


total = caught = fired = 0
missed = []
with tempfile.TemporaryDirectory() as tmp:
    for index in deps:
        m = DEP.match(lines[index].strip())
        src, dst, kind, distance = m.group(1), m.group(2), m.group(3), int(m.group(4) or 0)
        if src == dst or kind == "ordered":
            continue  # an engine or queue orders its own instances
        total += 1
        mutant = os.path.join(tmp, f"mutant{index}.kir")
        with open(mutant, "w") as f:
            f.write("\n".join(l for i, l in enumerate(lines) if i != index) + "\n")
        mutant_fired = mutant_caught = False
        for seed in range(0, RUNS + 1):
            trace = os.path.join(tmp, "t.json")
            args = [tandem, "sim", mutant, "--trace", trace] + ([f"--perturb={seed}"] if seed else [])
            code = subprocess.run(args, capture_output=True, text=True).returncode
            if code not in (0, 3):
                print(f"FAIL: {lines[index].strip()}: tandem sim exited {code}")
                sys.exit(1)
            with open(trace) as f:
                violated = witness(json.load(f), src, dst, distance)
            mutant_fired |= violated
            mutant_caught |= code == 3
            if violated and code != 3:
                missed.append(f"{lines[index].strip()} (seed {seed})")
                break
        fired += mutant_fired
        caught += mutant_caught
        print(f"{lines[index].strip():45s} order violated: {'yes' if mutant_fired else 'no ':3s}  race reported: "
              f"{'yes' if mutant_caught else 'no'}")

print(f"mutants caught / total: {caught} / {total} ({fired} let a read see a different producer)")
for m in missed:
    print("FAIL: not reported: " + m)
sys.exit(1 if missed or fired == 0 else 0)
