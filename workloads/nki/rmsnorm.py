"""RMSNorm of a [rows, cols] tensor in NKI style, after the structure of the public NKI RMSNorm
tutorial: per 128-row tile, the mean of squares along the row, its reciprocal square root, and
the scaling by it and by the weight vector; a row count that 128 does not divide leaves a
partial last tile, which the masks keep to its rows.

    PYTHONPATH=python python3 workloads/nki/rmsnorm.py
"""

import math

from tandem import nki
import tandem.nki.language as nl


@nki.jit
def rmsnorm(a_tensor, g_tensor):
    out_tensor = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=nl.shared_hbm)
    rows, cols = a_tensor.shape
    ix = nl.arange(128)[:, None]
    iy = nl.arange(cols)[None, :]
    iw = nl.arange(1)[:, None]
    g_tile = nl.load(g_tensor.reshape((1, cols))[iw, iy])

    for i in nl.affine_range(math.ceil(rows / 128)):
        in_rows = i * 128 + ix < rows
        a_tile = nl.load(a_tensor[i * 128 + ix, iy], mask=in_rows)
        squares = nl.multiply(a_tile, a_tile, mask=in_rows)
        total = nl.sum(squares, axis=[1], keepdims=True, mask=in_rows)
        mean = nl.multiply(total, 1.0 / cols, mask=in_rows)
        scale = nl.rsqrt(mean, mask=in_rows)
        normed = nl.multiply(a_tile, scale, mask=in_rows)
        weighted = nl.multiply(normed, g_tile.broadcast_to((128, cols)), mask=in_rows)
        nl.store(out_tensor[i * 128 + ix, iy], value=weighted, mask=in_rows)
    return out_tensor


EXAMPLES = {"rmsnorm": (("1000x512", (512,)), {"dtype": "f32"})}

if __name__ == "__main__":
    import tandem

    args, kwargs = EXAMPLES["rmsnorm"]
    r = tandem.simulate(rmsnorm, *args, **kwargs)
    loop = r.loop()
    print(f"rmsnorm: {r.total_ns:.1f} ns; row loop II {loop.ii_ns:.1f} ns (bound {loop.ii_bound_ns:.1f}, "
          f"{loop.bound_resource}), DMA overlapped {100 * loop.overlap:.1f}%")
