"""The session model: everything a window (or a CLI command) has measured and chosen, in one Qt-free object.

    s = SessionState()
    unsubscribe = s.subscribe("results", fn)   fn(aspect, change) after each change of that aspect
    s.apply(event)                             the ONE way a job's events change the state
    s.save(path) / SessionState.load(path)     the whole state as a session file (explorer.core.session.store)

Aspects (ASPECTS) and the change each passes: spec, options, results (the Run rows: ("reset", rows) or
("added", Result)), sweep (the last sweep's setup, points and rows, in one
SweepData), model (the whole-model plan, live and final, in one ModelState), peaks (ONE Peaks object: machine.Peak by threads), baseline (the
summary's baseline path), job (the running job and its progress). The sweep passes ("begun" | "restored",
SweepState), ("added", [(point index, row)]), ("missing", (point index, reason)) for a cluster sweep's
point that came back without rows, or ("cluster", address) when where it runs (or its refusal) changes; the model ("inventory", Inventory) when a plan
starts, ("layer", (layer index, Result)) per finished path of a layer, ("mode", ModeResult) per finished mode,
("report", ModelReport | None) for the final report (a run's or a restored session's; None clears); the job ("started" | "path_started" | "samples" | "retry" |
"progress" | "finished", ...). `results` is one list object for the whole session (changed in place). Callbacks run synchronously in the thread
that called apply (the GUI's session_bridge turns them into Qt signals); a failing callback never stops the
others, nor the change.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from explorer.core.jobs.events import (
    PathFinished,
    PathRetry,
    PathStarted,
    PointFinished,
    PointSkipped,
    PointStarted,
    Samples,
    SweepFinished,
    SweepProgress,
    SweepStarted,
)
from explorer.core.model.report import ModeFinished, ModelFinished, ModelStarted
from explorer.core.report.results import Result
from explorer.core.report.sweep_data import SweepData

ASPECTS = ("spec", "options", "results", "sweep", "model", "peaks", "baseline", "job")
# What a run's rows are measured with, as saved with them and given back to the Run panel on open.
RUN_OPTION_KEYS = ("paths", "threads", "budget_ms", "trace", "allocator", "isa")


# ---- events the core's jobs do not yield themselves ---------------------------------------------------------
@dataclass
class RunStarted:
    spec: object  # ConvSpec
    options: dict  # paths (list), threads, budget_ms, trace: what the rows are measured with


@dataclass
class RunFinished:
    cancelled: bool = False
    error: str = ""


@dataclass
class SweepBegun:
    """A sweep (or batch) about to start: its points fix the chart axes before any row arrives."""

    points: list
    setup: dict  # mode, varies, batch, base, paths, threads, budget_ms, trace
    mode: str | None = None  # line | grid | batch (None: from the points)
    paths: tuple = ()
    geometric: bool = False


@dataclass
class SweepRows:
    """Finished sweep rows, coalesced: (point index, Result or CSV row dict of a point without a spec)."""

    items: list


@dataclass
class SweepMissing:
    """A point of a cluster sweep whose task failed for good (core.fleet.cluster.ClusterMissing): no rows."""

    index: int
    reason: str


@dataclass
class ModelDone:
    """A whole-model plan's report (core.model.report.ModelReport)."""

    report: object


@dataclass
class ModelLayerDone:
    """One path of one layer of a whole-model plan measured: a row of the per-layer table filled."""

    index: int  # the layer's index in the plan's Inventory.layers
    result: object  # core.report.results.Result


@dataclass
class RowVerified:
    """A row's fresh-script check came back (core.process.verify.Verified): its verify_* figures set."""

    result: object  # core.report.results.Result, one of the session's rows
    verified: object  # core.process.verify.Verified


@dataclass
class PeakMeasured:
    peak: object  # core.measure.machine.Peak


# ---- the pieces ----------------------------------------------------------------------------------------------
class Peaks:
    """The machine's matmul peaks, one machine.Peak per thread count: every view reads % of peak from here."""

    def __init__(self):
        self.by_threads: dict[int, object] = {}

    def __contains__(self, threads) -> bool:
        return threads in self.by_threads

    def __len__(self) -> int:
        return len(self.by_threads)

    def at(self, threads):
        """The machine.Peak at this thread count, or None."""
        return self.by_threads.get(threads)

    def gflops(self, dtype: str, threads) -> float | None:
        """The peak a row of this dtype and thread count is judged against (bf16's when measured)."""
        p = self.by_threads.get(threads)
        if p is None:
            return None
        return p.bf16_gflops if (dtype == "bf16" and p.bf16_gflops) else p.fp32_gflops

    def pct(self, r) -> float | None:
        """% of peak of a Result: against the peak at its threads, else what the measuring process stored."""
        if not r.gflops:
            return None
        peak = self.gflops(r.spec.dtype, r.threads)
        return 100.0 * r.gflops / peak if peak else r.pct_peak

    def table(self) -> dict:
        """threads -> (fp32, bf16) GFLOP/s."""
        return {t: (p.fp32_gflops, p.bf16_gflops) for t, p in self.by_threads.items()}


