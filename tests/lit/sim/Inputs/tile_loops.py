# Writes a kernel on the hand model (tests/models/hand.yaml): a loop that loads a strip of
# T tiles, then a sibling loop that reads it tile by tile (tests/lit/sim/tile_loops.test).
#   tile_loops.py T C ORDER    C: the consumer's cost in ns (its output's free size);
#                              ORDER: "forward" reads tile k, "reverse" tile T-1-k.
import sys

T, C, order = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
tile = "%k" if order == "forward" else f"-%k + {T - 1}"
print('kernel @tiles target = "trn2" {')
print(f"  tensor %B : dram[128, {8 * T}] bf16")
print(f"  tensor %s : sbuf[128, {T}, 8] bf16")
print(f"  tensor %o : sbuf[128, {C}] f32")
print(f"  loop %i = 0 to {T} {{")
print(f"    %ld = load %s[0:128, %i, 0:8] <- %B[0:128, %i*8 : %i*8 + 8] on q0")
print("  }")
print(f"  loop %k = 0 to {T} {{")
print(f"    %use = activation %o <- %s[0:128, {tile}, 0:8] {{func = \"copy\"}}")
print("  }")
print("}")
