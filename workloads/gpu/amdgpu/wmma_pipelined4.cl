// A 2x2 block of 16x16x16 f16 GEMM tiles for gfx1100: four WMMAs per iteration over two A and
// two B operands (docs/amdgpu.md). The LDS holds two K tiles (double buffering: the next is
// copied in from global memory while the K loop of the current one runs). The A operands are
// software-pipelined one iteration ahead (loaded in the preheader for iteration 0, and after
// their last reader for the next iteration); the B operands are loaded at the top of each
// iteration. Volatile LDS reads keep the compiler from undoing the pipeline.
// Build: clang-16 -target amdgcn-amd-amdhsa -mcpu=gfx1100 -nogpulib -O2 -S wmma_pipelined4.cl
typedef half f16x16 __attribute__((ext_vector_type(16)));
typedef float f32x8 __attribute__((ext_vector_type(8)));

#define STEPS 4
#define LANES 32
#define PER_STEP 4  // operands per K step: A0, A1, B0, B1
#define TILE (PER_STEP * LANES * (STEPS + 1))

kernel void wmma_pipelined4(global const f16x16 *src, global f32x8 *dst) {
  local f16x16 lds[2][TILE];
  const int lane = __builtin_amdgcn_workitem_id_x();
  f32x8 c00 = 0, c01 = 0, c10 = 0, c11 = 0;
  for (int t = 0; t < TILE / LANES; ++t) lds[0][t * LANES + lane] = src[t * LANES + lane];
  __builtin_amdgcn_s_barrier();
  for (int tile = 0; tile < 2; ++tile) {
    volatile local const f16x16 *p = &lds[tile & 1][lane];
    f16x16 a0 = p[0], a1 = p[LANES];
#pragma nounroll
    for (int k = 0; k < STEPS; ++k) {
      f16x16 b0 = p[2 * LANES], b1 = p[3 * LANES];
      c00 = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a0, b0, c00);
      c01 = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a0, b1, c01);
      a0 = p[PER_STEP * LANES];
      c10 = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a1, b0, c10);
      c11 = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a1, b1, c11);
      a1 = p[PER_STEP * LANES + LANES];
      p += PER_STEP * LANES;
    }
    for (int t = 0; t < TILE / LANES; ++t)
      lds[(tile & 1) ^ 1][t * LANES + lane] = src[(tile + 1) * TILE + t * LANES + lane];
    __builtin_amdgcn_s_barrier();
  }
  dst[lane] = c00;
  dst[LANES + lane] = c01;
  dst[2 * LANES + lane] = c10;
  dst[3 * LANES + lane] = c11;
}
