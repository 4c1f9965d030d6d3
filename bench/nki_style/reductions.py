"""Reductions and scans in the style of public NKI kernels, for the `auto` A/B on kernels the
passes were not developed on (bench/auto_ab.py --set nki-style)."""

from tandem import nki
import tandem.nki.isa as nisa
import tandem.nki.language as nl

P = nl.tile_size.pmax


@nki.jit
def row_sum_chunked(x):
    """Row sums of a wide tensor: an SBUF accumulator carried across 2048-column chunks."""
    rows, cols = x.shape
    out = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    chunk = 2048
    for i in nl.affine_range(rows // P):
        acc = nl.zeros((nl.par_dim(P), 1), dtype=nl.float32)
        for j in nl.sequential_range(cols // chunk):
            t = nl.load(x[nl.ds(i * P, P), nl.ds(j * chunk, chunk)])
            acc[...] = nl.add(acc, nl.sum(t, axis=[1], keepdims=True))
        nl.store(out[nl.ds(i * P, P), :], value=acc)
    return out


@nki.jit
def column_sum_matmul(x, ones):
    """Column sums through TensorE: a ones vector times each 128-row block, accumulated in PSUM."""
    rows, cols = x.shape
    out = nl.ndarray((1, cols), dtype=nl.float32, buffer=nl.shared_hbm)
    N = nl.tile_size.gemm_moving_fmax
    o = nl.load(ones)
    for n in nl.affine_range(cols // N):
        acc = nl.zeros((nl.par_dim(1), N), dtype=nl.float32, buffer=nl.psum)
        for k in nl.affine_range(rows // P):
            t = nl.load(x[nl.ds(k * P, P), nl.ds(n * N, N)])
            acc += nisa.nc_matmul(o, t)
        nl.store(out[:, nl.ds(n * N, N)], value=nl.copy(acc))
    return out


@nki.jit
def prefix_sum(x):
    """Running sum along each row: a scan per 512-column chunk, the last column carried on."""
    rows, cols = x.shape
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    chunk = 512
    for i in nl.affine_range(rows // P):
        carry = nl.zeros((nl.par_dim(P), 1), dtype=nl.float32)
        ones = nl.full((nl.par_dim(P), chunk), 1.0, dtype=nl.float32)
        for j in nl.sequential_range(cols // chunk):
            t = nl.load(x[nl.ds(i * P, P), nl.ds(j * chunk, chunk)])
            s = nisa.tensor_tensor_scan(ones, t, initial=carry, op0=nl.multiply, op1=nl.add)
            carry[...] = nl.copy(s[:, chunk - 1:chunk])
            nl.store(out[nl.ds(i * P, P), nl.ds(j * chunk, chunk)], value=s)
    return out


@nki.jit
def online_softmax_stats(x):
    """Row maximum and sum of exp(x - max) in one pass over 1024-column chunks: two values carried
    from chunk to chunk (the flash-attention statistics)."""
    rows, cols = x.shape
    out = nl.ndarray((rows, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    chunk = 1024
    for i in nl.affine_range(rows // P):
        run_max = nl.full((nl.par_dim(P), 1), -30000.0, dtype=nl.float32)
        run_sum = nl.zeros((nl.par_dim(P), 1), dtype=nl.float32)
        for j in nl.sequential_range(cols // chunk):
            t = nl.load(x[nl.ds(i * P, P), nl.ds(j * chunk, chunk)])
            new_max = nl.maximum(run_max, nl.max(t, axis=[1], keepdims=True))
            shift = nl.multiply(new_max, -1.0)
            part = nl.ndarray((nl.par_dim(P), 1), dtype=nl.float32)
            nisa.activation_reduce(op=nl.exp, data=t, bias=shift, reduce_op=nl.add, reduce_res=part)
            scale = nl.exp(nl.subtract(run_max, new_max))
            run_sum[...] = nl.add(nl.multiply(run_sum, scale), part)
            run_max[...] = nl.copy(new_max)
        stats = nl.ndarray((nl.par_dim(P), 2), dtype=nl.float32)
        stats[:, 0:1] = nl.copy(run_max)
        stats[:, 1:2] = nl.copy(run_sum)
        nl.store(out[nl.ds(i * P, P), :], value=stats)
    return out


@nki.jit
def logsumexp(x):
    rows, cols = x.shape
    out = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(rows // P):
        t = nl.load(x[nl.ds(i * P, P), :])
        m = nl.max(t, axis=[1], keepdims=True)
        s = nl.ndarray((nl.par_dim(P), 1), dtype=nl.float32)
        nisa.activation_reduce(op=nl.exp, data=t, bias=nl.multiply(m, -1.0), reduce_op=nl.add, reduce_res=s)
        nl.store(out[nl.ds(i * P, P), :], value=nl.add(nl.log(s), m))
    return out


@nki.jit
def softmax_two_pass(x):
    """Softmax over wide rows in two passes over HBM: statistics chunk by chunk, then the
    normalised chunks."""
    rows, cols = x.shape
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    chunk = 2048
    for i in nl.affine_range(rows // P):
        row_max = nl.full((nl.par_dim(P), 1), -30000.0, dtype=nl.float32)
        for j in nl.sequential_range(cols // chunk):
            t = nl.load(x[nl.ds(i * P, P), nl.ds(j * chunk, chunk)])
            row_max[...] = nl.maximum(row_max, nl.max(t, axis=[1], keepdims=True))
        shift = nl.multiply(row_max, -1.0)
        total = nl.zeros((nl.par_dim(P), 1), dtype=nl.float32)
        for j in nl.sequential_range(cols // chunk):
            t = nl.load(x[nl.ds(i * P, P), nl.ds(j * chunk, chunk)])
            part = nl.ndarray((nl.par_dim(P), 1), dtype=nl.float32)
            nisa.activation_reduce(op=nl.exp, data=t, bias=shift, reduce_op=nl.add, reduce_res=part)
            total[...] = nl.add(total, part)
        inverse = nl.reciprocal(total)
        for j in nl.affine_range(cols // chunk):
            t = nl.load(x[nl.ds(i * P, P), nl.ds(j * chunk, chunk)])
            e = nisa.activation(op=nl.exp, data=t, bias=shift)
            nl.store(out[nl.ds(i * P, P), nl.ds(j * chunk, chunk)], value=nl.multiply(e, inverse))
    return out


@nki.jit
def selective_scan(delta, u, A, B):
    """A two-state selective scan per 128-channel tile (Mamba's recurrence with the states
    unrolled): each state's scan over the sequence chunk by chunk, its last element carried."""
    channels, seq = delta.shape
    out = nl.ndarray((channels, seq), dtype=nl.float32, buffer=nl.shared_hbm)
    chunk = 512
    for c in nl.affine_range(channels // P):
        a0 = nl.load(A[nl.ds(c * P, P), 0:1])
        a1 = nl.load(A[nl.ds(c * P, P), 1:2])
        h0 = nl.zeros((nl.par_dim(P), 1), dtype=nl.float32)
        h1 = nl.zeros((nl.par_dim(P), 1), dtype=nl.float32)
        for j in nl.sequential_range(seq // chunk):
            d = nl.load(delta[nl.ds(c * P, P), nl.ds(j * chunk, chunk)])
            x = nl.load(u[nl.ds(c * P, P), nl.ds(j * chunk, chunk)])
            b = nl.load(B[0:1, nl.ds(j * chunk, chunk)]).broadcast_to((P, chunk))
            du = nl.multiply(nl.multiply(d, x), b)
            s0 = nisa.tensor_tensor_scan(nisa.activation(op=nl.exp, data=d, scale=a0), du, initial=h0,
                                         op0=nl.multiply, op1=nl.add)
            s1 = nisa.tensor_tensor_scan(nisa.activation(op=nl.exp, data=d, scale=a1), du, initial=h1,
                                         op0=nl.multiply, op1=nl.add)
            h0[...] = nl.copy(s0[:, chunk - 1:chunk])
            h1[...] = nl.copy(s1[:, chunk - 1:chunk])
            nl.store(out[nl.ds(c * P, P), nl.ds(j * chunk, chunk)], value=nl.add(s0, s1))
    return out


EXAMPLES = {
    "row_sum_chunked": (("1024x16384",), {"dtype": "bf16"}),
    "column_sum_matmul": (("4096x2048", "128x1"), {"dtype": "bf16"}),
    "prefix_sum": (("512x8192",), {"dtype": "f32"}),
    "online_softmax_stats": (("1024x8192",), {"dtype": "bf16"}),
    "logsumexp": (("4096x2048",), {"dtype": "f32"}),
    "softmax_two_pass": (("512x16384",), {"dtype": "bf16"}),
    "selective_scan": (("512x4096", "512x4096", "512x2", "1x4096"), {"dtype": "f32"}),
}
