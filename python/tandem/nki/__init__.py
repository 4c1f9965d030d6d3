"""An `nki`-like namespace for the tandem tracer.

A published kernel runs unchanged: while Tandem loads it, `neuronxcc.nki` (and its
`language`, `isa`, `typing`, `compiler` modules) and the newer API's `nki` resolve to these
modules (`tandem.nki.imports`). Code written for Tandem may also import them directly:

    from tandem import nki
    import tandem.nki.language as nl
    import tandem.nki.isa as nisa

`nki.jit`, `nki.baremetal`, `nki.benchmark` and `nki.profile` (with or without options) make
the function a `KernelFunction` that `tandem.trace` / `tandem.simulate` run, with its launch
grid when indexed (`kernel[2, 2]`); the options, which steer the Neuron compiler and runtime,
change nothing in the trace.
"""

from . import compiler, isa, language, typing  # noqa: F401
from .. import launch
from ..launch import KernelFunction
from ..errors import TraceError, user_location
from ._api import unsupported


def jit(func=None, mode="auto", **options):
    """`@nki.jit` or `@nki.jit(...)`: a kernel that tandem.trace runs."""

    def mark(f):
        return f if isinstance(f, KernelFunction) else KernelFunction(f, options)

    return mark(func) if callable(func) else mark


baremetal = benchmark = profile = trace = simulate = jit

tensor = typing.tensor  # annotation only


def simulate_kernel(kernel, *args, **kwargs):
    """NKI's numerical simulator. Tandem simulates timing, not values: a located error that says
    what to call instead."""
    if launch.calls_are_skipped():
        return None  # a call at import time (the file's own test code): not run
    name = getattr(kernel, "__name__", "kernel")
    raise TraceError(f"nki.simulate_kernel computes the kernel's values, which Tandem does not; for its timing, "
                     f"use tandem.simulate({name}, shapes...) or tandem-nki FILE.py:{name} --simulate",
                     user_location(), "nki.simulate_kernel")


def __getattr__(name):
    unsupported("nki", name)
