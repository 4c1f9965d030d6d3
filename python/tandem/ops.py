"""What each traced NKI operation records: the `.kir` opcode, the accesses it writes and
reads, and its attributes. `tandem.nki.language` and `tandem.nki.isa` parse the NKI calling
conventions and call these; the context (`tandem.context.Context`) emits the instructions.
"""

import math
import numbers
from typing import Optional

from .active import current, fail
from .dtypes import DTYPES, PSUM, SBUF, SPACE_NAMES, Buffer, ParDim, to_dtype
from .errors import user_location, value_name
from .indices import describe
from .ir import FLAG
from .placement import BlockMap, Placement
from .tiles import Tile, check_same_size

F32 = DTYPES["float32"]

# NKI / numpy operator names -> the op attribute of tensor_tensor / tensor_scalar / tensor_reduce.
BINARY_OPS = {
    "add": "add", "subtract": "subtract", "multiply": "multiply", "divide": "divide", "true_divide": "divide",
    "maximum": "max", "minimum": "min", "max": "max", "min": "min", "power": "pow",
    "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor",
    "left_shift": "left_shift", "right_shift": "right_shift", "equal": "is_equal", "not_equal": "not_equal",
    "less": "is_lt", "less_equal": "is_le", "greater": "is_gt", "greater_equal": "is_ge",
    "logical_and": "logical_and", "logical_or": "logical_or", "logical_xor": "logical_xor",
    "abs_max": "abs_max", "abs_min": "abs_min", "mod": "mod", "remainder": "mod", "fmod": "mod",
    # An arithmetic operator of the ISA that ignores its second input (`op0=nl.abs, operand0=0.0`).
    "abs": "abs",
}
REDUCE_OPS = {"add": "add", "sum": "add", "max": "max", "maximum": "max", "min": "min", "minimum": "min",
              "amax": "max", "amin": "min",
              "multiply": "multiply", "prod": "multiply", "mean": "mean"}
ACTIVATIONS = {"exp", "log", "tanh", "sigmoid", "relu", "gelu", "gelu_apprx_tanh", "silu", "sqrt", "rsqrt",
               "square", "reciprocal", "abs", "negative", "sin", "cos", "erf", "softplus", "mish", "sign",
               "copy", "identity", "gelu_dx", "silu_dx", "arctan", "exp2", "tan", "ceil", "floor", "trunc", "erf_dx",
               "gelu_apprx_sigmoid", "gelu_apprx_sigmoid_dx", "invert", "logical_not"}


def op_name(op, table, what) -> str:
    """The name of an op argument: an nl function (nl.exp, nl.add), a numpy ufunc or a string."""
    name = op if isinstance(op, str) else getattr(op, "_nki_name", None) or getattr(op, "__name__", None)
    if name in table:
        return table[name] if isinstance(table, dict) else name
    known = ", ".join(sorted(table))
    fail(f"unsupported {what} {describe(op) if not callable(op) else name!r} (supported: {known})")


def _tile(x, what) -> Tile:
    if not isinstance(x, Tile):
        fail(f"{what} must be a tile, found {describe(x)}")
    return x


def _on_chip(t: Tile, what):
    if t.space == "dram":
        fail(f"{what} %{t.name} is in HBM; load it into SBUF first (nl.load / nisa.dma_copy)")


def result(dst: Optional[Tile], shape, dtype, space, hint):
    """The tile an operation writes: `dst` or a new tile."""
    ctx = current()
    if dst is not None:
        return _tile(dst, "dst")
    return ctx.temp(shape, dtype, space, hint)


# -- data movement -----------------------------------------------------------------------


def load(src, dtype=None, dst=None):
    src = _tile(src, "the source")
    if src.space != "dram":
        fail(f"nl.load reads HBM; %{src.name} is in {SPACE_NAMES[src.space]} (use nisa.tensor_copy)")
    out = result(dst, src.tile_shape(), to_dtype(dtype) if dtype is not None else src.dtype, "sbuf", src.name + "_sb")
    check_same_size(out, src, current().call)
    _emit_transfer("load", out, src)
    return out


