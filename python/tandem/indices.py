"""Loop indices and masks: the values a traced kernel indexes tiles with.

A loop index is a `Sym`, an affine expression of the enclosing loops' induction variables
(`k * 128 + 64`); `nl.arange` and `nl.mgrid` give an `IndexRange`, an index range shifted by
such an expression. Where Python needs an index's value (`//`, an `if`, a list index), the
loops behind it run concretely (`tandem.reroll.NeedsConcrete`). Comparing an index gives a
`Predicate`, which a call takes as its mask (`check_mask`): the parts of its tiles it keeps.

Tiles (`tandem.tiles.Tile`) are built on these; an index refuses to combine with one, and
`describe` names one in errors, through its base `TileValue`.
"""

import dis
from typing import NamedTuple, Optional

from . import ir
from .active import current, fail
from .errors import printable, user_frame, user_location
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
        if isinstance(o, IndexRange):
            return o.__rsub__(self)
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


class GridTerm(NamedTuple):
    """One index range of a grid (`nl.arange(n)[None, :]`, an output of `nl.mgrid`) in an
    index: `coeff` times the grid axis `axis` (None: a 1-D `nl.arange` not yet placed on an
    axis), which runs over [0, extent)."""

    axis: Optional[int]
    extent: int
    coeff: int


class IndexRange(Ordered):
    """An index over a grid: an affine offset plus integer multiples of grid axes
    (`nl.arange(n)[:, None]`, `nl.mgrid`, `2 * i_h + i_kh`). With one axis and coefficient 1 it is
    the contiguous range [offset, offset + extent); otherwise it indexes a strided or windowed
    view (tandem.tiles), one view axis per grid axis."""

    def __init__(self, offset: Expr, extent: int = 1, axis: Optional[int] = None, terms=None, ndim=None,
                 grid=None):
        self.offset = offset
        self.terms = tuple(terms) if terms is not None else (GridTerm(axis, extent, 1),)
        self.ndim = ndim  # the grid's axes, for a range placed by [:, None] (a 1-D tensor indexed so is 2-D)
        self.grid = grid  # an nl.mgrid range's whole grid: its value is a dense array of that shape

    def __repr__(self):
        parts = [print_expr(self.offset)] + [f"{t.coeff} * nl.arange({t.extent})" for t in self.terms]
        return " + ".join(parts)

    @property
    def simple(self) -> bool:
        """One grid axis with coefficient 1: a contiguous range."""
        return len(self.terms) == 1 and self.terms[0].coeff == 1

    @property
    def extent(self) -> int:
        return self._only().extent

    @property
    def axis(self) -> Optional[int]:
        return self._only().axis

    def _only(self) -> GridTerm:
        if not self.simple:
            fail(f"{self!r} is a strided or multi-axis index; only a plain nl.arange/nl.mgrid range can be used here",
                 call="index")
        return self.terms[0]

    def lowest(self) -> int:
        return ir.expr_min(self.offset) + sum(min(0, t.coeff * (t.extent - 1)) for t in self.terms)

    def highest(self) -> int:
        return ir.expr_max(self.offset) + sum(max(0, t.coeff * (t.extent - 1)) for t in self.terms)

    def _combine(self, o, sign):
        if isinstance(o, Sym):
            o = o.expr
        if isinstance(o, IndexRange):
            terms = list(self.terms)
            for t in o.terms:
                _merge_term(terms, GridTerm(t.axis, t.extent, t.coeff * sign))
            return IndexRange(ir.add(self.offset, ir.scale(o.offset, sign)), terms=terms, grid=self.grid or o.grid)
        if not is_int(o) and not isinstance(o, Affine):
            return NotImplemented
        return IndexRange(ir.add(self.offset, ir.scale(o, sign)), terms=self.terms, grid=self.grid)

    def __add__(self, o):
        return self._combine(o, 1)

    __radd__ = __add__

    def __sub__(self, o):
        return self._combine(o, -1)

    def __rsub__(self, o):
        return (-self)._combine(o, 1)

    def __mul__(self, o):
        if not is_int(o):
            if isinstance(o, (Sym, IndexRange)):
                fail(f"{self!r} * {o!r} multiplies an index range by an index: the index is not affine", call="index")
            return NotImplemented
        return IndexRange(ir.scale(self.offset, o), terms=[GridTerm(t.axis, t.extent, t.coeff * o) for t in self.terms],
                          grid=self.grid)

    __rmul__ = __mul__

    def __neg__(self):
        return self * -1

    def __pos__(self):
        return self

    def __getitem__(self, key):
        """`[:, None]`, `[None, :, None]`, ...: the range on the grid axis of the one full slice."""
        if not isinstance(key, tuple):
            key = (key,)
        full = [i for i, k in enumerate(key) if isinstance(k, slice) and k == slice(None)]
        if len(full) != 1 or any(k is not None for i, k in enumerate(key) if i != full[0]) or len(self.terms) != 1 \
                or self.terms[0].axis is not None:
            fail(f"index range [{printable(repr(key))}]: place a 1-D nl.arange on a grid axis with one ':' and Nones "
                 "([:, None], [None, :, None], ...)", call="index")
        t = self.terms[0]
        return IndexRange(self.offset, terms=[GridTerm(full[0], t.extent, t.coeff)], ndim=len(key))

    def _number(self, *_):
        fail("an index range (nl.arange/nl.mgrid) used as a Python number", call="index")

    __index__ = __int__ = __bool__ = _number


