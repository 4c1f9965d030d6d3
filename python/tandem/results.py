"""Result objects built from the `tandem.sim/1` and `tandem.ab/1` JSON documents
(docs/metrics.md defines every field). Every number is the JSON's, unchanged; `.json` keeps
the whole document.

`to_pandas()` needs pandas, the plots matplotlib (Debian: python3-pandas,
python3-matplotlib; scripts/setup installs both); without them those methods raise an
ImportError that says so, and everything else works.
"""

import sys
from typing import Dict, List, Optional


def _not_installed(what: str, module: str, package: str) -> ImportError:
    """What to install, and for which interpreter: a python3 other than Debian's (a pyenv or
    venv one first on the PATH) does not see the Debian packages."""
    here = sys.executable or "python3"
    other = "" if here == "/usr/bin/python3" else (
        f"; this is {here}, which does not see Debian's packages: run /usr/bin/python3, or install {module} for it")
    return ImportError(f"{what} needs {module}, which is not installed for this python3 "
                       f"(Debian: apt-get install {package}; scripts/setup installs it{other})")


def _pandas():
    try:
        import pandas
    except ImportError as e:
        raise _not_installed("to_pandas()", "pandas", "python3-pandas") from e
    return pandas


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise _not_installed("a plot", "matplotlib", "python3-matplotlib") from e
    return plt


STALL_KINDS = ("semaphore_ns", "dependency_ns", "barrier_ns", "queue_ns", "conflict_ns")


class Stalls:
    """Why a unit or an iteration waited: semaphore, dependency, barrier, queue, conflict (ns)."""

    def __init__(self, d: dict):
        self.json = d
        for k in STALL_KINDS:
            setattr(self, k, d.get(k, 0.0))

    def as_dict(self):
        return dict(self.json)

    def __repr__(self):
        return "Stalls(" + ", ".join(f"{k}={v}" for k, v in self.json.items()) + ")"


class Unit:
    """A compute engine (`kind == "engine"`) or a DMA queue (`kind == "queue"`)."""

    def __init__(self, d: dict, kind: str):
        self.json = d
        self.kind = kind
        self.name = d["name"]
        self.busy_ns = d["busy_ns"]
        self.setup_ns = d.get("setup_ns")  # queues: their transfers' setups; engines: 0
        self.utilization = d["utilization"]
        self.instances = d["instances"]
        self.stall_ns = d["stall_ns"]
        self.stalls = Stalls(d.get("stalls", {}))
        self.bytes = d.get("bytes")

    def __repr__(self):
        return f"Unit({self.name}, busy {self.busy_ns} ns, utilization {self.utilization:.3f})"


class Iteration:
    """One dynamic iteration of a loop in the overlap ledger."""

    FIELDS = ("index", "iv", "start_ns", "end_ns", "dma_in_flight_ns", "dma_moving_ns", "dma_waiting_ns",
              "compute_busy_ns", "overlap", "compute_dma_wait_ns", "wmma_bubble_cycles")

    def __init__(self, d: dict):
        self.json = d
        for k in self.FIELDS:
            setattr(self, k, d.get(k))
        self.stalls = Stalls(d.get("stalls", {}))

    def __repr__(self):
        return (f"Iteration({self.index}: {self.start_ns}..{self.end_ns} ns, overlap {self.overlap:.3f}, "
                f"compute waiting on DMA {self.compute_dma_wait_ns} ns)")


class Loop:
    """A loop's initiation interval against its bound, and its per-iteration ledger."""

    FIELDS = ("name", "trip_count", "dynamic_iterations", "ii_ns", "ii_bound_ns", "resource_bound_ns",
              "bound_resource", "recurrence_bound_ns", "recurrence_cause", "span_ns", "span_bound_ns", "efficiency",
              "dma_in_flight_ns", "dma_moving_ns", "dma_waiting_ns", "overlap", "exposed_dma_ns",
              "compute_demand_ns", "dma_demand_ns", "hideable_dma", "limiter", "speed_of_light",
              "wmmas", "wmma_bubble_cycles_per_iteration", "iterations_folded")

    def __init__(self, d: dict, source=None):
        self.json = d
        for k in self.FIELDS:
            setattr(self, k, d.get(k))
        self.iterations: List[Iteration] = [Iteration(i) for i in d.get("iterations", [])]
        self.source = source  # where the loop is in the Python kernel (traced kernels)

    @property
    def ii(self):
        return self.ii_ns

    def bounds_line(self) -> str:
        """The loop as `tandem sim` prints it: the II, both bounds with their causes, and the
        span bound its efficiency divides by."""
        text = f"II {self.ii_ns:.3f} ns; per iteration {self.bound_resource} needs {self.resource_bound_ns:.3f} ns"
        if self.recurrence_cause:
            text += f" and the recurrence {self.recurrence_cause} {self.recurrence_bound_ns:.3f} ns"
        return (text + f"; span {self.span_ns:.3f} ns against its bound {self.span_bound_ns:.3f} ns "
                f"({self.bound_resource}: {self.dynamic_iterations} x {self.resource_bound_ns:.3f} ns): "
                f"efficiency {100 * self.efficiency:.1f}%")

    def __repr__(self):
        return f"Loop({self.name}: {self.dynamic_iterations} iterations, {self.bounds_line()})"


class Hazard:
    """A race the checker found: kind (RAW, WAR, WAW), the two instructions, the message."""

    def __init__(self, d: dict):
        self.json = d
        self.kind = d.get("kind")
        self.first = d.get("first")
        self.second = d.get("second")
        self.message = d.get("message")

    def __repr__(self):
        return f"Hazard({self.kind}: {self.message})"

    def __str__(self):
        return self.message or f"{self.kind} {self.first} {self.second}"


