"""The one printer: a traced `tandem.ir.Kernel` as `.kir` text in canonical form.

Every piece of `.kir` syntax the Python package writes comes from this module. The output
follows docs/ir.md, "Canonical printing", so that `tandem opt --passes=none` prints it back
unchanged; `tests/python` checks that.
"""

import math
from typing import Dict, List, Tuple

from . import ir
from .ir import FLAG, Access, Affine, Expr, Index, Instruction, Kernel, Location, Loop, Tensor


def expr(e: Expr) -> str:
    """`%k*128 + 128`: variable terms in first-appearance order, then the constant."""
    if not isinstance(e, Affine):
        return str(int(e))
    out = ""
    for i, (loop, coef) in enumerate(e.terms):
        name = "%" + loop.name
        if coef == 1:
            term = name
        elif coef == -1:
            term = "-" + name
        elif coef < 0:
            term = f"-{name}*{-coef}"
        else:
            term = f"{name}*{coef}"
        if i == 0:
            out = term
        elif term.startswith("-"):
            out += " - " + term[1:]
        else:
            out += " + " + term
    if e.const > 0:
        out += f" + {e.const}"
    elif e.const < 0:
        out += f" - {-e.const}"
    return out


def index(i: Index) -> str:
    if i.point:
        return expr(i.lo)
    colon = ":" if not isinstance(i.lo, Affine) and not isinstance(i.hi, Affine) else " : "
    text = f"{expr(i.lo)}{colon}{expr(i.hi)}"
    if not i.dense():
        text += colon + pattern(i)
    return text


def pattern(i: Index) -> str:
    """`s` when one term of stride s covers [lo, hi), else the [stride, count] pairs."""
    extent = ir.sub(i.hi, i.lo)
    terms = [t for t in i.pattern if t.count > 1] or [i.pattern[0]]
    first = abs(terms[0].stride)
    if len(terms) == 1 and terms[0].count == -(-extent // first):
        return str(first)
    return "[" + ", ".join(f"[{abs(t.stride)}, {t.count}]" for t in terms) + "]"


def access(a: Access) -> str:
    name = "%" + a.tensor.name
    if a.whole():
        return name
    return name + "[" + ", ".join(index(i) for i in a.index) + "]"


def value(v) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            return value(repr(v))  # inf, -inf, nan: .kir numbers are finite
        text = repr(v)
        if "." not in text and "e" not in text and "E" not in text:
            text += ".0"
        return text
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    raise TypeError(f"cannot print attribute value {v!r}")


def attrs(items) -> str:
    if not items:
        return ""
    parts = [k if v is FLAG else f"{k} = {value(v)}" for k, v in items]
    return "{" + ", ".join(parts) + "}"


def tensor_decl(t: Tensor) -> str:
    text = f"tensor %{t.name} : {t.space}[{', '.join(str(d) for d in t.shape)}] {t.dtype}"
    if t.attrs:
        text += " " + attrs(t.attrs)
    return text


def instruction(inst: Instruction) -> str:
    text = f"%{inst.name} = {inst.opcode}"
    if inst.writes:
        text += " " + ", ".join(access(a) for a in inst.writes)
    if inst.reads:
        text += " <- " + ", ".join(access(a) for a in inst.reads)
    if inst.engine:
        text += " on " + inst.engine
    if inst.attrs:
        text += " " + attrs(inst.attrs)
    return text


def _has_instructions(block) -> bool:
    return any(not isinstance(x, Loop) or _has_instructions(x.body) for x in block)


def print_kernel(k: Kernel) -> Tuple[str, Dict[int, Tuple[str, Location]]]:
    """The kernel's text and, for each 1-based line that came from the Python source, what
    it declares (`%name`) and where in the source it was traced."""
    lines: List[str] = []
    where: Dict[int, Tuple[str, Location]] = {}

    def emit(depth, text, name=None, loc=None):
        lines.append("  " * depth + text)
        if loc is not None:
            where[len(lines)] = (name, loc)

    header = f"kernel @{k.name} target = {value(k.target)}"
    if k.attrs:
        header += " " + attrs(k.attrs)
    emit(0, header + " {", None, k.source)
    for t in k.tensors:
        emit(1, tensor_decl(t), "%" + t.name, t.loc)
    lines.append("")

    def block(items, depth):
        for item in items:
            if isinstance(item, Loop):
                if not _has_instructions(item.body):
                    continue  # a loop with nothing to run: `{}` would read as attributes
                emit(depth, f"loop %{item.name} = 0 to {item.trip} {{", "%" + item.name, item.loc)
                block(item.body, depth + 1)
                emit(depth, "}")
            else:
                emit(depth, instruction(item), "%" + item.name, item.loc)

    block(k.body, 1)
    lines.append("}")
    return "\n".join(lines) + "\n", where
