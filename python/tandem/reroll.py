"""Loops that Python code needs the value of: run concretely, then rolled back into one loop.

The tracer runs an `affine_range` / `sequential_range` body once, with a symbolic index. Some
kernels need the index's value in Python: a list of tiles indexed by it (`tiles[k]`, a list a
loop filled with `.append`), an `if` on it, `//` or `%`, `min`/`max`, a tile made in the loop
and used after it. When that happens the trace starts again with that loop *concrete*
(`NeedsConcrete`): its body runs once per iteration with an integer index, as Python would
run it, and its iterations are recorded one by one. They are then rolled back into one
`.kir` loop when they agree:

- the same instructions and nested loops in the same order, with the same attributes;
- every index bound affine in the iteration number (`lo_i = lo_0 + i * d`);
- every tensor either the same in every iteration, or made afresh by each iteration in the
  same role (the i-th tile made by iteration 0, 1, ...), of one shape and type.

Tiles made afresh become one tensor, as a symbolic trace makes them. Such a family of tiles
is the loop's list of tiles: a later use of one member (after the loop, as `tiles[k]` in
another loop) gives the tensor a block dimension of the loop's trip count, indexed by the
loop's variable inside the loop and by the member's number outside (`promote`): what a
kernel written with an explicit block dimension (`nl.ndarray((n, nl.par_dim(128), 512))`)
traces to. Iterations that do not agree (an `if` that changes the body, a value carried from
one iteration to the next through Python) stay unrolled, and the trace says so
(`TracedKernel.notes`).
"""

from typing import Dict, List, Optional

from . import ir
from .ir import Access, Affine, Index, Instruction, Loop, Tensor


class NeedsConcrete(BaseException):
    """Raised where Python needs a loop index's value; `trace` starts again with these loops
    concrete. A BaseException, so that a kernel's own `except Exception` does not swallow it."""

    def __init__(self, keys):
        super().__init__("a loop must run concretely")
        self.keys = frozenset(keys)


def loop_key(loc) -> tuple:
    """Identifies a loop across traces: where its range was made."""
    return (loc.filename, loc.line, loc.col) if loc is not None else ("?", 0, 0)


class Family:
    """The tiles one role of a rolled loop's iterations made: one tensor, member i made by
    iteration i. `promoted`: the tensor has its block dimension."""

    def __init__(self, loop: Loop, tensor: Tensor):
        self.loop = loop
        self.tensor = tensor
        self.bufs = []  # (buf, member)
        self.promoted = False


