; A kernel that reads a global load's result with no wait for it: the export's vmcnt walk (the
; same rule that keeps LLVM's waits as they are) adds the wait the order needs.
	.text
	.globl	missing_vmcnt
	.p2align	8
	.type	missing_vmcnt,@function
missing_vmcnt:
	v_lshlrev_b32_e32 v10, 4, v0
	global_load_b128 v[20:23], v10, s[0:1]
	global_load_b128 v[24:27], v10, s[0:1] offset:16
	ds_store_b128 v10, v[20:23]
	ds_store_b128 v10, v[24:27] offset:16
	s_endpgm
.Lfunc_end0:
	.size	missing_vmcnt, .Lfunc_end0-missing_vmcnt
