"""A verdict over modes says which are missing (issue 34): after Stop, "keep the model as it is: every mode is
slower" named modes that never ran. The answer names the planned modes that did not run and judges only those
that did; a session file keeps what was planned."""

from explorer.core.model.inventory import Inventory
from explorer.core.model.report import DEFAULT_MODES, MODE_LABEL, ModelReport, ModeResult


def _report(modes, planned=DEFAULT_MODES):
    return ModelReport(Inventory("tiny", (1, 3, 8, 8), "f32", [], []), [], modes, 1, "", tuple(planned))


NCHW = ModeResult("nchw", measured_ms=2.0)
SLOWER = ModeResult("channels_last", measured_ms=3.0, speedup=2.0 / 3.0)
FASTER = ModeResult("channels_last", measured_ms=1.0, speedup=2.0)


def test_a_stopped_plan_names_the_modes_that_did_not_run_and_gives_no_verdict_on_them():
    rep = _report([NCHW, SLOWER])
    assert rep.not_run == ["to_mkldnn", "jit_mkldnn"]
    a = rep.answer()
    assert "keep the model as it is" not in a and "every mode" not in a
    assert f"{MODE_LABEL['to_mkldnn']}, {MODE_LABEL['jit_mkldnn']} did not run (stopped): no verdict on them" in a
    assert "the best of the modes that ran is channels_last: 1.50x slower" in a


def test_a_plan_stopped_before_any_mode_has_no_verdict_at_all():
    a = _report([]).answer()
    assert a.startswith("no verdict:") and all(MODE_LABEL[m] in a for m in DEFAULT_MODES)
    assert "keep" not in a
    one = _report([NCHW, FASTER], planned=("nchw", "channels_last", "to_mkldnn")).answer()
    assert one.startswith(f"{MODE_LABEL['to_mkldnn']} did not run (stopped): no verdict on it;")
    assert "channels_last: 2.00x faster" in one


def test_a_finished_plan_keeps_its_verdict_over_every_mode():
    rep = _report([NCHW, SLOWER], planned=("nchw", "channels_last"))
    assert rep.not_run == [] and rep.answer().startswith("keep the model as it is: every mode is slower")
    assert _report([NCHW, FASTER], planned=()).answer().startswith("channels_last: 2.00x faster")  # an old report


def test_a_session_keeps_the_planned_modes():
    from explorer.core.session.store import model_from_dict, model_to_dict

    back = model_from_dict(model_to_dict(_report([NCHW, SLOWER])), "s.json")
    assert back.planned == DEFAULT_MODES and back.not_run == ["to_mkldnn", "jit_mkldnn"]
    assert back.answer() == _report([NCHW, SLOWER]).answer()
