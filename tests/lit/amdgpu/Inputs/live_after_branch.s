; The WMMA reorder's worked example (prefetch_swap.s) with an epilogue that reads A0's and
; A1's first registers after the loop. It writes v[20:23] first on every path, so A0's first
; load is dead at the exit and may stop being prefetched; it writes v[28:31] only after
; s_and_saveexec (some lanes keep the loop's value), so A1's first load stays prefetched.
	.text
	.globl	live_after_branch
	.p2align	8
	.type	live_after_branch,@function
live_after_branch:
	v_lshlrev_b32_e32 v10, 5, v0
	ds_load_b128 v[20:23], v10
	ds_load_b128 v[24:27], v10 offset:16
	ds_load_b128 v[28:31], v10 offset:32
	ds_load_b128 v[32:35], v10 offset:48
	ds_load_b128 v[60:63], v10 offset:8192
	ds_load_b128 v[64:67], v10 offset:8208
	s_mov_b32 s0, 0
.LBB0_1:
	v_add_nc_u32_e32 v11, s0, v10
	s_add_i32 s0, s0, 0x200
	ds_load_b128 v[36:39], v11 offset:64
	ds_load_b128 v[40:43], v11 offset:80
	s_waitcnt lgkmcnt(2)
	v_wmma_f32_16x16x16_f16 v[100:107], v[20:27], v[60:67], v[100:107]
	ds_load_b128 v[44:47], v11 offset:96
	ds_load_b128 v[48:51], v11 offset:112
	v_wmma_f32_16x16x16_f16 v[108:115], v[28:35], v[60:67], v[108:115]
	ds_load_b128 v[20:23], v11 offset:512
	ds_load_b128 v[24:27], v11 offset:528
	s_waitcnt lgkmcnt(4)
	v_wmma_f32_16x16x16_f16 v[116:123], v[36:43], v[60:67], v[116:123]
	ds_load_b128 v[28:31], v11 offset:544
	ds_load_b128 v[32:35], v11 offset:560
	s_waitcnt lgkmcnt(4)
	v_wmma_f32_16x16x16_f16 v[124:131], v[44:51], v[60:67], v[124:131]
	s_cmpk_lg_i32 s0, 0x1000
	s_cbranch_scc1 .LBB0_1
	s_waitcnt lgkmcnt(0)
	v_dual_mov_b32 v20, 0 :: v_dual_mov_b32 v21, 0
	v_dual_mov_b32 v22, 0 :: v_dual_mov_b32 v23, 0
	v_cmp_gt_u32_e32 vcc_lo, 16, v0
	s_and_saveexec_b32 s4, vcc_lo
	v_dual_mov_b32 v28, 0 :: v_dual_mov_b32 v29, 0
	v_dual_mov_b32 v30, 0 :: v_dual_mov_b32 v31, 0
	s_or_b32 exec_lo, exec_lo, s4
	global_store_b128 v10, v[20:23], s[2:3] offset:64
	global_store_b128 v10, v[28:31], s[2:3] offset:80
	global_store_b128 v10, v[100:103], s[2:3]
	global_store_b128 v10, v[108:111], s[2:3] offset:16
	global_store_b128 v10, v[116:119], s[2:3] offset:32
	global_store_b128 v10, v[124:127], s[2:3] offset:48
	s_endpgm
.Lfunc_end0:
	.size	live_after_branch, .Lfunc_end0-live_after_branch
