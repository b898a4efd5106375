"""`default` stands for a user's fresh script: its loop is timed before the f32 reference, the trace and
the profile (the reference's large im2col buffer moved glibc's thresholds: 0 faults a call against 556 in
a plain script), and every path of a run gets a measuring process of its own."""

from __future__ import annotations

import dataclasses

from explorer.core.jobs import run as run_mod
from explorer.core.jobs.events import PathFinished, PathStarted
from explorer.core.jobs.options import RunOptions
from explorer.core.paths.base import Tensors
from explorer.core.problem.spec import parse_descriptor
from explorer.core.process import measuring

SPEC = "mb1ic8ih6oc8oh6kh3ph1"


def _order(monkeypatch, allocator: str) -> list[str]:
    seen: list[str] = []
    real_reference, real_measure, real_trace = Tensors.reference, run_mod.measure_iter, run_mod._add_trace

    def reference(self):
        seen.append("reference")
        return real_reference(self)

    def measure_iter(*a, **k):
        seen.append("timed")
        return (yield from real_measure(*a, **k))

    def add_trace(*a, **k):
        seen.append("trace")
        return real_trace(*a, **k)

    monkeypatch.setattr(Tensors, "reference", reference)
    monkeypatch.setattr(run_mod, "measure_iter", measure_iter)
    monkeypatch.setattr(run_mod, "_add_trace", add_trace)
    rows = run_mod.run(parse_descriptor(SPEC), RunOptions(paths=("dense",), budget_ms=5, threads=1, allocator=allocator))
    assert rows[0].status == "ok" and rows[0].max_abs_err is not None and rows[0].conv_impl is not None
    return list(dict.fromkeys(seen))  # a disturbed loop is measured again: each step once, in order


def test_default_times_before_the_reference_and_the_trace(monkeypatch):
    assert _order(monkeypatch, "default") == ["timed", "reference", "trace"]


def test_tuned_keeps_checking_first(monkeypatch):
    assert _order(monkeypatch, "tuned") == ["reference", "trace", "timed"]


class _FakeChild:
    """Stands in for the measuring process: records the paths of every job it is given."""

    def __init__(self):
        self.jobs: list[tuple[str, ...]] = []
        self.cancelled = False

    def iter(self, kind, spec, opts, *rest, pace=False, **kw):
        self.jobs.append(tuple(opts.paths))
        from explorer.core.report.results import Result

        for p in opts.paths:
            yield PathStarted(spec, p, 0, len(opts.paths))
            yield PathFinished(Result(spec=spec, path=p, threads=1))


class _FakePool:
    def __init__(self):
        self.child = _FakeChild()
        self.asked: list[str] = []

    def get(self, allocator, isa=None):  # the pool keys on (allocator, ISA cap)
        self.asked.append(allocator)
        return self.child


def _events(monkeypatch, allocator):
    fake = _FakePool()
    monkeypatch.setattr(measuring, "pool", lambda: fake)
    monkeypatch.setattr(measuring, "in_child", lambda: True)
    opts = RunOptions(paths=("dense", "channels_last", "native"), budget_ms=5, allocator=allocator)
    evs = list(measuring.events("run", parse_descriptor(SPEC), opts, allocator=allocator))
    return fake, evs


def test_default_runs_each_path_in_a_job_of_its_own(monkeypatch):
    fake, evs = _events(monkeypatch, "default")
    assert fake.child.jobs == [("dense",), ("channels_last",), ("native",)]  # fresh_per_job: a process each
    started = [(e.path, e.index, e.total) for e in evs if isinstance(e, PathStarted)]
    assert started == [("dense", 0, 3), ("channels_last", 1, 3), ("native", 2, 3)]  # read as one run


def test_tuned_runs_the_paths_in_one_job(monkeypatch):
    fake, _ = _events(monkeypatch, "tuned")
    assert fake.child.jobs == [("dense", "channels_last", "native")]


def test_a_cancelled_default_run_starts_no_further_path(monkeypatch):
    fake = _FakePool()
    real_iter = fake.child.iter

    def iter_then_cancel(*a, **k):
        yield from real_iter(*a, **k)
        fake.child.cancelled = True

    monkeypatch.setattr(fake.child, "iter", iter_then_cancel)
    monkeypatch.setattr(measuring, "pool", lambda: fake)
    monkeypatch.setattr(measuring, "in_child", lambda: True)
    opts = dataclasses.replace(RunOptions(paths=("dense", "native"), budget_ms=5), allocator="default")
    list(measuring.events("run", parse_descriptor(SPEC), opts, allocator="default"))
    assert fake.child.jobs == [("dense",)]
