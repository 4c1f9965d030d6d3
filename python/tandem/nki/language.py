"""`nki.language` for the tandem tracer: `import tandem.nki.language as nl`.

Names and argument conventions follow the public NKI API (nki.language). Calls record
instructions while `tandem.trace` runs a kernel; a name this module does not define raises
a located `TraceError`.
"""

from .. import ops
from ..active import current, fail
from ..dtypes import DTYPES, HBM, PRIVATE_HBM, PSUM, PSUM_PARTITION_BYTES, SBUF, SHARED_HBM, ParDim, to_dtype
from ..indices import IndexRange, Sym, unwrap
from ..ir import FLAG
# Private, so that nl.describe and nl.is_int, which NKI lacks, stay refused (__getattr__ below).
from ..indices import describe as _describe
from ..indices import is_int as _is_int
from ..errors import printable as _printable
from ..loops import LoopRange
from ..tiles import Tile
from ..launch import NeuronCores
from ..launch import spmd_dim as launch_spmd_dim
from . import compiler as _compiler
from ._api import api, bind, unsupported

# -- element types and memories -----------------------------------------------------------
bfloat16 = DTYPES["bfloat16"]
float16 = DTYPES["float16"]
float32 = DTYPES["float32"]
tfloat32 = DTYPES["tfloat32"]
float8_e4m3 = DTYPES["float8_e4m3"]
float8_e5m2 = DTYPES["float8_e5m2"]
int8 = DTYPES["int8"]
uint8 = DTYPES["uint8"]
int16 = DTYPES["int16"]
uint16 = DTYPES["uint16"]
int32 = DTYPES["int32"]
uint32 = DTYPES["uint32"]
bool_ = DTYPES["bool_"]

float8_e4m3fn = float8_e4m3
fp32 = float32

sbuf = SBUF
psum = PSUM
hbm = HBM
shared_hbm = SHARED_HBM
private_hbm = PRIVATE_HBM


class tile_size:
    """Hardware tile limits (NeuronCore-v2/v3)."""

    pmax = 128  # partitions
    psum_fmax = 512  # f32 elements per partition in one PSUM bank
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512
    bn_stats_fmax = 512
    psum_partition_bytes = PSUM_PARTITION_BYTES


def par_dim(size):
    """Marks the partition dimension in an allocation's shape: nl.ndarray((8, nl.par_dim(128), 512), ...)."""
    return ParDim(size)


# -- loops --------------------------------------------------------------------------------


def affine_range(start, stop=None, step=1, directives=None, precise_schedule=None):
    """A loop whose iterations are independent except through accumulation: one `.kir` loop.
    `directives` and `precise_schedule` steer the Neuron compiler's scheduling: accepted, not
    traced."""
    return LoopRange("affine_range", start, stop, step)


def sequential_range(start, stop=None, step=1, directives=None, precise_schedule=None):
    """A loop with loop-carried dependences: one `.kir` loop (dependences come from the accesses)."""
    return LoopRange("sequential_range", start, stop, step)


def dynamic_range(start, stop=None, step=1):
    """A loop whose trip count the hardware reads at run time; with the constant bounds a traced
    kernel has, one `.kir` loop as sequential_range."""
    return LoopRange("sequential_range", start, stop, step)


def no_reorder():
    """`with nl.no_reorder():` keeps the block in program order, as the trace emits it anyway."""
    return _compiler.no_reorder()


def device_print(*args, **kwargs):
    """Prints from the device in NKI's simulator; nothing on the traced kernel."""


def is_sbuf(buffer):
    return getattr(buffer, "space", None) == "sbuf"


def is_psum(buffer):
    return getattr(buffer, "space", None) == "psum"


def is_hbm(buffer):
    return getattr(buffer, "space", None) == "dram"


def is_on_chip(buffer):
    return is_sbuf(buffer) or is_psum(buffer)


