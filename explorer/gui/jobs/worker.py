"""Torch work off the GUI thread: ONE job worker for every kind of job (run, sweep/batch, model, peak, calls).

The pattern of superqt's thread_worker: a job is a generator function `job(worker)` that does the work in a
QThread and yields often. What it yields is either `(signal_name, args)`, which the worker forwards as one
queued signal and the controller emits as its own signal of that name (no per-kind forwarding code), or
`BOUNDARY`: a burst boundary, where the measuring child waits until the window has drawn what arrived (see
explorer.gui.jobs.measure.paced_boundary), so drawing never lands inside a timed burst.

The kinds of job differ only in the core generator they read (explorer.gui.jobs.measure.events routes run,
points, model and peak to the measuring child process) and in how its events map to signals:
run_job and model_job here, points_job in sweep_worker, call_job for one-off calls.

Everything else is shared and written once:
    start     JobController.start_job(job, name): a JobWorker moved to a new QThread, tracked until joined
    error     one path: an ExplorerError is shown as it is (one sentence and its field); anything else as
              "Type: first line", its full traceback kept on the controller (`last_traceback`) and logged
    cancel    JobController.stop(): a flag the core checks after every timed call (Stop within one call)
    quit      the worker quits its thread's loop from inside it; shutdown() joins the thread with
              STOP_GRACE_MS of grace, then kills the measuring process and delivers the queued signals
              (no finished row is lost)

Samples are coalesced and emitted at most every `emit_interval_s`, never per call. Finished rows go to the
optional CsvSink from the worker thread *before* they are signalled, so a CSV is complete even if the window
closes while signals are still queued.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from typing import Callable, Iterator

import numpy as np
from PySide6.QtCore import QCoreApplication, QEventLoop, QObject, QThread, Signal, Slot

from explorer.core.errors import ExplorerError
from explorer.gui.jobs import measure

STOP_GRACE_MS = 1200  # how long a close waits for the measuring process to stop by itself
BOUNDARY = object()  # yielded by a job at a burst boundary: the window draws while the child waits
_live_threads: set = set()  # every QThread this module started and has not yet joined
log = logging.getLogger(__name__)

Job = Callable[["JobWorker"], Iterator]  # a generator function: yields (signal_name, args) or BOUNDARY


def join(thread: QThread, timeout_ms: int) -> bool:
    """Wait for a QThread to end without holding the GIL (QThread.wait would: the worker could never finish)."""
    deadline = time.monotonic() + timeout_ms / 1000.0
    while not thread.isFinished() and time.monotonic() < deadline:
        time.sleep(0.002)  # releases the GIL
    return thread.isFinished() and thread.wait(1000)


def live_threads() -> int:
    """QThreads started here that are still running or not yet joined (tests assert 0 at teardown)."""
    return len(_live_threads)


def describe_failure(e: BaseException) -> tuple[str, str, str]:
    """(message shown to the user, field, traceback kept). An ExplorerError is the user's to fix: its own
    sentence, nothing more to tell. Anything else is a fault: its type and first line, and the whole story."""
    if isinstance(e, ExplorerError):
        return str(e), getattr(e, "field", None) or "", ""
    first = next((ln for ln in str(e).splitlines() if ln.strip()), "")
    return f"{type(e).__name__}: {first}", "", "".join(traceback.format_exception(e))


class JobWorker(QObject):
    """Runs one job generator in its QThread and forwards what it yields; the same class for every job."""

    yielded = Signal(str, object)  # the controller's signal name, its args (a tuple)
    errored = Signal(str, str, str)  # message shown, field ("" when none), traceback ("" for an ExplorerError)
    boundary = Signal(object)  # threading.Event: the child waits; the window draws, then sets it

    def __init__(self, job: Job):
        super().__init__()
        self._job = job
        self._cancel = threading.Event()

    def cancel(self) -> None:
        """Thread-safe: the core sees it after the current timed call."""
        self._cancel.set()
        measure.cancel()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def events(self, kind: str, *args, **kwargs):
        """The core's events of one measuring job (see measure.events), with this worker's cancel flag.
        When an event arrives the child is between bursts: the window's timers may draw again."""
        for ev in measure.events(kind, *args, cancel=self._cancel, **kwargs):
            measure.set_timing(False)
            yield ev

    @Slot()
    def run(self) -> None:
        try:
            for item in self._job(self):
                if item is BOUNDARY:
                    measure.paced_boundary(self, self.boundary.emit)
                else:
                    name, args = item
                    self.yielded.emit(name, tuple(args))
        except Exception as e:  # noqa: BLE001 - shown to the user, never crashes the app
            message, field, tb = describe_failure(e)
            if tb:
                log.error("%s job failed: %s\n%s", QThread.currentThread().objectName(), message, tb)
            self.errored.emit(message, field, tb)
        finally:
            measure.set_timing(False)
            # Quit this thread's event loop from inside it: a queued quit() would need the GUI thread,
            # which may be the one waiting for us (closing the window mid-run).
            QThread.currentThread().quit()


class JobRunner(QObject):
    """The GUI side of one job at a time: start, cooperative stop, a join that never waits long and never
    loses a queued signal, the pacing handshake and the single error path. A subclass declares the signals
    its jobs yield (by name, `signals`) and its lifecycle signals (_failed/_ended say how they are emitted)."""

    running_changed = Signal(bool)
    SHUTDOWN_MS = 60_000
    signals: tuple[str, ...] = ()  # the names a job of this controller may yield: each a Signal of the class

    def __init__(self, parent=None):
        super().__init__(parent)
        self._thread: QThread | None = None
        self._worker: JobWorker | None = None
        self.last_error = ""  # the message of the last failure
        self.last_traceback = ""  # its full traceback ("" for an ExplorerError: the message says it all)
        # Called in the GUI thread at each burst boundary, while the measuring child waits: draw what
        # arrived. The window sets it; the event is set afterwards in any case.
        self.on_boundary: Callable[[], None] | None = None

    @property
    def last_details(self) -> str:
        """The traceback for a message box's details (the name the Run window reads)."""
        return self.last_traceback

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start_job(self, job: Job, name: str) -> bool:
        """Run `job` in a new JobWorker on a new QThread; False when one is running already."""
        if self.running:
            return False
        worker = JobWorker(job)
        thread = QThread()
        thread.setObjectName(f"mkldnn-explorer-{name}")
        worker.moveToThread(thread)
        worker.yielded.connect(self._on_yielded)
        worker.errored.connect(self._on_errored)
        worker.boundary.connect(self._on_boundary)
        thread.started.connect(worker.run)
        thread.finished.connect(self._on_thread_finished)
        self._thread, self._worker = thread, worker
        self.last_error, self.last_traceback = "", ""
        _live_threads.add(thread)
        thread.start()
        self.running_changed.emit(True)
        return True

    def stop(self) -> None:
        if self._worker is not None:
            self._worker.cancel()

    def _join(self, timeout_ms: int, grace_ms: int | None) -> bool:
        """Wait for the thread (after `grace_ms`, kill the measuring process mid-call), then deliver the
        signals still queued and end the job here if its finished() signal is still queued too."""
        if self._thread is None:
            return True
        thread = self._thread
        if grace_ms is None:
            ok = join(thread, timeout_ms)
        else:
            ok = join(thread, min(timeout_ms, grace_ms))
            if not ok:
                measure.kill()  # mid-way through a long call: finished rows are already here
                ok = join(thread, timeout_ms)
        QCoreApplication.sendPostedEvents(self, 0)  # queued rows reach the window now
        if ok and self._thread is thread:
            self._on_thread_finished()
        return ok

    def shutdown(self, timeout_ms: int | None = None) -> bool:
        """Cancel, wait for the thread, and deliver the signals still queued (no finished row is lost)."""
        if self._thread is None:
            return True
        self.stop()
        return self._join(self.SHUTDOWN_MS if timeout_ms is None else timeout_ms, STOP_GRACE_MS)

    # ---- slots in the GUI thread ----------------------------------------------------------------------
    @Slot(str, object)
    def _on_yielded(self, name, args):
        if name not in self.signals:
            raise ValueError(f"{type(self).__name__} has no job signal {name!r} (it has {', '.join(self.signals)})")
        getattr(self, name).emit(*args)

    @Slot(object)
    def _on_boundary(self, event):
        try:
            if self.on_boundary is not None:
                self.on_boundary()
            # Paint what the redraws scheduled, now, while the child waits (not in the next burst). Twice:
            # the first pass's relayouts post layout requests and paints that the second one delivers.
            QCoreApplication.processEvents(QEventLoop.ExcludeUserInputEvents)
            QCoreApplication.processEvents(QEventLoop.ExcludeUserInputEvents)
        finally:
            event.set()

    @Slot(str, str, str)
    def _on_errored(self, message, field, tb):
        self.last_error, self.last_traceback = message, tb
        self._failed(message, field)

    @Slot()
    def _on_thread_finished(self):
        thread, worker = self._thread, self._worker
        if thread is None:
            return
        QCoreApplication.sendPostedEvents(self, 0)  # rows emitted just before the end come first
        cancelled = worker.cancelled if worker else False
        self._thread, self._worker = None, None
        thread.wait()  # returns at once: finished() was emitted as the thread ended
        _live_threads.discard(thread)
        del worker  # Python owns both objects; the thread has stopped, so dropping them is safe
        self.running_changed.emit(False)
        self._ended(cancelled)

    def _failed(self, message: str, field: str) -> None:
        raise NotImplementedError

    def _ended(self, cancelled: bool) -> None:
        raise NotImplementedError


