// A 2x4 block of 16x16x16 f16 GEMM tiles for gfx1100, in HIP: eight WMMAs per iteration over
// two A and four B operands, all loaded from the LDS at the top of each iteration (no software
// pipeline: the WMMA reorder can only permute it in place). Two K tiles are double-buffered
// in the LDS (docs/amdgpu.md). The LDS reads are volatile and name the LDS address space, so
// that they stay ds_loads and the compiler keeps the loop as written.
// Build: clang-16 -x hip --offload-arch=gfx1100 -nogpulib -nogpuinc -O2 -S wmma_tile8.hip
typedef _Float16 f16x16 __attribute__((ext_vector_type(16)));
typedef float f32x8 __attribute__((ext_vector_type(8)));

#define STEPS 4
#define LANES 32
#define PER_STEP 6  // operands per K step: A0, A1, B0..B3
#define TILE (PER_STEP * LANES * STEPS)

typedef volatile __attribute__((address_space(3))) const f16x16 lds_f16x16;  // LDS reads, kept as written

extern "C" __attribute__((global)) void wmma_tile8(const f16x16 *src, f32x8 *dst) {
  __attribute__((shared)) f16x16 lds[2][TILE];
  const int lane = __builtin_amdgcn_workitem_id_x();
  f32x8 c[2][4] = {};
  for (int t = 0; t < TILE / LANES; ++t) lds[0][t * LANES + lane] = src[t * LANES + lane];
  __builtin_amdgcn_s_barrier();
  for (int tile = 0; tile < 2; ++tile) {
    lds_f16x16 *p = (lds_f16x16 *)&lds[tile & 1][lane];
#pragma nounroll
    for (int k = 0; k < STEPS; ++k) {
      f16x16 a[2] = {p[0], p[LANES]};
      f16x16 b[4] = {p[2 * LANES], p[3 * LANES], p[4 * LANES], p[5 * LANES]};
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 4; ++j) c[i][j] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a[i], b[j], c[i][j]);
      p += PER_STEP * LANES;
    }
    for (int t = 0; t < TILE / LANES; ++t)
      lds[(tile & 1) ^ 1][t * LANES + lane] = src[(tile + 1) * TILE + t * LANES + lane];
    __builtin_amdgcn_s_barrier();
  }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) dst[(i * 4 + j) * LANES + lane] = c[i][j];
}
