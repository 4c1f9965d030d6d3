; A loop with a second exit (a forward branch out of its body): one block with one exit is
; all the importer reads.
	.text
branch_in_loop:
	s_mov_b32 s0, 0
.LBB0_1:
	s_add_i32 s0, s0, 1
	s_cbranch_execz .LBB0_2
	s_cmp_lg_u32 s0, 8
	s_cbranch_scc1 .LBB0_1
.LBB0_2:
	s_endpgm
.Lfunc_end0:
