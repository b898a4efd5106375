"""Chart export: PNG or SVG of a pyqtgraph plot, written to a temp name and renamed."""

from __future__ import annotations

import os

from PySide6.QtCore import QRectF


def clip_segments(x, y, left: float, top: float, right: float, bottom: float):
    """The parts of the polyline (x, y) inside the rectangle, as point pairs (Liang-Barsky per segment).

    Returns (xs, ys) with two points per visible segment, for a curve drawn with connect="pairs". NaN points
    break the line, as on screen.
    """
    import numpy as np

    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.size < 2:
        return np.empty(0), np.empty(0)
    x0, y0, x1, y1 = x[:-1], y[:-1], x[1:], y[1:]
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = np.zeros(dx.shape), np.ones(dx.shape)
    out = ~(np.isfinite(x0) & np.isfinite(y0) & np.isfinite(x1) & np.isfinite(y1))
    with np.errstate(divide="ignore", invalid="ignore"):
        for p, q in ((-dx, x0 - left), (dx, right - x0), (-dy, y0 - top), (dy, bottom - y0)):
            r = q / p
            out |= (p == 0) & (q < 0)
            t0 = np.where(p < 0, np.maximum(t0, r), t0)
            t1 = np.where(p > 0, np.minimum(t1, r), t1)
    keep = ~out & (t0 <= t1)
    t0, t1 = t0[keep], t1[keep]
    xs = np.empty(2 * t0.size)
    ys = np.empty(2 * t0.size)
    xs[0::2], ys[0::2] = x0[keep] + t0 * dx[keep], y0[keep] + t0 * dy[keep]
    xs[1::2], ys[1::2] = x0[keep] + t1 * dx[keep], y0[keep] + t1 * dy[keep]
    return xs, ys


class _ClippedCurves:
    """While exporting SVG, every curve under `item` holds only its part inside its plot area.

    SVG renderers differ in clip-path support (Qt's own renderer ignores it on groups), so the geometry itself
    stops at the axes, as on screen; the curves get their data back afterwards.
    """

    def __init__(self, item):
        self.item = item
        self.saved: list = []

    def __enter__(self):
        import pyqtgraph as pg

        area = self.item.sceneBoundingRect()
        for it in self.item.scene().items():
            if not isinstance(it, pg.PlotCurveItem) or not it.isVisible() or it.xData is None:
                continue
            vb = it.getViewBox()
            if vb is None or not area.intersects(vb.sceneBoundingRect()):
                continue
            r = it.mapRectFromView(vb.viewRect())
            self.saved.append((it, it.xData, it.yData, it.opts.get("connect", "all")))
            xs, ys = clip_segments(it.xData, it.yData, r.left(), r.top(), r.right(), r.bottom())
            it.setData(xs, ys, connect="pairs")
        return self

    def __exit__(self, *exc):
        for it, x, y, connect in self.saved:
            it.setData(x, y, connect=connect)
        return False


class _ExportLook:
    """While exporting, the items draw as for an export (pyqtgraph's setExportMode: each scatter symbol is its
    own path, not a fragment of the symbol atlas, which SVG embedded whole in every mark), and legends scale
    with the rest (they ignore the view's transform on screen, so a wider PNG left them at screen size)."""

    def __init__(self, item, scale: float = 1.0):
        self.item, self.scale = item, scale
        self.items: list = []
        self.legends: list = []

    def __enter__(self):
        import pyqtgraph as pg
        from PySide6.QtWidgets import QGraphicsItem

        flag = QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations
        for it in self.item.scene().items():
            if isinstance(it, pg.ScatterPlotItem):
                it.setExportMode(True, {"antialias": True, "resolutionScale": self.scale})
                self.items.append(it)
            if isinstance(it, pg.LegendItem) and it.flags() & flag:
                it.setFlag(flag, False)
                self.legends.append(it)
        return self

    def __exit__(self, *exc):
        from PySide6.QtWidgets import QGraphicsItem

        for it in self.items:
            it.setExportMode(False)
        for it in self.legends:
            it.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations, True)
        return False


def background_of(item):
    """The chart's background colour as its view paints it (the theme's): an export must not be transparent,
    or a dark theme's light text is invisible on a white page."""
    from PySide6.QtGui import QColor

    views = item.scene().views() if item.scene() is not None else []
    if views:
        brush = views[0].backgroundBrush()
        if brush.style() != 0:  # Qt.NoBrush
            return brush.color()
    return QColor("#ffffff")


def svg_of(item, path: str) -> None:
    """Vector export with QSvgGenerator (the scene renders its items as SVG shapes)."""
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    rect = item.sceneBoundingRect()
    try:  # SVG 1.1 output keeps clip paths (Qt >= 6.5): curves stay inside the plot area as on screen
        gen = QSvgGenerator(QSvgGenerator.SvgVersion.Svg11)
    except (AttributeError, TypeError):
        gen = QSvgGenerator()
    gen.setFileName(path)
    # The resolution QPicture-drawn items (BarGraphItem, ...) were recorded at: at the generator's default 72
    # dpi, QPicture.play scales them by 72/96 and bars came out 25% short.
    from PySide6.QtGui import QPicture

    gen.setResolution(QPicture().logicalDpiX())
    gen.setSize(rect.size().toSize())
    gen.setViewBox(QRectF(0, 0, rect.width(), rect.height()))
    gen.setTitle("MKLDNN Explorer chart")
    painter = QPainter(gen)
    try:
        painter.fillRect(QRectF(0, 0, rect.width(), rect.height()), background_of(item))
        with _ExportLook(item):
            item.scene().render(painter, QRectF(0, 0, rect.width(), rect.height()), rect)
    finally:
        painter.end()


def export_plot(chart, path: str, width: int = 1200) -> None:
    """PNG or SVG (by suffix) of a chart's plot (or of `chart.export_item()` when it has one). Raises on failure.

    Written to a temp name and renamed, so a failed export never leaves half a file.
    """
    import pyqtgraph.exporters as exporters

    item = chart.export_item() if hasattr(chart, "export_item") else getattr(chart, "plot", chart)
    hover = getattr(chart, "hover", None)
    if hover is not None:
        hover.hide()
    path = str(path)
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in (".png", ".svg"):
        raise ValueError(f"choose a .png or .svg file name, not {suffix or 'no suffix'!r}")
    from explorer.core.files import commit_file, refuse_special

    refuse_special(path)  # a link, device or FIFO is refused before anything is drawn
    tmp = f"{path}.part{suffix}"
    try:
        if suffix == ".svg":
            # Qt's own SVG painter over the scene, not pyqtgraph's SVGExporter: that one re-maps each item's
            # transform itself and got it wrong (bar items drawn through a QPicture came out 25% short and off
            # their axes; curves escaped the plot area because it drops the view box's clipping).
            with _ClippedCurves(item):
                svg_of(item, tmp)
        else:
            ex = exporters.ImageExporter(item)
            ex.parameters()["width"] = max(width, int(item.sceneBoundingRect().width()))
            ex.parameters()["background"] = background_of(item)
            with _ExportLook(item, ex.parameters()["width"] / max(1.0, item.sceneBoundingRect().width())):
                ex.export(tmp)
        commit_file(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
