"""Running the `tandem` binary: one process per simulation, as the CLI does.

The binary is `$TANDEM_BIN`, else `build/bin/tandem` of this checkout, else `tandem` on the
PATH. Its errors (exit 1: `FILE:LINE:COL: error: ...`; 2: internal) become `TandemError`,
races (exit 3) `RaceError`; for a traced kernel the error also names the Python line the
offending `.kir` line came from.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable, List, Optional, Sequence, Union

from .results import ABResult, Hazard, SimResult, SweepResult
from .kernel_file import load_kernel
from .tracer import TracedKernel, trace

_CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class TandemError(Exception):
    """The tandem binary refused the input or failed.

    `message` is its located line (`K.kir:12:7: error: ...`), `returncode` its exit status,
    `stderr` all it printed, `kir_line` the `.kir` line number (when given) and `source`
    the Python location that line was traced from (a `tandem.ir.Location`, or None).
    """

    def __init__(self, message, returncode=1, stderr="", command=None, kir_line=None, source=None, name=None):
        self.message = message
        self.returncode = returncode
        self.stderr = stderr
        self.command = command
        self.kir_line = kir_line
        self.source = source
        self.name = name
        text = message
        if source is not None:
            text += f"\n  {name or 'this line'} was traced from {source}"
        super().__init__(text)


class RaceError(TandemError):
    """The race checker found races (exit 3). `hazards` lists them (`Hazard`: kind, first,
    second, message); `result` is the simulation (a SimResult) they were found in."""

    def __init__(self, hazards: List[Hazard], result: Optional[SimResult], stderr="", command=None):
        self.hazards = hazards
        self.result = result
        lines = [f"{len(hazards)} race{'s' if len(hazards) != 1 else ''} found by the race checker:"]
        lines += [f"  {h}" for h in hazards]
        super().__init__("\n".join(lines), 3, stderr, command)


def find_binary() -> str:
    """$TANDEM_BIN, else build/bin/tandem of this checkout, else PREFIX/bin/tandem of the
    prefix this package is installed in (PREFIX/lib/python3/dist-packages), else `tandem` on
    the PATH."""
    env = os.environ.get("TANDEM_BIN")
    if env:
        if not os.access(env, os.X_OK):
            raise TandemError(f"TANDEM_BIN={env} is not an executable file", returncode=-1)
        return env
    package = os.path.dirname(os.path.abspath(__file__))
    for local in (os.path.join(_CHECKOUT, "build", "bin", "tandem"),
                  os.path.normpath(os.path.join(package, "..", "..", "..", "..", "bin", "tandem"))):
        if os.access(local, os.X_OK) and os.path.isfile(local):
            return local
    found = shutil.which("tandem")
    if found:
        return found
    raise TandemError("the tandem binary was not found: set TANDEM_BIN, run scripts/build in this checkout "
                      f"({_CHECKOUT}), or put tandem on the PATH", returncode=-1)


_LOCATED = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.*)$")


def _error(proc, cmd, kir_path: Optional[str], traced: Optional[TracedKernel]) -> TandemError:
    stderr = proc.stderr or ""
    lines = [l for l in stderr.splitlines() if l.strip()]
    located = next((l for l in lines if _LOCATED.match(l)), None)
    message = located or (lines[-1] if lines else f"tandem exited with status {proc.returncode}")
    kir_line = source = name = None
    m = _LOCATED.match(located) if located else None
    if m and kir_path and os.path.abspath(m.group("file")) == os.path.abspath(kir_path):
        kir_line = int(m.group("line"))
        if traced is not None and kir_line in traced.lines:
            name, source = traced.lines[kir_line]
    if traced is not None and kir_path:
        # The temporary file is gone when the caller reads this: name the kernel instead.
        message = message.replace(kir_path, f"{traced.name}.kir")
    return TandemError(message, proc.returncode, stderr, cmd, kir_line, source, name)


def _is_kernel_file(spec: str) -> bool:
    """`FILE.py` or `FILE.py:function`: a kernel file, loaded as published (tandem.kernel_file)."""
    path = spec.rpartition(":")[0] if ".py:" in spec else spec
    return path.endswith(".py")


class _Input:
    """A kernel to run: a .kir file on disk (a traced kernel is written to a temporary one)."""

    def __init__(self, kernel, args, kwargs):
        self.traced: Optional[TracedKernel] = None
        self.tmpdir = None
        if isinstance(kernel, TracedKernel):
            self.traced = kernel
        elif isinstance(kernel, str) and _is_kernel_file(kernel):
            self.traced = trace(load_kernel(kernel), *args, **kwargs)
        elif isinstance(kernel, (str, os.PathLike)) and os.fspath(kernel).endswith(".kir"):
            if args or kwargs:
                raise TypeError("a .kir file takes no kernel arguments")
            self.path = os.fspath(kernel)
            return
        elif callable(kernel):
            self.traced = trace(kernel, *args, **kwargs)
        else:
            raise TypeError(f"expected a kernel function, a TracedKernel, a KERNEL.py[:function] or a .kir path, got "
                            f"{kernel!r}")
        self.tmpdir = tempfile.mkdtemp(prefix="tandem-")
        self.path = self.traced.write(os.path.join(self.tmpdir, f"{self.traced.name}.kir"))

    def scratch(self, name) -> str:
        if self.tmpdir is None:
            self.tmpdir = tempfile.mkdtemp(prefix="tandem-")
        return os.path.join(self.tmpdir, name)

    def close(self):
        if self.tmpdir:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None


def _hw_args(hw: Optional[str]) -> List[str]:
    """`hw` is a model name or a model file, resolved by the binary as `--hw` is (docs/models.md)."""
    if hw is None:
        return []
    return ["--hw", hw]


def _document(stdout: str) -> dict:
    """The JSON document on stdout. SystemC may print warnings (`Warning: (W506) ...`) to
    stdout before it; the document starts at the first line that is `{`."""
    start = 0 if stdout.startswith("{") else stdout.find("\n{") + 1
    if start == 0 and not stdout.startswith("{"):
        raise TandemError(f"tandem printed no JSON document: {stdout[:200]!r}", returncode=-1)
    return json.loads(stdout[start:])


def _run(cmd: List[str], timeout):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def _trace_kwargs(hw, kwargs):
    """A model name also names the traced kernel's target."""
    if hw and os.sep not in hw and not hw.endswith((".yaml", ".yml")):
        kwargs.setdefault("target", hw)
    return kwargs


def simulate(kernel, *args, hw: Optional[str] = None, passes: str = "default", timeline: bool = True,
             trace_path: Optional[str] = None, races: str = "raise", extra_args: Sequence[str] = (),
             timeout: Optional[float] = None, advise: bool = False, **kwargs) -> SimResult:
    """Trace (if needed) and simulate a kernel; return its `SimResult`.

    `kernel` is an NKI-style function (traced with `args`/`kwargs` as `tandem.trace`
    takes them: shapes, `dtype=`, meta-parameters), a `TracedKernel`, or a `.kir` path.
    `hw` is a model name (`trn2`, `trn1`: models/<hw>.yaml; a traced kernel then targets it)
    or a model file; None (the default) simulates on the kernel's target, which is trn2
    for traced kernels unless `target=` says otherwise. `passes` is the
    pipeline (`default`, `none`, or passes with options). `timeline` keeps the simulator's
    timeline spans (for `plot_timeline`); `trace_path` writes a Perfetto trace there.
    Races raise `RaceError` (with `races="return"`, the result is returned and its
    `hazards` list them). `advise` runs `tandem sim --advise`: the result's `advice` lists
    the changes that would help, each simulated (their commands name the traced .kir, which
    is temporary). `extra_args` go to `tandem sim` as they are.
    """
    src = _Input(kernel, args, _trace_kwargs(hw, kwargs) if callable(kernel) and not isinstance(
        kernel, TracedKernel) else kwargs)
    try:
        cmd = [find_binary(), "sim", src.path, "--json", f"--passes={passes}"] + _hw_args(hw)
        if timeline:
            cmd += ["--report", src.scratch("report.html")]
        if trace_path:
            cmd += ["--trace", os.fspath(trace_path)]
        if advise:
            cmd.append("--advise")
        cmd += list(extra_args)
        proc = _run(cmd, timeout)
        if proc.returncode not in (0, 3):
            raise _error(proc, cmd, src.path, src.traced)
        result = SimResult(_document(proc.stdout), src.traced, passes, hw)
        if proc.returncode == 3:
            if races == "return":
                return result
            raise RaceError(result.hazards, result, proc.stderr, cmd)
        return result
    finally:
        src.close()


