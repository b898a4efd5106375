"""One pane of the layout view: a caption over a pyqtgraph ViewBox with the picture's image, its pooled
labels and dashed outlines, and the hover highlights. The view decides what to draw; the pane only draws it."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtCore import Qt

__all__ = ["LayoutPane"]


class LayoutPane(QtWidgets.QWidget):
    """A caption plus a pyqtgraph ViewBox (no axes) holding one ImageItem and two highlight rectangles."""

    def __init__(self, caption: str, parent=None):
        super().__init__(parent)
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.caption = QtWidgets.QLabel(caption)
        self.caption.setWordWrap(True)
        f = self.caption.font()
        f.setBold(True)
        self.caption.setFont(f)
        lay.addWidget(self.caption)
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.setMinimumSize(120, 100)
        self.glw.ci.setContentsMargins(2, 2, 2, 2)
        self.vb = self.glw.addViewBox(lockAspect=True, invertY=True, enableMenu=True)
        self.vb.setMouseEnabled(x=True, y=True)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.vb.addItem(self.image)
        # Labels and dashed outlines are pooled and reused, never removed: on PySide6 6.12 with Python 3.11,
        # QGraphicsScene.removeItem drops a reference to None on every call, which aborts the process
        # after enough redraws ("none_dealloc: deallocating None").
        self.labels: list[pg.TextItem] = []
        self._labels_used = 0
        self.outline = QtWidgets.QGraphicsPathItem()
        self.outline.setBrush(Qt.NoBrush)
        self.outline.setZValue(50)
        self.vb.addItem(self.outline, ignoreBounds=True)
        self.hl_outer = QtWidgets.QGraphicsRectItem(0, 0, 1, 1)
        self.hl_inner = QtWidgets.QGraphicsRectItem(0, 0, 1, 1)
        for item, colour, width in ((self.hl_outer, "#000000", 4.0), (self.hl_inner, "#ffffff", 2.0)):
            pen = QtGui.QPen(QtGui.QColor(colour), width)
            pen.setCosmetic(True)
            item.setPen(pen)
            item.setBrush(Qt.NoBrush)
            item.setZValue(100 + width)
            item.setVisible(False)
            self.vb.addItem(item, ignoreBounds=True)
        self.hl_group = QtWidgets.QGraphicsRectItem(0, 0, 1, 1)
        gpen = QtGui.QPen(QtGui.QColor("#ff2bd6"), 2.0)
        gpen.setCosmetic(True)
        self.hl_group.setPen(gpen)
        self.hl_group.setBrush(Qt.NoBrush)
        self.hl_group.setZValue(99)
        self.hl_group.setVisible(False)
        self.vb.addItem(self.hl_group, ignoreBounds=True)
        lay.addWidget(self.glw, 1)

    def set_image(self, img: np.ndarray, lut: np.ndarray):
        self.image.setImage(np.ascontiguousarray(img), lut=lut, levels=(0, 255), autoLevels=False,
                            axisOrder="row-major")
        self.image.setRect(QtCore.QRectF(0, 0, img.shape[1], img.shape[0]))

    def begin_marks(self):
        self._labels_used = 0
        self.outline.setPath(QtGui.QPainterPath())

    def add_label(self, text, x, y, anchor, colour, fill=None, point_size=None):
        if self._labels_used == len(self.labels):
            t = pg.TextItem("")
            t.setZValue(60)
            self.vb.addItem(t, ignoreBounds=True)
            self.labels.append(t)
        t = self.labels[self._labels_used]
        self._labels_used += 1
        t.setColor(colour)
        t.setText(text)
        t.fill = pg.mkBrush(fill) if fill is not None else pg.mkBrush(None)
        if point_size is not None:
            f = t.textItem.font()
            f.setPointSizeF(point_size)
            t.setFont(f)
        t.setAnchor(anchor)
        t.setPos(x, y)
        t.setVisible(True)
        t.update()

    def set_outlines(self, rects, pen):
        path = QtGui.QPainterPath()
        for r in rects:
            path.addRect(r)
        self.outline.setPen(pen)
        self.outline.setPath(path)

    def end_marks(self):
        for t in self.labels[self._labels_used:]:
            t.setVisible(False)

    def highlight(self, cell: tuple[int, int] | None, group=None):
        """Mark `cell` (x, y) with a high-contrast square and `group` (x, y, w, h) with a thin outline."""
        if group is None or cell is None:
            self.hl_group.setVisible(False)
        else:
            x, y, w, h = group
            self.hl_group.setRect(QtCore.QRectF(x - 0.15, y - 0.15, w + 0.3, h + 0.3))
            self.hl_group.setVisible(True)
        for item in (self.hl_outer, self.hl_inner):
            if cell is None:
                item.setVisible(False)
            else:
                item.setRect(QtCore.QRectF(cell[0], cell[1], 1, 1))
                item.setVisible(True)

    def cell_at_scene(self, scene_pos) -> tuple[int, int] | None:
        if not self.vb.sceneBoundingRect().contains(scene_pos):
            return None
        p = self.vb.mapSceneToView(scene_pos)
        return int(math.floor(p.x())), int(math.floor(p.y()))
