"""Kernels and their launch grids, as NKI defines them.

`@nki.jit` (and `baremetal`, `benchmark`, `profile`) make a `KernelFunction`. Indexing it gives
a launch grid, `kernel[2, 2](a, b)`: an SPMD launch of one program instance per point of the
grid, each seeing its own `nl.program_id(axis)`. Tandem's models are one NeuronCore, so the
instances run one after another on it, in row-major order of the grid (the kernel's
`spmd_grid` attribute says so in the `.kir`). An HBM tensor a kernel allocates is one tensor
for the whole launch, as NKI's shared output is: every instance that allocates it at the same
line gets the same tensor.
"""

import contextlib
import functools
import itertools
from typing import Optional, Tuple

from .active import active, fail
from .errors import TraceError, printable, user_location


class KernelFunction:
    """What `nki.jit` returns: the kernel, its options and, once indexed, its launch grid."""

    def __init__(self, fn, options=None, grid: Optional[Tuple[int, ...]] = None):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.options = dict(options or {})
        self.grid = grid

    def __getitem__(self, grid):
        if _skipping:
            return self
        return KernelFunction(self.fn, self.options, grid_of(grid))

    def __call__(self, *args, **kwargs):
        ctx = active()
        if ctx is None and _skipping:
            return None  # a call at import time (the file's own test code): not run
        if ctx is None:
            raise TraceError(f"calling NKI kernel {self.__name__} runs it on Neuron hardware; under Tandem, trace or "
                             f"simulate it instead: tandem.simulate({self.__name__}, shapes...) or tandem-nki "
                             f"FILE.py:{self.__name__} --shapes ... --simulate", user_location(), "nki.jit")
        return launch(ctx, self.fn, self.grid, args, kwargs)

    def __repr__(self):
        grid = "" if self.grid is None else "[" + ", ".join(map(str, self.grid)) + "]"
        return f"<NKI kernel {self.__name__}{grid}>"


_skipping = False


def calls_are_skipped() -> bool:
    return _skipping


@contextlib.contextmanager
def calls_skipped():
    """While a kernel file loads, its own calls of kernels (test code at module level, with
    arrays the tracer cannot run) are skipped."""
    global _skipping
    saved, _skipping = _skipping, True
    try:
        yield
    finally:
        _skipping = saved


class NeuronCores:
    """`nl.nc(n)`: an axis of the grid spread over n NeuronCores."""

    def __init__(self, n):
        self.n = n

    def __index__(self):
        return self.n


def spmd_dim(*sizes):
    """`nl.spmd_dim(4, nl.nc(2))`: one grid axis of the product of its sizes."""
    n = 1
    for s in sizes:
        n *= _size(s)
    return n


def _size(s) -> int:
    try:
        n = s.__index__() if hasattr(s, "__index__") else None
    except Exception:
        n = None
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        fail(f"a launch grid dimension must be a positive integer, found {printable(repr(s))}", call="kernel[grid]")
    return n


def grid_of(grid) -> Tuple[int, ...]:
    dims = grid if isinstance(grid, tuple) else (grid,)
    if not dims:
        fail("an empty launch grid", call="kernel[grid]")
    return tuple(_size(d) for d in dims)


def launch(ctx, fn, grid, args, kwargs):
    """Run kernel `fn` once per program instance of `grid` (a grid of 1 when None); a kernel
    called from inside another runs in its caller's instance."""
    if ctx.program is not None:
        return fn(*args, **kwargs)
    return _run_instances(ctx, fn, grid or (1,), args, kwargs)


def _run_instances(ctx, fn, grid, args, kwargs):
    if grid != (1,):
        ctx.kernel.set_attr("spmd_grid", "x".join(map(str, grid)))
        ctx.kernel.set_attr("spmd", "sequential")
    ctx.launch_outputs = {}
    result = None
    try:
        for ids in itertools.product(*(range(n) for n in grid)):
            ctx.program = (ids, grid)
            result = fn(*args, **kwargs)
    finally:
        ctx.program = None
        ctx.launch_outputs = None
    return result
