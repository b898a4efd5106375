"""Sweeps and batches off the GUI thread: points_job maps core.sweep's events to the SweepController's signals
(cluster_points_job: the same sweep on a Dask cluster, core.fleet's events).

It runs in worker.JobWorker like every job (see explorer.gui.jobs.worker): the core checks the cancel flag after
every timed call, so Stop takes effect within one call. Nothing is signalled per sample: progress, live-path
state and finished rows are coalesced and emitted at most every `emit_interval_s` (and at every point start
and at the end). Every finished row goes to the CsvSink *in the worker thread before it is signalled*, so the
CSV on disk holds every finished row even when the window closes or the GUI crashes with signals still queued.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from PySide6.QtCore import Signal

from explorer.gui.jobs import measure
from explorer.gui.jobs.worker import BOUNDARY, Job, JobController, JobWorker
from explorer.gui.jobs.worker import live_threads as live_threads  # the one registry of job threads


@dataclass
class SweepRow:
    """One finished row of a sweep: the point it belongs to, its Result (None for a batch line that did
    not parse) and its CSV row (always set for skipped rows; None for results, use result.row())."""

    point_index: int
    result: object = None  # explorer.core.report.results.Result
    row: dict | None = None


@dataclass
class LiveState:
    """What the worker is doing now (coalesced, for the progress bar)."""

    point_index: int
    label: str
    path: str
    path_index: int
    path_total: int
    n: int  # calls timed so far on this path
    elapsed_s: float
    budget_s: float


def points_job(points, opts, csv_path=None, emit_interval_s: float = 0.05, ctx=None) -> Job:
    """A list of SweepPoints (a planned sweep or a batch): sweep_started, point_started, rows_ready,
    progress and live."""

    def job(w: JobWorker):
        from explorer.core.jobs.events import (
            PathFinished,
            PathStarted,
            PointFinished,
            PointSkipped,
            PointStarted,
            Samples,
            SweepFinished,
            SweepStarted,
        )
        from explorer.core.report.results import CsvSink

        pending: list[SweepRow] = []
        state = {"t": 0.0, "progress": None, "live": None, "live_dirty": False, "point": -1, "label": ""}

        def flush(force: bool = False):
            now = time.monotonic()
            if not force and now - state["t"] < emit_interval_s:
                return
            state["t"] = now
            if pending:
                batch = list(pending)
                pending.clear()
                yield "rows_ready", (batch,)
            if state["progress"] is not None:
                progress, state["progress"] = state["progress"], None
                yield "progress", (progress,)
            if state["live_dirty"] and state["live"] is not None:
                state["live_dirty"] = False
                yield "live", (state["live"],)

        try:
            sink = CsvSink(csv_path)
            sink.flush()  # the header is on disk before the first point runs
            if csv_path:
                yield "csv_ready", (str(csv_path),)
            for ev in w.events("points", points, opts, ctx=ctx, keep_details=False, allocator=opts.allocator, isa=opts.isa):
                if isinstance(ev, Samples):
                    lv = state["live"]
                    if lv is not None:
                        lv.n, lv.elapsed_s, lv.budget_s = ev.n, ev.elapsed_s, ev.budget_s
                        state["live_dirty"] = True
                    if measure.IN_CHILD:  # a burst boundary: the child waits until the window has drawn
                        yield from flush(force=True)
                        yield BOUNDARY
                        continue
                elif isinstance(ev, PathStarted):
                    state["live"] = LiveState(state["point"], state["label"], ev.path, ev.index, ev.total, 0, 0.0,
                                              0.0)
                    state["live_dirty"] = True
                elif isinstance(ev, PathFinished):
                    sink.add(ev.result)  # on disk before the GUI hears of it
                    pending.append(SweepRow(state["point"], ev.result, None))
                elif isinstance(ev, PointStarted):
                    state["point"], state["label"] = ev.point.index, _point_label(ev.point)
                    state["progress"] = ev.progress
                    yield from flush(force=True)  # the previous point's rows reach the charts before this one runs
                    yield "point_started", (ev.point, ev.progress)
                elif isinstance(ev, PointSkipped):
                    sink.add(ev.row)
                    pending.append(SweepRow(ev.point.index, ev.result, ev.row))
                    state["progress"] = ev.progress
                elif isinstance(ev, PointFinished):
                    state["progress"] = ev.progress
                elif isinstance(ev, SweepStarted):
                    yield "sweep_started", (ev,)
                elif isinstance(ev, SweepFinished):
                    state["progress"] = ev.progress
                yield from flush()
            yield from flush(force=True)
        except Exception:
            yield from flush(force=True)  # the rows that finished reach the window; then the one error path
            raise

    return job


CONNECT_TIMEOUT_S = 5.0  # how long a sweep waits for a cluster's scheduler to answer before it refuses


def cluster_points_job(points, opts, address: str, csv_path=None) -> Job:
    """The same sweep on a Dask cluster (explorer.core.fleet, as `sweep --cluster`): each runnable point is a
    task, its rows come back as it finishes. cluster_ready(hosts) once the scheduler answered and has measuring
    workers (an InputError before it, field "cluster": nothing ran), then rows_ready, progress and cluster_note
    per finished point; a point whose task failed for good has no rows: point_missing(index, reason).

    No client call holds the job: connecting has CONNECT_TIMEOUT_S, every step of the cluster's events is
    waited for in a helper thread that Stop abandons within a poll (core.fleet.deadline), and closing is
    bounded too. Whatever the client raises reaches the Cluster field as one sentence (core.fleet.reach)."""

    def job(w: JobWorker):
        from explorer.core.errors import ExplorerError
        from explorer.core.fleet.cluster import ClusterMissing, ClusterRows, connect, run_points
        from explorer.core.fleet.deadline import Cancelled, call_within
        from explorer.core.fleet.hosts import CLUSTER_COLUMNS
        from explorer.core.fleet.reach import close_client, lost
        from explorer.core.jobs.events import SweepProgress
        from explorer.core.jobs.sweep import skipped_row
        from explorer.core.report.results import CsvSink

        def stopped():
            return w.cancelled

        try:  # connect has its own deadline; Stop is felt within a poll while it waits (a late client is closed)
            client = call_within(lambda: connect(address, CONNECT_TIMEOUT_S), float("inf"), stopped, late=close_client)
        except Cancelled:  # Stop while the scheduler was being reached: nothing was submitted
            return
        gen = None
        busy = {"gen": False}  # a step abandoned by Stop is still inside the generator: it cannot be closed

        def step():
            busy["gen"] = True
            try:
                return next(gen, None)
            finally:
                busy["gen"] = False

        def next_event():
            """The cluster's next event (None at the end), Stop felt within a poll whatever the client does."""
            try:
                return call_within(step, float("inf"), stopped)
            except (Cancelled, ExplorerError):
                raise
            except Exception as e:  # noqa: BLE001 - "Stream is closed" and the like: one sentence on the field
                raise lost(address, e) from None

        try:
            if w.cancelled:
                return
            gen = run_points(client, [p for p in points if not p.skipped], opts, cancel=stopped)
            started = next_event()  # no worker offers the `measure` resource: InputError, before anything runs
            yield "cluster_ready", (dict(started.hosts),)
            sink = CsvSink(csv_path, CLUSTER_COLUMNS)
            sink.flush()
            if csv_path:
                yield "csv_ready", (str(csv_path),)
            t0, total, n_rows, missing = time.monotonic(), len(points), 0, 0
            skipped = [p for p in points if p.skipped]
            first: list[SweepRow] = []
            for p in skipped:  # nothing to measure: written here, once
                row, res = skipped_row(p, opts.threads or 0)
                row = {**row, "host": "", "worker": ""}
                sink.add(row)
                first.append(SweepRow(p.index, res, row))
            if first:
                yield "rows_ready", (first,)
            while (ev := next_event()) is not None:
                if isinstance(ev, ClusterRows):
                    got = []
                    for cells, r in zip(ev.rows, ev.results()):
                        sink.add(cells)  # on disk before the GUI hears of it
                        got.append(SweepRow(ev.point.index, r if r.path else None, None if r.path else cells))
                    n_rows += len(got)
                    yield "rows_ready", (got,)
                    note = f"{_point_label(ev.point)} on {ev.host}"
                elif isinstance(ev, ClusterMissing):
                    missing += 1
                    yield "point_missing", (ev.point.index, ev.reason)
                    note = f"{_point_label(ev.point)}: missing ({ev.reason})"
                else:
                    continue
                took = time.monotonic() - t0
                eta = took / ev.done * (ev.total - ev.done) if ev.done else None
                yield "progress", (SweepProgress(ev.done + len(skipped), total, len(skipped), n_rows + len(first),
                                                 took, eta),)
                yield "cluster_note", (f"[{ev.done}/{ev.total}] {note}"
                                       + (f" · {missing} missing" if missing and isinstance(ev, ClusterRows) else ""),)
        except Cancelled:  # Stop: the finished rows are on disk and in the window
            return
        finally:
            # Stop or an error: nothing of this sweep stays queued on the cluster (gen.close cancels its tasks),
            # within reach.CLOSE_DEADLINE_S even when the scheduler no longer answers
            closable = gen is not None and not busy["gen"]
            close_client(client, gen.close if closable else None)

    return job


def _point_label(point) -> str:
    if point.label:
        return point.label
    if point.spec is not None:
        return point.spec.name or point.spec.desc
    return point.text


class SweepController(JobController):
    """One sweep or batch at a time (points_job)."""

    sweep_started = Signal(object)  # core.sweep.SweepStarted
    point_started = Signal(object, object)  # SweepPoint, SweepProgress
    rows_ready = Signal(list)  # [SweepRow], already on disk
    progress = Signal(object)  # SweepProgress (done/total, eta_s)
    live = Signal(object)  # LiveState
    cluster_ready = Signal(object)  # {worker address: host label}: the cluster answered, the sweep begins
    cluster_note = Signal(str)  # a point finished (or went missing) on the cluster, one line
    point_missing = Signal(int, str)  # a cluster sweep's point whose task failed for good: index, reason
    csv_ready = Signal(str)  # the CSV's header is on disk: the rows go there (a CSV that cannot open never says so)
    signals = ("sweep_started", "point_started", "rows_ready", "progress", "live", "cluster_ready", "cluster_note",
               "point_missing", "csv_ready")
    SHUTDOWN_MS = 10_000

    def __init__(self, parent=None):
        super().__init__(parent)
        self.csv_written = ""  # the CSV this job's rows are in; "" until it opened
        self.csv_ready.connect(self._on_csv_ready)

    def _on_csv_ready(self, path: str) -> None:
        self.csv_written = path

    def start(self, points, opts, csv_path=None, ctx=None, cluster: str = "") -> bool:
        """A local sweep, or with `cluster` (a Dask scheduler's address) the same sweep on its workers."""
        self.csv_written = ""
        if cluster:
            return self.start_job(cluster_points_job(points, opts, cluster, csv_path), "sweep")
        return self.start_job(points_job(points, opts, csv_path, ctx=ctx), "sweep")
