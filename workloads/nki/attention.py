"""Self-attention of one head with a small head dimension in NKI style, the shape of the public
Stable Diffusion attention tutorial: softmax(Q K^T) V for a [seq, d] head, d <= 128, one
128-query tile at a time. Q and K come in with the head dimension first ([d, seq]), so that
TensorE contracts over it; K and V stay in SBUF for the whole kernel. TensorE's operands are
bf16 whatever the inputs' type (fp32 would take four passes); the softmax runs in fp32.

Per query tile: the scores against every key (one matmul per 512 keys, copied out of PSUM),
their row maximum, exp of the shifted scores on ScalarE with the row sum, the probabilities
transposed through TensorE 128 keys at a time, the product with V accumulated in PSUM, and the
division by the row sums.

    PYTHONPATH=python python3 workloads/nki/attention.py
"""

from tandem import nki
import tandem.nki.isa as nisa
import tandem.nki.language as nl


def _as_pe(tile):
    """The tile as a TensorE operand: bf16, converted on VectorE when it is not."""
    return tile if tile.dtype == nl.bfloat16 else nl.copy(tile, dtype=nl.bfloat16)


@nki.jit
def sd_attention(q_t, k_t, v):
    d, seq = q_t.shape
    out = nl.ndarray((seq, d), dtype=q_t.dtype, buffer=nl.shared_hbm)
    pe_type = nl.bfloat16
    keys = nl.ndarray((nl.par_dim(d), seq), dtype=pe_type, buffer=nl.sbuf)
    for j in nl.affine_range(seq // 512):
        keys[:, nl.ds(j * 512, 512)] = _as_pe(nl.load(k_t[:, nl.ds(j * 512, 512)]))
    values = nl.ndarray((seq // 128, nl.par_dim(128), d), dtype=pe_type, buffer=nl.sbuf)
    for c in nl.affine_range(seq // 128):
        values[c] = _as_pe(nl.load(v[nl.ds(c * 128, 128), :]))

    for i in nl.affine_range(seq // 128):
        query = _as_pe(nl.load(q_t[:, nl.ds(i * 128, 128)]))
        scores = nl.ndarray((nl.par_dim(128), seq), dtype=nl.float32, buffer=nl.sbuf)
        for j in nl.affine_range(seq // 512):
            scores[:, nl.ds(j * 512, 512)] = nl.copy(nisa.nc_matmul(query, keys[:, nl.ds(j * 512, 512)]))

        row_max = nl.max(scores, axis=[1], keepdims=True)
        neg_max = nl.multiply(row_max, -1.0)
        row_sum = nl.ndarray((nl.par_dim(128), 1), dtype=nl.float32, buffer=nl.sbuf)
        probs = nisa.activation_reduce(op=nl.exp, data=scores, bias=neg_max, reduce_op=nl.add,
                                       reduce_res=row_sum, dtype=pe_type)

        probs_t = nl.ndarray((seq // 128, nl.par_dim(128), 128), dtype=pe_type, buffer=nl.sbuf)
        for c in nl.affine_range(seq // 128):
            probs_t[c] = nl.copy(nisa.nc_transpose(probs[:, nl.ds(c * 128, 128)]), dtype=pe_type)

        acc = nl.zeros((nl.par_dim(128), d), dtype=nl.float32, buffer=nl.psum)
        for c in nl.affine_range(seq // 128):
            acc += nisa.nc_matmul(probs_t[c], values[c])

        inverse = nl.reciprocal(row_sum)
        nl.store(out[nl.ds(i * 128, 128), :], value=nl.multiply(acc, inverse, dtype=q_t.dtype))
    return out


EXAMPLES = {"sd_attention": (("128x4096", "128x4096", "4096x128"), {"dtype": "bf16"})}

if __name__ == "__main__":
    import tandem

    args, kwargs = EXAMPLES["sd_attention"]
    r = tandem.simulate(sd_attention, *args, **kwargs)
    loop = r.loop("i")
    print(f"sd_attention: {r.total_ns / 1000:.1f} us; query-tile loop II {loop.ii_ns:.1f} ns (bound "
          f"{loop.ii_bound_ns:.1f}, {loop.bound_resource})")
