; A WMMA whose operands are not VGPR groups.
	.text
bad_operands:
	v_wmma_f32_16x16x16_f16 v[0:7], s[0:7], v[8:15], v[0:7]
	s_endpgm
.Lfunc_end0:
