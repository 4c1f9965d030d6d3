"""Loading a kernel file as published: its NKI imports resolve to Tandem's modules
(tandem.nki.imports), and anything that goes wrong while the file runs is a located
`TraceError` at the file's own line, never a traceback."""

import __future__
import ast
import importlib.util
import os
import sys
import warnings

from . import launch
from .errors import TraceError, in_package, printable
from .ir import Location
from .launch import KernelFunction
from .nki import imports


def load_kernel(spec: str):
    """`FILE.py:function`, or `FILE.py` when the file defines exactly one NKI kernel: the
    function. ValueError for a spec that names no file; TraceError when the file fails."""
    path, sep, func = spec.rpartition(":")
    if not sep or not path.endswith(".py"):
        path, func = spec, ""
    if not path.endswith(".py") and not os.path.isfile(path):
        raise ValueError(f"'{printable(spec, None)}' is not KERNEL.py[:function]")
    if not os.path.isfile(path):
        raise ValueError(f"no such file: {path}")
    imports.install(first=True)
    directory = os.path.dirname(os.path.abspath(path))
    package, root = _package_of(path)
    for d in (directory, root):
        if d is not None and d not in sys.path:
            sys.path.insert(0, d)
    stem = os.path.splitext(os.path.basename(path))[0]
    name = f"{package}.{stem}" if package else "_tandem_kernel_" + stem
    module_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(module_spec)
    module.__package__ = package or ""
    try:
        # Python's compile-time warnings on the file ("'int' object is not callable; perhaps you
        # missed a comma?") are not printed: every answer is a .kir or one located line.
        with imports.while_loading(path), launch.calls_skipped(), warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            stopped = _run_top_level(module, path, func)
    except TraceError:
        raise
    except SyntaxError as e:
        raise TraceError(f"the kernel file is not valid Python: {e.msg}",
                         Location(e.filename or path, e.lineno or 0, e.offset or 0), "import") from None
    except Exception as e:
        raise TraceError(f"loading the kernel file failed: {type(e).__name__}: {e}{_hint(e)}",
                         _located(e, path), "import") from None
    if not func:
        kernels = [n for n, v in vars(module).items() if isinstance(v, KernelFunction)]
        if len(kernels) != 1:
            found = ", ".join(kernels) if kernels else "none"
            raise ValueError(f"{path} defines {len(kernels)} NKI kernels ({found}): name one as {path}:function")
        func = kernels[0]
    if not hasattr(module, func):
        raise ValueError(f"{path} has no function '{printable(func)}'")
    kernel = getattr(module, func)
    if not callable(kernel):  # `import neuronxcc.nki.language as k`
        raise ValueError(f"{path}: '{printable(func)}' is a {type(kernel).__name__}, not a function")
    if stopped is not None:
        loc = _located(stopped, path)
        note = (f"{loc}: the file's top-level code stopped here ({type(stopped).__name__}: "
                f"{printable(str(stopped))}); {func} was defined before it")
        try:
            kernel.load_notes = [note]
        except AttributeError:
            pass
    return kernel


def _package_of(path: str):
    """(package, the directory it is found from) for a file that imports relatively
    (`from ..util import x`), as it would be imported as part of its package: enough enclosing
    directories for its deepest relative import, and above them every one with an
    `__init__.py`. (None, None) for a file without relative imports."""
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read(), path)
    except (SyntaxError, ValueError, OSError):
        return None, None  # the load reports it
    levels = max((n.level for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)), default=0)
    if levels == 0:
        return None, None
    directory, parts = os.path.dirname(os.path.abspath(path)), []
    while levels > 0 or os.path.isfile(os.path.join(directory, "__init__.py")):
        parent = os.path.dirname(directory)
        if parent == directory or not os.path.basename(directory).isidentifier():
            break
        parts.insert(0, os.path.basename(directory))
        directory, levels = parent, levels - 1
    return (".".join(parts), directory) if parts else (None, None)


def _run_top_level(module, path: str, func: str):
    """Run the file's top-level statements in order. A statement that fails once the kernel
    `func` is defined (a function of that name) ends the run there and is returned (the rest of the file is its own driver
    code, which calls kernels Tandem does not run and uses their results); before that, or when
    no kernel is named, the failure is the load's."""
    with open(path, "rb") as f:
        tree = ast.parse(f.read(), path)
    flags = 0
    for stmt in tree.body:
        code = compile(ast.Module(body=[stmt], type_ignores=[]), path, "exec", flags=flags, dont_inherit=True)
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            for alias in stmt.names:
                flags |= getattr(__future__, alias.name).compiler_flag
        try:
            exec(code, module.__dict__)
        except TraceError:
            raise
        except Exception as e:
            if func and callable(module.__dict__.get(func)) and not isinstance(stmt, (ast.Import, ast.ImportFrom)):
                return e
            raise
    return None


def _hint(e: Exception) -> str:
    if isinstance(e, ModuleNotFoundError) and e.name in ("numpy", "pandas", "matplotlib"):
        return (f" (Debian: apt install python3-{e.name}; tandem-nki runs on the python3 first on the PATH, "
                f"{sys.executable})")
    return ""


def _located(e: Exception, path: str) -> Location:
    """The innermost line of the kernel file (or another user file) the exception passed through."""
    tb, found = e.__traceback__, None
    while tb is not None:
        if not in_package(tb.tb_frame.f_code.co_filename) and not tb.tb_frame.f_code.co_filename.startswith("<"):
            found = tb
        tb = tb.tb_next
    if found is None:
        return Location(path, 1, 1)
    return Location(found.tb_frame.f_code.co_filename, found.tb_lineno, 1)
