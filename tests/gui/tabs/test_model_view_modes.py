"""The Model tab's modes and dtype: every mode the planner has (today's compiled and autocast_bf16 too) is a
box to tick, the plan runs exactly the ticked ones in the chosen dtype, and a mode's note reaches its row."""


def test_every_mode_is_a_box_and_the_plan_runs_the_ticked_ones(qtbot, monkeypatch):
    from explorer.core.model.report import DEFAULT_MODES, MODES
    from explorer.gui.tabs.model_view import ModelView

    v = ModelView()
    qtbot.addWidget(v)
    assert tuple(v.mode_boxes) == MODES and {"compiled", "autocast_bf16"} <= set(v.mode_boxes)
    assert v.selected_modes() == DEFAULT_MODES
    assert not v.mode_boxes["nchw"].isEnabled()  # every ratio is against it
    started = {}
    monkeypatch.setattr(v.controller, "start", lambda args, kwargs: started.update(args=args, kwargs=kwargs) or True)
    v.set_model("tiny")
    v.set_modes({"compiled", "autocast_bf16"})
    v.dtype_box.setCurrentText("bf16")
    assert v.run()
    assert started["kwargs"]["model_opts"].modes == ("nchw", "compiled", "autocast_bf16")
    assert started["kwargs"]["dtype"] == "bf16"
    assert not v.mode_boxes["compiled"].isEnabled() and not v.dtype_box.isEnabled()  # fixed while it runs


def test_a_new_modes_note_is_in_its_row(qtbot):
    from explorer.core.model.report import ModeResult
    from explorer.gui.tabs.model_view import ModelView

    v = ModelView()
    qtbot.addWidget(v)
    note = "torch.compile (inductor, freezing on) compiled in 12.0 s, not in the measured time"
    v._fill_modes([ModeResult("nchw", measured_ms=2.0),
                   ModeResult("compiled", measured_ms=1.0, compile_ms=12000.0, mode_note=note,
                              predict_note="measured only: inductor fuses")])
    last = v.modes_table.item(1, v.modes_table.columnCount() - 1).text()
    assert v.modes_table.item(1, 0).text() == "torch.compile (freezing)"
    assert last.startswith(note) and "measured only" in last


def test_a_mode_whose_output_is_nan_reads_wrong_output_in_its_row(qtbot, monkeypatch):
    """Issue #37: the tab reads the planner's own report; main showed an all-NaN mode as `ok` with a speedup."""
    from explorer.core.jobs.options import RunOptions
    from explorer.core.model import job as model_job
    from explorer.core.model import modes as model_modes
    from explorer.core.model.report import MODE_LABEL, ModelOptions
    from explorer.gui.tabs.model_view import MODE_HEAD, ModelView

    real = model_modes.prepare_mode

    def prepare(name, *a, **k):  # channels_last's forward gives NaN: a wrong kernel, faked
        prep = real(name, *a, **k)
        if name == "channels_last":
            fn = prep.fn
            prep.fn = lambda: fn() * float("nan")
        return prep

    monkeypatch.setattr(model_modes, "prepare_mode", prepare)
    ropts = RunOptions(paths=("dense", "channels_last"), budget_ms=5, min_samples=3, trace=False)
    mopts = ModelOptions(modes=("nchw", "channels_last"), mode_budget_ms=10, min_samples=3)
    report = list(model_job.iter_model("tiny", "1,3,16,16", run_opts=ropts, model_opts=mopts, threads=1))[-1].report
    v = ModelView()
    qtbot.addWidget(v)
    v._fill_modes(report.modes)
    t = v.modes_table
    row = next(i for i in range(t.rowCount()) if t.item(i, 0).text() == MODE_LABEL["channels_last"])
    assert t.item(row, MODE_HEAD.index("status")).text() == "wrong output"
    assert "NaN" in t.item(row, 2).text()  # the reason where the figures would be
    assert t.item(row, MODE_HEAD.index("speedup")) is None or not t.item(row, MODE_HEAD.index("speedup")).text()
