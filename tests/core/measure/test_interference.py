"""The interference meter: counters, the per-sample disturbed mask, the verdict, and the harness using it."""

import os
import subprocess
import sys
import time

import numpy as np
import pytest

from explorer.core.measure import harness
from explorer.core.measure import interference as itf
from explorer.core.measure.harness import Budget, Measurement, measure


def test_sched_reader_sums_run_and_wait_over_threads(tmp_path):
    for tid, (run, wait) in {"11": (100, 7), "12": (50, 3)}.items():
        (tmp_path / tid).mkdir()
    vals = {"11": (100, 7), "12": (50, 3)}
    r = itf.SchedReader(str(tmp_path), reader=lambda d: vals[os.path.basename(d)])
    assert r.available and r.read() == (150, 10)


def test_real_schedstat_is_read_on_linux():
    if not os.path.exists("/proc/self/task"):
        pytest.skip("no /proc/self/task on this platform: the quality columns stay empty")
    r = itf.SchedReader()
    a = r.read()
    t = time.thread_time() + 0.03  # 30 ms on the CPU, however busy the machine is
    while time.thread_time() < t:
        pass
    b = r.read()
    assert a is not None and b[0] - a[0] >= 25_000_000  # schedstat saw (about) the same CPU time


def test_disturbed_mask_ignores_wakeup_latency_but_not_a_lost_slice():
    samples = np.array([100_000, 100_000, 100_000, 10_000_000])
    waits = np.array([0, 500, 50_000, 9_000_000])
    assert disturbed(samples, waits) == [False, False, True, True]


def disturbed(s, w):
    return list(itf.disturbed_mask(s, w))


@pytest.mark.parametrize("kw, quality, words", [
    (dict(samples=100, disturbed=0, runq_wait_pct=0.1), "ok", ""),
    (dict(samples=100, disturbed=3, runq_wait_pct=1.0), "ok", "3 of 100 calls waited for a core and were left out"),
    (dict(samples=100, disturbed=60, runq_wait_pct=70.0), "noisy", "waited for a core 70% of the loop"),
    (dict(samples=100, disturbed=10, runq_wait_pct=35.0), "noisy", "35% of the loop"),
    (dict(samples=100, disturbed=0, runq_wait_pct=0.0, steal_pct=12.0), "noisy", "hypervisor took 12%"),
    (dict(samples=100, disturbed=0, runq_wait_pct=0.0, slowdown_pct=70.0), "noisy", "70% slower than its best"),
    (dict(samples=100, disturbed=0, runq_wait_pct=0.0, slowdown_pct=30.0), "ok", ""),  # the host's own variation
    (dict(samples=100, disturbed=0, runq_wait_pct=0.0, other_cpu_pct=60.0), "noisy", "other programs used 60%"),
    (dict(samples=5, disturbed=1, runq_wait_pct=1.0), "noisy", "1 of 5 calls were slowed"),  # below min_samples clean
    (dict(samples=100), "", ""),  # no counters on this platform: no verdict at all
])
def test_verdict_names_the_cause_and_its_size(kw, quality, words):
    v = itf.judge(itf.Interference(**kw), min_samples=5)
    assert v.quality == quality and words in v.reason


def test_trusted_measurement_uses_only_undisturbed_samples():
    samples = np.array([100_000] * 90 + [20_000_000] * 10)
    waits = np.array([0] * 90 + [19_000_000] * 10)
    m = Measurement(samples, interference=itf.Interference(samples=100, disturbed=10, runq_wait_pct=3.0), waits_ns=waits)
    assert m.quality == "ok" and m.n == 100 and m.n_stats == 90
    assert m.median_ms == pytest.approx(0.1) and m.min_ms == pytest.approx(0.1)
    noisy = Measurement(samples, interference=itf.Interference(samples=100, disturbed=60, runq_wait_pct=60.0), waits_ns=waits)
    assert noisy.quality == "noisy" and noisy.n_stats == 100  # a noisy loop is never "cleaned" into a finding


class _FakeSched:
    """Every 10th sample's threads wait 0.1 ms for a core; the others never."""

    def __init__(self, *a, **k):
        self.available, self.calls, self.wait = True, 0, 0

    def refresh(self):
        return True

    def read(self):
        self.calls += 1
        if self.calls > 1 and self.calls % 10 == 0:
            self.wait += 100_000
        return (0, self.wait)

    def close(self):
        pass


