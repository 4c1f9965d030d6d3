#!/usr/bin/env python3
"""Calibration against published numbers: the trn2 fp32 [4096,8192] @ [8192,8192] matmul of
the NKI kernel-optimization guide (../shared/reference/hardware-facts.md). Simulates the v2
tiled and v3 hoisted-loads kernels of workloads/trn/calibration/ on models/trn2.yaml, prints
simulated against published, and checks that v3 is within 15 % of 28.20 ms and that v2 is
slower than v3. Usage: calibration.py TANDEM WORKLOADS_DIR"""
import json
import subprocess
import sys

PUBLISHED_MS = {"matmul_v2_tiled": 39.89, "matmul_v3_hoisted": 28.20}
PUBLISHED_PE = {"matmul_v2_tiled": 0.873, "matmul_v3_hoisted": 0.999}

tandem, workloads = sys.argv[1], sys.argv[2]
simulated = {}
for name, published in PUBLISHED_MS.items():
    out = subprocess.run([tandem, "sim", f"{workloads}/trn/calibration/{name}.kir", "--json"],
                         check=True, capture_output=True, text=True).stdout
    r = json.loads(out)
    ms = r["total_ns"] / 1e6
    pe = next(e["utilization"] for e in r["engines"] if e["name"] == "pe")
    simulated[name] = ms
    print(f"{name}: simulated {ms:.2f} ms, published {published:.2f} ms ({(ms / published - 1) * 100:+.1f} %); "
          f"TensorE active {pe * 100:.1f} % (published {PUBLISHED_PE[name] * 100:.1f} %)")

failures = []
v3 = simulated["matmul_v3_hoisted"]
if abs(v3 / PUBLISHED_MS["matmul_v3_hoisted"] - 1) > 0.15:
    failures.append(f"v3 {v3:.2f} ms is not within 15 % of 28.20 ms")
if not simulated["matmul_v2_tiled"] > v3:
    failures.append("v2 is not slower than v3")
for f in failures:
    print("FAIL: " + f)
sys.exit(1 if failures else 0)
