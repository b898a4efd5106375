"""Issue 24, points 2, 4, 5 and 7: a dark SVG export has the dark background and matches its PNG, noisy crosses
are drawn as paths in SVG, legends scale with a PNG, check boxes and radio buttons keep their contrast in the
dark theme, ATen op names are not middle-elided, the median split reads alike at any size, and a reopened
session's Layouts pane says that layouts are not stored."""

import re

import numpy as np
import pytest
from PySide6.QtGui import QColor, QImage, QPainter

from explorer.core.measure.machine import Peak
from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.results import Result

DESC = "mb1ic8ih8oc8kh3ph1"


def _result(path, median, quality="ok", ic=8):
    spec = parse_descriptor(DESC).replace(ic=ic)
    return Result(spec=spec, path=path, threads=1, samples=10, median_ms=median, p25_ms=median * 0.99,
                  p75_ms=median * 1.01, iqr_ms=median * 0.02, gflops=spec.ops / (median / 1e3) / 1e9,
                  quality=quality, quality_reason="held" if quality == "noisy" else "")


def _svg_image(path, size):
    from PySide6.QtSvg import QSvgRenderer

    img = QImage(size, QImage.Format_ARGB32)
    img.fill(QColor("#ffffff"))  # what a browser shows behind a transparent SVG
    p = QPainter(img)
    QSvgRenderer(str(path)).render(p)
    p.end()
    return img


def _array(img: QImage) -> np.ndarray:
    img = img.convertToFormat(QImage.Format_RGB32)
    a = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine())[:, : img.width() * 4]
    return a.reshape(img.height(), img.width(), 4)[:, :, :3].astype(float)


@pytest.fixture
def dark_roofline(qtbot):
    from explorer.core.session.state import PeakMeasured
    from explorer.gui.common.session_bridge import SessionBridge
    from explorer.gui.tabs.roofline_view import RooflineView

    bridge = SessionBridge()
    v = RooflineView(bridge)
    qtbot.addWidget(v)
    v.resize(900, 520)
    v.show()
    v.set_theme("dark")
    bridge.session.apply(PeakMeasured(Peak(300.0, 600.0, 12.0, 1, "2025-01-01T00:00:00", "test")))
    rows = [_result(p, m, q, ic=ic) for ic in (8, 16) for p, m, q in (("dense", 1.0, "ok"), ("mkldnn", 0.5, "noisy"))]
    bridge.session.set_results(rows, rows[0].spec)
    v.redraw()
    qtbot.wait(50)
    return v


def test_dark_svg_has_the_dark_background_and_matches_the_png(dark_roofline, tmp_path):
    from explorer.gui.common.colors import theme

    from explorer.gui.common.export import export_plot

    v = dark_roofline
    # a PNG 2.5 times the screen size: the legend (and every mark) must scale with the rest, as in the SVG
    export_plot(v, str(tmp_path / "r.png"), width=int(2.5 * v.export_item().sceneBoundingRect().width()))
    assert v.export(str(tmp_path / "r.svg"))
    png = QImage(str(tmp_path / "r.png"))
    svg = _svg_image(tmp_path / "r.svg", png.size())
    bg = QColor(theme("dark")["bg"])
    a, b = _array(png), _array(svg)
    # the corners (no text there) are the theme's background in both
    for img in (a, b):
        for y, x in ((2, 2), (2, -3), (-3, 2), (-3, -3)):
            assert np.abs(img[y, x] - [bg.red(), bg.green(), bg.blue()]).sum() < 30, img[y, x]
    # and the two agree pixel for pixel, give or take anti-aliasing and font hinting
    diff = np.abs(a - b).sum(axis=2)
    assert (diff > 120).mean() < 0.03, (diff > 120).mean()


def test_noisy_crosses_are_paths_in_svg_not_the_symbol_sheet(dark_roofline, tmp_path):
    v = dark_roofline
    assert v.noisy_points == 2
    assert v.export(str(tmp_path / "r.svg"))
    text = (tmp_path / "r.svg").read_text()
    # Qt's SVG writer embeds every drawn pixmap as an <image>: the scatter atlas was drawn once per mark
    assert len(re.findall(r"<image\b", text)) == 0


def _contrast(c1: QColor, c2: QColor) -> float:
    def lum(c):
        def ch(v):
            v /= 255
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

        return 0.2126 * ch(c.red()) + 0.7152 * ch(c.green()) + 0.0722 * ch(c.blue())

    a, b = sorted((lum(c1), lum(c2)), reverse=True)
    return (a + 0.05) / (b + 0.05)


