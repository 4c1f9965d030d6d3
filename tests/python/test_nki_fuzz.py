"""Mutated NKI-style kernel files never end in a traceback: `tandem-nki` exits 0, or 1 with one
located line (a fixed-seed slice of the mutation campaign; docs/robustness.md)."""
import os
import random
import re
import subprocess
import sys

import pytest

from test_published_nki import NEW_API, OLD_API, SPMD

KERNELS = [(OLD_API, "scale_rows", "256x512,256x512"), (NEW_API, "hoisted", "512x128,512x1024"),
           (SPMD, "add", "256x1024,256x1024")]


def mutate(source: str, rng: random.Random) -> str:
    lines = source.splitlines()
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        kind = rng.randrange(6)
        if kind == 0:
            lines[i] = re.sub(r"\d+", lambda m: str(rng.choice([0, 1, 3, 127, 129, 513, -1, 10**9])), lines[i], count=1)
        elif kind == 1:
            del lines[i]
        elif kind == 2:
            lines.insert(i, lines[rng.randrange(len(lines))])
        elif kind == 3:
            lines[i] = lines[i].replace(":", "", 1)
        elif kind == 4:
            lines[i] = lines[i].replace("affine_range", rng.choice(["static_range", "sequential_range", "range"]))
        else:
            lines[i] = lines[i].replace("nl.", rng.choice(["nisa.", "np.", "nl.x"]), 1)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(24))
def test_mutated_kernel_files_end_in_one_located_line(root, tmp_path, seed):
    rng = random.Random(seed)
    source, function, shapes = KERNELS[seed % len(KERNELS)]
    path = tmp_path / "mutant.py"
    path.write_text(mutate(source.lstrip(), rng))
    p = subprocess.run([sys.executable, os.path.join(root, "python", "tandem-nki"), f"{path}:{function}",
                        "--shapes", shapes, "--no-src"], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode in (0, 1), p.stderr
    if p.returncode == 1:
        errors = [l for l in p.stderr.splitlines() if l.strip() and not l.startswith("tandem-nki: launch grid")]
        assert len(errors) == 1 and ": error: " in errors[0], p.stderr


def test_python_compile_warnings_are_not_printed(root, tmp_path):
    """A finding of scripts/fuzz-nki: a mutant with `out[i * 128(i + 1) * 128, :]` made Python
    print a two-line SyntaxWarning before the located error."""
    path = tmp_path / "mutant.py"
    path.write_text("from tandem import nki\nimport tandem.nki.language as nl\n\n\n@nki.jit\ndef k(a):\n"
                    "    t = nl.load(a)\n    return t[0 * 128(1) * 128, :]\n")
    p = subprocess.run([sys.executable, os.path.join(root, "python", "tandem-nki"), f"{path}:k", "--shapes",
                        "128x512"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and len(p.stderr.splitlines()) == 1, p.stderr
    assert "Warning" not in p.stderr and "the kernel raised TypeError: 'int' object is not callable" in p.stderr


def test_a_kernel_name_bound_to_a_module_is_not_a_kernel(root, tmp_path):
    """A finding of scripts/fuzz-nki: a mutant imported `neuronxcc.nki.language as scale_rows`,
    then the decorator of `def scale_rows` failed; the module was taken for the kernel and the
    trace stopped with an internal error (exit 2). The failing decorator is the load's error;
    a command that names a module is a usage error."""
    path = tmp_path / "mutant.py"
    path.write_text("import neuronxcc.nki as nki\nimport neuronxcc.nki.language as k\n\n\n@ncc.jit\ndef k(a):\n"
                    "    return a\n")
    tandem_nki = os.path.join(root, "python", "tandem-nki")
    p = subprocess.run([sys.executable, tandem_nki, f"{path}:k", "--shapes", "128x512"], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 1 and p.stderr.strip().splitlines() == [
        f"{path}:5:1: error: import: loading the kernel file failed: NameError: name 'ncc' is not defined"]
    path.write_text("import neuronxcc.nki.language as k\n")
    p = subprocess.run([sys.executable, tandem_nki, f"{path}:k", "--shapes", "128x512"], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines()[-1] == f"tandem-nki: error: {path}: 'k' is a module, not a function"
