"""A Mamba-style selective scan in NKI style, in the three loop structures of the public NKI
fused Mamba tutorial. `mamba` (its v2): per batch and 128-channel tile, delta and u are loaded
once; per state, exp(delta * A) on ScalarE, delta * u * B on VectorE, the associative scan along
the sequence (nisa.tensor_tensor_scan), the product with C, accumulated over the states.
`mamba_v1`: states outside channel tiles, every input reloaded per (state, tile), one
accumulator per tile kept across the states. `mamba_v3`: `mamba` with the sequence cut into
512-element chunks inside the state loop, the scan carried from chunk to chunk.

The models have no scan opcode: the tracer times tensor_tensor_scan as a VectorE
tensor_tensor over the same operands and marks it {nki = "tensor_tensor_scan"}.

    PYTHONPATH=python python3 workloads/nki/mamba.py
"""

from tandem import nki
import tandem.nki.isa as nisa
import tandem.nki.language as nl


@nki.jit
def mamba(delta, u, A, B, C):
    """delta, u: [batch, channels, seq]; A: [channels, state]; B, C: [batch, state, seq]."""
    batch, channels, seq_len = delta.shape
    _, state_size = A.shape
    output = nl.ndarray((batch, channels, seq_len), dtype=delta.dtype, buffer=nl.shared_hbm)
    P = nl.tile_size.pmax
    assert channels % P == 0

    for b in nl.affine_range(batch):
        for c in nl.affine_range(channels // P):
            c0 = c * P
            acc = nl.zeros((nl.par_dim(P), seq_len), dtype=delta.dtype)
            delta_i = nl.load(delta[b, c0:c0 + P, 0:seq_len])
            u_i = nl.load(u[b, c0:c0 + P, 0:seq_len])

            for s in nl.affine_range(state_size):
                A_i = nl.load(A[c0:c0 + P, s])
                deltaA = nisa.activation(op=nl.exp, data=delta_i, scale=A_i)

                B_i = nl.load(B[b, s:s + 1, 0:seq_len])
                deltaU = nisa.tensor_tensor(delta_i, u_i, op=nl.multiply)
                deltaBu = nisa.tensor_tensor(deltaU, B_i.broadcast_to((P, seq_len)), op=nl.multiply)

                scan = nisa.tensor_tensor_scan(deltaA, deltaBu, initial=0, op0=nl.multiply, op1=nl.add)

                C_i = nl.load(C[b, s:s + 1, 0:seq_len])
                scanC = nisa.tensor_tensor(scan, C_i.broadcast_to((P, seq_len)), op=nl.multiply)
                acc[0:P, 0:seq_len] += scanC

            nl.store(output[b, c0:c0 + P, 0:seq_len], acc[0:P, 0:seq_len])
    return output


@nki.jit
def mamba_v1(delta, u, A, B, C):
    """As `mamba`, with the state loop outside the channel tiles."""
    batch, channels, seq_len = delta.shape
    _, state_size = A.shape
    output = nl.ndarray((batch, channels, seq_len), dtype=delta.dtype, buffer=nl.shared_hbm)
    P = nl.tile_size.pmax
    tiles = channels // P
    assert channels % P == 0

    for b in nl.affine_range(batch):
        acc = nl.zeros((tiles, nl.par_dim(P), seq_len), dtype=delta.dtype)
        for s in nl.affine_range(state_size):
            for c in nl.affine_range(tiles):
                c0 = c * P
                delta_i = nl.load(delta[b, c0:c0 + P, 0:seq_len])
                A_i = nl.load(A[c0:c0 + P, s])
                deltaA = nisa.activation(op=nl.exp, data=delta_i, scale=A_i)

                u_i = nl.load(u[b, c0:c0 + P, 0:seq_len])
                B_i = nl.load(B[b, s:s + 1, 0:seq_len])
                deltaU = nisa.tensor_tensor(delta_i, u_i, op=nl.multiply)
                deltaBu = nisa.tensor_tensor(deltaU, B_i.broadcast_to((P, seq_len)), op=nl.multiply)

                scan = nisa.tensor_tensor_scan(deltaA, deltaBu, initial=0, op0=nl.multiply, op1=nl.add)

                C_i = nl.load(C[b, s:s + 1, 0:seq_len])
                scanC = nisa.tensor_tensor(scan, C_i.broadcast_to((P, seq_len)), op=nl.multiply)
                acc[c, 0:P, 0:seq_len] += scanC

        for c in nl.affine_range(tiles):
            nl.store(output[b, c * P:c * P + P, 0:seq_len], acc[c, 0:P, 0:seq_len])
    return output


@nki.jit
def mamba_v3(delta, u, A, B, C):
    """As `mamba`, with the sequence in 512-element chunks inside the state loop, the chunk loop
    a `static_range` (unrolled: each chunk's tiles are its own, as the tutorial's v3 has it)."""
    batch, channels, seq_len = delta.shape
    _, state_size = A.shape
    output = nl.ndarray((batch, channels, seq_len), dtype=delta.dtype, buffer=nl.shared_hbm)
    P = nl.tile_size.pmax
    F = 512
    assert channels % P == 0 and seq_len % F == 0

    for b in nl.affine_range(batch):
        for c in nl.affine_range(channels // P):
            c0 = c * P
            acc = nl.zeros((nl.par_dim(P), seq_len), dtype=delta.dtype)
            delta_i = nl.load(delta[b, c0:c0 + P, 0:seq_len])
            u_i = nl.load(u[b, c0:c0 + P, 0:seq_len])

            for s in nl.affine_range(state_size):
                A_i = nl.load(A[c0:c0 + P, s])
                carry = nl.zeros((nl.par_dim(P), 1), dtype=delta.dtype)
                for t in nl.static_range(seq_len // F):
                    t0 = t * F
                    deltaA = nisa.activation(op=nl.exp, data=delta_i[0:P, t0:t0 + F], scale=A_i)
                    B_i = nl.load(B[b, s:s + 1, t0:t0 + F])
                    deltaU = nisa.tensor_tensor(delta_i[0:P, t0:t0 + F], u_i[0:P, t0:t0 + F], op=nl.multiply)
                    deltaBu = nisa.tensor_tensor(deltaU, B_i.broadcast_to((P, F)), op=nl.multiply)
                    scan = nisa.tensor_tensor_scan(deltaA, deltaBu, initial=carry, op0=nl.multiply, op1=nl.add)
                    carry[0:P, 0:1] = nl.copy(scan[0:P, F - 1:F])
                    C_i = nl.load(C[b, s:s + 1, t0:t0 + F])
                    scanC = nisa.tensor_tensor(scan, C_i.broadcast_to((P, F)), op=nl.multiply)
                    acc[0:P, t0:t0 + F] += scanC

            nl.store(output[b, c0:c0 + P, 0:seq_len], acc[0:P, 0:seq_len])
    return output


# delta, u [batch, channels, seq]; A [channels, state]; B, C [batch, state, seq]
EXAMPLES = {"mamba": (("1x256x512", "1x256x512", "256x16", "1x16x512", "1x16x512"), {"dtype": "f32"}),
            "mamba_v1": (("1x256x512", "1x256x512", "256x4", "1x4x512", "1x4x512"), {"dtype": "f32"}),
            "mamba_v3": (("1x128x1024", "1x128x1024", "128x4", "1x4x1024", "1x4x1024"), {"dtype": "f32"})}

if __name__ == "__main__":
    import tandem

    args, kwargs = EXAMPLES["mamba"]
    r = tandem.simulate(mamba, *args, **kwargs)
    loop = r.loop("s")
    print(f"mamba: {r.total_ns:.1f} ns; state loop II {loop.ii_ns:.1f} ns (bound {loop.ii_bound_ns:.1f}, "
          f"{loop.bound_resource}), DMA overlapped {100 * loop.overlap:.1f}%")