def _emit_transfer(opcode, dst: Tile, src: Tile, attrs=()):
    """A DMA; through an index tile (`table[idx, :]`) it is a gather (`indirect_load DST <- SRC,
    INDEX`) or a scatter (a save that also reads the index, over every row it may name). An HBM
    view in transposed order (`out[f, p]`) moves one element per descriptor: `{elementwise}`."""
    if src.transposed or dst.transposed:
        attrs = tuple(attrs) + (("elementwise", FLAG),)
    if src.gather is not None:
        current().emit("indirect_load", [dst], [src, src.gather], attrs)
    elif dst.gather is not None:
        current().emit(opcode, [dst], [src, dst.gather], attrs)
    else:
        current().emit(opcode, [dst], [src], attrs)


def store(dst, value, attrs=()):
    dst = _tile(dst, "the destination")
    value = _tile(value, "the value")
    if dst.space != "dram":
        fail(f"nl.store writes HBM; %{dst.name} is in {SPACE_NAMES[dst.space]}")
    check_same_size(dst, value, current().call)
    _emit_transfer("save", dst, value, attrs)


def dma_copy(dst, src):
    dst = _tile(dst, "dst")
    src = _tile(src, "src")
    check_same_size(dst, src, current().call)
    if src.space == "dram" and dst.space == "sbuf":
        opcode = "load"
    elif dst.space == "dram" and src.space != "dram":
        opcode = "save"
    else:
        opcode = "dma_copy"
    if src.gather is not None and opcode != "load":
        fail("a gather (a source indexed by a tile) lands in SBUF", call=current().call)
    _emit_transfer(opcode, dst, src)
    return dst


def copy_into(dst: Tile, src: Tile, engine=None):
    _on_chip(src, "the source")
    _on_chip(dst, "the destination")
    current().emit("tensor_copy", [dst], [src], engine=engine)
    return dst


def tensor_copy(src, dtype=None, dst=None, engine=None):
    src = _tile(src, "src")
    _on_chip(src, "src")
    out = result(dst, src.tile_shape(), to_dtype(dtype) if dtype is not None else src.dtype, "sbuf", "copy")
    check_same_size(out, src, current().call)
    return copy_into(out, src, engine)


def memset_into(dst: Tile, value, engine=None):
    _on_chip(dst, "memset's destination")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        fail(f"memset value must be a number, found {describe(value)}")
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        value = int(value)
    current().emit("memset", [dst], [], [("value", value)], engine=engine)
    return dst


# -- compute -------------------------------------------------------------------------------


# nisa.dma_transpose's permutations, by the source's rank (ISA: dma_transpose).
TRANSPOSE_AXES = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}


def load_transposed(src, dtype=None, dst=None, axes=None):
    """A DMA that writes the source permuted into SBUF (nl.load_transpose2d, nisa.dma_transpose
    of a 2-D to 4-D source, or of rows gathered through an index tile): a load with
    `{transpose}`, timed as a load of its bytes."""
    src = _tile(src, "the source")
    shape = src.tile_shape() if src.space != "dram" else src.shape
    if len(shape) not in TRANSPOSE_AXES:
        fail(f"a transposing load takes a 2-D to 4-D source, found {list(shape)}")
    order = TRANSPOSE_AXES[len(shape)]
    if axes is not None and tuple(axes) != order:
        fail(f"axes {tuple(axes)}: a {len(shape)}-D source is transposed by {order}")
    out = result(dst, tuple(shape[a] for a in order), to_dtype(dtype) if dtype is not None else src.dtype, "sbuf",
                  src.name + "_T")
    if src.space != "dram" and len(shape) == 2:
        check_transposed(out, src)
    _emit_transfer("load" if src.space == "dram" else "dma_copy", out, src, [("transpose", FLAG)])
    return out


