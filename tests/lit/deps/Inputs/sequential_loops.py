# N sequential loops (argv[1]), each loading a slice of %X, computing and saving it back
# (fuzz reproducer 11): no single save covers %X, so every loop's accesses overlap every
# earlier loop's.
import sys
n = int(sys.argv[1])
print('kernel @k target = "trn2" {\n  tensor %X : dram[128, 1024] f32\n  tensor %t : sbuf[128, 256] f32')
for j in range(n):
    print(f"  loop %i{j} = 0 to 4 {{\n    %la{j} = load %t <- %X[0:128, %i{j}*256 : %i{j}*256 + 256]\n"
          f"    %ac{j} = activation %t <- %t {{func = \"exp\"}}\n    %st{j} = save %X[0:128, %i{j}*256 : %i{j}*256 + 256] <- %t\n  }}")
print("}")
