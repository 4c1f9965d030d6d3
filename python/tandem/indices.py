"""Loop indices and masks: the values a traced kernel indexes tiles with.

A loop index is a `Sym`, an affine expression of the enclosing loops' induction variables
(`k * 128 + 64`); `nl.arange` and `nl.mgrid` give an `IndexRange`, an index range shifted by
such an expression. Where Python needs an index's value (`//`, an `if`, a list index), the
loops behind it run concretely (`tandem.reroll.NeedsConcrete`). Comparing an index gives a
`Predicate`, which a call takes as its mask (`check_mask`): the parts of its tiles it keeps.

Tiles (`tandem.tiles.Tile`) are built on these; an index refuses to combine with one, and
`describe` names one in errors, through its base `TileValue`.
"""

from typing import Optional

from . import ir
from .active import current, fail
from .errors import printable
from .ir import Affine, Expr
from .printer import expr as print_expr
from .reroll import NeedsConcrete, loop_key


class TileValue:
    """The base of `tandem.tiles.Tile`, which is built on the indices here: what an index
    refuses to combine with (`k * tile`), and what `describe` names by its tensor's `name` and
    its `shape`."""

    __slots__ = ()


def describe(x) -> str:
    """How an error names a value: a tile by its tensor and shape, a loop index by its
    expression, anything else by its type and repr."""
    if isinstance(x, TileValue):
        return f"tile %{x.name}{list(x.shape)}"
    if isinstance(x, Sym):
        return f"loop index {x!r}"
    return f"{type(x).__name__} {printable(repr(x))}"


def is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def wrap(e: Expr):
    return Sym(e) if isinstance(e, Affine) else e


def unwrap(x, what="index") -> Expr:
    if isinstance(x, Sym):
        return x.expr
    if is_int(x):
        return x
    if hasattr(x, "__index__") and not isinstance(x, (TileValue, IndexRange, float)):
        try:
            return int(x.__index__())  # numpy integers
        except Exception:
            pass
    fail(f"{what} must be an integer or an affine expression of loop indices, found {describe(x)}")


class Ordered:
    """An index whose ordering comparisons make a Predicate (a mask), not a bool."""

    __slots__ = ()

    def __lt__(self, o):
        return Predicate(self, "<", o)

    def __le__(self, o):
        return Predicate(self, "<=", o)

    def __gt__(self, o):
        return Predicate(self, ">", o)

    def __ge__(self, o):
        return Predicate(self, ">=", o)


class Sym(Ordered):
    """A loop index or an affine expression of loop indices (`k * 128 + 64`)."""

    __slots__ = ("expr",)

    def __init__(self, e: Affine):
        self.expr = e

    def __repr__(self):
        return print_expr(self.expr)

    def _other(self, o):
        if isinstance(o, Sym):
            return o.expr
        if is_int(o):
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
        if is_int(o):
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
        if isinstance(o, (float, TileValue)):
            fail(f"{self!r} {op} {describe(o)}: a loop index only combines with integers and other loop "
                 "indices (+, -, * by an integer)", call="index")
        return NotImplemented

    def _concrete(self, *_):
        # `//`, `%`, a list index, a range bound, an if: Python needs the value, so the loops
        # behind this index run concretely (tandem.reroll).
        raise NeedsConcrete(loop_key(l.loc) for l in ir.expr_loops(self.expr))

    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __truediv__ = __rtruediv__ = __pow__ = _concrete
    __index__ = __int__ = __float__ = __bool__ = _concrete

    def __eq__(self, o):  # `if k == 0:` must not pass silently as False
        return Predicate(self, "==", o)

    def __ne__(self, o):
        return Predicate(self, "!=", o)

    __hash__ = object.__hash__


class IndexRange(Ordered):
    """`nl.arange(n)` (optionally `[:, None]` / `[None, :]`) or one output of `nl.mgrid`,
    shifted by an affine offset: the index range [offset, offset + extent)."""

    def __init__(self, offset: Expr, extent: int, axis: Optional[int] = None):
        self.offset, self.extent, self.axis = offset, extent, axis

    def __repr__(self):
        return f"{print_expr(self.offset)} + nl.arange({self.extent})"

    def _shift(self, o, sign):
        if isinstance(o, Sym):
            o = o.expr
        if not is_int(o) and not isinstance(o, Affine):
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
        fail(f"index range * {printable(repr(o))} is strided: a .kir access takes contiguous ranges only", call="index")

    __rmul__ = __mul__

    def __getitem__(self, key):
        if key == (slice(None), None):
            return IndexRange(self.offset, self.extent, 0)
        if key == (None, slice(None)):
            return IndexRange(self.offset, self.extent, 1)
        fail(f"index range [{printable(repr(key))}]: only [:, None] and [None, :] are supported", call="index")

    def _number(self, *_):
        fail("an index range (nl.arange/nl.mgrid) used as a Python number", call="index")

    __index__ = __int__ = __bool__ = _number


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
        if not is_int(self.rhs):
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
        fail(f"mask {describe(mask)} is not a comparison of an index with an integer")
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
    if not isinstance(p.lhs, IndexRange) or not is_int(p.rhs) or not is_int(p.lhs.offset):
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
