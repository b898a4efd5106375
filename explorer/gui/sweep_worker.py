"""Sweeps off the GUI thread: a QObject on a QThread iterates core.sweep.iter_points with a cancel flag.

The pattern of worker.RunWorker (superqt's thread_worker): the generator does the work and yields often;
the worker forwards what it yields as queued signals and the core checks the cancel flag after every timed
call, so Stop takes effect within one call. Nothing is signalled per sample: progress, live-path state and
finished rows are coalesced and emitted at most every `emit_interval_s` (and at every point start and at the
end). Every finished row goes to the CsvSink *in the worker thread before it is signalled*, so the CSV on
disk holds every finished row even when the window closes or the GUI crashes with signals still queued.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass

from PySide6.QtCore import Qt, QThread, Signal, Slot

from explorer.core.errors import ExplorerError
from explorer.gui import measure
from explorer.gui.worker import MeasureWorker, ThreadController

_live_threads: set = set()  # every QThread this module started and has not yet joined


def live_threads() -> int:
    """QThreads started here that are still running or not yet joined (tests assert 0 at teardown)."""
    return len(_live_threads)


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


class SweepWorker(MeasureWorker):
    """Runs a list of SweepPoints (a planned sweep or a batch)."""

    sweep_started = Signal(object)  # core.sweep.SweepStarted
    point_started = Signal(object, object)  # SweepPoint, SweepProgress
    rows_ready = Signal(list)  # [SweepRow], already on disk
    progress = Signal(object)  # SweepProgress (done/total, eta_s)
    live = Signal(object)  # LiveState

    def __init__(self, points, opts, csv_path=None, emit_interval_s: float = 0.05, ctx=None):
        super().__init__()
        self.points, self.opts, self.csv_path, self.ctx = points, opts, csv_path, ctx
        self.emit_interval_s = emit_interval_s
        self.rows_written = 0

    @Slot()
    def run(self) -> None:
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
        cancelled = False

        def flush(force: bool = False) -> None:
            now = time.monotonic()
            if not force and now - state["t"] < self.emit_interval_s:
                return
            state["t"] = now
            if pending:
                batch = list(pending)
                pending.clear()
                self.rows_ready.emit(batch)
            if state["progress"] is not None:
                self.progress.emit(state["progress"])
                state["progress"] = None
            if state["live_dirty"] and state["live"] is not None:
                self.live.emit(state["live"])
                state["live_dirty"] = False

        try:
            sink = CsvSink(self.csv_path)
            sink.flush()  # the header is on disk before the first point runs
            for ev in measure.events("points", self.points, self.opts, cancel=self._cancel, ctx=self.ctx,
                                     keep_details=False, allocator=self.opts.allocator):
                measure.set_timing(False)  # the child is between bursts now
                if isinstance(ev, Samples):
                    lv = state["live"]
                    if lv is not None:
                        lv.n, lv.elapsed_s, lv.budget_s = ev.n, ev.elapsed_s, ev.budget_s
                        state["live_dirty"] = True
                    if measure.IN_CHILD:  # a burst boundary: the child waits until the window has drawn
                        flush(force=True)
                        self.at_boundary()
                        continue
                elif isinstance(ev, PathStarted):
                    state["live"] = LiveState(state["point"], state["label"], ev.path, ev.index, ev.total, 0, 0.0,
                                              0.0)
                    state["live_dirty"] = True
                elif isinstance(ev, PathFinished):
                    sink.add(ev.result)  # on disk before the GUI hears of it
                    self.rows_written += 1
                    pending.append(SweepRow(state["point"], ev.result, None))
                elif isinstance(ev, PointStarted):
                    state["point"], state["label"] = ev.point.index, _point_label(ev.point)
                    state["progress"] = ev.progress
                    flush(force=True)  # the previous point's rows reach the charts before this one runs
                    self.point_started.emit(ev.point, ev.progress)
                elif isinstance(ev, PointSkipped):
                    sink.add(ev.row)
                    self.rows_written += 1
                    pending.append(SweepRow(ev.point.index, ev.result, ev.row))
                    state["progress"] = ev.progress
                elif isinstance(ev, PointFinished):
                    state["progress"] = ev.progress
                elif isinstance(ev, SweepStarted):
                    self.sweep_started.emit(ev)
                elif isinstance(ev, SweepFinished):
                    state["progress"] = ev.progress
                    cancelled = ev.cancelled
                flush()
            flush(force=True)
        except ExplorerError as e:
            flush(force=True)
            self.failed.emit(str(e), getattr(e, "field", None) or "")
        except Exception as e:  # noqa: BLE001 - shown to the user, never crashes the app
            flush(force=True)
            traceback.print_exc()
            self.failed.emit(f"{type(e).__name__}: {e}", "")
        finally:
            measure.set_timing(False)
            self.done.emit(cancelled or self._cancel.is_set())


def _point_label(point) -> str:
    if point.label:
        return point.label
    if point.spec is not None:
        return point.spec.name or point.spec.desc
    return point.text


class SweepController(ThreadController):
    """One sweep at a time: re-emits the SweepWorker's signals in the GUI thread."""

    sweep_started = Signal(object)
    point_started = Signal(object, object)
    rows_ready = Signal(list)
    progress = Signal(object)
    live = Signal(object)
    SHUTDOWN_MS = 10_000
    registries = (_live_threads,)

    def start(self, points, opts, csv_path=None, ctx=None) -> bool:
        if self.running:
            return False
        worker = SweepWorker(points, opts, csv_path, ctx=ctx)
        # quit() is thread-safe: call it directly from the worker thread. A queued call would wait for the GUI
        # thread, which may be blocked in shutdown(): a deadlock until the timeout.
        worker.done.connect(lambda _cancelled: QThread.currentThread().quit(), Qt.DirectConnection)
        return self._launch(worker, "mkldnn-explorer-sweep", {
            worker.sweep_started: self._on_sweep_started,
            worker.point_started: self._on_point_started,
            worker.rows_ready: self._on_rows,
            worker.progress: self._on_progress,
            worker.live: self._on_live,
        })

    # ---- slots in the GUI thread ------------------------------------------------------------------
    @Slot(object)
    def _on_sweep_started(self, ev):
        self.sweep_started.emit(ev)

    @Slot(object, object)
    def _on_point_started(self, point, progress):
        self.point_started.emit(point, progress)

    @Slot(list)
    def _on_rows(self, rows):
        self.rows_ready.emit(rows)

    @Slot(object)
    def _on_progress(self, p):
        self.progress.emit(p)

    @Slot(object)
    def _on_live(self, s):
        self.live.emit(s)
