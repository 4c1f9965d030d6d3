"""The tracer: runs an NKI-style kernel function once with symbolic loop indices and records
what it does as a `tandem.ir.Kernel`.

Loops (`affine_range`, `sequential_range`) run their body once; the loop variable is a
`Sym`, an affine expression of the enclosing loops' induction variables, so slices such as
`A[k * 128:(k + 1) * 128, :]` become `.kir` accesses `%A[%k*128 : %k*128 + 128, 0:512]`.
`static_range` is a plain Python range: its body is traced once per value (unrolled).

Values are `Tile`s: a view (ranges or single indices per dimension) of a tensor in HBM,
SBUF or PSUM. An NKI call either writes a destination tile (`nisa.nc_matmul(dst, ...)`,
`t[...] = ...`, `acc += ...`) or returns a new tile, which the tracer declares as a tensor of
its own unless the value is assigned straight into another tile (then the instruction writes
that tile and the temporary is never declared).

Anything the tracer cannot express exactly raises `TraceError` naming the call and the
file:line:col of the user's code; it never emits a kernel that means something else.
"""

import inspect
import linecache
import os
import re
from typing import List, Optional, Sequence, Tuple

from . import ir
from .active import activate, active, current, fail
from .errors import (TraceError, UnsupportedError, in_package, loop_name, user_frame, user_location,
                     value_name)
from .ir import Access, Affine, Expr, Index, Instruction, Kernel, Location, Loop, Tensor
from .launch import KernelFunction, launch
from .psum_start import fold_psum_zeros
from .reroll import Iterations, NeedsConcrete, loop_key, promote


# --------------------------------------------------------------------------------------
# Types, buffers


class DType:
    """An element type: its NKI name and its `.kir` name."""

    def __init__(self, name: str, kir: str, size: int):
        self.name, self.kir, self.itemsize = name, kir, size

    def __repr__(self):
        return f"nl.{self.name}"

    __str__ = __repr__

    @property
    def max(self) -> float:
        """The largest finite value of a float type (`nl.float32.max`)."""
        return _FLOAT_MAX.get(self.name, float(2 ** (8 * self.itemsize - 1) - 1))

    @property
    def min(self) -> float:
        return -self.max if self.name in _FLOAT_MAX else -float(2 ** (8 * self.itemsize - 1))

    @property
    def dtype(self):
        """What numpy takes it for (`np.dtype(nl.float32)`): the numpy type of that name, or raw
        bytes of its size where numpy has none (bfloat16, the float8 types)."""
        from .results import _not_installed

        try:
            import numpy
        except ImportError as e:
            raise _not_installed("np.dtype() of an NKI type", "numpy", "python3-numpy") from e

        return numpy.dtype(_NUMPY_NAMES.get(self.name, f"V{self.itemsize}"))


DTYPES = {
    "bfloat16": DType("bfloat16", "bf16", 2),
    "float16": DType("float16", "f16", 2),
    "float32": DType("float32", "f32", 4),
    "tfloat32": DType("tfloat32", "tf32", 4),
    "float8_e4m3": DType("float8_e4m3", "fp8", 1),
    "float8_e5m2": DType("float8_e5m2", "f8", 1),
    "int8": DType("int8", "i8", 1),
    "uint8": DType("uint8", "u8", 1),
    "int16": DType("int16", "i16", 2),
    "uint16": DType("uint16", "u16", 2),
    "int32": DType("int32", "i32", 4),
    "uint32": DType("uint32", "u32", 4),
    "bool_": DType("bool_", "u8", 1),
}
_FLOAT_MAX = {"bfloat16": 3.3895313892515355e38, "float16": 65504.0, "float32": 3.4028234663852886e38,
              "tfloat32": 3.4028234663852886e38, "float8_e4m3": 448.0, "float8_e5m2": 57344.0}
_NUMPY_NAMES = {"float16": "float16", "float32": "float32", "tfloat32": "float32", "int8": "int8", "uint8": "uint8",
                "int16": "int16", "uint16": "uint16", "int32": "int32", "uint32": "uint32", "bool_": "bool"}
_ALIASES = {
    "bf16": "bfloat16", "f16": "float16", "fp16": "float16", "half": "float16",
    "f32": "float32", "fp32": "float32", "float": "float32", "tf32": "tfloat32",
    "fp8": "float8_e4m3", "f8": "float8_e5m2", "float8_e4m3fn": "float8_e4m3",
    "i8": "int8", "u8": "uint8", "i16": "int16", "u16": "uint16", "i32": "int32",
    "u32": "uint32", "bool": "bool_",
}


def to_dtype(x, what="dtype") -> DType:
    if isinstance(x, DType):
        return x
    name = x if isinstance(x, str) else getattr(x, "__name__", None) or getattr(x, "name", None)
    if isinstance(name, str):
        name = _ALIASES.get(name, name)
        if name in DTYPES:
            return DTYPES[name]
    known = ", ".join(sorted(DTYPES))
    fail(f"unsupported {what} {x!r} (known: {known})")


class Buffer:
    """A memory: nl.sbuf, nl.psum, or HBM (nl.hbm, nl.shared_hbm, nl.private_hbm)."""

    def __init__(self, name: str, space: str):
        self.name, self.space = name, space

    def __repr__(self):
        return f"nl.{self.name}"


SBUF = Buffer("sbuf", "sbuf")
PSUM = Buffer("psum", "psum")
HBM = Buffer("hbm", "dram")
SHARED_HBM = Buffer("shared_hbm", "dram")
PRIVATE_HBM = Buffer("private_hbm", "dram")
PARTITIONS = 128
SPACE_NAMES = {"sbuf": "SBUF", "psum": "PSUM", "dram": "HBM"}


class ParDim:
    """nl.par_dim(n): marks the partition dimension of an allocation's shape."""

    def __init__(self, size):
        self.size = size

    def __repr__(self):
        return f"nl.par_dim({self.size})"


# --------------------------------------------------------------------------------------
# Symbolic indices


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def wrap(e: Expr):
    return Sym(e) if isinstance(e, Affine) else e


def unwrap(x, what="index") -> Expr:
    if isinstance(x, Sym):
        return x.expr
    if _is_int(x):
        return x
    if hasattr(x, "__index__") and not isinstance(x, (Tile, IndexRange, float)):
        try:
            return int(x.__index__())  # numpy integers
        except Exception:
            pass
    fail(f"{what} must be an integer or an affine expression of loop indices, found {_describe(x)}")


class Sym:
    """A loop index or an affine expression of loop indices (`k * 128 + 64`)."""

    __slots__ = ("expr",)

    def __init__(self, e: Affine):
        self.expr = e

    def __repr__(self):
        from .printer import expr as print_expr

        return print_expr(self.expr)

    def _other(self, o):
        if isinstance(o, Sym):
            return o.expr
        if _is_int(o):
            return o
        return None

    def __add__(self, o):
        if isinstance(o, IndexRange):
            return o.__add__(self)
        e = self._other(o)
        if e is None:
            return self._nonaffine("+", o)
        return wrap(ir.add(self.expr, e))

    __radd__ = __add__

    def __sub__(self, o):
        e = self._other(o)
        if e is None:
            return self._nonaffine("-", o)
        return wrap(ir.sub(self.expr, e))

    def __rsub__(self, o):
        if isinstance(o, IndexRange):
            return o.__sub__(self)
        e = self._other(o)
        if e is None:
            return self._nonaffine("-", o)
        return wrap(ir.sub(e, self.expr))

    def __mul__(self, o):
        if _is_int(o):
            return wrap(ir.scale(self.expr, o))
        if isinstance(o, Sym):
            fail(f"{self!r} * {o!r} multiplies two loop indices: the index is not affine", call="index")
        return self._nonaffine("*", o)

    __rmul__ = __mul__

    def __neg__(self):
        return wrap(ir.scale(self.expr, -1))

    def __pos__(self):
        return self

    def _nonaffine(self, op, o):
        if isinstance(o, (float, Tile)):
            fail(f"{self!r} {op} {_describe(o)}: a loop index only combines with integers and other loop "
                 "indices (+, -, * by an integer)", call="index")
        return NotImplemented

    def _concrete(self, *_):
        # `//`, `%`, a list index, a range bound, an if: Python needs the value, so the loops
        # behind this index run concretely (tandem.reroll).
        raise NeedsConcrete(loop_key(l.loc) for l in ir.expr_loops(self.expr))

    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __truediv__ = __rtruediv__ = __pow__ = _concrete
    __index__ = __int__ = __float__ = __bool__ = _concrete

    def __lt__(self, o):
        return Predicate(self, "<", o)

    def __le__(self, o):
        return Predicate(self, "<=", o)

    def __gt__(self, o):
        return Predicate(self, ">", o)

    def __ge__(self, o):
        return Predicate(self, ">=", o)

    def __eq__(self, o):  # `if k == 0:` must not pass silently as False
        return Predicate(self, "==", o)

    def __ne__(self, o):
        return Predicate(self, "!=", o)

    __hash__ = object.__hash__


class IndexRange:
    """`nl.arange(n)` (optionally `[:, None]` / `[None, :]`) or one output of `nl.mgrid`,
    shifted by an affine offset: the index range [offset, offset + extent)."""

    def __init__(self, offset: Expr, extent: int, axis: Optional[int] = None):
        self.offset, self.extent, self.axis = offset, extent, axis

    def __repr__(self):
        from .printer import expr as print_expr

        return f"{print_expr(self.offset)} + nl.arange({self.extent})"

    def _shift(self, o, sign):
        if isinstance(o, Sym):
            o = o.expr
        if not _is_int(o) and not isinstance(o, Affine):
            if isinstance(o, IndexRange):
                fail("adding two index ranges (nl.arange/nl.mgrid) gives a strided or 2-D pattern, which a .kir "
                     "access cannot express", call="index")
            return NotImplemented
        return IndexRange(ir.add(self.offset, ir.scale(o, sign)), self.extent, self.axis)

    def __add__(self, o):
        return self._shift(o, 1)

    __radd__ = __add__

    def __sub__(self, o):
        return self._shift(o, -1)

    def __mul__(self, o):
        if o == 1:
            return self
        fail(f"index range * {o!r} is strided: a .kir access takes contiguous ranges only", call="index")

    __rmul__ = __mul__

    def __getitem__(self, key):
        if key == (slice(None), None):
            return IndexRange(self.offset, self.extent, 0)
        if key == (None, slice(None)):
            return IndexRange(self.offset, self.extent, 1)
        fail(f"index range [{key!r}]: only [:, None] and [None, :] are supported", call="index")

    def _number(self, *_):
        fail("an index range (nl.arange/nl.mgrid) used as a Python number", call="index")

    __index__ = __int__ = __bool__ = _number

    def __lt__(self, o):
        return Predicate(self, "<", o)

    def __le__(self, o):
        return Predicate(self, "<=", o)

    def __gt__(self, o):
        return Predicate(self, ">", o)

    def __ge__(self, o):
        return Predicate(self, ">=", o)


class Predicate:
    """A mask (`i * 128 + ix < num_rows`). The tracer accepts a mask only when it holds for
    every element and iteration (then it changes nothing); a partial tile is refused."""

    def __init__(self, lhs, op, rhs):
        self.lhs, self.op, self.rhs = lhs, op, rhs

    def __bool__(self):
        loops = [l for side in (self.lhs, self.rhs) for l in _symbolic_loops(side)]
        if loops:  # an if on a loop index: the loops run concretely (tandem.reroll)
            raise NeedsConcrete(loop_key(l.loc) for l in loops)
        decided = self.always()
        if decided is None:
            fail(f"a comparison of an index range ({self.lhs!r} {self.op} {self.rhs!r}) used as a Python bool: it "
                 "holds for some elements and not others; use it as a mask", call="index")
        return decided

    def __and__(self, o):
        return PredicateAnd([self, o])

    __rand__ = __and__

    def always(self) -> Optional[bool]:
        """True/False when the comparison holds for all / no values; None when it depends."""
        if not _is_int(self.rhs):
            return None
        if isinstance(self.lhs, IndexRange):
            lo = ir.expr_min(self.lhs.offset)
            hi = ir.expr_max(self.lhs.offset) + self.lhs.extent - 1
        else:
            lo, hi = ir.expr_min(self.lhs.expr), ir.expr_max(self.lhs.expr)
        r = self.rhs
        checks = {"<": (hi < r, lo >= r), "<=": (hi <= r, lo > r), ">": (lo > r, hi <= r), ">=": (lo >= r, hi < r),
                  "==": (lo == hi == r, r < lo or r > hi), "!=": (r < lo or r > hi, lo == hi == r)}
        all_true, all_false = checks[self.op]
        return True if all_true else (False if all_false else None)


