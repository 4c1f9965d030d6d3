"""The tracer: each construct's .kir, and each refusal located at the kernel's line.

Kernels mark the line an error must point at with a comment `# E:<name>`."""
import os
import subprocess

import pytest

import tandem
import tandem.nki.isa as nisa
import tandem.nki.language as nl
from conftest import line_of
from tandem import nki


def marked(name):
    return line_of(__file__, "# E:" + name)


def kir(kernel, *args, **kwargs):
    return tandem.trace(kernel, *args, source_attrs=False, **kwargs).text


def body(text):
    """The instruction and loop lines, stripped."""
    return [l.strip() for l in text.splitlines() if l.strip() and not l.strip().startswith(("tensor ", "kernel "))
            and l.strip() != "}"]


# -- constructs --------------------------------------------------------------------------


def test_loops_affine_indices_and_names():
    def k(X, Y):
        for i in nl.affine_range(4):
            for j in nl.sequential_range(1, 7, 2):  # j = 1, 3, 5: 2*%j + 1
                t = nl.load(X[i * 128:(i + 1) * 128, j * 64 + 3:j * 64 + 67])
                nl.store(Y[i * 128:(i + 1) * 128, (2 - j) + 64 * j:(2 - j) + 64 * j + 64], value=t)

    text = kir(k, (512, 512), (512, 512))
    assert "tensor %t : sbuf[128, 64] bf16" in text
    assert body(text) == [
        "loop %i = 0 to 4 {",
        "loop %j = 0 to 3 {",
        "%ld0 = load %t <- %X[%i*128 : %i*128 + 128, %j*128 + 67 : %j*128 + 131]",
        "%st0 = save %Y[%i*128 : %i*128 + 128, %j*126 + 65 : %j*126 + 129] <- %t",
    ]


def test_static_range_unrolls_and_scalar_loop_index():
    def k(X):
        t = nl.ndarray((128, 4, 32), nl.bfloat16)
        for u in nl.static_range(3):
            t[0:128, u, 0:32] = nl.load(X[0:128, u * 32:u * 32 + 32])

    assert body(kir(k, (128, 96))) == [
        "%ld0 = load %t[0:128, 0, 0:32] <- %X[0:128, 0:32]",
        "%ld1 = load %t[0:128, 1, 0:32] <- %X[0:128, 32:64]",
        "%ld2 = load %t[0:128, 2, 0:32] <- %X[0:128, 64:96]",
    ]


