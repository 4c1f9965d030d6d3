"""docs/python.md's worked example and docs/usage.md's Python example run as written and print
what the pages show."""
import contextlib
import io
import os
import re


def blocks(text):
    """(language, body) of each fenced block."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"```(\w*)\n(.*?)```", text, re.S)]


def test_worked_example_prints_what_the_page_shows(root, pyplot, pandas):
    with open(os.path.join(root, "docs", "python.md")) as f:
        page = f.read()
    section = page[page.index("## Worked example"):page.index("## API")]
    env, printed, shown = {}, io.StringIO(), []
    for lang, body in blocks(section):
        if lang == "python" and not body.startswith("@nki.jit"):  # the first block is an excerpt
            with contextlib.redirect_stdout(printed):
                exec(compile(body, "docs/python.md", "exec"), env)
        elif lang == "":
            shown.append(body)
    pyplot.close("all")
    out = printed.getvalue()
    examples = os.path.join(root, "workloads", "nki") + os.sep
    out = out.replace(examples, ".../workloads/nki/")
    kir, rest = out[:out.index("}\n\n") + 2], out[out.index("}\n\n") + 3:]
    assert kir == shown[0], "the traced .kir differs from the page"
    expected = "".join(shown[1:])
    for line in rest.splitlines():
        assert line in expected, f"printed but not on the page: {line!r}"
    assert len(rest.splitlines()) == len(expected.splitlines())


def test_usage_example_prints_what_it_says(root, pyplot, pandas):
    with open(os.path.join(root, "docs", "usage.md")) as f:
        page = f.read()
    start = page.index("## From Python")
    end = page.find("\n## ", start + 1)
    section = page[start:] if end < 0 else page[start:end]
    (code,) = [body for lang, body in blocks(section) if lang == "python"]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "docs/usage.md", "exec"), {})
    pyplot.close("all")
    said = [l.split(":", 1)[1].strip() if l.startswith("# prints:") else l.lstrip("# ").strip()
            for l in code.splitlines() if l.startswith("#") and ("prints:" in l or l.startswith("#   "))]
    assert printed.getvalue().splitlines() == said
