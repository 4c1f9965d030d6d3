"""Adaptive average pooling of an NCHW tensor in NKI style, in the structure of the public NKI
samples' adaptive_avg_pool2d kernel: the N*C planes on the partitions (up to 128 per tile),
and per output element one DMA of its input window ([planes, window rows, window columns],
a strided read of HBM) into one window buffer, its sum on VectorE, the division by the window size, and one store of
the tile's output planes.

    PYTHONPATH=python python3 workloads/nki/avgpool.py
"""

from tandem import nki
import tandem.nki.isa as nisa
import tandem.nki.language as nl


@nki.jit
def adaptive_avg_pool2d(in_tensor, out_h, out_w):
    """in_tensor: the [N*C, H, W] planes of an NCHW tensor (the same bytes in HBM)."""
    planes, h, w = in_tensor.shape
    out_tensor = nl.ndarray((planes, out_h, out_w), dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    P = min(planes, nl.tile_size.pmax)
    assert planes % P == 0

    # Window bounds of output element (i, j): rows [i*h // out_h, ceil((i+1)*h / out_h)).
    rows = [(i * h // out_h, -(-(i + 1) * h // out_h)) for i in range(out_h)]
    cols = [(j * w // out_w, -(-(j + 1) * w // out_w)) for j in range(out_w)]
    # A window larger than 128 x 128 is read and summed in pieces of at most that size.
    T = 128
    wh = min(T, max(b - a for a, b in rows))
    ww = min(T, max(b - a for a, b in cols))

    for t in nl.affine_range(planes // P):
        p0 = t * P
        result = nl.ndarray((nl.par_dim(P), out_h, out_w), dtype=in_tensor.dtype)
        window = nl.ndarray((nl.par_dim(P), wh, ww), dtype=in_tensor.dtype)  # one buffer, reused
        for i in nl.static_range(out_h):
            for j in nl.static_range(out_w):
                (r0, r1), (q0, q1) = rows[i], cols[j]
                total = nl.zeros((nl.par_dim(P), 1), dtype=nl.float32)
                for y0 in range(r0, r1, T):
                    for x0 in range(q0, q1, T):
                        y1, x1 = min(r1, y0 + T), min(q1, x0 + T)
                        nisa.dma_copy(dst=window[0:P, 0:y1 - y0, 0:x1 - x0],
                                      src=in_tensor[p0:p0 + P, y0:y1, x0:x1])
                        part = nl.sum(window[0:P, 0:y1 - y0, 0:x1 - x0], axis=[1, 2], dtype=nl.float32,
                                      keepdims=True)
                        total[0:P, 0:1] = nl.add(total, part)
                result[0:P, i, j] = nl.multiply(total, 1.0 / ((r1 - r0) * (q1 - q0)))
        nl.store(out_tensor[p0:p0 + P, 0:out_h, 0:out_w], value=result)
    return out_tensor


# in_tensor [N*C, H, W], output height, output width
EXAMPLES = {"adaptive_avg_pool2d": (("64x56x56", 7, 7), {"dtype": "f32"})}

if __name__ == "__main__":
    import tandem

    args, kwargs = EXAMPLES["adaptive_avg_pool2d"]
    r = tandem.simulate(adaptive_avg_pool2d, *args, **kwargs)
    print(f"adaptive_avg_pool2d: {r.total_ns:.1f} ns")
