#!/usr/bin/env python3
"""Compares two kernels imported from AMDGPU assembly (or printed by tandem opt) statement by
statement with their instruction names (%L<line>, %L<line>.pre), comment lines and the
asm_hash set aside, and the straight-line `s_waitcnt` statements too (the exporter inserts a
wait where a loop's new order leaves a load outstanding at its exit): exits 0 when they are
equal, else prints the first difference and exits 1.
Usage: kir_equal.py A.kir B.kir"""
import re
import sys

NAME = re.compile(r"%L[0-9]+(\.[A-Za-z0-9_.]+)? = ")
HASH = re.compile(r'asm_hash = "[0-9a-f]+"')
WAIT = 's_waitcnt {mnemonic = "s_waitcnt"}'


def statements(path):
    out = []
    with open(path) as f:
        for line in f:
            line = HASH.sub("", NAME.sub("", line.rstrip("\n")))
            if line.strip() == WAIT:
                continue
            if line.strip() and not line.strip().startswith("#") and not line.strip().startswith("dep "):
                out.append(line)
    return out


a, b = statements(sys.argv[1]), statements(sys.argv[2])
for i in range(max(len(a), len(b))):
    x = a[i] if i < len(a) else "(end)"
    y = b[i] if i < len(b) else "(end)"
    if x != y:
        print(f"kir_equal: statement {i + 1} differs:\n  {sys.argv[1]}: {x}\n  {sys.argv[2]}: {y}", file=sys.stderr)
        sys.exit(1)
if not a:
    print("kir_equal: no statements", file=sys.stderr)
    sys.exit(1)
