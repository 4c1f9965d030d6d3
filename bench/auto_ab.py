#!/usr/bin/env python3
"""Simulated time of a set of kernels under `none`, `default`, `auto`, the best point of a
sweep over pass options and the best point `tandem tune` finds, beside the kernel's bound
(docs/passes.md, auto). A benchmark of schedules, not of Tandem's speed, and not a test.

    python3 bench/auto_ab.py [--set workloads|nki-style] [--tandem build/bin/tandem] [--markdown]

Sets: `workloads` (default), every workloads/**/*.kir and each EXAMPLES entry of
workloads/nki/*.py, the kernels the passes were developed on; `nki-style`, each EXAMPLES entry
of bench/nki_style/*.py, kernels in the style of public NKI kernels that no pass was tuned to.
Python kernels are traced through the front end. A point with races does not count as the
best. Columns are in us; `auto/best` and `auto/bound` are ratios (1.00 = as fast); the bound is
the lowest lower bound of any clean run. For every kernel whose `auto` run is more than 10 %
above the bound, `why` names the cause in one phrase, worked out from that run's own report
(`--json` loops, `--stats` notes), not from the kernel's name (why_slow). The last lines count
the kernels where auto is no slower than none, within 5 % of the best clean point, and within
10 % of the bound where the best clean point is, and `tandem tune`'s exit statuses.
"""
import re
import argparse
import glob
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The sweep: the default pipeline's passes with their options varied, and rotation alone (per-buffer
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
        p = subprocess.run([tandem, "sim", kir, "--passes=" + passes, "--json", "--stats", "-o", out],
                           capture_output=True, text=True)
        if p.returncode not in (0, 3):
            return None  # the pipeline declined or refused the kernel
        doc = json.load(open(out))
        doc["stats_text"] = p.stderr
        return doc
    finally:
        if os.path.exists(out):
            os.unlink(out)


def scheduled(tandem, kir, passes):
    """The kernel as the pipeline leaves it (its dep lines), or "" when it declines."""
    with tempfile.NamedTemporaryFile(suffix=".kir", delete=False) as f:
        out = f.name
    try:
        p = subprocess.run([tandem, "opt", kir, "--passes=" + passes, "-o", out], capture_output=True, text=True)
        return open(out).read() if p.returncode == 0 else ""
    finally:
        if os.path.exists(out):
            os.unlink(out)


def kernel_structure(kir):
    """From the kernel's text: each loop's enclosing loop and each instruction's innermost loop
    (None at the top; braces nest)."""
    parents, home, stack, depth = {}, {}, [], 0
    for line in open(kir):
        line = line.split("#", 1)[0]
        loop = re.match(r"\s*loop (%[\w.]+)", line)
        inst = re.match(r"\s*(%[\w.]+) = ", line)
        if inst:
            home[inst.group(1)] = stack[-1][0] if stack else None
        depth += line.count("{") - line.count("}")
        if loop:
            parents[loop.group(1)] = stack[-1][0] if stack else None
            stack.append((loop.group(1), depth))
        while stack and depth < stack[-1][1]:
            stack.pop()
    return parents, home


def span_ns(loop):
    it = loop.get("iterations") or []
    return it[-1]["end_ns"] - it[0]["start_ns"] if it else loop["ii_ns"] * loop["dynamic_iterations"]


def lost_ns(loop):
    """What the loop's iterations take beyond its resource bound, over the whole run."""
    return max(0.0, loop["ii_ns"] - loop["resource_bound_ns"]) * loop["dynamic_iterations"]


def carried_into(deps, home, parents, outer, inner):
    """A dependence `outer` carries from an instruction to one inside its nested loop `inner`
    (an entry of `inner` waits through it for the previous one), as printed in the scheduled
    kernel's dep lines."""
    def within(loop, target):
        while loop is not None and loop != target:
            loop = parents.get(loop)
        return loop == target
    found = []
    for m in re.finditer(r"^\s*dep (%[\w.]+) -> (%[\w.]+) (\w+) distance=\d+(?: loop=(%[\w.]+))?", deps, re.M):
        src, dst, kind, loop = m.groups()
        if within(home.get(dst), inner) and within(home.get(src), outer) and (loop == outer or (
                loop is None and not within(home.get(src), inner))):
            found.append((src == dst, f"{src} -> {dst} {kind}"))  # another instruction's first
    return min(found)[1] if found else None