def test_par_dim_puts_the_partition_dimension_first():
    def k(A):
        tiles = nl.ndarray((8, nl.par_dim(128), 64), dtype=A.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(8):
            tiles[k] = nl.load(A[k * 128:(k + 1) * 128, :])
        assert tiles.shape == (8, 128, 64) and tiles[3].shape == (128, 64)

    text = kir(k, (1024, 64))
    assert "tensor %tiles : sbuf[128, 8, 64] bf16" in text
    assert "%ld0 = load %tiles[0:128, %k, 0:64] <- %A[%k*128 : %k*128 + 128, 0:64]" in text


def test_psum_accumulation_both_apis():
    def old_api(a, b, c):
        acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
        for k in nl.affine_range(4):
            x = nl.load(a[k * 128:(k + 1) * 128, :])
            y = nl.load(b[k * 128:(k + 1) * 128, :])
            acc += nisa.nc_matmul(x, y)
        nl.store(c, value=nl.copy(acc, dtype=c.dtype))

    def new_api(a, b, c):
        acc = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
        for k in nl.affine_range(4):
            x = nl.ndarray((128, 128), a.dtype, buffer=nl.sbuf)
            y = nl.ndarray((128, 512), b.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=x, src=a[k * 128:(k + 1) * 128, :])
            nisa.dma_copy(y, b[k * 128:(k + 1) * 128, :])
            nisa.nc_matmul(acc, x, y)
        o = nl.ndarray((128, 512), c.dtype, buffer=nl.sbuf)
        nisa.tensor_copy(dst=o, src=acc)
        nisa.dma_copy(dst=c, src=o)

    shapes = ((512, 128), (512, 512), (128, 512))
    old, new = body(kir(old_api, *shapes)), body(kir(new_api, *shapes))
    # nl.zeros in PSUM becomes the first matmul's start flag (test_psum_zeros_fold_into_start);
    # so does an uninitialised PSUM tile, which NKI's first matmul into it overwrites (nc_matmul's
    # accumulate=None: "first write overwrites, subsequent writes accumulate").
    assert "%mm0 = matmul %acc <- %x, %y {accumulate, start = \"%k\"}" in old
    assert "%mm0 = matmul %acc <- %x, %y {accumulate, start = \"%k\"}" in new
    assert old[0] == "loop %k = 0 to 4 {" and not any("memset" in l for l in old)
    assert "%cp0 = tensor_copy %copy <- %acc" in old and "%st0 = save %c <- %copy" in old
    assert "%cp0 = tensor_copy %o <- %acc" in new and "%st0 = save %c <- %o" in new


def _matmuls(a, b, c, acc, k):
    x = nl.load(a[k * 128:(k + 1) * 128, :])
    y = nl.load(b[k * 128:(k + 1) * 128, :])
    return nisa.nc_matmul(x, y)


def test_psum_zeros_fold_into_start(tandem_bin, tmp_path):
    """nl.zeros(buffer=nl.psum) before a loop whose first write into it is the accumulating
    matmul: no memset, the matmul starts the group (`start`), once per execution of the block
    around the loop; a matmul straight after it simply overwrites."""

    def k(a, b, c):
        for n in nl.affine_range(2):
            acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(4):
                acc += _matmuls(a, b, c, acc, k)
            nl.store(c[n * 128:(n + 1) * 128, :], value=nl.copy(acc, dtype=c.dtype))
            one = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
            one += _matmuls(a, b, c, one, 0)
            nl.store(c[n * 128:(n + 1) * 128, :], value=nl.copy(one, dtype=c.dtype))

    shapes = ((512, 128), (512, 512), (256, 512))
    text = kir(k, *shapes)
    assert "memset" not in text
    lines = body(text)
    assert lines[1] == "loop %k = 0 to 4 {"
    assert "%mm0 = matmul %acc <- %x, %y {accumulate, start = \"%k\"}" in lines
    assert "%mm1 = matmul %one <- %x_2, %y_2" in lines
    # The folded kernel is valid .kir and simulates race-free.
    path = tandem.trace(k, *shapes).write(tmp_path / "k.kir")
    assert subprocess.run([tandem_bin, "sim", path], capture_output=True).returncode == 0


def test_psum_zeros_stay_a_memset_unless_the_matmul_writes_first():
    def read_first(a, b, c):  # the loop reads the zeros before the matmul writes
        acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
        for k in nl.affine_range(4):
            nl.store(c, value=nl.copy(acc, dtype=c.dtype))
            acc += _matmuls(a, b, c, acc, k)

    def read_between(a, b, c):  # read between the zeroing and the loop
        acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
        nl.store(c, value=nl.copy(acc, dtype=c.dtype))
        for k in nl.affine_range(4):
            acc += _matmuls(a, b, c, acc, k)

    def part(a, b, c):  # the matmul writes half of what was zeroed
        acc = nl.zeros((2, nl.par_dim(128), 512), nl.float32, buffer=nl.psum)
        for k in nl.affine_range(4):
            acc[0] += _matmuls(a, b, c, acc, k)
        nl.store(c, value=nl.copy(acc[1], dtype=c.dtype))

    def moving(a, b, c):  # the accumulator moves with the loop: each iteration's group is its own
        acc = nl.zeros((4, nl.par_dim(128), 512), nl.float32, buffer=nl.psum)
        for k in nl.affine_range(4):
            acc[k] += _matmuls(a, b, c, acc, k)

    def nested(a, b, c):  # the first write is in an inner loop, not the loop after the zeros
        acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
        for j in nl.affine_range(2):
            for k in nl.affine_range(2):
                acc += _matmuls(a, b, c, acc, j * 2 + k)

    def explicit(a, b, c):  # a memset the kernel asks for stays
        acc = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
        nisa.memset(dst=acc, value=0.0)
        for k in nl.affine_range(4):
            acc += _matmuls(a, b, c, acc, k)

    def ones(a, b, c):  # not zeros: the matmul adds to them
        acc = nl.full((128, 512), 1.0, nl.float32, buffer=nl.psum)
        for k in nl.affine_range(4):
            acc += _matmuls(a, b, c, acc, k)

    def sbuf(a, b, c):  # zeros in SBUF are not an accumulation group
        acc = nl.zeros((128, 512), nl.float32, buffer=nl.sbuf)
        for k in nl.affine_range(4):
            acc += nl.copy(_matmuls(a, b, c, acc, k))

    shapes = ((512, 128), (512, 512), (128, 512))
    for kernel in (read_first, read_between, part, moving, nested, explicit, ones, sbuf):
        text = kir(kernel, *shapes)
        assert "memset %acc" in text, kernel.__name__
        assert "start =" not in text, kernel.__name__


def test_a_matmul_value_without_accumulation_is_its_own_psum_tile():
    def k(a, b, c):
        x, y = nl.load(a), nl.load(b)
        p = nl.matmul(x, y, transpose_x=True)
        nl.store(c, value=nl.exp(p))

    text = kir(k, (128, 128), (128, 512), (128, 512), dtype="f32")
    assert "tensor %p : psum[128, 512] f32" in text
    assert "%mm0 = matmul %p <- %x, %y" in text and "accumulate" not in text
    assert "%act0 = activation %exp <- %p {func = \"exp\"}" in text


def test_compute_ops_and_attributes():
    def k(X, Y):
        x = nl.load(X)
        bias = nl.ndarray((128, 1), nl.float32)
        nisa.memset(dst=bias, value=0.5)
        a = nisa.activation(op=nl.tanh, data=x, bias=bias, scale=2.0)
        b = nisa.tensor_scalar(a, np_multiply, 3.0, op1=nl.add, operand1=bias)
        c = nisa.tensor_tensor(a, b, op=nl.maximum)
        r = nisa.tensor_reduce(nl.max, c, axis=1, keepdims=True)
        s = nl.sum(c, axis=[1])
        d = c / r
        e = 1.0 - d
        idx = nisa.iota(nl.arange(128)[None, :], dtype=nl.int32)
        tp = nisa.nc_transpose(x[:, 0:128])
        z = nisa.memset((128, 16), 0, nl.float32)
        nl.store(Y, value=e)

    np_multiply = nl.multiply
    text = kir(k, (128, 512), (128, 512), dtype="f32")
    lines = body(text)
    assert lines == [
        "%ld0 = load %x <- %X",
        "%ms0 = memset %bias {value = 0.5}",
        "%act0 = activation %a <- %x, %bias {func = \"tanh\", scale = 2.0}",
        "%ts0 = tensor_scalar %b <- %a, %bias {op0 = \"multiply\", scalar0 = 3.0, op1 = \"add\"}",
        "%tt0 = tensor_tensor %c <- %a, %b {op = \"max\"}",
        "%red0 = tensor_reduce %r <- %c {op = \"max\"}",
        "%red1 = tensor_reduce %s <- %c {op = \"add\"}",
        "%ts1 = tensor_scalar %d <- %c, %r {op = \"divide\"}",
        "%ts2 = tensor_scalar %e <- %d {op = \"subtract\", scalar = 1.0, reverse}",
        "%iota0 = iota %idx",
        "%tp0 = transpose %tp <- %x[0:128, 0:128] on pe",
        "%ms1 = memset %z {value = 0}",
        "%st0 = save %Y <- %e",
    ]
    assert "tensor %r : sbuf[128, 1] f32" in text and "tensor %s : sbuf[128] f32" in text
    assert "tensor %idx : sbuf[1, 128] i32" in text and "tensor %tp : psum[128, 128] f32" in text


def test_engines_and_destination_first_forms():
    def k(X, Y):
        x = nl.load(X)
        y = nl.ndarray((128, 512), nl.bfloat16)
        nisa.tensor_copy(y, x, engine=nisa.scalar_engine)
        nisa.activation(y, nl.exp, y)
        nisa.tensor_tensor(y, y, x, nl.add)
        nisa.tensor_scalar(y, y, nl.multiply, 2.0, engine=nisa.vector_engine)
        r = nl.ndarray((128, 1), nl.bfloat16)
        nisa.tensor_reduce(r, nl.add, y, axis=1)
        nl.store(Y, y)

    assert body(kir(k, (128, 512), (128, 512)))[1:6] == [
        "%cp0 = tensor_copy %y <- %x on act",
        "%act0 = activation %y <- %y {func = \"exp\"}",
        "%tt0 = tensor_tensor %y <- %y, %x {op = \"add\"}",
        "%ts0 = tensor_scalar %y <- %y on dve {op = \"multiply\", scalar = 2.0}",
        "%red0 = tensor_reduce %r <- %y {op = \"add\"}",
    ]


def test_assignment_forwards_a_fresh_value_and_copies_an_old_one():
    def k(X, Y):
        t = nl.ndarray((128, 512), nl.float32)
        x = nl.load(X)
        t[...] = nl.exp(x)  # the activation writes t
        u = nl.ndarray((128, 512), nl.float32)
        u[...] = x  # x was read already: a copy
        t[...] = 0  # memset
        t[...] += u  # tensor_tensor add in place
        nl.store(Y, value=t)

    assert body(kir(k, (128, 512), (128, 512), dtype="f32")) == [
        "%ld0 = load %x <- %X",
        "%act0 = activation %t <- %x {func = \"exp\"}",
        "%cp0 = tensor_copy %u <- %x",
        "%ms0 = memset %t {value = 0}",
        "%tt0 = tensor_tensor %t <- %t, %u {op = \"add\"}",
        "%st0 = save %Y <- %t",
    ]


def test_assignment_forwards_the_value_of_an_instruction_with_a_second_output():
    def k(X, Y):
        x = nl.load(X)
        m = nl.ndarray((128, 1), nl.float32)
        r = nl.ndarray((128, 512), nl.float32)
        r[...] = nisa.activation_reduce(op=nl.exp, data=x, reduce_op=nl.add, reduce_res=m)  # writes r and m
        nl.store(Y, value=r)

    assert body(kir(k, (128, 512), (128, 512), dtype="f32"))[1] == \
        "%actr0 = activation_reduce %r, %m <- %x {func = \"exp\", reduce_op = \"add\"}"

    def onto_its_reduction(X, Y):
        x = nl.load(X)
        m = nl.ndarray((128, 1), nl.float32)
        m[...] = nisa.activation_reduce(op=nl.exp, data=x, reduce_op=nl.add, reduce_res=m)  # m twice: a copy
        nl.store(Y, value=m)

    assert body(kir(onto_its_reduction, (128, 1), (128, 1), dtype="f32"))[1:3] == [
        "%actr0 = activation_reduce %exp, %m <- %x {func = \"exp\", reduce_op = \"add\"}",
        "%cp0 = tensor_copy %m <- %exp",
    ]


def test_mgrid_masks_reshape_and_broadcast():
    def k(X, g, Y):
        rows, cols = X.shape
        i_p, i_f, i_1 = nl.mgrid[0:128, 0:cols, 0:1]
        g_sb = nl.load(g.reshape((1, cols))[i_1, i_f])
        for i in nl.affine_range(rows // 128):
            x = nl.load(X[i * 128 + i_p, i_f], mask=(i * 128 + i_p < rows))
            nl.store(Y[i * 128 + nl.arange(128)[:, None], nl.arange(cols)[None, :]],
                     value=x * g_sb.broadcast_to((128, cols)), mask=(i_p < 128) & (i * 128 + i_p < rows))

    assert body(kir(k, (256, 64), (64,), (256, 64))) == [
        "%ld0 = load %g_sb <- %g",
        "loop %i = 0 to 2 {",
        "%ld1 = load %x <- %X[%i*128 : %i*128 + 128, 0:64]",
        "%tt0 = tensor_tensor %multiply <- %x, %g_sb {op = \"multiply\"}",
        "%st0 = save %Y[%i*128 : %i*128 + 128, 0:64] <- %multiply",
    ]


def test_inputs_scalars_kwargs_dtypes_and_returned_output():
    def k(a, eps, b, scale=1):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        assert eps == 1e-3 and scale == 3
        nl.store(out, nl.load(a))
        return out

    text = kir(k, "128x64", 1e-3, tandem.tensor((4, 4), "i32"), scale=3, dtype="fp32")
    assert "tensor %a : dram[128, 64] f32" in text and "tensor %b : dram[4, 4] i32" in text
    assert "tensor %out : dram[128, 64] f32" in text


def test_source_locations_and_src_attributes():
    def k(X, Y):
        t = nl.load(X)  # E:src-load
        nl.store(Y, value=t)

    traced = tandem.trace(k, (128, 64), (128, 64))
    loc = traced.source_of("ld0")
    assert (loc.filename, loc.line) == (__file__, marked("src-load"))
    assert f'{{src = "test_tracer.py:{marked("src-load")}"}}' in traced.text
    assert traced.source_of("%t") == loc


def test_nki_namespace():
    @nki.jit
    def k(X):
        pass

    @nki.jit(mode="simulation")
    def k2(X):
        pass

    assert callable(k) and callable(k2)
    assert not hasattr(nl, "no_such_thing")


# -- refusals, located -------------------------------------------------------------------


def located(excinfo, name):
    e = excinfo.value
    assert e.location is not None, str(e)
    assert (e.location.filename, e.location.line) == (__file__, marked(name)), str(e)
    assert str(e).startswith(f"{__file__}:{marked(name)}:"), str(e)
    assert ": error: " in str(e)
    return str(e)


def test_unsupported_nl_call():
    def k(X):
        x = nl.load(X)
        y = nl.bn_stats_made_up(x)  # E:nl-unsupported

    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(k, (128, 64))
    assert "nl.bn_stats_made_up is not supported by the tandem tracer" in located(ei, "nl-unsupported")


def test_unsupported_nisa_call():
    def k(X):
        x = nl.load(X)
        nisa.nc_n_gather(x, x)  # E:nisa-unsupported

    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(k, (128, 64))
    assert "nisa.nc_n_gather is not supported" in located(ei, "nisa-unsupported")


def test_loop_index_as_python_int():
    # A Python list indexed by a loop index: the loop runs concretely. The two tiles were made
    # before the loop, each its own tensor, so the iterations differ and stay unrolled, as the
    # trace's notes say.
    def k(X):
        tiles = [nl.load(X[0:128, 0:64]), nl.load(X[0:128, 64:128])]
        for i in nl.affine_range(2):  # E:list-index
            nl.store(X[0:128, 0:64], value=tiles[i])

    t = tandem.trace(k, (128, 128), source_attrs=False)
    assert body(t.text) == [
        "%ld0 = load %tiles.X_sb <- %X[0:128, 0:64]",
        "%ld1 = load %tiles.X_sb_2 <- %X[0:128, 64:128]",
        "%st0 = save %X[0:128, 0:64] <- %tiles.X_sb",
        "%st1 = save %X[0:128, 0:64] <- %tiles.X_sb_2",
    ]
    assert t.notes == [f"{__file__}:{marked('list-index')}:18: loop unrolled (2 iterations): %tiles.X_sb is used by "
                       "another iteration than the one that made it"]


def test_non_affine_index():
    # `//` on a loop index: the loop runs concretely; its bounds are not affine in it, so it
    # stays unrolled.
    def k(X):
        for i in nl.affine_range(4):
            nl.load(X[0:128, (i // 2) * 32:(i // 2) * 32 + 32])

    assert [l.split(" <- ")[1] for l in body(kir(k, (128, 128)))] == [
        "%X[0:128, 0:32]", "%X[0:128, 0:32]", "%X[0:128, 32:64]", "%X[0:128, 32:64]"]


def test_product_of_loop_indices():
    def k(X):
        for i in nl.affine_range(2):
            for j in nl.affine_range(2):
                nl.load(X[0:128, i * j:i * j + 1])  # E:product

    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(k, (128, 128))
    assert "multiplies two loop indices" in located(ei, "product")


def test_matmul_without_transpose_x():
    # nl.matmul(x, y) computes x @ y: NKI transposes x on TensorE first (into PSUM) and copies it
    # back to SBUF for the matmul; the trace does the same.
    def k(a, b):
        x, y = nl.load(a), nl.load(b)
        nl.matmul(x, y)

    assert body(kir(k, (128, 128), (128, 512))) == [
        "%ld0 = load %x <- %a",
        "%ld1 = load %y <- %b",
        "%tp0 = transpose %tp <- %x on pe",
        "%cp0 = tensor_copy %copy <- %tp",
        "%mm0 = matmul %mm <- %copy, %y",
    ]


def test_partial_mask():
    # A mask that drops the rows past 300: the loop runs concretely; the full iterations roll
    # into a loop and the last one, a partial tile of 300 - 256 = 44 rows, follows it.
    def k(X):
        i_p, i_f = nl.mgrid[0:128, 0:64]
        for i in nl.affine_range(3):
            nl.load(X[i * 128 + i_p, i_f], mask=(i * 128 + i_p < 300))

    assert body(kir(k, (384, 64))) == [
        "loop %i = 0 to 2 {",
        "%ld0 = load %X_sb <- %X[%i*128 : %i*128 + 128, 0:64]",
        "%ld2 = load %X_sb_3[0:44, 0:64] <- %X[256:300, 0:64]",
    ]


def test_out_of_bounds_slice():
    def k(X):
        for i in nl.affine_range(3):
            nl.load(X[i * 128:(i + 1) * 128, :])  # E:bounds

    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(k, (256, 64))
    assert "index out of bounds on %X: [%i*128:%i*128 + 128] reaches [0, 384)" in located(ei, "bounds")


def test_tile_escaping_its_loop():
    # A tile made in a loop and used after it: one tile per iteration, so the tile takes a block
    # dimension of the loop's trip count, and the use after the loop reads the last one.
    def k(X, Y):
        for i in nl.affine_range(2):
            t = nl.load(X[i * 128:(i + 1) * 128, :])
        nl.store(Y[0:128, :], value=t)

    text = kir(k, (256, 64), (256, 64))
    assert "tensor %t : sbuf[128, 2, 64] bf16" in text
    assert body(text) == [
        "loop %i = 0 to 2 {",
        "%ld0 = load %t[0:128, %i, 0:64] <- %X[%i*128 : %i*128 + 128, 0:64]",
        "%st0 = save %Y[0:128, 0:64] <- %t[0:128, 1, 0:64]",
    ]


def test_break_in_a_traced_loop():
    # As in NKI's own tracing, the body as far as it runs stands for every iteration; the
    # trace's notes say so.
    def k(X):
        for i in nl.affine_range(2):  # E:break
            nl.load(X[i * 128:(i + 1) * 128, :])
            break

    t = tandem.trace(k, (256, 64), source_attrs=False)
    assert body(t.text) == ["loop %i = 0 to 2 {", "%ld0 = load %X_sb <- %X[%i*128 : %i*128 + 128, 0:64]"]
    assert "leaves it early (break or return)" in t.notes[0]


def test_value_carried_through_a_python_variable():
    # Rebinding `acc` to a tile the body made carries a value from one iteration to the next
    # through Python: the loop runs concretely, each iteration reading the previous one's tile
    # (unrolled: its iterations do not agree).
    def k(X, Y):
        acc = nl.zeros((128, 64), nl.float32)
        for i in nl.sequential_range(4):
            acc = acc + nl.load(X[i * 128:(i + 1) * 128, :])
        nl.store(Y, value=acc)

    t = tandem.trace(k, (512, 64), (128, 64), source_attrs=False)
    adds = [l for l in body(t.text) if "tensor_tensor" in l]
    assert adds == ['%tt0 = tensor_tensor %acc_2 <- %acc, %acc.X_sb {op = "add"}',
                    '%tt1 = tensor_tensor %acc_3 <- %acc_2, %acc.X_sb_2 {op = "add"}',
                    '%tt2 = tensor_tensor %acc_4 <- %acc_3, %acc.X_sb_3 {op = "add"}',
                    '%tt3 = tensor_tensor %acc_5 <- %acc_4, %acc.X_sb_4 {op = "add"}']
    assert body(t.text)[-1] == "%st0 = save %Y <- %acc_5"

    # Updated in place, the same value stays one tile and the loop stays a loop.
    def fine(X, Y):
        acc = nl.zeros((128, 64), nl.float32)
        for i in nl.sequential_range(4):
            acc += nl.load(X[i * 128:(i + 1) * 128, :])
        nl.store(Y, value=acc)

    assert "%tt0 = tensor_tensor %acc <- %acc, %X_sb {op = \"add\"}" in body(kir(fine, (512, 64), (128, 64)))


def test_transposing_index_grid():
    # In HBM a transposing access pattern is a transfer of single elements; on chip it would
    # move the partitions, which only a transpose does.
    def k(X):
        i_p, i_f = nl.mgrid[0:128, 0:64]
        t = nl.load(X[i_f, i_p])
        nl.copy(t[i_f, i_p])  # E:transposed

    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(k, (64, 128))
    assert "a transposing access pattern, which moves the partitions" in located(ei, "transposed")


def test_loop_index_in_an_if():
    # An if on a loop index: the loop runs concretely, and the body exists where the if holds.
    def k(X):
        for i in nl.affine_range(4):
            if i == 0:
                nl.load(X[0:128, :])

    assert body(kir(k, (128, 64))) == ["%ld0 = load %X_sb <- %X"]


def test_unknown_tile_attribute_is_also_an_attribute_error():
    def k(X):
        x = nl.load(X)
        assert not hasattr(x, "astype")
        x.astype(nl.float32)  # E:astype

    with pytest.raises(AttributeError) as ei:
        tandem.trace(k, (128, 64))
    assert "tile attribute or method '.astype' is not supported" in located(ei, "astype")


def test_unknown_keyword_argument():
    def k(X):
        x = nl.load(X)
        nisa.tensor_copy(x, dtype=nl.float32, wobble=3)  # E:kwarg

    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(k, (128, 64))
    assert "nisa.tensor_copy: unsupported argument 'wobble'" in located(ei, "kwarg")


def test_load_from_sbuf_and_matmul_into_sbuf():
    def k(X):
        x = nl.load(X)
        nl.load(x)  # E:load-sbuf

    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(k, (128, 64))
    assert "nl.load reads HBM; %x is in SBUF" in located(ei, "load-sbuf")

    def k2(a, b):
        x, y = nl.load(a), nl.load(b)
        out = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
        nisa.nc_matmul(out, x, y)  # E:matmul-sbuf

    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(k2, (128, 128), (128, 512))
    assert "matmul writes PSUM" in located(ei, "matmul-sbuf")


def test_transpose_attribute_and_forwarded_value():
    def k(X):
        x = nl.load(X)
        return x.T  # E:dot-t

    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(k, (128, 64))
    assert "'.T' is not supported" in located(ei, "dot-t")

    def k2(X):
        t = nl.ndarray((128, 64), nl.bfloat16)
        e = nl.exp(nl.load(X))
        t[...] = e
        nl.exp(e)  # E:forwarded

    with pytest.raises(tandem.TraceError) as ei:
        tandem.trace(k2, (128, 64))
    assert "was assigned into %t" in located(ei, "forwarded")


def test_calls_outside_a_trace():
    with pytest.raises(tandem.TraceError) as ei:
        nl.zeros((128, 1), nl.float32)
    assert "outside tandem.trace()" in str(ei.value)
    assert ei.value.location.filename == __file__


def test_trace_argument_errors_are_python_errors():
    def k(X):
        pass

    with pytest.raises(ValueError):
        tandem.trace(k, (128, 64), dtype="f99")
    with pytest.raises(ValueError):
        tandem.parse_shape("12xq")


def test_printer_round_trips_expressions():
    from tandem import ir, printer

    loop = ir.Loop("k", 4, "affine_range", None)
    e = ir.add(ir.Affine.of(loop, -3), 7)
    assert printer.expr(e) == "-%k*3 + 7"
    assert printer.expr(ir.Affine.of(loop, -1, -2)) == "-%k - 2"
    assert printer.value(1e5) == "100000.0" and printer.value(0.125) == "0.125" and printer.value('a"b') == '"a\\"b"'
    assert os.path.basename(__file__) == "test_tracer.py"


def test_strided_slices_and_scaled_ranges():
    # Every second column, as a scaled index range and as a slice with a step.
    def k(X, E, O):
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(256)[None, :]
        t = nl.load(X)
        nl.store(E, value=t[i_p, 2 * i_f])
        nl.store(O, value=t[:, 1:512:2])

    assert body(kir(k, (128, 512), (128, 256), (128, 256))) == [
        "%ld0 = load %t <- %X",
        "%st0 = save %E <- %t[0:128, 0:511:2]",
        "%st1 = save %O <- %t[0:128, 1:512:2]",
    ]


def test_windows_of_summed_ranges_with_a_mask():
    # A 3-row window down the rows (i_h + i_kh) and a 3-column window along them (i_w + i_kw):
    # the mask keeps 100 of the 128 rows of each window's partition axis.
    def k(X, Y):
        i_h, i_kh, i_w = nl.mgrid[0:128, 0:3, 0:64]
        t = nl.load(X[i_h + i_kh, i_w], mask=(i_h < 100))
        i_h, i_kh, i_w, i_kw = nl.mgrid[0:128, 0:3, 0:62, 0:3]
        m = nl.max(t[i_h, i_kh, i_w + i_kw], axis=[1, 3], mask=(i_h < 100))
        assert m.shape == (128, 62)
        i_o, i_x = nl.mgrid[0:128, 0:62]
        nl.store(Y[i_o, i_x], value=m, mask=(i_o < 100))

    assert body(kir(k, (102, 64), (100, 62))) == [
        "%ld0 = load %t[0:100, 0:3, 0:64] <- %X[0:102:[[1, 100], [1, 3]], 0:64]",
        "%red0 = tensor_reduce %m[0:100, 0:62] <- %t[0:100, 0:3, 0:64:[[1, 62], [1, 3]]] {op = \"max\", axis = \"1,3\"}",
        "%st0 = save %Y <- %m[0:100, 0:62]",
    ]


def test_pooling_grid_and_access_pattern_views():
    # A 2x2 pooling view, as a 5-axis grid and as NKI's .ap pairs: both visit every element of
    # %t once (a dense pattern is the whole tile), in the grid's shape.
    def k(X, Y):
        t = nl.load(X)
        i0, i1, i2, i3, i4 = nl.mgrid[0:64, 0:16, 0:2, 0:16, 0:2]
        grid = t[i0, 2 * i1 + i2, 2 * i3 + i4]
        view = t.ap([[1024, 64], [64, 16], [2, 16], [32, 2], [1, 2]])
        assert grid.shape == (64, 16, 2, 16, 2) and view.shape == (64, 16, 16, 2, 2)
        a = nl.sum(grid, axis=[2, 4])
        b = nl.sum(view, axis=[3, 4])
        nl.store(Y, value=nl.add(a, b))
        odd = t.ap([[1024, 64], [32, 32], [2, 16]], offset=1)  # the odd columns
        assert odd.shape == (64, 32, 16)
        nl.store(Y, value=nl.copy(odd)[:, 0:16, :])

    lines = body(kir(k, (64, 32, 32), (64, 16, 16)))
    assert lines[1:3] == [
        "%red0 = tensor_reduce %a <- %t {op = \"add\", axis = \"2,4\"}",
        "%red1 = tensor_reduce %b <- %t {op = \"add\", axis = \"3,4\"}",
    ]
    assert any(l.endswith("<- %t[0:64, 0:32, 1:32:2]") for l in lines), lines


def test_strided_views_refused():
    def partition(X):
        t = nl.load(X)
        i_p, i_f = nl.mgrid[0:64, 0:512]
        nl.copy(t[2 * i_p, i_f])  # E:partition

    def mixed(X):
        t = nl.load(X)
        i_f = nl.arange(256)[None, :]
        nl.copy(t[:, 2 * i_f])  # E:mixed

    def again(X):
        t = nl.load(X)
        i_p, i_f = nl.mgrid[0:128, 0:256]
        nl.copy(t[i_p, 2 * i_f][0:64, :])  # E:again

    def across(X):
        t = nl.load(X)
        nl.copy(t.ap([[512, 128], [2, 512]]))  # E:across

    def ap_of_view(X):
        t = nl.load(X)
        nl.copy(t[0:64, :].ap([[512, 64], [2, 256]]))  # E:ap_of_view

    cases = {
        "partition": "the partition dimension of an on-chip view takes the first grid axis alone, with stride 1",
        "mixed": "a slice beside strided or multi-axis index ranges",
        "again": "indexing a strided view (index ranges or .ap); index the tile it was made from",
        "ap_of_view": "an access pattern (.ap) of a view: take it of the whole tensor",
        "across": "access pattern pair [2, 512] runs across dimension 1 of %t[128, 512]",
    }
    for fn, message in cases.items():
        with pytest.raises(tandem.TraceError) as ei:
            tandem.trace(locals()[fn], (128, 512))
        assert message in located(ei, fn), fn


# -- cost --------------------------------------------------------------------------------


def test_temporaries_of_one_name_take_names_in_linear_work(monkeypatch):
    """Robust reproducer 12-nki-tracer-quadratic.py: N temporaries of one name (`t = nl.exp(t)`
    in a static_range) used to try t_2, t_3, ... from 2 for each (N^2 / 2 names tried; 10,000
    took 30 s). Counted, not timed: the names the tracer tries stay within 3 per name taken."""
    from tandem.context import Names

    made = []
    unique = Names.unique

    def counted(self, base):
        made.append(self)
        return unique(self, base)

    monkeypatch.setattr(Names, "unique", counted)

    @nki.jit
    def k(a, N=1000):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a)
        for _ in nl.static_range(N):
            t = nl.exp(t)
        nl.store(out, value=t)
        return out

    text = kir(k, (128, 512), N=2000)
    assert text.count("activation") == 2000 and "activation %t_2001 <- %t_2000" in text
    names = made[-1]
    assert len(names) > 2000 and names.probes <= 3 * len(names), (names.probes, len(names))


def test_a_freed_name_is_taken_again_first():
    from tandem.context import Names

    names = Names()
    assert [names.unique("t") for _ in range(6)] == ["t", "t_2", "t_3", "t_4", "t_5", "t_6"]
    names.discard("t_3")
    names.discard("t_5")
    names.add("t_7")
    assert [names.unique("t") for _ in range(4)] == ["t_3", "t_5", "t_8", "t_9"]
    names.discard("t")
    assert names.unique("t") == "t" and "t" in names and "t_3" in names
    names.add("x_02")
    names.discard("x_02")  # not a suffix unique() gives
    assert names.unique("x") == "x" and names.unique("x") == "x_2"
