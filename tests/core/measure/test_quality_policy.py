"""The retry/mark policy: a disturbed loop is measured again; one that stays disturbed keeps quality=noisy."""

import numpy as np

from explorer.core.jobs import run as runner
from explorer.core.measure import interference as itf
from explorer.core.measure.harness import Measurement
from explorer.core.problem.spec import parse_descriptor

SPEC = "mb1ic8ih8oc8oh8kh3ph1"


def _fake_loops(qualities, monkeypatch):
    """measure_iter replaced by loops whose verdicts follow `qualities` (one per attempt)."""
    calls = []

    def fake(fn, budget, cancel, interval):
        q = qualities[min(len(calls), len(qualities) - 1)]
        calls.append(q)
        fn()
        n = 20
        wait = 60.0 if q == "noisy" else 0.5
        disturbed = 15 if q == "noisy" else 0
        ms = 5.0 if q == "noisy" else 1.0
        return Measurement(np.full(n, int(ms * 1e6)), interference=itf.Interference(
            samples=n, disturbed=disturbed, runq_wait_pct=wait, faults_per_call=2.0), waits_ns=np.zeros(n, dtype=np.int64))
        yield  # a generator, like the real one

    monkeypatch.setattr(runner, "measure_iter", fake)
    return calls


def _run(monkeypatch, qualities):
    calls = _fake_loops(qualities, monkeypatch)
    opts = runner.RunOptions(paths=("dense",), budget_ms=10, check=False, trace=False)
    events = list(runner.iter_run(parse_descriptor(SPEC), opts))
    return calls, events, [e.result for e in events if isinstance(e, runner.PathFinished)][0]


def test_noisy_loop_is_measured_again_and_the_clean_one_is_reported(monkeypatch):
    calls, events, res = _run(monkeypatch, ["noisy", "ok"])
    assert calls == ["noisy", "ok"] and res.attempts == 2
    assert res.quality == "ok" and res.median_ms == 1.0
    retries = [e for e in events if isinstance(e, runner.PathRetry)]
    assert len(retries) == 1 and retries[0].attempt == 2 and "waited for a core" in retries[0].reason


def test_a_loop_that_stays_noisy_is_kept_and_marked_after_bounded_attempts(monkeypatch):
    calls, _, res = _run(monkeypatch, ["noisy"])
    assert len(calls) == runner.MAX_ATTEMPTS == res.attempts
    assert res.status == "ok" and res.quality == "noisy" and res.noisy
    assert "waited for a core 60% of the loop" in res.quality_reason
    row = res.row()
    assert row["quality"] == "noisy" and row["runq_wait_pct"] == "60" and row["faults_per_call"] == "2"


def test_a_clean_first_loop_is_not_repeated(monkeypatch):
    calls, _, res = _run(monkeypatch, ["ok"])
    assert calls == ["ok"] and res.attempts == 1 and res.quality == "ok"


def test_better_prefers_trusted_then_less_disturbed():
    def m(q, wait):
        dist = 80 if q == "noisy" else 0
        return Measurement(np.ones(100, dtype=np.int64), interference=itf.Interference(samples=100, disturbed=dist, runq_wait_pct=wait))
    a, b, c = m("noisy", 70.0), m("noisy", 40.0), m("ok", 1.0)
    assert runner.better(a, b) is b and runner.better(b, a) is b and runner.better(b, c) is c and runner.better(c, a) is c