@pytest.mark.parametrize("kind", ["check", "radio"])
def test_dark_indicators_keep_their_contrast(qtbot, kind):
    from PySide6.QtWidgets import QApplication, QCheckBox, QRadioButton, QStyle, QStyleOptionButton

    from explorer.gui.app import make_app
    from explorer.gui.common import colors

    app = make_app()
    old = app.palette()
    app.setPalette(colors.palette("dark"))
    try:
        w = (QCheckBox if kind == "check" else QRadioButton)("stored")
        qtbot.addWidget(w)
        w.show()
        opt = QStyleOptionButton()
        w.initStyleOption(opt)
        el = QStyle.SE_CheckBoxIndicator if kind == "check" else QStyle.SE_RadioButtonIndicator
        rect = w.style().subElementRect(el, opt, w)
        panel = QColor(colors.theme("dark")["window"])

        def best(img):
            return max(_contrast(img.pixelColor(x, y), panel) for x in range(rect.left(), rect.right() + 1)
                       for y in range(rect.top(), rect.bottom() + 1))

        off = w.grab().toImage()
        assert best(off) >= 3.0  # the unchecked indicator's outline is visible on the dark panel
        w.setChecked(True)
        on = w.grab().toImage()
        changed = sum(1 for x in range(rect.left(), rect.right() + 1) for y in range(rect.top(), rect.bottom() + 1)
                      if abs(on.pixelColor(x, y).lightness() - off.pixelColor(x, y).lightness()) > 60)
        assert changed >= 0.25 * rect.width() * rect.height()  # checked and unchecked differ at a glance
    finally:
        QApplication.instance().setPalette(old)


def test_aten_op_names_are_not_middle_elided(qtbot):
    from PySide6.QtCore import Qt

    from explorer.core.trace.aten import AtenOp
    from explorer.gui.inspect.aten_view import AtenView

    v = AtenView()
    qtbot.addWidget(v)
    v.resize(260, 400)
    v.show()
    r = _result("dense", 1.0)
    r.aten = [AtenOp("aten::conv2d", 0, 0.0, 50.0), AtenOp("aten::convolution", 1, 1.0, 48.0),
              AtenOp("aten::_convolution", 2, 2.0, 46.0), AtenOp("aten::mkldnn_convolution", 3, 3.0, 44.0)]
    v.set_result(r)
    assert v.tree.textElideMode() != Qt.ElideMiddle
    fm = v.tree.fontMetrics()
    need = max(fm.horizontalAdvance(n) for n in v.op_names())
    assert v.tree.columnWidth(0) >= need  # the names whole (the pane scrolls if it must)


def test_the_rest_reads_at_the_medians_precision():
    from explorer.gui.inspect.aten_view import split_text

    tiny = split_text(1.02, 0.9, 0.1197, 0.000231)
    zero = split_text(1.02, 0.9, 0.12, 0.0)
    rest = lambda t: re.search(r"the rest <b>([^<]+)</b>", t).group(1)  # noqa: E731
    assert "e-" not in rest(tiny) and len(rest(tiny)) == len(rest(zero)), (rest(tiny), rest(zero))


def test_reopened_session_says_layouts_are_not_stored(make_window, qtbot, tmp_path):
    from explorer.core.session.store import save_session

    path = tmp_path / "s.json"
    rows = [_result("dense", 1.0), _result("mkldnn", 0.5)]
    save_session(path, rows[0].spec, {"paths": ["dense", "mkldnn"], "threads": 1, "budget_ms": 5}, rows, None)
    win = make_window(spec=parse_descriptor(DESC))
    assert win.open_session(str(path))
    assert win.layout_view.stack.currentWidget() is win.layout_view.placeholder
    assert "not stored" in win.layout_view.placeholder.text()


def test_empty_sweep_hints_fit_their_plot(qtbot):
    from explorer.gui.charts.bar_chart import BarChart
    from explorer.gui.charts.line_charts import LineChart

    for chart in (BarChart(), LineChart()):
        qtbot.addWidget(chart)
        chart.resize(330, 300)
        chart.show()
        chart._show_message("Run a batch: one bar group per layer appears as each finishes, with its speedup.")
        qtbot.wait(20)
        text = chart.message.textItem.mapRectToScene(chart.message.textItem.boundingRect())
        area = chart.plot.getViewBox().sceneBoundingRect()
        assert area.left() - 1 <= text.left() and text.right() <= area.right() + 1, (text, area)
