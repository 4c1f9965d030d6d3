"""Fuses the loop nests that pass a PSUM tensor too large for PSUM from one to the next.

A kernel may declare a PSUM tensor larger than PSUM (`nl.tile_size.psum_partition_bytes` per
partition) when its loop nests use it one block at a time: one nest fills block `i` in its
iteration `i`, the nests after it read block `i` in theirs. As written every block is live
from the first nest to the last, which no allocator can place, yet such a kernel runs on the
device: the compiler must shrink what is live. How is not published; fusing the nests, so that
each iteration holds one block, is the smallest transformation that does. It is done when:

- the tensor is unplaced (no direct allocation) and larger than PSUM;
- the items of one block that touch it are consecutive loops of one trip count, and nothing
  else touches it;
- every access of it inside loop `%l` indexes one dimension `d`, the same in all of them, with
  exactly `%l`;
- every other tensor that two of these loops touch, one of them writing, is indexed likewise
  (some dimension by exactly each loop's variable): iteration `i` of one nest then depends on
  iteration `i` of the nests before it only, which fusion keeps in order.

The loops become the first of them (the others' variables renamed to its variable, their
bodies appended in order) and the tensor loses dimension `d`: each iteration holds one block.
`nki.compiler.skip_middle_end_transformations` turns this off, as it turns off Neuron's middle
end. A tensor that cannot be fused stays as written (the allocator then says what is live).
"""

from dataclasses import replace
from typing import Iterable, List, Optional, Tuple, Union

from .dtypes import DTYPES_BY_KIR
from .ir import Access, Affine, Index, Instruction, Kernel, Loop, Tensor, expr_terms, normalize

Item = Union[Instruction, Loop]


def fuse_psum_overflow(kernel: Kernel, psum_partition_bytes: int) -> List[str]:
    """Fuses where a PSUM tensor is larger than PSUM (see the module docstring); the notes say what."""
    notes = []
    for tensor in list(kernel.tensors):
        if tensor.space != "psum" or tensor.attrs or _partition_bytes(tensor) <= psum_partition_bytes:
            continue
        found = _fusable(kernel.body, tensor)
        if found is None:
            continue
        block, first, loops, dim = found
        before = _partition_bytes(tensor)
        _fuse(block, first, loops)
        _contract(kernel, tensor, dim)
        where = ", ".join(f"%{l.name}" + (f" ({l.loc.filename.rsplit('/', 1)[-1]}:{l.loc.line})" if l.loc else "")
                          for l in loops)
        notes.append(f"loops {where} fused so that %{tensor.name} fits PSUM ({before} bytes per partition, "
                     f"PSUM has {psum_partition_bytes}): it holds one block at a time ({_partition_bytes(tensor)} "
                     f"bytes)")
    return notes


def _partition_bytes(t: Tensor) -> int:
    n = 1
    for s in t.shape[1:]:
        n *= s
    return n * DTYPES_BY_KIR[t.dtype].itemsize


def _accesses(item: Item) -> Iterable[Tuple[Access, bool]]:
    """(access, is_write) of every access inside `item`."""
    if isinstance(item, Loop):
        for x in item.body:
            yield from _accesses(x)
    else:
        yield from ((a, True) for a in item.writes)
        yield from ((a, False) for a in item.reads)


def _touches(item: Item, t: Tensor) -> bool:
    return any(a.tensor is t for a, _ in _accesses(item))


def _fusable(block: List[Item], t: Tensor) -> Optional[Tuple[List[Item], int, List[Loop], int]]:
    """(block, index of the first loop, the loops, dimension) where `t` can be fused, or None."""
    touching = [i for i, x in enumerate(block) if _touches(x, t)]
    if len(touching) == 1 and isinstance(block[touching[0]], Loop):
        return _fusable(block[touching[0]].body, t)
    loops = [block[i] for i in touching]
    if len(loops) < 2 or touching != list(range(touching[0], touching[0] + len(loops))):
        return None
    if not all(isinstance(l, Loop) and l.trip == loops[0].trip for l in loops):
        return None
    dims = _dims_by_loop(loops, t)
    if not dims or any(_shared_unsafely(loops, u) for u in _shared_written(loops) if u is not t):
        return None
    return block, touching[0], loops, min(dims)


def _indexed_by(index: Index, loop: Loop) -> bool:
    return index.point and isinstance(index.lo, Affine) and index.lo.terms == ((loop, 1),) and index.lo.const == 0


def _dims_by_loop(loops: List[Loop], t: Tensor) -> set:
    """The dimensions every access of `t` in `loops` indexes with exactly its loop's variable."""
    dims = set(range(len(t.shape)))
    for loop in loops:
        for a, _ in _accesses(loop):
            if a.tensor is t:
                dims &= {d for d, index in enumerate(a.index) if _indexed_by(index, loop)}
    return dims


def _shared_written(loops: List[Loop]) -> List[Tensor]:
    """Tensors touched by two of `loops` and written by one of them."""
    users, written, tensors = {}, set(), {}
    for n, loop in enumerate(loops):
        for a, write in _accesses(loop):
            key = id(a.tensor)
            tensors[key] = a.tensor
            users.setdefault(key, set()).add(n)
            if write:
                written.add(key)
    return [tensors[k] for k in written if len(users[k]) > 1]


def _shared_unsafely(loops: List[Loop], u: Tensor) -> bool:
    return not _dims_by_loop([l for l in loops if _touches(l, u)], u)


def _fuse(block: List[Item], first: int, loops: List[Loop]):
    fused = loops[0]
    for loop in loops[1:]:
        for item in loop.body:
            _rename(item, loop, fused)
        fused.body.extend(loop.body)
        if loop.kind != "affine_range":
            fused.kind = loop.kind
    del block[first + 1:first + len(loops)]


def _rename(item: Item, old: Loop, new: Loop):
    if isinstance(item, Loop):
        for x in item.body:
            _rename(x, old, new)
        return
    for a in item.writes + item.reads:
        a.index = [replace(i, lo=_substituted(i.lo, old, new), hi=_substituted(i.hi, old, new)) for i in a.index]
    item.attrs = [(k, "%" + new.name if v == "%" + old.name else v) for k, v in item.attrs]


def _substituted(e, old: Loop, new: Loop):
    if not isinstance(e, Affine):
        return e
    return normalize(tuple((new if l is old else l, c) for l, c in expr_terms(e)), e.const)


def _contract(kernel: Kernel, t: Tensor, dim: int):
    t.shape = t.shape[:dim] + t.shape[dim + 1:]
    done = set()
    for inst in kernel.instructions():
        for a in inst.writes + inst.reads:
            if a.tensor is t and id(a) not in done:
                done.add(id(a))
                a.index = a.index[:dim] + a.index[dim + 1:]