class PathTimes:
    """What a path costs beyond its budget (warm-up, accuracy check, traced call, start-up), learned from the
    paths finished in this session: the run's ETA and the sweep preview read it. About 0.3 s before any."""

    def __init__(self, overhead_s: float = 0.3):
        self.overhead_s = overhead_s
        self.n = 0

    def note(self, took_s: float, budget_s: float) -> None:
        extra = max(0.0, took_s - budget_s)
        n = min(self.n, 19)
        self.overhead_s = (self.overhead_s * n + extra) / (n + 1)
        self.n += 1

    def per_path_s(self, budget_s: float) -> float:
        return budget_s + self.overhead_s


@dataclass
class Job:
    """The running job: what it is, and how far it got (the status bar's progress and ETA)."""

    kind: str  # run | sweep | model | peak
    started_at: float = field(default_factory=time.monotonic)
    index: int = 0  # paths finished (run)
    total: int = 0
    elapsed: float = 0.0  # of the current path's budget
    budget: float = 0.0  # seconds per path
    path: str = ""  # the path being timed ("" between paths)
    path_t0: float | None = None
    path_times: list = field(default_factory=list)  # wall seconds of each finished path
    sweep: SweepProgress | None = None
    eta_s: float | None = None  # the sweep's own estimate, when it gives one
    eta_at: float = 0.0

    def run_eta_s(self, overhead_s: float, now: float | None = None) -> float:
        """Seconds left in a run: the mean wall time of the paths so far (else budget + overhead) per path left."""
        now = time.monotonic() if now is None else now
        per = sum(self.path_times) / len(self.path_times) if self.path_times else self.budget + overhead_s
        cur = (now - self.path_t0) if self.path_t0 is not None else 0.0
        return max(0.0, (max(self.total, 1) - self.index) * per - min(cur, per))

    def fraction(self) -> float:
        total = max(self.total, 1)
        cur = min(1.0, self.elapsed / self.budget) if self.budget else 0.0
        return (self.index + cur) / total


class SweepState:
    """The last sweep or batch: its setup, its points and its rows, held once. `data` (the SweepData the charts
    draw) is one object for the whole session: a new sweep re-configures it, its baselines stay."""

    def __init__(self):
        self.setup: dict = {}
        self.points: list = []
        self.items: list = []  # (point index, Result | CSV row dict), in arrival order
        self.data = SweepData()
        # Where the next sweep is measured: a Dask scheduler's address ("": this machine), and why the last try
        # to reach it was refused ("" when it was not); the setup of a sweep run there keeps its address.
        self.cluster = ""
        self.cluster_error = ""
        self.missing: list = []  # (point index, reason) of a cluster sweep's points that came back without rows
        self.before: dict | None = None  # the sweep the current one replaced (to_store()), until it has rows

    def rows(self) -> list:
        return [item for _, item in self.items]

    @property
    def mode(self) -> str:
        return self.setup.get("mode") or ("batch" if any(not p.values for p in self.points) else "line")

    @property
    def varies(self) -> list[str]:
        return [v for v in (self.setup.get("varies") or "").split(";") if v]

    @property
    def geometric(self) -> bool:
        return any(":x" in v.replace(" ", "") or "divisors" in v for v in self.varies)

    def paths(self) -> list[str]:
        """The setup's paths, then any other path a row names."""
        out = [p for p in (self.setup.get("paths") or "").split(",") if p]
        for _, item in self.items:
            p = item.get("path") if isinstance(item, dict) else item.path
            if p and p not in out:
                out.append(p)
        return out

    def begin(self, points, setup: dict, mode: str | None = None, paths=(), geometric: bool = False) -> None:
        self.before = self.to_store()  # the sweep this one replaces: back_to_last() restores it
        self.setup, self.points, self.items, self.missing = dict(setup), list(points), [], []
        self.data.configure(self.points, mode, paths=paths, geometric=geometric)

    def replace(self, state: dict | None) -> None:
        """A saved sweep ({setup, points, items}) as the last sweep, the chart data rebuilt from its rows."""
        state = state or {}
        self.setup = dict(state.get("setup") or {})
        self.points = list(state.get("points") or [])
        self.items = list(state.get("items") or [])
        if self.points:
            self.data.configure(self.points, self.mode, paths=self.paths(), geometric=self.geometric)
        else:
            self.data.clear()
        for idx, item in self.items:
            self.data.add(idx, item)

    def add(self, items) -> None:
        for idx, item in items:
            self.items.append((idx, item))
            self.data.add(idx, item)

    def back_to_last(self) -> str:
        """A sweep that failed before any row gives way to the one it replaced: a failure never wipes the last
        finished rows. The sentence that says so ('' when nothing was given back)."""
        if self.items or not self.before:
            return ""
        self.replace(self.before)
        self.before = None
        return f" The charts still show the last sweep ({len(self.items)} rows)."

    def to_store(self) -> dict | None:
        if not self.points and not self.items:
            return None
        return {"setup": dict(self.setup), "points": list(self.points), "items": list(self.items)}


