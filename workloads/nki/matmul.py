"""Matrix multiplication C = A @ B in NKI style, after the structure of the public NKI matmul
tutorial (tiled, hoisted loads, blocked free dimensions, the destination-first API). A arrives transposed (lhsT,
K on the partitions) as TensorE expects its stationary operand.

Written for the tandem tracer: a kernel written for NKI runs by changing its imports to these.

    PYTHONPATH=python python3 workloads/nki/matmul.py        # trace and simulate each kernel
"""

from tandem import nki
import tandem.nki.isa as nisa
import tandem.nki.language as nl

TILE_M = nl.tile_size.gemm_stationary_fmax  # 128: output rows per tile (stationary columns)
TILE_K = nl.tile_size.pmax  # 128: contraction per matmul (partitions)
TILE_N = nl.tile_size.gemm_moving_fmax  # 512: output columns per tile (moving columns)


@nki.jit
def matmul_tiled(lhsT, rhs, result):
    """One PSUM accumulation group per output tile; both operand tiles are loaded for every
    K step."""
    K, M = lhsT.shape
    K2, N = rhs.shape
    assert K == K2 and M % TILE_M == 0 and N % TILE_N == 0 and K % TILE_K == 0

    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            res_psum = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                lhsT_tile = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
                rhs_tile = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                res_psum += nl.matmul(lhsT_tile, rhs_tile, transpose_x=True)
            res_sb = nl.copy(res_psum, dtype=result.dtype)
            nl.store(result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], value=res_sb)


