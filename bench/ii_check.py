#!/usr/bin/env python3
"""The bounds analysis against the simulation: for every loop of every workload
(workloads/**/*.kir, each EXAMPLES entry of workloads/nki/*.py), of every NKI-style kernel
(bench/nki_style/*.py) and of every kernel under tests/lit that simulates, the II the analysis
predicts (`ii_bound_ns`: the larger of the resource and recurrence bounds,
sched/analysis/loop_bounds.h) against the II the simulator measures (`ii_ns`), both from one
`tandem sim --json` run under a pipeline (default `auto`). Lists the loops where they differ by
more than the tolerance (default 2 %), with what the report says binds; docs/passes.md ("The
analysis against the simulation") gives the causes.

    python3 bench/ii_check.py [--tandem build/bin/tandem] [--passes auto] [--tolerance 0.02]
                              [--markdown] [--all]

A loop whose every entry runs fewer than three iterations has no steady state to measure
(`ii_ns` is the first-to-last end over the iterations in between) and is counted apart.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import auto_ab  # noqa: E402  (the workload list, Python kernels traced)


def kernels(tmp):
    yield from auto_ab.kernels(tmp, "workloads")
    yield from auto_ab.kernels(tmp, "nki-style")
    lit = os.path.join(ROOT, "tests", "lit")
    for path in sorted(glob.glob(os.path.join(lit, "**", "*.kir"), recursive=True)):
        yield "lit/" + os.path.relpath(path, lit), path


def simulate(tandem, kir, passes):
    """The --json document, or None when the kernel does not simulate cleanly (an error, a
    race, a kernel that is an input of another test)."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    try:
        p = subprocess.run([tandem, "sim", kir, "--passes=" + passes, "--json", "-o", out],
                           capture_output=True, text=True)
        if p.returncode != 0:
            return None
        return json.load(open(out))
    finally:
        if os.path.exists(out):
            os.unlink(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tandem", default=os.path.join(ROOT, "build", "bin", "tandem"))
    ap.add_argument("--passes", default="auto")
    ap.add_argument("--tolerance", type=float, default=0.02)
    ap.add_argument("--markdown", action="store_true", help="print the list as a Markdown table")
    ap.add_argument("--all", action="store_true", help="list every loop, not only those beyond the tolerance")
    a = ap.parse_args()
    cols = ["kernel", "loop", "trips", "ii_ns", "ii_bound_ns", "sim/analysis", "binds"]
    if a.markdown:
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols))
    kernels_run = skipped = loops = short = beyond = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, kir in kernels(tmp):
            doc = simulate(a.tandem, kir, a.passes)
            if doc is None:
                skipped += 1
                continue
            kernels_run += 1
            for loop in doc.get("loops", []):
                ii, bound = loop.get("ii_ns"), loop.get("ii_bound_ns")
                trips = loop.get("trip_count", 0)
                if not ii or not bound or trips < 3:
                    short += 1
                    continue
                loops += 1
                ratio = ii / bound
                off = abs(ratio - 1) > a.tolerance
                beyond += off
                if not (off or a.all):
                    continue
                binds = (f"recurrence {loop.get('recurrence_cause')}"
                         if loop.get("recurrence_bound_ns", 0) >= loop.get("resource_bound_ns", 0)
                         else loop.get("bound_resource", ""))
                row = [name, loop["name"], f"{trips}x{loop.get('dynamic_iterations', trips) // max(trips, 1)}",
                       f"{ii:.1f}", f"{bound:.1f}", f"{ratio:.3f}", binds]
                if a.markdown:
                    print("| " + " | ".join(f"`{v}`" if i in (0, 1) else v for i, v in enumerate(row)) + " |")
                else:
                    print(f"{row[0]:48} {row[1]:8} {row[2]:>8} {row[3]:>12} {row[4]:>12} {row[5]:>8}  {row[6]}",
                          flush=True)
    print()
    print(f"{kernels_run} kernels simulated under {a.passes} ({skipped} do not simulate cleanly), {loops} loops "
          f"with a steady state ({short} with fewer than 3 iterations per entry): {beyond} differ from the "
          f"analysis by more than {a.tolerance:.0%}")


if __name__ == "__main__":
    main()
