"""Torch work off the GUI thread: a QObject moved to a QThread runs the core's iter_run generator.

superqt's thread_worker pattern: the generator does the work and yields often; the worker forwards what it
yields as signals and checks a cancel flag between yields (the core checks it after every timed call too,
so Stop takes effect within one call). Samples are coalesced and emitted at most every `emit_interval_s`,
never per call. Finished rows go to the optional CsvSink from the worker thread *before* they are signalled,
so a CSV is complete even if the window closes while signals are still queued.
"""

from __future__ import annotations

import threading
import time
import traceback
from typing import Callable

import numpy as np
from PySide6.QtCore import QCoreApplication, QEventLoop, QObject, QThread, Signal, Slot

from explorer.core.errors import ExplorerError
from explorer.gui import measure

STOP_GRACE_MS = 1200  # how long a close waits for the measuring process to stop by itself
_live_threads: set = set()  # every QThread this module started and has not yet joined


def join(thread: QThread, timeout_ms: int) -> bool:
    """Wait for a QThread to end without holding the GIL (QThread.wait would: the worker could never finish)."""
    deadline = time.monotonic() + timeout_ms / 1000.0
    while not thread.isFinished() and time.monotonic() < deadline:
        time.sleep(0.002)  # releases the GIL
    return thread.isFinished() and thread.wait(1000)


def live_threads() -> int:
    """QThreads started here that are still running or not yet joined (tests assert 0 at teardown)."""
    return sum(1 for t in list(_live_threads) if t is not None)


class MeasureWorker(QObject):
    """What every measuring worker shares (runs, sweeps, models): the cancel flag the core checks after
    every timed call, and the burst-boundary handshake with the window. Subclasses add their signals and
    run(); each lives in its own QThread, so every signal is queued to the GUI."""

    failed = Signal(str, str)  # one-sentence message, field ("" when none)
    done = Signal(bool)  # True when cancelled
    boundary = Signal(object)  # threading.Event: the child waits; the window draws, then sets it

    def __init__(self):
        super().__init__()
        self._cancel = threading.Event()

    def cancel(self) -> None:
        """Thread-safe: the core sees it after the current timed call."""
        self._cancel.set()
        measure.cancel()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def at_boundary(self) -> None:
        """A burst boundary: the measuring child waits until the window has drawn, then goes on."""
        measure.paced_boundary(self, self.boundary.emit)


