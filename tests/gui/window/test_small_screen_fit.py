"""The documented minimum screen is a test (#34): at 1024x700, with the noisy banner shown, every row of a
6-path run can be seen in the Run tab (in the table's view, scrolling the tab if need be), and a restored 2x2
heatmap shows all its columns and its legend or gets a scroll bar."""

import pytest
from PySide6.QtCore import QPoint, QRect, QRectF
from PySide6.QtWidgets import QApplication

from explorer.core.paths.base import PATHS
from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.results import Result

SPEC = parse_descriptor("mb2ic16ih14oc16oh14kh3ph1")
SMALL = (1024, 700)
REASON = "other programs held the cores: the measuring threads waited for a core 47% of the loop"


def _settle(qtbot):
    for _ in range(6):
        QApplication.processEvents()
        qtbot.wait(30)


def _rows(paths):
    out = []
    for i, p in enumerate(paths):
        ms = 1.0 + 0.1 * i
        out.append(Result(spec=SPEC, path=p, threads=1, status="ok", median_ms=ms, p25_ms=ms * 0.99,
                          p75_ms=ms * 1.01, iqr_ms=ms * 0.02, gflops=SPEC.ops / ms / 1e6, samples=9,
                          quality="noisy" if i % 2 else "ok", quality_reason=REASON if i % 2 else ""))
    return out


def _to_widget(hm, scene_rect) -> QRect:
    r = hm.plot_widget.mapFromScene(scene_rect).boundingRect()
    return QRect(hm.plot_widget.mapTo(hm, r.topLeft()), r.size())


def _view_rect(hm) -> QRect:
    """The heatmap's plot area, in the heatmap widget's coordinates (cells outside it are clipped)."""
    return _to_widget(hm, hm.plot.getViewBox().sceneBoundingRect())


def _cell_rects(hm) -> list[QRect]:
    """Where each cell of the grid is drawn, unclipped, in the heatmap widget's coordinates."""
    vb = hm.plot.getViewBox()
    nx, ny = hm.grid.shape
    return [_to_widget(hm, vb.mapViewToScene(QRectF(i - 0.5, j - 0.5, 1, 1)).boundingRect())
            for i in range(nx) for j in range(ny)]


def _legend_rect(hm) -> QRect:
    """The key of the paths: it lives in the plot's title."""
    return _to_widget(hm, hm.plot.titleLabel.item.sceneBoundingRect())


def _reachable(area, widget, rect: QRect) -> bool:
    """`rect` (in widget's coordinates) can be brought whole into the scroll area's viewport by scrolling it."""
    top = widget.mapTo(area.widget(), rect.topLeft()).y()
    bottom = top + rect.height()
    view_h = area.viewport().height()
    bar = area.verticalScrollBar()
    return rect.height() <= view_h and bottom - view_h <= bar.maximum() and top >= bar.minimum()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_row_of_a_six_path_run_is_visible_with_the_banner_at_1024x700(make_window, qtbot, theme):
    assert len(PATHS) >= 6
    win = make_window(spec=SPEC, size=SMALL)
    win.apply_theme(theme)
    win.tabs.setCurrentIndex(0)
    _settle(qtbot)
    win.session.set_results(_rows(PATHS[:6]), SPEC)
    _settle(qtbot)
    assert win.quality_label.isVisible() and win.quality_label.text()
    assert win.size().width() <= SMALL[0] and win.size().height() <= SMALL[1]
    t = win.table
    assert t.model().rowCount() == 6
    view = t.viewport()
    last = t.rowViewportPosition(5) + t.rowHeight(5)
    # every row lies inside the table's own view: none hidden behind the table's scroll bar
    assert t.rowViewportPosition(0) >= 0 and last <= view.height(), (last, view.height())
    # and the table's view is on screen, or the Run tab scrolls to it
    rows = QRect(QPoint(0, 0), view.size())
    assert _reachable(win.run_tab, view, rows), (view.height(), win.run_tab.viewport().height())
    # the charts keep their legible height as well
    assert win.chart_split.height() >= win.CHARTS_MIN_H


def _grid_2x2():
    from explorer.core.problem.sweep_plan import SweepPoint

    base = parse_descriptor("mb1ic8ih8oc8kh3ph1")
    points, items = [], []
    for j, mb in enumerate((1, 2)):
        for i, g in enumerate((1, 2)):
            spec = base.replace(g=g, mb=mb)
            idx = len(points)
            points.append(SweepPoint(idx, {"g": g, "mb": mb}, spec))
            for k, p in enumerate(PATHS[:6]):
                ms = 1.0 + 0.3 * ((k + i + j) % 6)
                r = Result(spec=spec, path=p, threads=1, status="ok", median_ms=ms, p25_ms=ms, p75_ms=ms,
                           gflops=spec.ops / ms / 1e6, samples=5, quality="noisy" if (i, j, k) == (1, 1, 2) else "ok",
                           quality_reason=REASON if (i, j, k) == (1, 1, 2) else "")
                r.vary = f"g={g};mb={mb}"
                items.append((idx, r))
    setup = {"mode": "grid", "varies": "g=1,2;mb=1,2", "batch": "", "base": base.descriptor(),
             "paths": ",".join(PATHS[:6]), "threads": 1, "budget_ms": 5, "trace": False}
    return {"setup": setup, "points": points, "items": items}


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_restored_2x2_heatmap_shows_every_column_and_its_legend_at_1024x700(make_window, qtbot, tmp_path, theme):
    win = make_window(size=SMALL)
    win.sweep_view.restore_state(_grid_2x2())
    win.tabs.setCurrentIndex(1)  # saved with the Sweep tab selected: it reopens there
    path = tmp_path / "grid.json"
    assert win.save_session(str(path), ask=False)
    again = make_window(size=SMALL)
    again.apply_theme(theme)
    assert again.open_session(str(path))
    assert again.tabs.currentIndex() == 1
    _settle(qtbot)
    sv = again.sweep_view
    sv.redraw_now()
    _settle(qtbot)
    assert sv.stack.currentWidget() is sv.heatmap
    area = again.tabs.currentWidget()
    hm = sv.heatmap
    for mode in ("fastest", "speedup"):
        sv.heat_combo.setCurrentIndex(sv.heat_combo.findData(mode))
        sv.redraw_now()
        _settle(qtbot)
        # the heatmap's drawing area is on screen or the tab scrolls to it (height and width)
        assert _reachable(area, hm, QRect(QPoint(0, 0), hm.size())), (
            hm.mapTo(area.widget(), QPoint(0, 0)).y(), hm.height(), area.viewport().height(), area.widget().height(),
            area.verticalScrollBar().maximum())
        left = hm.mapTo(area.widget(), QPoint(0, 0)).x()
        assert left + hm.width() <= area.viewport().width() + area.horizontalScrollBar().maximum()
        # every cell lies inside the plot's view, the view inside the widget, and the key whole inside it
        view = _view_rect(hm).adjusted(-1, -1, 1, 1)
        cells = _cell_rects(hm)
        assert len(cells) == 4
        for rect in cells:
            assert view.contains(rect), (mode, rect, view)
        assert hm.rect().adjusted(-1, -1, 1, 1).contains(view), (mode, view, hm.rect())
        legend = _legend_rect(hm)
        assert legend.height() > 0 and hm.rect().contains(legend), (mode, legend, hm.rect())