def why_slow(doc, kir, deps):
    """One phrase for what keeps a run above its kernel's bound, from the run's own report
    (`--json` loops, `--stats` notes) and its scheduled kernel's dep lines: work outside the
    loops, a ring capacity capped, or, in the loop that loses most of the gap (descending while
    a nested loop that shares its bound resource loses at least half of it), a recurrence above
    the resource bound, a tile that keeps one buffer, entries of nested loops that do not
    overlap, or the loop's fill and drain."""
    loops = {l["name"]: l for l in doc["loops"]}
    parents, home = kernel_structure(kir)
    notes = re.findall(r"note: loop (%\S+): (%\S+) stays on one buffer: (.*)", doc.get("stats_text", ""))
    total, bound = doc["total_ns"], doc["lower_bound_ns"]
    gap = total - bound
    top = [l for n, l in loops.items() if parents.get(n) is None]
    if not top:
        return "no loop: straight-line code"
    outside = total - sum(span_ns(l) for l in top)
    if outside >= 0.5 * gap:
        return f"outside the loops: {outside / 1000:.1f} us of {total / 1000:.1f} before or after them"
    capped = re.findall(r"note: (loop %\S+: %\S+ (?:stays on one buffer, not|over \d+ buffers, not) .*)",
                        doc.get("stats_text", ""))
    if capped:
        return "capacity: " + capped[0]
    loop = max(top, key=span_ns)
    while True:
        name = loop["name"]
        children = [l for n, l in loops.items() if parents.get(n) == name]
        deeper = [c for c in children if c["bound_resource"] == loop["bound_resource"] and lost_ns(c) >= 0.5 * gap]
        if loop["trip_count"] == 1 and children:  # one iteration: its time is its body's
            deeper = [max(children, key=span_ns)]
        if not deeper:
            break
        loop = max(deeper, key=lost_ns)
    where = f"{name} at {loop['efficiency']:.0%} of its bound ({loop['bound_resource']})"
    if loop["efficiency"] >= 0.95:
        iters = loop["dynamic_iterations"]
        fill = span_ns(loop) - iters * loop["ii_ns"]
        return (f"fill and drain of {name}: {iters} iterations of II {loop['ii_ns']:.0f} ns, "
                f"{fill / 1000:.1f} us more from start to end")
    if loop["recurrence_bound_ns"] > 1.02 * loop["resource_bound_ns"]:
        return (f"{where}: recurrence {loop['recurrence_bound_ns']:.0f} ns per iteration "
                f"({loop['recurrence_cause']})")
    one = [f"{t} ({why.split(' (%')[0].replace(t + ' is ', '').replace(t + ' ', '')}"
           f"{'; ' + why.split('; ', 1)[1] if '; ' in why else ''})"
           for l, t, why in notes if l == name and "within the loop's resource bound" not in why]
    if one:
        return f"{where}: one buffer for " + ", ".join(one)
    if children and all(c["efficiency"] >= 0.95 for c in children):
        per = loop["ii_ns"] - sum(c["ii_ns"] * c["trip_count"] for c in children)
        inner = "/".join(c["name"] for c in children)
        edge = next((e for c in children if (e := carried_into(deps, home, parents, name, c["name"]))), None)
        return (f"{where}: entries of {inner} (each at its bound) do not overlap, {per:.0f} ns per iteration "
                f"between them" + (f" (through {edge}, carried by {name})" if edge else ""))
    return where


def tuned(tandem, kir):
    """`tandem tune`'s exit status and the best clean point it finds ({"total_ns",
    "lower_bound_ns", "pipeline"}), or None."""
    p = subprocess.run([tandem, "tune", kir, "--json", "--budget", "400"], capture_output=True, text=True)
    return p.returncode, json.loads(p.stdout)["best"] if p.returncode == 0 else None


