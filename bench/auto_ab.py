#!/usr/bin/env python3
"""Simulated time of every bundled workload under `none`, `default`, `auto` and the best
point of a sweep over pass options, beside the kernel's resource bound (issue 13;
docs/passes.md, auto). A benchmark of schedules, not of Tandem's speed, and not a test.

    python3 bench/auto_ab.py [--tandem build/bin/tandem] [--markdown]

Kernels: workloads/**/*.kir and each EXAMPLES entry of workloads/nki/*.py (traced through
the Python front end). A point with races does not count as the best. Columns are in us;
`auto/best` and `auto/bound` are ratios (1.00 = as fast).
"""
import argparse
import glob
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The sweep: the seed's passes with their options varied, and rotation alone (per-buffer
# synchronisation) with a fixed buffer count.
SWEEP = ["list-schedule"]
for b in (2, 3, 4, 6, 8):
    SWEEP.append(f"address-rotation{{buffers={b}}}")
    SWEEP.append(f"address-rotation{{buffers={b}}},address-rotation{{space=psum}}")
    SWEEP.append(f"separate-load-compute{{memset}},list-schedule,address-rotation{{buffers={b}}},"
                 f"prefetch-schedule{{after,prefetch-distance={b - 1}}}")
SWEEP.append("separate-load-compute{memset},list-schedule,address-rotation")
SWEEP.append("prefetch-schedule,separate-load-compute{memset},list-schedule{priority=program-order},"
             "address-rotation{space=sbuf},prefetch-schedule{after},separate-load-compute{post-ada}")


def run(tandem, kir, passes):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    try:
        p = subprocess.run([tandem, "sim", kir, "--passes=" + passes, "--json", "-o", out],
                           capture_output=True, text=True)
        if p.returncode not in (0, 3):
            return None  # the pipeline declined or refused the kernel
        return json.load(open(out))
    finally:
        if os.path.exists(out):
            os.unlink(out)


def kernels(tmp):
    for path in sorted(glob.glob(os.path.join(ROOT, "workloads", "**", "*.kir"), recursive=True)):
        yield os.path.relpath(path, os.path.join(ROOT, "workloads")), path
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import tandem as td
    for path in sorted(glob.glob(os.path.join(ROOT, "workloads", "nki", "*.py"))):
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for name, example in getattr(mod, "EXAMPLES", {}).items():
            args, kwargs = example if isinstance(example[-1], dict) else (example, {})
            kir = os.path.join(tmp, f"{name}.kir")
            td.trace(getattr(mod, name), *args, **kwargs).write(kir)
            yield f"nki/{name}.py", kir


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tandem", default=os.path.join(ROOT, "build", "bin", "tandem"))
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table (docs/passes.md)")
    a = ap.parse_args()
    cols = ["kernel", "none", "default", "auto", "best", "bound", "auto/best", "auto/bound", "best point"]
    if a.markdown:
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols))
    else:
        print(f"{cols[0]:34} {cols[1]:>10} {cols[2]:>10} {cols[3]:>10} {cols[4]:>10} {cols[5]:>10} "
              f"{cols[6]:>9} {cols[7]:>10}  {cols[8]}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, kir in kernels(tmp):
            res = {p: run(a.tandem, kir, p) for p in ["none", "default", "auto"] + SWEEP}
            us = {p: r["total_ns"] / 1000 for p, r in res.items() if r is not None and r["races"] == 0}
            best = min(us, key=us.get)
            bound = res["none"]["lower_bound_ns"] / 1000
            row = [name, us.get("none"), us.get("default"), us.get("auto"), us[best], bound,
                   us["auto"] / us[best], us["auto"] / bound, best]
            if a.markdown:
                print("| " + " | ".join(f"`{v}`" if i in (0, 8) else f"{v:.1f}" if i < 6 else f"{v:.3f}"
                                        for i, v in enumerate(row)) + " |")
            else:
                print(f"{row[0]:34} {row[1]:10.1f} {row[2]:10.1f} {row[3]:10.1f} {row[4]:10.1f} {row[5]:10.1f} "
                      f"{row[6]:9.3f} {row[7]:10.3f}  {row[8]}", flush=True)


if __name__ == "__main__":
    main()