class RunWorker(MeasureWorker):
    """Runs one spec over the selected paths."""

    path_started = Signal(str, int, int)  # path, index, total
    samples = Signal(str, object, int, float, float)  # path, new samples (ms, np.ndarray), n, elapsed_s, budget_s
    path_retry = Signal(str, int, str)  # path, attempt about to start, why the last loop was not trusted
    path_finished = Signal(object)  # explorer.core.report.results.Result

    def __init__(self, spec, opts, csv_path=None, emit_interval_s: float = 0.05):
        super().__init__()
        self.spec, self.opts, self.csv_path = spec, opts, csv_path
        self.emit_interval_s = emit_interval_s
        self.results: list = []  # finished results, readable after the thread ends

    @Slot()
    def run(self) -> None:
        from explorer.core.jobs.events import PathFinished, PathRetry, PathStarted, Samples
        from explorer.core.report.results import CsvSink

        pending: list[np.ndarray] = []
        last = {"path": "", "n": 0, "elapsed": 0.0, "budget": 0.0, "t": 0.0}

        def flush() -> None:
            if pending:
                arr = np.concatenate(pending) if len(pending) > 1 else pending[0]
                pending.clear()
                self.samples.emit(last["path"], arr, last["n"], last["elapsed"], last["budget"])
                last["t"] = time.monotonic()

        try:
            sink = CsvSink(self.csv_path)
            for ev in measure.events("run", self.spec, self.opts, cancel=self._cancel,
                                     allocator=self.opts.allocator):
                measure.set_timing(False)  # the child is between bursts now
                if isinstance(ev, Samples):
                    if ev.path != last["path"]:
                        flush()
                    pending.append(np.asarray(ev.new_ms, dtype=np.float64))
                    last.update(path=ev.path, n=ev.n, elapsed=ev.elapsed_s, budget=ev.budget_s)
                    if measure.IN_CHILD:  # a burst boundary: the child waits until the window has drawn
                        flush()
                        self.at_boundary()
                    elif time.monotonic() - last["t"] >= self.emit_interval_s:
                        flush()
                elif isinstance(ev, PathRetry):
                    flush()
                    self.path_retry.emit(ev.path, ev.attempt, ev.reason)
                elif isinstance(ev, PathStarted):
                    flush()
                    last["path"] = ev.path
                    self.path_started.emit(ev.path, ev.index, ev.total)
                elif isinstance(ev, PathFinished):
                    flush()
                    self.results.append(ev.result)
                    sink.add(ev.result)  # on disk before the GUI hears of it
                    self.path_finished.emit(ev.result)
            flush()
        except ExplorerError as e:
            flush()
            self.failed.emit(str(e), getattr(e, "field", None) or "")
        except Exception as e:  # noqa: BLE001 - shown to the user, never crashes the app
            flush()
            self.details = traceback.format_exc()  # the whole story, for the message box's details
            first = next((ln for ln in str(e).splitlines() if ln.strip()), "")
            self.failed.emit(f"{type(e).__name__}: {first}", "")
        finally:
            measure.set_timing(False)
            self.done.emit(self._cancel.is_set())
            # Quit this thread's event loop from inside it: a queued quit() would need the GUI thread,
            # which may be the one waiting for us (closing the window mid-run).
            QThread.currentThread().quit()


class ThreadController(QObject):
    """Owns the QThread of one measurement at a time: start, cooperative stop, and a shutdown that never
    waits long and never loses a queued row. Subclasses declare their signals and forwarding slots."""

    finished = Signal(bool)  # the measurement ended (True: cancelled); the thread has stopped
    running_changed = Signal(bool)
    failed = Signal(str, str)
    SHUTDOWN_MS = 60_000
    registries: tuple = ()  # extra sets that track this controller's threads (besides _live_threads)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._thread: QThread | None = None
        self._worker = None
        self.last_details = ""
        # Called in the GUI thread at each burst boundary, while the measuring child waits: draw what
        # arrived. The window sets it; the event is set afterwards in any case.
        self.on_boundary: Callable[[], None] | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    def _track(self, thread: QThread, on: bool) -> None:
        for s in (_live_threads, *self.registries):
            (s.add if on else s.discard)(thread)

    def _launch(self, worker, name: str, forwards: dict) -> bool:
        """Move `worker` to a new thread, forward its signals (queued to this GUI-thread object), start."""
        thread = QThread()
        thread.setObjectName(name)
        worker.moveToThread(thread)
        for signal, slot in forwards.items():
            signal.connect(slot)
        worker.failed.connect(self._on_failed)
        worker.boundary.connect(self._on_boundary)
        thread.started.connect(worker.run)
        thread.finished.connect(self._on_thread_finished)
        self._thread, self._worker = thread, worker
        self._track(thread, True)
        thread.start()
        self.running_changed.emit(True)
        return True

    def stop(self) -> None:
        if self._worker is not None:
            self._worker.cancel()

    def shutdown(self, timeout_ms: int | None = None) -> bool:
        """Cancel, wait for the thread, and deliver the signals still queued (no finished row is lost)."""
        if self._thread is None:
            return True
        timeout_ms = self.SHUTDOWN_MS if timeout_ms is None else timeout_ms
        self.stop()
        thread = self._thread
        ok = join(thread, min(timeout_ms, STOP_GRACE_MS))
        if not ok:
            measure.kill()  # mid-way through a long call: finished rows are already here
            ok = join(thread, timeout_ms)
        QCoreApplication.sendPostedEvents(self, 0)  # queued rows reach the window now
        if ok and self._thread is thread:  # the finished() signal may still be queued: end the run here
            self._on_thread_finished()
        return ok

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

    @Slot(str, str)
    def _on_failed(self, message, field):
        self.last_details = getattr(self._worker, "details", "") if self._worker is not None else ""
        self.failed.emit(message, field)

    @Slot()
    def _on_thread_finished(self):
        thread, worker = self._thread, self._worker
        if thread is None:
            return
        QCoreApplication.sendPostedEvents(self, 0)  # rows emitted just before the end come first
        cancelled = worker.cancelled if worker else False
        self._thread, self._worker = None, None
        thread.wait()  # returns at once: finished() was emitted as the thread ended
        self._track(thread, False)
        del worker  # Python owns both objects; the thread has stopped, so dropping them is safe
        self.running_changed.emit(False)
        self.finished.emit(cancelled)


