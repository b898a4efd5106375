"""Paced jobs: the measuring child waits at each burst boundary until the parent acknowledges it; the
pauses are neither budget nor interference; an unanswered boundary never stalls the measurement."""

import time

from explorer.core.jobs.events import PathFinished, Samples
from explorer.core.jobs.options import RunOptions
from explorer.core.problem.spec import parse_descriptor
from explorer.core.process import child as child_mod
from explorer.core.process.child import ChildRunner

SPEC = parse_descriptor("mb1ic8ih8oc8oh8kh3ph1")


def _job(runner, pace, hold_s, budget_ms=150):
    opts = RunOptions(paths=("dense",), budget_ms=budget_ms, check=False, trace=False, min_samples=5, precision=0.0)
    bursts, result, gaps = 0, None, []
    t_last = None
    _job.elapsed = []
    for ev in runner.iter("run", SPEC, opts, pace=pace):
        if isinstance(ev, Samples):
            bursts += 1
            _job.elapsed.append(ev.elapsed_s)
            now = time.monotonic()
            if t_last is not None:
                gaps.append(now - t_last)
            if hold_s:
                time.sleep(hold_s)  # "the window draws" while the child waits
            t_last = time.monotonic()
            runner.ack()
        elif isinstance(ev, PathFinished):
            result = ev.result
    return bursts, result, gaps


def test_the_child_waits_for_each_acknowledgement_and_leaves_the_pauses_out():
    r = ChildRunner()
    try:
        r.start()
        t0 = time.monotonic()
        bursts, res, _ = _job(r, pace=True, hold_s=0.1)
        took = time.monotonic() - t0
        assert bursts >= 3 and res.status == "ok"
        # the child waited for every burst: the job took about its budget plus every pause
        assert took >= 0.15 + 0.1 * (bursts - 1)
        # the pauses are not budget: the loop's own clock ends near 150 ms, not 150 ms plus every pause (half of
        # them is the margin: a busy host stretches the last call and the loop's closing checks, not the pauses)
        assert max(_job.elapsed) < 0.15 + 0.1 * (bursts - 1) / 2
    finally:
        r.shutdown()


def test_an_unanswered_boundary_lets_the_measurement_go_on(monkeypatch):
    r = ChildRunner()
    try:
        opts = RunOptions(paths=("dense",), budget_ms=60, check=False, trace=False, min_samples=5, precision=0.0)
        t0 = time.monotonic()
        events = list(r.iter("run", SPEC, opts, pace=True))  # never acknowledged
        took = time.monotonic() - t0
        assert any(isinstance(e, PathFinished) for e in events)
        bursts = sum(isinstance(e, Samples) for e in events)
        assert took >= child_mod.ACK_TIMEOUT_S * (bursts - 1) * 0.9  # each boundary waited out its timeout
    finally:
        r.shutdown()


def test_unpaced_jobs_never_wait():
    r = ChildRunner()
    try:
        # a first job warms the child (it imports torch): its start-up is not what is timed here
        list(r.iter("run", SPEC, RunOptions(paths=("dense",), budget_ms=1, check=False, trace=False)))
        opts = RunOptions(paths=("dense",), budget_ms=100, check=False, trace=False, min_samples=5, precision=0.0)
        t0 = time.monotonic()
        events = list(r.iter("run", SPEC, opts))
        took = time.monotonic() - t0
        bursts = sum(isinstance(e, Samples) for e in events)
        assert bursts >= 3
        # a child that waited at each boundary would take ACK_TIMEOUT_S for every one but the last
        assert took < child_mod.ACK_TIMEOUT_S * (bursts - 1)
    finally:
        r.shutdown()
