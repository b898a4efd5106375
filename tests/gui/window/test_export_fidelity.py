"""Issue 12, item 3: an SVG export shows what the PNG (and the screen) shows: bars as long as on their axis,
curves inside the plot area."""

import numpy as np


def _render_svg(path, size):
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    img = QImage(size, QImage.Format_ARGB32)
    img.fill(0xFFFFFFFF)
    p = QPainter(img)
    QSvgRenderer(str(path)).render(p)
    p.end()
    return img


def _runs(img, y, color, tol=40):
    """x pixels of row y whose colour is within tol of `color` (a QColor)."""
    xs = []
    for x in range(img.width()):
        c = img.pixelColor(x, y)
        if abs(c.red() - color.red()) + abs(c.green() - color.green()) + abs(c.blue() - color.blue()) < tol:
            xs.append(x)
    return xs


def test_summary_bars_in_svg_match_the_png(qtbot, tmp_path):
    from PySide6.QtGui import QImage

    from explorer.core.problem.spec import parse_descriptor
    from explorer.core.report.results import Result
    from explorer.gui.common.colors import qcolor
    from explorer.gui.common.export import export_plot
    from explorer.gui.run.summary_chart import SummaryChart

    spec = parse_descriptor("mb1ic8ih8oc8kh3ph1")
    s = SummaryChart()
    qtbot.addWidget(s)
    s.resize(600, 300)
    s.show()
    for p, m in (("dense", 1.0), ("native", 0.5), ("mkldnn", 2.0)):
        s.set_result(Result(spec=spec, path=p, threads=1, median_ms=m, p25_ms=m * 0.9, p75_ms=m * 1.1, samples=9))
    export_plot(s, tmp_path / "s.png")
    export_plot(s, tmp_path / "s.svg")
    png = QImage(str(tmp_path / "s.png"))
    svg = _render_svg(tmp_path / "s.svg", png.size())
    for path in ("dense", "native", "mkldnn"):
        color = qcolor(path)
        # the bar's row: the first image row where this colour spans the most pixels
        rows = [(len(_runs(png, y, color)), y) for y in range(0, png.height(), 3)]
        n, y = max(rows)
        assert n > 20, path
        a, b = _runs(png, y, color), _runs(svg, y, color)
        assert b, f"{path}: no bar at that height in the SVG"
        for ea, eb in ((a[0], b[0]), (a[-1], b[-1])):
            assert abs(ea - eb) <= 0.015 * png.width(), (path, a[0], a[-1], b[0], b[-1])


def test_timing_curves_stay_inside_the_plot_in_svg(qtbot, tmp_path):
    from PySide6.QtGui import QImage

    from explorer.gui.common.export import export_plot
    from explorer.gui.run.timing_chart import TimingChart

    t = TimingChart()
    qtbot.addWidget(t)
    t.resize(600, 300)
    t.show()
    t.reset(["dense"])
    t.set_samples("dense", np.r_[np.ones(50), 100 * np.ones(3), np.ones(50)])  # a spike far above the view
    t.redraw()
    t.plot.setYRange(0, 3, padding=0)
    qtbot.wait(10)
    t.legend.hide()  # its key (a blue line above the plot area) is not the curve
    export_plot(t, tmp_path / "t.png")
    export_plot(t, tmp_path / "t.svg")
    png = QImage(str(tmp_path / "t.png"))
    svg = _render_svg(tmp_path / "t.svg", png.size())
    vb = t.plot.getViewBox().sceneBoundingRect()
    item = t.plot.sceneBoundingRect()
    top = int((vb.top() - item.top()) * png.height() / item.height()) - 3
    assert top > 10
    def bluish(img, y0, y1):  # the dense curve's blue, antialiased (the title and axes are grey)
        return sum(1 for y in range(y0, y1) for x in range(img.width())
                   if img.pixelColor(x, y).blue() - img.pixelColor(x, y).red() > 30)

    assert bluish(png, 0, top) == 0
    assert bluish(svg, 0, top) == 0, "the curve escapes the plot area in the SVG"
    assert bluish(svg, top + 6, png.height()) > 50  # and the curve itself is there, inside


def test_clip_segments_keeps_the_inside_part():
    from explorer.gui.common.export import clip_segments

    xs, ys = clip_segments([0, 1, 2], [0, 10, 0], 0, 0, 2, 1)
    assert xs.size == 4 and np.allclose(ys, [0, 1, 1, 0]) and np.allclose(xs, [0, 0.1, 1.9, 2])
    xs, ys = clip_segments([0, 1, float("nan"), 3], [0, 0.5, 0.5, 0.5], 0, 0, 5, 1)
    assert xs.size == 2  # NaN breaks the line, as on screen
