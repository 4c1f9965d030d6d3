#!/usr/bin/env python3
"""Checks a Trace Event JSON file the way ui.perfetto.dev's JSON importer reads it and prints
a summary for FileCheck: the tracks (thread names) with their slice counts, the flow arrows
(every 's' has its 'f' with the same id), and the counter tracks with their peak value.
Exits 1 with a message on the first violation."""
import collections
import json
import sys


def fail(msg):
    print("check_trace: " + msg, file=sys.stderr)
    sys.exit(1)


with open(sys.argv[1]) as f:
    doc = json.load(f)
events = doc.get("traceEvents")
if not isinstance(events, list):
    fail("no traceEvents list")
names = {}
slices = collections.Counter()
flows = collections.defaultdict(set)
counters = {}
for e in events:
    ph = e.get("ph")
    if ph not in ("M", "X", "i", "s", "f", "C"):
        fail(f"unexpected phase {ph!r}")
    if ph == "M":
        if e["name"] == "thread_name":
            names[e["tid"]] = e["args"]["name"]
        continue
    ts = e.get("ts")
    if not isinstance(ts, (int, float)) or ts < 0:
        fail(f"bad ts in {e}")
    if ph == "X":
        if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
            fail(f"bad dur in {e}")
        slices[e["tid"]] += 1
    elif ph in ("s", "f"):
        flows[e["id"]].add(ph)
    elif ph == "C":
        counters[e["name"]] = max(counters.get(e["name"], 0), e["args"]["bytes"])
for fid, phases in flows.items():
    if phases != {"s", "f"}:
        fail(f"flow {fid} has only {sorted(phases)}")
for tid in sorted(slices):
    if tid not in names:
        fail(f"slices on unnamed track {tid}")
    print(f"track {names[tid]}: {slices[tid]} slices")
print(f"flows: {len(flows)}")
for name in sorted(counters):
    print(f"counter {name}: peak {counters[name]}")
