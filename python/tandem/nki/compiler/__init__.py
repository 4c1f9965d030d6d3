"""`nki.compiler` for the tandem tracer: directives that steer the Neuron compiler.

`skip_middle_end_transformations` keeps the loop nests as written (no fusion of nests that pass
on a PSUM tensor larger than PSUM, tandem.loop_fusion). Those that only steer its passes
(`no_reorder`, `force_auto_alloc`, `enable_stack_allocator`, `allocation_scope`) are accepted
and change nothing in the trace. Allocation directives (`sbuf.mod_alloc`, `psum.mod_alloc`,
`sbuf.alloc`, `psum.alloc`, `sbuf.auto_alloc`, `psum.auto_alloc`) are buffers for
`nl.ndarray(..., buffer=)`: the tile is placed in the memory they name, allocated by live range
as every tile is (docs/python.md, "Compiler directives").
"""

import contextlib

from . import psum, sbuf  # noqa: F401
from .._api import unsupported


def _decorator_or_call(func=None, **options):
    """`@directive`, `@directive(...)`: the function unchanged."""
    if callable(func):
        return func
    return lambda f: f


def skip_middle_end_transformations(func=None, **options):
    """`@skip_middle_end_transformations`: the kernel's loop nests stay as written."""

    def mark(f):
        f.skip_middle_end = True
        return f

    return mark(func) if callable(func) else mark


force_auto_alloc = _decorator_or_call
enable_stack_allocator = _decorator_or_call


@contextlib.contextmanager
def _scope(*args, **kwargs):
    yield


def no_reorder(*args, **kwargs):
    """`with nki.compiler.no_reorder():` keeps the block in program order; the tracer emits it in
    program order anyway (the passes may still reorder a `.kir` kernel)."""
    return _scope()


def allocation_scope(*args, **kwargs):
    return _scope()


def multi_buffer(factor=2):
    """A hint to the compiler's allocator; Tandem's passes choose buffers (address-rotation)."""
    return _scope()


def __getattr__(name):
    unsupported("nki.compiler", name)