def expand_dims(data, axis):
    """A view with a dimension of size 1 added at `axis`."""
    shape = list(data.shape)
    shape.insert(axis if axis >= 0 else len(shape) + axis + 1, 1)
    return data.reshape(tuple(shape))


def static_range(start, stop=None, step=1, directives=None):
    """Unrolled at trace time: the body is traced once per value."""
    for what, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, Sym):
            current("nl.static_range")
            fail(f"static_range {what} {v!r} depends on a loop index", call="nl.static_range")
    return range(start, stop, step) if stop is not None else range(start)


# -- allocation ---------------------------------------------------------------------------


@api("nl.ndarray")
def ndarray(shape, dtype, buffer=None, name="", lazy_initialization=False):
    return ops.allocate(shape, dtype, buffer, name)


@api("nl.zeros")
def zeros(shape, dtype, buffer=None, name="", lazy_initialization=False):
    return ops.allocate(shape, dtype, buffer, name, fill=0)


@api("nl.ones")
def ones(shape, dtype, buffer=None, name="", lazy_initialization=False):
    return ops.allocate(shape, dtype, buffer, name, fill=1)


@api("nl.full")
def full(shape, fill_value, dtype, buffer=None, name="", lazy_initialization=False):
    return ops.allocate(shape, dtype, buffer, name, fill=fill_value)


def _like(a, call):
    """The tile or tensor a `*_like` call copies the shape, dtype and buffer of."""
    if not all(hasattr(a, attr) for attr in ("shape", "dtype", "buffer")):
        fail(f"a needs a tile or tensor, got {_describe(a)}", call=call)
    return a


@api("nl.zeros_like")
def zeros_like(a, dtype=None, buffer=None, name=""):
    a = _like(a, "nl.zeros_like")
    return ops.allocate(a.shape, dtype or a.dtype, buffer or a.buffer, name, fill=0)


@api("nl.empty_like")
def empty_like(a, dtype=None, buffer=None, name=""):
    a = _like(a, "nl.empty_like")
    return ops.allocate(a.shape, dtype or a.dtype, buffer or a.buffer, name)


ndarray_like = empty_like

# -- memory -------------------------------------------------------------------------------


@api("nl.load")
def load(src, mask=None, dtype=None):
    bind(("src", "mask", "dtype"), (src,), {"mask": mask, "dtype": dtype})
    return ops.load(src, dtype)


@api("nl.store")
def store(dst, value, mask=None):
    bind(("dst", "value", "mask"), (dst, value), {"mask": mask})
    ops.store(dst, value)


@api("nl.copy")
def copy(x, dtype=None, mask=None):
    bind(("x", "dtype", "mask"), (x,), {"dtype": dtype, "mask": mask})
    return ops.tensor_copy(x, dtype)


# -- matmul, transpose --------------------------------------------------------------------


@api("nl.matmul")
def matmul(x, y, transpose_x=False, mask=None):
    bind(("x", "y", "transpose_x", "mask"), (x, y), {"mask": mask})
    if not transpose_x:
        # NKI transposes x on TensorE first (through PSUM, then copied back to SBUF); so does the trace.
        xt = ops.transpose(x)
        x = ops.tensor_copy(xt, dtype=x.dtype)
    return ops.matmul(x, y)


@api("nl.load_transpose2d")
def load_transpose2d(src, dtype=None, mask=None):
    """HBM to SBUF, transposed on the way (a DMA load with `{transpose}`)."""
    bind(("src", "dtype", "mask"), (src,), {"mask": mask})
    return ops.load_transposed(src, dtype)


@api("nl.broadcast_to")
def broadcast_to(src, shape):
    """A read-only view of src repeated along its size-1 dimensions."""
    if not isinstance(src, Tile):
        fail(f"nl.broadcast_to of {_describe(src)}: the tracer broadcasts tiles only")
    return src.broadcast_to(shape)


