"""Matrix multiplications and attention in the style of public NKI kernels, for the `auto` A/B
on kernels the passes were not developed on (bench/auto_ab.py --set nki-style)."""

from tandem import nki
import tandem.nki.isa as nisa
import tandem.nki.language as nl

P = nl.tile_size.pmax
TM = nl.tile_size.gemm_stationary_fmax
TN = nl.tile_size.gemm_moving_fmax


@nki.jit
def matmul_n_outer(lhsT, rhs):
    """Output tiles in column-major order, both operands streamed per K step."""
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for n in nl.affine_range(N // TN):
        for m in nl.affine_range(M // TM):
            acc = nl.zeros((nl.par_dim(TM), TN), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // P):
                a = nl.load(lhsT[nl.ds(k * P, P), nl.ds(m * TM, TM)])
                b = nl.load(rhs[nl.ds(k * P, P), nl.ds(n * TN, TN)])
                acc += nisa.nc_matmul(a, b)
            nl.store(out[nl.ds(m * TM, TM), nl.ds(n * TN, TN)], value=nl.copy(acc, dtype=lhsT.dtype))
    return out


@nki.jit
def batched_matmul(lhsT, rhs):
    """[batch, K, M] x [batch, K, N]: the stationary strip of each (batch, M tile) loaded once."""
    batch, K, M = lhsT.shape
    _, _, N = rhs.shape
    out = nl.ndarray((batch, M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    KT = K // P
    for b in nl.affine_range(batch):
        for m in nl.affine_range(M // TM):
            strip = nl.ndarray((KT, nl.par_dim(P), TM), dtype=lhsT.dtype, buffer=nl.sbuf)
            for k in nl.affine_range(KT):
                strip[k] = nl.load(lhsT[b, nl.ds(k * P, P), nl.ds(m * TM, TM)])
            for n in nl.affine_range(N // TN):
                acc = nl.zeros((nl.par_dim(TM), TN), dtype=nl.float32, buffer=nl.psum)
                for k in nl.affine_range(KT):
                    acc += nisa.nc_matmul(strip[k], nl.load(rhs[b, nl.ds(k * P, P), nl.ds(n * TN, TN)]))
                nl.store(out[b, nl.ds(m * TM, TM), nl.ds(n * TN, TN)], value=nl.copy(acc, dtype=lhsT.dtype))
    return out


@nki.jit
def linear_bias_gelu(xT, w, bias):
    """y = gelu(x @ w + bias): the bias row broadcast over the tile's partitions, the epilogue on
    ScalarE reading PSUM."""
    K, M = xT.shape
    _, N = w.shape
    out = nl.ndarray((M, N), dtype=xT.dtype, buffer=nl.shared_hbm)
    for n in nl.affine_range(N // TN):
        bb = nl.load(bias[0:1, nl.ds(n * TN, TN)]).broadcast_to((TM, TN))
        for m in nl.affine_range(M // TM):
            acc = nl.zeros((nl.par_dim(TM), TN), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // P):
                acc += nisa.nc_matmul(nl.load(xT[nl.ds(k * P, P), nl.ds(m * TM, TM)]),
                                      nl.load(w[nl.ds(k * P, P), nl.ds(n * TN, TN)]))
            y = nl.gelu(nl.add(acc, bb), dtype=xT.dtype)
            nl.store(out[nl.ds(m * TM, TM), nl.ds(n * TN, TN)], value=y)
    return out


@nki.jit
def matmul_transpose_lhs(lhs, rhs):
    """lhs arrives [M, K] (rows on partitions): each 128 x 128 block is transposed through TensorE
    before it is the stationary operand."""
    M, K = lhs.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=lhs.dtype, buffer=nl.shared_hbm)
    KT = K // P
    for m in nl.affine_range(M // TM):
        lt = nl.ndarray((KT, nl.par_dim(P), TM), dtype=lhs.dtype, buffer=nl.sbuf)
        rows = nl.load(lhs[nl.ds(m * TM, TM), :])
        for k in nl.affine_range(KT):
            lt[k] = nl.copy(nisa.nc_transpose(rows[:, nl.ds(k * P, P)]), dtype=lhs.dtype)
        for n in nl.affine_range(N // TN):
            acc = nl.zeros((nl.par_dim(TM), TN), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(KT):
                acc += nisa.nc_matmul(lt[k], nl.load(rhs[nl.ds(k * P, P), nl.ds(n * TN, TN)]))
            nl.store(out[nl.ds(m * TM, TM), nl.ds(n * TN, TN)], value=nl.copy(acc, dtype=lhs.dtype))
    return out


@nki.jit
def gemv_decode(xT, w):
    """One token's activations ([K, 1]) times a wide weight: weight-streaming, DMA-bound."""
    K, _ = xT.shape
    _, N = w.shape
    out = nl.ndarray((1, N), dtype=xT.dtype, buffer=nl.shared_hbm)
    KT = K // P
    x = nl.ndarray((KT, nl.par_dim(P), 1), dtype=xT.dtype, buffer=nl.sbuf)
    for k in nl.affine_range(KT):
        x[k] = nl.load(xT[nl.ds(k * P, P), :])
    for n in nl.affine_range(N // TN):
        acc = nl.zeros((nl.par_dim(1), TN), dtype=nl.float32, buffer=nl.psum)
        for k in nl.affine_range(KT):
            acc += nisa.nc_matmul(x[k], nl.load(w[nl.ds(k * P, P), nl.ds(n * TN, TN)]))
        nl.store(out[:, nl.ds(n * TN, TN)], value=nl.copy(acc, dtype=xT.dtype))
    return out


@nki.jit
def matmul_f32_inputs(lhsT, rhs):
    """fp32 operands converted to bf16 on VectorE before TensorE, as kernels do for speed."""
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TM):
        for n in nl.affine_range(N // TN):
            acc = nl.zeros((nl.par_dim(TM), TN), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // P):
                a = nl.copy(nl.load(lhsT[nl.ds(k * P, P), nl.ds(m * TM, TM)]), dtype=nl.bfloat16)
                b = nl.copy(nl.load(rhs[nl.ds(k * P, P), nl.ds(n * TN, TN)]), dtype=nl.bfloat16)
                acc += nisa.nc_matmul(a, b)
            nl.store(out[nl.ds(m * TM, TM), nl.ds(n * TN, TN)], value=nl.copy(acc))
    return out


@nki.jit
def attention_decode(q, kT, v):
    """One query tile of a head against a long KV cache per head: scores, softmax, P V."""
    heads, d, seq = kT.shape
    out = nl.ndarray((heads, P, d), dtype=q.dtype, buffer=nl.shared_hbm)
    for h in nl.affine_range(heads):
        qt = nl.load(q[h])
        scores = nl.ndarray((nl.par_dim(P), seq), dtype=nl.float32, buffer=nl.sbuf)
        for j in nl.affine_range(seq // TN):
            scores[:, nl.ds(j * TN, TN)] = nl.copy(nisa.nc_matmul(qt, nl.load(kT[h, :, nl.ds(j * TN, TN)])))
        m = nl.max(scores, axis=[1], keepdims=True)
        total = nl.ndarray((nl.par_dim(P), 1), dtype=nl.float32)
        p = nisa.activation_reduce(op=nl.exp, data=scores, bias=nl.multiply(m, -1.0), reduce_op=nl.add,
                                   reduce_res=total, dtype=nl.bfloat16)
        acc = nl.zeros((nl.par_dim(P), d), dtype=nl.float32, buffer=nl.psum)
        for c in nl.affine_range(seq // P):
            pt = nl.copy(nisa.nc_transpose(p[:, nl.ds(c * P, P)]), dtype=nl.bfloat16)
            acc += nisa.nc_matmul(pt, nl.load(v[h, nl.ds(c * P, P), :]))
        nl.store(out[h], value=nl.multiply(acc, nl.reciprocal(total), dtype=q.dtype))
    return out


@nki.jit
def flash_attention(qT, kT, v):
    """One head, 128 queries per tile, keys in 512-wide blocks with the running maximum, sum and
    output carried from block to block."""
    d, seq = qT.shape
    out = nl.ndarray((seq, d), dtype=qT.dtype, buffer=nl.shared_hbm)
    B = 512
    for i in nl.affine_range(seq // P):
        qt = nl.load(qT[:, nl.ds(i * P, P)])
        run_max = nl.full((nl.par_dim(P), 1), -30000.0, dtype=nl.float32)
        run_sum = nl.zeros((nl.par_dim(P), 1), dtype=nl.float32)
        o = nl.zeros((nl.par_dim(P), d), dtype=nl.float32)
        for j in nl.sequential_range(seq // B):
            s = nl.copy(nisa.nc_matmul(qt, nl.load(kT[:, nl.ds(j * B, B)])))
            new_max = nl.maximum(run_max, nl.max(s, axis=[1], keepdims=True))
            part = nl.ndarray((nl.par_dim(P), 1), dtype=nl.float32)
            p = nisa.activation_reduce(op=nl.exp, data=s, bias=nl.multiply(new_max, -1.0), reduce_op=nl.add,
                                       reduce_res=part, dtype=nl.bfloat16)
            alpha = nl.exp(nl.subtract(run_max, new_max))
            pv = nl.zeros((nl.par_dim(P), d), dtype=nl.float32, buffer=nl.psum)
            for c in nl.affine_range(B // P):
                pt = nl.copy(nisa.nc_transpose(p[:, nl.ds(c * P, P)]), dtype=nl.bfloat16)
                pv += nisa.nc_matmul(pt, nl.load(v[nl.ds(j * B + c * P, P), :]))
            o[...] = nl.add(nl.multiply(o, alpha), pv)
            run_sum[...] = nl.add(nl.multiply(run_sum, alpha), part)
            run_max[...] = nl.copy(new_max)
        nl.store(out[nl.ds(i * P, P), :], value=nl.multiply(o, nl.reciprocal(run_sum), dtype=qT.dtype))
    return out


@nki.jit
def attention_scores_to_hbm(qT, kT):
    """The first half of a two-kernel attention: masked-free scaled scores for every query tile,
    stored to HBM 512 keys at a time."""
    d, seq = qT.shape
    out = nl.ndarray((seq, seq), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    for i in nl.affine_range(seq // P):
        qt = nl.load(qT[:, nl.ds(i * P, P)])
        for j in nl.affine_range(seq // TN):
            s = nisa.nc_matmul(qt, nl.load(kT[:, nl.ds(j * TN, TN)]))
            nl.store(out[nl.ds(i * P, P), nl.ds(j * TN, TN)], value=nl.multiply(s, 0.125, dtype=nl.bfloat16))
    return out


EXAMPLES = {
    "matmul_n_outer": (("1024x512", "1024x2048"), {"dtype": "bf16"}),
    "batched_matmul": (("4x512x256", "4x512x1024"), {"dtype": "bf16"}),
    "linear_bias_gelu": (("512x512", "512x2048", "1x2048"), {"dtype": "bf16"}),
    "matmul_transpose_lhs": (("512x1024", "1024x1024"), {"dtype": "bf16"}),
    "gemv_decode": (("4096x1", "4096x4096"), {"dtype": "bf16"}),
    "matmul_f32_inputs": (("512x512", "512x1024"), {"dtype": "f32"}),
    "attention_decode": (("8x128x128", "8x128x2048", "8x2048x128"), {"dtype": "bf16"}),
    "flash_attention": (("128x2048", "128x2048", "2048x128"), {"dtype": "bf16"}),
    "attention_scores_to_hbm": (("64x2048", "64x2048"), {"dtype": "bf16"}),
}