def _symbolic_loops(x):
    if isinstance(x, Sym):
        return ir.expr_loops(x.expr)
    if isinstance(x, IndexRange):
        return ir.expr_loops(x.offset)
    return []


class PredicateAnd:
    def __init__(self, parts):
        self.parts = parts

    def __and__(self, o):
        return PredicateAnd(self.parts + [o])

    __rand__ = __and__

    def always(self):
        results = [p.always() if isinstance(p, (Predicate, PredicateAnd)) else None for p in self.parts]
        if all(r is True for r in results):
            return True
        return None


class MaskCut:
    """What a mask keeps along one axis of the instruction's tiles: positions [lo, hi) of an
    index range of `extent` elements (axis 0: the partitions, 1: the first free axis)."""

    def __init__(self, axis: int, extent: int, lo: int, hi: int):
        self.axis, self.extent, self.lo, self.hi = axis, extent, lo, hi


def check_mask(mask):
    """The mask of the call being traced, as cuts of its tiles (`Context.mask`). A mask that
    depends on a symbolic loop index makes that loop concrete; then, in each iteration, it keeps
    a range of the index range it compares (a partial last tile: `i * 128 + ix < 250`)."""
    if mask is None or mask is True:
        return
    parts, pending = [], [mask]
    while pending:  # `a & b & c` nests: flatten
        p = pending.pop(0)
        if isinstance(p, PredicateAnd):
            pending = list(p.parts) + pending
        else:
            parts.append(p)
    if not all(isinstance(p, (Predicate, bool)) for p in parts):
        fail(f"mask {_describe(mask)} is not a comparison of an index with an integer")
    cuts = []
    for p in parts:
        if isinstance(p, bool):  # a comparison of plain integers, decided already
            if not p:
                cuts.append(MaskCut(0, 0, 0, 0))
            continue
        if p.always() is True:
            continue  # keeps every element
        loops = _symbolic_loops(p.lhs) + _symbolic_loops(p.rhs)
        if loops:
            raise NeedsConcrete(loop_key(l.loc) for l in loops)
        cuts.append(_cut(p))
    ctx = current()
    ctx.mask = cuts


def _cut(p: "Predicate") -> MaskCut:
    if not isinstance(p.lhs, IndexRange) or not _is_int(p.rhs) or not _is_int(p.lhs.offset):
        if p.always() is False:
            return MaskCut(0, 0, 0, 0)  # keeps nothing: the instruction is not emitted
        fail(f"mask {p.lhs!r} {p.op} {p.rhs!r} must compare an index range (nl.arange, nl.mgrid) with an integer")
    r, n, off = p.lhs, p.lhs.extent, p.lhs.offset
    bounds = {"<": (0, p.rhs - off), "<=": (0, p.rhs - off + 1), ">": (p.rhs - off + 1, n), ">=": (p.rhs - off, n)}
    if p.op not in bounds:
        fail(f"mask {p.lhs!r} {p.op} {p.rhs!r}: only <, <=, > and >= are supported")
    lo, hi = bounds[p.op]
    lo, hi = min(max(lo, 0), n), min(max(hi, 0), n)
    return MaskCut(0 if r.axis in (None, 0) else r.axis, n, lo, max(lo, hi))


# --------------------------------------------------------------------------------------
# Tensors and tiles


class Buf:
    """A declared tensor and what the tracer knows about it."""

    def __init__(self, tensor: Tensor, perm: List[int], loops: Tuple[Loop, ...], temp: bool, loc, call=""):
        self.tensor = tensor
        self.perm = perm  # logical dimension -> .kir dimension
        self.loops = loops  # loops enclosing the allocation
        self.temp = temp  # the value of an NKI call, declared by the tracer
        self.producer: Optional[Instruction] = None
        self.read = False
        self.forwarded = None  # (where the value went, Location)
        self.read_loops = set()  # loops enclosing an instruction that read it
        self.loc = loc
        self.call = call
        self.families = []  # (tandem.reroll.Family, member): the rolled loops' lists it belongs to
        self.blocks = []  # (dimension, member): block indices its accesses take (tandem.reroll.promote)


def _describe(x) -> str:
    if isinstance(x, Tile):
        return f"tile %{x.buf.tensor.name}{list(x.shape)}"
    if isinstance(x, Sym):
        return f"loop index {x!r}"
    return f"{type(x).__name__} {x!r}"


