"""Errors of the tandem binary arrive as Python exceptions: TandemError with the located
message (and, for traced kernels, the Python line), RaceError with the hazards."""
import os
import stat

import pytest

import tandem
import tandem.nki.isa as nisa
import tandem.nki.language as nl
from conftest import line_of

RACY = """kernel @racy target = "trn2" {deps_listed} {
  tensor %X : dram[128, 4096] bf16
  tensor %t : sbuf[128, 4096] bf16
  tensor %u : sbuf[128, 4096] bf16

  %ld = load %t <- %X
  %ex = activation %u <- %t {func = "exp"}
}
"""


def test_binary_rejection_names_the_kir_line_and_the_python_line():
    def k(a):
        t = nl.load(a)
        u = nl.ndarray((128, 512), nl.float32)
        nisa.tensor_copy(u, t, engine=nisa.tensor_engine)  # E:bad-engine
        nl.store(a, u)

    with pytest.raises(tandem.TandemError) as ei:
        tandem.simulate(k, (128, 512))
    e = ei.value
    assert e.returncode == 1
    assert e.message.startswith("k.kir:") and "error: 'tensor_copy' cannot run on 'pe' (it runs on dve, act, pool)" \
        in e.message
    assert e.kir_line is not None and e.name == "%cp0"
    assert (e.source.filename, e.source.line) == (__file__, line_of(__file__, "# E:" + "bad-engine"))
    assert f"{__file__}:{e.source.line}" in str(e)
    assert "'tensor_copy' cannot run on 'pe'" in e.stderr


def test_capacity_error_from_the_binary():
    # Nine accumulators live at once (each read after all are zeroed) need nine PSUM banks.
    def k(a):
        ps = [nl.zeros((128, 512), nl.float32, buffer=nl.psum) for _ in range(9)]
        for p in ps:
            nl.store(a, nl.copy(p, dtype=a.dtype))

    with pytest.raises(tandem.TandemError, match="the tensors live in psum need 9 banks of 2048 bytes but psum has 8"):
        tandem.simulate(k, (128, 512))


def test_a_kir_file_with_a_syntax_error(tmp_path):
    bad = tmp_path / "bad.kir"
    bad.write_text('kernel @bad target = "trn2" {\n  tensor %u sbuf[128, 256] f32\n}\n')
    with pytest.raises(tandem.TandemError) as ei:
        tandem.simulate(str(bad))
    assert ei.value.message == f"{bad}:2:13: error: expected ':' after the tensor name, found 'sbuf'"
    assert ei.value.returncode == 1 and ei.value.kir_line == 2 and ei.value.source is None


def test_bad_pipeline():
    import softmax

    with pytest.raises(tandem.TandemError, match="--passes:1:1: error: unknown pass 'nope'"):
        tandem.simulate(softmax.softmax, "256x512", passes="nope")
    with pytest.raises(tandem.TandemError, match="unknown pass 'nope'"):
        tandem.ab(softmax.softmax, "256x512", a="none", b="nope")


def test_races_raise_race_error_with_the_hazards(tmp_path):
    path = tmp_path / "racy.kir"
    path.write_text(RACY)
    with pytest.raises(tandem.RaceError) as ei:
        tandem.simulate(str(path))
    e = ei.value
    assert e.returncode == 3 and len(e.hazards) == 1
    h = e.hazards[0]
    assert (h.kind, h.first, h.second) == ("RAW", "%ld", "%ex")
    assert "the order that prevents it: dep %ld -> %ex flow" in h.message
    assert h.message in str(e)
    assert e.result is not None and e.result.races == 1
    r = tandem.simulate(str(path), races="return")
    assert r.races == 1 and r.hazards[0].json == h.json


def test_missing_binary(monkeypatch, tmp_path):
    monkeypatch.setenv("TANDEM_BIN", str(tmp_path / "no-tandem"))
    with pytest.raises(tandem.TandemError, match="is not an executable file"):
        tandem.find_binary()
    fake = tmp_path / "tandem"
    fake.write_text("#!/bin/sh\necho 'boom: internal' >&2\nexit 2\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("TANDEM_BIN", str(fake))
    with pytest.raises(tandem.TandemError) as ei:
        tandem.simulate(str(tmp_path / "x.kir"))
    assert ei.value.returncode == 2 and ei.value.message == "boom: internal"
    assert os.environ["TANDEM_BIN"] == str(fake)


# -- message format (robust reproducer 14-message-format.sh) ------------------------------


def test_printable_escapes_control_characters_and_cuts_long_values():
    from tandem.errors import printable

    assert printable("a\rb\x0bc\nd\te\x1b") == "a\\rb\\x0bc\\nd\\te\\x1b"
    assert printable("\u00e9") == "\\xc3\\xa9"  # counted and escaped by UTF-8 byte, as the binary does
    assert printable("x" * 40) == "x" * 40 and printable("x" * 41) == "x" * 40 + "..."
    assert printable("x" * 5000, None) == "x" * 5000


def test_a_trace_error_is_one_line_whatever_it_echoes():
    e = tandem.TraceError("bad value 'a\rb\nc'", tandem.ir.Location("k.py", 3, 4), "nl.x")
    assert str(e) == "k.py:3:4: error: nl.x: bad value 'a\\rb\\nc'"
    assert e.message == "bad value 'a\rb\nc'"  # the parts are kept as given


@pytest.mark.parametrize("args, shown", [
    (["--shapes", "128x512,1\r2"], "--shapes item '1\\r2' is not a shape"),
    (["--shapes", "128x512,a" + "y" * 5000], "--shapes item 'a" + "y" * 39 + "...' is not a shape"),
    (["--param", "x\x0by"], "--param 'x\\x0by' is not NAME=VALUE"),
    (["--grid", "4\n" + "8" * 5000], "--grid '4\\n" + "8" * 38 + "...' is not a launch grid"),
])
def test_cli_options_are_echoed_escaped_and_cut(root, tmp_path, args, shown):
    from test_cli import run

    src = tmp_path / "k.py"
    src.write_text("from tandem import nki\nimport tandem.nki.language as nl\n\n\n@nki.jit\ndef k(a):\n"
                   "    return nl.load(a)\n")
    p = run(root, f"{src}:k", *args)
    lines = p.stderr.splitlines()  # str.splitlines also splits at \r, \x0b and \x1c-\x1e
    assert p.returncode == 2 and shown in lines[-1], p.stderr
    assert len(lines[-1]) < 200


def test_a_kernel_raising_a_message_with_control_characters_is_one_line(root, tmp_path):
    from test_cli import run

    src = tmp_path / "k.py"
    src.write_text("from tandem import nki\n\n\n@nki.jit\ndef k(a):\n    raise ValueError('one\\rtwo\\nthree')\n")
    p = run(root, f"{src}:k", "--shapes", "128x512")
    assert p.returncode == 1 and len(p.stderr.splitlines()) == 1, p.stderr
    assert p.stderr.strip().endswith("the kernel raised ValueError: one\\rtwo\\nthree")
