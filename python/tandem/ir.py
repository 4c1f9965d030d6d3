"""The traced kernel: tensors, affine indices, accesses, loops and instructions.

This is the Python mirror of the parts of `.kir` (docs/ir.md) that the tracer produces. It
holds data only; `tandem.printer` is the one place that turns it into text.
"""

from dataclasses import dataclass, field
from typing import List, Optional, Tuple, Union


@dataclass(frozen=True)
class Location:
    """A place in the user's Python source."""

    filename: str
    line: int
    col: int = 0  # 1-based; 0 when unknown

    def __str__(self):
        if self.col:
            return f"{self.filename}:{self.line}:{self.col}"
        return f"{self.filename}:{self.line}"


class Loop:
    """A counted loop `loop %name = 0 to trip { body }`."""

    def __init__(self, name: str, trip: int, kind: str, loc: Optional[Location]):
        self.name = name
        self.trip = trip
        self.kind = kind  # "affine_range" or "sequential_range"
        self.loc = loc
        self.body: List[Union["Instruction", "Loop"]] = []

    def __repr__(self):
        return f"Loop(%{self.name}, 0 to {self.trip})"


# An affine expression is an int, or an `Affine` with at least one variable term.
class Affine:
    """sum(coef * loop variable) + const, over the enclosing loops' induction variables.

    Terms keep first-appearance order (the order the canonical printer uses). Arithmetic
    that would leave the affine form is refused by the tracer (tandem.indices), which
    wraps these objects for the user's kernel.
    """

    __slots__ = ("terms", "const")

    def __init__(self, terms: Tuple[Tuple[Loop, int], ...], const: int = 0):
        self.terms = terms
        self.const = const

    @staticmethod
    def of(loop: Loop, coef: int = 1, const: int = 0) -> "Expr":
        return normalize(((loop, coef),), const)

    def __repr__(self):
        parts = [f"{c}*%{l.name}" for l, c in self.terms]
        return "Affine(" + " + ".join(parts + [str(self.const)]) + ")"


Expr = Union[int, Affine]


def normalize(terms, const: int) -> Expr:
    merged: List[List] = []
    for loop, coef in terms:
        for entry in merged:
            if entry[0] is loop:
                entry[1] += coef
                break
        else:
            merged.append([loop, coef])
    kept = tuple((l, c) for l, c in merged if c != 0)
    if not kept:
        return int(const)
    return Affine(kept, int(const))


def expr_terms(e: Expr):
    return e.terms if isinstance(e, Affine) else ()


def expr_const(e: Expr) -> int:
    return e.const if isinstance(e, Affine) else int(e)


def add(a: Expr, b: Expr) -> Expr:
    return normalize(expr_terms(a) + expr_terms(b), expr_const(a) + expr_const(b))


def scale(a: Expr, k: int) -> Expr:
    return normalize(tuple((l, c * k) for l, c in expr_terms(a)), expr_const(a) * k)


def sub(a: Expr, b: Expr) -> Expr:
    return add(a, scale(b, -1))


def expr_min(e: Expr) -> int:
    """Smallest value over all iterations of the loops the expression uses."""
    return expr_const(e) + sum(min(0, c * (l.trip - 1)) for l, c in expr_terms(e))


def expr_max(e: Expr) -> int:
    return expr_const(e) + sum(max(0, c * (l.trip - 1)) for l, c in expr_terms(e))


def expr_loops(e: Expr):
    return [l for l, _ in expr_terms(e)]


@dataclass(frozen=True)
class Stride:
    """One term of a strided index pattern: `count` indices `stride` apart (negative: visited
    downwards), for axis `axis` of the view that made it."""

    stride: int
    count: int
    axis: int


def pattern_reach(pattern) -> int:
    """How many consecutive indices a pattern spans, from its lowest to its highest."""
    return 1 + sum(abs(t.stride) * (t.count - 1) for t in pattern)


def pattern_dense(pattern, extent: int) -> bool:
    """Whether the pattern visits each of `extent` consecutive indices exactly once."""
    spanned = 1
    for t in sorted(pattern, key=lambda t: abs(t.stride)):
        if t.count == 1:
            continue
        if abs(t.stride) != spanned:
            return False
        spanned *= t.count
    return spanned == extent


@dataclass
class Index:
    """One dimension of an access: the half-open range [lo, hi), or one index `lo` (point).
    `pattern`, when not empty, is the strided subset of [lo, hi) the access visits, outer term
    first (docs/ir.md, Accesses)."""

    lo: Expr
    hi: Expr
    point: bool = False
    pattern: Tuple[Stride, ...] = ()

    def dense(self) -> bool:
        """Every index of [lo, hi) once: no pattern, or one that visits them all."""
        return not self.pattern or pattern_dense(self.pattern, sub(self.hi, self.lo))


@dataclass
class Tensor:
    name: str
    space: str  # dram, sbuf, psum
    shape: Tuple[int, ...]  # in .kir order: the partition dimension first on chip
    dtype: str  # .kir element type (bf16, f32, ...)
    loc: Optional[Location] = None
    attrs: List[Tuple[str, object]] = field(default_factory=list)


@dataclass
class Access:
    tensor: Tensor
    index: List[Index]  # one per .kir dimension of the tensor

    def whole(self) -> bool:
        return all(not i.point and i.dense() and i.lo == 0 and i.hi == n for i, n in zip(self.index, self.tensor.shape))


class Flag:
    """A bare attribute (`{accumulate}`)."""

    def __repr__(self):
        return "Flag"


FLAG = Flag()


@dataclass
class Instruction:
    name: str
    opcode: str
    writes: List[Access]
    reads: List[Access]
    attrs: List[Tuple[str, object]] = field(default_factory=list)  # values: int, float, str, FLAG
    engine: Optional[str] = None
    loc: Optional[Location] = None
    call: str = ""  # the NKI call that produced it ("nl.load")
    fill: bool = False  # the initialisation of nl.zeros / nl.full, not an explicit memset
    placeholder: bool = False  # stands for an uninitialised PSUM tile until tandem.psum_start

    def set_attr(self, key, value):
        for i, (k, _) in enumerate(self.attrs):
            if k == key:
                self.attrs[i] = (key, value)
                return
        self.attrs.append((key, value))

    def has_attr(self, key) -> bool:
        return any(k == key for k, _ in self.attrs)


@dataclass
class Kernel:
    name: str
    target: str
    tensors: List[Tensor] = field(default_factory=list)
    body: List[Union[Instruction, Loop]] = field(default_factory=list)
    attrs: List[Tuple[str, object]] = field(default_factory=list)
    source: Optional[Location] = None  # the kernel function's def line

    def set_attr(self, key, value):
        self.attrs = [(k, v) for k, v in self.attrs if k != key] + [(key, value)]

    def instructions(self):
        """Every instruction in program order (loop bodies flattened)."""

        def walk(block):
            for item in block:
                if isinstance(item, Loop):
                    yield from walk(item.body)
                else:
                    yield item

        return list(walk(self.body))

    def loops(self):
        def walk(block):
            for item in block:
                if isinstance(item, Loop):
                    yield item
                    yield from walk(item.body)

        return list(walk(self.body))
