"""Tensors an allocation directive places: the block dimensions' logical tiles share physical ones.

An on-chip tensor's dimensions before its partition dimension are block dimensions: each index
of them is one logical (P, F) tile. Without a directive every logical tile has its own bytes;
`nki.compiler.sbuf.mod_alloc` / `psum.mod_alloc` and `sbuf.alloc(func)` / `psum.alloc(func)`
give each logical tile a physical location, and logical tiles given the same location share
it (NKI direct allocation: `mod_alloc(num_free_tiles=(2,))` makes block `i` live in physical
tile `i % 2`). The tracer declares the tensor with the physical tiles only and indexes it
through `BlockMap`: block index `b` becomes the smallest block index placed where `b` is, so
the accesses of logical tiles that share bytes are accesses of the same `.kir` tile, with the
dependences the hardware has between them.
"""

import collections
import itertools
import sys
from typing import Callable, List, Sequence, Tuple

from .active import fail
from .dtypes import Buffer
from .errors import in_package, printable
from .indices import Sym, describe, is_int

# The most logical tiles a directive's placement is worked out for, one call each.
MAX_BLOCKS = 1 << 16


class Placement(Buffer):
    """What an allocation directive returns for `buffer=`: the memory, and where each logical
    tile of the tensor goes (`locate(idx=block_index, pdim_size=partitions,
    fdim_size=bytes_per_partition)`)."""

    def __init__(self, base: Buffer, directive: str, locate: Callable):
        super().__init__(base.name, base.space)
        self.directive = directive
        self.locate = locate

    def __repr__(self):
        return f"nki.compiler.{self.name}.{self.directive}(...)"


def _linear(index, sizes) -> int:
    """The modulo tile number of `index` in a grid of `sizes` tiles, row-major (dimensions past
    `sizes` do not count; an empty `sizes` is one tile)."""
    n = 0
    for i, s in zip(index, sizes):
        n = n * s + i % s
    return n


def modulo(space: str, base_bank, base_partition, base_addr, bank_tiles, par_tiles, free_tiles) -> Callable:
    """mod_alloc's placement as NKI defines it: in each of its grids of tiles (PSUM banks,
    partition tiles, free tiles) block index `b` takes tile `b[d] % tiles[d]` per dimension the
    grid names, at `base + tile * size` (a bank, a tile's partitions, a tile's bytes)."""
    for what, v in (("base_bank", base_bank), ("base_partition", base_partition), ("base_addr", base_addr)):
        if not is_int(v) or v < 0:
            fail(f"{what} must be a non-negative integer, found {printable(repr(v))}", call="mod_alloc")
    for sizes in (bank_tiles, par_tiles, free_tiles):
        if not isinstance(sizes, (tuple, list)) or any(not is_int(s) or s < 1 for s in sizes):
            fail(f"the numbers of tiles must be a tuple of positive integers, found "
                 f"{printable(repr(sizes))}", call="mod_alloc")

    def locate(idx, pdim_size, fdim_size):
        partition = base_partition + _linear(idx, par_tiles) * pdim_size
        addr = base_addr + _linear(idx, free_tiles) * fdim_size
        if space == "psum":
            return (base_bank + _linear(idx, bank_tiles), partition, addr)
        return (partition, addr)
    return locate


