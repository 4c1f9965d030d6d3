"""The tracer: runs an NKI-style kernel function once with symbolic loop indices and records
what it does as a `tandem.ir.Kernel` (`trace`, which returns a `TracedKernel`).

Loops (`affine_range`, `sequential_range`) run their body once; the loop variable is a
`Sym`, an affine expression of the enclosing loops' induction variables, so slices such as
`A[k * 128:(k + 1) * 128, :]` become `.kir` accesses `%A[%k*128 : %k*128 + 128, 0:512]`.
`static_range` is a plain Python range: its body is traced once per value (unrolled).

Values are `Tile`s: a view (ranges or single indices per dimension) of a tensor in HBM,
SBUF or PSUM. An NKI call either writes a destination tile (`nisa.nc_matmul(dst, ...)`,
`t[...] = ...`, `acc += ...`) or returns a new tile, which the tracer declares as a tensor of
its own unless the value is assigned straight into another tile (then the instruction writes
that tile and the temporary is never declared).

Anything the tracer cannot express exactly raises `TraceError` naming the call and the
file:line:col of the user's code; it never emits a kernel that means something else.

The parts, each in its own module: `errors` (TraceError, the user's frames and names),
`active` (the kernel being traced), `dtypes` (element types and memories), `indices` (loop
indices and masks), `tiles` (tiles and their views), `context` (the record of the kernel:
tensors, loops, instructions), `loops` (`nl.affine_range` and its kin), `ops` (what each NKI
operation records), `reroll` (loops run concretely and rolled back), `launch` (kernels and
their launch grids), `psum_start` (PSUM zeroing folded into matmul start flags), `loop_fusion`
(loop nests fused where they pass on a PSUM tensor larger than PSUM).
"""

import contextlib
import copy
import inspect
import linecache
import os
import re
import stat
import types
from typing import Optional, Tuple

from .active import activate, active
from .context import Context
from .dtypes import PSUM_PARTITION_BYTES, to_dtype_outside
from .errors import TraceError, in_package, printable, user_location
from .indices import is_int
from .ir import FLAG, Kernel, Location
from .launch import KernelFunction, launch
from .loop_fusion import fuse_psum_overflow
from .printer import print_kernel
from .psum_start import fold_psum_zeros
from .reroll import NeedsConcrete


class TensorSpec:
    """An input of the kernel: an HBM tensor of this shape and element type."""

    def __init__(self, shape, dtype=None, name=None):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = dtype
        self.name = name

    def __repr__(self):
        return f"tensor({self.shape}, {self.dtype!r})"


def tensor(shape, dtype=None, name=None) -> TensorSpec:
    """An input tensor for `trace`/`simulate`: `tandem.tensor((128, 512), "f32")`."""
    return TensorSpec(shape, dtype, name)


def parse_shape(text: str) -> Tuple[int, ...]:
    """`128x512` -> (128, 512)."""
    parts = text.lower().split("x")
    if not all(p.strip().isdigit() for p in parts):
        raise ValueError(f"'{printable(text)}' is not a shape like 128x512")
    return tuple(int(p) for p in parts)


def _is_shape(x) -> bool:
    return isinstance(x, (tuple, list)) and len(x) > 0 and all(is_int(s) for s in x)


class TracedKernel:
    """A traced kernel: the `.kir` text (`.text`), the IR (`.kernel`) and the map from `.kir`
    lines and names back to the Python source."""

    def __init__(self, kernel: Kernel, notes=()):
        self.kernel = kernel
        self.notes = list(notes)  # what the trace did that the user may not expect (loops left unrolled)
        self.text, self.lines = print_kernel(kernel)
        self.names = {name: loc for name, loc in self.lines.values() if name}

    def __str__(self):
        return self.text

    @property
    def name(self):
        return self.kernel.name

    def source_of(self, name: str) -> Optional[Location]:
        """Where `%name` (an instruction, a tensor or a loop) comes from in the Python source."""
        if not name.startswith("%"):
            name = "%" + name
        return self.names.get(name)

    def write(self, path) -> str:
        """Write the `.kir` file as the binary writes its outputs: this process's own stream
        (/dev/stdout, /dev/fd/N) and a character device or FIFO (/dev/null, a pipe) written
        through; a regular file (through a symbolic link, the file it names) by a temporary
        renamed into place, so that it is never left half-written. OSError when it cannot be."""
        path = os.fspath(path)
        own = _OWN_STREAM.fullmatch(path)
        if own:
            fd = {"stdout": 1, "stderr": 2}.get(own.group(1)) or int(own.group(2))
            data = self.text.encode()
            while data:
                data = data[os.write(fd, data):]
            return path
        if os.path.exists(path) and not os.path.isfile(path):  # follows links
            mode = os.stat(path).st_mode
            if not (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):
                kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
                raise OSError(f"it is {kind} (outputs go to regular files, character devices or FIFOs)")
            with open(path, "w") as f:
                f.write(self.text)
            return path
        target = os.path.realpath(path)
        tmp = f"{target}.tmp.{os.getpid()}"
        try:
            with open(tmp, "w") as f:
                f.write(self.text)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.remove(tmp)
            raise
        return path