class Iterations:
    """What a concrete loop recorded: per iteration, its items and the tensors it declared."""

    def __init__(self, ctx, looprange, name: str):
        self.ctx = ctx
        self.range = looprange
        self.name = name
        self.blocks: List[list] = []
        self.fresh: List[List[Tensor]] = []
        self._tensors_before = 0

    def begin(self):
        self.ctx.placements.begin_iteration(self, len(self.blocks))
        self.blocks.append([])
        self.ctx.blocks.append(self.blocks[-1])
        self._tensors_before = len(self.ctx.kernel.tensors)

    def end(self):
        self.ctx.blocks.pop()
        self.ctx.last = None  # no forwarding across iterations
        declared = self.ctx.kernel.tensors[self._tensors_before:]
        self.fresh.append(list(declared))

    def finish(self):
        """Roll the iterations into one loop in the enclosing block, or leave them unrolled."""
        ctx = self.ctx
        ctx.placements.end_loop(self)
        parent = ctx.blocks[-1]
        why = self._roll(self.blocks, self.fresh)
        if why is None:
            return
        if len(self.blocks) > 2 and self._roll(self.blocks[:-1], self.fresh[:-1]) is None:
            parent.extend(self.blocks[-1])  # a last iteration of its own (a partial tile), peeled
            return
        for block in self.blocks:
            parent.extend(block)
        ctx.notes.append(f"{self.range.loc}: loop unrolled ({len(self.blocks)} iterations): {why}")

    # -- rolling
    def _roll(self, blocks, fresh) -> Optional[str]:
        """Roll these iterations up into one loop in the enclosing block; None when done, else
        why they stay unrolled."""
        ctx, trip = self.ctx, len(blocks)
        roles = _roles(fresh)
        if isinstance(roles, str):
            return roles
        owner = {id(t): (i, r) for i, ts in enumerate(fresh) for r, t in enumerate(ts)}
        slots: List[List[Access]] = []  # per access of iteration 0: that access in every iteration
        loopmaps: List[Dict[Loop, Loop]] = [{}]
        for i in range(1, trip):
            pairs: List[tuple] = []
            loopmap: Dict[Loop, Loop] = {}
            why = _match(blocks[0], blocks[i], loopmap, pairs)
            if why:
                return f"iteration {i} differs from iteration 0 ({why})"
            loopmaps.append(loopmap)
            if i == 1:
                slots = [[a0, ai] for a0, ai in pairs]
            else:
                for slot, (_, ai) in zip(slots, pairs):
                    slot.append(ai)
        if trip == 1:
            slots = [[a] for a in _accesses(blocks[0])]
        # Tensors: shared by every iteration, or made afresh in one role by each.
        for slot in slots:
            first = slot[0].tensor
            if all(a.tensor is first for a in slot):
                if id(first) in owner and len(slot) > 1:
                    return f"iteration 0's %{first.name} is used by the others"
                continue
            role = owner.get(id(first), (0, None))[1]
            for i, a in enumerate(slot):
                o = owner.get(id(a.tensor))
                if o is None or o != (i, role):
                    return f"%{a.tensor.name} is used by another iteration than the one that made it"
        # Index bounds affine in the iteration.
        steps = []
        for slot in slots:
            per_dim = []
            for d in range(len(slot[0].index)):
                lo = [_mapped(a.index[d].lo, loopmaps[i]) for i, a in enumerate(slot)]
                hi = [_mapped(a.index[d].hi, loopmaps[i]) for i, a in enumerate(slot)]
                if any(a.index[d].point != slot[0].index[d].point or a.index[d].pattern != slot[0].index[d].pattern
                       for a in slot):
                    return f"an access to %{slot[0].tensor.name} changes form"
                step_lo, step_hi = _step(lo), _step(hi)
                if step_lo is None or step_hi is None:
                    return f"an index of %{slot[0].tensor.name} is not affine in the loop's index"
                per_dim.append((step_lo, step_hi))
            steps.append(per_dim)
        # Roll: iteration 0 stands for all, indexed by the new loop's variable.
        loop = Loop(ctx.unique(self.name), trip, self.range.kind, self.range.loc)
        loop.key = loop_key(self.range.loc)
        iv = Affine.of(loop)
        for slot, per_dim in zip(slots, steps):
            for ix, (step_lo, step_hi) in zip(slot[0].index, per_dim):
                ix.lo = ir.add(ix.lo, ir.scale(iv, step_lo))
                ix.hi = ir.add(ix.hi, ir.scale(iv, step_hi))
        loop.body = blocks[0]
        ctx.blocks[-1].append(loop)
        self._forget(blocks[1:])
        self._unify(roles, loop, loopmaps)
        return None

    def _forget(self, dropped_blocks):
        """The names the dropped iterations took are free again."""
        ctx = self.ctx
        for block in dropped_blocks:
            for item in _walk(block):
                ctx.names.discard(item.name)

    def _unify(self, roles, loop, loopmaps):
        """Every iteration's tile of a role becomes iteration 0's tensor, one family."""
        ctx = self.ctx
        inner = {}  # families of the dropped iterations' loops -> iteration 0's
        for loopmap in loopmaps[1:]:
            for dropped, kept in loopmap.items():
                inner[dropped] = kept
        keep = {id(t) for t in ctx.kernel.tensors}
        dropped = set()
        merged = {}
        # The buffers by the tensor they hold, each list in the order of ctx.bufs: a role visits
        # the buffers of its members only, in that order (work in the role's size, not the
        # kernel's).
        order = {id(buf): n for n, buf in enumerate(ctx.bufs)}
        holding = {}
        for buf in ctx.bufs:
            holding.setdefault(id(buf.tensor), []).append(buf)
        for made in roles:
            t0 = made[0]
            family = Family(loop, t0)
            ctx.families.append(family)
            for t in made:
                if t is not t0 and id(t) in keep and id(t) not in dropped:
                    dropped.add(id(t))
                    ctx.names.discard(t.name)
            members = {id(t): i for i, t in enumerate(made)}
            bufs = sorted((buf for m in members for buf in holding.pop(m, ())), key=lambda b: order[id(b)])
            for buf in bufs:
                i = members[id(buf.tensor)]
                buf.tensor = t0
                buf.families = [(self._kept_family(f, inner, t0, merged), j) for f, j in buf.families]
                buf.families.append((family, i))
                family.bufs.append((buf, i))
            holding[id(t0)] = sorted(holding.get(id(t0), []) + bufs, key=lambda b: order[id(b)])
        ctx.kernel.tensors[:] = [x for x in ctx.kernel.tensors if id(x) not in dropped]

    def _kept_family(self, family, inner, t0, merged):
        """The family of iteration 0 that a dropped iteration's inner family joins (its members
        move over once); the family itself when it is not a dropped iteration's."""
        if family in merged:
            return merged[family]
        if family.loop not in inner:
            return family
        kept_loop = inner[family.loop]
        for f in self.ctx.families:
            if f.loop is kept_loop and f.tensor is t0:
                f.bufs.extend(family.bufs)
                merged[family] = f
                return f
        return family