class Tile:
    """A view of a tensor: the value NKI calls take and return.

    `shape` and `dtype` as in NKI; indexing with slices (affine in loop indices), integers,
    loop indices and nl.arange/nl.mgrid ranges gives a sub-view.
    """

    def __init__(self, buf: Buf, index: List[Index], dims: List[Optional[int]], bcast=None, oob=None):
        self.oob = oob  # why the view reaches out of its tensor, until a mask keeps it in (Context.masked)
        self.buf = buf
        self.index = index  # one per .kir dimension
        self.dims = dims  # logical dimensions: a .kir dimension, or None for an added unit dimension
        self.bcast = bcast  # broadcast_to shape (read-only view)

    # -- what NKI code reads
    @property
    def shape(self) -> Tuple[int, ...]:
        if self.bcast is not None:
            return tuple(self.bcast)
        return tuple(1 if d is None else _extent(self.index[d]) for d in self.dims)

    @property
    def dtype(self) -> DType:
        return DTYPES_BY_KIR.get(self.buf.tensor.dtype) or to_dtype(self.buf.tensor.dtype)

    @property
    def buffer(self) -> Buffer:
        return {"sbuf": SBUF, "psum": PSUM}.get(self.buf.tensor.space, SHARED_HBM)

    @property
    def ndim(self):
        return len(self.shape)

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"<tandem tile {self.access_text()} shape={self.shape} {self.dtype}>"

    def __iter__(self):
        fail("iterating over a tile is not supported (index it with slices or loop indices)", call="tile")

    def __bool__(self):
        fail("a tile used as a Python bool", call="tile")

    # -- derived facts
    @property
    def space(self) -> str:
        return self.buf.tensor.space

    @property
    def name(self) -> str:
        return self.buf.tensor.name

    def access(self) -> Access:
        index = [Index(i.lo, i.hi, i.point) for i in self.index]
        for dim, member in self.buf.blocks:
            index.insert(dim, Index(member, member + 1, True))
        return Access(self.buf.tensor, index)

    def access_text(self) -> str:
        from .printer import access

        return access(self.access())

    def tile_shape(self) -> Tuple[int, ...]:
        """The shape as the engines see it: on chip, the partitions the view spans (1 when the
        partition dimension is a single index) and then its free dimensions; in HBM or for a
        broadcast view, `shape`."""
        if self.bcast is not None or self.space == "dram":
            return self.shape or (1,)
        first = self.index[0]
        rest = tuple(1 if d is None else _extent(self.index[d]) for d in self.dims if d != 0)
        return (1 if first.point else _extent(first),) + rest

    def partitions(self) -> int:
        return self.tile_shape()[0]

    def free(self) -> int:
        n = 1
        for s in self.tile_shape()[1:]:
            n *= s
        return n

    def whole(self) -> bool:
        return self.bcast is None and self.access().whole()

    # -- indexing
    def __getitem__(self, key):
        if self.bcast is not None:
            if key is Ellipsis or key == (Ellipsis,):
                return self
            fail("indexing a broadcast_to view; index the tile before broadcast_to", call="tile[...]")
        return _index_view(self, key)

    def __setitem__(self, key, value):
        target = self[key]
        ctx = current("tile[...] =")
        with ctx.calling("tile[...] ="):
            ctx.assign(target, value)

    # -- in-place arithmetic: `acc += x`, `t[...] -= y`
    def _inplace(self, value, op):
        ctx = current(f"{op}=")
        with ctx.calling(f"tile {_OPS_SYMBOL[op]}="):
            ctx.update(self, value, op)
        return self

    def __iadd__(self, v):
        return self._inplace(v, "add")

    def __isub__(self, v):
        return self._inplace(v, "subtract")

    def __imul__(self, v):
        return self._inplace(v, "multiply")

    def __itruediv__(self, v):
        return self._inplace(v, "divide")

    # -- arithmetic makes new tiles (nl.add, ...)
    def _binary(self, other, op, reverse=False):
        from . import ops

        ctx = current(op)
        with ctx.calling(f"tile {_OPS_SYMBOL[op]}"):
            if reverse:
                return ops.elementwise(op, other, self)
            return ops.elementwise(op, self, other)

    def __add__(self, o):
        return self._binary(o, "add")

    def __radd__(self, o):
        return self._binary(o, "add", True)

    def __sub__(self, o):
        return self._binary(o, "subtract")

    def __rsub__(self, o):
        return self._binary(o, "subtract", True)

    def __mul__(self, o):
        return self._binary(o, "multiply")

    def __rmul__(self, o):
        return self._binary(o, "multiply", True)

    def __truediv__(self, o):
        return self._binary(o, "divide")

    def __rtruediv__(self, o):
        return self._binary(o, "divide", True)

    def __neg__(self):
        return self._binary(-1, "multiply")

    def __matmul__(self, o):
        fail("the @ operator: use nl.matmul(x, y, transpose_x=True) or nisa.nc_matmul", call="tile @")

    # -- views
    def broadcast_to(self, shape):
        shape = tuple(int(s) for s in shape)
        mine = self.shape
        if self.space != "dram" and len(mine) == 1 and len(shape) > 1:
            mine = (mine[0],) + (1,) * (len(shape) - 1)  # a (P,) reduction is a (P, 1) column
        if len(mine) != len(shape) or any(a != b and a != 1 for a, b in zip(mine, shape)):
            fail(f"cannot broadcast shape {mine} to {shape}", call="broadcast_to")
        return Tile(self.buf, self.index, self.dims, bcast=shape, oob=self.oob)

    def reshape(self, shape):
        """Only adds or drops dimensions of size 1 (the access stays the same)."""
        shape = tuple(int(s) for s in shape)
        if self.bcast is not None:
            fail("reshape of a broadcast view", call="reshape")
        real = [d for d in self.dims if d is not None and _extent(self.index[d]) != 1]
        sizes = [s for s in shape if s != 1]
        if [_extent(self.index[d]) for d in real] != sizes:
            fail(f"reshape {self.shape} -> {shape} moves elements between dimensions; only dimensions of size 1 "
                 "may be added or dropped", call="reshape")
        index = [Index(i.lo, i.hi, i.point) for i in self.index]
        dims: List[Optional[int]] = []
        it = iter(real)
        for s in shape:
            dims.append(None if s == 1 else next(it))
        for d in self.dims:  # dimensions of size 1 that are dropped become single indices
            if d is not None and d not in dims and _extent(self.index[d]) == 1:
                index[d] = Index(index[d].lo, index[d].hi, True)
        return Tile(self.buf, index, dims, oob=self.oob)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise UnsupportedError(f"tile attribute or method '.{name}' is not supported by the tandem tracer",
                               user_location(), f"tile.{name}")

    def _compare(self, other):
        fail("comparing tiles (element-wise predicates) is not supported by the tandem tracer", call="tile")

    __lt__ = __le__ = __gt__ = __ge__ = _compare

    @property
    def T(self):
        fail("'.T' is not supported: transpose with nisa.nc_transpose", call="tile.T")


DTYPES_BY_KIR = {}
for _d in DTYPES.values():
    DTYPES_BY_KIR.setdefault(_d.kir, _d)

_OPS_SYMBOL = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/"}


def _extent(i: Index) -> int:
    if i.point:
        return 1
    e = ir.sub(i.hi, i.lo)
    if not _is_int(e):
        fail("a slice whose length depends on a loop index")
    return e


def _bound(x, size, what):
    """A slice bound or index as an Expr; negative integers count from the end."""
    e = unwrap(x, what)
    if _is_int(e) and e < 0:
        e += size
    return e


