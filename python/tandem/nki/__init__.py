"""An `nki`-like namespace for the tandem tracer.

A kernel written for NKI runs under the tracer by changing its imports:

    from tandem import nki
    import tandem.nki.language as nl
    import tandem.nki.isa as nisa

`nki.jit` returns the kernel function unchanged; `tandem.trace` / `tandem.simulate` run it.
"""

from . import isa, language  # noqa: F401
from ._api import unsupported


def jit(func=None, **options):
    """`@nki.jit` (with or without options): marks a kernel; tracing does not need it."""

    def mark(f):
        f._nki_jit = options
        return f

    return mark(func) if func is not None else mark


def __getattr__(name):
    unsupported("nki", name)
