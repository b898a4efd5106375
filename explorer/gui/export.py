"""Chart export: PNG or SVG of a pyqtgraph plot, written to a temp name and renamed."""

from __future__ import annotations

import os

from PySide6.QtCore import QRectF


def svg_of(item, path: str) -> None:
    """Vector export with QSvgGenerator (the scene renders its items as SVG shapes)."""
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    rect = item.sceneBoundingRect()
    gen = QSvgGenerator()
    gen.setFileName(path)
    gen.setSize(rect.size().toSize())
    gen.setViewBox(QRectF(0, 0, rect.width(), rect.height()))
    gen.setTitle("MKLDNN Explorer chart")
    painter = QPainter(gen)
    try:
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
    tmp = f"{path}.part{suffix}"
    try:
        if suffix == ".svg":
            try:
                exporters.SVGExporter(item).export(tmp)
            except ValueError:  # pyqtgraph 0.14 cannot re-read Qt 6.11's SVG path syntax
                svg_of(item, tmp)
        else:
            ex = exporters.ImageExporter(item)
            ex.parameters()["width"] = max(width, int(item.sceneBoundingRect().width()))
            ex.export(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
