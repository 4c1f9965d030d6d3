"""Eight program instances of a 128x128x512 matmul, one after another (queue_order_straight_line.test)."""
print('kernel @spmd target = "trn2" {')
print('  tensor %A : dram[1024, 128] bf16')
print('  tensor %B : dram[128, 512] bf16')
print('  tensor %C : dram[1024, 512] bf16')
for i in range(8):
    print(f'  tensor %a{i} : sbuf[128, 128] bf16')
    print(f'  tensor %b{i} : sbuf[128, 512] bf16')
    print(f'  tensor %p{i} : psum[128, 512] f32')
    print(f'  tensor %o{i} : sbuf[128, 512] bf16')
for i in range(8):
    print(f'  %la{i} = load %a{i} <- %A[{128 * i}:{128 * i + 128}, 0:128]')
    print(f'  %lb{i} = load %b{i} <- %B')
    print(f'  %mm{i} = matmul %p{i} <- %a{i}, %b{i}')
    print(f'  %cp{i} = tensor_copy %o{i} <- %p{i}')
    print(f'  %st{i} = save %C[{128 * i}:{128 * i + 128}, 0:512] <- %o{i}')
print('}')
