"""Sweeps: every --vary form and its errors, divisors, grids, follow-up oh, skipped points, the event stream."""

import tracemalloc

import numpy as np
import pytest

from explorer.core.errors import InputError, SpecError
from explorer.core.jobs import run as runner_mod
from explorer.core.jobs.events import (
    PathFinished,
    PathStarted,
    PointFinished,
    PointSkipped,
    SweepFinished,
    SweepStarted,
)
from explorer.core.jobs.options import RunOptions
from explorer.core.jobs.run import RunContext
from explorer.core.jobs.sweep import iter_points, iter_sweep
from explorer.core.problem.spec import parse_descriptor
from explorer.core.problem.sweep_plan import (
    MAX_POINTS,
    common_divisors,
    divisors,
    given_keys,
    grid_shape,
    parse_label,
    parse_varies,
    parse_vary,
    plan_sweep,
    series,
)
from explorer.core.report.results import CsvSink, Result, read_csv

BASE = "mb2ic32ih28oc32oh28kh3ph1"
TINY = "mb1ic8ih6oc8kh3ph1"
CTX = RunContext(torch_version="t", onednn_version="o", isa="i", cpu="c")
FAST = RunOptions(paths=("dense",), budget_ms=5, min_samples=2, check=False, trace=False)


# ---- parsing ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, field, values", [
    ("g=1,2,4,8", "g", (1, 2, 4, 8)),
    ("mb=1:64:x2", "mb", (1, 2, 4, 8, 16, 32, 64)),
    ("mb=3:100:x3", "mb", (3, 9, 27, 81)),
    ("mb=1:64:*4", "mb", (1, 4, 16, 64)),
    ("ic=16:64:+16", "ic", (16, 32, 48, 64)),
    ("ic=16:70:+16", "ic", (16, 32, 48, 64)),
    ("ic=16:70:16", "ic", (16, 32, 48, 64)),
    ("ih=5:8", "ih", (5, 6, 7, 8)),
    ("kh=3:3:+1", "kh", (3,)),
    ("ph=0,1,2", "ph", (0, 1, 2)),
    ("dh=0:2", "dh", (0, 1, 2)),
    ("mb=1,4:16:x2,3", "mb", (1, 4, 8, 16, 3)),
    ("g=2,2,4", "g", (2, 4)),
    (" SW = 1,2 ", "sw", (1, 2)),
    ("dtype=f32,bf16,f16", "dtype", ("f32", "bf16", "f16")),
    ("dtype=float32,bfloat16", "dtype", ("f32", "bf16")),
    ("threads=1", "threads", (1,)),
])
def test_vary_forms(text, field, values):
    v = parse_vary(text)
    assert (v.field, v.values, v.divisors) == (field, values, False)


def test_every_field_can_vary():
    for f in ("mb", "ic", "oc", "ih", "iw", "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw", "g", "threads"):
        assert parse_vary(f"{f}=1").values == (1,)


def test_divisors_form():
    v = parse_vary("g=divisors")
    assert v.field == "g" and v.divisors and v.values == ()
    assert v.values_for(parse_descriptor("ic12ih4oc18kh1")) == (1, 2, 3, 6)


@pytest.mark.parametrize("text, field, words", [
    ("x=1,2", "x", "choose one of"),
    ("oh=1,2", "oh", "computed"),
    ("g=", "g", "empty"),
    ("g=,", "g", "empty"),
    ("mb=1,,2", "mb", "empty item"),
    ("mb=64:1:x2", "mb", "backwards"),
    ("ic=16:256:+0", "ic", "zero"),
    ("ic=16:256:0", "ic", "zero"),
    ("mb=1:64:x1", "mb", "never grows"),
    ("mb=1:64:x0", "mb", "never grows"),
    ("mb=1:64:x1.5", "mb", "ratio"),
    ("mb=1:64:+a", "mb", "step"),
    ("ph=0:64:x2", "ph", "cannot start at 0"),
    ("mb=1:100000", "mb", "more than the limit"),
    ("mb=1:2:3:4", "mb", "range"),
    ("mb=a,b", "mb", "not a whole number"),
    ("mb=1.5", "mb", "not a whole number"),
    ("mb=-1", "mb", "negative"),
    ("mb=0", "mb", "below the smallest"),
    ("ih=99999999999", "ih", "above the largest"),
    ("ic=divisors", "ic", "only for g"),
    ("dtype=f64", "dtype", "not a data type"),
    ("dtype=1:4", "dtype", "not a data type"),
    ("threads=9999", "threads", "threads"),
    ("g", "vary", "no '='"),
])
def test_vary_errors_are_one_sentence_naming_the_field(text, field, words):
    with pytest.raises(InputError) as e:
        parse_vary(text)
    msg = str(e.value)
    assert e.value.field == field
    assert words in msg
    assert "\n" not in msg and msg.endswith(".")
    if field not in ("x", "oh", "vary", "dtype"):
        assert f"{field}=1:64:x2" in msg  # the allowed forms, spelled for this field


def test_parse_varies_limits():
    assert [v.field for v in parse_varies(["g=1,2", "mb=1,2"])] == ["g", "mb"]
    with pytest.raises(InputError, match="twice"):
        parse_varies(["g=1,2", "g=4"])
    with pytest.raises(InputError, match="at most 2"):
        parse_varies(["g=1", "mb=1", "ic=16"])
    with pytest.raises(InputError, match="needs --vary"):
        parse_varies([])


def test_divisors():
    assert divisors(1) == [1]
    assert divisors(12) == [1, 2, 3, 4, 6, 12]
    assert divisors(49) == [1, 7, 49]
    assert divisors(0) == []
    assert common_divisors(32, 48) == [1, 2, 4, 8, 16]
    assert common_divisors(17, 16) == [1]


# ---- planning ---------------------------------------------------------------------------------------
def test_g_divisors_plan():
    pts = plan_sweep(BASE, ["g=divisors"])
    assert [p.values["g"] for p in pts] == [1, 2, 4, 8, 16, 32]
    assert [p.label for p in pts] == ["g=1", "g=2", "g=4", "g=8", "g=16", "g=32"]
    assert not any(p.skipped for p in pts)
    assert pts[-1].spec.g == 32 and pts[-1].spec.ic == 32


def test_two_fields_give_the_full_grid_in_vary_order():
    pts = plan_sweep(BASE, ["mb=1:4:x2", "g=1,2"])
    assert [p.label for p in pts] == ["mb=1;g=1", "mb=1;g=2", "mb=2;g=1", "mb=2;g=2", "mb=4;g=1", "mb=4;g=2"]
    assert [p.index for p in pts] == list(range(6))
    assert grid_shape(pts) == ([1, 2, 4], [1, 2])


def test_divisors_resolve_per_point_in_a_grid():
    pts = plan_sweep("mb1ic12ih4oc12kh1", ["g=divisors", "ic=12,18"])
    labels = [p.label for p in pts]
    # g divides gcd(ic, 12): ic=12 -> 1,2,3,4,6,12; ic=18 -> 1,2,3,6; g is the outer loop as given
    assert labels == ["g=1;ic=12", "g=1;ic=18", "g=2;ic=12", "g=2;ic=18", "g=3;ic=12", "g=3;ic=18",
                      "g=4;ic=12", "g=6;ic=12", "g=6;ic=18", "g=12;ic=12"]
    assert not any(p.skipped for p in pts)


def test_oh_follows_ih_and_iw_follows_unless_given():
    pts = plan_sweep(BASE, ["ih=14,56"])
    assert [(p.spec.ih, p.spec.iw, p.spec.oh, p.spec.ow) for p in pts] == [(14, 14, 14, 14), (56, 56, 56, 56)]
    pts = plan_sweep("mb2ic8ih28iw20oc8kh3kw3ph1pw1", ["ih=14"])
    assert (pts[0].spec.ih, pts[0].spec.iw, pts[0].spec.oh, pts[0].spec.ow) == (14, 20, 14, 20)
    pts = plan_sweep(BASE, ["kh=1,5"])  # kw follows kh; oh follows with ph fixed
    assert [(p.spec.kw, p.spec.oh) for p in pts] == [(1, 30), (5, 26)]
    pts = plan_sweep(BASE, ["sh=2"])
    assert (pts[0].spec.sw, pts[0].spec.oh, pts[0].spec.ow) == (2, 14, 14)


def test_given_keys():
    assert given_keys('mb2ic8ih28iw20oc8kh3ph1n"x"') == {"mb", "ic", "ih", "iw", "oc", "kh", "ph"}


def test_invalid_combinations_are_skipped_points_with_the_spec_sentence():
    pts = plan_sweep(BASE, ["g=1,3,4"])
    assert [p.skipped for p in pts] == [False, True, False]
    bad = pts[1]
    assert bad.error == "g=3 does not divide ic=32: groups must divide the input channels."
    assert bad.error_field == "g"
    pts = plan_sweep("mb1ic8ih5oc8kh3ph0", ["kh=3,7"])
    assert pts[1].skipped and pts[1].error_field == "kh"


def test_dtype_and_threads_points():
    pts = plan_sweep(BASE, ["dtype=f32,bf16", "threads=1"])
    assert [(p.spec.dtype, p.threads, p.label) for p in pts] == [("f32", 1, "dtype=f32;threads=1"),
                                                                  ("bf16", 1, "dtype=bf16;threads=1")]


