"""Prints a kernel of one loop whose body holds N pairs: a load into its own 128x1 u8 SBUF tile
and an accumulation into a running sum of its own (argv[1] = N, 24000 by default)."""
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 24000
lines = ['kernel @capacity_loop target = "trn2" {', f"  tensor %X : dram[128, {n * 4}] u8"]
lines += [f"  tensor %t{j} : sbuf[128, 1] u8\n  tensor %s{j} : sbuf[128, 1] u8" for j in range(n)]
lines.append("  loop %i = 0 to 4 {")
for j in range(n):
    lines.append(f"    %ld{j} = load %t{j} <- %X[0:128, %i*{n} + {j} : %i*{n} + {j + 1}]")
    lines.append(f"    %ad{j} = tensor_tensor %s{j} <- %s{j}, %t{j}")
lines += ["  }", "}"]
print("\n".join(lines))
