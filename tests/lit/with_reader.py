#!/usr/bin/env python3
"""Runs CMD while a thread reads the FIFO at PATH into OUT (as `cat PATH > OUT &` would, which
lit's internal shell cannot run), then exits with CMD's exit code.
Usage: with_reader.py PATH OUT CMD ARGS..."""
import subprocess
import sys
import threading

fifo, out = sys.argv[1], sys.argv[2]


def read():
    with open(out, "wb") as dst, open(fifo, "rb") as src:  # OUT exists even if no writer comes
        dst.write(src.read())


reader = threading.Thread(target=read, daemon=True)
reader.start()
code = subprocess.run(sys.argv[3:]).returncode
reader.join(timeout=60)
sys.exit(code)