_OWN_STREAM = re.compile(r"/dev/(stdout|stderr)|/(?:dev|proc/self)/fd/(\d{1,6})")


def trace(kernel, *args, dtype="bf16", target="trn2", name=None, source_attrs=True, kernel_kwargs=None,
          **kwargs) -> TracedKernel:
    """Trace an NKI-style kernel function into a `.kir` kernel.

    `args` are the kernel's positional arguments: a shape (tuple of ints, or a string
    `128x512`) or `tandem.tensor(shape, dtype)` becomes an HBM input tensor named after the
    parameter; anything else (a float epsilon, ...) is passed through. `kwargs` go to the
    kernel unchanged (meta-parameters). `dtype` is the input tensors' default element type,
    `target` the model the `.kir` names. With `source_attrs`, every instruction carries
    `{src = "file.py:LINE"}`. `kernel_kwargs` are more keyword arguments of the kernel, for
    parameters named like trace()'s own (a kernel's `dtype=`). A tensor among the keyword
    arguments (`tandem.tensor(...)`) is an HBM input tensor too.
    """
    kwargs = {**kwargs, **(kernel_kwargs or {})}
    # A kernel (nki.jit) runs as the program instances of its grid; a plain function (a caller
    # that launches kernels, or a kernel written without the decorator) runs as it is.
    grid = kernel.grid if isinstance(kernel, KernelFunction) else None
    fn = kernel.fn if isinstance(kernel, KernelFunction) else getattr(kernel, "__wrapped__", kernel)
    if isinstance(fn, KernelFunction):
        grid, fn = grid or fn.grid, fn.fn
    if isinstance(kernel, KernelFunction) and grid is None:
        grid = (1,)
    if not callable(fn):
        raise TypeError(f"trace() needs a kernel function, got {kernel!r}")
    if active() is not None:
        raise TraceError("trace() called while another kernel is being traced", user_location(), "tandem.trace")
    kname = re.sub(r"[^A-Za-z0-9_.]", "_", name or getattr(fn, "__name__", "kernel"))
    default = to_dtype_outside(dtype)
    concrete = set()
    module_state = ModuleState(getattr(fn, "__globals__", {}))
    while True:  # again with more loops concrete, each time Python needs a loop index's value
        if concrete:
            module_state.restore()
        ctx = _trace_once(fn, grid, args, kwargs, kname, target, source_attrs, default, concrete)
        if isinstance(ctx, Context):
            break
        if ctx.keys <= concrete:
            raise TraceError("the tracer could not run the kernel's loops concretely (a defect of the tracer)",
                             None, "trace")
        concrete |= ctx.keys
    fold_psum_zeros(ctx.kernel)
    # Neuron's allocator spills SBUF to HBM where a kernel's live tiles outgrow it; the binary
    # inserts the spills for kernels that say so (docs/models.md, "Capacity").
    ctx.kernel.set_attr("spill", FLAG)
    notes = list(getattr(kernel, "load_notes", [])) + ctx.notes
    if not getattr(kernel, "skip_middle_end", False) and not getattr(fn, "skip_middle_end", False):
        notes += fuse_psum_overflow(ctx.kernel, PSUM_PARTITION_BYTES)
    return TracedKernel(ctx.kernel, list(dict.fromkeys(notes)))


class ModuleState:
    """The kernel file's module state before the first run of the kernel, restored before each
    run after it: a run that stopped for a concrete loop must not leave what it changed (a
    file-level allocator's next address, a counter) to the next run, which a compiler would
    have seen only once. Restores the module's names and, one level deep, the attributes of the
    objects they name (containers copied)."""

    def __init__(self, names: dict):
        self.names = names
        self.saved = dict(names)
        self.attributes = []
        for value in self.saved.values():
            state = getattr(value, "__dict__", None)
            if isinstance(state, dict) and not isinstance(value, (type, types.ModuleType, types.FunctionType)):
                self.attributes.append((state, {k: _copied(v) for k, v in state.items()}))

    def restore(self):
        for name in [n for n in self.names if n not in self.saved]:
            del self.names[name]
        self.names.update(self.saved)
        for state, saved in self.attributes:
            state.clear()
            state.update({k: _copied(v) for k, v in saved.items()})


