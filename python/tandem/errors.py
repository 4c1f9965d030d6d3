"""Errors located in the user's source, and how the tracer finds that source.

A `TraceError` (an `UnsupportedError` for an NKI name or tile attribute the tracer does not
provide) carries the FILE:LINE:COL of the user's code: the innermost frame outside this package
(`user_frame`, `user_location`). The same frames name what a kernel makes: a value after the
variable it is assigned to (`value_name`), a loop after its `for` variable (`loop_name`).
"""

import ast
import linecache
import os
import re
import sys
from typing import Optional

from .ir import Location

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


# As the binary's kEchoMaxChars (sched/support/error.h).
ECHO_MAX_CHARS = 40
_ESCAPES = {ord("\n"): "\\n", ord("\t"): "\\t", ord("\r"): "\\r"}


def printable(text, max_chars: Optional[int] = ECHO_MAX_CHARS) -> str:
    """User text echoed in a message, as the binary's `printable` (sched/support/error.h):
    control characters and bytes that are not printable ASCII escaped (\\n, \\t, \\x01, \\xc3,
    counting the UTF-8 bytes of the text), and cut to `max_chars` of them with "..." after the
    cut (None: never cut), so that every message stays one readable line."""
    data = str(text).encode("utf-8", "surrogatepass")
    out = []
    for shown, c in enumerate(data):
        if shown == max_chars:
            out.append("...")
            break
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif c < 0x20 or c >= 0x7F:
            out.append(f"\\x{c:02x}")
        else:
            out.append(chr(c))
    return "".join(out)


class TraceError(Exception):
    """A kernel the tracer refuses, located in the user's source.

    `str(e)` is `FILE:LINE:COL: error: CALL: MESSAGE`; the parts are `e.location`
    (a `tandem.ir.Location`), `e.call` and `e.message`.
    """

    def __init__(self, message: str, location: Optional[Location] = None, call: str = ""):
        self.message = message
        self.location = location
        self.call = call
        text = f"{call}: {message}" if call else message
        if location is not None:
            text = f"{location}: error: {text}"
        super().__init__(printable(text, None))  # one line, whatever the parts echo


class UnsupportedError(TraceError, AttributeError):
    """An NKI name or tile attribute the tracer does not provide (also an AttributeError, so
    hasattr() answers False)."""


def in_package(filename: str) -> bool:
    # The import system between the user and the hook, and the tandem-nki launcher.
    if filename.startswith("<frozen importlib") or os.path.basename(filename) == "tandem-nki":
        return True
    try:
        return os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep)
    except (TypeError, ValueError):
        return False


def user_frame():
    """The innermost frame outside this package: the user's kernel (or a helper it calls)."""
    frame = sys._getframe(1)
    while frame is not None and in_package(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


_POSITIONS = {}  # code object -> its instructions' positions, listed once


def _position(frame):
    """(line, col, end_line, end_col) of the bytecode the frame is executing (cols 0-based),
    or None (Python < 3.11 has no columns)."""
    try:
        code = frame.f_code
        positions = _POSITIONS.get(code)
        if positions is None:
            positions = _POSITIONS[code] = list(code.co_positions())
        pos = positions[frame.f_lasti // 2] if frame.f_lasti >= 0 else None
    except (AttributeError, IndexError):
        return None
    if not pos or pos[0] is None or pos[2] is None:
        return None
    return pos


def frame_location(frame) -> Optional[Location]:
    if frame is None:
        return None
    pos = _position(frame)
    if pos is None:
        return Location(frame.f_code.co_filename, frame.f_lineno, 0)
    return Location(frame.f_code.co_filename, pos[0], pos[2] + 1)


def user_location() -> Optional[Location]:
    return frame_location(user_frame())


_ASSIGNMENTS = {}


def _assignments(filename: str):
    """(value span, target name) of every `name = value` in a source file."""
    if filename not in _ASSIGNMENTS:
        found = []
        try:
            tree = ast.parse("".join(linecache.getlines(filename)))
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    target = node.targets[0]
                elif isinstance(node, ast.AnnAssign) and node.value is not None:
                    target = node.target
                else:
                    continue
                pairs = [(target, node.value)]
                if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) and len(
                        target.elts) == len(node.value.elts):  # x, y = f(), g()
                    pairs = list(zip(target.elts, node.value.elts))
                for t, v in pairs:
                    if isinstance(t, ast.Name):
                        found.append(((v.lineno, v.col_offset), (v.end_lineno, v.end_col_offset), t.id))
        except (SyntaxError, ValueError):
            pass
        _ASSIGNMENTS[filename] = found
    return _ASSIGNMENTS[filename]


def value_name(hint: str) -> str:
    """A name for the value the user's current expression makes: `x` for the whole of
    `x = ...`, `x.hint` for a part of it, else `hint`."""
    frame = user_frame()
    pos = _position(frame) if frame is not None else None
    if pos is None:
        return hint
    start, end = (pos[0], pos[2]), (pos[1], pos[3])
    best = None
    for vstart, vend, name in _assignments(frame.f_code.co_filename):
        if (vstart, vend) == (start, end):
            return name
        if vstart <= start and end <= vend and (best is None or vstart >= best[0]):
            best = (vstart, name)
    return f"{best[1]}.{hint}" if best else hint


_FOR = re.compile(r"^\s*(?:async\s+)?for\s+([A-Za-z_]\w*)\s+in\b")


def _source_line(loc: Optional[Location]) -> str:
    if loc is None:
        return ""
    return linecache.getline(loc.filename, loc.line)


def loop_name(loc: Optional[Location]) -> Optional[str]:
    m = _FOR.match(_source_line(loc))
    return m.group(1) if m else None