def _roles(fresh):
    """Per role r: the tensor each iteration made in it; a reason when they do not agree."""
    counts = {len(ts) for ts in fresh}
    if len(counts) > 1:
        return "its iterations make different numbers of tiles"
    roles = []
    for r in range(counts.pop() if counts else 0):
        made = [ts[r] for ts in fresh]
        t0 = made[0]
        if any(t.shape != t0.shape or t.dtype != t0.dtype or t.space != t0.space for t in made):
            return f"the tiles made in %{t0.name}'s place differ in shape or type"
        roles.append(made)
    return roles


def promote(ctx, family: Family):
    """Give the family's tensor a block dimension of its loop's trip count (after the partition
    dimension on chip): its accesses inside the loop take the loop's variable there, and each
    member's later accesses its own number."""
    t = family.tensor
    dim = 0 if t.space == "dram" else 1
    t.shape = t.shape[:dim] + (family.loop.trip,) + t.shape[dim:]
    iv = Affine.of(family.loop)
    for inst in ctx.emitted:
        for a in inst.writes + inst.reads:
            if a.tensor is t:
                a.index.insert(dim, Index(iv, ir.add(iv, 1), True))
    for buf, member in family.bufs:
        buf.blocks.append((dim, member))
    family.promoted = True


def _walk(block):
    for item in block:
        yield item
        if isinstance(item, Loop):
            yield from _walk(item.body)


def _accesses(block):
    for item in _walk(block):
        if isinstance(item, Instruction):
            yield from item.writes + item.reads


def _match(a_items, b_items, loopmap, pairs) -> str:
    """'' when b_items is a_items up to index values, tensors and names; else what differs."""
    if len(a_items) != len(b_items):
        return "a different number of instructions"
    for a, b in zip(a_items, b_items):
        if isinstance(a, Loop) != isinstance(b, Loop):
            return "a loop where the other has an instruction"
        if isinstance(a, Loop):
            if a.trip != b.trip or a.kind != b.kind:
                return f"loop %{a.name} runs differently"
            loopmap[b] = a
            why = _match(a.body, b.body, loopmap, pairs)
            if why:
                return why
            continue
        if a.opcode != b.opcode or a.engine != b.engine or len(a.writes) != len(b.writes) or len(a.reads) != len(
                b.reads):
            return f"{a.opcode} against {b.opcode}"
        names = {f"%{k.name}": f"%{v.name}" for k, v in loopmap.items()}
        if a.attrs != [(k, names.get(v, v) if isinstance(v, str) else v) for k, v in b.attrs]:
            return f"the attributes of {a.opcode} differ"
        for x, y in zip(a.writes + a.reads, b.writes + b.reads):
            if len(x.index) != len(y.index):
                return f"an access to %{x.tensor.name} changes rank"
            pairs.append((x, y))
    return ""


def _mapped(e, loopmap):
    if not isinstance(e, Affine):
        return e
    return ir.normalize(tuple((loopmap.get(l, l), c) for l, c in e.terms), e.const)


def _step(values) -> Optional[int]:
    """d when values[i] == values[0] + i * d for an integer d, else None."""
    if len(values) < 2:
        return 0
    d = ir.sub(values[1], values[0])
    if not isinstance(d, int):
        return None
    for i, v in enumerate(values):
        if ir.sub(v, values[0]) != i * d:
            return None
    return d
