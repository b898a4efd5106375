"""No work done twice in a plan (issue 36 item 4): the drift reference timed right after one mode is the next
mode's "before" (nothing runs between the two), and the per-layer table hands the paths no mode runs on an
early stop while the paths the modes run on keep their full budget."""

from explorer.core.jobs.options import RunOptions
from explorer.core.model import job as model_job
from explorer.core.model import report as model_report


def test_the_reference_is_timed_once_between_two_modes_and_only_ranking_paths_may_stop_early(monkeypatch):
    calls = []
    real = model_job.time_reference
    monkeypatch.setattr(model_job, "time_reference", lambda ref, cancel: calls.append(1) or real(ref, cancel))
    asked = {}
    from explorer.core.jobs import sweep

    real_points = sweep.iter_points

    def spy(points, opts, cancel, ctx, decide_for=None, **kw):  # iter_model imports it from there at call time
        asked["decide_for"] = decide_for
        if decide_for is not None:
            kw["decide_for"] = decide_for
        return real_points(points, opts, cancel, ctx, **kw)

    monkeypatch.setattr(sweep, "iter_points", spy)
    modes = ("nchw", "channels_last", "to_mkldnn")
    ropts = RunOptions(paths=("dense", "channels_last", "native", "mkldnn"), budget_ms=5, min_samples=3, trace=False)
    mopts = model_report.ModelOptions(modes=modes, mode_budget_ms=10, min_samples=3)
    evs = list(model_job.iter_model("tiny", "1,3,16,16", run_opts=ropts, model_opts=mopts, threads=1))
    report = evs[-1].report
    ok = [m for m in report.modes if m.status == "ok"]
    assert len(ok) == len(modes) and all(m.host_drift_pct is not None for m in ok)
    assert len(calls) == len(modes) + 1  # before the first mode, then once after each (was twice per mode)
    d = asked["decide_for"]
    done = [r for s in report.layers[:1] for r in s.results.values()]
    assert d("dense", done) is None and d("channels_last", done) is None and d("mkldnn", done) is None
    assert d("native", done) is not None
