"""Issue #38, item 2: a run that fails before it measured anything leaves the last good result in view, and
says what failed above it (the Model tab wiped its last report for a mistyped model path). The Compare tab's
case (a bad baseline CSV after a good one) is test_baseline_view.test_bad_csv_is_reported_and_nothing_is_lost."""

from explorer.core.jobs.options import RunOptions

FAST = RunOptions(paths=("dense", "mkldnn"), budget_ms=5.0, min_samples=3, trace=False, threads=1)


def _good_report():
    from explorer.core.model.inventory import Inventory, Layer
    from explorer.core.model.report import LayerSummary, ModelReport, ModeResult
    from tests.core.session.test_session_state import SPEC, _row

    lays = [Layer(SPEC.replace(name=n), [n], "Conv2d", (1, 8, 8, 8), SPEC.descriptor()) for n in ("a", "b")]
    inv = Inventory("good_net", (1, 8, 8, 8), "f32", [], lays)
    summ = [LayerSummary(lays[0], {"dense": _row("dense", 2.0), "mkldnn": _row("mkldnn", 1.0)}, "mkldnn", 1.0, 2.0),
            LayerSummary(lays[1], {"dense": _row("dense", 4.0)}, "dense", 4.0)]
    return ModelReport(inv, summ, [ModeResult("nchw", measured_ms=3.0)], threads=1)


def test_a_mistyped_model_after_a_good_run_keeps_the_report_and_says_what_failed_above_it(make_window, qtbot):
    from explorer.core.session.state import ModelDone

    win = make_window(size=(1024, 700))
    view = win.model_view
    win.tabs.setCurrentWidget(win.model_tab)
    good = _good_report()
    win.session.apply(ModelDone(good))  # as a finished plan leaves it
    assert view.layers.rowCount() == 2 and view.answer.text() == good.answer()

    view.set_model("no_such_pkg_qq.net:make")  # the mistyped path
    view.set_options(FAST)
    with qtbot.waitSignal(view.finished, timeout=90_000):
        assert view.run()
    assert "no module named" in view.last_error
    # the last good plan: in the session (saved with it), the tables, the answer and its export
    assert win.session.model_report is good
    assert view.layers.rowCount() == 2 and view.modes_table.rowCount() == 1
    assert [view.layers.item(r, 0).text() for r in range(2)] == ["a", "b"]
    assert view.answer.text() == good.answer()
    assert view.export_button.isEnabled()
    # what failed, above the report it left in view
    assert "no module named" in view.message.text() and "good_net" in view.message.text()
    assert view.message.isVisible() and view.message.y() < view.answer.y() < view.layers.parentWidget().y()
    assert "no module named" in win.status_label.text()


def test_a_plan_that_loaded_then_failed_shows_its_own_rows_not_the_last_plans(qtbot):
    """Once the new model loaded, its rows are new measurements: they are shown (and kept) with the error."""
    from explorer.core.model.inventory import Inventory, Layer
    from explorer.core.session.state import ModelDone
    from explorer.gui.tabs.model_view import ModelView
    from tests.core.session.test_session_state import SPEC, _row

    v = ModelView()
    qtbot.addWidget(v)
    v.session.apply(ModelDone(_good_report()))
    v._new_plan = False  # as run() leaves it
    lay = Layer(SPEC.replace(name="c"), ["c"], "Conv2d", (1, 8, 8, 8), SPEC.descriptor())
    v.controller.inventory.emit(Inventory("new_net", (1, 8, 8, 8), "f32", [], [lay]))
    v.controller.layer_done.emit(0, _row("dense", 1.5))
    v.controller.failed.emit("the measuring process died", "")
    assert v.layers.rowCount() == 1 and v.layers.item(0, 0).text() == "c"
    assert v.modes_table.rowCount() == 0  # the last plan's modes left with its layers
    assert v.session.model.layer_results[0]["dense"].median_ms == 1.5
    assert "died" in v.message.text() and not v.export_button.isEnabled()


def test_a_sweep_that_fails_before_any_row_keeps_the_last_sweep_and_says_why(make_window, qtbot, tmp_path):
    win = make_window(size=(1024, 700))
    sv = win.sweep_view
    win.tabs.setCurrentIndex(1)
    sv.set_base("mb1ic8ih8oc8kh3ph1")
    sv.set_options(FAST)
    sv.set_vary("g", "1,2")
    with qtbot.waitSignal(sv.finished, timeout=60_000):
        assert sv.run()
    sv.redraw_now()
    good = list(sv.results())
    assert len(good) == 4 and sv.error == ""
    assert all(sv.line.point_count(p) == 2 for p in ("dense", "mkldnn"))

    sv.set_csv_sink(tmp_path)  # a folder: the rows' CSV cannot be opened, so the job fails before a point runs
    sv.set_vary("g", "1,2,4")
    with qtbot.waitSignal(sv.finished, timeout=60_000):
        assert sv.run()
    sv.redraw_now()
    assert "Sweep failed" in sv.live_label.text() and "last sweep (4 rows)" in sv.live_label.text()
    assert "Rows are in" not in sv.live_label.text()  # old main named the folder that could not be opened
    assert sv.results() == good  # the last sweep's rows, in the session and the charts
    assert all(sv.line.point_count(p) == 2 for p in ("dense", "mkldnn"))
    assert sv.export_button.isEnabled()
    assert "Sweep failed" in win.status_label.text()
