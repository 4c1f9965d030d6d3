"""Tiles: the values NKI calls take and return, as views of the tensors a kernel declares.

A `Buf` is a declared tensor and what the tracer knows about it (which instruction made it,
whether it was read, the loops around its allocation); a `Tile` is a view of one (a range or
a single index per dimension, affine in the loop indices), with NKI's `shape`, `dtype` and
`buffer`. Indexing a tile gives a sub-view; its operators (`+`, `t[...] = x`, `acc += x`) are
recorded by the kernel being traced (`tandem.context.Context`).
"""

import copy
import math
from typing import List, Optional, Tuple

from . import ir
from .active import current, fail
from .dtypes import DTYPES_BY_KIR, PSUM, SBUF, SHARED_HBM, Buffer, DType, to_dtype
from .errors import UnsupportedError, printable, user_location
from .indices import GridTerm, IndexRange, TileValue, is_int, is_mask, mask_cuts, unwrap, wrap
from .ir import Access, Index, Instruction, Loop, Stride, Tensor
from .printer import access as print_access
from .printer import expr as print_expr


class Buf:
    """A declared tensor and what the tracer knows about it."""

    def __init__(self, tensor: Tensor, perm: List[int], loops: Tuple[Loop, ...], temp: bool, loc, call=""):
        self.tensor = tensor
        self.perm = perm  # logical dimension -> .kir dimension
        self.loops = loops  # loops enclosing the allocation
        self.temp = temp  # the value of an NKI call, declared by the tracer
        self.producer: Optional[Instruction] = None
        self.read = False
        self.used = False  # an instruction has read or written it (its shape is fixed from then on)
        self.reshaped = None  # (former shape, shape) once Tile._reshape_tensor gave it a new shape
        self.forwarded = None  # (where the value went, Location)
        self.read_loops = set()  # loops enclosing an instruction that read it
        self.loc = loc
        self.call = call
        self.families = []  # (tandem.reroll.Family, member): the rolled loops' lists it belongs to
        self.blocks = []  # (dimension, member): block indices its accesses take (tandem.reroll.promote)
        self.block_map = None  # how an allocation directive places its block dimensions (tandem.placement)


