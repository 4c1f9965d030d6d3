; A counted loop whose induction scalar starts from a kernel argument: its trip count is
; not known from the code.
	.text
unknown_init:
	s_load_b32 s4, s[0:1], 0x0
	s_waitcnt lgkmcnt(0)
	s_mov_b32 s0, s4
.LBB0_1:
	s_add_i32 s0, s0, 1
	s_cmp_lg_u32 s0, 8
	s_cbranch_scc1 .LBB0_1
	s_endpgm
.Lfunc_end0:
