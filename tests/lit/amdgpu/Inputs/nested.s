; An outer loop around an inner one: loops that nest are not imported.
	.text
nested:
	s_mov_b32 s1, 0
.LBB0_1:
	s_mov_b32 s0, 0
.LBB0_2:
	s_add_i32 s0, s0, 1
	s_cmp_lg_u32 s0, 8
	s_cbranch_scc1 .LBB0_2
	s_add_i32 s1, s1, 1
	s_cmp_lg_u32 s1, 4
	s_cbranch_scc1 .LBB0_1
	s_endpgm
.Lfunc_end0:
