"""Issue #37: a mode whose output is not the model's output at all is a wrong output, never a speedup.

Main compared outputs only when they held as many tensors, and then subtracted them with broadcasting: a mode
returning an extra tensor "could not be compared" and was timed as right, and one returning the right values
in another shape ((1, 1, 10) against (1, 10)) broadcast to an error of 0 and was `ok`, both eligible as the
answer."""

import csv
import io

import pytest

from explorer.core.jobs.options import RunOptions
from explorer.core.model import job as model_job
from explorer.core.model import model_csv
from explorer.core.model import modes as model_modes
from explorer.core.model import report as model_report
from explorer.core.model import surgery as model_surgery


def _spoil(monkeypatch, mode, how):
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
    mopts = model_report.ModelOptions(modes=("nchw", "channels_last", "to_mkldnn"), mode_budget_ms=10, min_samples=3)
    return list(model_job.iter_model("tiny", "1,3,16,16", run_opts=ropts, model_opts=mopts, threads=1))[-1].report


@pytest.mark.parametrize(("how", "words"), [
    (lambda out: (out, out), "holds 2 tensors where the NCHW model's holds 1"),
    (lambda out: out.unsqueeze(0), "has shape (1, "),
])
def test_an_output_of_another_structure_is_a_wrong_output_never_the_answer(monkeypatch, how, words):
    _spoil(monkeypatch, "channels_last", how)
    report = _plan()
    bad = report.mode("channels_last")
    assert bad.status == "wrong output" and words in bad.error, bad.error
    assert bad.measured_ms is None and bad.speedup is None
    assert report.mode("nchw").status == "ok"
    assert model_report.MODE_LABEL["channels_last"] not in report.answer()
    text = model_csv.rows_to_text(model_csv.report_rows(report))
    row = next(r for r in csv.DictReader(io.StringIO(text)) if r["kind"] == "mode" and r["mode"] == "channels_last")
    assert row["status"] == "wrong output" and row["speedup"] == ""


def test_the_same_tensors_and_shapes_are_not_a_mismatch():
    import torch

    a = {"logits": torch.zeros(1, 10), "aux": [torch.ones(2, 3)]}
    assert model_surgery.output_mismatch(a, {"x": torch.ones(1, 10), "y": (torch.zeros(2, 3),)}) == ""
    assert model_surgery.output_mismatch(None, None) == ""  # nothing to compare: not judged
    assert model_surgery.compare_outputs(torch.zeros(1, 1, 10), torch.zeros(1, 10)) == (None, None)