@nki.jit
def matmul_hoisted(lhsT, rhs, result):
    """The lhsT strip of an M tile is loaded once (a block dimension over K, partition dimension
    second) and reused for every N tile."""
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // TILE_K

    for m in nl.affine_range(M // TILE_M):
        lhsT_tiles = nl.ndarray((KT, nl.par_dim(TILE_K), TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(KT):
            lhsT_tiles[k] = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])

        for n in nl.affine_range(N // TILE_N):
            res_psum = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(KT):
                rhs_tile = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                res_psum += nisa.nc_matmul(lhsT_tiles[k], rhs_tile)
            res_sb = nl.copy(res_psum, dtype=result.dtype)
            nl.store(result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], value=res_sb)


@nki.jit
def matmul_hoisted_unrolled(lhsT, rhs, result, UNROLL=4):
    """matmul_hoisted with the K loop unrolled UNROLL times (nl.static_range) over UNROLL
    rhs buffers: the structure of the v3 calibration kernel
    (workloads/trn/calibration/matmul_v3_hoisted.kir)."""
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // TILE_K
    assert KT % UNROLL == 0
    rhs_tiles = [nl.ndarray((TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf) for _ in range(UNROLL)]

    for m in nl.affine_range(M // TILE_M):
        lhsT_tiles = nl.ndarray((KT, nl.par_dim(TILE_K), TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
        for kt in nl.affine_range(KT):
            lhsT_tiles[kt] = nl.load(lhsT[kt * TILE_K:(kt + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])

        for n in nl.affine_range(N // TILE_N):
            res_psum = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(KT // UNROLL):
                for u in nl.static_range(UNROLL):
                    kk = k * UNROLL + u
                    rhs_tiles[u][...] = nl.load(rhs[kk * TILE_K:(kk + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                    res_psum += nisa.nc_matmul(lhsT_tiles[kk], rhs_tiles[u])
            res_sb = nl.copy(res_psum, dtype=result.dtype)
            nl.store(result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], value=res_sb)


@nki.jit
def matmul_blocked(lhsT, rhs, result, TILES_IN_BLOCK_M=2, TILES_IN_BLOCK_N=2):
    """Blocks of TILES_IN_BLOCK_M x TILES_IN_BLOCK_N output tiles: the lhsT and rhs strips of a
    block are loaded once (block dimensions before the partition dimension) and reused for
    all its tiles."""
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // TILE_K
    BLOCK_M = TILE_M * TILES_IN_BLOCK_M
    BLOCK_N = TILE_N * TILES_IN_BLOCK_N
    assert M % BLOCK_M == 0 and N % BLOCK_N == 0

    for m in nl.affine_range(M // BLOCK_M):
        lhsT_tiles = nl.ndarray((TILES_IN_BLOCK_M, KT, nl.par_dim(TILE_K), TILE_M), dtype=lhsT.dtype,
                                buffer=nl.sbuf)
        for bm in nl.affine_range(TILES_IN_BLOCK_M):
            for k in nl.affine_range(KT):
                i_m = m * TILES_IN_BLOCK_M + bm
                lhsT_tiles[bm, k] = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, i_m * TILE_M:(i_m + 1) * TILE_M])

        for n in nl.affine_range(N // BLOCK_N):
            rhs_tiles = nl.ndarray((TILES_IN_BLOCK_N, KT, nl.par_dim(TILE_K), TILE_N), dtype=rhs.dtype,
                                   buffer=nl.sbuf)
            for bn in nl.affine_range(TILES_IN_BLOCK_N):
                for k in nl.affine_range(KT):
                    i_n = n * TILES_IN_BLOCK_N + bn
                    rhs_tiles[bn, k] = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, i_n * TILE_N:(i_n + 1) * TILE_N])

            for bm in nl.affine_range(TILES_IN_BLOCK_M):
                for bn in nl.affine_range(TILES_IN_BLOCK_N):
                    res_psum = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
                    for k in nl.affine_range(KT):
                        res_psum += nisa.nc_matmul(lhsT_tiles[bm, k], rhs_tiles[bn, k])
                    res_sb = nl.copy(res_psum, dtype=result.dtype)
                    i_m = m * TILES_IN_BLOCK_M + bm
                    i_n = n * TILES_IN_BLOCK_N + bn
                    nl.store(result[i_m * TILE_M:(i_m + 1) * TILE_M, i_n * TILE_N:(i_n + 1) * TILE_N], value=res_sb)


@nki.jit
def matmul_fully_optimized(lhsT, rhs, result, TILES_IN_BLOCK_M=2, TILES_IN_BLOCK_N=2, TILES_IN_BLOCK_K=4):
    """Blocks in all three dimensions. For each (N block, M block) the fp32 result block stays
    in SBUF; each K block loads its lhsT and rhs strips once (one DMA per partition row of the
    block), every output tile of the block accumulates the K block's matmuls in PSUM, and the
    PSUM tile is added into the SBUF result (VectorE), so PSUM holds one tile per output tile
    and SBUF, not PSUM, carries the sum across K blocks."""
    K, M = lhsT.shape
    _, N = rhs.shape
    BLOCK_M = TILE_M * TILES_IN_BLOCK_M
    BLOCK_N = TILE_N * TILES_IN_BLOCK_N
    BLOCK_K = TILE_K * TILES_IN_BLOCK_K
    assert M % BLOCK_M == 0 and N % BLOCK_N == 0 and K % BLOCK_K == 0

    for n2 in nl.affine_range(N // BLOCK_N):
        for m2 in nl.affine_range(M // BLOCK_M):
            result_tiles = nl.zeros((TILES_IN_BLOCK_M, TILES_IN_BLOCK_N, nl.par_dim(TILE_M), TILE_N), dtype=nl.float32,
                                    buffer=nl.sbuf)
            for k2 in nl.affine_range(K // BLOCK_K):
                lhsT_tiles = nl.ndarray((TILES_IN_BLOCK_K, nl.par_dim(TILE_K), BLOCK_M), dtype=lhsT.dtype, buffer=nl.sbuf)
                rhs_tiles = nl.ndarray((TILES_IN_BLOCK_K, nl.par_dim(TILE_K), BLOCK_N), dtype=rhs.dtype, buffer=nl.sbuf)
                for bk in nl.affine_range(TILES_IN_BLOCK_K):
                    k = k2 * TILES_IN_BLOCK_K + bk
                    lhsT_tiles[bk] = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m2 * BLOCK_M:(m2 + 1) * BLOCK_M])
                    rhs_tiles[bk] = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, n2 * BLOCK_N:(n2 + 1) * BLOCK_N])

                for bm in nl.affine_range(TILES_IN_BLOCK_M):
                    for bn in nl.affine_range(TILES_IN_BLOCK_N):
                        res_psum = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
                        for bk in nl.affine_range(TILES_IN_BLOCK_K):
                            res_psum += nisa.nc_matmul(lhsT_tiles[bk, :, bm * TILE_M:(bm + 1) * TILE_M],
                                                       rhs_tiles[bk, :, bn * TILE_N:(bn + 1) * TILE_N])
                        result_tiles[bm, bn] += res_psum

            for bm in nl.affine_range(TILES_IN_BLOCK_M):
                for bn in nl.affine_range(TILES_IN_BLOCK_N):
                    i_m = m2 * TILES_IN_BLOCK_M + bm
                    i_n = n2 * TILES_IN_BLOCK_N + bn
                    res_sb = nl.copy(result_tiles[bm, bn], dtype=result.dtype)
                    nl.store(result[i_m * TILE_M:(i_m + 1) * TILE_M, i_n * TILE_N:(i_n + 1) * TILE_N], value=res_sb)


@nki.jit
def matmul_dst_api(lhsT, rhs):
    """The tiled kernel in the destination-first API (nisa.dma_copy, nc_matmul(dst=...),
    tensor_copy(dst=...)), returning the result tensor it allocates in HBM."""
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            res_psum = nl.ndarray((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            nisa.memset(dst=res_psum, value=0.0)
            for k in nl.affine_range(K // TILE_K):
                lhsT_tile = nl.ndarray((TILE_K, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
                rhs_tile = nl.ndarray((TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=lhsT_tile, src=lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
                nisa.dma_copy(dst=rhs_tile, src=rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                nisa.nc_matmul(dst=res_psum, stationary=lhsT_tile, moving=rhs_tile)
            res_sb = nl.ndarray((TILE_M, TILE_N), dtype=result.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res_sb, src=res_psum)
            nisa.dma_copy(dst=result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], src=res_sb)
    return result


# Arguments each kernel is traced with (tests, __main__): [K, M] lhsT, [K, N] rhs, [M, N] result.
EXAMPLES = {
    "matmul_tiled": ((1024, 512), (1024, 1024), (512, 1024)),
    "matmul_hoisted": ((1024, 512), (1024, 1024), (512, 1024)),
    "matmul_hoisted_unrolled": ((1024, 512), (1024, 1024), (512, 1024)),
    "matmul_blocked": ((1024, 512), (1024, 1024), (512, 1024)),
    "matmul_fully_optimized": ((1024, 512), (1024, 1024), (512, 1024)),
    "matmul_dst_api": ((1024, 512), (1024, 1024)),
}

if __name__ == "__main__":
    import tandem

    for name, args in EXAMPLES.items():
        r = tandem.simulate(globals()[name], *args)
        k = r.loop("k")
        print(f"{name}: {r.total_ns:.1f} ns; loop %k II {k.ii_ns:.1f} ns (bound {k.ii_bound_ns:.1f}), "
              f"DMA overlapped {100 * k.overlap:.1f}%")
