"""The context of a kernel being traced: it records the kernel's tensors, loops and
instructions.

NKI calls (`tandem.ops`) declare tensors (`declare`, `temp`) and emit instructions (`emit`),
which the context checks (the tiles are live, each opcode writes and reads the memories it can)
and places in the innermost open loop. It also gives Python's statements on tiles their
meaning: `dst[...] = value` (`assign`), `dst op= value` (`update`) and `x op y` (`binary`). A
value assigned straight into a tile is forwarded: the instruction that made it writes the tile.
"""

import os
import re
from typing import List, Optional, Sequence

from . import ir, ops
from .active import fail
from .dtypes import PARTITIONS, SPACE_NAMES, DType
from .errors import TraceError, loop_name, user_location, value_name
from .indices import MaskCut, describe
from .ir import Access, Index, Instruction, Kernel, Loop, Stride, Tensor
from .placement import PlacementMemo
from .reroll import NeedsConcrete, loop_key, promote
from .tiles import Buf, Tile, check_same_size, cut_index


class _Calling:
    def __init__(self, ctx, call):
        self.ctx, self.call = ctx, call

    def __enter__(self):
        self.saved = self.ctx.call, self.ctx.mask
        self.ctx.call, self.ctx.mask = self.call, []

    def __exit__(self, *exc):
        self.ctx.call, self.ctx.mask = self.saved
        return False


_PREFIX = {"load": "ld", "indirect_load": "g", "save": "st", "matmul": "mm", "memset": "ms", "activation": "act",
           "activation_reduce": "actr", "tensor_tensor": "tt", "tensor_scalar": "ts", "tensor_reduce": "red",
           "tensor_copy": "cp", "transpose": "tp", "iota": "iota", "dma_copy": "dma"}

# Which spaces each opcode may write and read (trn1/trn2 models: PE writes PSUM only, DMA
# moves between HBM and SBUF, engines read and write SBUF and PSUM).
_ON_CHIP = ("sbuf", "psum")
_SPACES = {
    "load": (("sbuf",), ("dram",)),
    "indirect_load": (("sbuf",), ("dram", "sbuf")),
    "save": (("dram",), _ON_CHIP),
    "dma_copy": (("dram", "sbuf"), ("dram", "sbuf")),
    "matmul": (("psum",), ("sbuf",)),
    "transpose": (_ON_CHIP, _ON_CHIP),
}


# The suffix unique() gives a name after its base: _2, _3, ...
_SUFFIX = re.compile(r"[2-9]|[1-9][0-9]+")


class Names:
    """The names a kernel's tensors, loops and instructions take: a set whose `unique(base)` is
    `base` when free, else the free `base_N` of the smallest N from 2. Each base remembers
    where its search starts (every `base_M` below it is taken), and freeing a name moves its
    base's start back to it, so a run of names of one base costs time linear in their count."""

    def __init__(self):
        self._taken = set()
        self._next = {}  # base -> the N its next search starts from
        self.probes = 0  # names tried by unique(), for its test

    def __contains__(self, name: str) -> bool:
        return name in self._taken

    def __len__(self) -> int:
        return len(self._taken)

    def add(self, name: str):
        self._taken.add(name)

    def discard(self, name: str):
        if name not in self._taken:
            return
        self._taken.discard(name)
        base, sep, digits = name.rpartition("_")
        if sep and _SUFFIX.fullmatch(digits):
            n = int(digits)
            if self._next.get(base, 2) > n:
                self._next[base] = n

    def unique(self, base: str) -> str:
        name = base
        self.probes += 1
        if name in self._taken:
            n = self._next.get(base, 2)
            name = f"{base}_{n}"
            self.probes += 1
            while name in self._taken:
                n += 1
                name = f"{base}_{n}"
                self.probes += 1
            self._next[base] = n + 1
        self._taken.add(name)
        return name


