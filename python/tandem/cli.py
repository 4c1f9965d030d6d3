"""`tandem-nki`: trace an NKI-style kernel in a Python file to `.kir` (and optionally simulate it).

    tandem-nki KERNEL.py[:function] --shapes 128x512,512x512 [--dtype bf16] [-o K.kir]
               [--param NAME=VALUE ...] [--grid 4x2] [--target trn2] [--no-src]
               [--simulate [--passes PIPELINE] [--hw MODEL] [--json]]

The file runs as published: its `neuronxcc.nki` / `nki` imports resolve to Tandem's modules.
Without `:function`, the file's one `@nki.jit` kernel is traced.

`--shapes` lists the kernel's positional arguments in order, comma-separated:
  `128x512`       an HBM input tensor of that shape (`128x512:f32` gives its element type);
  `2048`          a 1-D input tensor of 2048 elements;
  `1e-5`, `0.5`   a float argument (a number with a dot or an exponent);
  `int:3`         an integer argument.
`--param NAME=VALUE` passes a keyword argument: a tensor (`128x512:f32`, as in --shapes), a
Python literal (`3`, `1e-5`, `(8, 8)`, `True`, `None`), an NKI or numpy name (`nl.float32`,
`nisa.engine.vector`, `np.greater`), a call of a class or function the kernel's file defines
with literal arguments (`FlashConfig(seq_tile_size=2048)`), or else the text as a string.
`--grid 4x2` launches the kernel over that SPMD grid (`kernel[4, 2]`); the program
instances run one after another on the model's core.

Exit status: 0; 1 when the kernel cannot be traced (the message is `FILE:LINE:COL: error:
...`, located in the kernel's source) or the binary rejects it; with --simulate, the
binary's status (3: races).
"""

import argparse
import ast
import os
import re
import sys

from .errors import TraceError, printable
from .kernel_file import load_kernel
from .launch import KernelFunction
from .nki import isa, language
from .runner import TandemError, _error, _hw_args, find_binary
from .tracer import TensorSpec, parse_shape, trace


def parse_arguments(text: str):
    """The `--shapes` list as trace() arguments."""
    out = []
    for item in [t.strip() for t in text.split(",") if t.strip()]:
        if item.startswith("int:"):
            out.append(int(item[4:]))
        elif item.startswith("float:"):
            out.append(float(item[6:]))
        elif "x" in item.lower() or ":" in item:
            shape, _, dtype = item.partition(":")
            dims = parse_shape(shape)
            if any(d <= 0 for d in dims):
                raise ValueError(f"--shapes item '{printable(item)}': every dimension of a shape must be "
                                 "positive")
            out.append(TensorSpec(dims, dtype or None))
        elif item.isdigit():
            if int(item) <= 0:
                raise ValueError(f"--shapes item '{printable(item)}': a length must be positive")
            out.append(TensorSpec((int(item),)))
        else:
            try:
                out.append(float(item))
            except ValueError:
                raise ValueError(f"--shapes item '{printable(item)}' is not a shape (128x512[:dtype]), a length, a float "
                                 "or int:N") from None
    return out


def parse_param(text: str, namespace=None):
    """`--param NAME=VALUE`: a tensor (`128x512[:dtype]`, as in --shapes), a Python literal (3,
    1e-5, (8, 8), True, None, 'x'), an NKI or numpy name (`nl.float32`, `nisa.engine.vector`,
    `np.greater`), a call of a class or function of the kernel's file with literal arguments
    (`FlashConfig(seq_tile_size=2048)`, looked up in `namespace`), else the text itself."""
    key, eq, value = text.partition("=")
    if not eq or not key.isidentifier():
        raise ValueError(f"--param '{printable(text)}' is not NAME=VALUE")
    if _SHAPE.fullmatch(value):
        return key, parse_arguments(value)[0]
    module, dot, name = value.partition(".")
    if dot and module in _NAMESPACES:
        return key, _named(_NAMESPACES[module](), name, text)
    try:
        return key, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        pass
    call = _file_call(value, namespace or {}, text)
    return key, value if call is None else call()


