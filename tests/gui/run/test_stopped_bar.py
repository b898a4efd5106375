"""A stopped path's bar (issue 34, #6): the Run tab's summary kept "running (876 calls)" beside the estimate of a
path cut short by Stop. Once the run has ended the bar says stopped."""

from explorer.core.problem.spec import parse_descriptor

TINY = "mb1ic8ih6oc8oh6kh3ph1"


def test_a_path_cut_short_by_stop_says_stopped_not_running(make_window, qtbot, monkeypatch):
    from explorer.gui.jobs import measure

    monkeypatch.setattr(measure, "IN_CHILD", False)
    monkeypatch.setenv("MKLDNN_EXPLORER_IN_PROCESS", "1")
    win = make_window(spec=parse_descriptor(TINY), options={"paths": ["dense"], "budget_ms": 60_000,
                                                            "trace": False})
    assert win.start_run()
    qtbot.waitUntil(lambda: "running" in win.summary.bar_labels().get("dense", ""), timeout=60_000)
    with qtbot.waitSignal(win.run_finished, timeout=60_000) as blocker:
        win.stop_run()
    assert blocker.args == [True]
    label = win.summary.bar_labels()["dense"]
    assert "stopped" in label and "running" not in label
    assert "Stopped" in win.status_label.text() and win.run_action.isEnabled()