@api("nl.shared_constant")
def shared_constant(constant, dtype=None):
    """A constant the kernel reads from HBM (a numpy array): an HBM tensor of its shape."""
    shape = getattr(constant, "shape", None)
    if not shape:
        fail(f"nl.shared_constant takes an array, found {_describe(constant)}")
    dt = dtype if dtype is not None else getattr(getattr(constant, "dtype", None), "name", "float32")
    return ops.allocate(tuple(int(n) for n in shape), dt, SHARED_HBM, "")


@api("nl.atomic_rmw")
def atomic_rmw(dst, value, op, mask=None):
    """dst = op(dst, value) in HBM, by the DMA (through an index tile, rows that may repeat): a
    save whose write reads what it writes (`{accumulate}`)."""
    bind(("dst", "value", "op", "mask"), (dst, value, op), {"mask": mask})
    ops.op_name(op, ops.BINARY_OPS, "operator")
    ops.store(dst, value, attrs=[("accumulate", FLAG), ("nki", "atomic_rmw")])


@api("nl.gather_flattened")
def gather_flattened(data, indices, axis=0, dtype=None, mask=None):
    """Elements of each partition of data at the flattened free positions indices names, on
    GpSimdE: a tensor_copy of the gathered elements."""
    if not isinstance(indices, Tile):
        fail(f"indices must be a tile, found {_describe(indices)}")
    return ops.vector_op("tensor_copy", "gather", data, reads=[indices], shape=indices.tile_shape(),
                         attrs=[("nki", "gather_flattened")], dtype=dtype, hint="gath", engine="pool")


@api("nl.where")
def where(condition, x, y, dtype=None, mask=None):
    """x where condition holds, else y, element by element on VectorE: a tensor_tensor over the
    condition and x (and y when it is a tile)."""
    reads = [t for t in (x, y) if isinstance(t, Tile)]
    if not isinstance(condition, Tile) or not reads:
        fail(f"nl.where takes a condition tile and at least one tile to select from, found {_describe(condition)}, "
             f"{_describe(x)}, {_describe(y)}")
    return ops.vector_op("tensor_tensor", "select", condition, reads=reads, attrs=[("nki", "where")], dtype=dtype,
                         hint="sel")


@api("nl.loop_reduce")
def loop_reduce(x, op, loop_indices, dtype=None, mask=None, name=None):
    """x folded into the destination over the iterations of the loops in loop_indices: the
    destination is op's other operand (`b = op(b, x)` each iteration), a tensor_tensor on VectorE
    whose write reads what it writes (`{accumulate}`)."""
    if not isinstance(loop_indices, (list, tuple)) or not loop_indices:
        fail(f"loop_indices must be a list of loop indices, found {_describe(loop_indices)}")
    out = ops.vector_op("tensor_tensor", ops.op_name(op, ops.BINARY_OPS, "operator"), x,
                        attrs=[("nki", "loop_reduce")], dtype=dtype, hint="lr")
    current().last.attrs.insert(0, ("accumulate", FLAG))
    return out


@api("nl.shared_identity_matrix")
def shared_identity_matrix(n, dtype="uint8", dst=None):
    """An n x n identity matrix the kernel reads from HBM: an HBM tensor of that shape."""
    if not _is_int(n) or int(n) < 1:
        fail(f"n must be a positive integer, found {_describe(n)}")
    return ops.allocate((int(n), int(n)), dtype, SHARED_HBM, "")


@api("nl.rand")
def rand(shape, dtype="float32", **kwargs):
    """A tile of random values, generated on GpSimdE: timed as an iota of its elements."""
    bind(("mask",), (), kwargs)
    out = current().temp(tuple(int(s) for s in shape), to_dtype(dtype), "sbuf", "rand")
    ops.iota(out, engine="pool")
    current().last.set_attr("nki", "rand")
    return out