def matmul(stationary, moving, dst=None, accumulate=False, flags=()):
    """dst (PSUM, f32) = stationary.T @ moving: K on the partitions of both."""
    s = _in_sbuf(_tile(stationary, "stationary"), "stationary")
    m = _in_sbuf(_tile(moving, "moving"), "moving")
    if len(s.shape) < 1 or len(m.shape) < 1 or s.partitions() != m.partitions():
        fail(f"contraction (partition) sizes differ: stationary {list(s.shape)}, moving {list(m.shape)}")
    if s.free() > 128:
        fail(f"the stationary operand has {s.free()} columns; TensorE takes at most 128")
    if m.free() > 512:
        fail(f"the moving operand has {m.free()} columns; TensorE takes at most 512")
    out = result(dst, (s.free(), m.free()), F32, "psum", "mm")
    if out.space != "psum":
        fail(f"matmul writes PSUM; %{out.name} is in {SPACE_NAMES[out.space]}")
    if out.partitions() != s.free() or out.free() != m.free():
        fail(f"the destination %{out.name}{list(out.shape)} is not stationary.T @ moving "
             f"[{s.free()}, {m.free()}]")
    attrs = ([("accumulate", FLAG)] if accumulate else []) + [(f, FLAG) for f in flags]
    current().emit("matmul", [out], [s, m], attrs)
    return out


def readable_on(t, engine, what="operand") -> Tile:
    """A PSUM operand of a GpSimdE instruction, which cannot read PSUM: copied to SBUF first,
    as NKI does for the operands an engine cannot reach."""
    t = _tile(t, what)
    if engine == "pool" and t.space == "psum":
        return tensor_copy(t, dtype=t.dtype)
    return t


def matmul_double_row(stationary, moving, dst=None, accumulate=False):
    """nc_matmul in FP8 double-row mode (NeuronCore-v3): [K, 2, M] and [K, 2, N] operands, two
    rows of K per PE, timed as `matmul {double_row}` (ISA matmul_perf_mode: 2x throughput)."""
    s = _in_sbuf(_tile(stationary, "stationary"), "stationary")
    m = _in_sbuf(_tile(moving, "moving"), "moving")
    if current().kernel.target == "trn1":
        fail("perf_mode double_row is a NeuronCore-v3 (trn2) mode; trn1 (NeuronCore-v2) has none")
    for t, what in ((s, "stationary"), (m, "moving")):
        if len(t.shape) != 3 or t.shape[1] != 2:
            fail(f"double_row takes [K, 2, free] operands; the {what} is {list(t.shape)}")
        if t.dtype.kir not in ("fp8", "f8"):
            fail(f"double_row takes FP8 operands; the {what} is {t.dtype!r}")
    if s.partitions() != m.partitions() or s.shape[2] > 128 or m.shape[2] > 512:
        fail(f"double_row operands {list(s.shape)} and {list(m.shape)}: equal K, at most 128 stationary and 512 "
             "moving columns")
    out = result(dst, (s.shape[2], m.shape[2]), F32, "psum", "mm")
    attrs = ([("accumulate", FLAG)] if accumulate else []) + [("double_row", FLAG)]
    current().emit("matmul", [out], [s, m], attrs)
    return out


def _in_sbuf(t: Tile, what) -> Tile:
    """A TensorE operand: in SBUF, or copied there from PSUM first (the copy NKI inserts)."""
    if t.space == "psum":
        return tensor_copy(t, dtype=t.dtype)
    if t.space != "sbuf":
        fail(f"the {what} operand %{t.name} must be in SBUF, not {SPACE_NAMES[t.space]}")
    return t


def transpose(data, dst=None, engine=None):
    x = _tile(data, "data")
    _on_chip(x, "data")
    if len(x.tile_shape()) != 2:
        fail(f"transpose takes a 2-D tile, found {list(x.shape)}")
    p, f = x.tile_shape()
    if f > 128:
        fail(f"transposing {f} columns onto partitions: at most 128")
    on_vector = engine == "dve"
    out = result(dst, (f, p), x.dtype if on_vector else F32, "sbuf" if on_vector else "psum", "tp")
    check_transposed(out, x)
    current().emit("transpose", [out], [x], engine=engine or ("pe" if out.space == "psum" else "dve"))
    return out