def _file_call(value: str, namespace, text: str):
    """`Name(literal, key=literal, ...)` with Name defined in the kernel's file: the call, or
    None when the value is not of that form."""
    try:
        node = ast.parse(value, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.func.id not in namespace:
        return None
    try:
        args = [ast.literal_eval(a) for a in node.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
    except ValueError:
        raise ValueError(f"--param '{printable(text)}': the arguments of {node.func.id}(...) must be literals") \
            from None
    target = namespace[node.func.id]

    def call():
        try:
            return target(*args, **kwargs)
        except Exception as e:
            raise ValueError(f"--param '{printable(text)}': {node.func.id}(...) raised {type(e).__name__}: "
                             f"{printable(str(e))}") from None
    return call


_SHAPE = re.compile(r"\d+(x\d+)+(:\w+)?|\d+:\w+")


def _numpy():
    import numpy
    return numpy


_NAMESPACES = {"nl": lambda: language, "nisa": lambda: isa, "np": _numpy, "numpy": _numpy}


def _named(module, path: str, text: str):
    value = module
    for part in path.split("."):
        try:
            if not part.isidentifier() or part.startswith("_"):
                raise AttributeError(part)
            value = getattr(value, part)
        except TraceError as e:
            raise ValueError(f"--param '{printable(text)}': {e.message}") from None
        except Exception:
            raise ValueError(f"--param '{printable(text)}': no such name") from None
    return value


def parse_grid(text: str):
    """`--grid 4x2`: the launch grid."""
    try:
        grid = tuple(int(x) for x in text.lower().split("x"))
    except ValueError:
        grid = ()
    if not grid or any(g < 1 for g in grid):
        raise ValueError(f"--grid '{printable(text)}' is not a launch grid like 4 or 4x2")
    return grid


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="tandem-nki", description="Trace an NKI-style kernel to .kir.",
                                     epilog=__doc__.split("\n\n", 2)[2], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kernel", help="KERNEL.py:function (or KERNEL.py with one @nki.jit kernel)")
    parser.add_argument("--shapes", default="", help="the kernel's positional arguments (see below)")
    parser.add_argument("--dtype", default="bf16", help="element type of the input tensors (default bf16)")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="a keyword argument")
    parser.add_argument("--grid", help="SPMD launch grid, e.g. 4x2 (default: the kernel's own, else one instance)")
    parser.add_argument("--target", default="trn2", help="the model the kernel targets (default trn2)")
    parser.add_argument("--name", help="the kernel's name in .kir (default: the function's)")
    parser.add_argument("--no-src", action="store_true", help="omit the {src = \"file.py:LINE\"} attributes")
    parser.add_argument("-o", "--output", help="write the .kir here instead of stdout (a regular file is replaced "
                        "whole, a FIFO or device written through)")
    parser.add_argument("--simulate", action="store_true", help="simulate the traced kernel (tandem sim)")
    parser.add_argument("--passes", default="default", help="pipeline for --simulate (default: default)")
    parser.add_argument("--hw", help="model name or file for --simulate")
    parser.add_argument("--json", action="store_true", help="with --simulate: the tandem.sim/1 document")
    args = parser.parse_args(argv)

    try:
        fn = load_kernel(args.kernel)
        positional = parse_arguments(args.shapes)
        namespace = getattr(getattr(fn, "fn", fn), "__globals__", {})
        kwargs = dict(parse_param(p, namespace) for p in args.param)
        if args.grid:
            fn = (fn if isinstance(fn, KernelFunction) else KernelFunction(fn))[parse_grid(args.grid)]
    except ValueError as e:
        parser.error(printable(str(e), None))
    except TraceError as e:
        print(str(e), file=sys.stderr)
        return 1

    try:
        traced = trace(fn, *positional, dtype=args.dtype, target=args.target, name=args.name,
                       source_attrs=not args.no_src, kernel_kwargs=kwargs)
    except TraceError as e:
        print(str(e), file=sys.stderr)
        return 1
    except ValueError as e:  # a bad --dtype
        parser.error(printable(str(e), None))
    for note in traced.notes:
        print(f"tandem-nki: note: {note}", file=sys.stderr)
    if traced.kernel.attrs:
        grid = dict(traced.kernel.attrs).get("spmd_grid")
        if grid:
            print(f"tandem-nki: launch grid {grid}: the program instances run one after another on one core",
                  file=sys.stderr)

    if not args.simulate:
        if args.output:
            return _write(traced, args.output)
        else:
            sys.stdout.write(traced.text)
        return 0

    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tandem-nki-") as tmp:
        path = args.output or os.path.join(tmp, f"{traced.name}.kir")
        if _write(traced, path):
            return 1
        try:
            cmd = [find_binary(), "sim", path, f"--passes={args.passes}"] + _hw_args(args.hw)
        except TandemError as e:
            print(f"tandem-nki: error: {e}", file=sys.stderr)
            return 1
        if args.json:
            cmd.append("--json")
        proc = subprocess.run(cmd, capture_output=True, text=True)
        sys.stdout.write(proc.stdout)
        if proc.returncode not in (0, 3):
            err = _error(proc, cmd, path if args.output else None, traced)
            if not args.output:  # name the lines of the temporary file by the kernel
                err = _error(proc, cmd, path, traced)
            print(str(err), file=sys.stderr)
        elif proc.stderr:
            sys.stderr.write(proc.stderr)
        return proc.returncode


def _write(traced, path: str) -> int:
    """Writes the .kir; 0, or 1 after one line that says why it could not."""
    try:
        traced.write(path)
    except OSError as e:
        print(f"tandem-nki: error: cannot write {printable(path, None)}: {printable(e.strerror or str(e), None)}",
              file=sys.stderr)
        return 1
    return 0


class _Stopped(BaseException):
    """SIGTERM or SIGHUP, raised where the process is, so that what it started is undone on the
    way out: subprocess.run kills the `tandem sim` child, the temporary directory goes."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _stop(signum, frame):
    raise _Stopped(signum)


def run(argv=None) -> int:
    """main() with the promise kept that no traceback reaches the user: an interrupt exits 130,
    SIGTERM and SIGHUP 128 + the signal (after stopping the simulation and removing the
    temporary files), a defect of the tool one line and status 2."""
    import signal

    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) is signal.SIG_DFL:
            signal.signal(signum, _stop)
    try:
        return main(argv)
    except KeyboardInterrupt:
        print("tandem-nki: stopped by SIGINT", file=sys.stderr)
        return 130
    except _Stopped as e:
        print(f"tandem-nki: stopped by {signal.Signals(e.signum).name}", file=sys.stderr)
        return 128 + e.signum
    except BrokenPipeError:
        return 1
    except Exception as e:  # a defect: say so in one line
        print(f"tandem-nki: internal error: {type(e).__name__}: {printable(str(e), None)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(run())
