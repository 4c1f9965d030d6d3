"""Shared set-up of the Python front end's tests (ctest `python_frontend` runs them with
Debian's python3 and pytest; see tests/CMakeLists.txt).

- `python/` and `workloads/nki/` go on sys.path, so the tests run from a checkout.
- The tandem binary is `$TANDEM_BIN` (ctest sets it), else build/bin/tandem.
- With TANDEM_REQUIRE_OPTIONAL=1 (ctest sets it; scripts/setup installs both), a missing
  pandas or matplotlib fails the tests that need them instead of skipping them.
"""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "workloads", "nki"))
os.environ.setdefault("MPLBACKEND", "Agg")


def optional(module):
    """Import an optional dependency, or skip (fail under TANDEM_REQUIRE_OPTIONAL=1)."""
    try:
        return __import__(module, fromlist=["_"])
    except ImportError as e:
        if os.environ.get("TANDEM_REQUIRE_OPTIONAL") == "1":
            pytest.fail(f"{module} is required here (TANDEM_REQUIRE_OPTIONAL=1): {e}")
        pytest.skip(f"{module} is not installed")


@pytest.fixture
def pandas():
    return optional("pandas")


@pytest.fixture
def pyplot():
    return optional("matplotlib.pyplot")


@pytest.fixture(scope="session")
def tandem_bin():
    import tandem

    return tandem.find_binary()


@pytest.fixture(scope="session")
def root():
    return ROOT


def line_of(path, marker):
    """The 1-based line of `path` that holds `marker` (exactly one)."""
    with open(path) as f:
        hits = [i + 1 for i, line in enumerate(f) if marker in line]
    assert len(hits) == 1, f"marker {marker!r} found on lines {hits}"
    return hits[0]
