"""Small layout helpers shared by the views: a flow layout that wraps and a one-line label that elides."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtCore import Qt

__all__ = ["ElidedLabel", "FlowLayout"]


class FlowLayout(QtWidgets.QLayout):
    """Widgets left to right, wrapped onto more lines when the width runs out (Qt's flow layout example):
    the controls take one line in a wide view and two in a narrow one, never a horizontal scroll bar."""

    def __init__(self, parent=None, hspacing: int = 6, vspacing: int = 3):
        super().__init__(parent)
        self._items: list = []
        self._h, self._v = hspacing, vspacing

    def addItem(self, item) -> None:  # noqa: N802 - Qt override
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, i: int):  # noqa: N802 - Qt override
        return self._items[i] if 0 <= i < len(self._items) else None

    def takeAt(self, i: int):  # noqa: N802 - Qt override
        return self._items.pop(i) if 0 <= i < len(self._items) else None

    def expandingDirections(self):  # noqa: N802 - Qt override
        return Qt.Orientations(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt override
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt override
        return self._place(QtCore.QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect) -> None:  # noqa: N802 - Qt override
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802 - Qt override
        w = sum(i.sizeHint().width() for i in self._items) + self._h * max(0, len(self._items) - 1)
        h = max((i.sizeHint().height() for i in self._items), default=0)
        m = self.contentsMargins()
        return QtCore.QSize(w + m.left() + m.right(), h + m.top() + m.bottom())

    def minimumSize(self) -> QtCore.QSize:  # noqa: N802 - Qt override
        size = QtCore.QSize()
        for i in self._items:
            size = size.expandedTo(i.minimumSize())
        m = self.contentsMargins()
        return size + QtCore.QSize(m.left() + m.right(), m.top() + m.bottom())

    def _place(self, rect, move: bool) -> int:
        m = self.contentsMargins()
        r = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        x, y = r.x(), r.y()
        # Items are laid out in groups that stay together (a label with its control): a group starts a
        # new line only as a whole. A group ends after every item whose widget has the "flowBreak" flag.
        groups, cur = [], []
        for item in self._items:
            if item.widget() is not None and not item.widget().isVisibleTo(self.parentWidget()):
                continue
            cur.append(item)
            if item.widget() is None or item.widget().property("flowBreak"):
                groups.append(cur)
                cur = []
        if cur:
            groups.append(cur)
        lines: list[list] = [[]]  # per line: (item, size) pairs
        for group in groups:
            sizes = [i.sizeHint() for i in group]
            gw = sum(sz.width() for sz in sizes) + self._h * (len(group) - 1)
            if x > r.x() and x + gw > r.right() + 1:
                x = r.x()
                lines.append([])
            lines[-1] += list(zip(group, sizes))
            x += gw + self._h
        line_h = 0
        for n, line in enumerate(lines):
            if n:
                y += line_h + self._v
            line_h = max((sz.height() for _, sz in line), default=0)
            x = r.x()
            for item, sz in line:
                if move:  # centred on the line: a label sits level with the combo box beside it
                    item.setGeometry(QtCore.QRect(QtCore.QPoint(x, y + (line_h - sz.height()) // 2), sz))
                x += sz.width() + self._h
        return y + line_h - rect.y() + m.bottom()


class ElidedLabel(QtWidgets.QLabel):
    """One line of plain text, elided on the right when narrow (the full text is in the tooltip): its
    minimum width is small, so a long title never forces a horizontal scroll bar."""

    def __init__(self, text: str = "", parent=None):
        super().__init__(text, parent)
        self.setSizePolicy(QtWidgets.QSizePolicy.Ignored, QtWidgets.QSizePolicy.Preferred)
        self.setMinimumWidth(40)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        super().setText(text)
        self.setToolTip(text)

    def minimumSizeHint(self) -> QtCore.QSize:  # noqa: N802 - Qt override
        return QtCore.QSize(40, super().minimumSizeHint().height())

    def paintEvent(self, ev) -> None:  # noqa: N802 - Qt override
        p = QtGui.QPainter(self)
        r = self.contentsRect()
        p.setPen(self.palette().color(QtGui.QPalette.WindowText))
        p.setFont(self.font())
        p.drawText(r, Qt.AlignLeft | Qt.AlignVCenter, self.fontMetrics().elidedText(self.text(), Qt.ElideRight,
                                                                                   r.width()))
        p.end()