def ab(kernel, *args, a: Optional[str] = None, b: Optional[str] = None, hw: Optional[str] = None,
       hw_a: Optional[str] = None, hw_b: Optional[str] = None, passes: str = "default",
       timeout: Optional[float] = None, **kwargs) -> ABResult:
    """Simulate a kernel under pipelines `a` and `b` (default: `none` and `default`), or on
    models `hw_a` and `hw_b` (a hardware A/B, both sides under `passes` unless `a`/`b` say
    otherwise), each run its own process (`tandem ab`): an `ABResult` with both results and
    the B / A ratios."""
    hardware = hw_a is not None or hw_b is not None
    a = a if a is not None else (passes if hardware else "none")
    b = b if b is not None else (passes if hardware else "default")
    src = _Input(kernel, args, _trace_kwargs(hw or hw_a, kwargs) if callable(kernel) and not isinstance(
        kernel, TracedKernel) else kwargs)
    try:
        cmd = [find_binary(), "ab", src.path, f"--a={a}", f"--b={b}", "--json"] + _hw_args(hw)
        cmd += (["--hw-a", hw_a] if hw_a else []) + (["--hw-b", hw_b] if hw_b else [])
        proc = _run(cmd, timeout)
        if proc.returncode != 0:
            raise _error(proc, cmd, src.path, src.traced)
        return ABResult(_document(proc.stdout), src.traced)
    finally:
        src.close()


def sweep(kernel, *args, pipelines: Optional[Iterable[str]] = None, models: Optional[Iterable[str]] = None,
          passes: str = "default", jobs: int = 1, timeout: Optional[float] = None, **kwargs) -> SweepResult:
    """Simulate a kernel once per pipeline (`pipelines=[...]`) or per model (`models=[...]`:
    names or model files), or per pair of both, one process each (`jobs` at a time). Returns
    a `SweepResult`: `rows` (and `to_pandas()`) with the point, the kernel figures and each
    loop's II and overlap; a point that fails holds its error instead of failing the sweep."""
    pipelines = list(pipelines) if pipelines is not None else [passes]
    models = list(models) if models is not None else ["trn2"]
    traced = kernel
    if callable(kernel) and not isinstance(kernel, TracedKernel):
        traced = trace(kernel, *args, **kwargs)
    elif args or kwargs:
        raise TypeError("kernel arguments are only taken with a kernel function")
    points = [{"pipeline": p, "hw": m} for m in models for p in pipelines]

    def one(point):
        try:
            return simulate(traced, hw=point["hw"], passes=point["pipeline"], timeline=False, races="return",
                            timeout=timeout)
        except TandemError as e:
            return e

    if jobs > 1:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(one, points))
    else:
        results = [one(p) for p in points]
    return SweepResult(points, results)


def opt(kernel, *args, passes: str = "none", hw: Optional[str] = None, timeout: Optional[float] = None,
        **kwargs) -> str:
    """`tandem opt --passes=PIPELINE`: the kernel as Tandem prints it after the passes."""
    src = _Input(kernel, args, kwargs)
    try:
        cmd = [find_binary(), "opt", src.path, f"--passes={passes}"] + _hw_args(hw)
        proc = _run(cmd, timeout)
        if proc.returncode != 0:
            raise _error(proc, cmd, src.path, src.traced)
        return proc.stdout
    finally:
        src.close()


__all__ = ["simulate", "ab", "sweep", "opt", "find_binary", "TandemError", "RaceError"]
