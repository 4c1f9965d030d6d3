"""Self-attention of one head with a small head dimension in NKI style, with every tile placed by
hand: the shape of the public Stable Diffusion "allocated" attention kernel of the NKI samples
and its benchmark test (attention.py here is the same head without placement). softmax(Q K^T / sqrt(d)) V for a
[seq, d] head, d = 128, seq a multiple of 1024; Q and K come in with the head dimension first
([d, seq]) and the result goes out that way too ([d, seq]), so no transpose of the output.

What the hand placement buys: K, V and the scaled Q are loaded once (bf16, converted by the
load) into fixed SBUF regions; the query tiles are taken two at a time (a pair loop of seq/256
iterations, each with two interleave groups, unrolled here), and every per-query-tile tile has
two physical buffers, one per group, so that group 1's chain can run while group 0's finishes; the fp32
score row is the exception, a single buffer shared by both groups, as in the published kernel.
PSUM: the score banks and the transpose banks are the same eight banks (group g uses banks
4g..4g+3, one per 512 keys, modulo 4); the PV accumulator sits in bank 1 / 5 and the
transposed reciprocal in bank 2 / 7.

Per query tile: the scores, 512 keys per matmul, copied out of PSUM with their partial row
maximum (tensor_scalar_reduce on VectorE); the negated maximum; exp on ScalarE 1024 keys at a
time with partial row sums; the probabilities transposed through TensorE against an identity,
four 128-key blocks per PSUM bank and one copy per bank; the product with V accumulated in
PSUM ([d, 128 queries]); the reciprocal of the row sum broadcast to [128, d] and transposed
through TensorE (fp32 identity) so that it scales the [d, q] result; the store.

    PYTHONPATH=python python3 workloads/nki/attention_allocated.py
"""

from tandem import nki
import tandem.nki.compiler as ncc
import tandem.nki.isa as nisa
import tandem.nki.language as nl

SOFTMAX_SCALE = 0.125  # 1 / sqrt(128), applied to Q once
KEY_BLOCK = 512  # keys per score matmul: one PSUM bank of fp32
EXP_BLOCK = 1024  # keys per exp instruction
PV_BANKS = (1, 5)  # PSUM bank of each interleave group's PV accumulator
DIV_BANKS = (2, 7)  # and of its transposed reciprocal


class _SbufLayout:
    """Hands out SBUF byte ranges of each partition, in order, as mod_alloc placements."""

    def __init__(self):
        self.next = 0

    def take(self, tile_bytes, buffers=None):
        """`buffers` physical tiles of `tile_bytes` each (None: a tensor without block dims)."""
        where = self.next
        self.next += tile_bytes * (buffers or 1)
        if buffers is None:
            return ncc.sbuf.mod_alloc(base_addr=where)
        return ncc.sbuf.mod_alloc(base_addr=where, num_free_tiles=(buffers,))


def _bank_per_group(banks):
    """A psum.alloc function: interleave group g's tile at the start of bank banks[g]."""
    def locate(idx, pdim_size, fdim_size):
        return (banks[idx[0]], 0, 0)
    return locate


def _at_bank(bank):
    """A psum.alloc function: the tile at the start of `bank`."""
    def locate(idx, pdim_size, fdim_size):
        return (bank, 0, 0)
    return locate


