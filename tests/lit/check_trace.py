#!/usr/bin/env python3
"""Checks a Trace Event JSON file the way ui.perfetto.dev's JSON importer reads it and prints
a summary for FileCheck: the tracks (thread names) with their instance slices (phase slices,
category "phase", are counted apart), the flow arrows, and the counter tracks with their peak.

Exits 1 with a message on the first violation of:
- nesting: on each track, any two slices are disjoint or one holds the other (a viewer draws
  anything else wrongly and logs stack errors); times are compared exactly, as integers of
  nanoseconds parsed from the decimal text, never as floats;
- 'B'/'E' pairs: on each track in time order, each 'E' closing the innermost open slice and
  repeating its name, category and arguments (speedscope matches them so), none left open;
- timestamps: at most three decimals of a microsecond (whole nanoseconds), so that an importer
  that scales by 1000 and rounds lands on the same integers;
- flows: every 's' has one 'f' with its id, no earlier than the 's', and each end lies inside
  a slice of its own track (the slice the arrow is drawn from or to);
- counters: per counter, strictly increasing timestamps and values >= 0;
- iteration marks (instants of category "iteration"): on a named track, in time order per
  track, numbered 0, 1, 2... (args.iteration) without a gap from the first kept;
- every track with slices is named."""
import collections
import decimal
import json
import sys


def fail(msg):
    print("check_trace: " + msg, file=sys.stderr)
    sys.exit(1)


def nanos(value, what, e):
    if isinstance(value, bool) or not isinstance(value, (int, decimal.Decimal)):
        fail(f"{what} is not a number in {e}")
    n = decimal.Decimal(value) * 1000
    if n != n.to_integral_value() or n < 0:
        fail(f"{what} is not a whole non-negative number of nanoseconds in {e}")
    return int(n)


def main(path):
    with open(path) as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        fail("no traceEvents list")
    names = {}
    slices = collections.defaultdict(list)  # tid -> [(start, end, name, is_phase)]
    flows = collections.defaultdict(list)
    counters = collections.defaultdict(list)
    iterations = collections.defaultdict(list)  # tid -> [(ts, iteration)]
    instants = []  # the names of the other instants
    open_slices = collections.defaultdict(list)  # tid -> stack of (start, 'B' event)
    last_ts = {}  # tid -> the time of its last 'B' or 'E'
    for e in events:
        ph = e.get("ph")
        if ph not in ("M", "X", "B", "E", "i", "s", "f", "C"):
            fail(f"unexpected phase {ph!r}")
        if ph == "M":
            if e["name"] == "thread_name":
                names[e["tid"]] = e["args"]["name"]
            continue
        ts = nanos(e.get("ts"), "ts", e)
        if ph == "X":
            slices[e["tid"]].append((ts, ts + nanos(e.get("dur"), "dur", e), e["name"], e.get("cat") == "phase"))
        elif ph in ("B", "E"):
            tid = e["tid"]
            if ts < last_ts.get(tid, ts):
                fail(f"track {names.get(tid, tid)}: {ph} of {e['name']} at {ts} ns after an event at {last_ts[tid]} ns")
            last_ts[tid] = ts
            stack = open_slices[tid]
            if ph == "B":
                stack.append((ts, e))
                continue
            if not stack:
                fail(f"track {names.get(tid, tid)}: E of {e['name']} at {ts} ns with no open slice")
            start, b = stack.pop()
            if any(b.get(k) != e.get(k) for k in ("name", "cat", "args")):
                fail(f"track {names.get(tid, tid)}: E of {e['name']} at {ts} ns does not repeat the name, category "
                     f"and arguments of the open slice {b['name']}")
            slices[tid].append((start, ts, e["name"], e.get("cat") == "phase"))
        elif ph in ("s", "f"):
            flows[e["id"]].append((ph, e["tid"], ts))
        elif ph == "C":
            counters[e["name"]].append((ts, e["args"]["bytes"]))
        elif ph == "i" and e.get("cat") == "iteration":
            iterations[e["tid"]].append((ts, e["args"]["iteration"]))
        elif ph == "i" and e.get("tid") != 0:
            instants.append(e["name"])
        elif ph == "i" and e.get("s") == "g":
            instants.append(e["name"])
    for tid, stack in open_slices.items():
        if stack:
            fail(f"track {names.get(tid, tid)}: {stack[-1][1]['name']} never ends")
    for tid, spans in slices.items():
        if tid not in names:
            fail(f"slices on unnamed track {tid}")
        # Parents first: by start, then the longer one (as a viewer's stack sees them).
        stack = []
        for start, end, name, _ in sorted(spans, key=lambda s: (s[0], -s[1])):
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack and end > stack[-1][1]:
                top = stack[-1]
                fail(f"track {names[tid]}: {name} [{start}, {end}] ns overlaps {top[2]} [{top[0]}, {top[1]}] ns")
            stack.append((start, end, name))
    starts = {tid: sorted(spans) for tid, spans in slices.items()}

    def inside(tid, ts):
        return any(s <= ts <= e for s, e, _, _ in starts.get(tid, ()))

    for fid, ends in flows.items():
        if sorted(p for p, _, _ in ends) != ["f", "s"]:
            fail(f"flow {fid} has {sorted(p for p, _, _ in ends)}, not one 's' and one 'f'")
        (_, stid, sts), = [x for x in ends if x[0] == "s"]
        (_, ftid, fts), = [x for x in ends if x[0] == "f"]
        if sts > fts:
            fail(f"flow {fid} ends at {fts} ns before it starts at {sts} ns")
        # Barrier releases (tid 0) are instants: an arrow from one starts at the instant.
        if stid != 0 and not inside(stid, sts):
            fail(f"flow {fid} starts at {sts} ns outside every slice of track {names.get(stid, stid)}")
        if not inside(ftid, fts):
            fail(f"flow {fid} ends at {fts} ns outside every slice of track {names.get(ftid, ftid)}")
    for name, points in counters.items():
        for (t0, _), (t1, _) in zip(points, points[1:]):
            if t1 <= t0:
                fail(f"counter {name}: time {t1} ns does not follow {t0} ns")
        if any(v < 0 for _, v in points):
            fail(f"counter {name} goes negative")
    for tid, marks in iterations.items():
        if tid not in names:
            fail(f"iteration marks on unnamed track {tid}")
        numbers = [n for _, n in sorted(marks)]
        if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
            fail(f"track {names[tid]}: iteration marks out of order or with gaps: {numbers[:10]}...")
    by_name = {}
    for tid, spans in slices.items():
        by_name[names[tid]] = (sum(1 for s in spans if not s[3]), sum(1 for s in spans if s[3]))
    for name in sorted(by_name):
        instances, phases = by_name[name]
        print(f"track {name}: {instances} slices" + (f", {phases} phases" if phases else ""))
    for tid in sorted(iterations, key=lambda t: names[t]):
        numbers = sorted(n for _, n in iterations[tid])
        print(f"marks on {names[tid]}: {len(numbers)}, iterations {numbers[0]} to {numbers[-1]}")
    for name in instants:
        print(f"instant: {name}")
    print(f"flows: {len(flows)}")
    for name in sorted(counters):
        print(f"counter {name}: peak {max(v for _, v in counters[name])}")


if __name__ == "__main__":
    main(sys.argv[1])
