# Writes one kernel per misuse of `start` (tests/lit/errors/accumulate_start.test).
import sys

BODY = {
    # a number where the loop variable goes
    "number": '%mm = matmul %acc <- %a, %b {accumulate, start = 0}',
    # start without accumulate
    "plain": '%mm = matmul %acc <- %a, %b {start = "%k"}',
    # a loop that does not enclose the matmul
    "outside": '%mm = matmul %acc <- %a, %b {accumulate, start = "%j"}',
    # the accumulator moves with the start loop
    "moves": '%mm = matmul %acc[0:128, %k*128 : %k*128 + 128] <- %a, %b {accumulate, start = "%k"}',
}
print('kernel @k target = "trn2" {')
print("  tensor %a   : sbuf[128, 128] bf16")
print("  tensor %b   : sbuf[128, 128] bf16")
print("  tensor %acc : psum[128, 512] f32")
print("  loop %j = 0 to 2 {")
print("  }")
print("  loop %k = 0 to 4 {")
print("    " + BODY[sys.argv[1]])
print("  }")
print("}")