def check_transposed(out: Tile, x: Tile):
    if out.partitions() != x.free() or out.free() != x.partitions():
        fail(f"the destination %{out.name}{list(out.shape)} is not the transpose of {list(x.shape)}")


def activation(op, data, bias=None, scale=1.0, dtype=None, dst=None, reduce_res=None, engine=None):
    func = op_name(op, ACTIVATIONS, "activation function")
    x = _tile(data, "data")
    _on_chip(x, "data")
    reads = [x]
    attrs = [("func", func)]
    for what, v, neutral in (("scale", scale, 1.0), ("bias", bias, None)):
        if isinstance(v, Tile):
            _on_chip(v, what)
            if v.partitions() != x.partitions():
                fail(f"a {what} tile must have the data's {x.partitions()} partitions, found {list(v.shape)}")
            reads.append(v)
        elif v is None:
            continue
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            if v != neutral:
                attrs.append((what, float(v)))
        else:
            fail(f"{what} must be a number or a tile, found {describe(v)}")
    out = result(dst, x.tile_shape(), to_dtype(dtype) if dtype is not None else x.dtype, "sbuf", func)
    check_same_size(out, x, current().call)
    writes = [out]
    opcode = "activation"
    if reduce_res is not None:
        r = _tile(reduce_res, "reduce_res")
        _on_chip(r, "reduce_res")
        writes.append(r)
        opcode = "activation_reduce"
        attrs.append(("reduce_op", "add"))
    current().emit(opcode, writes, reads, attrs, engine=engine)
    return out


def _column(t: Tile, other: Tile) -> bool:
    """t is one element per partition of other's partitions (a per-partition scalar), also as a
    broadcast_to view of such a column."""
    own = Tile(t.buf, t.index, t.dims) if t.bcast is not None else t
    return own.free() == 1 and other.free() > 1 and t.partitions() == other.partitions()


def is_number(x) -> bool:
    """A Python or numpy number (`np.int32(64)` is one; numpy's bool is not a `numbers.Real`),
    not a bool."""
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def elementwise(op, x, y, dst=None, dtype=None):
    """x op y: tensor_tensor for two tiles, tensor_scalar for a tile and a number or a
    per-partition column."""
    name = op_name(op, BINARY_OPS, "operator")
    xt, yt = isinstance(x, Tile), isinstance(y, Tile)
    if not xt and not yt:
        fail(f"{name} of two numbers ({describe(x)}, {describe(y)}): there is no tile to compute on")
    ctx = current()
    if xt and yt:
        _on_chip(x, "the first operand")
        _on_chip(y, "the second operand")
        if x.partitions() != y.partitions():
            return _broadcast_partitions(name, x, y, dst, dtype)
        big, small, reverse = (x, y, False) if x.free() >= y.free() else (y, x, True)
        out = result(dst, big.tile_shape(), to_dtype(dtype) if dtype is not None else big.dtype, "sbuf", name)
        check_same_size(out, big, ctx.call)
        if _column(small, big):
            attrs = [("op", name)] + ([("reverse", FLAG)] if reverse else [])
            ctx.emit("tensor_scalar", [out], [big, small], attrs)
        else:
            if small.free() != big.free() and not _broadcasts(small.tile_shape(), big.tile_shape()):
                fail(f"shapes {list(x.shape)} and {list(y.shape)} do not broadcast (use broadcast_to)")
            ctx.emit("tensor_tensor", [out], [x, y], [("op", name)])
        return out
    tile, scalar, reverse = (x, y, False) if xt else (y, x, True)
    _on_chip(tile, "the operand")
    if not is_number(scalar):
        fail(f"{name} of a tile and {describe(scalar)}: the other operand must be a number or a tile")
    out = result(dst, tile.tile_shape(), to_dtype(dtype) if dtype is not None else tile.dtype, "sbuf", name)
    check_same_size(out, tile, ctx.call)
    attrs = [("op", name), ("scalar", float(scalar))]
    if reverse:
        attrs.append(("reverse", FLAG))
    ctx.emit("tensor_scalar", [out], [tile], attrs)
    return out