class JobController(JobRunner):
    """A measuring job's controller: failed(message, field), then finished(cancelled) once the thread ended."""

    finished = Signal(bool)  # the job ended (True: cancelled); the thread has stopped
    failed = Signal(str, str)  # one-sentence message, field ("" when none)

    def _failed(self, message, field):
        self.failed.emit(message, field)

    def _ended(self, cancelled):
        self.finished.emit(cancelled)


# ---- the kinds of job ------------------------------------------------------------------------------------
def run_job(spec, opts, csv_path=None, emit_interval_s: float = 0.05) -> Job:
    """One spec over the selected paths: path_started, samples (coalesced), path_retry, path_finished."""

    def job(w: JobWorker):
        from explorer.core.jobs.events import PathFinished, PathRetry, PathStarted, Samples
        from explorer.core.report.results import CsvSink

        pending: list[np.ndarray] = []
        last = {"path": "", "n": 0, "elapsed": 0.0, "budget": 0.0, "t": 0.0}

        def flush():
            if pending:
                arr = np.concatenate(pending) if len(pending) > 1 else pending[0]
                pending.clear()
                yield "samples", (last["path"], arr, last["n"], last["elapsed"], last["budget"])
                last["t"] = time.monotonic()

        try:
            sink = CsvSink(csv_path)
            for ev in w.events("run", spec, opts, allocator=opts.allocator, isa=opts.isa):
                if isinstance(ev, Samples):
                    if ev.path != last["path"]:
                        yield from flush()
                    pending.append(np.asarray(ev.new_ms, dtype=np.float64))
                    last.update(path=ev.path, n=ev.n, elapsed=ev.elapsed_s, budget=ev.budget_s)
                    if measure.IN_CHILD:  # a burst boundary: the child waits until the window has drawn
                        yield from flush()
                        yield BOUNDARY
                    elif time.monotonic() - last["t"] >= emit_interval_s:
                        yield from flush()
                elif isinstance(ev, PathRetry):
                    yield from flush()
                    yield "path_retry", (ev.path, ev.attempt, ev.reason)
                elif isinstance(ev, PathStarted):
                    yield from flush()
                    last["path"] = ev.path
                    yield "path_started", (ev.path, ev.index, ev.total)
                elif isinstance(ev, PathFinished):
                    yield from flush()
                    sink.add(ev.result)  # on disk before the GUI hears of it
                    yield "path_finished", (ev.result,)
            yield from flush()
        except Exception:
            yield from flush()  # the samples that arrived are drawn; then the one error path
            raise

    return job


