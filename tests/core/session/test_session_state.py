"""The Qt-free session model (explorer.core.session.state): one apply per event, observers, saved whole."""

import json

import numpy as np
import pytest

from explorer.core.jobs.events import PathFinished, PathStarted, Samples, SweepFinished, SweepProgress
from explorer.core.measure.machine import Peak
from explorer.core.problem.spec import parse_descriptor
from explorer.core.problem.sweep_plan import SweepPoint
from explorer.core.report.results import Result
from explorer.core.session.state import (
    ModelDone,
    PeakMeasured,
    RunFinished,
    RunStarted,
    SessionState,
    SweepBegun,
    SweepRows,
)

SPEC = parse_descriptor("mb1ic8ih8oc8kh3ph1")


def _row(path, ms, spec=SPEC, threads=2, vary=""):
    r = Result(spec=spec, path=path, threads=threads, status="ok", median_ms=ms, p25_ms=ms, p75_ms=ms,
               gflops=spec.ops / ms / 1e6, samples=5)
    r.vary = vary
    r.samples_ms = np.array([ms] * 5)
    return r


def _peak(threads=2, fp32=100.0, bf16=None):
    return Peak(fp32, bf16, 10.0, threads, "now", "k")


def _report():
    from explorer.core.model.inventory import ConvSite, Inventory, Layer
    from explorer.core.model.report import LayerSummary, ModelReport, ModeResult

    site = ConvSite("conv1", "Conv2d", (1, 8, 8, 8), (8, 8, 3, 3), (1, 1), (1, 1), (1, 1), 1, True)
    lay = Layer(SPEC.replace(name="conv1"), ["conv1"], "Conv2d", (1, 8, 8, 8), SPEC.descriptor())
    inv = Inventory("tiny", (1, 8, 8, 8), "f32", [site], [lay])
    summ = LayerSummary(lay, {"dense": _row("dense", 1.0), "mkldnn": _row("mkldnn", 0.5)}, "mkldnn", 0.5, 2.0,
                        in_sequence={"dense": 1.1})
    mode = ModeResult("nchw", measured_ms=2.0, predicted_ms=2.2, slower_layers=["conv1"])
    return ModelReport(inv, [summ], [mode], threads=2, started_at="t0")


def test_apply_feeds_rows_and_job_and_tells_each_aspect():
    s = SessionState(SPEC, {"paths": ["dense", "mkldnn"], "threads": 2, "budget_ms": 5, "trace": False})
    seen = []
    s.subscribe("results", lambda a, c: seen.append((a, c[0])))
    s.subscribe("job", lambda a, c: seen.append((a, c[0])))
    s.apply(RunStarted(SPEC, s.options))
    assert s.job.kind == "run" and s.job.total == 2
    s.apply(PathStarted(SPEC, "dense", 0, 2))
    s.apply(Samples(SPEC, "dense", np.array([1.0]), 1, 0.002, 0.005))
    assert s.job.fraction() == pytest.approx(0.2)
    s.apply(PathFinished(_row("dense", 1.0)))
    assert [r.path for r in s.results] == ["dense"] and s.job.index == 1 and s.path_times.n == 1
    s.apply(RunFinished(False))
    assert s.job is None
    assert ("results", "reset") in seen and ("results", "added") in seen and ("job", "finished") in seen
    with pytest.raises(TypeError):
        s.apply(object())


def test_one_peak_object_and_a_failing_observer_does_not_stop_the_others():
    s = SessionState()
    got = []
    s.subscribe("peaks", lambda a, c: 1 / 0)
    s.subscribe("peaks", lambda a, c: got.append(c))
    p = _peak(2, 100.0, 200.0)
    s.apply(PeakMeasured(p))
    assert got == [p] and s.peaks.at(2) is p and s.errors
    r = _row("dense", 1.0)
    assert s.peaks.pct(r) == pytest.approx(100 * r.gflops / 100.0)
    assert s.peaks.gflops("bf16", 2) == 200.0 and s.peaks.gflops("f32", 4) is None


def test_sweep_rows_live_once_and_the_session_saves_and_loads_whole(tmp_path):
    s = SessionState(SPEC, {"paths": ["dense", "mkldnn"], "threads": 2, "budget_ms": 5, "trace": False})
    pts = [SweepPoint(0, {"g": 1}, SPEC), SweepPoint(1, {"g": 2}, SPEC.replace(g=2))]
    s.apply(SweepBegun(pts, {"mode": "line", "varies": "g=1,2", "paths": "dense,mkldnn", "budget_ms": 5},
                       "line", ("dense", "mkldnn")))
    s.apply(SweepRows([(0, _row("dense", 1.0, vary="g=1")), (0, _row("mkldnn", 0.5, vary="g=1"))]))
    s.apply(SweepProgress(1, 2, 0, 2, 0.1, 0.1))
    s.apply(SweepFinished(SweepProgress(2, 2, 0, 2, 0.2, 0.0), False))
    assert len(s.sweep.rows()) == 2 and s.sweep.data.ok_count() == 2 and s.job is None
    s.apply(PathFinished(_row("dense", 1.0)))
    s.set_baseline("dense")
    s.apply(ModelDone(_report()))
    path = tmp_path / "s.json"
    s.save(path)
    t = SessionState.load(path)
    assert [r.path for r in t.results] == ["dense"] and t.baseline == "dense"
    assert t.sweep.data.ok_count() == 2 and t.sweep.data.xs == [1, 2] and len(t.sweep.rows()) == 2
    rep = t.model_report
    assert rep.inventory.model == "tiny" and rep.inventory.sites[0].input_shape == (1, 8, 8, 8)
    assert rep.layers[0].layer is rep.inventory.layers[0] and rep.layers[0].best_path == "mkldnn"
    assert rep.layers[0].results["mkldnn"].median_ms == 0.5 and rep.layers[0].in_sequence == {"dense": 1.1}
    assert rep.modes[0].predicted_ms == 2.2 and rep.modes[0].slower_layers == ["conv1"]
    assert rep.answer() == _report().answer()


def test_the_sweeps_cluster_lives_in_the_session_and_its_rows_keep_their_host(tmp_path):
    s = SessionState(SPEC)
    seen = []
    s.subscribe("sweep", lambda _a, change: seen.append(change))
    s.set_cluster("  tcp://10.0.0.5:8786 ")
    s.set_cluster("tcp://10.0.0.5:8786")  # the same address: nothing to tell
    assert s.sweep.cluster == "tcp://10.0.0.5:8786" and seen == [("cluster", "tcp://10.0.0.5:8786")]
    s.refuse_cluster("no Dask scheduler answered at 'tcp://10.0.0.5:8786'.")
    assert s.sweep.cluster_error and len(seen) == 2
    s.set_cluster("tcp://10.0.0.6:8786")  # another address: the refusal was not about it
    assert s.sweep.cluster_error == ""
    # a cluster sweep's rows: Results with their host, kept by a session file
    pts = [SweepPoint(0, {"g": 1}, SPEC)]
    s.apply(SweepBegun(pts, {"mode": "line", "varies": "g=1", "paths": "dense", "cluster": s.sweep.cluster}))
    r = _row("dense", 1.0, vary="g=1")
    r.host, r.worker = "hostB", "tcp://10.0.0.7:40001"
    s.apply(SweepRows([(0, r)]))
    s.save(tmp_path / "c.json")
    t = SessionState.load(tmp_path / "c.json")
    (back,) = t.sweep.rows()
    assert (back.host, back.worker) == ("hostB", "tcp://10.0.0.7:40001")
    assert t.sweep.setup["cluster"] == "tcp://10.0.0.6:8786"


def test_a_row_comes_back_from_its_cells_as_the_result_it_was():
    from explorer.core.report.results import result_from_cells

    r = _row("mkldnn", 0.5, vary="g=1")
    r.quality, r.attempts, r.host = "noisy", 2, "hostB"
    back = result_from_cells({**r.row(), "host": "hostB", "worker": "w"}, SPEC)
    assert back.row() == r.row() and (back.host, back.worker) == ("hostB", "w")
    assert back.median_ms == 0.5 and back.samples == 5 and back.threads == 2 and back.noisy
    empty = result_from_cells({"path": "dense", "threads": "", "samples": "", "median_ms": ""}, SPEC)
    assert (empty.threads, empty.samples, empty.median_ms) == (0, 0, None)


def test_an_old_session_file_without_a_model_still_loads(tmp_path):
    from explorer.core.session.store import load_session, session_to_dict

    d = session_to_dict(SPEC, {}, [_row("dense", 1.0)])
    assert "model" not in d
    path = tmp_path / "old.json"
    path.write_text(json.dumps(d))
    assert load_session(path).model is None
    assert SessionState.load(path).model_report is None


def test_a_real_model_report_round_trips_with_the_same_answer_and_csv(tmp_path):
    from explorer.core.jobs.options import RunOptions
    from explorer.core.model import job as model_job
    from explorer.core.model import model_csv
    from explorer.core.model import report as model_report
    from explorer.core.session.store import model_from_dict, model_to_dict

    ropts = RunOptions(paths=("dense", "mkldnn"), budget_ms=5, min_samples=3, trace=False)
    mopts = model_report.ModelOptions(modes=("nchw", "to_mkldnn"), mode_budget_ms=10, min_samples=3)
    report = list(model_job.iter_model("tiny", "1,3,16,16", run_opts=ropts, model_opts=mopts, threads=1))[-1].report
    back = model_from_dict(json.loads(json.dumps(model_to_dict(report), allow_nan=False)), "t")
    assert back.answer() == report.answer()
    assert model_csv.report_rows(back) == model_csv.report_rows(report)


def test_a_model_plan_lives_in_the_session_while_it_runs():
    from explorer.core.model.report import ModeFinished, ModelFinished, ModelStarted
    from explorer.core.session.state import ModelLayerDone

    s = SessionState()
    seen = []
    s.subscribe("model", lambda a, c: seen.append(c))
    rep = _report()
    s.apply(ModelStarted(rep.inventory))
    s.apply(ModelLayerDone(0, _row("dense", 1.0)))
    assert s.model.inventory is rep.inventory and list(s.model.layer_results[0]) == ["dense"]
    assert s.model_report is None
    s.apply(ModeFinished(rep.modes[0]))
    s.apply(ModelFinished(rep))
    assert s.model_report is rep and s.model.modes == rep.modes
    assert set(s.model.layer_results[0]) == {"dense", "mkldnn"}  # from the report, as a reopened session's
    assert [c[0] for c in seen] == ["inventory", "layer", "mode", "report"] and seen[-1][1] is rep
    s.set_model_report(None)
    assert s.model.inventory is None and s.model.layer_results == {} and seen[-1] == ("report", None)
