"""NKI's direct allocation: `nki.compiler.sbuf/psum.mod_alloc` and `.alloc(func)` place a tensor's
logical tiles; logical tiles placed at one location share one physical tile, and the tensor
keeps the bytes its locations span (`address`, `extent`) for the whole kernel.

The kernels here are written for these tests."""
import os
import subprocess
import sys
import textwrap

import tandem


def run(root, *args):
    script = os.path.join(root, "python", "tandem-nki")
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True)


def kernel_file(tmp_path, name, source):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def body(text):
    return [l.strip() for l in text.splitlines() if l.strip() and not l.strip().startswith(("tensor ", "kernel "))
            and l.strip() != "}"]


def tensors(text):
    return [l.strip() for l in text.splitlines() if l.strip().startswith("tensor ")]


HEADER = """
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.compiler as ncc
"""

DOUBLE_BUFFERED_PSUM = HEADER + """
@nki.jit
def exp_of_products(a, b):
    out = nl.ndarray((128, 2048), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    ps = nl.ndarray((4, nl.par_dim(128), 512), dtype=nl.float32,
                    buffer=ncc.psum.mod_alloc(base_bank=2, num_bank_tiles=(2,)))
    res = nl.ndarray((nl.par_dim(128), 2048), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(4):
        ps[i] = nisa.nc_matmul(x, y[:, nl.ds(i * 512, 512)])
        res[:, nl.ds(i * 512, 512)] = nl.exp(ps[i])
    nl.store(out, res)
    return out
"""


def test_psum_mod_alloc_shares_banks_modulo(root, tmp_path):
    # Four logical tiles in two banks (NKI's double buffering): the tensor has two physical
    # tiles, block i is tile i % 2, and it keeps banks 2 and 3 (bytes 4096 to 8192). `i % 2`
    # needs each index's value, so the loop runs concretely and stays unrolled.
    path = kernel_file(tmp_path, "psum_mod.py", DOUBLE_BUFFERED_PSUM)
    p = run(root, str(path), "--shapes", "128x128,128x2048", "--no-src")
    assert p.returncode == 0, p.stderr
    assert "tensor %ps : psum[128, 2, 512] f32 {address = 4096, extent = 4096}" in tensors(p.stdout)
    matmuls = [l.split(" <- ")[0] for l in body(p.stdout) if " matmul " in l]
    assert matmuls == ["%mm0 = matmul %ps[0:128, 0, 0:512]", "%mm1 = matmul %ps[0:128, 1, 0:512]",
                       "%mm2 = matmul %ps[0:128, 0, 0:512]", "%mm3 = matmul %ps[0:128, 1, 0:512]"]
    assert "loop unrolled (4 iterations): an index of %ps is not affine" in p.stderr


CUSTOM_FUNCTION = HEADER + """
import functools


def by_column(banks, idx, pdim_size, fdim_size):
    row, column = idx
    return banks[column % 2], 0, 0


@nki.jit
def columns(a, b):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    ps = nl.ndarray((3, 2, nl.par_dim(128), 512), dtype=nl.float32,
                    buffer=ncc.psum.alloc(functools.partial(by_column, banks=(0, 1))))
    res = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
    for r in nl.affine_range(3):
        for c in nl.affine_range(2):
            ps[r, c] = nisa.nc_matmul(x, y)
            res[...] = nl.exp(ps[r, c])
    nl.store(out, res)
    return out
"""


def test_alloc_function_places_each_logical_tile(root, tmp_path):
    # The function ignores the row: every row shares the two column tiles, so the row index is
    # always 0 and the column index its own; both loops stay loops. NKI passes the function its
    # arguments by name, so a partial that binds its first parameter works.
    path = kernel_file(tmp_path, "psum_func.py", CUSTOM_FUNCTION)
    p = run(root, str(path), "--shapes", "128x128,128x512", "--no-src")
    assert p.returncode == 0, p.stderr
    assert "tensor %ps : psum[128, 1, 2, 512] f32 {address = 0, extent = 4096}" in tensors(p.stdout)
    assert "%mm0 = matmul %ps[0:128, 0, %c, 0:512] <- %x, %y" in body(p.stdout)
    assert "unrolled" not in p.stderr


