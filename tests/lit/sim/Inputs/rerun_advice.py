#!/usr/bin/env python3
"""Runs `tandem sim --advise --json` on a kernel, then every advised change's printed command,
and checks that the command's total is the total the advice reports (its gain is the run's
total over it). Prints one line per command checked; exits 1 on the first difference.
Usage: rerun_advice.py TANDEM KERNEL [tandem sim options]"""
import json
import shlex
import subprocess
import sys


def total_of(argv):
    out = subprocess.run(argv + ["--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["total_ns"]


def main():
    tandem, kernel, *options = sys.argv[1:]
    doc = json.loads(subprocess.run([tandem, "sim", "--advise", "--json", kernel] + options, check=True,
                                    capture_output=True, text=True).stdout)
    checked = 0
    for advice in doc["advice"]:
        if not advice["simulated"] or advice["rejected"]:
            continue
        words = shlex.split(advice["command"])
        assert words[:2] == ["tandem", "sim"], advice["command"]
        rerun = total_of([tandem] + words[1:])
        gain = doc["total_ns"] / rerun
        if abs(rerun - advice["total_ns"]) > 1e-6 or abs(gain - advice["gain"]) > 1e-9:
            print(f"rerun_advice: {advice['command']}: {rerun} ns, the advice says {advice['total_ns']} ns",
                  file=sys.stderr)
            return 1
        print(f"same total: {advice['gain']:.3f}x {advice['command']}")
        checked += 1
    print(f"{checked} commands rerun")
    return 0


if __name__ == "__main__":
    sys.exit(main())