def _copied(value):
    return copy.copy(value) if isinstance(value, (list, dict, set)) else value


def _trace_once(fn, grid, args, kwargs, kname, target, source_attrs, default, concrete):
    """One run of the kernel: its Context, or the NeedsConcrete that stopped it."""
    ctx = Context(kname, target, source_attrs)
    ctx.concrete = set(concrete)
    ctx.kernel.source = _def_location(fn)
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    values = []
    activate(ctx)
    try:
        for i, a in enumerate(args):
            pname = params[i].name if i < len(params) and params[i].kind in (
                inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD) else f"in{i}"
            if isinstance(a, str) and "x" in a.lower():
                a = TensorSpec(parse_shape(a))
            elif _is_shape(a):
                a = TensorSpec(a)
            values.append(_input(ctx, a, pname, default))
        named = {k: _input(ctx, v, k, default) for k, v in kwargs.items()}
        try:
            _run_kernel(ctx, fn, grid, values, named)
        except NeedsConcrete as e:
            return e
        ctx.check_pending()
        if ctx.loops:
            raise TraceError(f"loop %{ctx.loops[-1].name} was never closed", ctx.loops[-1].loc, "trace")
    finally:
        activate(None)
    return ctx



def _input(ctx: Context, value, pname: str, default):
    """An argument of the kernel: a TensorSpec becomes the HBM input tensor it describes."""
    if not isinstance(value, TensorSpec):
        return value
    dt = to_dtype_outside(value.dtype) if value.dtype is not None else default
    return ctx.declare(value.shape, dt, "dram", value.name or pname, ctx.kernel.source, False, "input")


def _def_location(fn) -> Optional[Location]:
    """The kernel's `def` line (after its decorators) and column."""
    try:
        code = fn.__code__
    except AttributeError:
        return None
    line = code.co_firstlineno
    for n in range(line, line + 50):
        text = linecache.getline(code.co_filename, n)
        m = re.match(r"\s*(async\s+)?def\s", text)
        if m:
            return Location(code.co_filename, n, len(text) - len(text.lstrip()) + 1)
        if not text:
            break
    return Location(code.co_filename, line, 0)


def _run_kernel(ctx: Context, fn, grid, values, kwargs):
    """Call the kernel with its arguments; what it raises becomes a TraceError at the line that
    raised it."""
    try:
        inspect.signature(fn).bind(*values, **kwargs)
    except TypeError as e:
        raise TraceError(f"the kernel's arguments do not match its parameters {_parameters(fn)}: {e}",
                         ctx.kernel.source, getattr(fn, "__name__", "kernel")) from None
    except ValueError:
        pass  # no signature to check (a builtin): the call says
    try:
        if grid is None:
            fn(*values, **kwargs)
        else:
            launch(ctx, fn, grid, values, kwargs)
    except TraceError:
        raise
    except RecursionError:
        raise TraceError("the kernel recursed too deeply", ctx.kernel.source, getattr(fn, "__name__", "kernel")) from None
    except Exception as e:
        raise _raised_in_kernel(e, fn) from None


def _parameters(fn) -> str:
    try:
        return str(inspect.signature(fn))
    except (TypeError, ValueError):
        return "(...)"


def _raised_in_kernel(e: Exception, fn) -> TraceError:
    """The kernel's own exception (an assert, a ValueError), located at the innermost line of the
    user's code it passed through; one raised inside the tracer says so."""
    tb, user, inside = e.__traceback__, None, False
    while tb is not None:
        if in_package(tb.tb_frame.f_code.co_filename):
            inside = True
        else:
            user, inside = tb, False
        tb = tb.tb_next
    loc = None
    if user is not None:
        code = user.tb_frame.f_code
        col = 0
        try:
            pos = list(code.co_positions())[user.tb_lasti // 2]
            col = (pos[2] or 0) + 1 if pos[0] == user.tb_lineno else 0
        except (AttributeError, IndexError, TypeError):
            pass
        loc = Location(code.co_filename, user.tb_lineno, col)
    text = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    if inside:
        return TraceError(f"the tandem tracer failed on this line ({text}); this is a defect of the tracer, please "
                          "report it with the kernel", loc, getattr(fn, "__name__", "kernel"))
    return TraceError(f"the kernel raised {text}", loc, getattr(fn, "__name__", "kernel"))