def _index_view(t: Tile, key) -> Tile:
    if not isinstance(key, tuple):
        key = (key,)
    n_ellipsis = sum(1 for k in key if k is Ellipsis)
    if n_ellipsis > 1:
        fail("more than one '...' in an index", call="tile[...]")
    if n_ellipsis:
        at = next(i for i, k in enumerate(key) if k is Ellipsis)
        fill = len(t.dims) - (len(key) - 1)
        key = key[:at] + (slice(None),) * max(fill, 0) + key[at + 1:]
    if len(key) > len(t.dims):
        fail(f"{len(key)} indices for a tile of {len(t.dims)} dimensions {t.shape}", call="tile[...]")
    key = key + (slice(None),) * (len(t.dims) - len(key))
    ordered = [(k.axis, k.extent) for k in key if isinstance(k, IndexRange) and k.axis is not None and k.extent > 1]
    if any(a >= b for (a, _), (b, _) in zip(ordered, ordered[1:])):
        fail("index ranges used out of their grid order (a transposing access pattern): .kir accesses keep the "
             "tensor's dimension order", call="tile[...]")
    oob = t.oob
    index = [Index(i.lo, i.hi, i.point) for i in t.index]
    dims: List[Optional[int]] = []
    for k, d in zip(key, t.dims):
        size = 1 if d is None else _extent(t.index[d])
        base = 0 if d is None else t.index[d].lo
        if isinstance(k, IndexRange):
            k = slice(wrap(k.offset), wrap(ir.add(k.offset, k.extent)))
        if isinstance(k, slice):
            if k.step not in (None, 1):
                fail(f"slice step {k.step!r}: .kir accesses are contiguous", call="tile[...]")
            start = 0 if k.start is None else _bound(k.start, size, "slice start")
            stop = size if k.stop is None else _bound(k.stop, size, "slice stop")
            length = ir.sub(stop, start)
            if not _is_int(length):
                fail(f"slice [{_show(start)}:{_show(stop)}] has a length that depends on a loop index",
                     call="tile[...]")
            if length <= 0:
                fail(f"empty slice [{_show(start)}:{_show(stop)}]", call="tile[...]")
            oob = oob or _check_range(start, stop, size, t, d)
            if d is None:
                dims.append(None)
                continue
            index[d] = Index(ir.add(base, start), ir.add(base, stop))
            dims.append(d)
        elif k is None:
            fail("np.newaxis (None) in an index is not supported", call="tile[...]")
        elif isinstance(k, (list, tuple, Tile)):
            fail("indirect (gather) indexing with a list or tile is not supported", call="tile[...]")
        else:
            v = _bound(k, size, "index")
            oob = oob or _check_range(v, ir.add(v, 1), size, t, d)
            if d is None:
                continue
            lo = ir.add(base, v)
            index[d] = Index(lo, ir.add(lo, 1), True)
    return Tile(t.buf, index, dims, oob=oob)


def _show(e) -> str:
    from .printer import expr as print_expr

    return print_expr(e)


def _check_range(start, stop, size, t, d):
    """Why [start, stop) reaches out of a dimension of `size`, or None."""
    lo, hi = ir.expr_min(start), ir.expr_max(stop)
    if lo < 0 or hi > size:
        return (f"index out of bounds on %{t.name}: [{_show(start)}:{_show(stop)}] reaches [{lo}, {hi}) in a "
                f"dimension of size {size}")
    return None


# --------------------------------------------------------------------------------------
# The tracing context




class _Calling:
    def __init__(self, ctx, call):
        self.ctx, self.call = ctx, call

    def __enter__(self):
        self.saved = self.ctx.call, self.ctx.mask
        self.ctx.call, self.ctx.mask = self.call, []

    def __exit__(self, *exc):
        self.ctx.call, self.ctx.mask = self.saved
        return False


_PREFIX = {"load": "ld", "save": "st", "matmul": "mm", "memset": "ms", "activation": "act",
           "activation_reduce": "actr", "tensor_tensor": "tt", "tensor_scalar": "ts", "tensor_reduce": "red",
           "tensor_copy": "cp", "transpose": "tp", "iota": "iota", "dma_copy": "dma"}

# Which spaces each opcode may write and read (trn1/trn2 models: PE writes PSUM only, DMA
# moves between HBM and SBUF, engines read and write SBUF and PSUM).
_ON_CHIP = ("sbuf", "psum")
_SPACES = {
    "load": (("sbuf",), ("dram",)),
    "save": (("dram",), _ON_CHIP),
    "dma_copy": (("dram", "sbuf"), ("dram", "sbuf")),
    "matmul": (("psum",), ("sbuf",)),
    "transpose": (_ON_CHIP, _ON_CHIP),
}


