"""The examples in workloads/nki/: each traces, prints a .kir that `tandem opt --passes=none`
prints back unchanged, and simulates race-free (exit 0) under `none` and `default`. The
traced matmuls simulate identically to the hand-written kernels of workloads/trn/."""
import importlib
import os
import subprocess
import sys

import pytest

import tandem

MODULES = ["matmul", "layernorm", "softmax", "mamba", "rmsnorm", "avgpool", "attention", "attention_allocated"]


def cases():
    for module in MODULES:
        m = importlib.import_module(module)
        for name, spec in m.EXAMPLES.items():
            args, kwargs = spec if len(spec) == 2 and isinstance(spec[1], dict) else (spec, {})
            yield pytest.param(getattr(m, name), args, kwargs, id=f"{module}.{name}")


def test_every_example_module_has_examples():
    assert sum(1 for _ in cases()) >= 7


@pytest.mark.parametrize("kernel,args,kwargs", list(cases()))
def test_example_traces_round_trips_and_simulates(kernel, args, kwargs, tandem_bin, tmp_path):
    traced = tandem.trace(kernel, *args, **kwargs)
    path = traced.write(tmp_path / f"{traced.name}.kir")
    printed = subprocess.run([tandem_bin, "opt", path, "--passes=none"], capture_output=True, text=True)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == traced.text  # canonical form: the printer's output is a fixed point
    for passes in ("none", "default"):
        sim = subprocess.run([tandem_bin, "sim", path, f"--passes={passes}"], capture_output=True, text=True)
        assert sim.returncode == 0, f"{passes}: exit {sim.returncode}\n{sim.stdout[-2000:]}\n{sim.stderr}"
        r = tandem.simulate(traced, passes=passes, timeline=False)  # raises RaceError on races
        assert r.races == 0 and r.total_ns > 0 and r.total_ns >= r.lower_bound_ns


def same_timing(a, b):
    assert a.total_ns == b.total_ns
    assert a.lower_bound_ns == b.lower_bound_ns
    assert [(l.name, l.ii_ns, l.overlap) for l in a.loops] == [(l.name, l.ii_ns, l.overlap) for l in b.loops]
    assert [(u.name, u.busy_ns) for u in a.units] == [(u.name, u.busy_ns) for u in b.units]


@pytest.mark.parametrize("passes", ["none", "default"])
def test_tiled_matmul_simulates_as_the_hand_written_kernel(root, tmp_path, passes):
    """The hand-written kernel zeroes PSUM with a memset; the tracer folds nl.zeros into the
    matmul's `start` flag (tandem.psum_start), so the reference is the file with that change."""
    import matmul

    traced = tandem.trace(matmul.matmul_tiled, (1024, 512), (1024, 1024), (512, 1024))
    with open(os.path.join(root, "workloads/trn/matmul_tiled.kir")) as f:
        text = f.read()
    assert "      %z = memset %acc {value = 0}\n" in text and "{accumulate}" in text
    ref = tmp_path / "matmul_tiled.kir"
    ref.write_text(text.replace("      %z = memset %acc {value = 0}\n", "")
                   .replace("{accumulate}", '{accumulate, start = "%k"}'))
    same_timing(tandem.simulate(traced, passes=passes, timeline=False),
                tandem.simulate(str(ref), passes=passes, timeline=False))


@pytest.mark.parametrize("kernel,reference", [("matmul_tiled", "matmul_v2_tiled_one_buffer"),
                                              ("matmul_hoisted_unrolled", "matmul_v3_hoisted")])
@pytest.mark.parametrize("passes", ["none", "default"])
def test_calibration_kernels_trace_to_the_calibration_files(root, tmp_path, kernel, reference, passes):
    """fp32 [4096, 8192] @ [8192, 8192]: the NKI-style kernels against
    workloads/trn/calibration/ (published 39.89 ms for v2 and 28.20 ms for v3): the tracer
    folds nl.zeros into the first matmul's `start` flag, as the files start each group."""
    import matmul

    sys.path.insert(0, os.path.join(root, "workloads", "generators"))
    import matmul_calibration as gen

    traced = tandem.trace(getattr(matmul, kernel), (8192, 4096), (8192, 8192), (4096, 8192), dtype="f32")
    ref = tmp_path / (reference + ".kir")
    ref.write_text(gen.v2(1) if reference.startswith("matmul_v2") else gen.v3())
    same_timing(tandem.simulate(traced, passes=passes, timeline=False),
                tandem.simulate(str(ref), passes=passes, timeline=False))


def test_destination_first_api_traces_to_the_same_kernel_as_the_returning_api():
    """But for the zeroing: an explicit nisa.memset stays, nl.zeros becomes the matmul's `start`."""
    import matmul

    a = tandem.trace(matmul.matmul_tiled, (1024, 512), (1024, 1024), (512, 1024), source_attrs=False).text
    b = tandem.trace(matmul.matmul_dst_api, (1024, 512), (1024, 1024), source_attrs=False).text
    strip = lambda t: sorted(l.strip() for l in t.splitlines()[1:])  # noqa: E731 (declaration order differs)
    assert "      %ms0 = memset %res_psum {value = 0}\n" in b and "{accumulate, start" not in b
    b = b.replace("      %ms0 = memset %res_psum {value = 0}\n", "").replace("{accumulate}", '{accumulate, start = "%k"}')
    assert strip(a) == strip(b.replace("matmul_dst_api", "matmul_tiled"))


def test_negative_coefficients_and_reals_round_trip(tandem_bin, tmp_path):
    import tandem.nki.language as nl

    def k(X, Y):
        for i in nl.affine_range(4):
            for j in nl.affine_range(2):
                t = nl.load(X[(3 - i) * 128:(4 - i) * 128, j * 64 + (1 - j) * 64:128])
                u = nl.multiply(t, 1e-05) + 123456789.0
                nl.store(Y[(3 - i) * 128:(4 - i) * 128, 64 - 64 * j:128 - 64 * j], value=u * -2.5)

    traced = tandem.trace(k, (512, 128), (512, 128))
    assert "%X[-%i*128 + 384 : -%i*128 + 512, 64:128]" in traced.text
    assert "%Y[-%i*128 + 384 : -%i*128 + 512, -%j*64 + 64 : -%j*64 + 128]" in traced.text
    path = traced.write(tmp_path / "k.kir")
    printed = subprocess.run([tandem_bin, "opt", path, "--passes=none"], capture_output=True, text=True)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == traced.text
