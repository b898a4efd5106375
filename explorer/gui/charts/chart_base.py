"""The base of the sweep charts and what they share with other plots: theme styling, the hover label, the
nearest point under the mouse. The charts themselves (line_charts, bar_chart, heatmap_chart) build on it.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsItem, QGraphicsView, QVBoxLayout, QWidget

from explorer.gui.charts.chart_axes import layer_ticks, log_axes
from explorer.gui.common.colors import path_color, theme
from explorer.gui.common.doubt import MARK_NAME

__all__ = ["ChartBase", "HoverLabel", "style_plot", "nearest", "hover_text"]


def wrap_keys(parts, width_px: float, char_px: float = 7.2) -> str:
    """Key entries (visible text, html) on as many lines as keep each line inside width_px: one long line sets
    the plot's minimum width and pushes what it draws out of the view."""
    lines, line, used = [], [], 0.0
    for plain, html in parts:
        need = (len(plain) + 2) * char_px
        if line and used + need > width_px:
            lines.append("&nbsp;&nbsp;".join(line))
            line, used = [], 0.0
        line.append(html)
        used += need
    if line:
        lines.append("&nbsp;&nbsp;".join(line))
    return "<br>".join(lines)


def style_plot(plot: pg.PlotItem, widget: pg.PlotWidget, theme_name: str) -> None:
    """Background, axes, title and legend in the colours of theme `theme_name`."""
    t = theme(theme_name)
    widget.setBackground(t["bg"])
    for ax in ("left", "bottom"):
        a = plot.getAxis(ax)
        a.setPen(pg.mkPen(t["muted"]))
        a.setTextPen(pg.mkPen(t["fg"]))
    plot.titleLabel.setText(plot.titleLabel.text, color=t["fg"])
    legend = getattr(plot, "legend", None)
    if legend is not None:
        legend.setLabelTextColor(t["fg"])
        bg = QColor(t["bg"])
        bg.setAlpha(200)  # see-through: a curve under the legend stays visible
        legend.setBrush(pg.mkBrush(bg))
        legend.setPen(pg.mkPen(t["grid"]))


class HoverLabel:
    """A text box in the plot that follows the mouse; `text` is what it shows (tests read it)."""

    def __init__(self, plot: pg.PlotItem, lookup):
        self.plot = plot
        self.lookup = lookup  # (view QPointF, scene QPointF) -> (text, view anchor QPointF) | None
        self.text = ""
        self.item = pg.TextItem("", color="#202124", fill=pg.mkBrush(255, 255, 255, 235),
                                border=pg.mkPen("#9aa0a6"), anchor=(0, 1))
        self.item.setZValue(1000)
        self.item.hide()
        plot.addItem(self.item, ignoreBounds=True)
        plot.scene().sigMouseMoved.connect(self.on_move)

    def on_move(self, scene_pos) -> None:
        vb = self.plot.getViewBox()
        if not vb.sceneBoundingRect().contains(scene_pos):
            self.hide()
            return
        self.show_at(vb.mapSceneToView(scene_pos), scene_pos)

    def show_at(self, view_pos: QPointF, scene_pos: QPointF | None = None) -> str:
        vb = self.plot.getViewBox()
        if scene_pos is None:
            scene_pos = vb.mapViewToScene(view_pos)
        hit = self.lookup(view_pos, scene_pos)
        if not hit:
            self.hide()
            return ""
        text, anchor = hit
        self.text = text
        self.item.setText(text)
        r = vb.sceneBoundingRect()
        ax = 1 if scene_pos.x() > r.center().x() else 0
        ay = 0 if scene_pos.y() < r.center().y() else 1
        self.item.setAnchor((ax, ay))
        self.item.setPos(anchor)
        self.item.show()
        return text

    def hide(self) -> None:
        self.text = ""
        self.item.hide()

    def set_theme(self, name: str) -> None:
        t = theme(name)
        self.item.fill = pg.mkBrush(QColor(t["hover_bg"]))
        self.item.border = pg.mkPen(t["muted"])
        self.item.setColor(t["fg"])


