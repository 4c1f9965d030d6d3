#!/usr/bin/env python3
"""Starts CMD, waits until a file matching PATTERN (a glob) exists, sends it SIGNAL (INT or
TERM) and waits for it to end. Prints how it ended ("killed by SIGINT" or "exit N") for
FileCheck; exits 1 when no such file appeared within a minute.
With --children, also waits until CMD has a child process before the signal, and after CMD
ended prints whether its children ended too ("children: gone" or "children: N left", within
ten seconds; the ones left are killed).
With --after-children N, waits instead until N different child processes have been seen (a
command that runs one child at a time has finished N - 1 of them). With --stdout FILE, CMD's
standard output goes to FILE. With --lines N, waits until the file has N lines (a --log of
finished points). With --mpi-rank0, the signal goes to CMD's descendant that is MPI rank 0
(as a batch system signals every task) instead of CMD. With --reading, PATTERN is a FIFO that
CMD reads: waits until CMD opens it, then holds it open without writing, so CMD waits in its
read when the signal comes. With --stderr
FILE, CMD's standard error goes to FILE.
Usage: interrupt.py [--children | --after-children N] [--stdout FILE] [--stderr FILE] [--lines N]
                    [--mpi-rank0 | --reading] SIGNAL PATTERN CMD ARGS..."""
import glob
import os
import signal
import subprocess
import sys
import time

args = sys.argv[1:]
children = args[0] == "--children"
if children:
    args = args[1:]
after_children = 0
if args[0] == "--after-children":
    after_children, args = int(args[1]), args[2:]
stdout = subprocess.DEVNULL
if args[0] == "--stdout":
    stdout, args = open(args[1], "w"), args[2:]
stderr = None
if args[0] == "--stderr":
    stderr, args = open(args[1], "w"), args[2:]
lines = 0
if args[0] == "--lines":
    lines, args = int(args[1]), args[2:]
rank0 = args[0] == "--mpi-rank0"
if rank0:
    args = args[1:]
reading = args[0] == "--reading"
if reading:
    args = args[1:]
sig = getattr(signal, "SIG" + args[0])
pattern = args[1]


def children_of(pid):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces, so split after its ')'.
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry))
    return found


def enough_lines():
    found = glob.glob(pattern)
    if not found or not lines:
        return bool(found)
    with open(found[0]) as f:
        return sum(1 for _ in f) >= lines


writer = None


def reader_waiting(path):
    """Whether a process has the FIFO open for reading; once one has, this one holds it open
    for writing (and never writes)."""
    global writer
    if writer is None:
        try:
            writer = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            return False
    return True


def mpi_rank0(pid):
    for child in children_of(pid):
        try:
            with open(f"/proc/{child}/environ", "rb") as f:
                if b"OMPI_COMM_WORLD_RANK=0\0" in f.read():
                    return child
        except OSError:
            pass
        found = mpi_rank0(child)
        if found:
            return found
    return None


# lit's workers ignore SIGINT, and an ignored signal stays ignored across exec: restore it.
proc = subprocess.Popen(args[2:], stdout=stdout, stderr=stderr,
                        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
deadline = time.time() + 60
seen = set()
while (not enough_lines() or (reading and not reader_waiting(pattern)) or (rank0 and not mpi_rank0(proc.pid)) or (children and not children_of(proc.pid)) or
       (after_children and len(seen.union(children_of(proc.pid))) < after_children)):
    seen.update(children_of(proc.pid) if after_children else [])
    if proc.poll() is not None or time.time() > deadline:
        proc.kill()
        print(f"interrupt: no file matching {pattern}" + (" or no child" if children else "") + " appeared",
              file=sys.stderr)
        sys.exit(1)
    time.sleep(0.05)
kids = children_of(proc.pid) if children else []
if rank0:
    os.kill(mpi_rank0(proc.pid), sig)
else:
    proc.send_signal(sig)
try:
    code = proc.wait(timeout=60)
except subprocess.TimeoutExpired:
    proc.kill()
    print(f"interrupt: still running a minute after {signal.Signals(sig).name}", file=sys.stderr)
    sys.exit(1)
print(f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit {code}")
if children:
    def alive(pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False
    deadline = time.time() + 10
    while any(alive(k) for k in kids) and time.time() < deadline:
        time.sleep(0.05)
    left = [k for k in kids if alive(k)]
    for k in left:
        os.kill(k, signal.SIGKILL)
    print("children: gone" if not left else f"children: {len(left)} left")