class ModelState:
    """The whole-model plan: its inventory, each layer's results by path, the modes, and the final report. While
    a plan runs the first three fill as its events arrive; once the report is in (or a session is reopened)
    they are the report's (so the layer indices are those of report.inventory.layers)."""

    def __init__(self):
        self.inventory = None  # core.model.inventory.Inventory
        self.layer_results: dict[int, dict] = {}  # layer index -> {path: Result}
        self.modes: list = []  # ModeResult, in arrival order
        self.report = None  # core.model.report.ModelReport, once the plan ended
        # The Model tab's fields the plan was started from ({model, input, dtype, modes}; None: not known)
        self.inputs: dict | None = None

    def begin(self, inventory) -> None:
        self.inventory, self.layer_results, self.modes, self.report = inventory, {}, [], None

    def add_layer(self, index: int, result) -> None:
        self.layer_results.setdefault(index, {})[result.path] = result

    def add_mode(self, res) -> None:
        self.modes.append(res)

    def set_report(self, report) -> None:
        """The final report (None: no plan at all); the live parts become the report's."""
        self.report = report
        if report is None:
            self.inventory, self.layer_results, self.modes, self.inputs = None, {}, [], None
            return
        inv = report.inventory
        index = {id(lay): i for i, lay in enumerate(inv.layers)}
        self.inventory = inv
        self.layer_results = {index[id(s.layer)]: dict(s.results) for s in report.layers if id(s.layer) in index}
        self.modes = list(report.modes)


# ---- the model ---------------------------------------------------------------------------------------------------
class SessionState:
    """One session's state; see the module docstring."""

    def __init__(self, spec=None, options: dict | None = None):
        self.spec = spec
        self.options: dict = dict(options or {})
        self.results: list[Result] = []
        self.run_spec = None  # the spec the Run rows were measured with
        self.run_options: dict | None = None  # the options they were measured with
        # Where the Run rows came from: "run" (measured here: their tensors' layouts are held) or "file" (a
        # reopened session: layouts are read from live tensors and never stored, so the rows have none).
        self.results_from = "run"
        self.sweep = SweepState()
        self.model = ModelState()
        self.peaks = Peaks()
        self.baseline: str = ""
        # The window's own part of a session: the selected tab's name, and Compare's kept baselines
        # ([{label, rows}]) and the pair it compares ([A, B]); the window fills it before saving, reads it on open.
        self.window: dict = {}
        self.job: Job | None = None
        self.path_times = PathTimes()
        self._subs: dict[str, list] = {a: [] for a in ASPECTS}
        self.errors: list[str] = []  # callbacks that raised (text), newest last

    # ---- observers ------------------------------------------------------------------------------------
    def subscribe(self, aspect: str, fn):
        """Call fn(aspect, change) after every change of `aspect` ("*" for all); returns an unsubscribe function."""
        aspects = ASPECTS if aspect == "*" else (aspect,)
        for a in aspects:
            if a not in self._subs:
                raise ValueError(f"unknown session aspect {a!r}; known: {', '.join(ASPECTS)}")
            self._subs[a].append(fn)

        def unsubscribe():
            for a in aspects:
                if fn in self._subs[a]:
                    self._subs[a].remove(fn)

        return unsubscribe

    def notify(self, aspect: str, change=None) -> None:
        for fn in list(self._subs[aspect]):
            try:
                fn(aspect, change)
            except Exception as e:  # noqa: BLE001 - one view's bug must not stop the others, nor the job
                self.errors.append(f"{aspect}: {type(e).__name__}: {e}")

    # ---- plain setters ----------------------------------------------------------------------------------
    def set_spec(self, spec) -> None:
        self.spec = spec
        self.notify("spec", spec)

    def set_options(self, options: dict) -> None:
        self.options = dict(options or {})
        self.notify("options", self.options)

    def set_baseline(self, path: str) -> None:
        self.baseline = path or ""
        self.notify("baseline", self.baseline)

    def set_results(self, results, spec=None, options: dict | None = None) -> None:
        self.results[:] = list(results)  # the same list object for the whole session: views may hold it
        self.run_spec = spec
        self.run_options = dict(options) if options is not None else None
        self.notify("results", ("reset", self.results))

    def layouts_missing(self, r) -> str:
        """Why row r shows no tensor layouts ('' when it has them or did not run): a reopened session's rows
        carry none."""
        if r is None or r.status != "ok" or r.layouts:
            return ""
        if self.results_from == "file":
            return (f"Layouts are not stored in session files: {r.path}'s tensors were not kept. Run it again "
                    "(Run) to see its input, weight and output layouts; its trace and times are shown as saved.")
        return ""  # measured here: the view's own placeholder says what to do

    def set_peak(self, peak) -> None:
        if peak is None:
            return
        self.peaks.by_threads[int(peak.threads)] = peak
        self.notify("peaks", peak)

    @property
    def model_report(self):
        """The last whole-model plan's final ModelReport (None while one runs, or before any)."""
        return self.model.report

    def set_model_report(self, report) -> None:
        self.model.set_report(report)
        self.notify("model", ("report", report))

    def set_sweep(self, state: dict | None) -> None:
        """A saved sweep ({setup, points, items}) as the last sweep (the charts re-draw from it)."""
        self.sweep.replace(state)
        self.notify("sweep", ("restored", self.sweep))

    def set_cluster(self, address: str) -> None:
        """Where the next sweep runs ("" or blanks: this machine); a new address forgets the last refusal."""
        address = (address or "").strip()
        if address != self.sweep.cluster:
            self.sweep.cluster, self.sweep.cluster_error = address, ""
            self.notify("sweep", ("cluster", address))

    def refuse_cluster(self, message: str) -> None:
        """The sweep's cluster could not be used (nobody answered, no measuring worker): one sentence, kept
        until the address changes or a sweep reaches it ("" clears it)."""
        if message != self.sweep.cluster_error:
            self.sweep.cluster_error = message
            self.notify("sweep", ("cluster", self.sweep.cluster))

    def all_results(self) -> list:
        """Every row measured in this session: the Run rows, then the sweep's."""
        return list(self.results) + self.sweep.rows()

    def peak_threads(self) -> int | None:
        """The thread count the views judge against: the Run rows' (most common), else the options'."""
        counts: dict = {}
        for r in self.results:
            if r.threads:
                counts[r.threads] = counts.get(r.threads, 0) + 1
        if counts:
            return max(counts, key=counts.get)
        return self.options.get("threads") or None

    # ---- jobs --------------------------------------------------------------------------------------------
    def begin(self, kind: str, **kw) -> Job:
        self.job = Job(kind, **kw)
        self.notify("job", ("started", self.job))
        return self.job

    def end(self, cancelled: bool = False) -> None:
        job, self.job = self.job, None
        self.notify("job", ("finished", job, cancelled))

    def apply(self, ev) -> None:
        """Apply one job event (a run's, a sweep's, a model's or a peak's): the ONE place state changes."""
        job = self.job
        if isinstance(ev, RunStarted):
            self.run_spec = ev.spec
            self.run_options = dict(ev.options)
            self.results_from = "run"
            self.results.clear()
            self.notify("results", ("reset", self.results))
            self.begin("run", total=len(ev.options.get("paths") or ()), budget=(ev.options.get("budget_ms") or 0) / 1e3)
        elif isinstance(ev, PathStarted):
            if job is not None:
                job.index, job.total, job.elapsed, job.path = ev.index, ev.total, 0.0, ev.path
                job.path_t0 = time.monotonic()
                self.notify("job", ("path_started", ev))
        elif isinstance(ev, Samples):
            if job is not None:
                job.elapsed, job.budget, job.path = ev.elapsed_s, ev.budget_s, ev.path
            self.notify("job", ("samples", ev))
        elif isinstance(ev, PathRetry):
            self.notify("job", ("retry", ev))
        elif isinstance(ev, PathFinished):
            self.results.append(ev.result)
            if job is not None and job.kind == "run":
                job.index += 1
                job.elapsed, job.path = 0.0, ""
                if job.path_t0 is not None:
                    took = time.monotonic() - job.path_t0
                    job.path_times.append(took)
                    self.path_times.note(took, job.budget or 0.0)
                    job.path_t0 = None
            self.notify("results", ("added", ev.result))
        elif isinstance(ev, RowVerified):
            v, r = ev.verified, ev.result
            r.verify_median_ms, r.verify_ratio, r.verify_script, r.verify_note = v.median_ms, v.ratio, v.script, v.note
            self.notify("results", ("verified", r))
        elif isinstance(ev, RunFinished):
            if job is not None and job.kind == "run":
                self.end(ev.cancelled)
        elif isinstance(ev, SweepBegun):
            self.sweep.begin(ev.points, ev.setup, ev.mode, ev.paths, ev.geometric)
            self.notify("sweep", ("begun", self.sweep))
            self.begin("sweep", total=len(ev.points), budget=(ev.setup.get("budget_ms") or 0) / 1e3)
        elif isinstance(ev, SweepStarted):
            self.notify("job", ("sweep_started", ev))
        elif isinstance(ev, (PointStarted, SweepProgress)):
            p = ev.progress if isinstance(ev, PointStarted) else ev
            if job is not None:
                job.sweep, job.index, job.total = p, p.done, p.total
                job.eta_s, job.eta_at = p.eta_s, time.monotonic()
            self.notify("job", ("progress", p))
        elif isinstance(ev, (SweepRows, PointSkipped, PointFinished)):
            if isinstance(ev, SweepRows):
                items = list(ev.items)
            elif isinstance(ev, PointSkipped):
                items = [(ev.point.index, ev.result if ev.result is not None else ev.row)]
            else:
                items = [(ev.point.index, r) for r in ev.results]
            self.sweep.add(items)
            self.notify("sweep", ("added", items))
        elif isinstance(ev, SweepMissing):
            self.sweep.missing.append((ev.index, ev.reason))
            self.notify("sweep", ("missing", (ev.index, ev.reason)))
        elif isinstance(ev, SweepFinished):
            if job is not None and job.kind == "sweep":
                took = time.monotonic() - job.started_at
                runs = sum(1 for r in self.sweep.rows()
                           if getattr(r, "path", "") and getattr(r, "status", "") != "skipped")
                if runs:
                    self.path_times.note(took / runs, job.budget)
                self.end(ev.cancelled)
        elif isinstance(ev, ModelStarted):
            self.model.begin(ev.inventory)
            self.notify("model", ("inventory", ev.inventory))
        elif isinstance(ev, ModelLayerDone):
            self.model.add_layer(ev.index, ev.result)
            self.notify("model", ("layer", (ev.index, ev.result)))
        elif isinstance(ev, ModeFinished):
            self.model.add_mode(ev.result)
            self.notify("model", ("mode", ev.result))
        elif isinstance(ev, (ModelDone, ModelFinished)):
            self.set_model_report(ev.report)
        elif isinstance(ev, PeakMeasured):
            self.set_peak(ev.peak)
        else:
            raise TypeError(f"the session model does not apply {type(ev).__name__} events")

    # ---- files ------------------------------------------------------------------------------------------
    def save(self, path) -> None:
        """The whole state as a session file (atomic)."""
        from explorer.core.session.store import save_session

        spec = (self.run_spec if self.results else None) or self.spec or self.run_spec
        options = dict(self.run_options) if (self.run_options and self.results) else dict(self.options)
        options["baseline"] = self.baseline
        save_session(path, spec, options, self.results, self.sweep.to_store(), model=self.model_report,
                     model_inputs=self.model.inputs, window=self.window)

    def restore(self, stored) -> None:
        """Take a loaded store.Session's content (every aspect is notified)."""
        o = dict(stored.options)
        self.spec = stored.spec
        self.options = {k: o.get(k) for k in RUN_OPTION_KEYS if k in o}
        self.window = dict(getattr(stored, "window", None) or {})
        self.notify("spec", self.spec)
        self.notify("options", self.options)
        self.set_baseline(o.get("baseline") or "")
        run_opts = {k: o.get(k) for k in RUN_OPTION_KEYS if k in o} if stored.results else None
        self.set_sweep(stored.sweep)
        self.results_from = "file"
        self.set_results(stored.results, stored.results[0].spec if stored.results else stored.spec, run_opts)
        self.model.set_report(getattr(stored, "model", None))
        self.model.inputs = getattr(stored, "model_inputs", None) if self.model.report is not None else None
        self.notify("model", ("report", self.model.report))

    @classmethod
    def load(cls, path) -> "SessionState":
        from explorer.core.session.store import load_session

        s = cls()
        s.restore(load_session(path))
        return s
