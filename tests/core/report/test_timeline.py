"""Timeline export: Chrome trace-event JSON that Perfetto / chrome://tracing accept, one slice per timed call.

The structure is checked against the Trace Event Format's rules (not against our own writer): a JSON object
with a traceEvents list; every event has name, ph, pid, tid and (for X and M events here) ts; complete
events (ph "X") have a non-negative dur; metadata events (ph "M") name a process or thread in args.name;
slices on one track nest (a child lies inside its parent) or follow each other, never overlap partially.
"""

import csv
import json

import pytest

from explorer.cli import main
from explorer.core.jobs.options import RunOptions
from explorer.core.jobs.run import run
from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.timeline import CALL_CAT, Timeline

TINY = "mb1ic8ih8oc8oh8kh3ph1"
PHASES = {"X", "M", "B", "E", "i", "I", "C", "b", "e", "n", "s", "t", "f", "P", "O", "N", "D"}


def check_trace_events(doc) -> list[dict]:
    """Validate a trace-event JSON document; returns its events. Raises AssertionError with the reason."""
    assert isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list), "needs a traceEvents list"
    if "displayTimeUnit" in doc:
        assert doc["displayTimeUnit"] in ("ms", "ns")
    events = doc["traceEvents"]
    for ev in events:
        for key in ("name", "ph", "pid", "tid"):
            assert key in ev, f"{key} missing in {ev}"
        assert isinstance(ev["name"], str) and ev["name"]
        assert ev["ph"] in PHASES, ev
        assert isinstance(ev["pid"], int) and isinstance(ev["tid"], int)
        if ev["ph"] == "X":
            assert isinstance(ev.get("ts"), (int, float)) and isinstance(ev.get("dur"), (int, float)), ev
            assert ev["dur"] >= 0 and ev["ts"] >= 0, ev
        if ev["ph"] == "C":
            assert isinstance(ev.get("ts"), (int, float)) and ev["args"], ev
            assert all(isinstance(v, (int, float)) for v in ev["args"].values()), ev
        if ev["ph"] == "M":
            assert ev["name"] in ("process_name", "thread_name", "process_sort_index", "thread_sort_index"), ev
            assert "name" in ev["args"] or "sort_index" in ev["args"], ev
        if "args" in ev:
            assert isinstance(ev["args"], dict)
    # Complete events on one track must nest properly (the importer builds a slice stack per thread).
    by_tid: dict[tuple, list] = {}
    for ev in events:
        if ev["ph"] == "X":
            by_tid.setdefault((ev["pid"], ev["tid"]), []).append(ev)
    eps = 0.002  # ts/dur are rounded to 1 ns (3 decimals of a microsecond)
    for slices in by_tid.values():
        stack: list[float] = []
        for ev in sorted(slices, key=lambda e: (e["ts"], -e["dur"])):
            start, end = ev["ts"], ev["ts"] + ev["dur"]
            while stack and stack[-1] <= start + eps:
                stack.pop()
            assert not stack or end <= stack[-1] + eps, f"{ev['name']} overlaps its parent partially"
            stack.append(end)
    return events


@pytest.fixture(scope="module")
def results():
    return run(parse_descriptor(TINY), RunOptions(paths=("dense", "native", "mkldnn"), budget_ms=10))


def test_timeline_is_valid_and_has_one_slice_per_sample(results):
    tl = Timeline()
    for r in results:
        tl.add(r)
    doc = json.loads(json.dumps(tl.to_dict()))
    events = check_trace_events(doc)
    calls = [e for e in events if e.get("cat") == CALL_CAT]
    assert len(calls) == sum(r.samples for r in results) == tl.sample_count
    # one named track per path, each call on its path's track
    names = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert sorted(names.values()) == sorted(r.path for r in results)
    for r in results:
        tid = next(t for t, n in names.items() if n == r.path)
        mine = [e for e in calls if e["tid"] == tid]
        assert len(mine) == r.samples
        assert [e["dur"] for e in mine] == pytest.approx([ms * 1e3 for ms in r.samples_ms], abs=0.002)
        starts = [e["ts"] for e in mine]
        assert starts == sorted(starts)


def test_primitives_and_aten_ops_nest_under_their_calls(results):
    tl = Timeline()
    for r in results:
        tl.add(r)
    events = check_trace_events(tl.to_dict())
    mk = next(r for r in results if r.path == "mkldnn")
    onednn = [e for e in events if e.get("cat") == "onednn"]
    assert len(onednn) == len([p for r in results for p in r.trace])
    traced = [e for e in events if e["name"] == "traced call"]
    assert len(traced) == len(results)
    aten = [e for e in events if e.get("cat") == "aten" and e["name"] != "profiled call"]
    assert len(aten) == sum(len(r.aten) for r in results)
    assert any(e["name"] == "aten::mkldnn_convolution" for e in aten)
    for e in onednn:  # inside the traced call of the same track
        parent = next(t for t in traced if t["tid"] == e["tid"])
        assert parent["ts"] - 0.002 <= e["ts"] and e["ts"] + e["dur"] <= parent["ts"] + parent["dur"] + 0.002
    assert mk.trace and any(e["name"].startswith("convolution ") for e in onednn)


def test_run_cli_writes_the_timeline(tmp_path):
    out, tl = tmp_path / "r.csv", tmp_path / "t.json"
    assert main(["run", TINY, "--paths", "dense,mkldnn", "--budget-ms", "5", "--csv", str(out),
                 "--timeline", str(tl)]) == 0
    events = check_trace_events(json.loads(tl.read_text()))
    rows = list(csv.DictReader(out.open()))
    assert len([e for e in events if e.get("cat") == CALL_CAT]) == sum(int(r["samples"]) for r in rows)
    # never overwritten without --force
    assert main(["run", TINY, "--paths", "dense", "--budget-ms", "5", "--timeline", str(tl)]) == 2


def test_sweep_cli_timeline_counts_every_point(tmp_path):
    out, tl = tmp_path / "s.csv", tmp_path / "s.json"
    assert main(["sweep", TINY, "--vary", "mb=1,2", "--paths", "dense", "--budget-ms", "5", "--no-trace",
                 "--csv", str(out), "--timeline", str(tl)]) == 0
    events = check_trace_events(json.loads(tl.read_text()))
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 2
    assert len([e for e in events if e.get("cat") == CALL_CAT]) == sum(int(r["samples"]) for r in rows)
    loops = [e for e in events if e["name"] == "timed loop"]
    assert sorted(e["args"]["spec"].split()[0] for e in loops) == sorted(r["desc"] for r in rows)


def test_checker_rejects_what_perfetto_would():
    with pytest.raises(AssertionError):
        check_trace_events({"traceEvents": [{"name": "x", "ph": "X", "ts": 0, "pid": 1, "tid": 1}]})  # no dur
    with pytest.raises(AssertionError):
        check_trace_events({"traceEvents": [{"ph": "X", "ts": 0, "dur": 1, "pid": 1, "tid": 1}]})  # no name
    with pytest.raises(AssertionError):  # partial overlap on one track
        check_trace_events({"traceEvents": [{"name": "a", "ph": "X", "ts": 0, "dur": 10, "pid": 1, "tid": 1},
                                            {"name": "b", "ph": "X", "ts": 5, "dur": 10, "pid": 1, "tid": 1}]})


def test_core_waits_become_a_counter_track_when_recorded(results):
    """The harness may record per-sample run-queue waits (sample_waits_ns): each nonzero one is drawn."""
    import numpy as np

    r = results[0]
    waits = np.zeros(r.samples, dtype=np.int64)
    waits[1] = 40_000  # 40 us on the second call
    r.sample_waits_ns = waits
    try:
        tl = Timeline()
        tl.add(r)
        events = check_trace_events(tl.to_dict())
    finally:
        del r.sample_waits_ns
    counters = [e for e in events if e["ph"] == "C"]
    assert [e["args"]["wait_us"] for e in counters] == [40.0, 0.0]
    second = [e for e in events if e.get("cat") == CALL_CAT][1]
    assert counters[0]["ts"] == second["ts"] and counters[1]["ts"] == pytest.approx(second["ts"] + second["dur"])