def model_job(args: tuple, kwargs: dict) -> Job:
    """The whole-model planner: inventory, progress (one line), layer_done, mode_started, mode_done, report."""

    def job(w: JobWorker):
        from explorer.core.jobs.events import PathFinished, PathStarted, PointStarted, Samples
        from explorer.core.model.report import ModeFinished, ModelFinished, ModelStarted, ModeStarted

        current = -1
        names: dict[int, str] = {}
        for ev in w.events("model", *args, **kwargs):
            if isinstance(ev, Samples):
                yield BOUNDARY  # the child waits until the window drew
            elif isinstance(ev, ModelStarted):
                names = {i: lay.name for i, lay in enumerate(ev.inventory.layers)}
                yield "inventory", (ev.inventory,)
            elif isinstance(ev, PointStarted):
                current = ev.point.index
                p = ev.progress
                yield "step", (p.done, p.total, f"layer {p.done + 1}/{p.total}")  # the status bar's progress
                yield "progress", (f"layer {p.done + 1}/{p.total}: {names.get(current, '')}",)
            elif isinstance(ev, PathStarted):
                yield "progress", (f"layer {current + 1}/{len(names)}: {names.get(current, '')} · {ev.path}",)
            elif isinstance(ev, PathFinished):
                ev.result.samples_ms = None
                yield "layer_done", (current, ev.result)
            elif isinstance(ev, ModeStarted):
                yield "mode_started", (ev.mode, ev.index, ev.total)
                yield "step", (ev.index, ev.total, f"end to end {ev.index + 1}/{ev.total}")
                yield "progress", (f"end to end {ev.index + 1}/{ev.total}: {ev.mode}",)
            elif isinstance(ev, ModeFinished):
                yield "mode_done", (ev.result,)
            elif isinstance(ev, ModelFinished):
                yield "report", (ev.report,)

    return job


def call_job(fn: Callable[[], object]) -> Job:
    """One call (e.g. measuring the machine's peak): succeeded(value)."""

    def job(_w: JobWorker):
        yield "succeeded", (fn(),)

    return job


# ---- the controllers: each declares its signals and says which job its start() runs ---------------------
class RunController(JobController):
    """One run at a time (run_job)."""

    path_started = Signal(str, int, int)  # path, index, total
    samples = Signal(str, object, int, float, float)  # path, new samples (ms, np.ndarray), n, elapsed_s, budget_s
    path_retry = Signal(str, int, str)  # path, attempt about to start, why the last loop was not trusted
    path_finished = Signal(object)  # explorer.core.report.results.Result
    signals = ("path_started", "samples", "path_retry", "path_finished")

    def start(self, spec, opts, csv_path=None) -> bool:
        return self.start_job(run_job(spec, opts, csv_path), "run")


class ModelController(JobController):
    """One whole-model plan at a time (model_job), for the Model tab."""

    inventory = Signal(object)  # core.model Inventory
    layer_done = Signal(int, object)  # layer index, Result
    mode_started = Signal(str, int, int)
    mode_done = Signal(object)  # ModeResult
    report = Signal(object)  # ModelReport
    progress = Signal(str)
    step = Signal(int, int, str)  # done, total, "layer k/n" or "end to end k/n": the status bar's progress
    signals = ("inventory", "layer_done", "mode_started", "mode_done", "report", "progress", "step")
    SHUTDOWN_MS = 10_000

    def start(self, args: tuple, kwargs: dict) -> bool:
        return self.start_job(model_job(args, kwargs), "model")


class CallWorker(JobRunner):
    """Runs one callable in a QThread (e.g. measuring the machine's peak) and reports its value or error:
    succeeded(value) or failed(message), then finished(). The error path is the jobs' (last_traceback)."""

    succeeded = Signal(object)
    failed = Signal(str)
    finished = Signal()
    signals = ("succeeded",)

    def __init__(self, fn: Callable[[], object], parent=None):
        super().__init__(parent)
        self._fn = fn

    def start(self) -> bool:
        return self.start_job(call_job(self._fn), "call")

    def wait(self, timeout_ms: int = 60_000) -> bool:
        """Wait for the call (it cannot be cancelled) and deliver its signals."""
        return self._join(timeout_ms, None)

    def _failed(self, message, _field):
        self.failed.emit(message)

    def _ended(self, _cancelled):
        self.finished.emit()
