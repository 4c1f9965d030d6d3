"""Element-wise and normalisation kernels in the style of public NKI kernels, for the `auto`
A/B on kernels the passes were not developed on (bench/auto_ab.py --set nki-style). Each
works on 128-row tiles of a [rows, cols] tensor."""

from tandem import nki
import tandem.nki.isa as nisa
import tandem.nki.language as nl

P = nl.tile_size.pmax


@nki.jit
def gelu_residual(x, residual):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    rows, cols = x.shape
    for i in nl.affine_range(rows // P):
        xt = nl.load(x[nl.ds(i * P, P), :])
        rt = nl.load(residual[nl.ds(i * P, P), :])
        nl.store(out[nl.ds(i * P, P), :], value=nl.add(nl.gelu(xt), rt))
    return out


@nki.jit
def swiglu(gate, up):
    out = nl.ndarray(gate.shape, dtype=gate.dtype, buffer=nl.shared_hbm)
    rows, cols = gate.shape
    chunk = 1024
    for i in nl.affine_range(rows // P):
        for j in nl.affine_range(cols // chunk):
            g = nl.load(gate[nl.ds(i * P, P), nl.ds(j * chunk, chunk)])
            u = nl.load(up[nl.ds(i * P, P), nl.ds(j * chunk, chunk)])
            nl.store(out[nl.ds(i * P, P), nl.ds(j * chunk, chunk)], value=nl.multiply(nl.silu(g), u))
    return out


@nki.jit
def rotary(x, cos, sin):
    """x: [rows, 2 * half]; the two halves rotated by per-row cos and sin."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    rows, width = x.shape
    half = width // 2
    for i in nl.affine_range(rows // P):
        x1 = nl.load(x[nl.ds(i * P, P), 0:half])
        x2 = nl.load(x[nl.ds(i * P, P), half:width])
        c = nl.load(cos[nl.ds(i * P, P), :])
        s = nl.load(sin[nl.ds(i * P, P), :])
        nl.store(out[nl.ds(i * P, P), 0:half], value=nl.subtract(nl.multiply(x1, c), nl.multiply(x2, s)))
        nl.store(out[nl.ds(i * P, P), half:width], value=nl.add(nl.multiply(x2, c), nl.multiply(x1, s)))
    return out


@nki.jit
def quantize_rows(x):
    """Per-row absolute maximum, scale to [-127, 127], clip and cast to int8."""
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=nl.int8, buffer=nl.shared_hbm)
    scales = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(rows // P):
        t = nl.load(x[nl.ds(i * P, P), :])
        amax = nl.max(nl.abs(t), axis=[1], keepdims=True)
        scale = nl.multiply(nl.reciprocal(nl.maximum(amax, 1e-6)), 127.0)
        q = nisa.tensor_scalar(t, op0=nl.multiply, operand0=scale, op1=nl.minimum, operand1=127.0)
        nl.store(out[nl.ds(i * P, P), :], value=nl.maximum(q, -127.0, dtype=nl.int8))
        nl.store(scales[nl.ds(i * P, P), :], value=scale)
    return out, scales


@nki.jit
def rmsnorm_residual(x, residual, gamma):
    """out = rmsnorm(x + residual) * gamma; the sum is also written back (the next layer's residual)."""
    rows, cols = x.shape
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    summed = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    g = nl.load(gamma.reshape((1, cols))).broadcast_to((P, cols))
    for i in nl.affine_range(rows // P):
        h = nl.add(nl.load(x[nl.ds(i * P, P), :]), nl.load(residual[nl.ds(i * P, P), :]))
        nl.store(summed[nl.ds(i * P, P), :], value=h)
        ms = nl.mean(nl.square(h), axis=[1], keepdims=True)
        y = nl.multiply(nl.multiply(h, nl.rsqrt(nl.add(ms, 1e-6))), g)
        nl.store(out[nl.ds(i * P, P), :], value=y)
    return out, summed


@nki.jit
def layernorm_chunked(x, gamma, beta):
    """bn_stats per 512 columns into one stats tile, bn_aggr, then normalise chunk by chunk."""
    rows, cols = x.shape
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    F = nl.tile_size.bn_stats_fmax
    n = cols // F
    g = nl.load(gamma.reshape((1, cols)))
    b = nl.load(beta.reshape((1, cols)))
    for i in nl.affine_range(rows // P):
        t = nl.load(x[nl.ds(i * P, P), :])
        stats = nl.ndarray((nl.par_dim(P), 6 * n), dtype=nl.float32)
        for j in nl.affine_range(n):
            stats[:, nl.ds(j * 6, 6)] = nisa.bn_stats(t[:, nl.ds(j * F, F)])
        mv = nisa.bn_aggr(stats)
        rstd = nl.rsqrt(nl.add(mv[:, 1:2], 1e-5))
        y = nl.ndarray((nl.par_dim(P), cols), dtype=x.dtype)
        for j in nl.affine_range(n):
            norm = nisa.tensor_scalar(t[:, nl.ds(j * F, F)], op0=nl.subtract, operand0=mv[:, 0:1],
                                      op1=nl.multiply, operand1=rstd)
            y[:, nl.ds(j * F, F)] = nl.add(nl.multiply(norm, g[:, nl.ds(j * F, F)].broadcast_to((P, F))),
                                           b[:, nl.ds(j * F, F)].broadcast_to((P, F)))
        nl.store(out[nl.ds(i * P, P), :], value=y)
    return out


@nki.jit
def groupnorm(x, gamma, beta):
    """x: [channels, pixels] with one channel per partition; mean and variance per channel over
    all pixels in 2048-pixel chunks (two passes over HBM), then the affine per channel."""
    channels, pixels = x.shape
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    chunk = 2048
    n = pixels // chunk
    for c in nl.affine_range(channels // P):
        sums = nl.zeros((nl.par_dim(P), 1), dtype=nl.float32)
        squares = nl.zeros((nl.par_dim(P), 1), dtype=nl.float32)
        for j in nl.sequential_range(n):
            t = nl.load(x[nl.ds(c * P, P), nl.ds(j * chunk, chunk)])
            sums[...] = nl.add(sums, nl.sum(t, axis=[1], keepdims=True))
            squares[...] = nl.add(squares, nl.sum(nl.square(t), axis=[1], keepdims=True))
        mean = nl.multiply(sums, 1.0 / pixels)
        var = nl.subtract(nl.multiply(squares, 1.0 / pixels), nl.multiply(mean, mean))
        scale = nl.multiply(nl.rsqrt(nl.add(var, 1e-5)), nl.load(gamma[nl.ds(c * P, P), :]))
        shift = nl.subtract(nl.load(beta[nl.ds(c * P, P), :]), nl.multiply(mean, scale))
        for j in nl.affine_range(n):
            t = nl.load(x[nl.ds(c * P, P), nl.ds(j * chunk, chunk)])
            y = nisa.tensor_scalar(t, op0=nl.multiply, operand0=scale, op1=nl.add, operand1=shift)
            nl.store(out[nl.ds(c * P, P), nl.ds(j * chunk, chunk)], value=y)
    return out


@nki.jit
def batchnorm_relu(x, scale, shift):
    """Inference batch norm and ReLU: channels on partitions, per-channel scale and shift on ScalarE."""
    channels, pixels = x.shape
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    chunk = 4096
    for c in nl.affine_range(channels // P):
        s = nl.load(scale[nl.ds(c * P, P), :])
        b = nl.load(shift[nl.ds(c * P, P), :])
        for j in nl.affine_range(pixels // chunk):
            t = nl.load(x[nl.ds(c * P, P), nl.ds(j * chunk, chunk)])
            y = nisa.activation(op=nl.relu, data=t, scale=s, bias=b)
            nl.store(out[nl.ds(c * P, P), nl.ds(j * chunk, chunk)], value=y)
    return out


@nki.jit
def l2_normalize(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    rows, cols = x.shape
    for i in nl.affine_range(rows // P):
        t = nl.load(x[nl.ds(i * P, P), :])
        norm = nl.rsqrt(nl.add(nl.sum(nl.square(t), axis=[1], keepdims=True), 1e-12))
        nl.store(out[nl.ds(i * P, P), :], value=nl.multiply(t, norm))
    return out


EXAMPLES = {
    "gelu_residual": (("2048x2048", "2048x2048"), {"dtype": "bf16"}),
    "swiglu": (("1024x4096", "1024x4096"), {"dtype": "bf16"}),
    "rotary": (("4096x128", "4096x64", "4096x64"), {"dtype": "f32"}),
    "quantize_rows": (("2048x1024",), {"dtype": "f32"}),
    "rmsnorm_residual": (("2048x1024", "2048x1024", (1024,)), {"dtype": "bf16"}),
    "layernorm_chunked": (("1024x4096", (4096,), (4096,)), {"dtype": "f32"}),
    "groupnorm": (("256x16384", "256x1", "256x1"), {"dtype": "f32"}),
    "batchnorm_relu": (("512x16384", "512x1", "512x1"), {"dtype": "bf16"}),
    "l2_normalize": (("4096x512",), {"dtype": "f32"}),
}
