# Writes a kernel of N nested loops of TRIPS iterations each, one instruction innermost, to
# stdout (usage: nest.py N TRIPS).
import sys

n, trips = int(sys.argv[1]), int(sys.argv[2])
print('kernel @nest target = "trn2" {\n  tensor %t : sbuf[128, 256] f32')
print("".join("loop %%i%d = 0 to %d {\n" % (j, trips) for j in range(n)) + "memset %t {value = 0}\n" + "}\n" * n + "}")