class SimResult:
    """One simulation: the `tandem.sim/1` document as objects.

    Kernel figures are attributes (`total_ns`, `lower_bound_ns`, ...), `engines` and
    `queues` (also `units`, both) are `Unit`s, `loops` are `Loop`s with their `iterations`.
    """

    KERNEL_FIELDS = ("schema", "kernel", "model", "reference_clock_ghz", "total_ns", "total_cycles", "lower_bound_ns",
                     "lower_bound_resource", "dynamic_instructions", "semaphores", "semaphores_available",
                     "races_checked", "races")

    def __init__(self, doc: dict, traced=None, pipeline: Optional[str] = None, hw: Optional[str] = None):
        if doc.get("schema") != "tandem.sim/1":
            raise ValueError(f"not a tandem.sim/1 document (schema {doc.get('schema')!r})")
        self.json = doc
        self.traced = traced
        self.pipeline = pipeline
        self.hw = hw
        for k in self.KERNEL_FIELDS:
            setattr(self, k, doc.get(k))
        dma = doc.get("dma", {})
        self.dma_bytes = dma.get("bytes")
        self.engines = [Unit(u, "engine") for u in doc.get("engines", [])]
        self.queues = [Unit(u, "queue") for u in dma.get("queues", [])]
        self.hazards = [Hazard(h) for h in doc.get("hazards", [])]
        self.loops = [Loop(l, self._source(l.get("name"))) for l in doc.get("loops", [])]
        self.timeline = doc.get("timeline")
        # `simulate(..., advise=True)`: each change tried, simulated ones with their command,
        # total_ns, gain and why they were rejected (docs/usage.md, Advice).
        self.advice: List[dict] = doc.get("advice", [])

    def _source(self, name):
        if self.traced is None or not name:
            return None
        return self.traced.source_of(name)

    @property
    def units(self) -> List[Unit]:
        return self.engines + self.queues

    def loop(self, name: Optional[str] = None) -> Loop:
        """A loop by name (`"k"` or `"%k"`); without a name, the one with the most dynamic iterations."""
        if not self.loops:
            raise KeyError("the kernel has no loop")
        if name is None:
            return max(self.loops, key=lambda l: l.dynamic_iterations)
        wanted = name if name.startswith("%") else "%" + name
        for l in self.loops:
            if l.name == wanted:
                return l
        raise KeyError(f"no loop {wanted} (loops: {', '.join(l.name for l in self.loops)})")

    def unit(self, name: str) -> Unit:
        for u in self.units:
            if u.name == name:
                return u
        raise KeyError(f"no unit {name}")

    def summary(self) -> Dict[str, object]:
        out = {k: getattr(self, k) for k in self.KERNEL_FIELDS}
        out["dma.bytes"] = self.dma_bytes
        return out

    def __repr__(self):
        return (f"SimResult({self.kernel} on {self.model}: {self.total_ns} ns, lower bound {self.lower_bound_ns} ns, "
                f"{len(self.loops)} loops, {self.races} races)")

    # -- tables ---------------------------------------------------------------------------
    def to_pandas(self) -> Dict[str, "object"]:
        """DataFrames: `summary` (one row), `units` (one row per engine and queue, stalls as
        columns), `loops` (one row per loop) and `iterations` (every kept ledger record, with
        its loop's name)."""
        pd = _pandas()
        units = []
        for u in self.units:
            row = {"name": u.name, "kind": u.kind, "busy_ns": u.busy_ns, "utilization": u.utilization,
                   "instances": u.instances, "stall_ns": u.stall_ns, "bytes": u.bytes}
            row.update({f"stalls.{k}": v for k, v in u.stalls.json.items()})
            units.append(row)
        loops = [{k: getattr(l, k) for k in Loop.FIELDS} for l in self.loops]
        iters = []
        for l in self.loops:
            for it in l.iterations:
                row = {"loop": l.name}
                row.update({k: getattr(it, k) for k in Iteration.FIELDS})
                row.update({f"stalls.{k}": v for k, v in it.stalls.json.items()})
                iters.append(row)
        return {
            "summary": pd.DataFrame([self.summary()]),
            "units": pd.DataFrame(units),
            "loops": pd.DataFrame(loops),
            "iterations": pd.DataFrame(iters),
        }

    # -- plots ----------------------------------------------------------------------------
    def plot_overlap(self, loop: Optional[str] = None, ax=None):
        """Per kept iteration of a loop: DMA in flight and compute busy time (bars), compute
        engine time waiting on DMA (line) and the overlap fraction (right axis). Returns the matplotlib Axes."""
        plt = _pyplot()
        l = self.loop(loop)
        if ax is None:
            _, ax = plt.subplots(figsize=(9, 4))
        xs = [it.index for it in l.iterations]
        width = 0.4
        ax.bar([x - width / 2 for x in xs], [it.dma_in_flight_ns for it in l.iterations], width,
               label="DMA in flight (ns)")
        ax.bar([x + width / 2 for x in xs], [it.compute_busy_ns for it in l.iterations], width,
               label="compute busy (ns)")
        ax.plot(xs, [it.compute_dma_wait_ns for it in l.iterations], color="black", marker=".",
                label="compute waiting on DMA (ns)")
        ax.set_xlabel(f"iteration of {l.name}")
        ax.set_ylabel("ns")
        ax2 = ax.twinx()
        ax2.plot(xs, [it.overlap for it in l.iterations], color="tab:red", marker="o", label="overlap")
        ax2.set_ylim(0, 1.05)
        ax2.set_ylabel("DMA overlapped (fraction)")
        lines = ax.get_legend_handles_labels()
        lines2 = ax2.get_legend_handles_labels()
        ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], loc="upper right", fontsize="small")
        ax.set_title(f"{self.kernel}: loop {l.name}, II {l.ii_ns:.1f} ns (bound {l.ii_bound_ns:.1f} ns)")
        return ax

    def plot_timeline(self, ax=None):
        """The simulator's timeline (the first, four consecutive middle and the last iteration of
        the busiest loop):
        one track per engine and DMA queue, one bar per instance. Needs a result simulated
        with `timeline=True` (the default of tandem.simulate). Returns the Axes."""
        plt = _pyplot()
        if not self.timeline or not self.timeline.get("spans"):
            raise ValueError("this result has no timeline: simulate with timeline=True")
        spans = self.timeline["spans"]
        units = []
        for s in spans:
            if s["unit"] not in units:
                units.append(s["unit"])
        if ax is None:
            _, ax = plt.subplots(figsize=(10, 0.5 + 0.45 * len(units)))
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        iterations = sorted({s.get("iteration") for s in spans}, key=lambda x: (x is None, x))
        for s in spans:
            row = units.index(s["unit"])
            color = colors[iterations.index(s.get("iteration")) % len(colors)]
            ax.broken_barh([(s["start_ns"], max(s["end_ns"] - s["start_ns"], 1e-3))], (row - 0.4, 0.8),
                           facecolors=color, edgecolor="black", linewidth=0.3)
        ax.set_yticks(range(len(units)))
        ax.set_yticklabels(units)
        ax.invert_yaxis()
        ax.set_xlabel("ns")
        ax.set_title(f"{self.kernel}: timeline of loop {self.timeline.get('loop')}")
        return ax


