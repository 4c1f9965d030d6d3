"""Fused kernels in the style of public NKI kernels, for the `auto` A/B on kernels the passes
were not developed on (bench/auto_ab.py --set nki-style). Written after balance-engines' last
change, so that no pass rule was chosen with them in view."""

from tandem import nki
import tandem.nki.isa as nisa
import tandem.nki.language as nl

P = nl.tile_size.pmax
TN = nl.tile_size.gemm_moving_fmax


@nki.jit
def mlp_block(xT, w1, w2):
    """y = gelu(x @ w1) @ w2 for 128 tokens at a time: the hidden activations stay in SBUF,
    transposed through TensorE to be the second matmul's stationary operand."""
    d, tokens = xT.shape
    _, hidden = w1.shape
    out = nl.ndarray((tokens, d), dtype=xT.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range(tokens // P):
        x = nl.load(xT[:, nl.ds(t * P, P)])
        h = nl.ndarray((nl.par_dim(P), hidden), dtype=nl.bfloat16, buffer=nl.sbuf)
        for j in nl.affine_range(hidden // TN):
            h[:, nl.ds(j * TN, TN)] = nl.gelu(nisa.nc_matmul(x, nl.load(w1[:, nl.ds(j * TN, TN)])),
                                              dtype=nl.bfloat16)
        acc = nl.zeros((nl.par_dim(P), d), dtype=nl.float32, buffer=nl.psum)
        for c in nl.affine_range(hidden // P):
            ht = nl.copy(nisa.nc_transpose(h[:, nl.ds(c * P, P)]), dtype=nl.bfloat16)
            acc += nisa.nc_matmul(ht, nl.load(w2[nl.ds(c * P, P), :]))
        nl.store(out[nl.ds(t * P, P), :], value=nl.copy(acc, dtype=xT.dtype))
    return out


@nki.jit
def cross_entropy(logits, onehot):
    """Per-row loss log(sum(exp(x))) - sum(x * onehot), the logits read in 2048-column chunks."""
    rows, classes = logits.shape
    out = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    chunk = 2048
    for i in nl.affine_range(rows // P):
        total = nl.zeros((nl.par_dim(P), 1), dtype=nl.float32)
        picked = nl.zeros((nl.par_dim(P), 1), dtype=nl.float32)
        for j in nl.sequential_range(classes // chunk):
            x = nl.load(logits[nl.ds(i * P, P), nl.ds(j * chunk, chunk)])
            h = nl.load(onehot[nl.ds(i * P, P), nl.ds(j * chunk, chunk)])
            part = nl.ndarray((nl.par_dim(P), 1), dtype=nl.float32)
            nisa.activation_reduce(op=nl.exp, data=x, reduce_op=nl.add, reduce_res=part)
            total[...] = nl.add(total, part)
            picked[...] = nl.add(picked, nl.sum(nl.multiply(x, h), axis=[1], keepdims=True))
        nl.store(out[nl.ds(i * P, P), :], value=nl.subtract(nl.log(total), picked))
    return out


@nki.jit
def conv3x3_channels(x, w):
    """A 3 x 3 convolution with the input channels on partitions: per output row, nine matmuls
    over shifted windows of three input rows, accumulated in PSUM."""
    cin, h, width = x.shape
    _, _, cout = w.shape  # w: [cin, 9, cout]
    out = nl.ndarray((cout, h - 2, width - 2), dtype=x.dtype, buffer=nl.shared_hbm)
    taps = nl.load(w)
    for r in nl.affine_range(h - 2):
        rows = nl.load(x[:, nl.ds(r, 3), :])
        acc = nl.zeros((nl.par_dim(cout), width - 2), dtype=nl.float32, buffer=nl.psum)
        for dy in nl.static_range(3):
            for dx in nl.static_range(3):
                acc += nisa.nc_matmul(taps[:, dy * 3 + dx, :], rows[:, dy, dx:dx + width - 2])
        nl.store(out[:, r, :], value=nl.copy(acc, dtype=x.dtype))
    return out


@nki.jit
def bias_softmax(x, bias):
    """Softmax of x + bias over rows of 1024, the bias shared by every row tile."""
    rows, cols = x.shape
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    b = nl.load(bias)
    for i in nl.affine_range(rows // P):
        t = nl.add(nl.load(x[nl.ds(i * P, P), :]), b)
        m = nl.max(t, axis=[1], keepdims=True)
        s = nl.ndarray((nl.par_dim(P), 1), dtype=nl.float32)
        e = nisa.activation_reduce(op=nl.exp, data=t, bias=nl.multiply(m, -1.0), reduce_op=nl.add, reduce_res=s)
        nl.store(out[nl.ds(i * P, P), :], value=nl.multiply(e, nl.reciprocal(s)))
    return out


@nki.jit
def rmsnorm_linear(x, gamma, w):
    """rmsnorm(x) * gamma, transposed through TensorE 128 columns at a time, times w."""
    tokens, d = x.shape
    _, n = w.shape
    out = nl.ndarray((tokens, n), dtype=x.dtype, buffer=nl.shared_hbm)
    g = nl.load(gamma.reshape((1, d))).broadcast_to((P, d))
    for t in nl.affine_range(tokens // P):
        xt = nl.load(x[nl.ds(t * P, P), :])
        rms = nl.rsqrt(nl.add(nl.mean(nl.square(xt), axis=[1], keepdims=True), 1e-6))
        y = nl.multiply(nl.multiply(xt, rms), g, dtype=nl.bfloat16)
        yT = nl.ndarray((d // P, nl.par_dim(P), P), dtype=nl.bfloat16, buffer=nl.sbuf)
        for c in nl.affine_range(d // P):
            yT[c] = nl.copy(nisa.nc_transpose(y[:, nl.ds(c * P, P)]), dtype=nl.bfloat16)
        for j in nl.affine_range(n // TN):
            acc = nl.zeros((nl.par_dim(P), TN), dtype=nl.float32, buffer=nl.psum)
            for c in nl.affine_range(d // P):
                acc += nisa.nc_matmul(yT[c], nl.load(w[nl.ds(c * P, P), nl.ds(j * TN, TN)]))
            nl.store(out[nl.ds(t * P, P), nl.ds(j * TN, TN)], value=nl.copy(acc, dtype=x.dtype))
    return out


@nki.jit
def masked_fill(x, mask):
    """Where the mask is set, a large negative value; elsewhere x (attention's padding mask)."""
    rows, cols = x.shape
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(rows // P):
        t = nl.load(x[nl.ds(i * P, P), :])
        m = nl.load(mask[nl.ds(i * P, P), :])
        nl.store(out[nl.ds(i * P, P), :], value=nl.add(t, nl.multiply(m, -30000.0)))
    return out


EXAMPLES = {
    "mlp_block": (("128x1024", "128x2048", "2048x128"), {"dtype": "bf16"}),
    "cross_entropy": (("512x8192", "512x8192"), {"dtype": "f32"}),
    "conv3x3_channels": (("64x34x130", "64x9x128"), {"dtype": "bf16"}),
    "bias_softmax": (("2048x1024", "128x1024"), {"dtype": "f32"}),
    "rmsnorm_linear": (("512x1024", (1024,), "1024x1024"), {"dtype": "bf16"}),
    "masked_fill": (("2048x2048", "2048x2048"), {"dtype": "bf16"}),
}