def _merge_term(terms, t: GridTerm):
    """Adds `t` to `terms`: ranges on one grid axis are one range (numpy broadcasting)."""
    for i, u in enumerate(terms):
        if u.axis == t.axis:
            if u.extent != t.extent:
                fail(f"index ranges of {u.extent} and {t.extent} elements on one grid axis do not broadcast",
                     call="index")
            terms[i] = GridTerm(u.axis, u.extent, u.coeff + t.coeff)
            if terms[i].coeff == 0:
                del terms[i]
            return
    terms.append(t)


def _boolean_operator() -> Optional[str]:
    """`and` or `or` when the user's code asks for a bool to evaluate one (the jump that keeps
    an operand, as CPython 3.11 compiles them), else None (an `if`, `bool()`, `not`)."""
    frame = user_frame()
    if frame is None or frame.f_lasti < 0:
        return None
    op = dis.opname[frame.f_code.co_code[frame.f_lasti]]
    return {"JUMP_IF_FALSE_OR_POP": "and", "JUMP_IF_TRUE_OR_POP": "or"}.get(op)


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
            joined = _boolean_operator()
            if joined is not None:
                # NKI's masks are objects, true as Python bools: `a and b` is `b`, `a or b` is `a`.
                kept = "the second" if joined == "and" else "the first"
                current().notes.append(f"{user_location()}: `{joined}` of two masks keeps {kept} only, as NKI "
                                       "traces it (`&` is the conjunction of masks)")
                return True
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
            lo, hi = self.lhs.lowest(), self.lhs.highest()
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
    """The mask of the call being traced, as cuts of its tiles (`Context.mask`)."""
    if mask is None or mask is True:
        return
    current().mask = mask_cuts(mask)


def is_mask(x) -> bool:
    return isinstance(x, (Predicate, PredicateAnd))


def mask_cuts(mask) -> list:
    """What a mask keeps, as cuts of the tiles it applies to. A mask that depends on a symbolic
    loop index makes that loop concrete; then, in each iteration, it keeps a range of the index
    range it compares (a partial last tile: `i * 128 + ix < 250`)."""
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
    return cuts


def _row_major_prefix(p: "Predicate") -> "Predicate":
    """`c + E*ix + iy < n` with iy over [0, E) keeps a prefix of the elements in row-major order:
    a row keeps an element when `c + E*ix < n`, so the mask keeps the rows `ix < ceil((n - c) / E)`
    (a partial last row is moved whole)."""
    r = p.lhs
    if (not isinstance(r, IndexRange) or len(r.terms) != 2 or p.op not in ("<", "<=") or not is_int(p.rhs)
            or not is_int(r.offset)):
        return p
    inner, outer = sorted(r.terms, key=lambda g: g.coeff)
    if inner.coeff != 1 or outer.coeff != inner.extent or inner.axis == outer.axis:
        return p
    bound = p.rhs + (p.op == "<=") - ir.expr_const(r.offset)
    return Predicate(IndexRange(0, terms=[GridTerm(outer.axis, outer.extent, 1)]), "<", -(-bound // outer.coeff))


def _cut(p: "Predicate") -> MaskCut:
    p = _row_major_prefix(p)
    if not isinstance(p.lhs, IndexRange) or not p.lhs.simple or not is_int(p.rhs) or not is_int(p.lhs.offset):
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