def test_harness_records_each_samples_wait_and_leaves_out_the_disturbed(monkeypatch):
    monkeypatch.setattr(itf, "SchedReader", _FakeSched)
    monkeypatch.setattr(itf, "_cpu_ticks", lambda: None)  # only the fake counters speak
    monkeypatch.setattr(itf, "canary_best", lambda: None)
    m = measure(lambda: time.sleep(0.0002), Budget(budget_ms=40, min_samples=5, precision=0.0))
    assert m.waits_ns is not None and m.waits_ns.size == m.n
    assert m.interference.disturbed == int((m.waits_ns > 0).sum()) > 0
    assert m.quality == "ok" and m.n_stats == m.n - m.interference.disturbed
    assert "were left out" in m.quality_reason


def test_a_core_made_busy_shows_as_waiting_and_is_never_ok_when_it_dominates():
    """A bounded busy loop pinned to the measuring thread's core, in a session of its own."""
    if not hasattr(os, "sched_setaffinity") or not os.path.exists("/proc/self/task"):
        pytest.skip("needs Linux affinity and schedstat")
    import torch

    cpu = sorted(os.sched_getaffinity(0))[0]
    old_aff, old_threads = os.sched_getaffinity(0), torch.get_num_threads()
    code = f"import os,time\nos.sched_setaffinity(0,{{{cpu}}})\nt=time.time()+4\nwhile time.time()<t: pass\n"
    busy = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    try:
        os.sched_setaffinity(0, {cpu})
        torch.set_num_threads(1)
        time.sleep(0.3)
        x = torch.randn(256, 256)
        m = measure(lambda: torch.mm(x, x), Budget(budget_ms=400, min_samples=5, precision=0.0))
    finally:
        busy.kill()
        busy.wait()
        os.sched_setaffinity(0, old_aff)
        torch.set_num_threads(old_threads)
    i = m.interference
    assert i.runq_wait_pct > 5 and i.disturbed > 0
    assert m.quality == "noisy" or i.runq_wait_pct <= itf.MAX_WAIT_PCT


def test_warning_line_counts_noisy_rows_and_says_what_helps():
    rows = [{"quality": "ok"}, {"quality": "noisy", "quality_reason": "other programs held the cores"}]
    line = itf.warning_line(rows)
    assert line.startswith("warning: 1 of 2 rows are noisy") and "other programs held the cores" in line
    assert itf.warning_line([{"quality": "ok"}]) == ""


def test_no_meter_no_verdict():
    gen = harness.measure_iter(lambda: None, Budget(budget_ms=5, min_samples=5, precision=0.0), meter=False)
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            m = stop.value
            break
    assert m.quality == "" and m.interference is None and m.n_stats == m.n


class _CountingSched(_FakeSched):
    """Counts reads; the 5th read finds that a thread waited 50 us for a core."""

    def read(self):
        self.calls += 1
        if self.calls == 5:
            self.wait += 50_000
        return (0, self.wait)


def test_short_calls_share_one_read_and_a_disturbed_group_marks_all_its_samples(monkeypatch):
    """The read after a call slows the next one (cold caches), so calls shorter than READ_EVERY_NS share
    a read; every sample of the group whose threads waited is left out, the others are kept."""
    from explorer.core.measure import harness

    monkeypatch.setattr(itf, "SchedReader", _CountingSched)
    monkeypatch.setattr(itf, "_cpu_ticks", lambda: None)
    monkeypatch.setattr(itf, "canary_best", lambda: None)
    reads = []
    orig = _CountingSched.read

    def spy(self):
        reads.append(1)
        return orig(self)

    monkeypatch.setattr(_CountingSched, "read", spy)

    class Clock:  # the test owns the time: each call takes exactly 20 us, whatever the host does
        ns = 0

        def perf_counter_ns(self):
            self.ns += 1
            return self.ns

    clock = Clock()
    monkeypatch.setattr(harness, "time", clock)

    def call_20us():
        clock.ns += 20_000

    m = measure(call_20us, Budget(budget_ms=30, min_samples=5, precision=0.0))
    per_group = -(-harness.READ_EVERY_NS // 20_000)  # the calls it takes to reach READ_EVERY_NS: 13
    assert m.n == pytest.approx(30_000_000 / 20_000, abs=2)
    assert len(reads) <= m.n / per_group + 4  # one read per group (and the loop's snapshots), not one per call
    assert m.waits_ns.size == m.n and m.disturbed.size == m.n
    hit = np.flatnonzero(m.disturbed)
    assert hit.size == per_group  # exactly one group, all of it
    assert (np.diff(hit) == 1).all()
    assert m.interference.disturbed == hit.size and m.n_stats == m.n - hit.size
    assert m.waits_ns.sum() == pytest.approx(50_000, abs=hit.size)  # the group's wait, shared, not multiplied
