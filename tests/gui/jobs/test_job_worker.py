"""The one job worker: every kind of job runs in worker.JobWorker, and a failure takes one path (the first
line shown, the whole traceback kept on the controller and in the log)."""

import logging
import threading
from types import SimpleNamespace

import numpy as np
import pytest
from PySide6.QtCore import Signal

from explorer.gui.jobs import measure, worker


@pytest.fixture(autouse=True)
def _no_threads_left():
    yield
    assert worker.live_threads() == 0, "a test left a job thread running"


class Ticks(worker.JobController):
    tick = Signal(int)
    signals = ("tick",)


def _finish(qtbot, ctl, start):
    with qtbot.waitSignal(ctl.finished, timeout=10_000) as blocker:
        assert start()
    assert not ctl.running
    return blocker.args


def test_a_job_that_raises_shows_its_first_line_and_keeps_the_traceback(qtbot, caplog):
    def job(_w):
        yield "tick", (1,)
        raise RuntimeError("the first line\nand the rest of the story")

    ctl, ticks, failed = Ticks(), [], []
    ctl.tick.connect(ticks.append)
    ctl.failed.connect(lambda m, f: failed.append((m, f)))
    with caplog.at_level(logging.ERROR, logger=worker.__name__):
        assert _finish(qtbot, ctl, lambda: ctl.start_job(job, "ticks")) == [False]
    assert ticks == [1]  # what the job yielded before the fault arrived first
    assert failed == [("RuntimeError: the first line", "")]
    assert ctl.last_error == "RuntimeError: the first line"
    tb = ctl.last_traceback
    assert tb.startswith("Traceback") and "and the rest of the story" in tb and "in job" in tb
    assert ctl.last_details == tb  # the name the Run window's message box reads
    assert any("and the rest of the story" in r.getMessage() for r in caplog.records)  # logged, not only printed


def test_an_explorer_error_is_its_own_sentence_with_its_field(qtbot):
    from explorer.core.errors import InputError

    def job(_w):
        raise InputError("no path selected; choose from dense.", "paths")
        yield

    ctl, failed = Ticks(), []
    ctl.failed.connect(lambda m, f: failed.append((m, f)))
    _finish(qtbot, ctl, lambda: ctl.start_job(job, "ticks"))
    assert failed == [("no path selected; choose from dense.", "paths")]
    assert ctl.last_traceback == ""  # the user's to fix: no traceback box


def test_the_one_error_path_is_the_same_for_a_sweep(qtbot, monkeypatch):
    """Sweeps used to print the traceback and keep nothing: now they keep it like runs."""
    from explorer.core.jobs.options import RunOptions
    from explorer.gui.jobs.sweep_worker import SweepController

    def broken(kind, *a, **k):
        raise ValueError("bad sweep\nsecond line")
        yield

    monkeypatch.setattr(measure, "events", broken)
    ctl, failed = SweepController(), []
    ctl.failed.connect(lambda m, f: failed.append(m))
    _finish(qtbot, ctl, lambda: ctl.start([], RunOptions()))
    assert failed == ["ValueError: bad sweep"] and "second line" in ctl.last_traceback


def test_a_failing_call_keeps_its_traceback(qtbot):
    def boom():
        raise OSError("no cache dir")

    cw, failed = worker.CallWorker(boom), []
    cw.failed.connect(failed.append)
    with qtbot.waitSignal(cw.finished, timeout=10_000):
        cw.start()
    assert failed == ["OSError: no cache dir"] and "boom" in cw.last_traceback


def test_stop_reaches_the_job_and_finished_says_cancelled(qtbot):
    started = threading.Event()

    def job(w):
        started.set()
        while not w.cancelled:
            yield "tick", (0,)
            threading.Event().wait(0.01)

    ctl = Ticks()
    with qtbot.waitSignal(ctl.finished, timeout=10_000) as blocker:
        ctl.start_job(job, "ticks")
        assert not ctl.start_job(job, "ticks")  # one job at a time
        assert started.wait(5)
        ctl.stop()
    assert blocker.args == [True]


def test_a_job_yielding_an_undeclared_signal_is_an_error():
    ctl = Ticks()
    with pytest.raises(ValueError, match="no job signal 'nope'"):
        ctl._on_yielded("nope", ())


def _fake_events(kind, *args, cancel, allocator=None, **kwargs):
    """Each kind's core events, without the measuring process."""
    from explorer.core.jobs.events import PathFinished, PathStarted, Samples, SweepFinished, SweepProgress, SweepStarted
    from explorer.core.model.report import ModelFinished, ModelStarted, ModeStarted

    row = {"path": "dense", "status": "ok"}
    if kind == "run":
        yield PathStarted(None, "dense", 0, 1)
        yield Samples(None, "dense", np.ones(3), 3, 0.01, 0.1)
        yield PathFinished(row)
    elif kind == "points":
        yield SweepStarted([], 0, 0, ("dense",))
        yield SweepFinished(SweepProgress(0, 0, 0, 0, 0.0, None), False)
    elif kind == "model":
        yield ModelStarted(SimpleNamespace(layers=[]))
        yield ModeStarted("eager", 0, 1)
        yield ModelFinished("the report")
    elif kind == "peak":
        yield "the peak"


def test_every_kind_of_job_runs_through_the_same_worker_class(qtbot, monkeypatch):
    from explorer.core.jobs.options import RunOptions
    from explorer.gui.jobs.sweep_worker import SweepController

    made, the_worker = [], worker.JobWorker

    class Recording(the_worker):
        def __init__(self, job):
            super().__init__(job)
            made.append(type(self).__mro__[1])

    monkeypatch.setattr(measure, "IN_CHILD", False)
    monkeypatch.setattr(measure, "events", _fake_events)
    monkeypatch.setattr(worker, "JobWorker", Recording)
    opts = RunOptions(paths=["dense"])
    got = {}

    run = worker.RunController()
    run.samples.connect(lambda p, arr, *_: got.setdefault("samples", len(arr)))
    run.path_finished.connect(lambda r: got.setdefault("run", r["path"]))
    _finish(qtbot, run, lambda: run.start(None, opts))

    for batch in (False, True):  # a planned sweep and a batch are both lists of points
        sweep = SweepController()
        sweep.sweep_started.connect(lambda ev, b=batch: got.setdefault(f"sweep{b}", ev.paths))
        sweep.progress.connect(lambda p, b=batch: got.setdefault(f"progress{b}", p.total))
        _finish(qtbot, sweep, lambda: sweep.start([], opts))

    model = worker.ModelController()
    model.mode_started.connect(lambda m, i, n: got.setdefault("mode", m))
    model.report.connect(lambda r: got.setdefault("model", r))
    _finish(qtbot, model, lambda: model.start(("tiny", None), {}))

    def peak():  # as the window measures it: in the measuring process
        return list(measure.events("peak", 2, cancel=threading.Event()))[-1]

    call = worker.CallWorker(peak)
    call.succeeded.connect(lambda v: got.setdefault("peak", v))
    with qtbot.waitSignal(call.finished, timeout=10_000):
        call.start()

    assert made == [the_worker] * 5
    assert got == {"samples": 3, "run": "dense", "sweepFalse": ("dense",), "progressFalse": 0, "sweepTrue": ("dense",),
                   "progressTrue": 0, "mode": "eager", "model": "the report", "peak": "the peak"}
