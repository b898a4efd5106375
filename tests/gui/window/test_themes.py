"""Issue 12, item 2: every chart, table and label follows the theme, on every tab, in both themes."""

import re

import pytest


def _lum(c):
    def ch(v):
        v /= 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * ch(c.red()) + 0.7152 * ch(c.green()) + 0.0722 * ch(c.blue())


def contrast(a, b) -> float:
    la, lb = sorted((_lum(a), _lum(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@pytest.mark.parametrize("name", ["light", "dark"])
def test_every_view_background_follows_the_theme(make_window, name):
    import pyqtgraph as pg
    from PySide6.QtGui import QColor, QPalette
    from PySide6.QtWidgets import QApplication, QLabel, QTableView

    from explorer.gui.common.colors import theme

    win = make_window(size=(1440, 900))
    win.apply_theme("dark" if name == "light" else "light")  # switching, not only the first theme
    win.apply_theme(name)
    t = theme(name)
    window_bg = QColor(t["window"])
    seen = set()
    for i in range(win.tabs.count()):
        win.tabs.setCurrentIndex(i)
        QApplication.processEvents()
        tab = win.tabs.tabText(i)
        views = [v for v in win.findChildren(pg.GraphicsView) if v.isVisible()]
        assert views or tab in ("Compare", "Model"), f"{tab}: no chart visible"  # those two are tables
        for v in views:
            assert v.backgroundBrush().color().name() == t["bg"], f"{tab}: {type(v.parent()).__name__} background"
            seen.add(type(v.parent()).__name__)
        for table in (w for w in win.findChildren(QTableView) if w.isVisible()):
            assert table.palette().color(QPalette.Base).name() == t["base"], f"{tab}: table"
            seen.add("table")
        for lab in (w for w in win.findChildren(QLabel) if w.isVisible() and w.text().strip()):
            m = re.search(r"(?<![-\w])color:\s*(#[0-9a-fA-F]{6})", lab.styleSheet())
            fg = QColor(m.group(1)) if m else lab.palette().color(QPalette.WindowText)
            assert contrast(fg, window_bg) >= 4.5, f"{tab}: label {lab.text()[:40]!r} has low contrast"
    assert "table" in seen and len(seen) >= 4, seen
    # the sweep charts, the roofline and the compare verdict colours in particular
    for chart in (win.sweep_view.line, win.sweep_view.speedup, win.sweep_view.bars, win.sweep_view.heatmap):
        assert chart.plot_widget.backgroundBrush().color().name() == t["bg"]
    assert win.roofline_view.layout_widget.backgroundBrush().color().name() == t["bg"]
    assert win.baseline_view.model.theme == name


def test_compare_verdicts_are_legible_in_the_dark(make_window):
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QColor

    from explorer.gui.common.colors import theme

    win = make_window()
    win.apply_theme("dark")
    bv = win.baseline_view
    row = lambda ms, iqr=0.001: {"desc": "d", "path": "dense", "dtype": "f32", "threads": 1,  # noqa: E731
                                 "median_ms": ms, "iqr_ms": iqr, "status": "ok"}
    bv.add_rows([row(1.0), {**row(1.0), "path": "mkldnn"}, {**row(1.0), "path": "native"}], "A")
    bv.set_current([row(0.5), {**row(2.0), "path": "mkldnn"}, {**row(1.002), "path": "native"}])
    bv.set_pair("A")
    m = bv.model
    base = QColor(theme("dark")["base"])
    verdicts = [m.data(m.index(i, 9)) for i in range(3)]
    assert verdicts == ["B faster", "B slower", "no difference"]
    for i in range(3):
        fg = m.data(m.index(i, 8), Qt.ForegroundRole).color()
        assert contrast(fg, base) >= 4.5, verdicts[i]


def test_compare_controls_wrap_in_a_narrow_window(make_window, qtbot):
    """Issue 12, item 7: at 1024 px the Compare tab's B combo wraps onto a second line, it is not cut off."""
    win = make_window(size=(1024, 700))
    bv = win.baseline_view
    bv.add_rows([{"desc": "d", "path": "dense", "dtype": "f32", "threads": 1, "median_ms": 1.0, "status": "ok"}],
                "sweep g=divisors 09:45:32")
    win.tabs.setCurrentWidget(bv)
    qtbot.wait(20)
    right = bv.head.mapTo(bv, bv.b_combo.geometry().bottomRight())
    assert right.x() <= bv.width() and right.y() <= bv.summary.geometry().top()
    assert win.width() <= 1024