RUNNING_ADDRESS = HEADER + """
class Stack:
    def __init__(self):
        self.top = 0

    def take(self, nbytes):
        addr = self.top
        self.top += nbytes
        return ncc.sbuf.mod_alloc(base_addr=addr)


stack = Stack()


@nki.jit
def staged(a):
    out = nl.ndarray((2, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    keep = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=stack.take(2048))
    nl.store(out[0], nl.load(a[0]))
    for s in nl.sequential_range(2):
        if s == 0:
            t = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=stack.take(2048))
            t[...] = nl.load(a[s])
            nl.store(out[s], t)
        else:
            u = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=stack.take(2048))
            u[...] = nl.load(a[s])
            keep[...] = nl.exp(u)
            nl.store(out[s], keep)
    return out
"""


def test_addresses_are_those_of_one_run_of_the_kernel(root, tmp_path):
    # The `if` on the loop index makes the loop concrete: the kernel runs again, and its body
    # once per iteration. The file-level allocator starts from 0 in every run, and a statement
    # in the loop places where its first run did, as NKI traces a loop's body once: %keep at 0,
    # %t at 2048 and %u at 4096.
    path = kernel_file(tmp_path, "stack.py", RUNNING_ADDRESS)
    p = run(root, str(path), "--shapes", "2x128x512:f32", "--no-src")
    assert p.returncode == 0, p.stderr
    placed = [t for t in tensors(p.stdout) if "address" in t]
    assert placed == ["tensor %keep : sbuf[128, 512] f32 {address = 0, extent = 2048}",
                      "tensor %t : sbuf[128, 512] f32 {address = 2048, extent = 2048}",
                      "tensor %u : sbuf[128, 512] f32 {address = 4096, extent = 2048}"]


def test_placed_tensors_share_their_banks_in_simulation(tmp_path):
    # Two tensors placed on the same seven banks and one on the eighth fit PSUM, though their
    # own sizes, each in whole banks, would need ten.
    def kernel(a, b):
        import tandem.nki.compiler as ncc
        import tandem.nki.isa as nisa
        import tandem.nki.language as nl
        x = nl.load(a)
        y = nl.load(b)
        qk = nl.ndarray((7, nl.par_dim(128), 512), dtype=nl.float32,
                        buffer=ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(7,)))
        sc = nl.ndarray((7, nl.par_dim(128), 128), dtype=nl.float32,
                        buffer=ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(7,)))
        acc = nl.ndarray((nl.par_dim(128), 128), dtype=nl.float32, buffer=ncc.psum.mod_alloc(base_bank=7))
        o = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
        for j in nl.affine_range(7):
            qk[j] = nisa.nc_matmul(x, y)
            sc[j] = nisa.nc_matmul(x, x)
        acc[...] = nisa.nc_matmul(x, x)
        for j in nl.affine_range(7):
            o[...] = nl.exp(qk[j])
            o[:, 0:128] = nl.exp(sc[j])
        o[:, 0:128] = nl.exp(acc)

    result = tandem.simulate(kernel, (128, 128), (128, 512), hw="trn2", passes="none")
    assert result.total_ns > 0
    text = tandem.trace(kernel, (128, 128), (128, 512), source_attrs=False).text
    assert "tensor %qk : psum[128, 7, 512] f32 {address = 0, extent = 14336}" in text
    assert "tensor %sc : psum[128, 7, 128] f32 {address = 0, extent = 12800}" in text
    assert "tensor %acc : psum[128, 128] f32 {address = 14336, extent = 512}" in text


def test_bad_directive_arguments_are_located_errors(root, tmp_path):
    path = kernel_file(tmp_path, "bad.py", HEADER + """
@nki.jit
def bad(a):
    t = nl.ndarray((4, nl.par_dim(128), 512), dtype=nl.float32,
                   buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(0,)))
    t[0] = nl.load(a)
    return t
""")
    p = run(root, str(path), "--shapes", "128x512:f32")
    assert p.returncode == 1
    assert p.stderr.strip().splitlines() == [
        f"{path}:9:27: error: mod_alloc: the numbers of tiles must be a tuple of positive integers, found (0,)"]
