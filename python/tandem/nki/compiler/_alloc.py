"""The allocation directives of nki.compiler.sbuf and .psum as tandem buffers."""

from ...dtypes import PSUM, SBUF
from ...placement import Placement, modulo


def allocation(space: str):
    """(alloc, mod_alloc, auto_alloc) for SBUF or PSUM. `alloc` and `mod_alloc` place the logical
    tiles of the tensor's block dimensions (tandem.placement): those placed at one location share
    one physical tile, and the tensor keeps the bytes its locations span for the whole kernel
    (`address`, `extent`)."""
    base = SBUF if space == "sbuf" else PSUM

    def alloc(func):
        return Placement(base, "alloc", func)

    def mod_alloc(*, base_addr=0, base_bank=None, base_partition=0, num_par_tiles=(), num_free_tiles=(),
                  num_bank_tiles=()):
        return Placement(base, "mod_alloc", modulo(space, base_bank or 0, base_partition, base_addr, num_bank_tiles,
                                                   num_par_tiles, num_free_tiles))

    def auto_alloc():
        return base

    return alloc, mod_alloc, auto_alloc
