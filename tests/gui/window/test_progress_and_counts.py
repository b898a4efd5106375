"""Issue #38, item 3: the status bar and the tabs tell one story. During a model run the status bar's progress
reads what the tab's message reads ("layer k/n"), not the last run's "done"; the Run and the Sweep status
count their rows by one rule (core.report.counts)."""

from explorer.core.jobs.options import RunOptions
from explorer.core.measure import interference as itf
from explorer.core.problem.spec import parse_descriptor

FAST = RunOptions(paths=("dense", "mkldnn"), budget_ms=5.0, min_samples=3, trace=False, threads=1)
DESC = "mb1ic8ih8oc8kh3ph1"
REASON = "other programs held the cores: the measuring threads waited for a core 47% of the loop"


def test_the_status_bar_progress_follows_the_model_tabs_layer_count(make_window, qtbot):
    win = make_window()
    win.progress.setFormat("done")  # as a finished Run leaves it
    view = win.model_view
    win.tabs.setCurrentWidget(win.model_tab)
    view.set_model("tiny")
    view.set_input("2,3,16,16")
    view.set_options(FAST)
    view.set_mode_budget(10)
    seen = []  # (status bar's text, the tab's message) at each progress line of the tab
    view.controller.progress.connect(lambda text: seen.append((win.progress.text(), view.message.text(),
                                                               win.progress.value())))
    with qtbot.waitSignal(view.finished, timeout=120_000):
        assert view.run()
    assert view.last_error == "" and view.report is not None
    layers = [(bar, msg, v) for bar, msg, v in seen if msg.startswith("layer ")]
    modes = [(bar, msg, v) for bar, msg, v in seen if msg.startswith("end to end ")]
    assert layers and modes
    for bar, msg, _ in layers + modes:
        assert msg.startswith(bar + ":") or msg.startswith(bar + " "), (bar, msg)  # "layer 2/3" for "layer 2/3: dw · mkldnn"
    values = [v for _, _, v in layers]
    assert values == sorted(values) and values[0] < 1000  # it moves forward through the layers
    assert win.progress.text() == "done" and win.progress.value() == win.progress.maximum()


def test_a_failed_model_run_does_not_leave_the_bar_saying_done(make_window, qtbot):
    win = make_window()
    win.progress.setFormat("done")
    view = win.model_view
    view.set_model("no_such_pkg_qq.net:make")
    view.set_options(FAST)
    with qtbot.waitSignal(view.finished, timeout=90_000):
        assert view.run()
    assert win.progress.text() == "failed"


def test_run_and_sweep_count_noisy_rows_by_one_rule(make_window, qtbot, monkeypatch):
    from explorer.core.report.counts import count_text
    from explorer.gui.jobs import measure

    monkeypatch.setattr(measure, "IN_CHILD", False)  # in this process, where the patched judge rules
    monkeypatch.setattr(itf, "judge", lambda i, min_samples: itf.Verdict("noisy", REASON))
    win = make_window(spec=parse_descriptor(DESC), options={"paths": ["dense", "mkldnn"], "budget_ms": 5,
                                                            "trace": False})
    with qtbot.waitSignal(win.run_finished, timeout=120_000):
        assert win.start_run()
    run_rows = win.model.results
    assert len(run_rows) == 2 and all(r.quality == "noisy" for r in run_rows)
    assert "2 paths: 0 trusted, 2 noisy, 0 failed" in win.status_label.text()
    assert count_text(run_rows, "paths") in win.status_label.text()

    win.tabs.setCurrentIndex(1)
    sv = win.sweep_view
    sv.set_vary("g", "1,2")
    with qtbot.waitSignal(sv.finished, timeout=120_000):
        assert sv.run()
    assert "4 rows: 0 trusted, 4 noisy, 0 failed" in win.status_label.text()


def test_a_failed_run_does_not_say_done(make_window, qtbot, tmp_path):
    win = make_window(spec=parse_descriptor(DESC), options={"paths": ["dense"], "budget_ms": 5, "trace": False},
                      csv_path=str(tmp_path))  # a folder: the rows' CSV cannot be opened, the run fails
    with qtbot.waitSignal(win.run_finished, timeout=120_000):
        assert win.start_run()
    assert win.last_error and "folder" in win.status_label.text()
    assert win.progress.text() == "failed"
