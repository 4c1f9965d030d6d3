; Not gfx11 assembly: the importer stops at the first line that is no instruction it knows.
	.text
kernel:
	s_mov_b32 s0, 0
	hello world
	s_endpgm
