; Three WMMAs in a loop; the third reads, as its A matrix, what the first writes. In the
; input the second stands between them; an order that puts the first just before the third
; makes gfx11's WMMA hazard, which the export pads with a v_nop.
	.text
	.globl	wmma_chain
	.p2align	8
	.type	wmma_chain,@function
wmma_chain:
	v_lshlrev_b32_e32 v10, 5, v0
	s_mov_b32 s0, 0
.LBB0_1:
	v_add_nc_u32_e32 v11, s0, v10
	s_add_i32 s0, s0, 0x200
	ds_load_b128 v[20:23], v11
	ds_load_b128 v[24:27], v11 offset:16
	ds_load_b128 v[60:63], v11 offset:32
	ds_load_b128 v[64:67], v11 offset:48
	s_waitcnt lgkmcnt(0)
	v_wmma_f32_16x16x16_f16 v[100:107], v[20:27], v[60:67], v[100:107]
	v_wmma_f32_16x16x16_f16 v[108:115], v[20:27], v[60:67], v[108:115]
	v_wmma_f32_16x16x16_f16 v[116:123], v[100:107], v[60:67], v[116:123]
	s_cmpk_lg_i32 s0, 0x1000
	s_cbranch_scc1 .LBB0_1
	global_store_b128 v10, v[100:103], s[2:3]
	global_store_b128 v10, v[108:111], s[2:3] offset:16
	global_store_b128 v10, v[116:119], s[2:3] offset:32
	s_endpgm
.Lfunc_end0:
	.size	wmma_chain, .Lfunc_end0-wmma_chain
