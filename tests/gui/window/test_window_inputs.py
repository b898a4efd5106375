"""Issue #38, the window's inputs: the mouse wheel scrolls the panels without editing an unfocused spin box or
combo box, and a save dialog adds the extension its filter names when the user typed none."""

import json

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QComboBox, QFileDialog

from explorer.core.problem.spec import parse_descriptor

TINY = "mb2ic16ih14oc16oh14kh3ph1"
SESSION_FILTER = "MKLDNN Explorer session (*.json)"


def _wheel(widget, down: bool = True) -> QWheelEvent:
    """One notch of the wheel over the widget's centre, delivered as Qt delivers it (through the app)."""
    centre = QPointF(widget.rect().center())
    ev = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0),
                     QPoint(0, -120 if down else 120), Qt.NoButton, Qt.NoModifier, Qt.NoScrollPhase, False)
    QApplication.sendEvent(widget, ev)
    return ev


def test_wheel_over_an_unfocused_spin_box_in_the_param_panel_leaves_its_value(make_window):
    win = make_window(spec=parse_descriptor(TINY), options={"budget_ms": 100})
    spin = win.panel.budget_spin
    assert spin.value() == 100 and not spin.hasFocus()
    ev = _wheel(spin)
    assert spin.value() == 100, "the wheel edited a spin box the user never focused"
    assert not ev.isAccepted()  # left for the scroll area around the panel


def test_wheel_over_an_unfocused_combo_box_leaves_its_choice(make_window):
    win = make_window(spec=parse_descriptor(TINY))
    combo = win.panel.dtype_combo
    assert combo.count() > 1 and not combo.hasFocus()
    combo.setCurrentIndex(0)
    _wheel(combo, down=True)
    assert combo.currentIndex() == 0


def test_every_spin_box_and_combo_box_of_every_tab_takes_focus_by_click_or_tab_only(make_window):
    win = make_window(spec=parse_descriptor(TINY))
    inputs = win.findChildren(QAbstractSpinBox) + win.findChildren(QComboBox)
    assert win.sweep_view is not None and win.model_view is not None
    assert any(win.sweep_view.isAncestorOf(w) for w in inputs)  # the tabs' inputs, not only the panel's
    assert any(win.model_view.isAncestorOf(w) for w in inputs)
    wheel_focus = [w.objectName() or type(w).__name__ for w in inputs if w.focusPolicy() != Qt.StrongFocus]
    assert not wheel_focus


def _dialog_returns(monkeypatch, path, selected):
    seen = {}

    def fake(parent, caption, start, filters, *rest, **kw):
        seen["filters"] = filters
        return path, selected

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(fake))
    return seen


def test_a_session_saved_as_a_bare_name_is_written_with_json(make_window, monkeypatch, tmp_path):
    win = make_window(spec=parse_descriptor(TINY))
    _dialog_returns(monkeypatch, str(tmp_path / "sess1"), SESSION_FILTER)
    assert win.save_session()
    assert (tmp_path / "sess1.json").is_file() and not (tmp_path / "sess1").exists()
    json.loads((tmp_path / "sess1.json").read_text(encoding="utf-8"))
    assert win.open_session(str(tmp_path / "sess1.json"))


def test_a_name_with_its_own_extension_is_kept(make_window, monkeypatch, tmp_path):
    win = make_window(spec=parse_descriptor(TINY))
    # The PNG filter chosen, an .svg typed: the user's extension decides.
    _dialog_returns(monkeypatch, str(tmp_path / "chart.svg"), "PNG image (*.png)")
    assert win._ask_path("Export", "PNG image (*.png);;SVG image (*.svg)", "x.png") == str(tmp_path / "chart.svg")


def test_every_save_dialog_adds_its_filter_extension(make_window, monkeypatch, tmp_path):
    win = make_window(spec=parse_descriptor(TINY))
    _dialog_returns(monkeypatch, str(tmp_path / "rows"), "")  # no filter reported: the first one's
    assert win._ask_path("Export", "CSV files (*.csv)", "results.csv") == str(tmp_path / "rows.csv")
    monkeypatch.delenv("MKLDNN_EXPLORER_NO_DIALOGS")  # the tabs' own dialogs
    written = []
    monkeypatch.setattr(win.sweep_view, "export_csv", lambda path: written.append(path) or True)
    monkeypatch.setattr(win.roofline_view, "export", lambda path: written.append(path) or True)
    _dialog_returns(monkeypatch, str(tmp_path / "sweep"), "CSV files (*.csv)")
    win.sweep_view._export_dialog()
    _dialog_returns(monkeypatch, str(tmp_path / "roof"), "SVG image (*.svg)")
    win.roofline_view._export_dialog()
    assert written == [str(tmp_path / "sweep.csv"), str(tmp_path / "roof.svg")]


def test_a_focused_spin_box_still_takes_the_wheel(make_window, qtbot):
    win = make_window(spec=parse_descriptor(TINY), options={"budget_ms": 100})
    win.activateWindow()
    spin = win.panel.budget_spin
    spin.setFocus(Qt.MouseFocusReason)
    qtbot.waitUntil(spin.hasFocus, timeout=2000)
    _wheel(spin, down=False)
    assert spin.value() > 100


def test_the_added_extension_is_the_chosen_filters_and_all_files_adds_none():
    from explorer.gui.common.inputs import with_filter_suffix

    both = "PNG image (*.png);;SVG image (*.svg)"
    assert with_filter_suffix("/d/chart", "SVG image (*.svg)", both) == "/d/chart.svg"
    assert with_filter_suffix("/d/chart", "", both) == "/d/chart.png"
    assert with_filter_suffix("/d/sess1", "All files (*)", "S (*.json);;All files (*)") == "/d/sess1"
    assert with_filter_suffix("", "SVG image (*.svg)", both) == ""
