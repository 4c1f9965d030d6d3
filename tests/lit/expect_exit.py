#!/usr/bin/env python3
"""Runs CMD, passes its stdout through, and succeeds only when it exits with CODE (stderr is
passed through too). Usage: expect_exit.py CODE CMD ARGS..."""
import subprocess
import sys

code = int(sys.argv[1])
proc = subprocess.run(sys.argv[2:])
if proc.returncode != code:
    print(f"expect_exit: exit code {proc.returncode}, expected {code}", file=sys.stderr)
    sys.exit(1)
