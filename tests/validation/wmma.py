#!/usr/bin/env python3
"""wmma-reorder end to end (issue 7's acceptance, printed and checked).

For each test loop, `tandem ab` of the input against the reordered loop prints total cycles
and WMMA issue bubbles per iteration before and after; every reordered loop passes the
translation validator (`tandem opt --verify`) and runs race-free under perturbed timing.
Checked: the reorders that hoist loads out of the bubbles (no pipeline, tiles, double buffer)
cut them; on the worked example's loop the order alone at distance 2 does not, and distance 3 does.
Usage: wmma.py TANDEM SOURCE_DIR"""
import json
import subprocess
import sys

tandem, root = sys.argv[1], sys.argv[2]
inputs = f"{root}/tests/lit/passes/wmma/Inputs"
failures = []

RUNS = [  # kernel, pipeline B, must B cut the bubbles?
    (f"{root}/workloads/gpu/wmma_loop.kir", "wmma-reorder{mode=reverse,distance=2}", False),
    (f"{root}/workloads/gpu/wmma_loop.kir", "wmma-reorder{mode=explicit,order=0:1:2:3,distance=3}", True),
    (f"{inputs}/no_pipeline.kir", "wmma-reorder{mode=reverse,distance=2}", True),
    (f"{inputs}/tiles.kir", "wmma-reorder", True),
    (f"{inputs}/double_buffer.kir", "wmma-reorder{mode=reverse,distance=1}", True),
]

for kernel, pipeline, must_cut in RUNS:
    name = kernel.rsplit("/", 1)[1]
    doc = json.loads(subprocess.run([tandem, "ab", kernel, "--a=none", f"--b={pipeline}", "--json"],
                                    check=True, capture_output=True, text=True).stdout)
    a, b = doc["a"]["result"], doc["b"]["result"]
    ba = a["loops"][0]["wmma_bubble_cycles_per_iteration"]
    bb = b["loops"][0]["wmma_bubble_cycles_per_iteration"]
    print(f"{name} {pipeline}: cycles {a['total_cycles']:.0f} -> {b['total_cycles']:.0f}, "
          f"WMMA bubbles per iteration {ba:.2f} -> {bb:.2f}")
    if must_cut and not bb < ba:
        failures.append(f"{name} {pipeline}: bubbles {ba} -> {bb} did not fall")
    if not must_cut and abs(bb - ba) > 1:
        failures.append(f"{name} {pipeline}: bubbles {ba} -> {bb} changed, expected the order alone not to matter")
    verify = subprocess.run([tandem, "opt", kernel, f"--passes={pipeline}", "--verify"], capture_output=True, text=True)
    if verify.returncode != 0:
        failures.append(f"{name} {pipeline}: --verify failed: {verify.stderr.strip()}")
    race = subprocess.run([tandem, "sim", kernel, f"--passes={pipeline}", "--perturb-runs=5"], capture_output=True, text=True)
    if race.returncode != 0:
        failures.append(f"{name} {pipeline}: sim exit {race.returncode}: {race.stdout[:200]}{race.stderr.strip()}")

for failure in failures:
    print("FAIL: " + failure)
sys.exit(1 if failures else 0)