def hover_text(t) -> str:
    """Hover texts are stored as strings or as callables that build them on demand."""
    return t() if callable(t) else t


def nearest(vb: pg.ViewBox, scene_pos: QPointF, xs: np.ndarray, ys: np.ndarray, max_px: float = 14.0) -> int | None:
    """Index of the point nearest the mouse in pixels (within max_px), vectorised: thousands stay cheap."""
    if xs.size == 0:
        return None
    rect = vb.viewRect()
    sr = vb.sceneBoundingRect()
    if rect.width() <= 0 or rect.height() <= 0:
        return None
    px = (xs - rect.left()) / rect.width() * sr.width() + sr.left()
    py = sr.bottom() - (ys - rect.top()) / rect.height() * sr.height()
    d = (px - scene_pos.x()) ** 2 + (py - scene_pos.y()) ** 2
    d = np.where(np.isfinite(d), d, np.inf)
    i = int(np.argmin(d))
    return i if d[i] <= max_px**2 else None


class ChartBase(QWidget):
    """What every sweep chart shares: the plot and its theme, the key in the title, hover, the empty-chart message.

    A chart subclasses it, draws in `redraw(data)` through `_add`, and leaves hover points in `_hover_pts`.
    """

    title = ""
    draws_layer_ticks = False  # a batch draws layer names under the bars: they follow the width

    def __init__(self, parent=None):
        super().__init__(parent)
        self.plot_widget = pg.PlotWidget(axisItems=log_axes())
        self.plot_widget.setViewportUpdateMode(QGraphicsView.BoundingRectViewportUpdate)  # one repaint rect
        self.plot = self.plot_widget.getPlotItem()
        self.plot.setTitle(self.title)
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        for ax in ("left", "bottom"):
            self.plot.getAxis(ax).enableAutoSIPrefix(False)  # ms stay ms: no hidden x1000 on the axis
            # major and first minor ticks only: the faint grid of the finest level cost ~20 ms a paint
            self.plot.getAxis(ax).setStyle(maxTickLevel=1)
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        for ax in ("left", "bottom"):  # axes (with their grid) replay from a pixmap until the range moves
            self.plot.getAxis(ax).setCacheMode(QGraphicsItem.DeviceCoordinateCache)
        # The key is drawn in the title, above the plot area: a legend box inside it covered data. The
        # LegendItem stays (hidden) for the theme code; self.keys is what the title shows.
        self.legend = self.plot.addLegend(offset=(-8, 8), labelTextSize="8pt", verSpacing=-6)
        self.legend.hide()
        self.keys: list[tuple[str, str, bool]] = []  # (name, colour, dashed) in drawing order
        self._base_title = self.title
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.plot_widget)
        self._theme = "light"
        self.redraws = 0
        self._items: list = []
        self._structure = None  # what the current items draw (see LineChart.redraw): same -> setData in place
        self._labels: dict[str, str] = {}
        self._title = self.title
        self.hover = HoverLabel(self.plot, self._lookup)
        self._hover_pts = (np.empty(0), np.empty(0), [])
        self.message = pg.TextItem("", color="#5f6368", anchor=(0.5, 0.5))
        self.plot.addItem(self.message, ignoreBounds=True)
        self.set_theme(self._theme)

    # Hover points: (xs, ys, texts). A redraw may leave a builder instead; the arrays are made on first use
    # (the first hover after a change), not on every redraw.
    @property
    def _hover_pts(self):
        build = self._hover_build
        if build is not None:
            self._hover_build = None
            self._hover_cache = build()
        return self._hover_cache

    @_hover_pts.setter
    def _hover_pts(self, value) -> None:
        self._hover_build = None
        self._hover_cache = value

    def _hover_later(self, build) -> None:
        self._hover_build = build

    def _reset_items(self) -> None:
        for it in self._items:
            self.plot.removeItem(it)
        self._items = []
        self._structure = None
        self.legend.clear()
        self.keys = []

    def _set_label(self, axis: str, text: str) -> None:
        """setLabel only when the text changes: each call re-lays the axis out and repaints it."""
        if self._labels.get(axis) != text:
            self._labels[axis] = text
            self.plot.setLabel(axis, text)

    def _set_title(self, text: str, **kw) -> None:
        """The chart's own title; the key of what is drawn follows on the lines below it."""
        self._base_title = text
        self._compose_title(**kw)

    def _compose_title(self, **kw) -> None:
        text = self._base_title
        if self.keys:
            fm_px = 7.2  # about one 8 pt character
            width = max(self.plot_widget.width() - 40, 160)
            lines, line, used = [], [], 0.0
            # One key per path, then one per baseline (its dashed curves use the path colours).
            keys = [(n, c, False) for n, c, d in self.keys if not d and n != MARK_NAME]
            for label in dict.fromkeys(n.partition(" · ")[2] for n, _, d in self.keys if d):
                keys.append((f"{label} (dashed)", theme(self._theme)["muted"], True))
            keys += [(n, c, False) for n, c, d in self.keys if n == MARK_NAME]  # the crosses' key last
            for name, color, dashed in keys:
                mark = "&#8211;&#8201;&#8211;" if dashed else "&#10005;" if name == MARK_NAME else "&#9632;"
                part = f'<span style="color:{color}">{mark}</span>&nbsp;{name}'
                need = (len(name) + 4) * fm_px
                if line and used + need > width:
                    lines.append("&nbsp;&nbsp; ".join(line))
                    line, used = [], 0.0
                line.append(part)
                used += need
            lines.append("&nbsp;&nbsp; ".join(line))
            text = f"{text}<br><span style='font-size:8pt'>{'<br>'.join(lines)}</span>"
        self._apply_title(text, **kw)

    def _apply_title(self, text: str, **kw) -> None:
        if self._title != text:
            self._title = text
            self.plot.setTitle(text, size="10pt", color=theme(self._theme)["fg"], **kw)
            # pyqtgraph gives the title one 30 px line: room for every line of the key
            h = self.plot.titleLabel.item.boundingRect().height() + 4
            self.plot.titleLabel.setMaximumHeight(h)
            self.plot.layout.setRowFixedHeight(0, max(30.0, h))

    def _add(self, item, name: str | None = None):
        self.plot.addItem(item)
        self._items.append(item)
        if name:
            path, _, base = name.partition(" · ")
            self.keys.append((name, path_color(path), bool(base)))
        return item

    def _lookup(self, view_pos, scene_pos):
        xs, ys, texts = self._hover_pts
        i = nearest(self.plot.getViewBox(), scene_pos, xs, ys)
        if i is None:
            return None
        return hover_text(texts[i]), QPointF(float(xs[i]), float(ys[i]))

    def _show_message(self, text: str) -> None:
        if not text and not self.message.isVisible():
            return  # nothing shown, nothing to show: no text layout
        self.message.setText(text)
        self._wrap_message()
        vb = self.plot.getViewBox()
        r = vb.viewRect()
        self.message.setPos(r.center())
        self.message.setVisible(bool(text))

    def _wrap_message(self) -> None:
        """The hint wraps inside the plot area (centred on it, a long one was cut at both sides)."""
        w = self.plot.getViewBox().width()
        if w > 40:
            doc = self.message.textItem.document()
            opt = doc.defaultTextOption()
            opt.setAlignment(Qt.AlignHCenter)
            doc.setDefaultTextOption(opt)
            self.message.textItem.setTextWidth(max(120.0, 0.9 * w))
            self.message.updateTextPos()

    def set_theme(self, name: str) -> None:
        self._theme = name
        style_plot(self.plot, self.plot_widget, name)
        self.hover.set_theme(name)
        self._title = None
        self._compose_title()
        self.message.setColor(theme(name)["muted"])

    def hideEvent(self, ev) -> None:
        super().hideEvent(ev)
        self.hover.hide()  # a tab switch must not leave a hover box behind

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        self._compose_title()  # the key's line breaks follow the width
        if self.message.isVisible():
            self._wrap_message()
        data = getattr(self, "_data", None)
        if data is not None and data.mode == "batch" and self.draws_layer_ticks:
            layer_ticks(self.plot, data, self.plot_widget.width(), self.plot_widget.height())  # abbreviations follow the width
