#!/usr/bin/env python3
"""Runs a command that must fail as a user error: exit code 1, nothing on stdout and exactly
one line on stderr. Prints that line (for FileCheck) and exits 0; otherwise explains and
exits 1. Usage: expect_error.py CMD ARGS..."""
import subprocess
import sys

proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
problems = []
if proc.returncode != 1:
    problems.append(f"exit code {proc.returncode}, expected 1")
if proc.stdout:
    problems.append(f"stdout not empty: {proc.stdout!r}")
lines = proc.stderr.splitlines()
if len(lines) != 1:
    problems.append(f"stderr has {len(lines)} lines, expected 1: {proc.stderr!r}")
if problems:
    print("expect_error: " + "; ".join(problems), file=sys.stderr)
    sys.exit(1)
print(lines[0])
