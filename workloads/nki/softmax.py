"""Row softmax of a [rows, cols] tensor in NKI style, after the structure of the public NKI
softmax tutorial: per 128-row tile, the row maximum, exp of the shifted values on ScalarE,
the row sum, and the division.

    PYTHONPATH=python python3 workloads/nki/softmax.py
"""

from tandem import nki
import tandem.nki.language as nl


@nki.jit
def softmax(a_tensor):
    out_tensor = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=nl.shared_hbm)
    rows, cols = a_tensor.shape
    ix, iy = nl.mgrid[0:128, 0:cols]

    for i in nl.affine_range(rows // 128):
        a_tile = nl.load(a_tensor[i * 128 + ix, iy])
        max_vals = nl.max(a_tile, axis=[1], keepdims=True)
        shifted = nl.subtract(a_tile, max_vals)
        numerator = nl.exp(shifted)
        denominator = nl.sum(numerator, axis=[1], keepdims=True)
        sm = numerator / denominator
        nl.store(out_tensor[i * 128 + ix, iy], value=sm)
    return out_tensor


EXAMPLES = {"softmax": (("1024x1024",), {"dtype": "f32"})}

if __name__ == "__main__":
    import tandem

    args, kwargs = EXAMPLES["softmax"]
    r = tandem.simulate(softmax, *args, **kwargs)
    loop = r.loop()
    print(f"softmax: {r.total_ns:.1f} ns; row loop II {loop.ii_ns:.1f} ns (bound {loop.ii_bound_ns:.1f}, "
          f"{loop.bound_resource}), DMA overlapped {100 * loop.overlap:.1f}%")