def _broadcasts(small, big) -> bool:
    """Same rank, and each dimension of `small` is 1 or `big`'s: the engine reads `small`
    repeated along its dimensions of size 1 (`[P, n, 1, 1]` against `[P, n, 3, 3]`)."""
    return len(small) == len(big) and all(s in (1, b) for s, b in zip(small, big))


def _broadcast_partitions(name, x: Tile, y: Tile, dst, dtype):
    """x op y where one operand has one partition (and either may have one element per
    partition): NKI broadcasts it to the other's partitions, as the engine reads it; a
    tensor_tensor of the broadcast shape."""
    if 1 not in (x.partitions(), y.partitions()):
        fail(f"operands span different partitions: {list(x.shape)} and {list(y.shape)} (only a one-partition "
             "operand broadcasts across partitions)")
    free = max(x.free(), y.free())
    if any(t.free() not in (1, free) for t in (x, y)):
        fail(f"shapes {list(x.shape)} and {list(y.shape)} do not broadcast (use broadcast_to)")
    wide = x if x.free() == free else y
    shape = (max(x.partitions(), y.partitions()),) + tuple(wide.tile_shape()[1:])
    out = result(dst, shape, to_dtype(dtype) if dtype is not None else x.dtype, "sbuf", name)
    if (out.partitions(), out.free()) != (shape[0], free):
        fail(f"the destination %{out.name}{list(out.shape)} is not the broadcast shape {list(shape)}")
    current().emit("tensor_tensor", [out], [x, y], [("op", name)])
    return out


def tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, dtype=None,
                  dst=None, engine=None):
    x = _tile(data, "data")
    _on_chip(x, "data")
    reads = [x]
    attrs = []
    steps = [(op0, operand0, reverse0)] + ([(op1, operand1, reverse1)] if op1 is not None else [])
    for n, (op, operand, reverse) in enumerate(steps):
        suffix = "" if len(steps) == 1 else str(n)
        attrs.append(("op" + suffix, op_name(op, BINARY_OPS, "operator")))
        if isinstance(operand, Tile):
            _on_chip(operand, "operand")
            if operand.partitions() != x.partitions() or operand.free() != 1:
                fail(f"a tensor_scalar operand tile holds one value per partition ([{x.partitions()}, 1]), found "
                     f"{list(operand.shape)}")
            reads.append(operand)
        elif isinstance(operand, (int, float)) and not isinstance(operand, bool):
            attrs.append(("scalar" + suffix, float(operand)))
        else:
            fail(f"operand{n} must be a number or a [P, 1] tile, found {describe(operand)}")
        if reverse:
            attrs.append(("reverse" + suffix, FLAG))
    out = result(dst, x.tile_shape(), to_dtype(dtype) if dtype is not None else x.dtype, "sbuf", "ts")
    check_same_size(out, x, current().call)
    current().emit("tensor_scalar", [out], reads, attrs, engine=engine)
    return out


def tensor_tensor(data1, data2, op, dtype=None, dst=None, engine=None):
    a = _tile(data1, "data1")
    b = _tile(data2, "data2")
    name = op_name(op, BINARY_OPS, "operator")
    _on_chip(a, "data1")
    _on_chip(b, "data2")
    if _column(b, a):  # a per-partition column broadcast along the free axes: the scalar form
        return tensor_scalar(a, op, b, dtype=dtype, dst=dst, engine=engine)
    if _column(a, b):
        return tensor_scalar(b, op, a, reverse0=True, dtype=dtype, dst=dst, engine=engine)
    if a.partitions() != b.partitions() or a.free() != b.free():
        fail(f"tensor_tensor operands differ in shape: {list(a.shape)} and {list(b.shape)}")
    out = result(dst, a.tile_shape(), to_dtype(dtype) if dtype is not None else a.dtype, "sbuf", name)
    check_same_size(out, a, current().call)
    current().emit("tensor_tensor", [out], [a, b], [("op", name)], engine=engine)
    return out


