"""The time bar shared by the Trace tab's two sides: where one call's time went, split by kind of work."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtCore import Qt

CONV_COLOUR = QtGui.QColor("#3b7dd8")
REORDER_COLOUR = QtGui.QColor("#ffb300")
OTHER_COLOUR = QtGui.QColor("#9e9e9e")


def format_ms(t: float) -> str:
    if t == 0:
        return "0"
    if t < 0.001:
        return f"{t:.2e}"
    if t < 1:
        return f"{t:.4f}"
    if t < 100:
        return f"{t:.3f}"
    return f"{t:.1f}"


class TimeBar(QtWidgets.QWidget):
    """A thin stacked horizontal bar: convolution | reorder | other time."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.segments: list[tuple[str, float, QtGui.QColor]] = []
        self.setMinimumHeight(16)
        self.setMaximumHeight(20)
        self.setSizePolicy(QtWidgets.QSizePolicy.Expanding, QtWidgets.QSizePolicy.Fixed)

    def set_segments(self, segments) -> None:
        self.segments = [(n, max(0.0, float(v)), c) for n, v, c in segments]
        total = sum(v for _, v, _ in self.segments)
        self.setToolTip("\n".join(f"{n}: {format_ms(v)} ms ({100 * v / total:.0f} %)" for n, v, _ in self.segments)
                        if total > 0 else "no time recorded")
        self.update()

    def sizeHint(self):
        return QtCore.QSize(300, 18)

    def paintEvent(self, ev):
        p = QtGui.QPainter(self)
        p.setRenderHint(QtGui.QPainter.Antialiasing, False)
        r = self.rect().adjusted(0, 1, -1, -2)
        p.setPen(Qt.NoPen)
        p.setBrush(self.palette().color(QtGui.QPalette.AlternateBase))
        p.drawRect(r)
        total = sum(v for _, v, _ in self.segments)
        if total > 0:
            x = float(r.left())
            for _, v, c in self.segments:
                w = r.width() * v / total
                p.setBrush(c)
                p.drawRect(QtCore.QRectF(x, r.top(), w, r.height()))
                x += w
        pen = QtGui.QPen(self.palette().color(QtGui.QPalette.Mid))
        p.setPen(pen)
        p.setBrush(Qt.NoBrush)
        p.drawRect(r)
        p.end()
