#!/usr/bin/env python3
"""Runs `TANDEM tune ARGS...`, then `TANDEM sim KERNEL [--hw MODEL] --passes=BEST` exactly as
tune's `reproduce:` line says, and checks that the simulated time is tune's best total_ns.
Prints "reproduced: NS" for FileCheck, or explains and exits 1.
Usage: reproduce.py TANDEM tune KERNEL [ARGS...]"""
import re
import shlex
import subprocess
import sys

tandem = sys.argv[1]
tune = subprocess.run([tandem] + sys.argv[2:], capture_output=True, text=True)
best = re.search(r"^  total_ns ([0-9.]+);", tune.stdout, re.M)
line = re.search(r"^reproduce: tandem (.*)$", tune.stdout, re.M)
if tune.returncode != 0 or not best or not line:
    print(f"reproduce: tune failed ({tune.returncode}): {tune.stdout}{tune.stderr}", file=sys.stderr)
    sys.exit(1)
sim = subprocess.run([tandem] + shlex.split(line.group(1)), capture_output=True, text=True)
got = re.search(r": ([0-9.]+) ns, ", sim.stdout)
if not got or got.group(1) != best.group(1):
    print(f"reproduce: tune's best {best.group(1)} ns, sim says {sim.stdout.splitlines()[:1]}", file=sys.stderr)
    sys.exit(1)
print(f"reproduced: {got.group(1)}")