def tensor_tensor_scan(data0, data1, initial, op0, op1, reverse0=False, reverse1=False, dtype=None, dst=None):
    """Timed as a tensor_tensor on VectorE (the models have no scan opcode); the attributes
    say what it is."""
    a = _tile(data0, "data0")
    b = _tile(data1, "data1")
    _on_chip(a, "data0")
    _on_chip(b, "data1")
    if a.partitions() != b.partitions() or a.free() != b.free():
        fail(f"tensor_tensor_scan operands differ in shape: {list(a.shape)} and {list(b.shape)}")
    reads = [a, b]
    attrs = [("op0", op_name(op0, BINARY_OPS, "operator")), ("op1", op_name(op1, BINARY_OPS, "operator"))]
    if isinstance(initial, Tile):
        _on_chip(initial, "initial")
        reads.append(initial)
    elif isinstance(initial, (int, float)) and not isinstance(initial, bool):
        attrs.append(("initial", float(initial)))
    else:
        fail(f"initial must be a number or a tile, found {describe(initial)}")
    attrs.append(("nki", "tensor_tensor_scan"))
    out = result(dst, a.tile_shape(), to_dtype(dtype) if dtype is not None else a.dtype, "sbuf", "scan")
    check_same_size(out, a, current().call)
    current().emit("tensor_tensor", [out], reads, attrs)
    return out


def _axes(axis, ndim):
    if axis is None:
        return list(range(1, ndim))
    axes = [axis] if isinstance(axis, int) else list(axis)
    out = []
    for a in axes:
        if not isinstance(a, int):
            fail(f"axis must be an integer or a list of integers, found {describe(a)}")
        out.append(a + ndim if a < 0 else a)
    if 0 in out:
        fail("reduction over the partition axis (axis 0) is not traced: reduce the free axes, or transpose "
             "first (nisa.nc_transpose)")
    if any(a >= ndim for a in out):
        fail(f"axis {axis} is out of range for a {ndim}-D tile")
    return out


def reduce(op, data, axis, keepdims=False, negate=False, dtype=None, dst=None):
    x = _tile(data, "data")
    _on_chip(x, "data")
    name = op_name(op, REDUCE_OPS, "reduce op")
    dims = x.tile_shape()
    axes = _axes(axis, len(dims))
    shape = [1 if i in axes else s for i, s in enumerate(dims) if keepdims or i not in axes]
    out = result(dst, shape, to_dtype(dtype) if dtype is not None else x.dtype, "sbuf", name)
    if out.partitions() != x.partitions():
        fail(f"the destination %{out.name}{list(out.shape)} does not have the data's {x.partitions()} partitions")
    attrs = [("op", name)]
    if len(axes) != len(dims) - 1:
        attrs.append(("axis", ",".join(str(a) for a in axes)))
    if negate:
        attrs.append(("negate", FLAG))
    current().emit("tensor_reduce", [out], [x], attrs)
    return out


def vector_op(opcode, op, data, reads=(), writes=(), attrs=(), shape=None, dtype=None, dst=None, hint="v",
              engine="dve"):
    """An instruction of the ISA that the models time as `opcode` (tensor_scalar, tensor_tensor,
    tensor_reduce or tensor_copy, by the number of elements it reads: the ISA gives these calls
    the same per-element cost) on `engine` (VectorE unless the ISA names another); `nki` names
    the call."""
    x = readable_on(data, engine, "data")
    _on_chip(x, "data")
    extra = []
    for t in reads:
        if isinstance(t, Tile):
            _on_chip(t, "operand")
            extra.append(readable_on(t, engine))
    out = result(dst, shape or x.tile_shape(), to_dtype(dtype) if dtype is not None else x.dtype, "sbuf", hint)
    if shape is None:
        check_same_size(out, x, current().call)
    current().emit(opcode, [out] + [w for w in writes if w is not None], [x] + extra,
                   [("op", op)] + list(attrs), engine=engine)
    return out