class Context:
    def __init__(self, name: str, target: str, source_attrs: bool):
        self.kernel = Kernel(name=name, target=target)
        self.blocks: List[list] = [self.kernel.body]
        self.loops: List[Loop] = []
        self.names = set()
        self.counters = {}
        self.bufs: List[Buf] = []
        self.last: Optional[Instruction] = None
        self.last_block = None
        self.pending: Optional[TraceError] = None
        self.call = ""
        self.source_attrs = source_attrs
        self.program = None  # the SPMD program instance being traced: (ids, grid)
        self.mask: List[MaskCut] = []  # what the current call's mask keeps (check_mask)
        self.concrete = set()  # keys of the loops that run concretely (tandem.reroll)
        self.families = []  # the lists of tiles rolled loops made
        self.emitted: List[Instruction] = []
        self.notes: List[str] = []
        self.launch_outputs = None  # HBM tensors a launch allocated, by (line, shape, dtype)

    # -- bookkeeping
    def calling(self, call):
        return _Calling(self, call)

    def check_pending(self):
        if self.pending is not None:
            err, self.pending = self.pending, None
            raise err

    def unique(self, base: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_.]", "_", base or "t")
        if base[0].isdigit():
            base = "t" + base
        name, n = base, 1
        while name in self.names:
            n += 1
            name = f"{base}_{n}"
        self.names.add(name)
        return name

    def inst_name(self, opcode: str) -> str:
        prefix = _PREFIX.get(opcode, opcode)
        while True:
            n = self.counters.get(prefix, 0)
            self.counters[prefix] = n + 1
            name = f"{prefix}{n}"
            if name not in self.names:
                self.names.add(name)
                return name

    # -- loops
    def open_loop(self, trip: int, kind: str, loc) -> Loop:
        loop = Loop(self.unique(loop_name(loc) or "i"), trip, kind, loc)
        loop.key = loop_key(loc)
        self.blocks[-1].append(loop)
        self.blocks.append(loop.body)
        self.loops.append(loop)
        return loop

    def close_loop(self, loop: Loop):
        if not self.loops or self.loops[-1] is not loop:
            raise TraceError(f"loop %{loop.name} closed out of order", loop.loc, kind_call(loop))
        self.loops.pop()
        self.blocks.pop()
        self.last = None  # no forwarding across a loop boundary

    # -- tensors
    def declare(self, shape, dtype: DType, space: str, name_hint: str, loc, temp: bool, call: str,
                perm: Optional[List[int]] = None) -> Tile:
        shape = tuple(int(s) for s in shape)
        if not shape:
            shape = (1,)
        if any(s <= 0 for s in shape):
            fail(f"shape {shape} has a dimension that is not positive", call=call)
        if perm is None:
            perm = list(range(len(shape)))
        kshape = [0] * len(shape)
        for logical, kdim in enumerate(perm):
            kshape[kdim] = shape[logical]
        if space in _ON_CHIP and kshape[0] > PARTITIONS:
            fail(f"partition dimension {kshape[0]} exceeds the {PARTITIONS} partitions of {SPACE_NAMES[space]} "
                 f"(shape {shape})", call=call)
        t = Tensor(self.unique(name_hint), space, tuple(kshape), dtype.kir, loc)
        self.kernel.tensors.append(t)
        buf = Buf(t, perm, tuple(self.loops), temp, loc, call)
        self.bufs.append(buf)
        index = [Index(0, n) for n in kshape]
        return Tile(buf, index, list(perm))

    def temp(self, shape, dtype: DType, space: str, hint: str) -> Tile:
        return self.declare(shape, dtype, space, value_name(hint), user_location(), True, self.call)

    # -- checks
    def check_live(self, t: Tile, writing: bool):
        b = t.buf
        if b.forwarded is not None:
            where, loc = b.forwarded
            fail(f"the value of {b.call} (%{b.tensor.name}) was assigned into {where} at {loc}; it has no tile of "
                 f"its own any more, read {where} instead")
        n = len(b.loops)
        if n and (len(self.loops) < n or any(a is not c for a, c in zip(self.loops, b.loops))):
            # A tile made in a loop and used after it: one tile per iteration, so the loop runs
            # concretely and its tiles become a family (tandem.reroll).
            outside = [l for i, l in enumerate(b.loops) if i >= len(self.loops) or self.loops[i] is not l]
            raise NeedsConcrete(loop_key(l.loc) for l in outside)
        for family, _ in b.families:
            if not family.promoted:  # a member of a rolled loop's list, used after the loop
                promote(self, family)
        if writing and t.bcast is not None:
            fail("writing to a broadcast_to view")

    def check_spaces(self, inst: Instruction, call: str):
        rule = _SPACES.get(inst.opcode)
        if rule is None:
            if inst.opcode == "memset":
                rule = (_ON_CHIP, ())
            else:  # engine instructions
                rule = (_ON_CHIP, _ON_CHIP)
        writes, reads = rule
        for role, accesses, allowed in (("writes", inst.writes, writes), ("reads", inst.reads, reads)):
            for a in accesses:
                if a.tensor.space not in allowed:
                    fail(f"{inst.opcode} {role} {' or '.join(SPACE_NAMES[s] for s in allowed)} only; "
                         f"%{a.tensor.name} is in {SPACE_NAMES[a.tensor.space]}", call=call)

    # -- instructions
    def emit(self, opcode: str, writes: Sequence[Tile], reads: Sequence[Tile], attrs=(), engine=None) -> Instruction:
        self.check_pending()
        for t in writes:
            self.check_live(t, True)
        for t in reads:
            self.check_live(t, False)
        loc = user_location()
        if any(c.lo == c.hi for c in self.mask):
            return None  # the mask keeps no element
        inst = Instruction(self.inst_name(opcode), opcode, [self.masked(t) for t in writes],
                           [self.masked(t) for t in reads], list(attrs), engine, loc, self.call)
        if self.source_attrs and loc is not None:
            inst.attrs.append(("src", f"{os.path.basename(loc.filename)}:{loc.line}"))
        self.check_spaces(inst, self.call)
        self.blocks[-1].append(inst)
        self.emitted.append(inst)
        for t in reads:
            t.buf.read = True
            t.buf.read_loops.update(self.loops)
        for t in writes:
            if t.buf.temp and t.buf.producer is None:
                t.buf.producer = inst
        self.last, self.last_block = inst, self.blocks[-1]
        return inst

    def masked(self, t: Tile) -> Access:
        """The tile's access, cut by the call's mask along the axes whose extent the mask's index
        range spans; an index out of bounds that no mask brings back is refused here."""
        a = t.access()
        for cut in self.mask:
            logical = t.tile_shape()
            if cut.axis >= len(logical) or logical[cut.axis] != cut.extent or t.bcast is not None:
                continue
            d = t.dims[cut.axis] if cut.axis < len(t.dims) else None
            if d is None:
                continue
            d += sum(1 for dim, _ in t.buf.blocks if dim <= d)
            ix = a.index[d]
            a.index[d] = Index(ir.add(ix.lo, cut.lo), ir.add(ix.lo, cut.hi), ix.point and cut.hi - cut.lo == 1)
        if t.oob is not None:
            for ix, n in zip(a.index, a.tensor.shape):
                if ir.expr_min(ix.lo) < 0 or ir.expr_max(ix.hi) > n:
                    fail(t.oob + ("; the call's mask does not keep it in bounds" if self.mask else
                                  " (a mask, mask=(index < bound), would keep a partial tile in bounds)"))
        return a

    def forwardable(self, value: Tile) -> bool:
        """The value is a fresh result that only the last instruction wrote and nothing read:
        that instruction can write the destination instead."""
        b = value.buf
        return (b.temp and b.forwarded is None and not b.read and b.producer is not None
                and b.producer is self.last and self.last_block is self.blocks[-1] and value.whole()
                and len(b.producer.writes) == 1)

    def forward(self, value: Tile, dst: Tile, accumulate: bool) -> Instruction:
        b = value.buf
        inst = b.producer
        self.check_live(dst, True)
        check_same_size(dst, value, self.call)
        inst.writes = [dst.access()]
        if accumulate:
            inst.attrs.insert(0, ("accumulate", ir.FLAG))
        self.check_spaces(inst, inst.call)
        self.kernel.tensors.remove(b.tensor)
        self.names.discard(b.tensor.name)
        b.forwarded = (f"%{dst.name}", user_location())
        return inst

    def assign(self, dst: Tile, value):
        """`dst[...] = value`."""
        from . import ops

        if isinstance(value, Tile):
            if value.buf is dst.buf and value.bcast is None and value.access_text() == dst.access_text():
                return  # `t[...] += x` stores the updated view back onto itself
            if self.forwardable(value):
                self.forward(value, dst, accumulate=False)
                return
            if dst.space == "dram" or value.space == "dram":
                fail("assigning between HBM and on-chip tiles: use nl.load / nl.store (or nisa.dma_copy)")
            check_same_size(dst, value, self.call)
            ops.copy_into(dst, value)
            return
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            ops.memset_into(dst, value)
            return
        fail(f"cannot assign {_describe(value)} to a tile")

    def update(self, dst: Tile, value, op: str):
        """`dst op= value`: a matmul result accumulates into PSUM; others are a vector op."""
        from . import ops

        if isinstance(value, Tile) and op == "add" and self.forwardable(value) and value.buf.producer.opcode == "matmul":
            if dst.space != "psum":
                fail(f"a matmul accumulates into PSUM only; %{dst.name} is in {SPACE_NAMES[dst.space]}")
            self.forward(value, dst, accumulate=True)
            return
        ops.elementwise(op, dst, value, dst=dst)