class Context:
    """The record of one kernel being traced (`tandem.active.current()` while it runs)."""

    def __init__(self, name: str, target: str, source_attrs: bool):
        self.kernel = Kernel(name=name, target=target)
        self.blocks: List[list] = [self.kernel.body]
        self.loops: List[Loop] = []
        self.names = Names()
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
        self.placements = PlacementMemo()  # placements a concrete loop's later iterations repeat
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
        return self.names.unique(base)

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
    def emit(self, opcode: str, writes: Sequence[Tile], reads: Sequence[Tile], attrs=(), engine=None,
             prefix=None) -> Instruction:
        self.check_pending()
        reads = list(reads) + [x for t in list(reads) + list(writes) for x in t.dynamic]
        for t in writes:
            self.check_live(t, True)
        for t in reads:
            self.check_live(t, False)
        loc = user_location()
        if any(c.lo == c.hi for c in self.mask):
            return None  # the mask keeps no element
        inst = Instruction(self.inst_name(prefix or opcode), opcode, [self.masked(t) for t in writes],
                           [self.masked(t) for t in reads], list(attrs), engine, loc, self.call)
        if self.source_attrs and loc is not None:
            inst.attrs.append(("src", f"{os.path.basename(loc.filename)}:{loc.line}"))
        self.check_spaces(inst, self.call)
        self.blocks[-1].append(inst)
        self.emitted.append(inst)
        for t in reads:
            t.buf.read = True
            t.buf.read_loops.update(self.loops)
        for t in list(reads) + list(writes):
            t.buf.used = True
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
            a.index[d] = cut_index(a.index[d], cut)
        if t.oob is not None:
            for ix, n in zip(a.index, a.tensor.shape):
                if ir.expr_min(ix.lo) < 0 or ir.expr_max(ix.hi) > n:
                    fail(t.oob + ("; the call's mask does not keep it in bounds" if self.mask else
                                  " (a mask, mask=(index < bound), would keep a partial tile in bounds)"))
        return a

    def forwardable(self, value: Tile, dst: Tile) -> bool:
        """The value is a fresh result that only the last instruction wrote and nothing read:
        that instruction can write the destination instead (of the one output that is the
        value; an instruction with a second output, a reduction's, keeps it), unless the result
        is in PSUM and the destination is not (what writes PSUM, TensorE, may not write SBUF: NKI
        copies it there), or the instruction writes the destination already."""
        b = value.buf
        if value.space == "psum" and dst.space != "psum":
            return False
        return (b.temp and b.forwarded is None and not b.read and b.producer is not None
                and b.producer is self.last and self.last_block is self.blocks[-1] and value.whole()
                and sum(w.tensor is b.tensor for w in b.producer.writes) == 1
                and not any(w.tensor is dst.buf.tensor for w in b.producer.writes))

    def forward(self, value: Tile, dst: Tile, accumulate: bool) -> Instruction:
        b = value.buf
        inst = b.producer
        self.check_live(dst, True)
        check_same_size(dst, value, self.call)
        inst.writes = [dst.access() if w.tensor is b.tensor else w for w in inst.writes]
        if accumulate:
            inst.attrs.insert(0, ("accumulate", ir.FLAG))
        self.check_spaces(inst, inst.call)
        tensors = self.kernel.tensors
        for i in range(len(tensors) - 1, -1, -1):  # the temporary is usually the last declared
            if tensors[i] is b.tensor:
                del tensors[i]
                break
        self.names.discard(b.tensor.name)
        b.forwarded = (f"%{dst.name}", user_location())
        return inst

    def assign(self, dst: Tile, value):
        """`dst[...] = value`."""
        if isinstance(value, Tile):
            if value.buf is dst.buf and value.bcast is None and value.access_text() == dst.access_text():
                return  # `t[...] += x` stores the updated view back onto itself
            if self.forwardable(value, dst):
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
        fail(f"cannot assign {describe(value)} to a tile")

    def update(self, dst: Tile, value, op: str):
        """`dst op= value`: a matmul result accumulates into PSUM; others are a vector op."""
        if isinstance(value, Tile) and op == "add" and self.forwardable(value, dst) and value.buf.producer.opcode == "matmul":
            if dst.space != "psum":
                fail(f"a matmul accumulates into PSUM only; %{dst.name} is in {SPACE_NAMES[dst.space]}")
            self.forward(value, dst, accumulate=True)
            return
        ops.elementwise(op, dst, value, dst=dst)

    def binary(self, op: str, x, y) -> Tile:
        """`x op y` with a tile on either side (`+`, `-`, `*`, `/`): an element-wise operation."""
        return ops.elementwise(op, x, y)


def kind_call(loop: Loop) -> str:
    return f"nl.{loop.kind}"
