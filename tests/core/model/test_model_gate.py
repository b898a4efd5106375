"""Issue #37: the planner never shows a wrong output as a speedup. A mode whose output holds NaN/inf, or is
off beyond its dtype's tolerance, is `wrong output` (not `ok`) in the report, the CLI table and the CSV, and is
never the answer. main marked an all-NaN mode `ok`, "~2.17x faster", its error blank."""

import csv
import io
import math

import pytest
import torch

from explorer.core.jobs.options import RunOptions
from explorer.core.model import job as model_job
from explorer.core.model import model_csv
from explorer.core.model import modes as model_modes
from explorer.core.model import report as model_report
from explorer.core.model import surgery as model_surgery

MODES = ("nchw", "channels_last", "to_mkldnn")


def _spoil(monkeypatch, mode, how):
    """The mode's forward gives how(its real output): a wrong kernel, faked where the planner prepares it."""
    real = model_modes.prepare_mode

    def prepare(name, *a, **k):
        prep = real(name, *a, **k)
        if name == mode:
            fn = prep.fn
            prep.fn = lambda: how(fn())
        return prep

    monkeypatch.setattr(model_modes, "prepare_mode", prepare)


def _plan():
    ropts = RunOptions(paths=("dense", "channels_last", "mkldnn"), budget_ms=5, min_samples=3, trace=False)
    mopts = model_report.ModelOptions(modes=MODES, mode_budget_ms=10, min_samples=3)
    return list(model_job.iter_model("tiny", "1,3,16,16", run_opts=ropts, model_opts=mopts, threads=1))[-1].report


def _mode_rows(report):
    text = model_csv.rows_to_text(model_csv.report_rows(report))
    return {r["mode"]: r for r in csv.DictReader(io.StringIO(text)) if r["kind"] == "mode"}


def test_a_mode_whose_output_is_nan_is_a_wrong_output_never_the_answer(monkeypatch):
    from explorer.cli.model import format_modes

    _spoil(monkeypatch, "channels_last", lambda out: out * float("nan"))
    report = _plan()
    bad = report.mode("channels_last")
    assert bad.status == "wrong output" and "NaN" in bad.error
    assert bad.speedup is None and math.isnan(bad.rel_err)
    assert all(report.mode(m).status == "ok" for m in ("nchw", "to_mkldnn"))
    line = report.answer()
    assert model_report.MODE_LABEL["channels_last"] not in line  # another mode, or keep the model as it is
    assert line.startswith((model_report.MODE_LABEL["to_mkldnn"], "keep the model as it is"))
    rows = _mode_rows(report)
    assert rows["channels_last"]["status"] == "wrong output"
    assert rows["channels_last"]["rel_err"] == "nan" and math.isnan(float(rows["channels_last"]["max_abs_err"]))
    assert float(rows["to_mkldnn"]["rel_err"]) == pytest.approx(report.mode("to_mkldnn").rel_err, rel=1e-4)
    table = format_modes(report).splitlines()
    row = next(t for t in table if t.startswith("channels_last"))
    assert row.split()[1:3] == ["wrong", "output"] and "faster" not in row and "NaN" in row


def test_a_mode_off_beyond_its_dtypes_tolerance_is_a_wrong_output(monkeypatch):
    tol = model_surgery.TOLERANCE["f32"]
    # off by ten times the f32 tolerance of the output's largest value: finite, plainly wrong
    _spoil(monkeypatch, "to_mkldnn", lambda out: out + 10 * tol * out.abs().max())
    report = _plan()
    bad = report.mode("to_mkldnn")
    assert bad.status == "wrong output" and "differs" in bad.error
    assert math.isfinite(bad.rel_err) and bad.rel_err > tol
    assert model_report.MODE_LABEL["to_mkldnn"] not in report.answer()
    assert float(_mode_rows(report)["to_mkldnn"]["rel_err"]) == pytest.approx(bad.rel_err, rel=1e-4)


def test_the_tolerance_table_has_every_dtype_and_the_gate_reads_it():
    t = model_surgery.TOLERANCE
    assert set(t) == {"f32", "bf16", "f16", "int8"}
    assert t["f32"] < t["f16"] < t["bf16"] < t["int8"]  # the finer the dtype, the tighter
    gate = model_surgery.wrong_output
    for dt, tol in t.items():
        assert gate(tol / 2, tol / 2, dt) == ""
        assert "differs" in gate(2 * tol, 2 * tol, dt)
        assert "NaN or inf" in gate(float("nan"), float("nan"), dt) and "NaN or inf" in gate(math.inf, math.inf, dt)
    assert gate(None, None, "f32") == ""  # outputs that cannot be compared are not judged


def test_run_mode_marks_an_inf_output_and_does_not_time_it(monkeypatch):
    _spoil(monkeypatch, "channels_last", lambda out: out.masked_fill(torch.ones_like(out, dtype=torch.bool), math.inf))
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1)).eval()
    x = torch.randn(1, 3, 8, 8)
    with torch.no_grad():
        ref = net(x)
    r = model_modes.run_mode("channels_last", net, x, "f32", ref, model_report.ModelOptions(mode_budget_ms=10),
                             lambda: False)
    assert r.status == "wrong output" and r.measured_ms is None
    assert model_report.mode_line(r).startswith(model_report.MODE_LABEL["channels_last"] + ": wrong output")
