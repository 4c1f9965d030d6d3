"""Kernel files as published: NKI's own imports and decorators, launch grids, lists of tiles,
the ISA calls public kernels use, and errors that are one located line, never a traceback.

The kernels here are written for these tests, in the shapes public NKI kernels take."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

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


def line_of(path, marker):
    return next(i + 1 for i, l in enumerate(path.read_text().splitlines()) if marker in l)


OLD_API = """
import numpy as np
import torch
from torch_xla.core import xla_model as xm
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.typing as nt
import neuronxcc.nki.compiler as ncc
from neuronxcc.nki.language import par_dim


@ncc.skip_middle_end_transformations
@nki.jit(additional_compile_opt="--fast")
def scale_rows(a: nt.tensor, b: nt.tensor[[256, 512], nl.float32]):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        t = nl.ndarray((par_dim(128), 512), dtype=a.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
        u = nl.multiply(t, 2.0)
        nl.store(out[i * 128:(i + 1) * 128, :], value=u)
    return out


if __name__ == "__main__":
    x = torch.rand((256, 512))
    print(scale_rows(x, x))

y = scale_rows(np.zeros((256, 512)), np.zeros((256, 512)))  # the file's own test code
"""


def test_old_api_file_as_published(root, tmp_path):
    # neuronxcc.nki and its modules, annotations, compiler directives and allocation buffers,
    # a framework that is not installed, and a call of the kernel at import: all accepted.
    path = kernel_file(tmp_path, "scale.py", OLD_API)
    p = run(root, f"{path}:scale_rows", "--shapes", "256x512,256x512", "--no-src")
    assert p.returncode == 0, p.stderr
    assert body(p.stdout) == [
        "loop %i = 0 to 2 {",
        "%ld0 = load %t <- %a[%i*128 : %i*128 + 128, 0:512]",
        '%ts0 = tensor_scalar %u <- %t {op = "multiply", scalar = 2.0}',
        "%st0 = save %out[%i*128 : %i*128 + 128, 0:512] <- %u",
    ]
    assert "Traceback" not in p.stderr


NEW_API = """
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def hoisted(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    lhs_tiles = []
    for k in nl.affine_range(K // 128):
        t = nl.ndarray((128, M), dtype=lhsT.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=lhsT[k * 128:(k + 1) * 128, :])
        lhs_tiles.append(t)
    for n in nl.affine_range(N // 512):
        acc = nl.ndarray((M, 512), dtype=nl.float32, buffer=nl.psum)
        for k in nl.affine_range(K // 128):
            r = nl.ndarray((128, 512), dtype=rhs.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=r, src=rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
            nisa.nc_matmul(dst=acc, stationary=lhs_tiles[k], moving=r)
        o = nl.ndarray((M, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=o, src=acc)
        nisa.dma_copy(dst=result[:, n * 512:(n + 1) * 512], src=o)
    return result
"""


def test_new_api_list_of_tiles_becomes_a_block_dimension(root, tmp_path):
    # The newer `nki` package; a Python list filled by one loop and indexed by another's index:
    # both loops run concretely and roll back up, the list's tiles one tensor with a block
    # dimension of 4 (K / 128), as an explicit nl.ndarray((4, par_dim(128), M)) would trace.
    path = kernel_file(tmp_path, "hoisted.py", NEW_API)
    p = run(root, str(path), "--shapes", "512x128,512x1024", "--no-src")
    assert p.returncode == 0, p.stderr
    assert "tensor %t : sbuf[128, 4, 128] bf16" in p.stdout
    assert body(p.stdout) == [
        "loop %k = 0 to 4 {",
        "%ld0 = load %t[0:128, %k, 0:128] <- %lhsT[%k*128 : %k*128 + 128, 0:128]",
        "loop %n = 0 to 2 {",
        "loop %k_2 = 0 to 4 {",
        "%ld4 = load %r <- %rhs[%k_2*128 : %k_2*128 + 128, %n*512 : %n*512 + 512]",
        '%mm0 = matmul %acc <- %t[0:128, %k_2, 0:128], %r {accumulate, start = "%k_2"}',
        "%cp0 = tensor_copy %o <- %acc",
        "%st0 = save %result[0:128, %n*512 : %n*512 + 512] <- %o",
    ]


SPMD = """
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def add_tile(a, b):
    c = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.program_id(0) * 128
    y = nl.program_id(axis=1) * 512
    assert nl.num_programs(1) == 2 and nl.program_ndim() == 2
    s = nl.add(nl.load(a[x:x + 128, y:y + 512]), nl.load(b[x:x + 128, y:y + 512]))
    nl.store(c[x:x + 128, y:y + 512], value=s)
    return c


def add(a, b):
    return add_tile[a.shape[0] // 128, a.shape[1] // 512](a, b)
"""


def test_spmd_grid_runs_each_program_instance(root, tmp_path):
    # kernel[2, 2] from a caller, or --grid 2x2: four program instances one after another on the
    # model's one core, all writing the one output the kernel allocates.
    path = kernel_file(tmp_path, "spmd.py", SPMD)
    for args in ([f"{path}:add"], [f"{path}:add_tile", "--grid", "2x2"]):
        p = run(root, *args, "--shapes", "256x1024,256x1024", "--no-src")
        assert p.returncode == 0, p.stderr
        assert p.stdout.startswith('kernel @add') and '{spmd_grid = "2x2", spmd = "sequential", spill}' in p.stdout
        assert p.stdout.count("tensor %c : dram[256, 1024] bf16") == 1
        saves = [l for l in body(p.stdout) if l.startswith("%st")]
        assert [s.split(" <- ")[0].split("save ")[1] for s in saves] == [
            "%c[0:128, 0:512]", "%c[0:128, 512:1024]", "%c[128:256, 0:512]", "%c[128:256, 512:1024]"]
        assert "one after another on one core" in p.stderr


def test_isa_calls_of_public_kernels():
    import tandem.nki.isa as nisa
    import tandem.nki.language as nl

    def k(X, W):
        x = nl.load(X)
        r = nisa.reciprocal(x)
        stats = nisa.bn_stats(x)
        mv = nisa.bn_aggr(stats)
        s = nl.ndarray((128, 1), nl.float32)
        t = nisa.tensor_scalar_reduce(data=x, op0=nl.multiply, operand0=0.5, reduce_op=nl.add, reduce_res=s)
        u = nisa.scalar_tensor_tensor(data=x, op0=nl.multiply, operand0=2.0, op1=nl.add, operand1=r)
        wt = nl.load_transpose2d(W)
        c = nl.shared_constant(np_like((128, 64)), dtype=nl.float32)
        tp = nisa.nc_matmul(x[:, 0:128], x[:, 0:128], is_transpose=True)

    text = tandem.trace(k, (128, 512), (64, 128), dtype="f32", source_attrs=False).text
    assert body(text) == [
        "%ld0 = load %x <- %X",
        '%ts0 = tensor_scalar %r <- %x on dve {op = "reciprocal"}',
        '%red0 = tensor_reduce %stats <- %x on dve {op = "bn_stats"}',
        '%red1 = tensor_reduce %mv <- %stats on dve {op = "bn_aggr"}',
        '%ts1 = tensor_scalar %t, %s <- %x on dve {op = "multiply", reduce_op = "add", nki = "tensor_scalar_reduce", '
        'scalar = 0.5}',
        '%tt0 = tensor_tensor %u <- %x, %r on dve {op = "multiply", op1 = "add", nki = "scalar_tensor_tensor", '
        'scalar = 2.0}',
        "%ld1 = load %wt <- %W {transpose}",
        "%mm0 = matmul %tp <- %x[0:128, 0:128], %x[0:128, 0:128] {is_transpose}",
    ]
    assert "tensor %stats : sbuf[128, 6] f32" in text and "tensor %mv : sbuf[128, 2] f32" in text
    assert "tensor %wt : sbuf[128, 64] f32" in text and "tensor %c : dram[128, 64] f32" in text


class np_like:
    """An array's shape and dtype, as nl.shared_constant reads them."""

    def __init__(self, shape):
        self.shape = shape


def test_numpy_takes_nki_dtypes():
    np = pytest.importorskip("numpy")
    import tandem.nki.language as nl

    assert np.dtype(nl.float32) == np.float32 and np.dtype(nl.bfloat16).itemsize == 2
    assert nl.float32.max == np.finfo(np.float32).max and nl.finfo(nl.bfloat16).min < -3e38
    assert nl.sizeinbytes(nl.float8_e4m3) == 1


ERRORS = """
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import torch


@nki.jit
def two(a, b):
    assert a.shape[1] == 512, "columns must be 512"  # E:assert
    return nl.load(a)


@nki.jit
def uses_torch(a):
    t = nl.load(a)
    return torch.zeros(4)  # E:torch


@nki.jit
def like_a_shape(a):
    acc = nl.empty_like((128, 512), dtype=nl.float32)  # E:like
    return nl.load(a)


@nki.jit
def ds_one_argument(a):
    t = nl.load(a[nl.ds(0), :])  # E:ds


@nki.jit
def par_dim_dtype(a):
    t = nl.zeros((nl.par_dim(128, dtype=nl.float32), 512), dtype=nl.float32)  # E:par_dim


@nki.jit
def range_dtype(a):
    for i in nl.affine_range(4, dtype=nl.int32):  # E:range
        t = nl.load(a)


@nki.jit
def index_bitand(a):
    for i in nl.affine_range(4):
        t = nl.load(a[i & 1:(i & 1) + 128, :])  # E:bitand
"""


@pytest.mark.parametrize("args, marker, message", [
    (["two", "--shapes", "128x512"], "def two", "two: the kernel's arguments do not match its parameters (a, b): "
                                                  "missing a required argument: 'b'"),
    (["two", "--shapes", "128x256,128x256"], "E:assert", "two: the kernel raised AssertionError: columns must be 512"),
    (["uses_torch", "--shapes", "128x512"], "E:torch",
     "torch.zeros: torch.zeros is used, but torch is not installed"),
    (["like_a_shape", "--shapes", "128x512"], "E:like", "nl.empty_like: a needs a tile or tensor, got tuple (128, 512)"),
    (["ds_one_argument", "--shapes", "128x512"], "E:ds", "missing 1 required positional argument: 'size'"),
    (["par_dim_dtype", "--shapes", "128x512"], "E:par_dim", "unexpected keyword argument 'dtype'"),
    (["range_dtype", "--shapes", "128x512"], "E:range", "unexpected keyword argument 'dtype'"),
    (["index_bitand", "--shapes", "128x512"], "E:bitand", "unsupported operand type(s) for &"),
])
def test_kernel_errors_are_one_located_line(root, tmp_path, args, marker, message):
    path = kernel_file(tmp_path, "errors.py", ERRORS)
    p = run(root, f"{path}:{args[0]}", *args[1:])
    assert p.returncode == 1
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert p.stderr.startswith(f"{path}:{line_of(path, marker)}:")
    assert message in p.stderr


@pytest.mark.parametrize("decorator", ["nki.baremetal", "nki.benchmark(warmup=1, iters=2)", "nki.compiler.frobnicate"])
def test_a_decorator_is_traced_or_refused_at_its_line(root, tmp_path, decorator):
    """A decorator runs while the kernel file is imported: the tracer either accepts it or
    refuses it in one line at the decorator, never with a traceback."""
    path = kernel_file(tmp_path, "decorated.py", f"""
        import neuronxcc.nki as nki
        import neuronxcc.nki.language as nl

        @{decorator}
        def k(a):
            out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
            nl.store(out, value=nl.exp(nl.load(a)))
            return out
    """)
    p = run(root, f"{path}:k", "--shapes", "128x512")
    assert "Traceback" not in p.stderr
    if p.returncode == 0:
        assert p.stdout.startswith('kernel @k target = "trn2" {')
    else:
        assert p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert p.stderr.startswith(f"{path}:4:2: error: {decorator.split('(')[0]}: ")


def test_an_nki_module_tandem_lacks_fails_at_the_import(root, tmp_path):
    path = kernel_file(tmp_path, "lacks.py", """
        import neuronxcc.nki as nki
        from neuronxcc.nki.kernels.attention import flash_fwd
    """)
    p = run(root, str(path), "--shapes", "128x128")
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr.startswith(f"{path}:2:")
    assert "module neuronxcc.nki.kernels is not provided by the tandem tracer" in p.stderr


def test_simulate_kernel_says_what_to_call_instead():
    from tandem import nki

    with pytest.raises(tandem.TraceError, match="nki.simulate_kernel computes the kernel's values"):
        nki.simulate_kernel(lambda a: None, None)


def test_tiles_used_one_after_the_other_fit_in_sbuf(root, tmp_path):
    # Four 96 KiB-per-partition tiles, each dead before the next is loaded: together 384 KiB,
    # more than trn2's 208 KiB partitions, but never more than one live at once, so the kernel
    # simulates under default and auto (SBUF is allocated by live range).
    path = kernel_file(tmp_path, "big.py", """
        import neuronxcc.nki as nki
        import neuronxcc.nki.language as nl

        @nki.jit
        def big(a):
            out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
            for q in nl.static_range(4):
                t = nl.load(a[:, q * 24576:(q + 1) * 24576])
                nl.store(out[:, q * 24576:(q + 1) * 24576], value=nl.exp(t))
            return out
    """)
    for passes in ("default", "auto"):
        p = run(root, str(path), "--shapes", "128x98304:f32", "--simulate", "--passes", passes)
        assert p.returncode == 0, p.stderr
        assert p.stdout.startswith("kernel @big on trn2: ")


def test_nested_lists_of_tiles_take_a_block_dimension_each():
    # A list of lists filled by two nested loops and read, tile by tile, by two other loops:
    # one tensor with a block dimension per list, indexed by the loops that made and read it.
    import tandem.nki.isa as nisa
    import tandem.nki.language as nl

    def k(a, out):
        blocks = []
        for b in nl.affine_range(2):
            row = []
            for j in nl.affine_range(3):
                t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=a[:, (3 * b + j) * 64:(3 * b + j + 1) * 64])
                row.append(t)
            blocks.append(row)
        for b in nl.affine_range(2):
            for j in nl.affine_range(3):
                nl.store(out[:, (b + 2 * j) * 64:(b + 2 * j + 1) * 64], value=blocks[b][j])

    text = tandem.trace(k, (128, 384), (128, 384), source_attrs=False).text
    assert "tensor %t : sbuf[128, 2, 3, 64] bf16" in text
    assert body(text) == [
        "loop %b = 0 to 2 {",
        "loop %j = 0 to 3 {",
        "%ld0 = load %t[0:128, %b, %j, 0:64] <- %a[0:128, %j*64 + %b*192 : %j*64 + %b*192 + 64]",
        "loop %b_2 = 0 to 2 {",
        "loop %j_2 = 0 to 3 {",
        "%st0 = save %out[0:128, %j_2*128 + %b_2*64 : %j_2*128 + %b_2*64 + 64] <- %t[0:128, %b_2, %j_2, 0:64]",
    ]


def test_masks_columns_and_selects_of_public_kernels():
    # A mask that is a conjunction (with a comparison of integers Python already decided), a
    # (P,) reduction broadcast as a (P, 1) column, nl.zeros' lazy_initialization, and
    # nisa.affine_select on GpSimdE.
    import tandem.nki.isa as nisa
    import tandem.nki.language as nl

    def k(X, Y):
        i_p, i_f = nl.mgrid[0:128, 0:64]
        acc = nl.zeros((128, 64), nl.float32, lazy_initialization=True)
        x = nl.load(X[i_p, i_f], mask=(i_p < 128) & (2 < 3) & (i_f < 32))
        m = nl.max(x, axis=1)
        acc[...] = nl.subtract(x, m.broadcast_to((128, 64)))
        s = nisa.affine_select(pred=(i_p >= i_f), on_true_tile=acc, on_false_value=-1e9)
        nl.store(Y, value=s)

    assert body(tandem.trace(k, (128, 64), (128, 64), dtype="f32", source_attrs=False).text) == [
        "%ms0 = memset %acc {value = 0}",
        "%ld0 = load %x[0:128, 0:32] <- %X[0:128, 0:32]",
        '%red0 = tensor_reduce %m <- %x {op = "max"}',
        '%ts0 = tensor_scalar %acc <- %x, %m {op = "subtract"}',
        '%cp0 = tensor_copy %s <- %acc on pool {nki = "affine_select"}',
        "%st0 = save %Y <- %s",
    ]


def test_simulate_takes_a_kernel_file_as_published(tmp_path):
    # tandem.simulate("FILE.py:function", shapes...) loads the file as tandem-nki does.
    path = kernel_file(tmp_path, "scale_sim.py", OLD_API)
    r = tandem.simulate(f"{path}:scale_rows", (256, 512), (256, 512), passes="default")
    assert r.kernel == "scale_rows" and r.total_ns > 0 and r.races == 0


def test_isa_calls_of_the_api_reference():
    import tandem.nki.isa as nisa
    import tandem.nki.language as nl

    def k(X, P):
        x = nl.load(X)
        p = nl.load(P)
        d = nisa.dropout(x, prob=p)
        top = nisa.max8(src=x)
        where = nisa.nc_find_index8(data=x, vals=top)
        marked = nisa.nc_match_replace8(data=x, vals=top, imm=-1.0e9)
        nisa.nc_stream_shuffle(src=x[0:32, :], dst=x[0:32, :], shuffle_mask=[(i + 1) % 32 for i in range(32)])
        col = nisa.tensor_partition_reduce(nl.add, x)
        s = nl.ndarray((128, 512), nl.float32)
        nisa.select_reduce(dst=s, predicate=x, on_true=d, on_false=0.0)
        c = nl.ndarray((128, 512), nl.float32)
        nisa.tensor_scalar_cumulative(dst=c, src=x, op0=nl.multiply, op1=nl.add, imm0=2.0)
        r = nisa.range_select(on_true_tile=x, comp_op0=nl.greater_equal, comp_op1=nl.less, bound0=p, bound1=p)
        nisa.tensor_copy_predicated(dst=c, src=x, predicate=d)
        g = nisa.local_gather(x[:, 0:64], nisa.iota(2 * nl.arange(128)[:, None], dtype=nl.uint16), 4, 16)
        w = nl.where(d, x, 0.0)
        rnd = nl.rand((128, 512))
        eye = nl.shared_identity_matrix(128, dtype=nl.float32)

    text = tandem.trace(k, (128, 512), (128, 1), dtype="f32", source_attrs=False).text
    assert body(text) == [
        "%ld0 = load %x <- %X",
        "%ld1 = load %p <- %P",
        '%ts0 = tensor_scalar %d <- %x, %p on dve {op = "dropout", nki = "dropout"}',
        '%red0 = tensor_reduce %top <- %x on dve {op = "max8", nki = "max8"}',
        '%red1 = tensor_reduce %where <- %x, %top on dve {op = "find_index8", nki = "nc_find_index8"}',
        '%ts1 = tensor_scalar %marked <- %x, %top on dve {op = "match_replace8", nki = "nc_match_replace8", '
        'scalar = -1000000000.0}',
        '%cp0 = tensor_copy %x[0:32, 0:512] <- %x[0:32, 0:512] on dve {op = "stream_shuffle", '
        'nki = "nc_stream_shuffle"}',
        '%cp1 = tensor_copy %col <- %x on pool {op = "add", nki = "tensor_partition_reduce"}',
        '%tt0 = tensor_tensor %s <- %d, %x on dve {op = "select", nki = "select_reduce"}',
        '%ts2 = tensor_scalar %c <- %x on dve {op = "multiply", nki = "tensor_scalar_cumulative", op1 = "add"}',
        '%ts3 = tensor_scalar %r <- %x, %p, %p on dve {op = "range_select", nki = "range_select"}',
        '%tt1 = tensor_tensor %c <- %x, %d, %c on dve {op = "copy_predicated", nki = "tensor_copy_predicated"}',
        "%iota0 = iota %g.iota",
        '%cp2 = tensor_copy %g <- %x[0:128, 0:64], %g.iota on pool {op = "local_gather", nki = "local_gather"}',
        '%tt2 = tensor_tensor %w <- %d, %x on dve {op = "select", nki = "where"}',
        '%iota1 = iota %rnd on pool {nki = "rand"}',
    ]
    assert "tensor %top : sbuf[128, 8] f32" in text and "tensor %where : sbuf[128, 8] u32" in text
    assert "tensor %col : sbuf[1, 512] f32" in text and "tensor %g : sbuf[128, 64] f32" in text
    assert "tensor %g.iota : sbuf[128, 1] u16" in text and "tensor %eye : dram[128, 128] f32" in text


def test_gather_and_scatter_through_an_index_tile():
    # A gather reads any row its index names (`indirect_load DST <- SRC, INDEX`); a scatter is a
    # save that reads the index too, over the whole dimension it may write.
    import tandem.nki.isa as nisa
    import tandem.nki.language as nl

    def k(T):
        out = nl.ndarray((256, 512), dtype=T.dtype, buffer=nl.shared_hbm)
        ix, iy = nl.mgrid[0:64, 0:512]
        idx = nisa.iota(2 * nl.arange(64)[:, None], dtype=nl.int32)
        rows = nl.load(T[idx, iy])
        nl.store(out[idx, iy], value=rows)
        nisa.dma_copy(dst=out[idx, iy], src=rows, dst_rmw_op=nl.add, oob_mode=nisa.oob_mode.skip)
        return out

    text = tandem.trace(k, (128, 512), dtype="f32", source_attrs=False).text
    assert body(text) == [
        "%iota0 = iota %idx",
        "%g0 = indirect_load %rows <- %T, %idx",
        "%st0 = save %out <- %rows, %idx",
        "%st1 = save %out <- %rows, %idx",
    ]
    assert "tensor %rows : sbuf[64, 512] f32" in text
    result = tandem.simulate(k, (128, 512), dtype="f32")
    assert result.total_ns > 0


def test_broadcast_across_partitions_and_free_dimensions():
    # NKI broadcasts a one-partition operand across partitions and size-1 free dimensions along
    # the other operand's: one tensor_tensor of the broadcast shape.
    import tandem.nki.language as nl

    def k(A, B, C, M, W):
        a, b, c = nl.load(A), nl.load(B), nl.load(C)
        x = nl.add(a, b)  # [128, 512] + [1, 512]
        y = nl.add(c, b)  # [128, 1] + [1, 512]: both broadcast
        m, w = nl.load(M), nl.load(W)
        e = nl.equal(w, m)  # [128, 8, 1, 1] against [128, 8, 3, 3]
        row = nl.ndarray((512,), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(row, value=b)  # a [1, 512] tile into a 1-D HBM tensor

    text = tandem.trace(k, (128, 512), (1, 512), (128, 1), (128, 8, 3, 3), (128, 8, 1, 1), dtype="f32",
                        source_attrs=False).text
    lines = body(text)
    assert '%tt0 = tensor_tensor %x <- %a, %b {op = "add"}' in lines
    assert '%tt1 = tensor_tensor %y <- %c, %b {op = "add"}' in lines
    assert '%tt2 = tensor_tensor %e <- %w, %m {op = "is_equal"}' in lines
    assert "%st0 = save %row <- %b" in lines
    assert "tensor %x : sbuf[128, 512] f32" in text and "tensor %y : sbuf[128, 512] f32" in text
    assert "tensor %e : sbuf[128, 8, 3, 3] f32" in text

    def two_wide(A, B):
        nl.add(nl.load(A), nl.load(B))  # E:partitions

    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(two_wide, (128, 512), (64, 512))
    assert "only a one-partition operand broadcasts across partitions" in str(ei.value)


def test_loop_reduce_reads_what_it_writes():
    import tandem.nki.isa as nisa
    import tandem.nki.language as nl

    def k(A, B):
        acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        for j in nl.affine_range(4):
            p = nisa.nc_matmul(nl.load(A[:, j * 128:(j + 1) * 128]), nl.load(B))
            acc[...] = nl.loop_reduce(p, op=nl.add, loop_indices=[j], dtype=nl.float32)

    text = tandem.trace(k, (128, 512), (128, 512), dtype="bf16", source_attrs=False).text
    assert '%tt0 = tensor_tensor %acc <- %p on dve {accumulate, op = "add", nki = "loop_reduce"}' in body(text)


TOP_LEVEL = """
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def double(a, dtype=None):
    t = nl.load(a)
    out = nl.ndarray(a.shape, dtype=dtype or a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.multiply(t, 2.0))
    return out


result = nki.simulate(double)(np.ones((128, 512), np.float32))
print(result.shape)  # E:driver
"""


def test_driver_code_that_fails_after_the_kernel(tmp_path, root):
    # The file's own driver code runs at import; the kernel call returns nothing under Tandem, so
    # the line after it fails. The kernel was defined before: it traces, with a note.
    path = kernel_file(tmp_path, "driver.py", TOP_LEVEL)
    p = run(root, f"{path}:double", "--shapes", "128x512", "--param", "dtype=nl.float32")
    assert p.returncode == 0, p.stderr
    assert f"{path}:{line_of(path, 'E:driver')}:1: the file's top-level code stopped here (AttributeError" in p.stderr
    assert "tensor %out : dram[128, 512] f32" in p.stdout
    # A keyword argument named like an option of trace() (dtype) reaches the kernel.
    p = run(root, f"{path}:double", "--shapes", "128x512", "--param", "dtype=nl.bfloat16")
    assert p.returncode == 0 and "tensor %out : dram[128, 512] bf16" in p.stdout


def test_param_takes_tensors_and_numpy_names(tmp_path, root):
    path = kernel_file(tmp_path, "kw.py", """
        import neuronxcc.nki as nki
        import neuronxcc.nki.isa as nisa
        import neuronxcc.nki.language as nl


        @nki.jit
        def masked_add(a, op=None, b=None):
            out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
            nl.store(out, value=nisa.tensor_tensor(nl.load(a), nl.load(b), op=op))
            return out
        """)
    p = run(root, f"{path}:masked_add", "--shapes", "128x512", "--param", "op=np.add", "--param",
            "b=128x512:f32")
    assert p.returncode == 0, p.stderr
    assert "tensor %b : dram[128, 512] f32" in p.stdout and '{op = "add"' in p.stdout
    p = run(root, f"{path}:masked_add", "--shapes", "128x512", "--param", "op=np.nosuch")
    assert p.returncode == 2 and "--param 'op=np.nosuch': no such name" in p.stderr


def test_gather_with_indices_loaded_from_a_1d_tensor():
    # `ids[nl.arange(64)[:, None]]` of a 1-D tensor is a [64, 1] tile, as the grid is 2-D.
    import tandem.nki.language as nl

    def k(T, ids):
        i_p = nl.arange(64)[:, None]
        i_f = nl.arange(512)[None, :]
        idx = nl.load(ids[i_p])
        rows = nl.load(T[idx[i_p, 0], i_f])

    text = tandem.trace(k, (128, 512), (64,), dtype="f32", source_attrs=False).text
    assert "tensor %idx : sbuf[64, 1] f32" in text
    assert "%g0 = indirect_load %rows <- %T, %idx[0:64, 0]" in body(text)


def test_mx_calls_name_the_neuroncore_they_need():
    import tandem.nki.isa as nisa

    def k(X):
        nisa.quantize_mx(X)  # E:mx

    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(k, (128, 512))
    here = open(__file__).read().splitlines()
    assert ei.value.location.line == next(i + 1 for i, l in enumerate(here) if "# E:mx" in l)
    assert "nisa.quantize_mx is a NeuronCore-v4 (Trainium3) feature" in str(ei.value)


def test_reshape_of_a_whole_hbm_tensor_moves_elements():
    # HBM is row-major: a whole tensor reshaped before its first use takes the new shape; one
    # reshaped after it may only be returned; an on-chip tile is refused.
    import tandem.nki.language as nl

    def k(src):
        n, c, h, w = src.shape
        flat = src.reshape((n * c, h, w))
        out = nl.ndarray((n * c, h, w), dtype=src.dtype, buffer=nl.shared_hbm)
        t = nl.load(flat[0:128, 0, 0:8])
        nl.store(out[0:128, 0, 0:8], value=nl.mod(t, 3.0))
        return out.reshape((n, c, h, w))

    text = tandem.trace(k, (2, 64, 4, 8), dtype="f32", source_attrs=False).text
    assert "tensor %src : dram[128, 4, 8] f32" in text
    assert "%ld0 = load %t <- %src[0:128, 0, 0:8]" in body(text)
    assert '%ts0 = tensor_scalar %mod <- %t {op = "mod", scalar = 3.0}' in body(text)

    def uses_stale(src):
        flat = src.reshape((128, 32))
        nl.load(src)  # E:stale

    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(uses_stale, (2, 64, 32))
    assert "%src was reshaped to [128, 32]; this view of its former shape is stale" in str(ei.value)

    def on_chip(src):
        nl.load(src).reshape((64, 128))  # moves elements between partitions

    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(on_chip, (128, 2, 32))
    assert "traced only for a whole HBM tensor, not an on-chip tile" in str(ei.value)


def test_atomic_rmw_gather_flattened_and_par_dim_in_hbm():
    import tandem.nki.isa as nisa
    import tandem.nki.language as nl

    def k(T, D):
        out = nl.ndarray((2, nl.par_dim(128), 64), dtype=D.dtype, buffer=nl.shared_hbm)  # par_dim: no effect
        idx = nisa.iota(nl.arange(128)[:, None], dtype=nl.int32)
        nl.atomic_rmw(T[idx, nl.arange(64)[None, :]], value=nl.load(D), op=nl.add)
        d = nl.load(D)
        g = nl.gather_flattened(data=d, indices=nisa.iota(nl.arange(8)[None, :] * 2, dtype=nl.uint32))

    text = tandem.trace(k, (256, 64), (128, 64), dtype="f32", source_attrs=False).text
    assert "tensor %out : dram[2, 128, 64] f32" in text
    lines = body(text)
    assert '%st0 = save %T <- %D_sb, %idx {accumulate, nki = "atomic_rmw"}' in lines
    assert '%cp0 = tensor_copy %g <- %d, %g.iota on pool {op = "gather", nki = "gather_flattened"}' in lines


def test_transposing_hbm_access_moves_one_element_per_descriptor():
    # `out[row + f, p]`: the partition axis walks HBM's columns, so no two elements a partition
    # sends are adjacent in HBM: the save carries {elementwise} (a descriptor per element).
    import tandem.nki.language as nl

    def k(A, out):
        ip = nl.arange(64)[:, None]
        jf = nl.arange(128)[None, :]
        for i in nl.affine_range(2):
            t = nl.load(A[i * 128 + jf, ip])
            nl.store(out[i * 128 + jf, ip], value=t)

    text = tandem.trace(k, (256, 64), (256, 64), dtype="bf16", source_attrs=False).text
    lines = body(text)
    assert "%ld0 = load %t <- %A[%i*128 : %i*128 + 128, 0:64] {elementwise}" in lines
    assert "%st0 = save %out[%i*128 : %i*128 + 128, 0:64] <- %t {elementwise}" in lines
    assert "tensor %t : sbuf[64, 128] bf16" in text

    def plain(A, out):
        for i in nl.affine_range(2):
            nl.store(out[i * 128:i * 128 + 128, 0:64], value=nl.load(A[i * 128:i * 128 + 128, 0:64]))

    # 64 x 128 two-byte elements, one descriptor each, against one run per partition.
    slow = tandem.simulate(k, (256, 64), (256, 64), dtype="bf16")
    fast = tandem.simulate(plain, (256, 64), (256, 64), dtype="bf16")
    assert slow.total_ns > 2 * fast.total_ns

    def on_chip(A):
        t = nl.load(A)
        nl.copy(t[nl.arange(64)[None, :], nl.arange(128)[:, None]])

    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(on_chip, (128, 64))
    assert "the first grid axis indexes a later dimension" in str(ei.value)


def test_dynamic_source_index_reads_its_register_tile():
    # nisa.tensor_copy_dynamic_src: the column comes from a tile at run time, so the copy may
    # read any column (the dependence covers the dimension) and reads the offset's tile.
    import tandem.nki.isa as nisa
    import tandem.nki.language as nl

    def k(S, O):
        out = nl.ndarray((128, 16), dtype=S.dtype, buffer=nl.shared_hbm)
        s, o = nl.load(S), nl.load(O)
        res = nl.ndarray((128, 16), dtype=S.dtype, buffer=nl.sbuf)
        ix, iy = nl.mgrid[0:128, 0:1]
        for c in nl.affine_range(16):
            res[ix, c] = nisa.tensor_copy_dynamic_src(s[ix, o[0, c] + iy])
        nl.store(out, value=res)

    text = tandem.trace(k, (128, 256), tandem.tensor((1, 16), "i32"), dtype="f32", source_attrs=False).text
    assert "%cp0 = tensor_copy %res[0:128, %c] <- %s[0:128, 0:256:[[1, 1]]], %o[0, %c]" in body(text)
    assert tandem.simulate(k, (128, 256), tandem.tensor((1, 16), "i32"), dtype="f32").total_ns > 0

    def on_partitions(S, O):
        s, o = nl.load(S), nl.load(O)
        nl.copy(s[o[0, 0] + nl.arange(1)[:, None], nl.arange(256)[None, :]])

    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(on_partitions, (128, 256), tandem.tensor((1, 16), "i32"))
    assert "a dynamic index (a tile) indexes a free dimension of an on-chip tile" in str(ei.value)


def test_row_major_mask_keeps_the_rows_it_touches():
    # `base + 512 * ix + iy < n` keeps a prefix of the elements in row-major order: the rows with
    # any kept element move, the partial last one whole.
    import tandem.nki.language as nl

    def k(A, n):
        out = nl.ndarray(A.shape, dtype=A.dtype, buffer=nl.shared_hbm)
        ix = nl.arange(128)[:, None]
        iy = nl.arange(512)[None, :]
        for i in nl.static_range(2):
            keep = i * 128 * 512 + 512 * ix + iy < n
            t = nl.load(A[i, ix, iy], mask=keep)
            nl.store(out[i, ix, iy], value=t, mask=keep)

    text = tandem.trace(k, (2, 128, 512), 70000, dtype="f32", source_attrs=False).text
    lines = body(text)
    # 70000 - 65536 = 4464 elements of the second tile: 8 full rows and a partial ninth.
    assert "%ld1 = load %t_2[0:9, 0:512] <- %A[1, 0:9, 0:512]" in lines
    assert "%ld0 = load %t <- %A[0, 0:128, 0:512]" in lines


def test_iota_over_an_mgrid_takes_the_whole_grid():
    # An nl.mgrid component is a dense array of the grid's shape, so iota of an expression over
    # two of its axes fills the whole grid.
    import tandem.nki.isa as nisa
    import tandem.nki.language as nl

    def k(A):
        g = nl.mgrid[0:128, 0:4, 0:3, 0:3]
        nisa.iota(3 * g.y + g.z, dtype=nl.uint32)

    text = tandem.trace(k, (128, 4), source_attrs=False).text
    assert "sbuf[128, 4, 3, 3] u32" in text


def test_transpose_result_assigned_to_sbuf_goes_through_psum():
    # TensorE writes PSUM only: `sbuf[...] = nisa.nc_transpose(x)` is the transpose into PSUM
    # and the copy NKI inserts, not a transpose writing SBUF.
    import tandem.nki.isa as nisa
    import tandem.nki.language as nl

    def k(A):
        a = nl.load(A)
        t = nl.ndarray((128, 128), dtype=A.dtype, buffer=nl.sbuf)
        t[...] = nisa.nc_transpose(a)
        m = nl.full((128, 128), dtype=nl.float32, buffer=nl.sbuf, fill_value=nl.finfo(nl.float32).min)

    lines = body(tandem.trace(k, (128, 128), dtype="f32", source_attrs=False).text)
    assert lines[1].startswith("%tp0 = transpose %") and " on pe" in lines[1]
    assert lines[2].startswith("%cp0 = tensor_copy %t <- %")
    assert lines[3] == '%ms0 = memset %m {value = -3.4028234663852886e+38}'


def test_param_builds_a_config_object_of_the_kernel_file(tmp_path, root):
    path = kernel_file(tmp_path, "cfg.py", """
        from dataclasses import dataclass
        import neuronxcc.nki as nki
        import neuronxcc.nki.language as nl


        @dataclass(frozen=True)
        class TileConfig:
            tile: int = 128
            scale: float = 1.0


        @nki.jit
        def scaled(a, config=None):
            out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
            for i in nl.affine_range(a.shape[0] // config.tile):
                t = nl.load(a[i * config.tile:(i + 1) * config.tile, :])
                nl.store(out[i * config.tile:(i + 1) * config.tile, :], value=nl.multiply(t, config.scale))
            return out
        """)
    p = run(root, f"{path}:scaled", "--shapes", "256x512", "--param", "config=TileConfig(tile=64, scale=0.5)")
    assert p.returncode == 0, p.stderr
    assert "loop %i = 0 to 4 {" in p.stdout and "scalar = 0.5" in p.stdout
    p = run(root, f"{path}:scaled", "--shapes", "256x512", "--param", "config=TileConfig(tile=len('ab'))")
    assert p.returncode == 2 and "the arguments of TileConfig(...) must be literals" in p.stderr
    p = run(root, f"{path}:scaled", "--shapes", "256x512", "--param", "config=TileConfig(size=3)")
    assert p.returncode == 2 and "TileConfig(...) raised TypeError" in p.stderr


def test_gpsimd_reads_psum_through_a_copy_and_tiles_keep_a_free_dimension():
    # GpSimdE cannot read PSUM: affine_select of a matmul result reads an SBUF copy of it, as
    # NKI inserts. `t[:, j]` of an on-chip [128, n] tile is [128, 1], as in NKI.
    import tandem.nki.isa as nisa
    import tandem.nki.language as nl

    def k(A, B):
        a, b = nl.load(A), nl.load(B)
        acc = nl.ndarray((128, 4), dtype=nl.float32, buffer=nl.sbuf)
        for j in nl.affine_range(4):
            assert acc[:, j].shape == (128, 1)
            acc[:, j][:, 0]
        ps = nisa.nc_matmul(a, b)
        i_p, i_f = nl.mgrid[0:128, 0:512]
        nisa.affine_select(pred=(i_f - i_p >= 0), on_true_tile=ps, on_false_value=-1e9)

    lines = body(tandem.trace(k, (128, 128), (128, 512), dtype="bf16", source_attrs=False).text)
    assert lines[2].startswith("%mm0 = matmul %ps <-")
    assert lines[3] == "%cp0 = tensor_copy %copy <- %ps"
    assert "<- %copy on pool" in lines[4]


def test_whole_on_chip_tile_reshaped_across_free_dimensions():
    # Each partition holds its free elements in order, so a whole [128, 2, 512] tile is a
    # [128, 1024] view of the same bytes; part of a tile or a changed partition count is not.
    import tandem.nki.isa as nisa
    import tandem.nki.language as nl

    def k(A):
        out = nl.ndarray((128, 1024), dtype=A.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 2, 512), dtype=A.dtype, buffer=nl.sbuf)
        for j in nl.affine_range(2):
            t[:, j, :] = nl.load(A[:, j * 512:(j + 1) * 512])
        flat = t.reshape((128, 1024))
        nisa.dma_copy(dst=out[0:128, 0:1024], src=flat[0:128, 0:1024])

    lines = body(tandem.trace(k, (128, 1024), dtype="f32", source_attrs=False).text)
    assert lines[-1] == "%st0 = save %out <- %t"

    def part(A):
        t = nl.load(A)
        t[:, 0:256].reshape((128, 2, 128))

    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(part, (128, 512))
    assert "moves elements between dimensions" in str(ei.value)


def test_dma_transpose_of_a_gathered_3d_source():
    # nisa.dma_transpose permutes a 3-D source by (2, 1, 0); rows gathered through an index
    # tile make it an indirect load.
    import tandem.nki.isa as nisa
    import tandem.nki.language as nl

    def k(S, I):
        idx = nl.load(I)
        iy = nl.arange(4)[None, :, None]
        iz = nl.arange(128)[None, None, :]
        d = nisa.dma_transpose(S[idx[nl.arange(32)[:, None], 0], iy, iz], axes=(2, 1, 0))

    text = tandem.trace(k, (64, 4, 128), tandem.tensor((32, 1), "u32"), dtype="bf16", source_attrs=False).text
    assert "tensor %d : sbuf[128, 4, 32] bf16" in text
    assert "%g0 = indirect_load %d <- %S, %idx[0:32, 0] {transpose}" in body(text)

    def wrong_axes(S):
        nisa.dma_transpose(S, axes=(1, 0, 2))

    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(wrong_axes, (16, 4, 128))
    assert "a 3-D source is transposed by (2, 1, 0)" in str(ei.value)


def test_double_row_matmul_takes_two_rows_of_k_per_pe():
    # perf_mode double_row (NeuronCore-v3): [K, 2, M] x [K, 2, N] FP8 operands, one matmul
    # marked {double_row}, timed at twice the throughput.
    import tandem.nki.isa as nisa
    import tandem.nki.language as nl

    def k(A, B):
        a, b = nl.load(A), nl.load(B)
        out = nisa.nc_matmul(a, b, perf_mode=nisa.matmul_perf_mode.double_row)
        assert out.shape == (128, 512)

    text = tandem.trace(k, (128, 2, 128), (128, 2, 512), dtype="float8_e4m3", source_attrs=False).text
    assert body(text)[2] == "%mm0 = matmul %out <- %a, %b {double_row}"

    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(k, (128, 2, 128), (128, 2, 512), dtype="bf16")
    assert "double_row takes FP8 operands" in str(ei.value)
    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(k, (128, 2, 128), (128, 2, 512), dtype="float8_e4m3", target="trn1")
    assert "trn1 (NeuronCore-v2) has none" in str(ei.value)

    def flat(A, B):
        nisa.nc_matmul(nl.load(A), nl.load(B), perf_mode="double_row")

    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(flat, (128, 128), (128, 512), dtype="float8_e4m3")
    assert "double_row takes [K, 2, free] operands; the stationary is [128, 128]" in str(ei.value)


def test_isa_tensor_tensor_with_a_per_partition_column():
    # nisa.tensor_tensor of a [P, n] tile and a [P, 1] column broadcasts the column along the
    # free axis: the scalar form, reversed when the column comes first.
    import tandem.nki.isa as nisa
    import tandem.nki.language as nl

    def k(A, C):
        a, c = nl.load(A), nl.load(C)
        nisa.tensor_tensor(a, c, nl.multiply)
        nisa.tensor_tensor(c, a, nl.subtract)

    lines = body(tandem.trace(k, (128, 1024), (128, 1), dtype="f32", source_attrs=False).text)
    assert lines[2].startswith("%ts0 = tensor_scalar %") and '<- %a, %c {op = "multiply"}' in lines[2]
    assert '<- %a, %c {op = "subtract", reverse}' in lines[3]


def test_view_as_another_element_type():
    # tensor.view(dtype): the same type is the tensor itself; a whole HBM tensor not yet used
    # takes another type of the same size, a whole on-chip tile any type; anything else (a part
    # of a tile) is refused.
    import tandem.nki.language as nl

    def k(A, B):
        a = nl.load(A.view(nl.float8_e5m2))
        b = nl.load(B.view(nl.float8_e4m3))
        b[0:64, 0:32].view(nl.int8)

    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(k, (128, 64), (128, 64), dtype="float8_e5m2")
    assert "view of %b (nl.float8_e4m3) as nl.int8: traced only as a same-size type" in str(ei.value)

    def ok(A, B):
        nl.load(A.view(nl.float8_e5m2))
        nl.load(B.view(nl.float8_e4m3))

    text = tandem.trace(ok, (128, 64), (128, 64), dtype="float8_e5m2", source_attrs=False).text
    assert "tensor %A : dram[128, 64] f8" in text and "tensor %B : dram[128, 64] fp8" in text


def test_python_and_of_masks_keeps_what_nki_keeps():
    # NKI's masks are true as Python bools, so `a and b` traces as `b` and `a or b` as `a`;
    # the trace says so. `if` on such a comparison is still an error (it is neither).
    import tandem.nki.language as nl

    def k(X, Y):
        ix, iy = nl.mgrid[0:128, 0:64]
        x = nl.load(X[ix, iy], mask=(ix < 64 and iy < 32))
        nl.store(Y[ix, iy], value=x, mask=(ix < 64 or iy < 32))

    traced = tandem.trace(k, (128, 64), (128, 64), dtype="f32", source_attrs=False)
    assert body(traced.text) == ["%ld0 = load %x[0:128, 0:32] <- %X[0:128, 0:32]",
                                 "%st0 = save %Y[0:64, 0:64] <- %x[0:64, 0:64]"]
    assert [n.split(": ", 1)[1] for n in traced.notes] == [
        "`and` of two masks keeps the second only, as NKI traces it (`&` is the conjunction of masks)",
        "`or` of two masks keeps the first only, as NKI traces it (`&` is the conjunction of masks)"]

    def bad(X):
        ix, iy = nl.mgrid[0:128, 0:64]
        if ix < 64:
            nl.load(X[ix, iy])

    with pytest.raises(tandem.TraceError, match="used as a Python bool"):
        tandem.trace(bad, (128, 64), dtype="f32")


def test_kernel_in_a_package_imports_relatively(root, tmp_path):
    # A kernel file of a package (`from ..util.helpers import ...`) loads as part of it; a
    # helper's import of the compiler's internals loads, and would be an error only where used.
    pkg = tmp_path / "kernels"
    (pkg / "util").mkdir(parents=True)
    (pkg / "norm").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "util" / "__init__.py").write_text("")
    (pkg / "util" / "helpers.py").write_text(textwrap.dedent("""
        import neuronxcc.nki.language as nl
        from neuronxcc.nki.compiler.backends.neuron.tensor import local_tile

        def grid_size():
            return nl.num_programs(axes=0) if nl.program_ndim() else 1
        """))
    (pkg / "norm" / "constants.py").write_text("SCALE = 2.0\n")
    path = kernel_file(pkg / "norm", "scaled.py", """
        import neuronxcc.nki as nki
        import neuronxcc.nki.language as nl
        from ..util.helpers import grid_size
        from .constants import SCALE


        @nki.jit
        def scaled(a):
            out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
            assert grid_size() == 1
            nl.store(out, nl.multiply(nl.load(a), SCALE))
            return out
        """)
    p = run(root, f"{path}:scaled", "--shapes", "128x512", "--no-src")
    assert p.returncode == 0, p.stderr
    assert body(p.stdout)[1:] == ['%ts0 = tensor_scalar %multiply <- %a_sb {op = "multiply", scalar = 2.0}',
                                  "%st0 = save %out <- %multiply"]


def test_masked_view_on_chip_view_as_bytes_and_abs_operator():
    # `tile[mask]` masks the call it is an operand of, as the call's own `mask=` would; an
    # on-chip tile's bytes viewed as a narrower type is the same tile with more elements;
    # `op0=nl.abs` is an ISA operator.
    import tandem.nki.isa as nisa
    import tandem.nki.language as nl

    def k(X, Y, S):
        ix, iy = nl.mgrid[0:128, 0:64]
        x = nl.load(X)
        m = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        a = nisa.tensor_scalar_reduce(data=x[ix, iy][iy < 32], op0=nl.abs, operand0=0.0, reduce_op=nl.max,
                                      reduce_res=m)
        nl.store(Y[ix, iy], value=a, mask=(iy < 32))
        i4, j4 = nl.mgrid[0:128, 0:4]
        nisa.dma_copy(dst=S[i4, j4], src=m.view(nl.float8_e4m3)[i4, j4])

    lines = body(tandem.trace(k, (128, 64), (128, 64), tandem.tensor((128, 4), "fp8"), dtype="f32",
                              source_attrs=False).text)
    assert lines == [
        "%ld0 = load %x <- %X",
        '%ts0 = tensor_scalar %a[0:128, 0:32], %m <- %x[0:128, 0:32] on dve {op = "abs", reduce_op = "max", '
        'nki = "tensor_scalar_reduce", scalar = 0.0}',
        "%st0 = save %Y[0:128, 0:32] <- %a[0:128, 0:32]",
        "%st1 = save %S <- %m",
    ]


# NKI's direct allocation: `nki.compiler.sbuf/psum.mod_alloc` and `.alloc(func)` place a tensor's
# logical tiles; logical tiles placed at one location share one physical tile, and the tensor
# keeps the bytes its locations span (`address`, `extent`) for the whole kernel.

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


# A PSUM tensor larger than PSUM that loop nests pass on one block at a time: the nests are
# fused and the tensor holds one block (tandem.loop_fusion).

PASSED_ON_IN_PSUM = HEADER + """
@nki.jit
def row_shift(q, k):
    n = q.shape[1] // 128
    out = nl.ndarray((n, 128, 2048), dtype=nl.float32, buffer=nl.shared_hbm)
    qs = nl.load(q)
    ks = nl.load(k)
    s = nl.ndarray((n, 4, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
    for i in nl.affine_range(n):
        for j in nl.affine_range(4):
            s[i, j] = nisa.nc_matmul(qs[:, nl.ds(i * 128, 128)], ks[:, nl.ds(j * 512, 512)])
    top = nl.ndarray((nl.par_dim(128), n, 1), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(n):
        part = nl.ndarray((nl.par_dim(128), 4), dtype=nl.float32, buffer=nl.sbuf)
        for j in nl.affine_range(4):
            part[:, j] = nisa.tensor_reduce(op=nl.max, data=s[i, j], axis=1)
        top[:, i, :] = nisa.tensor_reduce(op=nl.max, data=part, axis=1)
    for i in nl.affine_range(n):
        row = nl.ndarray((nl.par_dim(128), 2048), dtype=nl.float32, buffer=nl.sbuf)
        for j in nl.affine_range(4):
            row[:, nl.ds(j * 512, 512)] = nisa.tensor_scalar(data=s[REVERSED], op0=nl.subtract,
                                                             operand0=top[:, i, :])
        nl.store(out[i], row)
    return out
"""


@pytest.mark.parametrize("block, fused", [("i, j", True), ("n - 1 - i, j", False)])
def test_nests_passing_on_an_oversized_psum_tensor_are_fused(root, tmp_path, block, fused):
    # 8 x 4 banks of scores (64 KiB per partition, PSUM has 16): fused, each iteration holds
    # its 4 banks, and the kernel simulates. Read in the reverse order, block i is needed after
    # block n-1-i was made: no fusion, and the allocator says what is live.
    source = PASSED_ON_IN_PSUM.replace("REVERSED", block)
    path = kernel_file(tmp_path, "shift.py", source)
    p = run(root, f"{path}:row_shift", "--shapes", "128x1024,128x2048", "--no-src")
    assert p.returncode == 0, p.stderr
    if fused:
        assert "tensor %s : psum[128, 4, 512] f32" in tensors(p.stdout)
        assert [l for l in body(p.stdout) if l.startswith("loop %i")] == ["loop %i = 0 to 8 {"]
        assert any(l.startswith("%mm0 = matmul %s[0:128, %j, 0:512] <- ") for l in body(p.stdout))
        assert ("fused so that %s fits PSUM (65536 bytes per partition, PSUM has 16384): it holds one block "
                "at a time (8192 bytes)") in p.stderr
    else:
        assert "tensor %s : psum[128, 8, 4, 512] f32" in tensors(p.stdout)
        assert "fused" not in p.stderr
    sim = run(root, f"{path}:row_shift", "--shapes", "128x1024,128x2048", "--simulate", "--passes", "default")
    assert (sim.returncode == 0) == fused, sim.stderr
    if not fused:
        assert "the tensors live in psum need 32 banks" in sim.stderr


def test_skip_middle_end_transformations_keeps_the_nests(root, tmp_path):
    source = PASSED_ON_IN_PSUM.replace("REVERSED", "i, j").replace(
        "@nki.jit", "@nki.jit\n@ncc.skip_middle_end_transformations")
    path = kernel_file(tmp_path, "shift.py", source)
    p = run(root, f"{path}:row_shift", "--shapes", "128x1024,128x2048", "--no-src")
    assert p.returncode == 0, p.stderr
    assert "tensor %s : psum[128, 8, 4, 512] f32" in tensors(p.stdout)
    assert "fused" not in p.stderr


OUTGROWS_SBUF = """
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def gated_scan(x, g, w):
    # One [128, n] f32 tile per operand: at n = 8192 seven of them (32 KiB per partition
    # each) are live at the second multiply, and trn2's SBUF holds 208 KiB per partition.
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros(x.shape, dtype=x.dtype)
    x_t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x_t, src=x)
    g_t = nl.ndarray(g.shape, dtype=g.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=g_t, src=g)
    for k in nl.affine_range(w.shape[0]):
        w_t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=w_t, src=w[k])
        e = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.activation(dst=e, op=nl.exp, data=x_t)
        xg = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=xg, data1=x_t, data2=g_t, op=nl.multiply)
        xgw = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=xgw, data1=xg, data2=w_t, op=nl.multiply)
        s = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor_scan(dst=s, data0=e, data1=xgw, initial=0.0, op0=nl.multiply, op1=nl.add)
        nisa.tensor_tensor(dst=acc, data1=acc, data2=s, op=nl.add)
    nl.store(out, value=acc)
    return out
"""


@pytest.mark.parametrize("passes", ["none", "default", "auto"])
def test_tiles_that_outgrow_sbuf_spill_to_hbm(root, tmp_path, passes):
    # As the Neuron compiler does, the trace lets the binary spill: the kernel simulates under
    # every pipeline and the report names what went to HBM. At n = 512 everything fits.
    path = kernel_file(tmp_path, "outgrows.py", OUTGROWS_SBUF)
    shapes = "128x8192:f32,128x8192:f32,4x128x8192:f32"
    traced = run(root, f"{path}:gated_scan", "--shapes", shapes, "--no-src")
    assert traced.returncode == 0, traced.stderr
    assert traced.stdout.startswith('kernel @gated_scan target = "trn2" {spill} {')
    sim = run(root, f"{path}:gated_scan", "--shapes", shapes, "--simulate", "--passes", passes, "--json")
    assert sim.returncode == 0, sim.stderr
    sbuf = next(s for s in json.loads(sim.stdout)["spaces"] if s["name"] == "sbuf")
    assert sbuf["spilled"] and sbuf["allocated"] <= sbuf["capacity"]
    small = run(root, f"{path}:gated_scan", "--shapes", shapes.replace("8192", "512"), "--simulate", "--passes",
                passes, "--json")
    assert small.returncode == 0, small.stderr
    assert "spilled" not in next(s for s in json.loads(small.stdout)["spaces"] if s["name"] == "sbuf")
