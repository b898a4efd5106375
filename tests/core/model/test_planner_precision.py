"""The per-layer table stops a quiet loop once its median is known to the planner's precision (2%), not
run's 0.5%, which kept every quiet loop to its full budget (issue 36, a verdict in 30 s); the CLI's table,
a cluster's included, is timed at it, and a precision that is no fraction is refused in one sentence."""

import pytest

from explorer.core.errors import InputError
from explorer.core.jobs import sweep
from explorer.core.jobs.options import RunOptions
from explorer.core.measure.harness import DEFAULT_PRECISION
from explorer.core.model import job as model_job
from explorer.core.model import report as model_report


def _asked_precision(monkeypatch, **mopts):
    asked = {}
    real = sweep.iter_points

    def spy(points, opts, cancel, ctx, **kw):  # iter_model imports it from there at call time
        asked["precision"] = opts.precision
        return real(points, opts, cancel, ctx, **kw)

    monkeypatch.setattr(sweep, "iter_points", spy)
    ropts = RunOptions(paths=("dense",), budget_ms=5, min_samples=3, trace=False)
    mopts = model_report.ModelOptions(modes=("nchw",), mode_budget_ms=10, min_samples=3, **mopts)
    list(model_job.iter_model("tiny", "1,3,16,16", run_opts=ropts, model_opts=mopts, threads=1))
    return asked["precision"]


def test_the_per_layer_loops_stop_at_the_planners_precision(monkeypatch):
    assert model_report.PLANNER_PRECISION > DEFAULT_PRECISION
    assert _asked_precision(monkeypatch) == model_report.PLANNER_PRECISION
    assert _asked_precision(monkeypatch, precision=0.01) == 0.01


@pytest.mark.parametrize("bad", [0, 1, -0.5, float("nan"), "2%"])
def test_a_precision_that_is_no_fraction_is_refused(bad):
    with pytest.raises(InputError, match="precision must be a fraction"):
        model_report.ModelOptions(precision=bad).validate()


def test_the_cli_times_its_table_at_the_planners_precision(monkeypatch):
    from explorer.cli import main as cli_main
    from explorer.cli import model as cli_model

    seen = {}
    real = cli_model.measured_events

    def spy(*job, **kw):  # the job runs in the measuring process: its options are read on the way there
        seen["precision"] = job[6].precision
        return real(*job, **kw)

    monkeypatch.setattr(cli_model, "measured_events", spy)
    code = cli_main(["model", "tiny", "--input", "1,3,16,16", "--modes", "nchw", "--budget-ms", "5",
                     "--mode-budget-ms", "10", "--no-trace", "--paths", "dense"])
    assert code == 0 and seen["precision"] == model_report.PLANNER_PRECISION
