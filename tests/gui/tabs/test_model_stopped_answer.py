"""The Model tab after Stop (issue 34): a real tiny-model plan stopped once its first end-to-end mode is done
must not answer "keep the model as it is: every mode is slower" over modes that never ran; it names them."""

from explorer.core.jobs.options import RunOptions
from explorer.core.model.report import MODE_LABEL

FAST = RunOptions(paths=("dense", "mkldnn"), budget_ms=5.0, min_samples=3, trace=False, threads=1)


def test_the_answer_after_stop_names_the_modes_that_did_not_run(make_window, qtbot):
    win = make_window()
    view = win.model_view
    win.tabs.setCurrentWidget(win.model_tab)
    view.set_model("tiny")
    view.set_input("2,3,16,16")
    view.set_options(FAST)
    view.set_mode_budget(10)
    view.controller.mode_done.connect(lambda _res: view.stop())  # Stop as soon as the first mode is timed
    with qtbot.waitSignal(view.finished, timeout=180_000) as blocker:
        assert view.run()
    assert blocker.args == [True]
    rep = view.report
    ran = {m.mode for m in rep.modes}
    missing = [m for m in rep.planned if m not in ran]
    assert "nchw" in ran and missing  # stopped before the last mode
    text = view.answer.text()
    assert text == rep.answer()
    assert "every mode is slower" not in text and "keep the model as it is" not in text
    assert "did not run (stopped)" in text and all(MODE_LABEL[m] in text for m in missing)
    assert view.run_button.isEnabled() and "Stopped" in view.message.text()
    # the modes table has a row for each mode that did not run, saying so
    t = view.modes_table
    rows = {t.item(r, 0).text(): t.item(r, 1).text() for r in range(t.rowCount())}
    assert all(rows[MODE_LABEL[m]] == "not run" for m in missing) and t.rowCount() == len(rep.planned)
