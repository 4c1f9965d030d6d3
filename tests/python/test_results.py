"""The result objects: every number is the JSON document's; tables and plots."""
import json
import os
import subprocess
import sys

import pytest

import tandem


@pytest.fixture(scope="module")
def softmax_run():
    import softmax

    traced = tandem.trace(softmax.softmax, "1024x1024", dtype="f32")
    return traced, tandem.simulate(traced)


def test_result_numbers_equal_the_json(softmax_run, tandem_bin, tmp_path):
    traced, r = softmax_run
    doc = r.json
    assert doc["schema"] == "tandem.sim/1"
    for key in tandem.SimResult.KERNEL_FIELDS:
        assert getattr(r, key) == doc[key]
    assert r.dma_bytes == doc["dma"]["bytes"]
    assert [u.json for u in r.engines] == doc["engines"]
    assert [u.json for u in r.queues] == doc["dma"]["queues"]
    for unit, d in zip(r.units, doc["engines"] + doc["dma"]["queues"]):
        assert (unit.name, unit.busy_ns, unit.utilization, unit.instances, unit.stall_ns) == (
            d["name"], d["busy_ns"], d["utilization"], d["instances"], d["stall_ns"])
        assert unit.stalls.as_dict() == d["stalls"]
    assert len(r.loops) == len(doc["loops"]) >= 1
    for loop, d in zip(r.loops, doc["loops"]):
        for key in tandem.Loop.FIELDS:
            assert getattr(loop, key) == d.get(key), key
        assert len(loop.iterations) == len(d["iterations"])
        for it, di in zip(loop.iterations, d["iterations"]):
            for key in tandem.Iteration.FIELDS:
                assert getattr(it, key) == di.get(key), key
            assert it.stalls.semaphore_ns == di["stalls"]["semaphore_ns"]
    # The same kernel through the binary directly gives the same document (no timeline asked).
    path = traced.write(tmp_path / "softmax.kir")
    out = subprocess.run([tandem_bin, "sim", path, "--json", "--passes=default"], capture_output=True, text=True,
                         check=True).stdout
    direct = json.loads(out[out.index("{"):])
    assert {k: v for k, v in doc.items() if k != "timeline"} == direct


def test_loop_lookup_and_source(softmax_run):
    traced, r = softmax_run
    loop = r.loop("i")
    assert loop is r.loop("%i") is r.loop()
    assert loop.ii == loop.ii_ns and loop.trip_count == 8 and loop.dynamic_iterations == 8
    assert loop.source is not None and loop.source.filename.endswith("softmax.py")
    assert r.unit(r.engines[0].name) is r.engines[0]
    with pytest.raises(KeyError):
        r.loop("nope")


def test_to_pandas(softmax_run, pandas):
    _, r = softmax_run
    frames = r.to_pandas()
    assert set(frames) == {"summary", "units", "loops", "iterations"}
    assert frames["summary"]["total_ns"][0] == r.total_ns
    units = frames["units"]
    assert list(units["name"]) == [u.name for u in r.units]
    assert list(units["busy_ns"]) == [u.busy_ns for u in r.units]
    assert "stalls.semaphore_ns" in units.columns
    loops = frames["loops"]
    assert list(loops["ii_ns"]) == [l.ii_ns for l in r.loops]
    iters = frames["iterations"]
    assert len(iters) == sum(len(l.iterations) for l in r.loops)
    assert list(iters["overlap"]) == [it.overlap for l in r.loops for it in l.iterations]


def test_plots(softmax_run, pyplot, tmp_path):
    _, r = softmax_run
    ax = r.plot_overlap()
    ax.figure.savefig(tmp_path / "overlap.png")
    assert len(ax.patches) == 2 * len(r.loop().iterations)
    ax = r.plot_timeline()
    ax.figure.savefig(tmp_path / "timeline.png")
    assert len(ax.collections) == len(r.timeline["spans"]) > 0
    assert (tmp_path / "overlap.png").stat().st_size > 0 and (tmp_path / "timeline.png").stat().st_size > 0
    pyplot.close("all")


def test_timeline_needs_timeline(softmax_run, pyplot):
    traced, _ = softmax_run
    r = tandem.simulate(traced, timeline=False)
    assert r.timeline is None
    with pytest.raises(ValueError, match="timeline=True"):
        r.plot_timeline()


def test_missing_pandas_and_matplotlib_say_so(softmax_run, monkeypatch):
    _, r = softmax_run
    monkeypatch.setitem(sys.modules, "pandas", None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match="to_pandas\\(\\) needs pandas.*python3-pandas"):
        r.to_pandas()
    with pytest.raises(ImportError, match="a plot needs matplotlib.*python3-matplotlib"):
        r.plot_overlap()
    # Under another interpreter than Debian's, the message says which one runs.
    monkeypatch.setattr(sys, "executable", "/opt/venv/bin/python3")
    with pytest.raises(ImportError, match="this is /opt/venv/bin/python3, which does not see Debian's packages"):
        r.to_pandas()


def test_ab_ratios(pandas):
    import matmul

    ab = tandem.ab(matmul.matmul_tiled, (1024, 512), (1024, 1024), (512, 1024), a="none", b="default")
    assert (ab.a_pipeline, ab.b_pipeline) == ("none", "default")
    assert ab.ratio("total_ns") == pytest.approx(ab.b.total_ns / ab.a.total_ns, rel=1e-12)
    assert ab.ratio("ii_ns", loop="k") == pytest.approx(ab.b.loop("k").ii_ns / ab.a.loop("k").ii_ns, rel=1e-12)
    # Each side is the same simulation tandem.simulate runs.
    a = tandem.simulate(matmul.matmul_tiled, (1024, 512), (1024, 1024), (512, 1024), passes="none", timeline=False)
    assert a.total_ns == ab.a.total_ns
    table = ab.to_pandas()
    assert set(table.columns) >= {"name", "a", "b", "delta", "ratio"}
    assert len(table) == len(ab.rows) > 0


