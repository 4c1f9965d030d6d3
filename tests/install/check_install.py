#!/usr/bin/env python3
"""Installs the build tree into a temporary prefix, then, from an unrelated directory, runs
the installed binary: --version, `models show trn2`, and `sim` of an installed workload. The
summary must name the installed model file and its hash; TANDEM_MODELS_DIR must take over
from the installed models; the license and docs must be installed.
Usage: check_install.py CMAKE BUILD_DIR"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def run(cmd, cwd, env=None):
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"check_install: {' '.join(cmd)} exited {p.returncode}\n{p.stdout}{p.stderr}")
    return p.stdout


def expect(cond, msg):
    if not cond:
        sys.exit("check_install: " + msg)


def main(cmake, build):
    with tempfile.TemporaryDirectory() as prefix, tempfile.TemporaryDirectory() as elsewhere:
        run([cmake, "--install", build, "--prefix", prefix], cwd=elsewhere)
        tandem = os.path.join(prefix, "bin", "tandem")
        share = os.path.join(prefix, "share", "tandem")
        for f in ("share/doc/tandem/LICENSE", "share/doc/tandem/metrics.md", "share/tandem/models/trn2.yaml",
                  "share/tandem/workloads/trn/gemm_k.kir"):
            expect(os.path.isfile(os.path.join(prefix, f)), f"{f} is not installed")
        env = {k: v for k, v in os.environ.items() if k != "TANDEM_MODELS_DIR"}

        version = run([tandem, "--version"], elsewhere, env)
        expect(re.fullmatch(r"tandem \d+\.\d+\.\d+ \(git ([0-9a-f]{7,}|unknown)\)\n", version) is not None,
               f"--version printed {version!r}")

        shown = run([tandem, "models", "show", "trn2"], elsewhere, env)
        model = os.path.join(share, "models", "trn2.yaml")
        expect(shown.startswith(f"model trn2: {model} (fnv1a64:"), f"models show names another file:\n{shown}")
        expect(re.search(r"^matmul +compute +pe", shown, re.M) is not None, f"models show lacks matmul on pe:\n{shown}")

        kernel = os.path.join(share, "workloads", "trn", "gemm_k.kir")
        out = run([tandem, "sim", kernel, "--passes=default"], elsewhere, env)
        m = re.search(r"^model file (\S+) \((fnv1a64:[0-9a-f]{16})\), pipeline default, tandem ", out, re.M)
        expect(m is not None and m.group(1) == model, f"the summary does not name {model}:\n{out}")
        installed_hash = m.group(2)

        # TANDEM_MODELS_DIR comes before the installed models: an edited copy is the one read.
        mine = os.path.join(elsewhere, "models")
        os.mkdir(mine)
        shutil.copy(model, mine)
        with open(os.path.join(mine, "trn2.yaml"), "a") as f:
            f.write("# edited\n")
        out = run([tandem, "sim", kernel, "--passes=default"], elsewhere, dict(env, TANDEM_MODELS_DIR=mine))
        m = re.search(r"^model file (\S+) \((fnv1a64:[0-9a-f]{16})\)", out, re.M)
        expect(m is not None and m.group(1) == os.path.join(mine, "trn2.yaml") and m.group(2) != installed_hash,
               f"TANDEM_MODELS_DIR was not used:\n{out}")
    print("installed tree runs from another directory")


if __name__ == "__main__":
    main(*sys.argv[1:])
