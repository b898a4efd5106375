"""Issue #38, item 4: the window has focus again once a dialog closes, so Ctrl+Q (and every shortcut) works at
once. The dialogs are Qt's real ones (no native dialogs offscreen), closed by a timer as a user would; the
offscreen platform has no window manager, as Xvfb without one."""

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox, QWidget

from explorer.core.problem.spec import parse_descriptor

TINY = "mb2ic16ih14oc16oh14kh3ph1"


def _close_the_dialog_soon(seen: list, ms: int = 300) -> None:
    def close():
        w = QApplication.activeModalWidget()
        seen.append(type(w).__name__ if w is not None else None)
        if w is not None:
            w.reject()

    QTimer.singleShot(ms, close)


def _ctrl_q_closes(win, qtbot) -> bool:
    qtbot.wait(50)  # a user's key comes later than the event loop's next turn
    target = QApplication.focusWidget() or win
    qtbot.keyClick(target, Qt.Key_Q, Qt.ControlModifier)
    qtbot.wait(50)
    return not win.isVisible()


def _window(make_window, qtbot):
    win = make_window(spec=parse_descriptor(TINY), size=(1024, 700))
    qtbot.waitExposed(win)
    win.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is win)
    return win


def test_after_the_save_dialog_ctrl_q_quits_at_once(make_window, qtbot):
    win = _window(make_window, qtbot)
    seen = []
    _close_the_dialog_soon(seen)
    assert not win.save_session()  # File > Save session: the dialog, cancelled
    assert seen == ["QFileDialog"]
    assert QApplication.activeWindow() is win or qtbot.waitUntil(lambda: QApplication.activeWindow() is win) is None
    assert _ctrl_q_closes(win, qtbot)


def test_after_a_message_box_ctrl_q_quits_at_once(make_window, qtbot, tmp_path):
    win = _window(make_window, qtbot)
    there = tmp_path / "rows.csv"
    there.write_text("mine\n")
    seen = []
    _close_the_dialog_soon(seen)
    assert not win.export_csv(str(there))  # "Replace file?" answered No
    assert seen == ["QMessageBox"] and there.read_text() == "mine\n"
    assert _ctrl_q_closes(win, qtbot)


def test_after_a_tabs_own_file_dialog_ctrl_q_quits_at_once(make_window, qtbot, monkeypatch):
    monkeypatch.delenv("MKLDNN_EXPLORER_NO_DIALOGS")  # the Compare tab's Open dialog is the real one here
    win = _window(make_window, qtbot)
    seen = []
    _close_the_dialog_soon(seen)
    win.baseline_action.trigger()  # Ctrl+B: a dialog whose parent is the Compare tab, not the window
    assert seen == ["QFileDialog"]
    assert _ctrl_q_closes(win, qtbot)


def test_focus_that_left_for_another_window_is_not_taken_back(make_window, qtbot):
    win = _window(make_window, qtbot)
    other = QWidget()  # another application's window, as far as this one knows
    qtbot.addWidget(other)
    other.show()
    other.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is other)
    before = win.focus_return.returns
    other.close()
    qtbot.wait(50)
    assert win.focus_return.returns == before
    assert QApplication.activeWindow() is not win


@pytest.mark.parametrize("dialog", ["file", "box"])
def test_a_dialog_still_open_keeps_its_focus(make_window, qtbot, dialog):
    """The window is only activated once the dialog is gone: never under an open one."""
    win = _window(make_window, qtbot)
    states = []

    def look_then_close():
        w = QApplication.activeModalWidget()
        states.append(QApplication.activeWindow() is w)
        w.reject()

    QTimer.singleShot(300, look_then_close)
    if dialog == "file":
        QFileDialog.getSaveFileName(win, "Save", "", "JSON (*.json)")
    else:
        QMessageBox.question(win, "Replace file?", "Replace it?", QMessageBox.Yes | QMessageBox.No, QMessageBox.No)
    assert states == [True]
    qtbot.waitUntil(lambda: QApplication.activeWindow() is win)
