"""The allocation directives of nki.compiler.sbuf and .psum as tandem buffers."""

from ...dtypes import PSUM, SBUF


def allocation(space: str):
    """(alloc, mod_alloc, auto_alloc) for SBUF or PSUM. Each gives the buffer for
    `nl.ndarray(..., buffer=)`: the tile is placed in that memory and allocated by live range,
    as every tile is (the placement the directive fixes is not modelled)."""
    base = SBUF if space == "sbuf" else PSUM

    def alloc(func):
        return base

    def mod_alloc(*, base_addr=0, base_bank=None, base_partition=0, num_par_tiles=(), num_free_tiles=(),
                  num_bank_tiles=()):
        return base

    def auto_alloc():
        return base

    return alloc, mod_alloc, auto_alloc
