# Writes a kernel on the hand model (tests/models/hand.yaml): an outer loop of N blocks, each
# loading a strip of T tiles into one buffer and reading it tile by tile in a sibling loop, so
# block n + 1's loads overwrite what block n's readers read (tests/lit/sim/carried_tiles.test).
#   carried_tiles.py T C ORDER    C: the reader's cost in ns (its output's free size);
#                                 ORDER: "forward" reads tile k, "reverse" tile T-1-k.
import sys

T, C, order = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
N = 2
tile = "%k" if order == "forward" else f"-%k + {T - 1}"
print('kernel @carried target = "trn2" {')
print(f"  tensor %B : dram[128, {N * 8 * T}] bf16")
print(f"  tensor %s : sbuf[128, {T}, 8] bf16")
print(f"  tensor %o : sbuf[128, {C}] f32")
print(f"  loop %n = 0 to {N} {{")
print(f"    loop %i = 0 to {T} {{")
print(f"      %ld = load %s[0:128, %i, 0:8] <- %B[0:128, %n*{8 * T} + %i*8 : %n*{8 * T} + %i*8 + 8] on q0")
print("    }")
print(f"    loop %k = 0 to {T} {{")
print(f"      %use = activation %o <- %s[0:128, {tile}, 0:8] {{func = \"copy\"}}")
print("    }")
print("  }")
print("}")
