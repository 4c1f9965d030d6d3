"""The CSV tables of `tandem sim --csv` against its JSON document: every metric cell equals
the JSON value (to the printed precision), every unit, loop, iteration and instruction has
its row; and the document's `units` name the unit of every number in it."""
import csv
import json
import os
import sys

doc = json.load(open(sys.argv[1]))
tables = {name: list(csv.DictReader(open(os.path.join(sys.argv[2], name + ".csv"))))
          for name in ("units", "loops", "iterations", "profile")}


def same(row, obj, skip):
    for key, cell in row.items():
        if key in skip or key.startswith("stall_") and key != "stall_ns" or key not in obj:
            continue  # (engines have no `bytes` in the JSON; stalls by cause sit in `stalls`)
        want = obj[key]
        assert abs(float(cell) - float(want)) <= 5e-4 * max(1.0, abs(float(want))), (key, cell, want)


units = doc["engines"] + doc["dma"]["queues"]
assert [r["unit"] for r in tables["units"]] == [u["name"] for u in units]
for row, u in zip(tables["units"], units):
    same(row, u, {"unit", "kind"})
assert [r["loop"] for r in tables["loops"]] == [l["name"] for l in doc["loops"]]
iterations = [(l, it) for l in doc["loops"] for it in l["iterations"]]
assert len(tables["iterations"]) == len(iterations) > 0
for row, (l, it) in zip(tables["iterations"], iterations):
    same(row, it, {"loop"})
for row, l in zip(tables["loops"], doc["loops"]):
    same(row, l, {"loop", "bound_resource", "recurrence_cause", "limiter"})
    assert row["bound_resource"] == l["bound_resource"]
    assert row["limiter"] == l["limiter"]
assert [r["instruction"] for r in tables["profile"]] == [p["name"] for p in doc["profile"]]
for row, p in zip(tables["profile"], doc["profile"]):
    same(row, p, {"instruction", "opcode", "unit"})

# The document gives the unit of every number it holds, by the scope of its object.
units_of = doc["units"]
for scope, objects in (("kernel", [doc]), ("unit", units), ("loop", doc["loops"]),
                       ("iteration", [it for _, it in iterations]), ("instruction", doc["profile"]),
                       ("space", doc["spaces"])):
    for obj in objects:
        for key, value in obj.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and key not in (
                    "reference_clock_ghz",):
                assert key in units_of[scope], (scope, key)
assert units_of["loop"]["ii_ns"] == "ns" and units_of["loop"]["efficiency"] == "fraction"
print("ok")
