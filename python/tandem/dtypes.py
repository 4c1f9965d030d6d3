"""Element types and memories: NKI's types (`nl.float32`, `nl.bfloat16`, ...) with their `.kir`
names and sizes, the buffers (`nl.sbuf`, `nl.psum` and the HBM kinds) with their `.kir` spaces,
and `nl.par_dim`, which marks the partition dimension of an allocation's shape."""

from typing import Optional

from .active import fail
from .errors import printable
from .results import _not_installed


class DType:
    """An element type: its NKI name and its `.kir` name."""

    def __init__(self, name: str, kir: str, size: int):
        self.name, self.kir, self.itemsize = name, kir, size

    def __repr__(self):
        return f"nl.{self.name}"

    __str__ = __repr__

    @property
    def max(self) -> float:
        """The largest finite value of a float type (`nl.float32.max`)."""
        return _FLOAT_MAX.get(self.name, float(2 ** (8 * self.itemsize - 1) - 1))

    @property
    def min(self) -> float:
        return -self.max if self.name in _FLOAT_MAX else -float(2 ** (8 * self.itemsize - 1))

    @property
    def dtype(self):
        """What numpy takes it for (`np.dtype(nl.float32)`): the numpy type of that name, or raw
        bytes of its size where numpy has none (bfloat16, the float8 types)."""
        try:
            import numpy
        except ImportError as e:
            raise _not_installed("np.dtype() of an NKI type", "numpy", "python3-numpy") from e

        return numpy.dtype(_NUMPY_NAMES.get(self.name, f"V{self.itemsize}"))


DTYPES = {
    "bfloat16": DType("bfloat16", "bf16", 2),
    "float16": DType("float16", "f16", 2),
    "float32": DType("float32", "f32", 4),
    "tfloat32": DType("tfloat32", "tf32", 4),
    "float8_e4m3": DType("float8_e4m3", "fp8", 1),
    "float8_e5m2": DType("float8_e5m2", "f8", 1),
    "int8": DType("int8", "i8", 1),
    "uint8": DType("uint8", "u8", 1),
    "int16": DType("int16", "i16", 2),
    "uint16": DType("uint16", "u16", 2),
    "int32": DType("int32", "i32", 4),
    "uint32": DType("uint32", "u32", 4),
    "bool_": DType("bool_", "u8", 1),
}
_FLOAT_MAX = {"bfloat16": 3.3895313892515355e38, "float16": 65504.0, "float32": 3.4028234663852886e38,
              "tfloat32": 3.4028234663852886e38, "float8_e4m3": 448.0, "float8_e5m2": 57344.0}
_NUMPY_NAMES = {"float16": "float16", "float32": "float32", "tfloat32": "float32", "int8": "int8", "uint8": "uint8",
                "int16": "int16", "uint16": "uint16", "int32": "int32", "uint32": "uint32", "bool_": "bool"}
_ALIASES = {
    "bf16": "bfloat16", "f16": "float16", "fp16": "float16", "half": "float16",
    "f32": "float32", "fp32": "float32", "float": "float32", "tf32": "tfloat32",
    "fp8": "float8_e4m3", "f8": "float8_e5m2", "float8_e4m3fn": "float8_e4m3",
    "i8": "int8", "u8": "uint8", "i16": "int16", "u16": "uint16", "i32": "int32",
    "u32": "uint32", "bool": "bool_",
}


def _lookup_dtype(x) -> Optional[DType]:
    """The element type `x` names (a DType, a name or an alias, or an object with one), or None."""
    if isinstance(x, DType):
        return x
    name = x if isinstance(x, str) else getattr(x, "__name__", None) or getattr(x, "name", None)
    if isinstance(name, str):
        return DTYPES.get(_ALIASES.get(name, name))
    return None


def to_dtype(x, what="dtype") -> DType:
    found = _lookup_dtype(x)
    if found is not None:
        return found
    known = ", ".join(sorted(DTYPES))
    fail(f"unsupported {what} {printable(repr(x))} (known: {known})")


class Buffer:
    """A memory: nl.sbuf, nl.psum, or HBM (nl.hbm, nl.shared_hbm, nl.private_hbm)."""

    def __init__(self, name: str, space: str):
        self.name, self.space = name, space

    def __repr__(self):
        return f"nl.{self.name}"


SBUF = Buffer("sbuf", "sbuf")
PSUM = Buffer("psum", "psum")
HBM = Buffer("hbm", "dram")
SHARED_HBM = Buffer("shared_hbm", "dram")
PRIVATE_HBM = Buffer("private_hbm", "dram")
PARTITIONS = 128
# PSUM per partition: 8 banks of 2 KiB (nl.tile_size.psum_partition_bytes, NKI language reference).
PSUM_PARTITION_BYTES = 16384
SPACE_NAMES = {"sbuf": "SBUF", "psum": "PSUM", "dram": "HBM"}


class ParDim:
    """nl.par_dim(n): marks the partition dimension of an allocation's shape."""

    def __init__(self, size):
        self.size = size

    def __repr__(self):
        return f"nl.par_dim({self.size})"


DTYPES_BY_KIR = {}
for _d in DTYPES.values():
    DTYPES_BY_KIR.setdefault(_d.kir, _d)


def to_dtype_outside(x) -> DType:
    """to_dtype for arguments of trace() itself (a ValueError, not a located TraceError)."""
    found = _lookup_dtype(x)
    if found is not None:
        return found
    raise ValueError(f"unknown dtype {printable(repr(x))} (known: {', '.join(sorted(set(DTYPES) | set(_ALIASES)))})")
