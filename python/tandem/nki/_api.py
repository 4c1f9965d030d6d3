"""Argument handling shared by tandem.nki.language and tandem.nki.isa: NKI's names and
calling conventions, with every mistake reported at the user's line."""

import functools

from ..active import current, fail
from ..errors import UnsupportedError, printable, user_location
from ..indices import check_mask, describe
from ..tiles import Tile


def unsupported(module: str, name: str):
    if name.startswith("_"):
        raise AttributeError(name)
    why = "is not supported by the tandem tracer (docs/python.md lists what is)"
    if name in _NEURONCORE_V4 or name.endswith("_x4"):
        why = ("is a NeuronCore-v4 (Trainium3) feature, MX microscaling; Tandem's models are trn1 and trn2 "
               "(NeuronCore-v2 and -v3), which have no MX datapath to time it on")
    raise UnsupportedError(f"{module}.{name} {why}", user_location(), f"{module}.{name}")


# NKI API Reference Manual, nki.isa.nc_matmul_mx and quantize_mx: "Available only on NeuronCore-v4
# and newer"; the MX element types go with them.
_NEURONCORE_V4 = {"nc_matmul_mx", "quantize_mx", "float8_e8m0fnu", "float4_e2m1fn"}


def api(call):
    """Decorate an NKI function: a trace must be running, errors name `call`."""

    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            ctx = current(call)
            with ctx.calling(call):
                try:
                    return fn(*args, **kwargs)
                except TypeError as e:
                    if not ("argument" in str(e) and _raised_here(e)):
                        raise
                    message = str(e).split("() ", 1)[-1]
                fail(f"bad arguments: {message}", call=call)

        wrapper._nki_name = fn.__name__.rstrip("_")
        wrapper._nki_call = call
        return wrapper

    return deco


def _raised_here(e) -> bool:
    """The TypeError came from calling the function itself (its signature), not from inside it."""
    tb = e.__traceback__
    depth = 0
    while tb is not None:
        depth += 1
        tb = tb.tb_next
    return depth <= 1


def bind(names, args, kwargs, required=(), defaults=None):
    """Positional and keyword arguments to a dict by NKI's parameter order."""
    if len(args) > len(names):
        fail(f"takes at most {len(names)} positional arguments ({len(args)} given)")
    out = dict(defaults or {})
    given = dict(zip(names, args))
    for k, v in kwargs.items():
        if k in given:
            fail(f"got multiple values for argument '{printable(k)}'")
        if k not in names:
            fail(f"unsupported argument '{printable(k)}' (supported: {', '.join(names)})")
        given[k] = v
    out.update(given)
    missing = [r for r in required if r not in out]
    if missing:
        fail(f"missing argument{'s' if len(missing) > 1 else ''} {', '.join(repr(m) for m in missing)}")
    check_mask(out.get("mask"))
    carried = [cut for v in out.values() if isinstance(v, Tile) for cut in v.mask]
    if carried:  # operands indexed with a mask (`tile[mask]`) mask the call
        ctx = current()
        ctx.mask = list(ctx.mask) + carried
    return out


def refuse_set(args, **neutral):
    """Arguments the tracer accepts only at their neutral value."""
    for key, value in neutral.items():
        if key in args and args[key] != value and args[key] is not None:
            fail(f"{key}={describe(args[key])} is not supported by the tandem tracer")


def is_tile(x) -> bool:
    return isinstance(x, Tile)
