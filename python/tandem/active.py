"""The kernel being traced, one per thread: `current()` is the context that NKI calls record
into (`tandem.context.Context`), `fail()` raises a located `TraceError` naming the call in
progress."""

import threading
from typing import Optional

from .errors import TraceError, user_location

_STATE = threading.local()  # the kernel being traced, per thread


def active():
    """The context of the kernel being traced on this thread, or None."""
    return getattr(_STATE, "ctx", None)


def activate(ctx):
    """Make `ctx` the kernel being traced on this thread (None: no kernel)."""
    _STATE.ctx = ctx


def current(call: str = ""):
    """The context of the kernel being traced; outside a trace, a TraceError naming `call`."""
    ctx = active()
    if ctx is None:
        raise TraceError(f"{call or 'this call'} was made outside tandem.trace(): NKI-style calls only record "
                         "while a kernel is traced", user_location(), call)
    ctx.check_pending()
    return ctx


def fail(message: str, call: Optional[str] = None):
    ctx = active()
    if call is None:
        call = ctx.call if ctx is not None else ""
    raise TraceError(message, user_location(), call)