def test_too_many_points():
    with pytest.raises(InputError, match="more than the limit"):
        plan_sweep(BASE, ["mb=1:200", "ic=1:100"])
    with pytest.raises(InputError, match=f"more than {MAX_POINTS} points"):
        plan_sweep("mb1ic5040ih4oc5040kh1", ["g=divisors", "mb=1:400"])


def test_plan_from_a_spec():
    spec = parse_descriptor(BASE)
    assert [p.spec.g for p in plan_sweep(spec, ["g=1,2"])] == [1, 2]


# ---- running ----------------------------------------------------------------------------------------
def _kinds(events):
    # Samples and PathRetry (a loop another program disturbed, measured again) depend on the machine's load
    return [type(e).__name__ for e in events if type(e).__name__ not in ("Samples", "PathRetry")]


def test_iter_points_events_rows_and_progress():
    events = list(iter_sweep(TINY, ["g=1,3,2"], FAST, ctx=CTX))
    assert isinstance(events[0], SweepStarted) and events[0].total == 3 and events[0].runnable == 2
    assert _kinds(events) == [
        "SweepStarted",
        "PointStarted", "PathStarted", "PathFinished", "PointFinished",
        "PointSkipped",
        "PointStarted", "PathStarted", "PathFinished", "PointFinished",
        "SweepFinished",
    ]
    finished = [e.result for e in events if isinstance(e, PathFinished)]
    assert [r.vary for r in finished] == ["g=1", "g=2"]
    assert all(r.status == "ok" and r.median_ms > 0 for r in finished)
    skipped = next(e for e in events if isinstance(e, PointSkipped))
    assert skipped.row["status"] == "skipped" and skipped.row["vary"] == "g=3"
    assert skipped.row["error"].startswith("g=3 does not divide ic=8")
    assert skipped.row["desc"] == "g3mb1ic8ih6oc8oh6kh3ph1"
    done = [e.progress.done for e in events if isinstance(e, (PointFinished, PointSkipped))]
    assert done == [1, 2, 3]
    end = events[-1]
    assert isinstance(end, SweepFinished) and not end.cancelled and end.progress.rows == 3
    assert end.progress.eta_s == 0 and end.progress.fraction == 1.0
    assert events[1].progress.eta_s > 0  # an estimate before anything ran


def test_details_dropped_after_each_row_unless_kept():
    kept_during = []
    results = []
    for ev in iter_sweep(TINY, ["mb=1,2"], FAST, ctx=CTX):
        if isinstance(ev, PathFinished):
            kept_during.append(ev.result.samples_ms is not None)
            results.append(ev.result)
    assert kept_during == [True, True]
    assert all(r.samples_ms is None for r in results)
    res = [ev.result for ev in iter_sweep(TINY, ["mb=1"], FAST, ctx=CTX, keep_details=True) if isinstance(ev, PathFinished)]
    assert res[0].samples_ms is not None


def test_cancel_stops_between_points():
    seen = []

    def cancel():
        return len(seen) >= 1

    events = []
    for ev in iter_sweep(TINY, ["mb=1,2,3"], FAST, cancel=cancel, ctx=CTX):
        events.append(ev)
        if isinstance(ev, PointFinished):
            seen.append(ev)
    assert len(seen) == 1
    assert isinstance(events[-1], SweepFinished) and events[-1].cancelled


def test_memory_guard_refusal_becomes_a_skipped_point(monkeypatch):
    real = runner_mod.check_memory

    def guard(spec, paths, available=None):
        if spec.mb == 2:
            raise SpecError("this convolution needs about 9 GiB but only 1 GiB is available now.", "mb")
        return real(spec, paths, available)

    monkeypatch.setattr(runner_mod, "check_memory", guard)
    events = list(iter_sweep(TINY, ["mb=1,2"], FAST, ctx=CTX))
    skipped = [e for e in events if isinstance(e, PointSkipped)]
    assert len(skipped) == 1 and "9 GiB" in skipped[0].row["error"] and skipped[0].row["vary"] == "mb=2"
    assert events[-1].progress.done == 2 and events[-1].progress.skipped == 1


def test_failure_outside_a_path_is_an_error_row_per_path(monkeypatch):
    from explorer.core.paths import base as paths_mod

    def boom(spec, seed=0):
        raise RuntimeError("cannot allocate memory\nmore detail")

    monkeypatch.setattr(paths_mod.Tensors, "make", classmethod(lambda cls, spec, seed=0: boom(spec)))
    opts = RunOptions(paths=("dense", "mkldnn"), budget_ms=5, check=False, trace=False)
    events = list(iter_sweep(TINY, ["mb=1"], opts, ctx=CTX))
    rows = [e.result for e in events if isinstance(e, PathFinished)]
    assert [(r.path, r.status, r.error) for r in rows] == [("dense", "error", "cannot allocate memory"),
                                                           ("mkldnn", "error", "cannot allocate memory")]
    assert isinstance(events[-1], SweepFinished)


def test_memory_stays_flat_over_a_thousand_points(monkeypatch, tmp_path):
    """The generator keeps no finished results: 1,000 points with 1 MB of samples each stay flat."""

    def fake_iter_run(spec, opts=None, cancel=None, ctx=None, vary=""):
        yield PathStarted(spec, "dense", 0, 1)
        r = Result(spec=spec, path="dense", threads=1, median_ms=1.0, vary=vary)
        r.samples_ms = np.ones(125_000)  # 1 MB
        r.trace = [object()] * 100
        yield PathFinished(r)

    monkeypatch.setattr(runner_mod, "iter_run", fake_iter_run)
    points = plan_sweep("mb1ic8ih4oc8kh1", ["ic=8:8000:+8"])
    assert len(points) == 1000
    sink = CsvSink(tmp_path / "big.csv")
    tracemalloc.start()
    base = None
    peak_after = 0
    for i, ev in enumerate(iter_points(points, RunOptions(paths=("dense",), budget_ms=5), ctx=CTX)):
        if isinstance(ev, PathFinished):
            sink.add(ev.result)
        if isinstance(ev, PointFinished) and ev.progress.done == 50:
            base = tracemalloc.get_traced_memory()[0]
        if base is not None:
            peak_after = max(peak_after, tracemalloc.get_traced_memory()[0])
    tracemalloc.stop()
    assert peak_after - base < 4_000_000  # at most a few samples arrays in flight, not 950 MB
    assert len(read_csv(tmp_path / "big.csv")) == 1000


def test_sink_is_a_valid_csv_after_every_row(tmp_path):
    path = tmp_path / "s.csv"
    sink = CsvSink(path)
    sink.flush()
    assert read_csv(path) == []
    spec = parse_descriptor(TINY)
    for i in range(3):
        sink.add(Result(spec=spec, path="dense", threads=1, median_ms=float(i + 1), vary=f"mb={i}"))
        rows = read_csv(path)
        assert len(rows) == i + 1 and rows[-1]["median_ms"] == i + 1
    sink.add({"desc": "x", "status": "skipped", "error": "a, \"quoted\" reason"})
    assert read_csv(path)[-1]["error"] == 'a, "quoted" reason'
    assert sink.count == 4
    nowhere = CsvSink(None)
    nowhere.add({"status": "ok"})
    assert nowhere.count == 1


def test_series_for_charts_from_results_or_csv_rows(tmp_path):
    spec = parse_descriptor(TINY)
    mk = lambda path, vary, g, status="ok": Result(spec=spec, path=path, threads=1, gflops=g, vary=vary,  # noqa: E731
                                                    median_ms=1.0, status=status)
    res = [mk("dense", "mb=4;g=1", 4.0), mk("dense", "mb=1;g=1", 1.0), mk("mkldnn", "mb=1;g=1", 2.0),
           mk("dense", "mb=1;g=2", 3.0), mk("dense", "mb=2;g=1", None, "error")]
    assert parse_label("mb=4;dtype=bf16") == {"mb": 4, "dtype": "bf16"} and parse_label("") == {}
    assert series(res, "mb") == {("dense",): ([1, 1, 4], [1.0, 3.0, 4.0]), ("mkldnn",): ([1], [2.0])}
    assert series(res, "mb", by="g") == {("dense", 1): ([1, 4], [1.0, 4.0]), ("mkldnn", 1): ([1], [2.0]),
                                         ("dense", 2): ([1], [3.0])}
    sink = CsvSink(tmp_path / "r.csv")
    for r in res:
        sink.add(r)
    assert series(read_csv(tmp_path / "r.csv"), "mb", by="g") == series(res, "mb", by="g")


def test_a_sweep_of_a_named_layer_names_only_points_of_its_shape():
    """Issue 12: varying g of resnet_50:res2a_branch2b does not label every point with that layer's name."""
    pts = plan_sweep('mb1ic64ih56oc64oh56kh3ph1n"resnet_50:res2a_branch2b"', ["g=1,2,64"])
    assert [p.spec.name for p in pts] == ["resnet_50:res2a_branch2b", "", ""]
    pts = plan_sweep('mb1ic64ih56oc64oh56kh3ph1n"resnet_50:res2a_branch2b"', ["dtype=f32,bf16"])
    assert all(p.spec.name == "resnet_50:res2a_branch2b" for p in pts)