def kind_call(loop: Loop) -> str:
    return f"nl.{loop.kind}"


def check_same_size(dst: Tile, src: Tile, call: str):
    if dst.partitions() != src.partitions() or dst.free() != src.free():
        fail(f"shape mismatch: destination %{dst.name}{list(dst.shape)} and value %{src.name}{list(src.shape)} "
             "differ in partitions or elements per partition", call=call)


# --------------------------------------------------------------------------------------
# Loops


class LoopRange:
    """What `nl.affine_range` / `nl.sequential_range` return: iterating yields the loop index once."""

    def __init__(self, kind: str, start, stop, step):
        if stop is None:
            start, stop = 0, start
        for what, v in (("start", start), ("stop", stop), ("step", step)):
            if not _is_int(v):
                if isinstance(v, Sym):
                    fail(f"loop {what} {v!r} depends on an enclosing loop index: .kir loop bounds are constants",
                         call=f"nl.{kind}")
                try:
                    v = int(v.__index__())
                except Exception:
                    fail(f"loop {what} must be an integer, found {_describe(v)}", call=f"nl.{kind}")
        if step == 0:
            fail("loop step 0", call=f"nl.{kind}")
        self.kind, self.start, self.stop, self.step = kind, int(start), int(stop), int(step)
        self.trip = max(0, -(-(self.stop - self.start) // self.step))
        self.loc = user_location()

    def __len__(self):
        return self.trip

    def __iter__(self):
        ctx = current(f"nl.{self.kind}")
        if self.trip == 0:
            return iter(())
        return self._run(ctx)

    def _run(self, ctx: Context):
        if loop_key(self.loc) in ctx.concrete:
            yield from self._run_concretely(ctx)
            return
        loop = ctx.open_loop(self.trip, self.kind, self.loc)
        before = _tile_locals(user_frame())
        finished = False
        try:
            yield wrap(Affine.of(loop, self.step, self.start)) if self.trip > 1 else self.start
            finished = True
            _check_rebinding(loop, before, _tile_locals(user_frame()), self.kind)
        except GeneratorExit:
            # `break` or `return` in the body: as in NKI's own tracing, the body as far as it ran
            # stands for every iteration.
            ctx.notes.append(f"{self.loc}: the body of loop %{loop.name} leaves it early (break or return); it is "
                             "traced as far as it runs, for every iteration")
        finally:
            if ctx.loops and ctx.loops[-1] is loop:
                ctx.close_loop(loop)
        if finished and len(loop.body) == 0:
            pass  # an empty loop prints nothing


    def _run_concretely(self, ctx: Context):
        """One pass of the body per iteration, with the index's value; rolled back into one
        loop when the iterations agree (tandem.reroll)."""
        its = Iterations(ctx, self, loop_name(self.loc) or "i")
        try:
            for i in range(self.trip):
                its.begin()
                yield self.start + i * self.step
                its.end()
        except GeneratorExit:  # `break` or `return`: the iterations that ran, as Python runs them
            its.end()
            ctx.notes.append(f"{self.loc}: a loop is left early (break or return) after {len(its.blocks)} "
                             "iterations")
        its.finish()


def _tile_locals(frame):
    if frame is None:
        return {}
    return {name: v.buf for name, v in frame.f_locals.items() if isinstance(v, Tile)}


def _check_rebinding(loop: Loop, before, after, kind):
    """A variable that held a tile the body read, rebound in the body to a tile the body made,
    carries a value from one iteration to the next through Python: the traced body (run once)
    would read the old tile in every iteration, so the loop runs concretely (tandem.reroll)."""
    for name, buf in after.items():
        old = before.get(name)
        if old is not None and buf is not old and loop in buf.loops and loop in old.read_loops:
            raise NeedsConcrete([loop_key(loop.loc)])  # each iteration reads the previous one's tile


# --------------------------------------------------------------------------------------
# Tracing a kernel


class TensorSpec:
    """An input of the kernel: an HBM tensor of this shape and element type."""

    def __init__(self, shape, dtype=None, name=None):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = dtype
        self.name = name

    def __repr__(self):
        return f"tensor({self.shape}, {self.dtype!r})"


def tensor(shape, dtype=None, name=None) -> TensorSpec:
    """An input tensor for `trace`/`simulate`: `tandem.tensor((128, 512), "f32")`."""
    return TensorSpec(shape, dtype, name)


def parse_shape(text: str) -> Tuple[int, ...]:
    """`128x512` -> (128, 512)."""
    parts = text.lower().split("x")
    if not all(p.strip().isdigit() for p in parts):
        raise ValueError(f"'{text}' is not a shape like 128x512")
    return tuple(int(p) for p in parts)


def _is_shape(x) -> bool:
    return isinstance(x, (tuple, list)) and len(x) > 0 and all(_is_int(s) for s in x)


class TracedKernel:
    """A traced kernel: the `.kir` text (`.text`), the IR (`.kernel`) and the map from `.kir`
    lines and names back to the Python source."""

    def __init__(self, kernel: Kernel, notes=()):
        from .printer import print_kernel

        self.kernel = kernel
        self.notes = list(notes)  # what the trace did that the user may not expect (loops left unrolled)
        self.text, self.lines = print_kernel(kernel)
        self.names = {name: loc for name, loc in self.lines.values() if name}

    def __str__(self):
        return self.text

    @property
    def name(self):
        return self.kernel.name

    def source_of(self, name: str) -> Optional[Location]:
        """Where `%name` (an instruction, a tensor or a loop) comes from in the Python source."""
        if not name.startswith("%"):
            name = "%" + name
        return self.names.get(name)

    def write(self, path) -> str:
        """Write the `.kir` file (a temporary file renamed into place)."""
        path = os.fspath(path)
        tmp = f"{path}.tmp.{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(self.text)
        os.replace(tmp, path)
        return path


def trace(kernel, *args, dtype="bf16", target="trn2", name=None, source_attrs=True, **kwargs) -> TracedKernel:
    """Trace an NKI-style kernel function into a `.kir` kernel.

    `args` are the kernel's positional arguments: a shape (tuple of ints, or a string
    `128x512`) or `tandem.tensor(shape, dtype)` becomes an HBM input tensor named after the
    parameter; anything else (a float epsilon, ...) is passed through. `kwargs` go to the
    kernel unchanged (meta-parameters). `dtype` is the input tensors' default element type,
    `target` the model the `.kir` names. With `source_attrs`, every instruction carries
    `{src = "file.py:LINE"}`.
    """
    # A kernel (nki.jit) runs as the program instances of its grid; a plain function (a caller
    # that launches kernels, or a kernel written without the decorator) runs as it is.
    grid = kernel.grid if isinstance(kernel, KernelFunction) else None
    fn = kernel.fn if isinstance(kernel, KernelFunction) else getattr(kernel, "__wrapped__", kernel)
    if isinstance(fn, KernelFunction):
        grid, fn = grid or fn.grid, fn.fn
    if isinstance(kernel, KernelFunction) and grid is None:
        grid = (1,)
    if not callable(fn):
        raise TypeError(f"trace() needs a kernel function, got {kernel!r}")
    if active() is not None:
        raise TraceError("trace() called while another kernel is being traced", user_location(), "tandem.trace")
    kname = re.sub(r"[^A-Za-z0-9_.]", "_", name or getattr(fn, "__name__", "kernel"))
    default = to_dtype_outside(dtype)
    concrete = set()
    while True:  # again with more loops concrete, each time Python needs a loop index's value
        ctx = _trace_once(fn, grid, args, kwargs, kname, target, source_attrs, default, concrete)
        if isinstance(ctx, Context):
            break
        if ctx.keys <= concrete:
            raise TraceError("the tracer could not run the kernel's loops concretely (a defect of the tracer)",
                             None, "trace")
        concrete |= ctx.keys
    fold_psum_zeros(ctx.kernel)
    return TracedKernel(ctx.kernel, ctx.notes)


def _trace_once(fn, grid, args, kwargs, kname, target, source_attrs, default, concrete):
    """One run of the kernel: its Context, or the NeedsConcrete that stopped it."""
    ctx = Context(kname, target, source_attrs)
    ctx.concrete = set(concrete)
    ctx.kernel.source = _def_location(fn)
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    values = []
    activate(ctx)
    try:
        for i, a in enumerate(args):
            pname = params[i].name if i < len(params) and params[i].kind in (
                inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD) else f"in{i}"
            if isinstance(a, str) and "x" in a.lower():
                a = TensorSpec(parse_shape(a))
            elif _is_shape(a):
                a = TensorSpec(a)
            if isinstance(a, TensorSpec):
                dt = to_dtype_outside(a.dtype) if a.dtype is not None else default
                values.append(ctx.declare(a.shape, dt, "dram", a.name or pname, ctx.kernel.source, False, "input"))
            else:
                values.append(a)
        try:
            _run_kernel(ctx, fn, grid, values, kwargs)
        except NeedsConcrete as e:
            return e
        ctx.check_pending()
        if ctx.loops:
            raise TraceError(f"loop %{ctx.loops[-1].name} was never closed", ctx.loops[-1].loc, "trace")
    finally:
        activate(None)
    return ctx



def _def_location(fn) -> Optional[Location]:
    """The kernel's `def` line (after its decorators) and column."""
    try:
        code = fn.__code__
    except AttributeError:
        return None
    line = code.co_firstlineno
    for n in range(line, line + 50):
        text = linecache.getline(code.co_filename, n)
        m = re.match(r"\s*(async\s+)?def\s", text)
        if m:
            return Location(code.co_filename, n, len(text) - len(text.lstrip()) + 1)
        if not text:
            break
    return Location(code.co_filename, line, 0)


def _run_kernel(ctx: Context, fn, grid, values, kwargs):
    """Call the kernel with its arguments; what it raises becomes a TraceError at the line that
    raised it."""
    try:
        inspect.signature(fn).bind(*values, **kwargs)
    except TypeError as e:
        raise TraceError(f"the kernel's arguments do not match its parameters {_parameters(fn)}: {e}",
                         ctx.kernel.source, getattr(fn, "__name__", "kernel")) from None
    except ValueError:
        pass  # no signature to check (a builtin): the call says
    try:
        if grid is None:
            fn(*values, **kwargs)
        else:
            launch(ctx, fn, grid, values, kwargs)
    except TraceError:
        raise
    except RecursionError:
        raise TraceError("the kernel recursed too deeply", ctx.kernel.source, getattr(fn, "__name__", "kernel")) from None
    except Exception as e:
        raise _raised_in_kernel(e, fn) from None


def _parameters(fn) -> str:
    try:
        return str(inspect.signature(fn))
    except (TypeError, ValueError):
        return "(...)"


def _raised_in_kernel(e: Exception, fn) -> TraceError:
    """The kernel's own exception (an assert, a ValueError), located at the innermost line of the
    user's code it passed through; one raised inside the tracer says so."""
    tb, user, inside = e.__traceback__, None, False
    while tb is not None:
        if in_package(tb.tb_frame.f_code.co_filename):
            inside = True
        else:
            user, inside = tb, False
        tb = tb.tb_next
    loc = None
    if user is not None:
        code = user.tb_frame.f_code
        col = 0
        try:
            pos = list(code.co_positions())[user.tb_lasti // 2]
            col = (pos[2] or 0) + 1 if pos[0] == user.tb_lineno else 0
        except (AttributeError, IndexError, TypeError):
            pass
        loc = Location(code.co_filename, user.tb_lineno, col)
    text = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    if inside:
        return TraceError(f"the tandem tracer failed on this line ({text}); this is a defect of the tracer, please "
                          "report it with the kernel", loc, getattr(fn, "__name__", "kernel"))
    return TraceError(f"the kernel raised {text}", loc, getattr(fn, "__name__", "kernel"))


def to_dtype_outside(x) -> DType:
    """to_dtype for arguments of trace() itself (a ValueError, not a located TraceError)."""
    if isinstance(x, DType):
        return x
    name = x if isinstance(x, str) else getattr(x, "__name__", None) or getattr(x, "name", None)
    if isinstance(name, str):
        name = _ALIASES.get(name, name)
        if name in DTYPES:
            return DTYPES[name]
    raise ValueError(f"unknown dtype {x!r} (known: {', '.join(sorted(set(DTYPES) | set(_ALIASES)))})")
