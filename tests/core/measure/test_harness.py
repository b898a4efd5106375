"""The timing loop: warm-up, stop rules, cancel, statistics."""

import time

import numpy as np
import pytest

from explorer.core.measure import harness
from explorer.core.measure.harness import Budget, Measurement, measure, measure_iter, median_rel_ci


class FakeClock:
    """A stand-in for the harness's `time`: time moves only when the test says so (1 ns per read, so reads
    stay ordered), whatever the host does to the process."""

    def __init__(self):
        self.ns = 0

    def perf_counter_ns(self):
        self.ns += 1
        return self.ns

    def advance(self, s: float) -> None:
        self.ns += int(s * 1e9)


def test_warmup_is_not_timed_and_min_samples_hold():
    calls = []

    def fn():
        calls.append(time.perf_counter_ns())
        time.sleep(0.002)

    m = measure(fn, Budget(budget_ms=1, min_samples=5, warmup=1))
    assert m.n == 5 and len(calls) == 6  # one warm-up, then 5 timed calls despite the tiny budget
    assert m.stop_reason == "budget"
    assert 1.5 < m.median_ms < 50


def test_budget_stops_the_loop():
    import torch  # noqa: F401 - the loop's end reads torch's thread count: its first import is not the loop's

    m = measure(lambda: time.sleep(0.001), Budget(budget_ms=60, precision=0.0))
    assert m.stop_reason == "budget"
    assert 5 <= m.n <= 60
    span = m.starts_ns + m.samples_ns - m.starts_ns[0]  # each call's end, from the loop's first call
    assert span[-1] >= 0.95 * 60e6 and span[-2] < 60e6  # it stopped at the first call past the budget
    assert m.wall_s < 1.0


def test_converges_early_on_a_steady_callable():
    import torch  # noqa: F401 - as above
    x = np.ones(200_000)  # tens of µs a call: converges long before the sample cap
    m = measure(lambda: x.sum(), Budget(budget_ms=5000, precision=0.05))
    assert m.stop_reason == "converged"
    assert m.wall_s < 5.0
    assert m.rel_ci < 0.05


def test_cancel_within_one_call():
    state = {"n": 0}

    def fn():
        state["n"] += 1

    m = measure(fn, Budget(budget_ms=10_000), cancel=lambda: state["n"] >= 7)
    assert m.stop_reason == "cancelled"
    assert state["n"] == 7  # warm-up + 6 timed calls, then the flag was seen


def test_sample_cap_keeps_memory_flat():
    m = measure(lambda: None, Budget(budget_ms=10_000, max_samples=1000, precision=0.0))
    assert m.n == 1000 and m.stop_reason == "max_samples"


def test_progress_yields_new_samples_only():
    gen = measure_iter(lambda: time.sleep(0.001), Budget(budget_ms=120, precision=0.0), progress_interval_s=0.02)
    seen = 0
    while True:
        try:
            p = next(gen)
        except StopIteration as stop:
            m = stop.value
            break
        seen += p.new_samples_ns.size
        assert p.n == seen
    assert seen == m.n


def test_statistics():
    m = Measurement(np.array([1, 2, 3, 4, 100], dtype=np.int64) * 1_000_000)
    assert m.median_ms == 3 and m.min_ms == 1 and m.mean_ms == 22
    assert m.iqr_ms == pytest.approx(2.0)
    assert median_rel_ci(np.array([5, 5, 5, 5])) == 0.0


@pytest.mark.parametrize("hold_s, rewarms", [(0.0, False), (0.005, True)])
def test_a_consumer_that_holds_the_loop_gets_one_untimed_call_after_each_hold(monkeypatch, hold_s, rewarms):
    clock = FakeClock()  # a busy host stretches real calls and holds alike: the test owns the time
    monkeypatch.setattr(harness, "time", clock)
    calls = []

    def fn():
        calls.append(1)
        clock.advance(0.0002)

    gen = measure_iter(fn, Budget(budget_ms=80, min_samples=5, precision=0.0, warmup=0), progress_interval_s=0.01,
                       meter=False)
    bursts = 0
    try:
        while True:
            next(gen)
            bursts += 1
            clock.advance(hold_s)  # the window painting this burst
    except StopIteration as stop:
        m = stop.value
    extra = len(calls) - m.n
    if rewarms:  # every hold but the first (before any sample) and the last (after the loop)
        assert extra == bursts - 2 and extra >= 5
    else:
        assert extra == 0  # a consumer that does not hold (the command line) costs no call
