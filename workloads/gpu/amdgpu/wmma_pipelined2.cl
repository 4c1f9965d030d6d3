// A 16x16x16 f16 GEMM tile loop for gfx1100 with two WMMAs per iteration (docs/amdgpu.md).
// Two K tiles are double-buffered in the LDS: while the K loop of one tile runs, the next
// tile is copied from global memory into the other LDS buffer. Inside the K loop the A
// operands are software-pipelined: iteration k loads the A operands of iteration k + 1 after
// its last WMMA, and the loop's preheader loads iteration 0's. The LDS reads are volatile so
// that the compiler keeps that pipeline as written.
// Build: clang-16 -target amdgcn-amd-amdhsa -mcpu=gfx1100 -nogpulib -O2 -S wmma_pipelined2.cl
typedef half f16x16 __attribute__((ext_vector_type(16)));
typedef float f32x8 __attribute__((ext_vector_type(8)));

#define STEPS 3
#define LANES 32
#define PER_STEP 4                 // operands per K step: A0, A1, B0, B1
#define TILE (PER_STEP * LANES * (STEPS + 1))

kernel void wmma_pipelined2(global const f16x16 *src, global f32x8 *dst) {
  local f16x16 lds[2][TILE];
  const int lane = __builtin_amdgcn_workitem_id_x();
  f32x8 acc0 = 0, acc1 = 0;
  for (int t = 0; t < TILE / LANES; ++t) lds[0][t * LANES + lane] = src[t * LANES + lane];
  __builtin_amdgcn_s_barrier();
  for (int tile = 0; tile < 2; ++tile) {
    volatile local const f16x16 *p = &lds[tile & 1][lane];
    f16x16 a0 = p[0], a1 = p[LANES];
#pragma nounroll
    for (int k = 0; k < STEPS; ++k) {
      f16x16 b0 = p[2 * LANES], b1 = p[3 * LANES];
      acc0 = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a0, b0, acc0);
      a0 = p[PER_STEP * LANES];
      acc1 = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a1, b1, acc1);
      a1 = p[PER_STEP * LANES + LANES];
      p += PER_STEP * LANES;
    }
    for (int t = 0; t < TILE / LANES; ++t)
      lds[(tile & 1) ^ 1][t * LANES + lane] = src[(tile + 1) * TILE + t * LANES + lane];
    __builtin_amdgcn_s_barrier();
  }
  dst[lane] = acc0;
  dst[LANES + lane] = acc1;
}