@nki.jit
def sd_attention_allocated(q_t, k_t, v):
    d, seq = q_t.shape
    assert d == 128 and seq % EXP_BLOCK == 0, "d must be 128 and seq a multiple of 1024"
    out = nl.ndarray((d, seq), dtype=q_t.dtype, buffer=nl.shared_hbm)
    pe, f32 = nl.bfloat16, nl.float32
    q_tiles, k_blocks, e_blocks = seq // 128, seq // KEY_BLOCK, seq // EXP_BLOCK
    sbuf = _SbufLayout()

    # Constants and the operands kept for the whole kernel.
    eye = nl.ndarray((nl.par_dim(128), 128), dtype=pe, buffer=sbuf.take(128 * 2))
    eye[...] = nl.load(nl.shared_identity_matrix(128, dtype=pe))
    eye32 = nl.ndarray((nl.par_dim(128), 128), dtype=f32, buffer=sbuf.take(128 * 4))
    eye32[...] = nl.load(nl.shared_identity_matrix(128, dtype=f32))

    values = nl.ndarray((q_tiles, nl.par_dim(128), d), dtype=pe, buffer=sbuf.take(d * 2, q_tiles))
    for c in nl.affine_range(q_tiles):
        values[c] = nl.load(v[nl.ds(c * 128, 128), :], dtype=pe)
    queries = nl.ndarray((q_tiles, nl.par_dim(d), 128), dtype=pe, buffer=sbuf.take(128 * 2, q_tiles))
    for i in nl.affine_range(q_tiles):
        queries[i] = nl.load(q_t[:, nl.ds(i * 128, 128)], dtype=pe)
        queries[i] = nl.multiply(queries[i], SOFTMAX_SCALE)
    keys = nl.ndarray((k_blocks, nl.par_dim(d), KEY_BLOCK), dtype=pe,
                      buffer=sbuf.take(KEY_BLOCK * 2, k_blocks))
    for j in nl.affine_range(k_blocks):
        keys[j] = nl.load(k_t[:, nl.ds(j * KEY_BLOCK, KEY_BLOCK)], dtype=pe)

    # Per-query-tile buffers: two per tensor (one per interleave group), but one score row.
    at = dict(scores=sbuf.take(seq * 4, 1), probs=sbuf.take(seq * 2, 2), probs_t=sbuf.take(seq * 2, 2),
              recip_wide=sbuf.take(d * 4, 2), divisor=sbuf.take(d * 4, 2), pv=sbuf.take(128 * 4, 2),
              result=sbuf.take(d * 4, 2), part_max=sbuf.take(k_blocks * 4, 2),
              part_sum=sbuf.take(e_blocks * 4, 2), neg_max=sbuf.take(4, 2), row_sum=sbuf.take(4, 2),
              recip=sbuf.take(4, 2))

    for pair in nl.affine_range(q_tiles // 2):
        scores = nl.ndarray((2, nl.par_dim(128), seq), dtype=f32, buffer=at["scores"])
        probs = nl.ndarray((2, nl.par_dim(128), seq), dtype=pe, buffer=at["probs"])
        probs_t = nl.ndarray((2, nl.par_dim(128), seq), dtype=pe, buffer=at["probs_t"])
        recip_wide = nl.ndarray((2, nl.par_dim(128), d), dtype=f32, buffer=at["recip_wide"])
        divisor = nl.ndarray((2, nl.par_dim(128), d), dtype=f32, buffer=at["divisor"])
        pv = nl.ndarray((2, nl.par_dim(d), 128), dtype=f32, buffer=at["pv"])
        result = nl.ndarray((2, nl.par_dim(d), 128), dtype=f32, buffer=at["result"])
        part_max = nl.ndarray((2, nl.par_dim(128), k_blocks), dtype=f32, buffer=at["part_max"])
        part_sum = nl.ndarray((2, nl.par_dim(128), e_blocks), dtype=f32, buffer=at["part_sum"])
        neg_max = nl.ndarray((2, nl.par_dim(128), 1), dtype=f32, buffer=at["neg_max"])
        row_sum = nl.ndarray((2, nl.par_dim(128), 1), dtype=f32, buffer=at["row_sum"])
        recip = nl.ndarray((2, nl.par_dim(128), 1), dtype=f32, buffer=at["recip"])

        # PSUM: scores and transposes share banks 0-7; PV in bank 1 / 5, the divisor in 2 / 7.
        s_psum = nl.ndarray((2, k_blocks, nl.par_dim(128), KEY_BLOCK), dtype=f32,
                            buffer=ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(2, 4)))
        t_psum = nl.ndarray((2, k_blocks, nl.par_dim(128), KEY_BLOCK), dtype=f32,
                            buffer=ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(2, 4)))
        div_psum = nl.ndarray((2, nl.par_dim(128), d), dtype=f32,
                              buffer=ncc.psum.alloc(_bank_per_group(DIV_BANKS)))

        # The two interleave groups, unrolled (NKI's compiler unrolls a loop of two as well): the
        # PV accumulator of group g is its own tile in bank PV_BANKS[g], declared right before its
        # accumulation loop, so that the tracer gives that loop's first matmul the start flag
        # (a fresh accumulation group each query tile) as the hardware does.
        for g in nl.static_range(2):
            qi = pair * 2 + g
            for j in nl.affine_range(k_blocks):
                s_psum[g, j] = nisa.nc_matmul(stationary=queries[qi], moving=keys[j])
                nisa.tensor_scalar_reduce(dst=scores[g, :, nl.ds(j * KEY_BLOCK, KEY_BLOCK)], data=s_psum[g, j],
                                          op0=nl.multiply, operand0=1.0, reduce_op=nl.max,
                                          reduce_res=part_max[g, :, nl.ds(j, 1)], dtype=f32)
            neg_max[g] = nisa.tensor_reduce(nl.max, data=part_max[g], axis=(1,), dtype=f32, negate=True, keepdims=True)

            for e in nl.affine_range(e_blocks):
                block = nl.ds(e * EXP_BLOCK, EXP_BLOCK)
                nisa.activation_reduce(dst=probs[g, :, block], op=nl.exp, data=scores[g, :, block], bias=neg_max[g],
                                       scale=1.0, reduce_op=nl.add, reduce_res=part_sum[g, :, nl.ds(e, 1)])
            row_sum[g] = nisa.tensor_reduce(nl.add, data=part_sum[g], axis=(1,), dtype=f32, keepdims=True)
            recip[g] = nl.divide(1.0, row_sum[g])
            recip_wide[g] = recip[g].broadcast_to((128, d))
            divisor[g] = nl.copy(recip_wide[g], dtype=f32)

            # P^T, 128 keys per TensorE transpose, four to a bank, one copy per bank.
            for b in nl.affine_range(k_blocks):
                for o in nl.affine_range(KEY_BLOCK // 128):
                    t_psum[g, b, :, nl.ds(o * 128, 128)] = nisa.nc_matmul(
                        stationary=probs[g, :, nl.ds(b * KEY_BLOCK + o * 128, 128)], moving=eye)
                probs_t[g, :, nl.ds(b * KEY_BLOCK, KEY_BLOCK)] = nl.copy(t_psum[g, b], dtype=pe)

            pv_psum = nl.ndarray((nl.par_dim(d), 128), dtype=f32,
                                 buffer=ncc.psum.alloc(_at_bank(PV_BANKS[g])))
            for c in nl.affine_range(q_tiles):
                pv_psum += nisa.nc_matmul(stationary=values[c], moving=probs_t[g, :, nl.ds(c * 128, 128)])
            pv[g] = nisa.tensor_copy(pv_psum, dtype=f32, engine=nisa.vector_engine)

            div_psum[g] = nisa.nc_matmul(stationary=divisor[g], moving=eye32)
            result[g] = nl.multiply(pv[g], div_psum[g])
            nl.store(out[:, nl.ds(qi * 128, 128)], value=result[g])
    return out


EXAMPLES = {"sd_attention_allocated": (("128x1024", "128x1024", "1024x128"), {"dtype": "bf16"})}

if __name__ == "__main__":
    import tandem

    args, kwargs = EXAMPLES["sd_attention_allocated"]
    r = tandem.simulate(sd_attention_allocated, *args, passes="none", **kwargs)
    loop = r.loop("pair")
    print(f"sd_attention_allocated: {r.total_ns / 1000:.1f} us; pair loop II {loop.ii_ns:.1f} ns (resource bound "
          f"{loop.resource_bound_ns:.1f} ns on {loop.bound_resource}, recurrence {loop.recurrence_bound_ns:.1f} ns)")