class ABResult:
    """Two simulations of one kernel (`tandem ab`, the `tandem.ab/1` document): `a` and `b`
    (SimResult, with `a_pipeline`, `b_pipeline`, `a_model`, `b_model`), `rows` (the document's `diff`: name, a, b,
    delta, ratio) and `ratios`, B / A by row name (`"total_ns"`, `"loop %k ii_ns"`,
    `"pe busy_ns"`; None where A is 0)."""

    def __init__(self, doc: dict, traced=None):
        if doc.get("schema") != "tandem.ab/1":
            raise ValueError(f"not a tandem.ab/1 document (schema {doc.get('schema')!r})")
        self.json = doc
        self.a_pipeline = doc["a"]["pipeline"]
        self.b_pipeline = doc["b"]["pipeline"]
        self.a_model = doc["a"]["model"]
        self.b_model = doc["b"]["model"]
        self.a = SimResult(doc["a"]["result"], traced, self.a_pipeline, self.a_model)
        self.b = SimResult(doc["b"]["result"], traced, self.b_pipeline, self.b_model)
        self.rows = list(doc.get("diff", []))
        self.ratios = {row["name"]: row["ratio"] for row in self.rows}

    def ratio(self, metric: str, loop: Optional[str] = None):
        """B / A of a kernel figure, or of a loop's (`ratio("ii_ns", loop="k")`)."""
        if loop is not None:
            metric = f"loop {loop if loop.startswith('%') else '%' + loop} {metric}"
        return self.ratios[metric]

    def to_pandas(self):
        return _pandas().DataFrame(self.rows)

    def __repr__(self):
        def side(pipeline, model):
            return pipeline if self.a_model == self.b_model else f"{pipeline} on {model}"
        return (f"ABResult(A {side(self.a_pipeline, self.a_model)}: {self.a.total_ns} ns, "
                f"B {side(self.b_pipeline, self.b_model)}: {self.b.total_ns} ns)")


class SweepResult:
    """One simulation per point: `points` (what varied), `results` (SimResult or the error)
    and `rows` (a flat table: the point, the kernel figures, each loop's II and overlap)."""

    def __init__(self, points, results):
        self.points = points
        self.results = results
        self.rows = []
        for point, r in zip(points, results):
            row = dict(point)
            if isinstance(r, SimResult):
                row.update({k: getattr(r, k) for k in ("total_ns", "total_cycles", "lower_bound_ns", "races")})
                for l in r.loops:
                    row[f"{l.name} ii_ns"] = l.ii_ns
                    row[f"{l.name} ii_bound_ns"] = l.ii_bound_ns
                    row[f"{l.name} overlap"] = l.overlap
                row["error"] = None
            else:
                row["error"] = str(r)
            self.rows.append(row)

    def to_pandas(self):
        return _pandas().DataFrame(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __len__(self):
        return len(self.rows)

    def __repr__(self):
        return f"SweepResult({len(self.rows)} points)"