class BlockMap:
    """The block dimensions of a placed tensor: `physical` sizes to declare, `extent` (the bytes
    of each partition its tiles occupy, `(first, end)`, when the locations give them), and
    `map_key`, which turns an index of the logical tensor into one of the physical tensor."""

    def __init__(self, placement: Placement, logical: Sequence[int], partitions: int, bytes_per_partition: int):
        self.directive = f"nki.compiler.{placement.name}.{placement.directive}"
        self.logical = tuple(logical)
        count = 1
        for s in self.logical:
            count *= s
        if count > MAX_BLOCKS:
            fail(f"{count} logical tiles ({'x'.join(map(str, self.logical))}); Tandem places at most {MAX_BLOCKS}",
                 call=self.directive)
        first_at = {}
        self.rep = {}
        for index in itertools.product(*(range(s) for s in self.logical)):
            # NKI passes the function its arguments by name.
            where = _hashable(placement.locate(idx=index, pdim_size=partitions, fdim_size=bytes_per_partition),
                              self.directive)
            self.rep[index] = first_at.setdefault(where, index)
        self.extent = _byte_range(first_at, placement.space, bytes_per_partition)
        n = len(self.logical)
        self.physical = tuple(max(r[d] for r in self.rep.values()) + 1 for d in range(n))
        # A dimension the location does not depend on is always 0; one whose index is its own
        # location keeps a loop index as it is; any other needs each index's value.
        self.ignored = [all(self.rep[i] == self.rep[i[:d] + (0,) + i[d + 1:]] for i in self.rep) for d in range(n)]
        self.kept = [all(r[d] == i[d] for i, r in self.rep.items()) for d in range(n)]

    def map_key(self, key: Tuple) -> Tuple:
        n = len(self.logical)
        blocks, rest = list(key[:n]), key[n:]
        if all(ig or kept for ig, kept in zip(self.ignored, self.kept)):
            return tuple(0 if ig else k for k, ig in zip(blocks, self.ignored)) + rest
        values: List[int] = []
        for d, k in enumerate(blocks):
            if self.ignored[d]:
                values.append(0)
            elif isinstance(k, Sym):
                int(k)  # the loops behind it run concretely (tandem.reroll)
            elif is_int(k) and 0 <= k < self.logical[d]:
                values.append(k)
            else:
                fail(f"block index {describe(k)} of dimension {d} of a tensor placed by {self.directive}: each block "
                     f"index must be one integer or loop index in 0..{self.logical[d] - 1}", call="tile[...]")
        return self.rep[tuple(values)] + rest


def _hashable(where, directive: str):
    try:
        hash(where)
        return where
    except TypeError:
        if isinstance(where, (list, tuple)):
            return tuple(_hashable(w, directive) for w in where)
        fail(f"the allocation function returned {describe(where)}, not a location (a tuple of integers)",
             call=directive)


PSUM_BANK_BYTES = 2048  # a PSUM bank per partition (NKI: 2 KiB, 512 fp32 values)


def _byte_range(locations, space: str, nbytes: int):
    """The bytes of each partition from the first location to the end of the last tile: PSUM
    locations are (bank, partition, byte), SBUF ones (partition, byte). None when a location is
    not of that form (a custom allocation function's own value)."""
    starts = []
    for where in locations:
        ints = [w for w in where if is_int(w)] if isinstance(where, tuple) else []
        if space == "psum" and len(ints) == 3 == len(where):
            starts.append(ints[0] * PSUM_BANK_BYTES + ints[2])
        elif space == "sbuf" and len(ints) == 2 == len(where):
            starts.append(ints[1])
        else:
            return None
    return (min(starts), max(starts) + nbytes) if starts else None


class PlacementMemo:
    """NKI traces a loop's body once, so a statement in a loop that places a tensor places one
    tensor, where that one run put it. The tracer runs a concrete loop's body once per iteration
    (tandem.reroll), and the Python code around the placements (a running address) runs each
    time: each later iteration's placement by the same statement (the same user call stack, the
    same occurrence within the iteration) is the one the first iteration made."""

    class _Frame:
        def __init__(self, owner):
            self.owner, self.iteration, self.first, self.count = owner, 0, {}, collections.Counter()

    def __init__(self):
        self.frames: List[PlacementMemo._Frame] = []

    def begin_iteration(self, owner, iteration: int):
        if iteration == 0 or not self.frames or self.frames[-1].owner is not owner:
            self.frames.append(self._Frame(owner))
        frame = self.frames[-1]
        frame.iteration, frame.count = iteration, collections.Counter()

    def end_loop(self, owner):
        if self.frames and self.frames[-1].owner is owner:
            self.frames.pop()

    def place(self, extent):
        """The bytes a placing statement gets: `extent` as its run computed it, or the first
        iteration's."""
        stack = _user_stack()
        keys = []
        for frame in self.frames:
            keys.append((stack, frame.count[stack]))
            frame.count[stack] += 1
        chosen = extent
        for frame, key in zip(self.frames, keys):  # the outermost loop that has run before decides
            if frame.iteration > 0 and key in frame.first:
                chosen = frame.first[key]
                break
        for frame, key in zip(self.frames, keys):
            if frame.iteration == 0:
                frame.first.setdefault(key, chosen)
        return chosen


def _user_stack() -> tuple:
    frames = []
    f = sys._getframe(1)
    while f is not None:
        if not in_package(f.f_code.co_filename):
            frames.append((f.f_code.co_filename, f.f_lineno))
        f = f.f_back
    return tuple(frames)
