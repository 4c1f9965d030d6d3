#!/usr/bin/env python3
"""The issue-43 size targets: CPU time and peak RSS of `tandem opt` and `tandem sim` on kernels
of 100k instructions (docs/performance.md, "Targets"). Each run is its own child process; its
CPU time (user + system) and peak RSS come from wait4's rusage, and each row prints them
against the target as a ratio (figure / target: at most 1.0 meets it). A bench, never a test:
the figures move with the host's load.

    python3 bench/large_kernels.py [--tandem build/bin/tandem] [--base OTHER_TANDEM] [--n 100000]
                                   [--only NAME] [--keep DIR]

With --base, each row runs the base binary first and then --tandem, one after the other, so
that a change is measured against its base under the same load; the base's rows say "base".

The kernels (N instructions each):
  tiles-1B     one loop of 4 iterations whose body holds N/2 load/compute pairs, each on its own
               128x1 u8 SBUF tile (a tile of 1 byte per partition: rotation runs out of SBUF)
  flat         one loop of 4 iterations, N/3 load/activation/save triples on 8 reused tiles
  nested       an outer loop of 4 iterations around N/3 inner loops of 4 iterations, one
               load/activation/save triple each on its own tile
  siblings     N/4 sibling loops of 4 iterations, each loading a column into its own tile, two
               activations on it and a save (sched_bench's family (e))
  siblings-2   N/2 sibling loops of 2 iterations, a load and a save each (the `tandem sim`
               memory case: one loop per two instructions)
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

OPT_CPU_S, OPT_MB = 1.0, 200.0
SIM_MB = 200.0


def tiles_1b(n):
    g = n // 2
    o = [f'kernel @tiles_1b target = "trn2" {{', f'  tensor %X : dram[128, {g * 4}] u8']
    for j in range(g):
        o += [f'  tensor %t{j} : sbuf[128, 1] u8', f'  tensor %s{j} : sbuf[128, 1] u8']
    o.append('  loop %i = 0 to 4 {prefetch_one_iteration_ahead} {')
    for j in range(g):
        o += [f'    %ld{j} = load %t{j} <- %X[0:128, %i*{g} + {j} : %i*{g} + {j + 1}]',
              f'    %ad{j} = tensor_tensor %s{j} <- %s{j}, %t{j}']
    return o + ['  }', '}']


def flat(n):
    o = ['kernel @flat target = "trn2" {', '  tensor %X : dram[128, 1048576] bf16',
         '  tensor %Y : dram[128, 1048576] bf16']
    for t in range(8):
        o += [f'  tensor %t{t} : sbuf[128, 128] bf16', f'  tensor %u{t} : sbuf[128, 128] bf16']
    o.append('  loop %i = 0 to 4 {')
    for j in range(n // 3):
        t, col = j % 8, (j * 128) % 1048576
        o += [f'    load %t{t} <- %X[0:128, {col}:{col + 128}]', f'    activation %u{t} <- %t{t}',
              f'    save %Y[0:128, {col}:{col + 128}] <- %u{t}']
    return o + ['  }', '}']


def nested(n):
    m = n // 3
    o = ['kernel @nested target = "trn2" {', f'  tensor %X : dram[128, {4 * m}] bf16',
         f'  tensor %Y : dram[128, {4 * m}] bf16']
    for j in range(m):
        o += [f'  tensor %t{j} : sbuf[128, 1] bf16', f'  tensor %u{j} : sbuf[128, 1] bf16']
    o.append('  loop %o = 0 to 4 {')
    for j in range(m):
        o += [f'    loop %i{j} = 0 to 4 {{', f'      load %t{j} <- %X[0:128, %o*{m} + {j} : %o*{m} + {j + 1}]',
              f'      activation %u{j} <- %t{j}', f'      save %Y[0:128, %o*{m} + {j} : %o*{m} + {j + 1}] <- %u{j}',
              '    }']
    return o + ['  }', '}']


def siblings(n):
    loops = n // 4
    o = ['kernel @siblings target = "trn2" {', '  tensor %X : dram[128, 4] bf16']
    o += [f'  tensor %t{j} : sbuf[128, 1] bf16' for j in range(loops)]
    for j in range(loops):
        o += [f'  loop %i{j} = 0 to 4 {{', f'    load %t{j} <- %X[0:128, %i{j} : %i{j} + 1]',
              f'    activation %t{j} <- %t{j}', f'    activation %t{j} <- %t{j}',
              f'    save %X[0:128, %i{j} : %i{j} + 1] <- %t{j}', '  }']
    return o + ['}']


def siblings_2(n):
    loops = n // 2
    o = ['kernel @siblings_2 target = "trn2" {', '  tensor %X : dram[128, 2] bf16']
    o += [f'  tensor %t{j} : sbuf[128, 1] bf16' for j in range(loops)]
    for j in range(loops):
        o += [f'  loop %i{j} = 0 to 2 {{', f'    load %t{j} <- %X[0:128, %i{j} : %i{j} + 1]',
              f'    save %X[0:128, %i{j} : %i{j} + 1] <- %t{j}', '  }']
    return o + ['}']


KERNELS = {'tiles-1B': tiles_1b, 'flat': flat, 'nested': nested, 'siblings': siblings, 'siblings-2': siblings_2}
# What runs on each kernel: (label, arguments after the kernel file, CPU target s or None, MB target).
OPT = [('opt default', ['opt', '--passes=default', '-o', os.devnull], OPT_CPU_S, OPT_MB),
       ('opt auto', ['opt', '--passes=auto', '-o', os.devnull], OPT_CPU_S, OPT_MB)]
SIM = [('sim --json', ['sim', '--json'], None, SIM_MB), ('sim', ['sim'], None, SIM_MB)]
RUNS = {'tiles-1B': OPT, 'flat': OPT, 'nested': OPT, 'siblings': OPT + SIM, 'siblings-2': SIM}


def run(cmd):
    """CPU seconds (user + system), peak RSS in MB and exit status of one child."""
    with open(os.devnull, 'w') as null:
        p = subprocess.Popen(cmd, stdout=null, stderr=null)
        _, status, ru = os.wait4(p.pid, 0)
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0, os.waitstatus_to_exitcode(status)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--tandem', default='build/bin/tandem')
    ap.add_argument('--base', help='another tandem binary, run before --tandem on each row')
    ap.add_argument('--n', type=int, default=100000, help='instructions per kernel')
    ap.add_argument('--only', action='append', choices=sorted(KERNELS), help='run only this kernel (repeatable)')
    ap.add_argument('--keep', help='write the generated kernels to this directory')
    a = ap.parse_args()
    os.environ.setdefault('SYSTEMC_DISABLE_COPYRIGHT_MESSAGE', '1')
    out = a.keep or tempfile.mkdtemp(prefix='large_kernels.')
    os.makedirs(out, exist_ok=True)
    print(f'{a.tandem}, {a.n} instructions per kernel; CPU s = user + system of the child; '
          f'ratio = figure / target (<= 1 meets it)')
    print(f'{"kernel":<11} {"run":<16} {"CPU s":>7} {"target":>6} {"ratio":>6} {"peak MB":>8} {"target":>6} '
          f'{"ratio":>6}  exit')
    failed = False
    for name in a.only or KERNELS:
        path = os.path.join(out, name + '.kir')
        with open(path, 'w') as f:
            f.write('\n'.join(KERNELS[name](a.n)) + '\n')
        for label, args, cpu_target, mb_target in RUNS[name]:
            for binary, tag in ([(a.base, ' base')] if a.base else []) + [(a.tandem, '')]:
                cpu, mb, rc = run([binary, args[0], path] + args[1:])
                failed |= rc != 0
                cpu_cols = (f'{cpu_target:6.1f} {cpu / cpu_target:6.2f}' if cpu_target else f'{"-":>6} {"-":>6}')
                print(f'{name:<11} {label + tag:<16} {cpu:7.3f} {cpu_cols} {mb:8.1f} {mb_target:6.0f} '
                      f'{mb / mb_target:6.2f}  {rc}')
                sys.stdout.flush()
    if not a.keep:
        for f in os.listdir(out):
            os.remove(os.path.join(out, f))
        os.rmdir(out)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
