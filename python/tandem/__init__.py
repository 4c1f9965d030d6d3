"""Tandem's Python front end (docs/python.md).

- `trace(kernel, *shapes)`: run an NKI-style kernel (written against `tandem.nki.language`
  and `tandem.nki.isa`) with symbolic loop indices and get its `.kir` (`TracedKernel`).
- `simulate`, `ab`, `sweep`: run the `tandem` binary (one process per simulation) and get
  result objects built from its `tandem.sim/1` / `tandem.ab/1` JSON.
"""

from .results import ABResult, Hazard, Iteration, Loop, SimResult, SweepResult, Unit  # noqa: F401
from .runner import RaceError, TandemError, ab, find_binary, opt, simulate, sweep  # noqa: F401
from .errors import TraceError  # noqa: F401
from .tracer import TracedKernel, parse_shape, tensor, trace  # noqa: F401
from .nki import imports as _nki_imports

# A published kernel imported after `import tandem` finds NKI's module names (behind a real
# Neuron installation, which keeps them where there is one).
_nki_imports.install(first=False)

__all__ = ["trace", "tensor", "parse_shape", "simulate", "ab", "sweep", "opt", "find_binary", "TracedKernel",
           "SimResult", "ABResult", "SweepResult", "Loop", "Iteration", "Unit", "Hazard", "TraceError",
           "TandemError", "RaceError"]
