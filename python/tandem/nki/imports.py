"""Published kernels import NKI by its own names: `neuronxcc.nki` (and `.language`, `.isa`,
`.typing`, `.compiler`) or, in the newer API, `nki`. While Tandem loads such a file those names
resolve to Tandem's modules, through an import hook: the file is not edited and nothing is
installed into site-packages.

`install(first=True)` puts the hook ahead of every other finder (tandem-nki: the file is
traced by Tandem whatever else is installed); `install(first=False)` behind them (`import
tandem`: a real Neuron installation, where there is one, keeps its names). A submodule of those
packages that Tandem does not provide fails at the user's import line with a located
`TraceError`, not a ModuleNotFoundError.

While a kernel file is loaded (`while_loading()`), a module it imports that is not installed
(the frameworks that call kernels, `torch`, `torch_xla`, `jax`, or any other) is a placeholder
whose every use is a located error naming it: such imports serve code the kernel itself does
not run (tests, `__main__`). `torch_neuronx.nki_jit`, NKI's decorator for PyTorch, is
`nki.jit`.
"""

import contextlib
import importlib
import importlib.abc
import importlib.util
import os
import sys
import types

from ..errors import UnsupportedError, user_location
from . import jit

_PROVIDED = {
    "nki": "tandem.nki",
    "nki.language": "tandem.nki.language",
    "nki.isa": "tandem.nki.isa",
    "nki.typing": "tandem.nki.typing",
    "nki.compiler": "tandem.nki.compiler",
    "nki.compiler.sbuf": "tandem.nki.compiler.sbuf",
    "nki.compiler.psum": "tandem.nki.compiler.psum",
    "nki.language.constants": "tandem.nki.language",
    "nki.isa.constants": "tandem.nki.isa",
}
_ROOTS = ("neuronxcc", "nki")


def provided(name: str):
    """The Tandem module that NKI module name `name` resolves to, "" for the bare `neuronxcc`
    package, None when Tandem does not provide it."""
    if name == "neuronxcc":
        return ""
    if name.startswith("neuronxcc."):
        name = name[len("neuronxcc."):]
    return _PROVIDED.get(name)


class _Alias(importlib.abc.Loader):
    """Loads an NKI module name as the Tandem module that implements it."""

    def __init__(self, target: str):
        self.target = target
        self.spec = None

    def create_module(self, spec):
        if not self.target:  # `neuronxcc`: a package that only holds `nki`
            module = types.ModuleType(spec.name, "NKI's names, provided by the tandem tracer")
            module.__path__ = []
            return module
        module = importlib.import_module(self.target)
        self.spec = module.__spec__
        return module

    def exec_module(self, module):
        if self.spec is not None:
            module.__spec__ = self.spec  # the Tandem module keeps its own identity


class _Missing(importlib.abc.Loader):
    """An NKI module Tandem does not provide: a located error at the user's import."""

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__name__
        raise UnsupportedError(f"module {name} is not provided by the tandem tracer (docs/python.md lists the NKI "
                               "modules and calls it provides)", user_location(), f"import {name}")


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] not in _ROOTS:
            return None
        alias = provided(fullname)
        if alias is None and fullname.startswith(_COMPILER_INTERNALS):
            return importlib.util.spec_from_loader(fullname, _Placeholder(_INTERNAL), is_package=True)
        if alias is None:
            return importlib.util.spec_from_loader(fullname, _Missing())
        return importlib.util.spec_from_loader(fullname, _Alias(alias), is_package=True)


_FINDER = _Finder()

# The Neuron compiler's own modules, which helper files import from: importable, and any use of
# one of their names is a located error.
_COMPILER_INTERNALS = ("neuronxcc.nki.compiler.backends", "nki.compiler.backends")
_INTERNAL = "is the Neuron compiler's internals, which the tandem tracer does not provide"
_NOT_INSTALLED = "is not installed"


class _Absent:
    """A name from a module that is not installed: any use is a located error."""

    def __init__(self, name, why=_NOT_INSTALLED):
        self._name, self._why = name, why

    def _fail(self, *args, **kwargs):
        root = self._name.split(".")[0] if self._why == _NOT_INSTALLED else self._name.rpartition(".")[0]
        raise UnsupportedError(f"{self._name} is used, but {root} {self._why} (the kernel file imports it; the "
                               "tandem tracer needs it only where the kernel uses it)", user_location(), self._name)

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Absent(f"{self._name}.{attr}", self._why)

    __call__ = __getitem__ = __iter__ = __bool__ = __index__ = _fail

    def __repr__(self):
        return f"<{self._name}: not installed>"


class _AbsentModule(types.ModuleType):
    _why = _NOT_INSTALLED

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Absent(f"{self.__name__}.{attr}", self._why)


class _Placeholder(importlib.abc.Loader):
    def __init__(self, why=_NOT_INSTALLED):
        self.why = why

    def create_module(self, spec):
        module = _AbsentModule(spec.name)
        module._why = self.why
        module.__path__ = []
        if spec.name in ("torch_neuronx", "torch_neuronx.xla_impl.ops"):
            module.nki_jit = jit
        return module

    def exec_module(self, module):
        pass


class _PlaceholderFinder(importlib.abc.MetaPathFinder):
    """Answers for the kernel file's own imports only: a library's `try: import x` keeps its
    ImportError."""

    def __init__(self, path):
        self.path = os.path.abspath(path)

    def find_spec(self, fullname, path=None, target=None):
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
            frame = frame.f_back
        if frame is None or os.path.abspath(frame.f_code.co_filename) != self.path:
            return None
        return importlib.util.spec_from_loader(fullname, _Placeholder(), is_package=True)


@contextlib.contextmanager
def while_loading(path):
    """Placeholders for the modules the kernel file at `path` imports that are not installed,
    behind every other finder, while the file loads."""
    finder = _PlaceholderFinder(path)
    sys.meta_path.append(finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


def install(first: bool):
    """Resolve NKI's module names to Tandem's: ahead of (`first`) or behind every other finder."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    if first:
        sys.meta_path.insert(0, _FINDER)
        # Names a real installation already loaded would shadow the hook.
        for name in [n for n in sys.modules if n.split(".")[0] in _ROOTS]:
            if not getattr(sys.modules[name], "__name__", "").startswith("tandem"):
                del sys.modules[name]
    else:
        sys.meta_path.append(_FINDER)