def test_hardware_ab():
    import matmul

    shapes = ((1024, 512), (1024, 1024), (512, 1024))
    ab = tandem.ab(matmul.matmul_tiled, *shapes, hw_a="trn1", hw_b="trn2")
    assert (ab.a_pipeline, ab.b_pipeline) == ("default", "default")
    assert (ab.a_model, ab.b_model) == ("trn1", "trn2")
    assert "default on trn1" in repr(ab)
    # Each side is the simulation tandem.simulate runs on that model.
    b = tandem.simulate(matmul.matmul_tiled, *shapes, hw="trn2", timeline=False)
    assert b.total_ns == ab.b.total_ns
    assert ab.ratio("total_ns") == pytest.approx(ab.b.total_ns / ab.a.total_ns, rel=1e-12)


def test_sweep_over_pipelines_and_models(pandas):
    import softmax

    sw = tandem.sweep(softmax.softmax, "256x512", pipelines=["none", "default"], models=["trn1", "trn2"], jobs=2)
    assert len(sw) == 4
    rows = sw.rows
    assert [(r["pipeline"], r["hw"]) for r in rows] == [("none", "trn1"), ("default", "trn1"), ("none", "trn2"),
                                                        ("default", "trn2")]
    assert all(r["error"] is None for r in rows)
    one = tandem.simulate(softmax.softmax, "256x512", passes="default", hw="trn1", timeline=False)
    assert rows[1]["total_ns"] == one.total_ns and rows[1]["%i ii_ns"] == one.loop("i").ii_ns
    assert list(sw.to_pandas()["total_ns"]) == [r["total_ns"] for r in rows]


def test_sweep_records_a_failing_point():
    import softmax

    sw = tandem.sweep(softmax.softmax, "256x512", pipelines=["default", "no-such-pass"])
    assert sw.rows[0]["error"] is None
    assert "unknown pass 'no-such-pass'" in sw.rows[1]["error"]
    assert isinstance(sw.results[1], tandem.TandemError)


def test_perfetto_trace_and_opt(tmp_path):
    import softmax

    path = tmp_path / "t.json"
    tandem.simulate(softmax.softmax, "256x512", trace_path=str(path), timeline=False)
    trace = json.loads(path.read_text())
    assert any(e.get("ph") == "B" for e in trace["traceEvents"])
    traced = tandem.trace(softmax.softmax, "256x512")
    assert tandem.opt(traced) == traced.text
    scheduled = tandem.opt(traced, passes="default")
    assert "separation_barrier" in scheduled and "deps_listed" in scheduled


def test_simulations_in_threads_trace_independently():
    from concurrent.futures import ThreadPoolExecutor

    import layernorm
    import softmax

    jobs = [(softmax.softmax, ("256x512",), {}), (layernorm.layernorm, ("256x512", 1e-5, (512,), (512,)), {})] * 2
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda j: tandem.simulate(j[0], *j[1], timeline=False, **j[2]), jobs))
    assert [r.kernel for r in results] == ["softmax", "layernorm", "softmax", "layernorm"]
    assert results[0].total_ns == results[2].total_ns and results[1].total_ns == results[3].total_ns


def test_auto_pipeline_from_python():
    """passes="auto" (docs/passes.md) runs as on the command line: no race, and on the tiled
    matmul it rings the K loop's tiles, so the loop's II drops below default's."""
    import matmul

    shapes = ((1024, 512), (1024, 1024), (512, 1024))
    auto = tandem.simulate(matmul.matmul_tiled, *shapes, passes="auto", timeline=False)
    default = tandem.simulate(matmul.matmul_tiled, *shapes, passes="default", timeline=False)
    assert auto.races == 0
    assert auto.loop("k").ii_ns < default.loop("k").ii_ns
    assert auto.total_ns < default.total_ns


def test_loop_line_names_both_bounds_as_the_summary_does(tandem_bin):
    kernel = os.path.join(os.path.dirname(__file__), "..", "..", "workloads", "trn", "gemm_k.kir")
    r = tandem.simulate(kernel, passes="none", timeline=False)
    text = subprocess.run([tandem_bin, "sim", kernel], capture_output=True, text=True, check=True).stdout
    loop = r.loop("k")
    assert f"loop %k (64 iterations): {loop.bounds_line()}; DMA overlapped" in text
    assert "the recurrence %mm -> %lb -> %mm 1589.506 ns" in repr(loop)
    assert "(q0: 64 x 880.000 ns): efficiency 48.4%" in repr(loop)


def test_advice_from_python(tandem_bin):
    kernel = os.path.join(os.path.dirname(__file__), "..", "..", "workloads", "trn", "gemm_k.kir")
    r = tandem.simulate(kernel, passes="none", timeline=False, advise=True)
    first = r.advice[0]
    assert first["simulated"] and first["rejected"] == ""
    assert first["command"].startswith("tandem sim --passes=auto ")
    assert first["gain"] == pytest.approx(r.total_ns / first["total_ns"])
    assert any(not a["simulated"] for a in r.advice)  # the hints
