; A loop of two blocks (a label inside it): not a shape the importer reads.
	.text
two_blocks:
	s_mov_b32 s0, 0
.LBB0_1:
	s_add_i32 s0, s0, 1
.LBB0_2:
	s_cmp_lg_u32 s0, 8
	s_cbranch_scc1 .LBB0_1
	s_endpgm
.Lfunc_end0:
