"""The Model tab: a real tiny-model run through the measuring child, the tables, the answer, the jump to the
Run tab with a layer's spec, CSV export of both tables, a bad model in one sentence."""

import pytest

from explorer.core.jobs.options import RunOptions

FAST = RunOptions(paths=("dense", "mkldnn"), budget_ms=5.0, min_samples=3, trace=False, threads=1)


def _run(qtbot, view, timeout=90_000):
    with qtbot.waitSignal(view.finished, timeout=timeout) as blocker:
        assert view.run()
    return blocker.args[0]


def test_model_tab_runs_tiny_and_jumps_to_the_run_tab(make_window, qtbot, tmp_path):
    import pandas as pd

    from explorer.gui.tabs import model_view

    win = make_window()
    view = win.model_view
    assert win.tabs.tabText(win.tabs.indexOf(win.model_tab)) == "Model"
    win.tabs.setCurrentWidget(win.model_tab)
    view.set_model("tiny")
    view.set_input("2,3,16,16")
    view.set_options(FAST)
    view.set_mode_budget(10)
    assert _run(qtbot, view) is False
    assert view.last_error == ""
    rep = view.report
    assert rep is not None and rep.inventory.total == 4
    # the layer table: 3 distinct convs, one column per path, the best path, the share bar
    assert view.layers.rowCount() == 3
    head = [view.layers.horizontalHeaderItem(c).text() for c in range(view.layers.columnCount())]
    assert head[:3] == ["layer", "count", "desc"] and "dense ms" in head and "mkldnn ms" in head
    best_col, share_col = head.index("best path"), head.index("share of conv time")
    assert [view.layers.item(r, 0).text() for r in range(3)] == ["stem", "dw", "pw"]  # the model's order
    rows = {view.layers.item(r, 0).text(): r for r in range(3)}
    assert view.layers.item(rows["pw"], 1).text() == "2"
    assert view.layers.item(rows["pw"], best_col).text() in ("dense", "mkldnn")
    shares = [view.layers.item(r, share_col).data(model_view.SHARE_ROLE) for r in range(3)]
    assert sum(shares) == pytest.approx(1.0)
    # sortable by a number column
    view.layers.sortItems(1)
    assert view.layers.item(2, 0).text() == "pw"
    # the modes: measured beside predicted, and the one-line answer
    assert view.modes_table.rowCount() == 4
    mhead = [view.modes_table.horizontalHeaderItem(c).text() for c in range(view.modes_table.columnCount())]
    measured, predicted = mhead.index("measured ms"), mhead.index("predicted ms")
    note = mhead.index("note / error")
    for r in range(4):
        assert view.modes_table.item(r, 1).text() == "ok"
        assert float(view.modes_table.item(r, measured).text().lstrip("~")) > 0
        if r == 1:  # channels_last: its path was not in the per-layer table, so it says why
            assert view.modes_table.item(r, predicted).text() == ""
            assert "channels_last" in view.modes_table.item(r, note).text()
        else:
            assert float(view.modes_table.item(r, predicted).text().lstrip("~")) > 0
    assert view.answer.text() == rep.answer()
    conv, table = mhead.index("conv ms"), mhead.index("table conv ms")  # in model order beside each alone
    assert float(view.modes_table.item(0, conv).text().lstrip("~")) == pytest.approx(rep.mode("nchw").conv_ms, rel=1e-3)
    assert float(view.modes_table.item(0, table).text()) == pytest.approx(rep.mode("nchw").conv_alone_ms, rel=1e-3)
    assert "model" in view.modes_table.item(0, conv).toolTip()
    # export both tables in one CSV
    out = tmp_path / "m.csv"
    assert view.export_csv(str(out))
    df = pd.read_csv(out)
    # 3 layers x 2 paths, and each layer's mkldnn_chained row (jit_mkldnn's per-layer time)
    assert (df.kind == "layer").sum() == 3 and (df.kind == "layer_path").sum() == 9 and (df.kind == "mode").sum() == 4
    assert (df.path == "mkldnn_chained").sum() == 3
    # jump from a layer to the Run tab with its spec
    row = next(r for r in range(3) if view.layers.item(r, 0).text() == "dw")
    view.layers.cellDoubleClicked.emit(row, 0)
    assert win.tabs.currentIndex() == 0
    assert win.panel.spec.desc == "g8mb2ic8ih8oc8oh8kh3ph1"
    # ... or with the button, for the selected row
    win.tabs.setCurrentWidget(win.model_tab)
    stem = next(r for r in range(3) if view.layers.item(r, 0).text() == "stem")
    view.layers.selectRow(stem)
    assert view.open_button.isEnabled()
    view.open_button.click()
    assert win.tabs.currentIndex() == 0 and win.panel.spec.desc == "mb2ic3ih16oc8oh8kh3sh2ph1"
    assert model_view.live_threads() == 0


def test_a_bad_model_is_one_sentence_in_the_tab(make_window, qtbot):
    win = make_window()
    view = win.model_view
    view.set_model("no_such_pkg_qq.net:make")
    view.set_options(FAST)
    _run(qtbot, view)
    assert "no module named" in view.last_error and "\n" not in view.last_error
    assert view.report is None and view.run_button.isEnabled()


def test_a_mode_that_cannot_run_shows_its_error_in_the_row(qtbot):
    from explorer.core.model.report import ModeResult
    from explorer.gui.tabs.model_view import ModelView

    v = ModelView()
    qtbot.addWidget(v)
    err = "NotImplementedError (at aten.hardtanh_.default in features.0.2, ReLU6): Could not run 'aten::hardtanh_'"
    v._fill_modes([ModeResult("nchw", measured_ms=2.0), ModeResult("to_mkldnn", status="unsupported", error=err)])
    assert v.modes_table.item(1, 1).text() == "unsupported"
    assert v.modes_table.item(1, 2).text() == err and v.modes_table.columnSpan(1, 2) > 5
    v._fill_modes([ModeResult("nchw", measured_ms=2.0)])
    assert v.modes_table.columnSpan(0, 2) == 1


def test_a_prediction_on_a_noisy_loop_is_marked_in_its_cells(qtbot):
    from explorer.core.model.report import ModeResult
    from explorer.gui.tabs.model_view import MODE_HEAD, ModelView

    v = ModelView()
    qtbot.addWidget(v)
    clean = ModeResult("nchw", measured_ms=10.0, predicted_ms=9.0, conv_ms=7.0, remainder_ms=2.0, quality="ok",
                       conv_seq_quality="ok", remainder_quality="ok")
    seq_noisy = ModeResult("channels_last", measured_ms=10.0, predicted_ms=3.4, conv_ms=1.4, remainder_ms=2.0,
                           quality="ok", conv_seq_quality="noisy", remainder_quality="ok")
    v._fill_modes([clean, seq_noisy])
    pred, agree = MODE_HEAD.index("predicted ms"), MODE_HEAD.index("pred/meas")
    assert v.modes_table.item(0, pred).text() == "9" and v.modes_table.item(0, agree).text() == "0.90"
    assert v.modes_table.item(1, pred).text() == "~3.4" and v.modes_table.item(1, agree).text() == "~0.34"
    assert "convs in model order is noisy" in v.modes_table.item(1, agree).toolTip()


def test_the_model_tab_fits_a_1024_px_window(make_window):
    """At 1024x700 the tab has ~620 px: one row of fields and buttons and an unwrapped caption made it
    ~1,100 px wide, with its Export and Open buttons scrolled out of sight."""
    win = make_window(size=(1024, 700))
    assert win.model_view.minimumSizeHint().width() <= 620


def test_the_plan_fills_live_from_the_session_which_holds_the_partial_state(qtbot):
    """The controller's signals only change the session's ModelState; the tables are drawn from it."""
    from explorer.core.model.inventory import Inventory, Layer
    from explorer.core.model.report import LayerSummary, ModelReport, ModeResult
    from explorer.core.session.state import ModelState
    from explorer.gui.tabs.model_view import ModelView
    from tests.core.session.test_session_state import SPEC, _row

    v = ModelView()
    qtbot.addWidget(v)
    seen = []
    v.session.subscribe("model", lambda _a, change: seen.append(change[0]))
    lays = [Layer(SPEC.replace(name=n), [n], "Conv2d", (1, 8, 8, 8), SPEC.descriptor()) for n in ("a", "b")]
    inv = Inventory("two", (1, 8, 8, 8), "f32", [], lays)
    v.controller.inventory.emit(inv)
    assert v.session.model.inventory is inv and v.layers.rowCount() == 2 and v.report is None
    assert v.layers.item(0, 3).text() == ""  # no best path yet
    v.controller.layer_done.emit(0, _row("dense", 2.0))
    v.controller.layer_done.emit(0, _row("mkldnn", 1.0))
    assert set(v.session.model.layer_results[0]) == {"dense", "mkldnn"} and 1 not in v.session.model.layer_results
    head = [v.layers.horizontalHeaderItem(c).text() for c in range(v.layers.columnCount())]
    assert "dense ms" in head and "mkldnn ms" in head
    assert v.layers.item(0, head.index("best path")).text() == "mkldnn"
    assert v.layers.item(1, head.index("best path")).text() == ""
    v.controller.mode_done.emit(ModeResult("nchw", measured_ms=3.0))
    assert len(v.session.model.modes) == 1 and v.modes_table.rowCount() == 1
    assert not v.export_button.isEnabled()
    # the view owns none of it: its names read the session
    assert not any(k in vars(v) for k in ("inv", "layer_results", "modes"))
    assert v.layer_results is v.session.model.layer_results and v.modes is v.session.model.modes
    summ = [LayerSummary(lays[0], dict(v.session.model.layer_results[0]), "mkldnn", 1.0, 2.0),
            LayerSummary(lays[1], {"dense": _row("dense", 4.0)}, "dense", 4.0)]
    v.controller.report.emit(ModelReport(inv, summ, [ModeResult("nchw", measured_ms=3.0)], threads=2))
    assert v.report is v.session.model.report and v.export_button.isEnabled()
    assert v.layers.item(1, head.index("best path")).text() == "dense"
    assert seen == ["inventory", "layer", "layer", "mode", "report"]
    assert isinstance(v.session.model, ModelState)


def test_the_input_field_takes_several_inputs_or_a_factory(qtbot, monkeypatch):
    """Fails on main: the field took one N,C,H,W shape only."""
    from explorer.gui.tabs.model_view import ModelView

    v = ModelView()
    qtbot.addWidget(v)
    v.opts, v._fixed_opts = FAST, True
    got = []
    monkeypatch.setattr(v.controller, "start", lambda args, kwargs: got.append(args))
    monkeypatch.setattr(v, "_set_running", lambda on: None)
    v.model_box.setEditText("mypkg.audio:make")
    v.input_edit.setText("1,16000; 1,16000")
    assert v.run() and got[-1] == ("mypkg.audio:make", [(1, 16000), (1, 16000)])
    v.input_edit.setText("mypkg.audio:example_inputs")
    assert v.run() and got[-1][1] == "mypkg.audio:example_inputs"
    v.input_edit.setText("1,,2")
    assert not v.run() and "--input" in v.last_error


def test_a_noisy_layer_row_marks_its_best_margin_and_share(qtbot):
    """#34: a layer row with a noisy path showed its best ms, margin and share of conv time as findings (no `~`,
    no hatch); they carry the app's one doubt look (common.doubt), as the Run and Sweep tables do."""
    from PySide6.QtCore import Qt

    from explorer.core.model.inventory import Inventory, Layer
    from explorer.core.model.report import ModelReport, ModeResult, summarize_layer
    from explorer.gui.common.doubt import HATCH
    from explorer.gui.tabs.model_view import LAYER_HEAD, ModelView
    from tests.core.session.test_session_state import SPEC, _row

    v = ModelView()
    qtbot.addWidget(v)
    lays = [Layer(SPEC.replace(name=n), [n], "Conv2d", (1, 8, 8, 8), SPEC.descriptor()) for n in ("quiet", "loud")]
    inv = Inventory("two", (1, 8, 8, 8), "f32", [], lays)
    noisy = _row("mkldnn", 1.0)
    noisy.quality, noisy.quality_reason = "noisy", "another program took 40% of the core"
    results = [{"dense": _row("dense", 2.0), "mkldnn": _row("mkldnn", 1.5)}, {"dense": _row("dense", 3.0), "mkldnn": noisy}]
    v.controller.inventory.emit(inv)
    for i, res in enumerate(results):
        for r in res.values():
            v.controller.layer_done.emit(i, r)
    summ = [summarize_layer(lay, res) for lay, res in zip(lays, results)]
    v.controller.report.emit(ModelReport(inv, summ, [ModeResult("nchw", measured_ms=3.0)], threads=2))
    rows = {v.layers.item(r, 0).text(): r for r in range(v.layers.rowCount())}
    assert set(rows) == {"quiet", "loud"}
    for name in ("best ms", "margin", "share of conv time"):
        c = LAYER_HEAD.index(name)
        quiet, loud = v.layers.item(rows["quiet"], c), v.layers.item(rows["loud"], c)
        assert loud.text().startswith("~") and not quiet.text().startswith("~"), name
        assert loud.text().lstrip("~") and quiet.text(), name
        assert loud.background().style() == Qt.BDiagPattern and loud.background().color().getRgb() == HATCH, name
        assert quiet.background().style() == Qt.NoBrush, name
        assert "noisy" in loud.toolTip() and "40%" in loud.toolTip(), name
    from explorer.gui.tabs.model_view import DOUBT_ROLE  # the bar itself is hatched too

    share = LAYER_HEAD.index("share of conv time")
    assert v.layers.item(rows["loud"], share).data(DOUBT_ROLE) and not v.layers.item(rows["quiet"], share).data(DOUBT_ROLE)
