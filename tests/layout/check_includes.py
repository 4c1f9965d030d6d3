#!/usr/bin/env python3
"""The layout rule (docs/layout.md): every folder includes only itself and the folders
before it in the data flow, and only the sweep library links MPI.

usage: check_includes.py SOURCE_DIR [BINARY_THAT_MUST_NOT_LINK_MPI ...]
Prints each violation as file:line: what is wrong, and exits 1 if there is any."""
import os
import re
import subprocess
import sys

# The folders in the order the data flows; a longer prefix wins (sim/driver/sweep).
LAYERS = [
    "sched/support", "sched/target", "sched/ir", "sched/analysis", "sched/amdgpu", "sched/passes", "sched/driver",
    "sim/lower", "sim/units", "sim/observe", "sim/report", "sim/driver", "sim/driver/sweep",
    "sim/tune", "tools",
]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path):
    best = None
    for i, layer in enumerate(LAYERS):
        if path == layer or path.startswith(layer + "/"):
            if best is None or len(layer) > len(LAYERS[best]):
                best = i
    return best


def main():
    root = sys.argv[1]
    problems = []
    checked = 0
    for top in ("sched", "sim", "tools"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".h", ".cpp", ".def")):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                own = layer_of(os.path.dirname(rel))
                if own is None:
                    problems.append(f"{rel}:1: folder {os.path.dirname(rel)} is not in the layer table")
                    continue
                with open(os.path.join(root, rel)) as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        checked += 1
                        target = layer_of(os.path.dirname(m.group(1)))
                        if target is None:
                            problems.append(f"{rel}:{lineno}: includes {m.group(1)}, outside the layer table")
                        elif target > own:
                            problems.append(f"{rel}:{lineno}: {LAYERS[own]} includes {m.group(1)} "
                                            f"from {LAYERS[target]}, which comes later in the data flow")
    for binary in sys.argv[2:]:
        libs = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
        if "libmpi" in libs:
            problems.append(f"{binary}:1: links MPI; only the sweep library may")
    for p in problems:
        print(p)
    print(f"{checked} includes checked, {len(problems)} violations")
    return 1 if problems or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
