"""The app's widget style: Fusion, with check box and radio indicators that keep their contrast in both themes.

Fusion outlines an indicator in the window colour darkened by 40 % and fills it with the base colour: on the
dark theme's panel (#2b2d31) that is a near-black square on near-black, and a checked radio button hardly
differs from an unchecked one. This style outlines every indicator in the theme's muted text colour (at least
3:1 against both panels) and fills a checked one with the highlight colour.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QPalette, QPen
from PySide6.QtWidgets import QProxyStyle, QStyle

__all__ = ["AppStyle"]

_CHECK = QStyle.PrimitiveElement.PE_IndicatorCheckBox
_RADIO = QStyle.PrimitiveElement.PE_IndicatorRadioButton


class AppStyle(QProxyStyle):
    def __init__(self):
        super().__init__("Fusion")

    def drawPrimitive(self, element, option, painter, widget=None):  # noqa: N802 - Qt API
        if element not in (_CHECK, _RADIO):
            super().drawPrimitive(element, option, painter, widget)
            return
        pal = option.palette
        on = bool(option.state & QStyle.StateFlag.State_On)
        enabled = bool(option.state & QStyle.StateFlag.State_Enabled)
        r = QRectF(option.rect).adjusted(0.5, 0.5, -0.5, -0.5)
        painter.save()
        painter.setRenderHint(painter.RenderHint.Antialiasing, True)
        painter.setPen(QPen(pal.color(QPalette.PlaceholderText) if enabled else pal.color(QPalette.Mid), 1.2))
        # Checked and disabled: filled with the disabled text colour, the mark in the base colour (a white tick
        # on the white base drew an empty box in the light theme).
        disabled_text = pal.color(QPalette.Disabled, QPalette.WindowText)
        fill = pal.color(QPalette.Highlight) if enabled else disabled_text
        mark = pal.color(QPalette.HighlightedText) if enabled else pal.color(QPalette.Base)
        painter.setBrush(fill if on else pal.color(QPalette.Base))
        if element == _RADIO:
            painter.drawEllipse(r)
            if on:  # a light dot in the filled circle: checked reads at a glance in both themes
                painter.setPen(Qt.NoPen)
                painter.setBrush(mark)
                d = r.width() * 0.36
                painter.drawEllipse(r.center(), d / 2, d / 2)
        else:
            painter.drawRoundedRect(r, 2, 2)
            x, y, w, h = r.left(), r.top(), r.width(), r.height()
            if on:  # a light tick on the highlight
                painter.setPen(QPen(mark, 1.8, Qt.SolidLine, Qt.RoundCap, Qt.RoundJoin))
                painter.drawPolyline([QPointF(x + w * 0.22, y + h * 0.52), QPointF(x + w * 0.42, y + h * 0.72),
                                      QPointF(x + w * 0.78, y + h * 0.30)])
            elif option.state & QStyle.StateFlag.State_NoChange:  # partly checked: a dash in the text colour
                painter.setPen(QPen(pal.color(QPalette.Text), 1.8, Qt.SolidLine, Qt.RoundCap))
                painter.drawLine(QPointF(x + w * 0.25, y + h / 2), QPointF(x + w * 0.75, y + h / 2))
        painter.restore()