class RunController(ThreadController):
    """One run at a time: re-emits the RunWorker's signals in the GUI thread."""

    path_started = Signal(str, int, int)
    samples = Signal(str, object, int, float, float)
    path_retry = Signal(str, int, str)
    path_finished = Signal(object)

    def start(self, spec, opts, csv_path=None) -> bool:
        if self.running:
            return False
        worker = RunWorker(spec, opts, csv_path)
        return self._launch(worker, "mkldnn-explorer-run", {
            worker.path_started: self._on_path_started,
            worker.samples: self._on_samples,
            worker.path_retry: self._on_path_retry,
            worker.path_finished: self._on_path_finished,
        })

    @Slot(str, int, str)
    def _on_path_retry(self, path, attempt, reason):
        self.path_retry.emit(path, attempt, reason)

    # ---- slots in the GUI thread ------------------------------------------------------------------
    @Slot(str, int, int)
    def _on_path_started(self, path, index, total):
        self.path_started.emit(path, index, total)

    @Slot(str, object, int, float, float)
    def _on_samples(self, path, arr, n, elapsed, budget):
        self.samples.emit(path, arr, n, elapsed, budget)

    @Slot(object)
    def _on_path_finished(self, result):
        self.path_finished.emit(result)


class CallWorker(QObject):
    """Runs one callable in a QThread (e.g. measuring the machine's peak) and reports its value or error."""

    succeeded = Signal(object)
    failed = Signal(str)
    finished = Signal()

    def __init__(self, fn: Callable[[], object], parent=None):
        super().__init__(parent)
        self._fn = fn
        self._thread: QThread | None = None
        self._inner: _Call | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        thread = QThread()
        inner = _Call(self._fn)
        inner.moveToThread(thread)
        inner.value.connect(self._on_value)
        inner.error.connect(self._on_error)
        thread.started.connect(inner.run)
        thread.finished.connect(self._on_finished)
        self._thread, self._inner = thread, inner
        _live_threads.add(thread)
        thread.start()

    def wait(self, timeout_ms: int = 60_000) -> bool:
        if self._thread is None:
            return True
        ok = join(self._thread, timeout_ms)
        QCoreApplication.sendPostedEvents(self, 0)
        if self._thread is not None:
            self._on_finished()
        return ok

    @Slot(object)
    def _on_value(self, v):
        self.succeeded.emit(v)

    @Slot(str)
    def _on_error(self, msg):
        self.failed.emit(msg)

    @Slot()
    def _on_finished(self):
        thread, inner = self._thread, self._inner
        if thread is None:
            return
        QCoreApplication.sendPostedEvents(self, 0)
        self._thread, self._inner = None, None
        thread.wait()
        _live_threads.discard(thread)
        del inner
        self.finished.emit()


class _Call(QObject):
    value = Signal(object)
    error = Signal(str)
    done = Signal()

    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    @Slot()
    def run(self):
        try:
            self.value.emit(self._fn())
        except Exception as e:  # noqa: BLE001
            self.error.emit(f"{type(e).__name__}: {e}")
        finally:
            self.done.emit()
            QThread.currentThread().quit()
