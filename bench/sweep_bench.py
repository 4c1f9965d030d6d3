#!/usr/bin/env python3
"""The issue-43 sweep target: a 1000-point architecture sweep of a 10^8-instruction kernel on
this machine in under 10 minutes (docs/performance.md, "Targets"). A bench, never a test: the
figure moves with the host's load.

    python3 bench/sweep_bench.py [--tandem build/bin/tandem] [--instructions 100000000]
                                 [--points 1000] [-j 2] [--check 2] [--keep DIR]

The kernel is a GEMM K loop (sim_bench's: per iteration a load of each operand tile and an
accumulating matmul) long enough to run --instructions dynamic instructions. The sweep varies
the DMA bandwidth and the PE clock over a grid of --points points under the default pipeline,
race checker on (every point of a sweep is race-checked), and `tandem sweep -j J` runs it; the
bench prints the wall time against the target. --check N then simulates N of the points again
with --no-fast-forward and compares their total_ns with the sweep's row (the figures are a
contract: fast-forward changes none); a difference exits 1.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

TARGET_S = 600.0


def gemm_k(trips):
    return "\n".join([
        'kernel @sweep_gemm target = "trn2" {',
        f'  tensor %A : dram[128, {128 * trips}] bf16',
        f'  tensor %B : dram[{128 * trips}, 512] bf16',
        '  tensor %a : sbuf[128, 128] bf16',
        '  tensor %b : sbuf[128, 512] bf16',
        '  tensor %acc : psum[128, 512] f32',
        '  %z = memset %acc {value = 0}',
        f'  loop %k = 0 to {trips} {{',
        '    %la = load %a <- %A[0:128, %k*128 : %k*128 + 128]',
        '    %lb = load %b <- %B[%k*128 : %k*128 + 128, 0:512]',
        '    %mm = matmul %acc <- %a, %b {accumulate}',
        '  }',
        '}',
        '',
    ])


def grid(points):
    """Two axes whose product is `points` (as square as the divisors allow)."""
    rows = max(d for d in range(1, int(points**0.5) + 1) if points % d == 0)
    return rows, points // rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tandem", default="build/bin/tandem")
    ap.add_argument("--instructions", type=int, default=100_000_000)
    ap.add_argument("--points", type=int, default=1000)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--check", type=int, default=2, help="points simulated again without fast-forward")
    ap.add_argument("--keep", help="write the kernel, sweep file and CSV here instead of a temporary directory")
    args = ap.parse_args()
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        run(args, args.keep)
    else:
        with tempfile.TemporaryDirectory(prefix="tandem-sweep-bench-") as work:
            run(args, work)


def run(args, work):
    trips = max(1, (args.instructions - 1) // 3)
    bw_n, clock_n = grid(args.points)
    bandwidths = [round(8.0 + 40.0 * i / max(1, bw_n - 1), 3) for i in range(bw_n)]
    clocks = [round(0.8 + 1.6 * i / max(1, clock_n - 1), 4) for i in range(clock_n)]
    kernel = os.path.join(work, "gemm_k.kir")
    with open(kernel, "w") as f:
        f.write(gemm_k(trips))
    sweep = os.path.join(work, "sweep.yaml")
    with open(sweep, "w") as f:
        f.write("kernels: gemm_k.kir\nmodel: trn2\npipeline: default\nparameters:\n"
                f"  dma.bandwidth_bytes_per_ns: [{', '.join(map(str, bandwidths))}]\n"
                f"  engines.pe.clock_ghz: [{', '.join(map(str, clocks))}]\n"
                "metrics: [total_ns, ii_ns, races]\n")
    out = os.path.join(work, "sweep.csv")
    dynamic = 3 * trips + 1
    print(f"sweep: {bw_n} x {clock_n} = {bw_n * clock_n} points (DMA bandwidth x PE clock) of a GEMM K loop of "
          f"{dynamic:,} dynamic instructions, -j {args.jobs}, race checker on", flush=True)
    t0 = time.monotonic()
    r = subprocess.run([args.tandem, "sweep", sweep, "-o", out, "-j", str(args.jobs)], capture_output=True, text=True)
    wall = time.monotonic() - t0
    if r.returncode != 0:
        sys.exit(f"tandem sweep failed ({r.returncode}): {r.stderr.strip()}")
    with open(out) as f:
        rows = list(csv.DictReader(f))
    ok = sum(row["status"] == "ok" for row in rows)
    print(f"  {len(rows)} points ({ok} ok) in {wall:.1f} s wall: {wall / TARGET_S:.3f} of the {TARGET_S:.0f} s target "
          f"({'met' if wall <= TARGET_S else 'NOT met'}); {wall / len(rows) * args.jobs:.3f} s per point per job, "
          f"{dynamic * len(rows) / wall / 1e9:.2f} G simulated instructions/s effective")
    if args.check > 0:
        step = max(1, len(rows) // args.check)
        same = 0
        for row in rows[::step][:args.check]:
            fields = [f"{name}={row[name]}" for name in ("dma.bandwidth_bytes_per_ns", "engines.pe.clock_ghz")]
            full = subprocess.run([args.tandem, "sim", kernel, "--hw", "trn2", "--passes=default", "--json",
                                   "--no-fast-forward"] + [a for f in fields for a in ("--set", f)],
                                  capture_output=True, text=True)
            total = json.loads(full.stdout)["total_ns"] if full.returncode == 0 else None
            match = total is not None and float(row["total_ns"]) == total
            same += match
            print(f"  point {row['point']} ({', '.join(fields)}): the sweep's total_ns {row['total_ns']}, every "
                  f"instance simulated {total}: {'the same' if match else 'DIFFERENT'}", flush=True)
        checked = min(args.check, len(rows))
        print(f"  {same} of {checked} points checked without fast-forward give the same total_ns")
        if same != checked:
            sys.exit(1)


if __name__ == "__main__":
    main()