def kernels(tmp, which):
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import tandem as td
    if which == "workloads":
        for path in sorted(glob.glob(os.path.join(ROOT, "workloads", "**", "*.kir"), recursive=True)):
            yield os.path.relpath(path, os.path.join(ROOT, "workloads")), path
    folder = ("workloads", "nki") if which == "workloads" else ("bench", "nki_style")
    for path in sorted(glob.glob(os.path.join(ROOT, *folder, "*.py"))):
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for name, example in getattr(mod, "EXAMPLES", {}).items():
            args, kwargs = example if isinstance(example[-1], dict) else (example, {})
            kir = os.path.join(tmp, f"{name}.kir")
            td.trace(getattr(mod, name), *args, **kwargs).write(kir)
            yield (f"nki/{name}.py" if which == "workloads" else f"{os.path.basename(path)[:-3]}/{name}"), kir


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tandem", default=os.path.join(ROOT, "build", "bin", "tandem"))
    ap.add_argument("--set", default="workloads", choices=["workloads", "nki-style"], help="the kernels (see above)")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table (docs/passes.md)")
    a = ap.parse_args()
    cols = ["kernel", "none", "default", "auto", "best", "bound", "auto/best", "auto/bound", "best point"]
    whys = []
    rows = []
    tune_status = {}
    if a.markdown:
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols))
    else:
        print(f"{cols[0]:34} {cols[1]:>10} {cols[2]:>10} {cols[3]:>10} {cols[4]:>10} {cols[5]:>10} "
              f"{cols[6]:>9} {cols[7]:>10}  {cols[8]}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, kir in kernels(tmp, a.set):
            res = {p: run(a.tandem, kir, p) for p in ["none", "default", "auto"] + SWEEP}
            clean = {p: r for p, r in res.items() if r is not None and r["races"] == 0}
            status, best_tuned = tuned(a.tandem, kir)
            tune_status[status] = tune_status.get(status, 0) + 1
            if best_tuned is not None:
                clean["tune: " + best_tuned["pipeline"]] = best_tuned
            us = {p: r["total_ns"] / 1000 for p, r in clean.items()}
            best = min(us, key=us.get)
            bound = min(r["lower_bound_ns"] for r in clean.values()) / 1000
            row = [name, us.get("none"), us.get("default"), us.get("auto"), us[best], bound,
                   us["auto"] / us[best], us["auto"] / bound, best]
            rows.append(row)
            if us["auto"] / bound > 1.10:
                whys.append((name, us["auto"] / bound, why_slow(res["auto"], kir, scheduled(a.tandem, kir, "auto"))))
            if a.markdown:
                print("| " + " | ".join("-" if v is None else f"`{v}`" if i in (0, 8) else f"{v:.1f}" if i < 6
                                        else f"{v:.3f}" for i, v in enumerate(row)) + " |")
            else:
                print(f"{row[0]:34} " + " ".join("         -" if v is None else f"{v:10.1f}" for v in row[1:6]) +
                      f" {row[6]:9.3f} {row[7]:10.3f}  {row[8]}", flush=True)
    print()
    print("why auto is more than 10 % above the bound:")
    for name, ratio, why in whys:
        print(f"- `{name}` ({ratio:.2f}): {why}" if a.markdown else f"  {name} ({ratio:.2f}): {why}")
    n = len(rows)
    near_bound = [r for r in rows if r[4] <= 1.10 * r[5]]
    print()
    print(f"auto no slower than none: {sum(r[3] <= r[1] for r in rows if r[1] is not None)} of "
          f"{sum(r[1] is not None for r in rows)}")
    print(f"auto within 5 % of the best clean point: {sum(r[6] <= 1.05 for r in rows)} of {n}")
    print(f"auto within 10 % of the bound where the best clean point is: "
          f"{sum(r[7] <= 1.10 for r in near_bound)} of {len(near_bound)}")
    print("tandem tune exit status: " + ", ".join(f"{code}: {count}" for code, count in sorted(tune_status.items())))


if __name__ == "__main__":
    main()
