"""A session is the whole window (#34): the rows, the baselines kept for Compare, the selected tab and each tab's
inputs as its rows were made come back on open, and saving a reopened session again writes the same bytes."""

import numpy as np

from explorer.core.jobs.events import PathFinished
from explorer.core.measure.isa import available
from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.results import Result
from explorer.core.session.state import ModelDone, RunFinished, RunStarted

RUN = parse_descriptor("mb2ic16ih14oc16oh14kh3ph1", dtype="bf16")


def _row(path, ms, quality="ok"):
    r = Result(spec=RUN, path=path, threads=1, status="ok", median_ms=ms, p25_ms=ms * 0.98, p75_ms=ms * 1.02,
               iqr_ms=ms * 0.04, gflops=RUN.ops / ms / 1e6, samples=5, quality=quality)
    r.samples_ms = np.array([ms * (1 + 0.01 * k) for k in range(5)])
    return r


def _isa_cap():
    """A cap this CPU has (the combo refuses the others), not the default 'no cap'."""
    have = available()
    return next(n for n in ("sse41", "avx2", "avx") if n in have)


def _run(win, opts):
    """A finished run as the window records one: the run's options, then its rows (constructed, not timed)."""
    win.session.apply(RunStarted(RUN, opts))
    for p, ms in (("dense", 1.0), ("channels_last", 0.8), ("mkldnn", 0.6)):
        win.session.apply(PathFinished(_row(p, ms, "noisy" if p == "mkldnn" else "ok")))
    win.session.apply(RunFinished())


def _whole_session(win):
    from tests.core.session.test_session_state import _report

    cap = _isa_cap()
    opts = {"paths": ["dense", "channels_last", "mkldnn"], "threads": 1, "budget_ms": 37.0, "trace": False,
            "allocator": "default", "isa": cap}
    _run(win, opts)
    # the panel moves on after the run (what the user does next must not relabel the saved rows)
    win.panel.set_spec(RUN.replace(dtype="f32", oc=24))
    win.panel.set_options(paths=["dense"], threads=2, budget_ms=500, allocator="tuned", isa=None)
    label = win.baseline_view.keep_current()  # a baseline kept for Compare
    assert label
    win.model_view.set_model("tiny")
    win.model_view.dtype_box.setCurrentText("f32")
    win.session.model.inputs = {"model": "tiny", "input": "1,8,8,8", "dtype": "f32", "modes": ["nchw"]}
    win.session.apply(ModelDone(_report()))
    win.model_view.set_model("resnet50")  # typed after the plan: the restored report is tiny's
    win.tabs.setCurrentWidget(win.baseline_view)
    return cap, label


def test_reopening_a_session_restores_the_whole_window(make_window, tmp_path):
    win = make_window()
    cap, label = _whole_session(win)
    path = tmp_path / "s.json"
    assert win.save_session(str(path), ask=False)

    again = make_window()
    assert again.open_session(str(path))
    # the Run panel shows what the restored rows were measured with
    assert again.panel.spec == RUN and again.panel.dtype_combo.currentText() == "bf16"
    o = again.panel.options()
    assert o["paths"] == ["dense", "channels_last", "mkldnn"] and o["threads"] == 1 and o["budget_ms"] == 37.0
    assert o["allocator"] == "default" and o["isa"] == cap, o
    # the baseline kept for Compare, selected as A
    bv = again.baseline_view
    assert list(bv.baselines) == [label] and bv.a_combo.currentText() == label
    assert len(bv.baselines[label]) == 3
    assert bv.baselines[label] == win.baseline_view.baselines[label]
    # the Model field names the model of the restored report, not what was typed after it
    mv = again.model_view
    assert mv.report is not None and mv.model_box.currentText() == "tiny"
    assert mv.input_edit.text() == "1,8,8,8" and mv.selected_modes() == ("nchw",)
    # the selected tab
    assert again.tabs.currentWidget() is again.baseline_view


def test_saving_a_reopened_session_again_gives_the_same_bytes(make_window, tmp_path):
    win = make_window()
    _whole_session(win)
    first = tmp_path / "first.json"
    assert win.save_session(str(first), ask=False)
    again = make_window()
    assert again.open_session(str(first))
    second = tmp_path / "second.json"
    assert again.save_session(str(second), ask=False)
    assert second.read_bytes() == first.read_bytes()
    third = make_window()  # and once more: nothing drifts from one reopening to the next
    assert third.open_session(str(second))
    last = tmp_path / "third.json"
    assert third.save_session(str(last), ask=False)
    assert last.read_bytes() == first.read_bytes()


def test_a_model_report_without_saved_inputs_names_its_own_model(make_window, tmp_path):
    """A session saved before the inputs were kept: the Model field is the report's model, not the default."""
    import json

    from tests.core.session.test_session_state import _report

    win = make_window()
    win.session.apply(ModelDone(_report()))
    win.model_view.set_model("resnet50")
    path = tmp_path / "m.json"
    assert win.save_session(str(path), ask=False)
    data = json.loads(path.read_text())
    data["model"].pop("inputs", None)
    path.write_text(json.dumps(data))
    again = make_window()
    assert again.open_session(str(path))
    assert again.model_view.model_box.currentText() == "tiny"


def test_the_model_fields_a_plan_starts_from_come_back_with_its_report(make_window, tmp_path, monkeypatch):
    """The fields are read when Run model starts (the plan itself is not run here: its report is constructed)."""
    from tests.core.session.test_session_state import _report

    win = make_window()
    mv = win.model_view
    monkeypatch.setattr(mv.controller, "start", lambda *a, **k: None)  # no measuring process for this test
    mv.set_model("tiny")
    mv.set_input("1,8,8,8")
    mv.dtype_box.setCurrentText("bf16")
    mv.set_modes(["channels_last"])
    assert mv.run()
    mv._set_running(False)
    win.session.apply(ModelDone(_report()))
    mv.set_model("resnet50")  # edited after the plan
    mv.dtype_box.setCurrentText("f32")
    path = tmp_path / "m.json"
    assert win.save_session(str(path), ask=False)
    again = make_window()
    assert again.open_session(str(path))
    mv2 = again.model_view
    assert mv2.model_box.currentText() == "tiny" and mv2.input_edit.text() == "1,8,8,8"
    assert mv2.dtype_box.currentText() == "bf16" and mv2.selected_modes() == ("nchw", "channels_last")