class Tile(TileValue):
    """A view of a tensor: the value NKI calls take and return.

    `shape` and `dtype` as in NKI; indexing with slices (affine in loop indices), integers,
    loop indices and nl.arange/nl.mgrid ranges gives a sub-view.
    """

    def __init__(self, buf: Buf, index: List[Index], dims: List[Optional[int]], bcast=None, oob=None, axes=None,
                 gather=None, transposed=False, dynamic=()):
        self.dynamic = dynamic  # index tiles an on-chip view's dynamic indices read (DynamicIndex)
        self.gather = gather  # an indirect view's index tile: the rows it names are the view's (_index_view)
        self.oob = oob  # why the view reaches out of its tensor, until a mask keeps it in (Context.masked)
        self.buf = buf
        self.index = index  # one per .kir dimension
        self.dims = dims  # logical dimensions: a .kir dimension, or None for an added unit dimension
        self.bcast = bcast  # broadcast_to shape (read-only view)
        self.axes = axes  # a strided view's shape, one extent per view axis (_strided_view)
        self.transposed = transposed  # an HBM view whose first axis walks a later dimension (_strided_view)
        self.view_dtype = None  # an on-chip tile's bytes seen as another type (view)
        self.mask = ()  # cuts a mask (`tile[mask]`) gives the call this view is an operand of

    # -- what NKI code reads
    @property
    def shape(self) -> Tuple[int, ...]:
        if self.bcast is not None:
            return tuple(self.bcast)
        if self.axes is not None:
            return tuple(self.axes)
        return tuple(1 if d is None else _extent(self.index[d]) for d in self.dims)

    @property
    def dtype(self) -> DType:
        if self.view_dtype is not None:
            return self.view_dtype
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
        if len(self.index) + len(self.buf.blocks) != len(self.buf.tensor.shape):
            fail(f"%{self.name} was reshaped to {list(self.buf.tensor.shape)}; this view of its former shape is "
                 "stale (use the reshaped one)", call="reshape")
        index = [Index(i.lo, i.hi, i.point, i.pattern) for i in self.index]
        for dim, member in self.buf.blocks:
            index.insert(dim, Index(member, member + 1, True))
        return Access(self.buf.tensor, index)

    def access_text(self) -> str:
        return print_access(self.access())

    def tile_shape(self) -> Tuple[int, ...]:
        """The shape as the engines see it: on chip, the partitions the view spans (1 when the
        partition dimension is a single index) and then its free dimensions; in HBM or for a
        broadcast view, `shape`."""
        if self.bcast is not None or self.space == "dram" or self.axes is not None:
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
        if is_mask(key):
            return _masked_view(self, mask_cuts(key))
        if self.bcast is not None or self.axes is not None:
            if key is Ellipsis or key == (Ellipsis,) or _selects_all(key, self.shape):
                return self
            what = "a broadcast_to view" if self.bcast is not None else "a strided view (index ranges or .ap)"
            fail(f"indexing {what}; index the tile it was made from", call="tile[...]")
        return _index_view(self, key)

    def ap(self, pattern, offset=0, dtype=None, **_ignored):
        """NKI's access pattern view: `pattern` is [step, count] pairs over the tensor's
        elements in row-major order, outer first (the first pair the partitions on chip),
        from element `offset`."""
        return _ap_view(self, pattern, offset, dtype)

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
        if op == "add" and isinstance(other, IndexRange):
            return DynamicIndex(self, other)
        ctx = current(op)
        with ctx.calling(f"tile {_OPS_SYMBOL[op]}"):
            if reverse:
                return ctx.binary(op, other, self)
            return ctx.binary(op, self, other)

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
        if self.axes is not None:
            fail("broadcast_to of a strided view (index ranges or .ap)", call="broadcast_to")
        mine = self.shape
        if self.space != "dram" and len(mine) == 1 and len(shape) > 1:
            mine = (mine[0],) + (1,) * (len(shape) - 1)  # a (P,) reduction is a (P, 1) column
        if len(mine) != len(shape) or any(a != b and a != 1 for a, b in zip(mine, shape)):
            fail(f"cannot broadcast shape {mine} to {shape}", call="broadcast_to")
        return Tile(self.buf, self.index, self.dims, bcast=shape, oob=self.oob)

    def reshape(self, shape):
        """Only adds or drops dimensions of size 1 (the access stays the same)."""
        shape = tuple(int(s) for s in shape)
        if self.bcast is not None or self.axes is not None:
            fail("reshape of a broadcast or strided view", call="reshape")
        real = [d for d in self.dims if d is not None and _extent(self.index[d]) != 1]
        sizes = [s for s in shape if s != 1]
        if [_extent(self.index[d]) for d in real] != sizes:
            return self._reshape_tensor(shape)
        index = [Index(i.lo, i.hi, i.point) for i in self.index]
        dims: List[Optional[int]] = []
        it = iter(real)
        for s in shape:
            dims.append(None if s == 1 else next(it))
        for d in self.dims:  # dimensions of size 1 that are dropped become single indices
            if d is not None and d not in dims and _extent(self.index[d]) == 1:
                index[d] = Index(index[d].lo, index[d].hi, True)
        return Tile(self.buf, index, dims, oob=self.oob)

    def _reshape_tensor(self, shape):
        """A reshape that moves elements between dimensions: of a whole on-chip tile keeping its
        partitions, a view of the same bytes with the new free dimensions; of a whole HBM tensor no
        instruction has used yet, the tensor takes the new shape (HBM is row-major, the bytes stay
        where they are). Other reshapes that move elements are refused."""
        b = self.buf
        if self._whole_tile_on_chip() and shape and shape[0] == self.shape[0] and \
                math.prod(shape) == math.prod(self.shape):
            return Tile(b, list(self.index), list(self.dims), oob=self.oob, axes=shape)  # the same bytes, relabelled
        if b.reshaped is not None and tuple(self.shape) == b.reshaped[0] and tuple(shape) == b.reshaped[1]:
            return Tile(b, [Index(0, s, False) for s in shape], list(range(len(shape))), oob=self.oob)  # again
        if self.space != "dram" or not self.whole() or b.blocks or b.families or \
                math.prod(shape) != math.prod(b.tensor.shape):
            why = "an on-chip tile" if self.space != "dram" else "part of an HBM tensor"
            fail(f"reshape {self.shape} -> {shape} moves elements between dimensions; that is traced only for a "
                 f"whole HBM tensor, not {why}", call="reshape")
        if b.used:
            return ReshapedAfterUse(b, [Index(0, s, False) for s in shape], list(range(len(shape))))
        b.reshaped = (tuple(b.tensor.shape), tuple(shape))
        b.tensor.shape = tuple(shape)
        b.perm = list(range(len(shape)))
        return Tile(b, [Index(0, s, False) for s in shape], list(range(len(shape))), oob=self.oob)

    def view(self, dtype):
        """The tile's bytes as another element type of the same size: the tile itself when the
        type is its own; a whole HBM tensor no instruction has used yet takes the new type."""
        new = to_dtype(dtype)
        b = self.buf
        if new.kir == b.tensor.dtype:
            return self
        if self.space != "dram" and self._whole_tile_on_chip() and (self.free() * self.dtype.itemsize) % new.itemsize == 0:
            # Each partition's bytes as the new type: a view of the whole tile (the same bytes, so
            # the same accesses) with the new type's shape.
            view = Tile(b, self.index, self.dims, oob=self.oob,
                        axes=(self.partitions(), self.free() * self.dtype.itemsize // new.itemsize))
            view.view_dtype = new
            return view
        if self.space != "dram" or not self.whole() or b.used or new.itemsize != self.dtype.itemsize:
            fail(f"view of %{self.name} ({self.dtype!r}) as {new!r}: traced only as a same-size type of a whole "
                 "HBM tensor before its first use, or as any type of a whole on-chip tile", call="tile.view")
        b.tensor.dtype = new.kir
        return self

    def _whole_tile_on_chip(self) -> bool:
        """An on-chip view of every element of its tile (of its list member, for a list of
        tiles): its free dimensions may be relabelled, since each partition holds them in order."""
        if self.space == "dram" or self.bcast is not None or self.axes is not None or self.dynamic:
            return False
        shape = list(self.buf.tensor.shape)
        for dim, _ in reversed(self.buf.blocks):  # a list's member: its block index is not the view's
            del shape[dim]
        return all(d is None or (not self.index[d].point and not self.index[d].pattern
                                 and self.index[d].lo == 0 and self.index[d].hi == shape[d]) for d in self.dims) \
            and sorted(d for d in self.dims if d is not None) == list(range(len(self.index)))

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


class ReshapedAfterUse(Tile):
    """A whole HBM tensor reshaped after instructions used it in its own shape: a value the
    kernel may return (`return out.reshape(...)`), not one it may access."""

    def access(self) -> Access:
        fail(f"%{self.name} was reshaped to {list(self.shape)} after instructions used it as "
             f"{list(self.buf.tensor.shape)}; access it in that shape (only returning the reshaped view is traced)",
             call="reshape")


_OPS_SYMBOL = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/"}


def _extent(i: Index) -> int:
    if i.point:
        return 1
    if i.pattern:
        n = 1
        for t in i.pattern:
            n *= t.count
        return n
    e = ir.sub(i.hi, i.lo)
    if not is_int(e):
        fail("a slice whose length depends on a loop index")
    return e


def _bound(x, size, what):
    """A slice bound or index as an Expr; negative integers count from the end."""
    e = unwrap(x, what)
    if is_int(e) and e < 0:
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
    if t.buf.block_map is not None and t.dims == t.buf.perm and t.whole():
        key = t.buf.block_map.map_key(key)
    ranges = [k for k in key if isinstance(k, IndexRange)]
    ordered = [(k.axis, k.extent) for k in ranges if k.simple and k.axis is not None and k.extent > 1]
    if any(not k.simple for k in ranges) or any(a >= b for (a, _), (b, _) in zip(ordered, ordered[1:])):
        return _grid_view(t, key)
    oob = t.oob
    gather = None
    dynamic = list(t.dynamic)
    index = [Index(i.lo, i.hi, i.point) for i in t.index]
    dims: List[Optional[int]] = []
    for k, d in zip(key, t.dims):
        size = 1 if d is None else _extent(t.index[d])
        base = 0 if d is None else t.index[d].lo
        if isinstance(k, IndexRange):
            k = slice(wrap(k.offset), wrap(ir.add(k.offset, k.extent)))
        if isinstance(k, slice):
            step = 1 if k.step is None else unwrap(k.step, "slice step")
            if not is_int(step) or step < 1:
                fail(f"slice step {printable(repr(k.step))}: a step must be a positive integer", call="tile[...]")
            if step > 1 and (d is None or t.index[d].pattern):
                fail(f"slice step {step} of a dimension that is already strided or added", call="tile[...]")
            start = 0 if k.start is None else _bound(k.start, size, "slice start")
            stop = size if k.stop is None else _bound(k.stop, size, "slice stop")
            length = ir.sub(stop, start)
            if not is_int(length):
                fail(f"slice [{print_expr(start)}:{print_expr(stop)}] has a length that depends on a loop index",
                     call="tile[...]")
            if length <= 0:
                fail(f"empty slice [{print_expr(start)}:{print_expr(stop)}]", call="tile[...]")
            oob = oob or _check_range(start, stop, size, t, d)
            if d is None:
                dims.append(None)
                continue
            count = -(-length // step)
            stop = ir.add(start, (count - 1) * step + 1)
            pattern = (Stride(step, count, len(dims)),) if step > 1 else ()
            index[d] = Index(ir.add(base, start), ir.add(base, stop), False, pattern)
            dims.append(d)
        elif k is None:
            fail("np.newaxis (None) in an index is not supported", call="tile[...]")
        elif isinstance(k, DynamicIndex) or (isinstance(k, Tile) and t.space != "dram"):
            index[d], reads = _dynamic_index(t, d, k, size, base, len(dims))
            dynamic.append(reads)
            if isinstance(k, DynamicIndex):
                dims.append(d)
        elif isinstance(k, Tile):
            if gather is not None or t.space != "dram" or d is None:
                fail("indirect indexing takes one index tile, for a dimension of an HBM tensor (nl.load, nl.store "
                     "and nisa.dma_copy gather and scatter through HBM)", call="tile[...]")
            # Any row the index names may be read or written: the access covers the whole dimension.
            index[d] = Index(base, ir.add(base, size), False)
            gather = (len(dims), k)
            dims.append(d)
        elif isinstance(k, (list, tuple)):
            fail("indexing with a list is not supported (index with a tile of indices, or a loop)", call="tile[...]")
        else:
            v = _bound(k, size, "index")
            oob = oob or _check_range(v, ir.add(v, 1), size, t, d)
            if d is None:
                continue
            lo = ir.add(base, v)
            index[d] = Index(lo, ir.add(lo, 1), True)
    if gather is None:
        return Tile(t.buf, index, dims + _grid_unit_dims(key, dims) + _free_unit_dim(t, dims), oob=oob,
                    dynamic=tuple(dynamic))
    position, rows = gather
    shape = list(Tile(t.buf, index, dims).shape)
    shape[position] = rows.partitions()
    return Tile(t.buf, index, dims, oob=oob, axes=tuple(shape), gather=rows)


class DynamicIndex:
    """An index held in a tile, plus an index range (`offsets[0, i] + iy`): the offset is a
    register value at run time (nisa.tensor_copy_dynamic_src), so the view may visit any
    `extent` indices of the dimension; the instruction that uses the view reads the tile."""

    def __init__(self, tile: Tile, offset: IndexRange):
        if not isinstance(tile, Tile) or tile.partitions() * tile.free() != 1:
            fail(f"a dynamic index is one element of a tile, found {list(tile.shape)}", call="tile[...]")
        if not offset.simple or ir.expr_const(offset.offset) != 0 or offset.terms[0].coeff != 1:
            fail(f"{offset!r}: a dynamic index adds one plain nl.arange range", call="tile[...]")
        self.tile, self.range = tile, offset

    def __repr__(self):
        return f"%{self.tile.name} + {self.range!r}"


def _dynamic_index(t: Tile, d, k, size, base, axis):
    """The index of on-chip dimension `d` that the index tile `k` (or DynamicIndex) names: any
    `extent` indices of the dimension, so dependences take all of it and costs `extent`."""
    if t.space == "dram" or d is None or d == 0:
        fail("a dynamic index (a tile) indexes a free dimension of an on-chip tile; an HBM tensor takes one "
             "index tile (a gather or a scatter)", call="tile[...]")
    extent, tile = (k.range.extent, k.tile) if isinstance(k, DynamicIndex) else (1, k)
    return Index(base, ir.add(base, size), False, (Stride(1, extent, axis),)), tile


def _free_unit_dim(t: Tile, dims) -> List[Optional[int]]:
    """An on-chip tile keeps a free dimension: `t[:, i]` of a [128, n] tile is [128, 1]."""
    if t.space == "dram" or len(t.dims) < 2 or dims != [0]:
        return []
    return [None]


def _selects_all(key, shape) -> bool:
    """`[0:n, :]`, `[ix, iy]` of `nl.mgrid[0:n, 0:m]` and the like: one full range per dimension."""
    key = key if isinstance(key, tuple) else (key,)

    def full(k, n):
        if isinstance(k, IndexRange):
            return k.simple and k.offset == 0 and k.extent == n
        return isinstance(k, slice) and k.step in (None, 1) and k.start in (None, 0) and k.stop in (None, n)

    return len(key) == len(shape) and all(full(k, n) for k, n in zip(key, shape))


def _grid_unit_dims(key, dims) -> List[Optional[int]]:
    """A 1-D tensor indexed by a range placed on the first of more grid axes (`x[nl.arange(n)[:, None]]`)
    is a tile of the grid's rank: [n, 1]."""
    if len(key) != 1 or not isinstance(key[0], IndexRange) or not key[0].simple or key[0].axis != 0:
        return []
    return [None] * max(0, (key[0].ndim or 0) - len(dims))


def _grid_view(t: Tile, key) -> Tile:
    """A view indexed by grid index ranges that a plain access cannot express: strided
    (`2 * i`), windowed (`i_h + i_kh`), more grid axes than dimensions, or axes out of order.
    Its axes are the grid's, in axis order; each dimension visits the pattern of its terms."""
    entries = []
    for k, d in zip(key, t.dims):
        if isinstance(k, IndexRange):
            if any(term.axis is None for term in k.terms) and len(key) > 1:
                fail(f"{k!r}: place each nl.arange on its grid axis ([:, None], [None, :], ...) to index several "
                     "dimensions", call="tile[...]")
            entries.append((d, IndexRange(k.offset, terms=[GridTerm(0 if g.axis is None else g.axis, g.extent, g.coeff)
                                                         for g in k.terms])))
        elif isinstance(k, slice):
            fail("a slice beside strided or multi-axis index ranges: index every dimension with nl.arange/nl.mgrid "
                 "ranges or integers", call="tile[...]")
        else:
            entries.append((d, k))
    return _strided_view(t, entries)


def _strided_view(t: Tile, entries) -> Tile:
    """The view of `t` whose dimension `d` takes, for each (d, k) of `entries`, the grid index
    range k (an IndexRange) or one index k."""
    extents = {}
    for d, k in entries:
        if isinstance(k, IndexRange):
            for g in k.terms:
                if extents.setdefault(g.axis, g.extent) != g.extent:
                    fail(f"grid axis {g.axis} has {extents[g.axis]} elements in one index and {g.extent} in another",
                         call="tile[...]")
    order = sorted(extents)
    position = {a: i for i, a in enumerate(order)}
    oob = t.oob
    index = list(t.index)
    dims: List[Optional[int]] = [None] * len(order)
    for d, k in entries:
        if d is None:
            continue
        if t.index[d].pattern:
            fail("indexing a dimension that is already strided", call="tile[...]")
        size, base = _extent(t.index[d]), t.index[d].lo
        if not isinstance(k, IndexRange):
            v = _bound(k, size, "index")
            oob = oob or _check_range(v, ir.add(v, 1), size, t, d)
            lo = ir.add(base, v)
            index[d] = Index(lo, ir.add(lo, 1), True)
            continue
        lo = ir.add(k.offset, sum(min(0, g.coeff * (g.extent - 1)) for g in k.terms))
        pattern = tuple(Stride(g.coeff, g.extent, position[g.axis]) for g in sorted(k.terms, key=lambda g: g.axis))
        hi = ir.add(lo, ir.pattern_reach(pattern))
        oob = oob or _check_range(lo, hi, size, t, d)
        index[d] = Index(ir.add(base, lo), ir.add(base, hi), False, pattern)
        for g in k.terms:
            if dims[position[g.axis]] is None:
                dims[position[g.axis]] = d
    ranged = [d for d, k in entries if d is not None and isinstance(k, IndexRange)]
    transposed = bool(order) and dims[0] != min(ranged)
    if transposed and t.space != "dram":
        fail("the first grid axis indexes a later dimension (a transposing access pattern, which moves the "
             "partitions): transpose with nisa.nc_transpose or a transposing DMA instead", call="tile[...]")
    if t.space != "dram" and order:
        first = index[0]
        if first.point or len(first.pattern) != 1 or first.pattern[0].axis != 0 or first.pattern[0].stride != 1:
            fail("the partition dimension of an on-chip view takes the first grid axis alone, with stride 1",
                 call="tile[...]")
    return Tile(t.buf, index, dims, oob=oob, axes=tuple(extents[a] for a in order), transposed=transposed)


def _ap_view(t: Tile, pattern, offset, dtype) -> Tile:
    """`t.ap(pattern, offset)`: each [step, count] pair becomes a grid axis on the outermost
    dimension whose row size divides the step; the offset becomes each dimension's start."""
    if t.bcast is not None or t.axes is not None or not t.whole():
        fail("an access pattern (.ap) of a view: take it of the whole tensor", call="tile.ap")
    if dtype is not None and to_dtype(dtype).kir != t.buf.tensor.dtype:
        fail(f"an access pattern (.ap) that reinterprets {t.buf.tensor.dtype} as {dtype!r}", call="tile.ap")
    shape = t.shape
    rows = [1] * len(shape)  # elements per index of each dimension, row-major
    for d in range(len(shape) - 2, -1, -1):
        rows[d] = rows[d + 1] * shape[d + 1]
    pairs = [_ap_pair(p) for p in pattern]
    terms = [[] for _ in shape]
    for axis, (step, count) in enumerate(pairs):
        d = next((d for d in range(len(shape)) if step % rows[d] == 0), None)
        if d is None:
            fail(f"access pattern step {step} is not a whole number of rows of any dimension of "
                 f"%{t.name}{list(shape)}", call="tile.ap")
        if step // rows[d] * (count - 1) >= shape[d]:
            fail(f"access pattern pair [{step}, {count}] runs across dimension {d} of %{t.name}{list(shape)}: a pair "
                 "must stay within one dimension", call="tile.ap")
        terms[d].append(GridTerm(axis, count, step // rows[d]))
    start = unwrap(offset, "access pattern offset")
    entries = []
    for d in range(len(shape)):
        if not is_int(start) and d < len(shape) - 1:
            fail("an access pattern offset that depends on a loop index addresses one dimension only",
                 call="tile.ap")
        here = ir.expr_const(start) // rows[d] if is_int(start) else start
        start = start - here * rows[d] if is_int(start) else 0
        entries.append((t.dims[d], IndexRange(here, terms=terms[d]) if terms[d] else here))
    return _strided_view(t, entries)


def _ap_pair(p):
    if not isinstance(p, (list, tuple)) or len(p) != 2 or not all(is_int(unwrap(x, "access pattern")) for x in p):
        fail(f"access pattern entry {printable(repr(p))} must be a [step, count] pair of integers", call="tile.ap")
    step, count = (unwrap(x, "access pattern") for x in p)
    if step < 1 or count < 1:
        fail(f"access pattern entry {printable(repr(p))} needs step >= 1 and count >= 1", call="tile.ap")
    return step, count


def _check_range(start, stop, size, t, d):
    """Why [start, stop) reaches out of a dimension of `size`, or None."""
    lo, hi = ir.expr_min(start), ir.expr_max(stop)
    if lo < 0 or hi > size:
        return (f"index out of bounds on %{t.name}: [{print_expr(start)}:{print_expr(stop)}] reaches [{lo}, {hi}) in a "
                f"dimension of size {size}")
    return None


def check_same_size(dst: Tile, src: Tile, call: str):
    """Same partitions and elements per partition; a 1-D HBM view has no partitions, only its
    elements (a [1, n] tile stores into an [n] tensor)."""
    if any(t.space == "dram" and len(t.shape) == 1 for t in (dst, src)):
        if dst.partitions() * dst.free() == src.partitions() * src.free():
            return
    if dst.partitions() != src.partitions() or dst.free() != src.free():
        fail(f"shape mismatch: destination %{dst.name}{list(dst.shape)} and value %{src.name}{list(src.shape)} "
             "differ in partitions or elements per partition", call=call)


def _masked_view(t: Tile, cuts) -> Tile:
    """`tile[mask]`: the same view, carrying the mask to the call it is an operand of, which
    cuts its tiles as by its own `mask=` (Context.masked)."""
    view = copy.copy(t)
    view.mask = tuple(t.mask) + tuple(cuts)
    return view


def cut_index(ix: Index, cut) -> Index:
    """The part of one dimension's index a mask keeps: positions [cut.lo, cut.hi) of its range,
    or of its pattern's term for the view axis the mask compares."""
    if not ix.pattern:
        return Index(ir.add(ix.lo, cut.lo), ir.add(ix.lo, cut.hi), ix.point and cut.hi - cut.lo == 1)
    term = next((t for t in ix.pattern if t.axis == cut.axis), None)
    if term is None:
        return ix
    if term.stride < 0:
        fail("a mask on a view axis indexed downwards (a negative coefficient)")
    pattern = tuple(Stride(t.stride, cut.hi - cut.lo, t.axis) if t is term else t for t in ix.pattern)
    lo = ir.add(ix.lo, cut.lo * term.stride)
    return Index(lo, ir.add(lo, ir.pattern_reach(pattern)), False, pattern)