def memset(shape, value, dtype, dst=None, engine=None):
    out = result(dst, shape, to_dtype(dtype) if dtype is not None else F32, "sbuf", "ms")
    return memset_into(out, value, engine)


def iota(dst: Tile, engine=None):
    _on_chip(dst, "iota's destination")
    current().emit("iota", [dst], [], engine=engine)
    return dst


def allocate(shape, dtype, buffer, name, fill=None):
    """nl.ndarray / nl.zeros / nl.full: a tensor in SBUF, PSUM or HBM."""
    ctx = current()
    if buffer is None:
        buffer = SBUF
    if not isinstance(buffer, Buffer):
        fail(f"buffer must be nl.sbuf, nl.psum or nl.shared_hbm, found {describe(buffer)}")
    if isinstance(shape, int):
        shape = (shape,)
    shape = list(shape)
    par = [i for i, s in enumerate(shape) if isinstance(s, ParDim)]
    if len(par) > 1:
        fail("more than one nl.par_dim in a shape")
    sizes = []
    for s in shape:
        v = s.size if isinstance(s, ParDim) else s
        if not isinstance(v, int) or isinstance(v, bool):
            fail(f"shape {tuple(shape)}: dimensions must be integers (constants), found {describe(v)}")
        sizes.append(v)
    perm = None
    if buffer.space == "dram":
        pass  # HBM has no partitions: a par_dim there only marks the dimension a tile of it takes
    else:
        p = par[0] if par else 0
        order = [p] + [i for i in range(len(sizes)) if i != p]  # .kir dimension -> logical dimension
        perm = [order.index(i) for i in range(len(sizes))]
    loc = user_location()
    hint = name or value_name("out" if buffer.space == "dram" else "t")
    dt = to_dtype(dtype) if dtype is not None else F32
    shared = None
    if buffer.space == "dram" and ctx.launch_outputs is not None and loc is not None:
        # One HBM tensor for every program instance of an SPMD launch (tandem.launch).
        shared = (loc.filename, loc.line, loc.col, tuple(sizes), dt.kir)
        if shared in ctx.launch_outputs:
            return ctx.launch_outputs[shared]
    block_map = None
    if isinstance(buffer, Placement) and buffer.space != "dram":
        p = par[0] if par else 0
        block_map = BlockMap(buffer, sizes[:p], sizes[p], math.prod(sizes[p + 1:]) * dt.itemsize)
        sizes[:p] = block_map.physical
    t = ctx.declare(sizes, dt, buffer.space, hint, loc, False, ctx.call, perm)
    if block_map is not None:
        t.buf.block_map = block_map
        if block_map.extent is not None:
            first, end = ctx.placements.place(block_map.extent)
            t.buf.tensor.attrs += [("address", first), ("extent", end - first)]
    if shared is not None:
        ctx.launch_outputs[shared] = t
    if fill is not None:
        if buffer.space == "dram":
            fail("nl.zeros/nl.full in HBM: only SBUF and PSUM tiles are initialised by the tracer (memset)")
        memset_into(t, fill)
        ctx.last.fill = True  # tandem.psum_start may fold it into the matmuls that follow
    elif buffer.space == "psum":
        # NKI's first matmul into an uninitialised PSUM tile overwrites it: a zero fill that only
        # tandem.psum_start's folding keeps (as the matmuls' start), else drops.
        inst = ctx.emit("memset", [t], [], [("value", 0)], prefix="psum_placeholder")  # its own names
        if inst is not None:
            inst.fill = inst.placeholder = True
    return t


__all__ = ["load", "store", "dma_copy", "tensor_copy", "memset", "matmul", "activation", "elementwise",
           "tensor_scalar", "tensor_tensor", "tensor_tensor_scan", "reduce", "transpose", "iota", "allocate",
           "PSUM"]