def static_cast(ndarray, dtype):
    """Outside a kernel, in the code that calls it: the array converted to dtype where numpy has
    that type (bfloat16 and the float8 types stay float32: Tandem reads their shapes only)."""
    import numpy
    name = getattr(dtype, "name", None) or getattr(dtype, "__name__", None) or str(dtype)
    try:
        return numpy.asarray(ndarray).astype(name)
    except TypeError:
        return numpy.asarray(ndarray, dtype=numpy.float32)


class finfo:
    """nl.finfo(dtype): the largest and smallest finite values of a float type."""

    def __init__(self, dtype):
        t = to_dtype(dtype)
        self.dtype, self.max, self.min, self.bits = t, t.max, t.min, 8 * t.itemsize


@api("nl.transpose")
def transpose(x, dtype=None, mask=None):
    bind(("x", "dtype", "mask"), (x,), {"mask": mask})
    return ops.transpose(x)


# -- element-wise -------------------------------------------------------------------------


def _activation(func):
    def fn(x, dtype=None, mask=None):
        bind(("x", "dtype", "mask"), (x,), {"mask": mask})
        if not isinstance(x, Tile):
            fail(f"nl.{func} of {_describe(x)}: the tracer computes on tiles only")
        return ops.activation(func, x, dtype=dtype)

    fn.__name__ = func
    fn.__doc__ = f"nl.{func}(x): `activation {{func = \"{func}\"}}` on ScalarE."
    return api(f"nl.{func}")(fn)


exp = _activation("exp")
log = _activation("log")
tanh = _activation("tanh")
sigmoid = _activation("sigmoid")
relu = _activation("relu")
gelu = _activation("gelu")
gelu_apprx_tanh = _activation("gelu_apprx_tanh")
silu = _activation("silu")
sqrt = _activation("sqrt")
rsqrt = _activation("rsqrt")
square = _activation("square")
reciprocal = _activation("reciprocal")
abs = _activation("abs")
negative = _activation("negative")
sin = _activation("sin")
cos = _activation("cos")
erf = _activation("erf")
softplus = _activation("softplus")
mish = _activation("mish")
sign = _activation("sign")
arctan = _activation("arctan")
tan = _activation("tan")
ceil = _activation("ceil")
floor = _activation("floor")
trunc = _activation("trunc")
silu_dx = _activation("silu_dx")
gelu_dx = _activation("gelu_dx")
gelu_apprx_sigmoid = _activation("gelu_apprx_sigmoid")
gelu_apprx_sigmoid_dx = _activation("gelu_apprx_sigmoid_dx")
erf_dx = _activation("erf_dx")
invert = _activation("invert")
logical_not = _activation("logical_not")


def _binary(name):
    def fn(x, y, dtype=None, mask=None):
        bind(("x", "y", "dtype", "mask"), (x, y), {"mask": mask})
        return ops.elementwise(name, x, y, dtype=dtype)

    fn.__name__ = name
    fn.__doc__ = f"nl.{name}(x, y): tensor_tensor for two tiles, tensor_scalar with a number or a [P, 1] tile."
    return api(f"nl.{name}")(fn)


add = _binary("add")
subtract = _binary("subtract")
multiply = _binary("multiply")
divide = _binary("divide")
maximum = _binary("maximum")
minimum = _binary("minimum")
power = _binary("power")
abs_max = _binary("abs_max")
abs_min = _binary("abs_min")
equal = _binary("equal")
not_equal = _binary("not_equal")
less = _binary("less")
less_equal = _binary("less_equal")
greater = _binary("greater")
greater_equal = _binary("greater_equal")
logical_and = _binary("logical_and")
logical_or = _binary("logical_or")
logical_xor = _binary("logical_xor")
bitwise_and = _binary("bitwise_and")
bitwise_or = _binary("bitwise_or")
bitwise_xor = _binary("bitwise_xor")
left_shift = _binary("left_shift")
right_shift = _binary("right_shift")
mod = _binary("mod")
fmod = _binary("fmod")


def _reduction(name):
    def fn(x, axis, dtype=None, mask=None, keepdims=False):
        bind(("x", "axis", "dtype", "mask", "keepdims"), (x, axis), {"mask": mask})
        return ops.reduce(name, x, axis, keepdims=keepdims, dtype=dtype)

    fn.__name__ = name
    fn.__doc__ = f"nl.{name}(x, axis): tensor_reduce over free axes on VectorE."
    return api(f"nl.{name}")(fn)


sum = _reduction("sum")
max = _reduction("max")
min = _reduction("min")
mean = _reduction("mean")
prod = _reduction("prod")

# -- indices ------------------------------------------------------------------------------


def arange(start, stop=None):
    """An index range for advanced indexing: `nl.arange(128)[:, None]`."""
    if stop is None:
        start, stop = 0, start
    s, e = unwrap(start, "nl.arange start"), unwrap(stop, "nl.arange stop")
    if not _is_int(s) or not _is_int(e) or e <= s:
        fail(f"nl.arange({_printable(repr(start))}, {_printable(repr(stop))}) must be a non-empty constant range",
             call="nl.arange")
    return IndexRange(s, e - s)


class _MGrid:
    """`nl.mgrid[0:128, 0:512]`: one index range per slice."""

    def __getitem__(self, key):
        single = not isinstance(key, tuple)
        keys = (key,) if single else key
        out = []
        for axis, k in enumerate(keys):
            if not isinstance(k, slice) or k.step not in (None, 1):
                fail(f"nl.mgrid takes contiguous slices, found {_printable(repr(k))}", call="nl.mgrid")
            lo = 0 if k.start is None else k.start
            if not _is_int(lo) or not _is_int(k.stop) or k.stop <= lo:
                fail(f"nl.mgrid slice {_printable(repr(k))} must be a non-empty constant range", call="nl.mgrid")
            out.append(IndexRange(lo, k.stop - lo, axis))
        for r in out:
            r.grid = tuple(r.extent for r in out)
        return out[0] if single else _Grid(out)


class _Grid(tuple):
    """What `nl.mgrid[...]` returns: its index ranges, also as `.p` (the partition axis) and
    `.x`, `.y`, `.z` (the free axes)."""

    p = property(lambda self: self[0])
    x = property(lambda self: self[1])
    y = property(lambda self: self[2])
    z = property(lambda self: self[3])


mgrid = _MGrid()


def ds(start, size):
    """A dynamic slice: `t[nl.ds(k * 128, 128), :]` is `t[k * 128:k * 128 + 128, :]`."""
    return slice(start, start + size)


def _program(call, axis):
    ctx = current(call)
    ids, grid = ctx.program if ctx.program is not None else ((0,), (1,))
    if not isinstance(axis, int) or isinstance(axis, bool) or not 0 <= axis < len(grid):
        fail(f"axis {_printable(repr(axis))} is not an axis of the launch grid {list(grid)}", call=call)
    return ids, grid


def program_id(axis=0):
    """This program instance's index along `axis` of the launch grid (`kernel[4, 2]`)."""
    ids, _ = _program("nl.program_id", axis)
    return ids[axis]


def num_programs(axes=None, axis=None):
    """The launch grid's size along `axes` (an axis or a tuple of them; NKI's parameter, `axis`
    also taken): the product of their sizes, all instances when None."""
    axes = axis if axes is None else axes
    if axes is None or isinstance(axes, (tuple, list)):
        _, grid = _program("nl.num_programs", 0)
        n = 1
        for a in (range(len(grid)) if axes is None else axes):
            n *= num_programs(a)
        return n
    _, grid = _program("nl.num_programs", axes)
    return grid[axes]


def program_ndim():
    """The number of dimensions of the launch grid."""
    _, grid = _program("nl.program_ndim", 0)
    return len(grid)


nc = NeuronCores
spmd_dim = launch_spmd_dim


def sizeinbytes(dtype):
    """Bytes of one element of `dtype`."""
    return to_dtype(dtype).itemsize


def __getattr__(name):
    unsupported("nl", name)
