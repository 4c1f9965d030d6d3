; A loop that branches back on VCC: not a counted loop the importer reads.
	.text
vcc_loop:
	s_mov_b32 s0, 0
.LBB0_1:
	s_add_i32 s0, s0, 1
	v_cmp_gt_u32_e32 vcc_lo, 8, v1
	s_cbranch_vccnz .LBB0_1
	s_endpgm
.Lfunc_end0:
