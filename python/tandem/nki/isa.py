"""`nki.isa` for the tandem tracer: `import tandem.nki.isa as nisa`.

Both NKI calling conventions are accepted: the one that returns a new tile
(`x = nisa.tensor_copy(src)`, NKI before 2.24) and the one with the destination first
(`nisa.tensor_copy(dst, src)` or `dst=`). A name this module does not define raises a
located `TraceError`.
"""

from .. import ops
from ..active import current, fail
from ..indices import IndexRange
# Private, so that nisa.describe, which NKI lacks, stays refused (__getattr__ below).
from ..indices import describe as _describe
from ..tiles import Tile
from ._api import api, bind, is_tile, refuse_set, unsupported


class _Engine:
    def __init__(self, name, kir):
        self.name, self.kir = name, kir

    def __repr__(self):
        return f"nisa.engine.{self.name}"


class engine:
    """Where an instruction runs (`engine=nisa.vector_engine`)."""

    tensor = _Engine("tensor", "pe")
    vector = _Engine("vector", "dve")
    scalar = _Engine("scalar", "act")
    gpsimd = _Engine("gpsimd", "pool")
    unknown = _Engine("unknown", None)


tensor_engine = engine.tensor
vector_engine = engine.vector
scalar_engine = engine.scalar
gpsimd_engine = engine.gpsimd
unknown_engine = engine.unknown


class reduce_cmd:
    idle = "idle"
    reset = "reset"
    reduce = "reduce"
    reset_reduce = "reset_reduce"
    load_reduce = "load_reduce"


def _engine(value):
    if value is None or value is engine.unknown:
        return None
    if isinstance(value, _Engine):
        return value.kir
    fail(f"engine must be one of nisa.engine.*, found {_describe(value)}")


def _dst_form(args, kwargs, tiles_before_ops):
    """True when the call passes a destination first (or as dst=)."""
    if "dst" in kwargs:
        return True
    return len(args) > tiles_before_ops and all(is_tile(a) for a in args[:tiles_before_ops + 1])


@api("nisa.nc_matmul")
def nc_matmul(*args, **kwargs):
    """stationary.T @ moving on TensorE into PSUM. With a destination, the product accumulates
    into it (`{accumulate}`) unless `accumulate=False` says it overwrites; otherwise a new PSUM
    tile is returned, which `psum_tile += nisa.nc_matmul(...)` accumulates."""
    names = ["stationary", "moving", "is_stationary_onezero", "is_moving_onezero", "is_transpose", "accumulate",
             "tile_position", "tile_size", "perf_mode", "mask", "name"]
    dst_form = _dst_form(args, kwargs, 2)
    if dst_form:
        names = ["dst"] + names
    a = bind(names, args, kwargs, required=["stationary", "moving"] + (["dst"] if dst_form else []))
    mode = getattr(a.get("perf_mode"), "name", a.get("perf_mode"))
    if mode not in (None, "none", "double_row", "double_row_gen3"):
        fail(f"perf_mode {_describe(mode)}: the modes are nisa.matmul_perf_mode.none and double_row")
    # is_transpose: the PE transposes through the identity it is given, as a matmul of those
    # operands; the *_onezero hints change what the ISA computes, not its time. tile_position /
    # tile_size place a small matmul in a quadrant of the PE array: it is timed as a matmul of
    # its operands on the whole array (the models have one PE resource).
    flags = [key for key in ("is_transpose", "is_stationary_onezero", "is_moving_onezero") if a.get(key)]
    accumulate = dst_form and not a.get("is_transpose") and a.get("accumulate") is not False
    if mode in ("double_row", "double_row_gen3"):
        return ops.matmul_double_row(a["stationary"], a["moving"], dst=a.get("dst"), accumulate=accumulate)
    return ops.matmul(a["stationary"], a["moving"], dst=a.get("dst"), accumulate=accumulate, flags=flags)


class _PerfMode:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"nisa.matmul_perf_mode.{self.name}"


class matmul_perf_mode:
    """nc_matmul's performance mode: double_row packs two FP8 rows of K per PE (NeuronCore-v3)."""

    none = _PerfMode("none")
    double_row = _PerfMode("double_row")


@api("nisa.nc_transpose")
def nc_transpose(*args, **kwargs):
    dst_form = _dst_form(args, kwargs, 1)
    names = (["dst"] if dst_form else []) + ["data", "mask", "dtype", "engine", "name"]
    a = bind(names, args, kwargs, required=["data"])
    eng = _engine(a.get("engine"))
    return ops.transpose(a["data"], dst=a.get("dst"), engine=eng)


@api("nisa.activation")
def activation(*args, **kwargs):
    dst_form = "dst" in kwargs or (len(args) > 0 and is_tile(args[0]))
    names = (["dst"] if dst_form else []) + ["op", "data", "bias", "scale", "reduce_op", "reduce_res", "reduce_cmd",
                                             "mask", "dtype", "engine", "name"]
    a = bind(names, args, kwargs, required=["op", "data"])
    if a.get("reduce_op") is not None and a.get("reduce_res") is None:
        fail("reduce_op without reduce_res: the reduction's destination is not traced (pass reduce_res=)")
    return ops.activation(a["op"], a["data"], bias=a.get("bias"), scale=a.get("scale", 1.0), dtype=a.get("dtype"),
                          dst=a.get("dst"), reduce_res=a.get("reduce_res"), engine=_engine(a.get("engine")))


@api("nisa.activation_reduce")
def activation_reduce(*args, **kwargs):
    dst_form = "dst" in kwargs or (len(args) > 0 and is_tile(args[0]))
    names = (["dst"] if dst_form else []) + ["op", "data", "reduce_op", "reduce_res", "bias", "scale", "mask",
                                             "dtype", "name"]
    a = bind(names, args, kwargs, required=["op", "data", "reduce_res"])
    return ops.activation(a["op"], a["data"], bias=a.get("bias"), scale=a.get("scale", 1.0), dtype=a.get("dtype"),
                          dst=a.get("dst"), reduce_res=a["reduce_res"])


@api("nisa.tensor_tensor")
def tensor_tensor(*args, **kwargs):
    dst_form = _dst_form(args, kwargs, 2)
    names = (["dst"] if dst_form else []) + ["data1", "data2", "op", "mask", "dtype", "engine", "name"]
    a = bind(names, args, kwargs, required=["data1", "data2", "op"])
    return ops.tensor_tensor(a["data1"], a["data2"], a["op"], dtype=a.get("dtype"), dst=a.get("dst"),
                             engine=_engine(a.get("engine")))


@api("nisa.tensor_scalar")
def tensor_scalar(*args, **kwargs):
    dst_form = "dst" in kwargs or (len(args) > 1 and is_tile(args[0]) and is_tile(args[1]))
    names = (["dst"] if dst_form else []) + ["data", "op0", "operand0", "reverse0", "op1", "operand1", "reverse1",
                                             "mask", "dtype", "engine", "name"]
    a = bind(names, args, kwargs, required=["data", "op0", "operand0"])
    return ops.tensor_scalar(a["data"], a["op0"], a["operand0"], a.get("reverse0", False), a.get("op1"),
                             a.get("operand1"), a.get("reverse1", False), dtype=a.get("dtype"), dst=a.get("dst"),
                             engine=_engine(a.get("engine")))


@api("nisa.tensor_reduce")
def tensor_reduce(*args, **kwargs):
    dst_form = "dst" in kwargs or (len(args) > 0 and is_tile(args[0]))
    names = (["dst"] if dst_form else []) + ["op", "data", "axis", "mask", "dtype", "negate", "keepdims", "name"]
    a = bind(names, args, kwargs, required=["op", "data", "axis"])
    return ops.reduce(a["op"], a["data"], a["axis"], keepdims=a.get("keepdims", False),
                      negate=a.get("negate", False), dtype=a.get("dtype"), dst=a.get("dst"))


@api("nisa.tensor_copy")
def tensor_copy(*args, **kwargs):
    dst_form = _dst_form(args, kwargs, 1)
    names = (["dst"] if dst_form else []) + ["src", "mask", "dtype", "engine", "name"]
    a = bind(names, args, kwargs, required=["src"])
    return ops.tensor_copy(a["src"], dtype=a.get("dtype"), dst=a.get("dst"), engine=_engine(a.get("engine")))


@api("nisa.tensor_copy_dynamic_src")
def tensor_copy_dynamic_src(*args, **kwargs):
    """A copy whose source is indexed by a register value (`src[ix, offsets[0, i] + iy]`): a
    tensor_copy reading the offset's tile and any elements of the dimension it indexes."""
    return tensor_copy(*args, **kwargs)


@api("nisa.tensor_copy_dynamic_dst")
def tensor_copy_dynamic_dst(*args, **kwargs):
    """A copy whose destination is indexed by a register value: a tensor_copy that reads the
    offset's tile and may write any elements of the dimension it indexes."""
    return tensor_copy(*args, **kwargs)


@api("nisa.tensor_tensor_scan")
def tensor_tensor_scan(*args, **kwargs):
    dst_form = "dst" in kwargs or (len(args) > 3 and is_tile(args[0]) and not callable(args[3]))
    names = (["dst"] if dst_form else []) + ["data0", "data1", "initial", "op0", "op1", "reverse0", "reverse1",
                                             "mask", "dtype", "name"]
    a = bind(names, args, kwargs, required=["data0", "data1", "initial", "op0", "op1"])
    refuse_set(a, reverse0=False, reverse1=False)
    return ops.tensor_tensor_scan(a["data0"], a["data1"], a["initial"], a["op0"], a["op1"], dtype=a.get("dtype"),
                                  dst=a.get("dst"))


@api("nisa.memset")
def memset(*args, **kwargs):
    dst_form = "dst" in kwargs or (len(args) > 0 and is_tile(args[0]))
    names = (["dst", "value"] if dst_form else ["shape", "value", "dtype"]) + ["mask", "engine", "name"]
    a = bind(names, args, kwargs, required=["dst", "value"] if dst_form else ["shape", "value", "dtype"])
    if dst_form:
        return ops.memset_into(a["dst"], a["value"], engine=_engine(a.get("engine")))
    return ops.memset(a["shape"], a["value"], a["dtype"], engine=_engine(a.get("engine")))


@api("nisa.iota")
def iota(*args, **kwargs):
    """Fills a tile with index values on GpSimdE. `nisa.iota(expr, dtype)` takes the shape from
    an index range (`nl.arange(n)[None, :]` is [1, n]); `nisa.iota(dst, expr)` writes dst."""
    dst_form = "dst" in kwargs or (len(args) > 0 and is_tile(args[0]))
    names = (["dst"] if dst_form else []) + ["expr", "dtype", "offset", "mask", "engine", "name"]
    a = bind(names, args, kwargs, required=["expr"] + ([] if dst_form else ["dtype"]))
    dst = a.get("dst")
    if dst is None:
        expr = a["expr"]
        if not isinstance(expr, IndexRange):
            fail(f"nisa.iota's expr must be an index expression over nl.arange/nl.mgrid ranges "
                 f"(2 * nl.arange(n)[None, :]), found {_describe(expr)}")
        extents = {0 if t.axis is None else t.axis: t.extent for t in expr.terms}
        shape = expr.grid or tuple(extents.get(axis, 1) for axis in range(max(2, max(extents) + 1)))
        dst = current().temp(shape, ops.to_dtype(a["dtype"]), "sbuf", "iota")
    return ops.iota(dst)


@api("nisa.dma_copy")
def dma_copy(*args, **kwargs):
    a = bind(["dst", "src", "mask", "dst_rmw_op", "oob_mode", "dge_mode", "engine", "priority", "name"], args,
             kwargs, required=["dst", "src"])
    return ops.dma_copy(a["dst"], a["src"])


def _dst_first(args, kwargs):
    return "dst" in kwargs or (len(args) > 1 and is_tile(args[0]) and is_tile(args[1]))


@api("nisa.reciprocal")
def reciprocal(*args, **kwargs):
    """1 / data on VectorE, timed as a tensor_scalar of its elements (ISA: reciprocal)."""
    names = (["dst"] if _dst_first(args, kwargs) else []) + ["data", "dtype", "mask", "engine", "name"]
    a = bind(names, args, kwargs, required=["data"])
    return ops.vector_op("tensor_scalar", "reciprocal", a["data"], dtype=a.get("dtype"), dst=a.get("dst"),
                         hint="recip")


@api("nisa.tensor_scalar_reduce")
def tensor_scalar_reduce(*args, **kwargs):
    """(data op0 operand0) and its reduction along the free axis into reduce_res, on VectorE:
    a tensor_scalar that also writes reduce_res (ISA: tensor_scalar_reduce)."""
    names = (["dst"] if _dst_first(args, kwargs) else []) + ["data", "op0", "operand0", "reduce_op", "reduce_res",
                                                            "reverse0", "dtype", "mask", "name"]
    a = bind(names, args, kwargs, required=["data", "op0", "operand0", "reduce_op", "reduce_res"])
    operand = a["operand0"]
    attrs = [("reduce_op", ops.op_name(a["reduce_op"], ops.REDUCE_OPS, "reduce op")), ("nki", "tensor_scalar_reduce")]
    if not is_tile(operand):
        attrs.append(("scalar", float(operand)))
    return ops.vector_op("tensor_scalar", ops.op_name(a["op0"], ops.BINARY_OPS, "operator"), a["data"],
                         reads=[operand], writes=[a["reduce_res"]], attrs=attrs, dtype=a.get("dtype"),
                         dst=a.get("dst"), hint="tsr")


@api("nisa.scalar_tensor_tensor")
def scalar_tensor_tensor(*args, **kwargs):
    """(data op0 operand0) op1 operand1 on VectorE: a tensor_tensor of its elements (ISA:
    scalar_tensor_tensor)."""
    names = (["dst"] if _dst_first(args, kwargs) else []) + ["data", "op0", "operand0", "op1", "operand1",
                                                            "reverse0", "reverse1", "dtype", "mask", "name"]
    a = bind(names, args, kwargs, required=["data", "op0", "operand0", "op1", "operand1"])
    attrs = [("op1", ops.op_name(a["op1"], ops.BINARY_OPS, "operator")), ("nki", "scalar_tensor_tensor")]
    if not is_tile(a["operand0"]):
        attrs.append(("scalar", float(a["operand0"])))
    return ops.vector_op("tensor_tensor", ops.op_name(a["op0"], ops.BINARY_OPS, "operator"), a["data"],
                         reads=[a["operand0"], a["operand1"]], attrs=attrs, dtype=a.get("dtype"), dst=a.get("dst"),
                         hint="stt")


@api("nisa.bn_stats")
def bn_stats(*args, **kwargs):
    """Per-partition mean and variance statistics of data, 6 values per 512 elements, on VectorE:
    a tensor_reduce of its elements (ISA: bn_stats)."""
    names = (["dst"] if _dst_first(args, kwargs) else []) + ["data", "mask", "dtype", "name"]
    a = bind(names, args, kwargs, required=["data"])
    x = a["data"]
    groups = -(-x.free() // 512) if is_tile(x) else 1
    return ops.vector_op("tensor_reduce", "bn_stats", x, shape=(x.partitions(), 6 * groups), dtype=a.get("dtype"),
                         dst=a.get("dst"), hint="stats")


@api("nisa.bn_aggr")
def bn_aggr(*args, **kwargs):
    """Mean and variance per partition from bn_stats' statistics, on VectorE (ISA: bn_aggr)."""
    names = (["dst"] if _dst_first(args, kwargs) else []) + ["data", "mask", "dtype", "name"]
    a = bind(names, args, kwargs, required=["data"])
    x = a["data"]
    return ops.vector_op("tensor_reduce", "bn_aggr", x, shape=(x.partitions(), 2), dtype=a.get("dtype"),
                         dst=a.get("dst"), hint="aggr")


@api("nisa.affine_select")
def affine_select(*args, **kwargs):
    """Each element of on_true_tile where the affine predicate holds, else on_false_value, on
    GpSimdE: a tensor_copy of its elements there (ISA: affine_select)."""
    names = (["dst"] if _dst_first(args, kwargs) else []) + ["pred", "on_true_tile", "on_false_value", "mask",
                                                            "dtype", "name"]
    a = bind(names, args, kwargs, required=["pred", "on_true_tile", "on_false_value"])
    src = ops.readable_on(a["on_true_tile"], "pool", "on_true_tile")
    out = ops.tensor_copy(src, dtype=a.get("dtype"), dst=a.get("dst"), engine="pool")
    current().last.set_attr("nki", "affine_select")
    return out


@api("nisa.dma_transpose")
def dma_transpose(*args, **kwargs):
    names = (["dst"] if _dst_first(args, kwargs) else []) + ["src", "axes", "mask", "dtype", "dge_mode", "oob_mode",
                                                            "priority", "name"]
    a = bind(names, args, kwargs, required=["src"])
    return ops.load_transposed(a["src"], dtype=a.get("dtype"), dst=a.get("dst"), axes=a.get("axes"))


class oob_mode:
    """What an indirect DMA does with an index out of bounds: fail or skip the element. Either way
    the transfer is timed over the rows it may reach."""

    error = "error"
    skip = "skip"


class dge_mode:
    """Which descriptor generator a DMA uses (`dge_mode=nisa.dge_mode.hwdge`): the queue's
    descriptors cost the same either way in the models, so the choice is accepted and not timed."""

    unknown = "unknown"
    swdge = "swdge"
    hwdge = "hwdge"
    none = "none"


def _call(args, kwargs, names, required, tile_inputs=1):
    """Bind an ISA call given either way: destination first (`dst=`, or one tile more than the
    call's `tile_inputs` leading tiles) or returning a new tile."""
    return bind((["dst"] if _dst_form(args, kwargs, tile_inputs) else []) + names, args, kwargs, required=required)


def _nki(name):
    return [("nki", name)]


@api("nisa.dropout")
def dropout(*args, **kwargs):
    """Zeroes elements of data with probability prob, on VectorE: a tensor_scalar of its elements
    (ISA: dropout)."""
    dst_form = "dst" in kwargs or (len(args) > 1 and is_tile(args[1]) and ("prob" in kwargs or len(args) > 2))
    a = bind((["dst"] if dst_form else []) + ["data", "prob", "mask", "dtype", "name"], args, kwargs,
             required=["data", "prob"])
    prob = a["prob"]
    attrs = _nki("dropout") + ([] if is_tile(prob) else [("scalar", float(prob))])
    return ops.vector_op("tensor_scalar", "dropout", a["data"], reads=[prob], attrs=attrs, dtype=a.get("dtype"),
                         dst=a.get("dst"), hint="drop")


@api("nisa.max8")
def max8(*args, **kwargs):
    """The 8 largest values of each partition, on VectorE: a tensor_reduce of its elements
    (ISA: max8)."""
    a = _call(args, kwargs, ["src", "mask", "dtype", "name"], ["src"])
    x = a["src"]
    return ops.vector_op("tensor_reduce", "max8", x, shape=(_partitions(x), 8), attrs=_nki("max8"),
                         dtype=a.get("dtype"), dst=a.get("dst"), hint="max8")


@api("nisa.nc_find_index8")
def nc_find_index8(*args, **kwargs):
    """Where each of 8 values first occurs in each partition, on VectorE: a tensor_reduce of the
    data's elements (ISA: nc_find_index8)."""
    a = _call(args, kwargs, ["data", "vals", "mask", "dtype", "name"], ["data", "vals"], tile_inputs=2)
    x = a["data"]
    return ops.vector_op("tensor_reduce", "find_index8", x, reads=[a["vals"]], shape=(_partitions(x), 8),
                         attrs=_nki("nc_find_index8"), dtype=a.get("dtype") or "uint32", dst=a.get("dst"),
                         hint="idx8")


@api("nisa.nc_match_replace8")
def nc_match_replace8(*args, **kwargs):
    """data with the first occurrence of each of 8 values replaced by imm (and their indices in
    dst_idx), on VectorE: a tensor_scalar of data's elements (ISA: nc_match_replace8)."""
    a = _call(args, kwargs, ["data", "vals", "imm", "dst_idx", "mask", "dtype", "name"], ["data", "vals", "imm"],
              tile_inputs=2)
    return ops.vector_op("tensor_scalar", "match_replace8", a["data"], reads=[a["vals"]], writes=[a.get("dst_idx")],
                         attrs=_nki("nc_match_replace8") + [("scalar", float(a["imm"]))], dtype=a.get("dtype"),
                         dst=a.get("dst"), hint="mr8")


@api("nisa.nc_stream_shuffle")
def nc_stream_shuffle(*args, **kwargs):
    """Moves partitions within each quadrant of 32 by shuffle_mask, on VectorE: a tensor_copy of
    src's elements (ISA: nc_stream_shuffle)."""
    a = bind(["src", "dst", "shuffle_mask", "mask", "dtype", "name"], args, kwargs,
             required=["src", "dst", "shuffle_mask"])
    shuffle = a["shuffle_mask"]
    if not isinstance(shuffle, (list, tuple)) or len(shuffle) != 32:
        fail(f"shuffle_mask must be a list of 32 partition numbers, found {_describe(shuffle)}")
    src, dst = a["src"], a["dst"]
    if is_tile(src) and is_tile(dst) and src.free() != dst.free():
        fail(f"dst must hold as many elements per partition as src: {list(dst.shape)} and {list(src.shape)}")
    ops.vector_op("tensor_copy", "stream_shuffle", src, attrs=_nki("nc_stream_shuffle"), shape=dst.tile_shape(),
                  dst=dst, hint="shuf")
    return dst


@api("nisa.tensor_partition_reduce")
def tensor_partition_reduce(*args, **kwargs):
    """Reduces data across its partitions into one, on GpSimdE: timed as a tensor_copy of its
    elements, GpSimdE's per-element cost (ISA: tensor_partition_reduce)."""
    dst_form = "dst" in kwargs or (len(args) > 0 and is_tile(args[0]))
    a = bind((["dst"] if dst_form else []) + ["op", "data", "mask", "dtype", "name"], args, kwargs,
             required=["op", "data"])
    x = a["data"]
    shape = (1,) + tuple(x.tile_shape()[1:]) if is_tile(x) else None
    return ops.vector_op("tensor_copy", ops.op_name(a["op"], ops.REDUCE_OPS, "reduce op"), x, shape=shape,
                         attrs=_nki("tensor_partition_reduce"), dtype=a.get("dtype"), dst=a.get("dst"), hint="pr",
                         engine="pool")


@api("nisa.select_reduce")
def select_reduce(*args, **kwargs):
    """on_true where predicate holds, else on_false, with an optional max along the free axis into
    reduce_res, on VectorE: a tensor_tensor of its elements (ISA: select_reduce)."""
    a = bind(["dst", "predicate", "on_true", "on_false", "reduce_res", "reduce_cmd", "reduce_op", "reverse_pred",
              "mask", "dtype", "name"], args, kwargs, required=["dst", "predicate", "on_true", "on_false"])
    reads = [a["predicate"]] + ([a["on_false"]] if is_tile(a["on_false"]) else [])
    ops.vector_op("tensor_tensor", "select", a["on_true"], reads=reads, writes=[a.get("reduce_res")],
                  attrs=_nki("select_reduce"), dtype=a.get("dtype"), dst=a["dst"], hint="sel")
    return a["dst"]


@api("nisa.range_select")
def range_select(*args, **kwargs):
    """Elements of on_true_tile whose free index lies between bound0 and bound1, else
    on_false_value, and their reduction into reduce_res, on VectorE: a tensor_scalar of its
    elements (ISA: range_select)."""
    a = _call(args, kwargs, ["on_true_tile", "comp_op0", "comp_op1", "bound0", "bound1", "reduce_cmd",
                             "reduce_res", "reduce_op", "range_start", "on_false_value", "mask", "dtype", "name"],
              ["on_true_tile", "comp_op0", "comp_op1", "bound0", "bound1"])
    for key in ("comp_op0", "comp_op1"):
        ops.op_name(a[key], ops.BINARY_OPS, "comparison")
    return ops.vector_op("tensor_scalar", "range_select", a["on_true_tile"], reads=[a["bound0"], a["bound1"]],
                         writes=[a.get("reduce_res")], attrs=_nki("range_select"), dtype=a.get("dtype"),
                         dst=a.get("dst"), hint="rsel")


@api("nisa.tensor_scalar_cumulative")
def tensor_scalar_cumulative(*args, **kwargs):
    """(src op0 imm0) accumulated along the free axis with op1, on VectorE: a tensor_scalar of its
    elements (ISA: tensor_scalar_cumulative)."""
    a = bind(["dst", "src", "op0", "op1", "imm0", "imm1", "reduce_cmd", "mask", "dtype", "name"], args, kwargs,
             required=["dst", "src", "op0", "op1", "imm0"])
    reads = [v for v in (a["imm0"], a.get("imm1")) if is_tile(v)]
    ops.vector_op("tensor_scalar", ops.op_name(a["op0"], ops.BINARY_OPS, "operator"), a["src"], reads=reads,
                  attrs=_nki("tensor_scalar_cumulative") + [("op1", ops.op_name(a["op1"], ops.BINARY_OPS,
                                                                                 "operator"))],
                  dtype=a.get("dtype"), dst=a["dst"], hint="tsc")
    return a["dst"]


@api("nisa.tensor_copy_predicated")
def tensor_copy_predicated(*args, **kwargs):
    """src copied into dst where predicate holds, on VectorE: a tensor_tensor of its elements
    (ISA: tensor_copy_predicated)."""
    a = bind(["dst", "src", "predicate", "reverse_pred", "mask", "dtype", "name"], args, kwargs,
             required=["dst", "src", "predicate"])
    ops.vector_op("tensor_tensor", "copy_predicated", a["src"], reads=[a["predicate"], a["dst"]],
                  attrs=_nki("tensor_copy_predicated"), dst=a["dst"], hint="cp")
    return a["dst"]


@api("nisa.local_gather")
def local_gather(*args, **kwargs):
    """Elements of src_buffer gathered by index within each group of 16 partitions, on GpSimdE:
    a tensor_copy of the gathered elements (ISA: local_gather). Each partition receives
    num_valid_indices x num_elem_per_idx elements (all of its core's indices by default)."""
    a = _call(args, kwargs, ["src_buffer", "index", "num_elem_per_idx", "num_valid_indices", "mask", "name"],
              ["src_buffer", "index"], tile_inputs=2)
    src, index = a["src_buffer"], a["index"]
    if a.get("dst") is not None:
        shape = a["dst"].tile_shape()
    else:
        valid = a.get("num_valid_indices") or 16 * index.free()
        shape = (src.partitions(), int(valid) * int(a.get("num_elem_per_idx") or 1))
    return ops.vector_op("tensor_copy", "local_gather", src, reads=[index], shape=shape, attrs=_nki("local_gather"),
                         dst=a.get("dst"), hint="lg", engine="pool")


@api("nisa.sequence_bounds")
def sequence_bounds(*args, **kwargs):
    """Each element's segment start and end, on GpSimdE: a tensor_copy of the output's elements
    (ISA: sequence_bounds)."""
    a = _call(args, kwargs, ["segment_ids", "name"], ["segment_ids"])
    ids = a["segment_ids"]
    shape = a["dst"].tile_shape() if a.get("dst") is not None else (ids.partitions(), 2, ids.free())
    return ops.vector_op("tensor_copy", "sequence_bounds", ids, shape=shape, attrs=_nki("sequence_bounds"),
                         dst=a.get("dst"), hint="sb", engine="pool")


def _partitions(x):
    return x.partitions() if is_tile(x) else 1


def get_nc_version():
    """The NeuronCore generation the model is (trn2: v3)."""
    return nc_version.gen3


class nc_version:
    gen2 = 2
    gen3 = 3


def __getattr__(name):
    unsupported("nisa", name)


__all__ = ["nc_matmul", "nc_transpose", "activation", "activation_reduce", "tensor_tensor", "tensor_scalar",
           "tensor_reduce", "tensor_copy", "tensor_tensor_scan", "memset", "iota", "dma_copy", "engine",
           "tensor_engine", "vector_engine", "scalar_engine", "gpsimd_engine", "unknown_engine", "reduce_cmd",
           "dge_mode", "oob_mode", "dropout", "max8", "nc_find_index8", "nc_match_replace8", "nc_stream_shuffle",
           "tensor_partition_reduce", "select_reduce", "range_select", "tensor_scalar_cumulative",
           "tensor_copy_predicated", "local_gather", "sequence_bounds", "tensor_copy_dynamic_src",
           "tensor_copy_dynamic_dst", "matmul_perf_mode", "Tile"]
