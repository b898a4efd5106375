"""Sweep charts: four pyqtgraph views of a SweepData (the data lives Qt-free in explorer.core.report.sweep_data).

- LineChart     median time or GFLOP/s against the varied field, one curve per path (fixed colours), IQR
                whiskers, log axes, dashed baseline overlays, hover shows the exact row.
- SpeedupChart  baseline median / path median against the varied field (lines) or per layer (bars), with
                the 1.0 line drawn.
- HeatmapChart  a two-field sweep: the fastest path per cell (categorical colours + legend) or one path's
                speedup against the baseline path (diverging colormap + colorbar); values on hover.
- BarChart      a batch: one bar group per layer, whole layer names drawn vertically under the bars.

Every chart redraws only from `redraw()`; the SweepView calls it from a ~20 Hz timer when the data changed,
never per event, so thousands of points stay smooth.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QGraphicsItem, QGraphicsView, QVBoxLayout, QWidget

from explorer.core.paths.base import PATHS
from explorer.gui.colors import ordered, path_color, qcolor, theme

METRICS = {"median_ms": "median time per call (ms)", "gflops": "GFLOP/s"}
# Fields whose sweeps are usually geometric: a log x axis spreads 1, 2, 4, ... 256 evenly.
LOG_FIELDS = ("mb", "g", "ic", "oc", "threads")


from explorer.core.report.sweep_data import Cell, SweepData


# ---- chart helpers --------------------------------------------------------------------------------------
class LogAxis(pg.AxisItem):
    """Log-mode ticks as plain numbers (20, 500, 0.01), labelled only at 1, 2 and 5 x 10^k: readable at a glance.

    `rotated` (a bottom axis): tick labels drawn vertically, reading upwards, so whole layer names fit.
    """

    rotated = False

    def tickValues(self, minVal, maxVal, size):
        """A log axis spanning less than about 5x gets evenly spaced ticks (1, 1.2, 1.4, ...): pyqtgraph's
        decade ticks leave such a range with one label or none."""
        if not self.logMode or not (math.isfinite(minVal) and math.isfinite(maxVal)) or maxVal - minVal > 0.7:
            return super().tickValues(minVal, maxVal, size)
        lo, hi = 10 ** min(minVal, maxVal), 10 ** max(minVal, maxVal)
        raw = (hi - lo) / 5 or 1e-9
        mag = 10 ** math.floor(math.log10(raw))
        step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
        vals = [k * step for k in range(math.ceil(lo / step), math.floor(hi / step) + 1) if k * step > 0]
        return [(step, [math.log10(v) for v in vals])]

    def drawPicture(self, p, axisSpec, tickSpecs, textSpecs):
        if not self.rotated:
            return super().drawPicture(p, axisSpec, tickSpecs, textSpecs)
        super().drawPicture(p, axisSpec, tickSpecs, [])
        from PySide6.QtGui import QFontMetricsF

        if self.style["tickFont"] is not None:
            p.setFont(self.style["tickFont"])
        p.setPen(self.textPen())
        fm = QFontMetricsF(p.font())
        names = getattr(self, "rotated_names", {})
        for rect, _flags, text in textSpecs:
            text = names.get(text, text)  # the tick's stand-in (see _layer_ticks) -> the whole name
            w, h = fm.horizontalAdvance(text) + 2, fm.height()
            p.save()
            p.translate(rect.center().x(), rect.top())
            p.rotate(-90)
            p.drawText(QRectF(-w, -h / 2, w, h), int(Qt.AlignRight | Qt.AlignVCenter), text)
            p.restore()

    def logTickStrings(self, values, scale, spacing):
        out = []
        for v in values:
            x = 10 ** float(v) * scale
            if x <= 0 or not math.isfinite(x):
                out.append("")
                continue
            m = x / 10 ** math.floor(math.log10(x) + 1e-9)
            if min(abs(m - k) for k in (1, 2, 5)) > 0.02:
                out.append("")
            elif 1e-3 <= x < 1e5:
                out.append(f"{x:.4g}")
            else:
                out.append(f"{x:.0e}".replace("e+0", "e").replace("e-0", "e-"))
        if sum(1 for t in out if t) < 3:  # a narrow range (less than a decade): label every tick
            out = [f"{10 ** float(v) * scale:.3g}" for v in values]
        return out


def log_axes() -> dict:
    return {"left": LogAxis("left"), "bottom": LogAxis("bottom")}


def _style_plot(plot: pg.PlotItem, widget: pg.PlotWidget, theme_name: str) -> None:
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


def _text(t) -> str:
    """Hover texts are stored as strings or as callables that build them on demand."""
    return t() if callable(t) else t


def _prefixed(head: str, text) -> str:
    return f"{head}\n{text()}"


SYMBOLS_UP_TO = 200  # more points a curve than this: a plain 1 px line (symbols cost ~26 ms a redraw at 1,000)


def _line_style(color, n: int) -> dict:
    if n > SYMBOLS_UP_TO:
        return {"pen": pg.mkPen(color, width=1)}
    return {"pen": pg.mkPen(color, width=2), "symbol": "o", "symbolSize": 6, "symbolBrush": pg.mkBrush(color),
            "symbolPen": pg.mkPen(color)}


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


def _log(v, on: bool):
    a = np.asarray(v, dtype=float)
    if not on:
        return a
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(a > 0, np.log10(np.where(a > 0, a, 1.0)), np.nan)



def _finite(a: np.ndarray, log: bool) -> bool:
    """No NaN/inf (and nothing <= 0 on a log axis): pyqtgraph may then skip its own finite check."""
    return bool(np.isfinite(a).all() and (not log or (a > 0).all()))


def _series_arrays(cells, metric: str, pos_of: dict | None):
    """(order, x, y, lo, hi) of (coordinate, Cell) pairs, sorted by x: one array build, no per-cell method calls.

    x is the coordinate (its position among the swept values when `pos_of` is given: a categorical axis); y the
    metric (NaN where the row has none); lo/hi the IQR in the metric's unit, as Cell.spread gives them. `order`
    maps the sorted arrays back to `cells` (hover texts are built from it only when needed).
    """
    n = len(cells)
    if pos_of is None:
        x = np.fromiter((coord for coord, _ in cells), dtype=float, count=n)
    else:
        x = np.fromiter((pos_of[coord] for coord, _ in cells), dtype=float, count=n)
    a = np.array([(c.median, c.p25, c.p75, c.gflops) for _, c in cells], dtype=float).reshape(n, 4)
    order = np.argsort(x, kind="stable")  # as sorted(): equal x keep their arrival order
    x, a = x[order], a[order]
    med = a[:, 0]
    p25 = np.where(np.isnan(a[:, 1]), med, a[:, 1])
    p75 = np.where(np.isnan(a[:, 2]), med, a[:, 2])
    if metric == "median_ms":
        y = np.where(med != 0, med, np.nan)
        return order, x, y, p25, p75
    g = np.nan_to_num(a[:, 3])
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = np.where(p75 != 0, g * med / p75, g)
        hi = np.where(p25 != 0, g * med / p25, g)
    return order, x, np.where(g != 0, g, np.nan), lo, hi


def _line_hover(parts) -> tuple:
    """The line chart's hover points from what a redraw kept: (vx, vy, cells, order, baseline label | None)."""
    hx, hy, texts = [], [], []
    for vx, vy, cells, order, label in parts:
        hx.append(vx() if callable(vx) else vx)
        hy.append(vy() if callable(vy) else vy)
        if label is None:
            texts += [cells[i][1].text for i in order]  # built on hover only: thousands of strings cost ms
        else:
            texts += [functools.partial(cells[i][1].text, label) for i in order]
    return (np.concatenate(hx) if hx else np.empty(0), np.concatenate(hy) if hy else np.empty(0), texts)


NOISY_PEN = "#d68910"


def _noisy_marks(plot) -> pg.PlotDataItem:
    """Crosses over the points another program disturbed (not in the legend; follows log axes)."""
    item = pg.PlotDataItem([], [], pen=None, symbol="x", symbolSize=13, symbolBrush=NOISY_PEN,
                           symbolPen=pg.mkPen(NOISY_PEN, width=2))
    item.setZValue(20)
    plot.addItem(item)
    return item


def _set_marks(item, xs, ys) -> None:
    item.setData(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float))


class _ChartBase(QWidget):
    title = ""

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
            keys = [(n, c, False) for n, c, d in self.keys if not d]
            for label in dict.fromkeys(n.partition(" · ")[2] for n, _, d in self.keys if d):
                keys.append((f"{label} (dashed)", theme(self._theme)["muted"], True))
            for name, color, dashed in keys:
                mark = "&#8211;&#8201;&#8211;" if dashed else "&#9632;"
                part = f'<span style="color:{color}">{mark}</span>&nbsp;{name}'
                need = (len(name) + 4) * fm_px
                if line and used + need > width:
                    lines.append("&nbsp;&nbsp; ".join(line))
                    line, used = [], 0.0
                line.append(part)
                used += need
            lines.append("&nbsp;&nbsp; ".join(line))
            text = f"{text}<br><span style='font-size:8pt'>{'<br>'.join(lines)}</span>"
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
        return _text(texts[i]), QPointF(float(xs[i]), float(ys[i]))

    def _show_message(self, text: str) -> None:
        if not text and not self.message.isVisible():
            return  # nothing shown, nothing to show: no text layout
        self.message.setText(text)
        vb = self.plot.getViewBox()
        r = vb.viewRect()
        self.message.setPos(r.center())
        self.message.setVisible(bool(text))

    def set_theme(self, name: str) -> None:
        self._theme = name
        _style_plot(self.plot, self.plot_widget, name)
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
        data = getattr(self, "_data", None)
        if data is not None and data.mode == "batch" and isinstance(self, (BarChart, SpeedupChart)):
            _layer_ticks(self.plot, data, self.plot_widget.width(), self.plot_widget.height())  # abbreviations follow the width


# ---- line chart -------------------------------------------------------------------------------------------
class LineChart(_ChartBase):
    """Metric against the first varied field: one curve per path, IQR whiskers, dashed baseline overlays."""

    title = "Sweep"

    def __init__(self, parent=None):
        super().__init__(parent)
        self.metric = "median_ms"
        self.log_x = False
        self.log_y = False
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.baseline_curves: dict[tuple[str, str], pg.PlotDataItem] = {}
        self._errs: dict[str, pg.ErrorBarItem] = {}
        self._set_label("left", METRICS[self.metric])

    def set_axes(self, metric: str | None = None, log_x: bool | None = None, log_y: bool | None = None) -> None:
        if metric is not None:
            self.metric = metric
        if log_x is not None:
            self.log_x = log_x
        if log_y is not None:
            self.log_y = log_y

    def redraw(self, data: SweepData) -> None:
        self.redraws += 1
        self._data = data
        cat = data.categorical_x
        log_x, log_y = self.log_x and not cat, self.log_y
        self.plot.setLogMode(log_x, log_y)  # a no-op when unchanged (it only sets two check boxes)
        self._set_label("left", METRICS[self.metric])
        _unrotate(self.plot)
        self._set_label("bottom", data.x_field or "value")
        _x_ticks(self.plot, data, cat, log_x)
        pos_of = {v: i for i, v in enumerate(data.xs)} if cat else None
        # (key, legend name, cells, x, y, lo, hi) per curve: paths first, then baselines
        series = []
        for path in ordered(data.paths):
            cells = data.path_cells(path)
            if cells:
                series.append((("path", path, len(cells) > SYMBOLS_UP_TO), path, cells)
                              + _series_arrays(cells, self.metric, pos_of))
        for b in data.baselines:
            for path, cells in b.series.items():
                if cells:
                    series.append((("base", b.label, path), f"{path} · {b.label}", cells)
                                  + _series_arrays(cells, self.metric, pos_of))
        structure = (cat,) + tuple(s[0] for s in series)
        rebuild = structure != self._structure
        if rebuild:  # other curves (or the first redraw): new items; else the same items take the new arrays
            self._reset_items()
            self.curves, self.baseline_curves = {}, {}
            self._errs: dict[str, pg.ErrorBarItem] = {}
            self._structure = structure
        hover = []
        for key, name, cells, order, x, y, lo, hi in series:
            clean = _finite(x, log_x) and _finite(y, log_y)
            color = path_color(key[1] if key[0] == "path" else key[2])
            if key[0] == "path":
                path = key[1]
                vx, vy = _log(x, log_x), _log(y, log_y)
                top, bottom = np.nan_to_num(_log(hi, log_y) - vy), np.nan_to_num(vy - _log(lo, log_y))
                if rebuild:
                    style = _line_style(color, len(x))
                    if cat:  # categories (dtype f32, bf16): points, no line through them
                        style = {**_line_style(color, 0), "pen": None, "symbolSize": 9}
                    curve = pg.PlotDataItem(x, y, skipFiniteCheck=clean, **style)
                    self._add(curve, name)
                    self.curves[path] = curve
                    # 1 px: a wider cosmetic pen takes Qt's slow stroker (1,000 bars cost ~2 ms a paint)
                    self._errs[path] = self._add(pg.ErrorBarItem(x=vx, y=vy, top=top, bottom=bottom, beam=0,
                                                                 pen=pg.mkPen(color, width=1)))
                else:
                    self.curves[path].setData(x, y, skipFiniteCheck=clean)
                    self._errs[path].setData(x=vx, y=vy, top=top, bottom=bottom)
                hover.append((vx, vy, cells, order, None))
            else:
                label, path = key[1], key[2]
                if rebuild:
                    curve = pg.PlotDataItem(x, y, skipFiniteCheck=clean, pen=pg.mkPen(color, width=1.6, style=Qt.DashLine),
                                            symbol="t", symbolSize=7, symbolBrush=None, symbolPen=pg.mkPen(color))
                    self._add(curve, name)
                    self.baseline_curves[(label, path)] = curve
                else:
                    self.baseline_curves[(label, path)].setData(x, y, skipFiniteCheck=clean)
                hover.append((lambda x=x: _log(x, log_x), lambda y=y: _log(y, log_y), cells, order, label))
        self._mark_skipped(data, pos_of, log_x)
        self._hover_later(functools.partial(_line_hover, hover))
        if getattr(self, "noisy_marks", None) is None:
            self.noisy_marks = _noisy_marks(self.plot)
        mx, my = [], []
        for key, name, cells, order, x, y, lo, hi in series:
            if key[0] == "path":
                flags = np.array([c.noisy for _, c in cells], dtype=bool)[order] if len(cells) else np.zeros(0, bool)
                mx += list(x[flags])
                my += list(y[flags])
        _set_marks(self.noisy_marks, mx, my)
        self.plot.enableAutoRange()
        if not self.curves and not self.baseline_curves:
            self._show_message("Run a sweep: results land here point by point.")
        else:
            self._show_message("")
        self._compose_title()

    def _mark_skipped(self, data: SweepData, pos_of, log_x: bool) -> None:
        """A dashed line with "skipped" at the x of every point that did not run (hover: the reason)."""
        for m in getattr(self, "_skip_marks", []):
            self.plot.removeItem(m)
        self._skip_marks = []
        self.skipped_x = []
        for coord, c in data.skipped.values():
            if data.mode != "line":
                continue
            x = pos_of.get(coord) if pos_of is not None else coord
            if x is None or (log_x and (not isinstance(x, (int, float)) or x <= 0)):
                continue
            xv = math.log10(x) if log_x else float(x)
            line = pg.InfiniteLine(pos=xv, angle=90, pen=pg.mkPen(theme(self._theme)["muted"], width=1,
                                                                  style=Qt.DashLine),
                                   label="skipped", labelOpts={"position": 0.92, "color": theme(self._theme)["muted"]})
            line.setToolTip(c.error or "skipped")
            self.plot.addItem(line)
            self._skip_marks.append(line)
            self.skipped_x.append(x)

    def point_count(self, path: str) -> int:
        c = self.curves.get(path)
        if c is None:
            return 0
        x, _ = c.getOriginalDataset()
        return 0 if x is None else len(x)


# ---- speedup chart ------------------------------------------------------------------------------------------
class SpeedupChart(_ChartBase):
    """baseline median / path median: lines against the varied field, or bars per layer for a batch."""

    title = "Speedup vs baseline path"

    def __init__(self, parent=None):
        super().__init__(parent)
        self.baseline_path = "dense"
        self.log_x = False
        self.curves: dict[str, object] = {}
        self._set_label("left", "speedup (x, >1 is faster)")
        self.one_line = pg.InfiniteLine(pos=0.0, angle=0, pen=pg.mkPen("#5f6368", width=1.2, style=Qt.DashLine))
        self.plot.addItem(self.one_line, ignoreBounds=False)

    def redraw(self, data: SweepData) -> None:
        self.redraws += 1
        self._data = data
        self._set_title(f"Speedup vs {self.baseline_path}")
        base = {coord: c for coord, c in data.path_cells(self.baseline_path)}
        if data.mode == "batch":
            self._reset_items()
            self.curves = {}
            hx, hy, htexts = [], [], []
            self.plot.setLogMode(False, True)  # bars grow up from 1x when faster, down when slower
            self._set_label("bottom", "layer")
            others = [p for p in ordered(data.paths) if p != self.baseline_path]
            k = max(1, len(others))
            w = 0.8 / k
            for j, path in enumerate(others):
                xs, hs, texts, unsure = [], [], [], []
                for coord, c in data.path_cells(path):
                    b = base.get(coord)
                    if b is None:
                        continue
                    s = b.median / c.median
                    xs.append(coord - 0.4 + w * (j + 0.5))
                    hs.append(s)
                    unsure.append(c.noisy or b.noisy)
                    texts.append(f"{data.layers[coord][1]}\n{path}: {s:.3g}x vs {self.baseline_path}"
                                 f"{' (uncertain: noisy)' if c.noisy or b.noisy else ''}\n"
                                 f"{c.median:.4g} ms vs {b.median:.4g} ms")
                if not xs:
                    continue
                hs = list(np.log10(np.array(hs, dtype=float)))
                brushes = [QBrush(qcolor(path, 220), Qt.BDiagPattern) if u else pg.mkBrush(qcolor(path, 220))
                           for u in unsure]  # hatched: a ratio on a noisy row is no finding
                bars = pg.BarGraphItem(x=np.array(xs), y0=0.0, height=np.array(hs), width=w * 0.92,
                                       brushes=brushes, pen=pg.mkPen(path_color(path)))
                self._add(bars, path)
                self.curves[path] = bars
                hx += xs
                hy += hs
                htexts += texts
            _layer_ticks(self.plot, data, self.plot_widget.width(), self.plot_widget.height())
            self._hover_pts = (np.asarray(hx, dtype=float), np.asarray(hy, dtype=float), htexts)
        else:
            cat = data.categorical_x
            log_x = self.log_x and not cat
            self.plot.setLogMode(log_x, True)
            _unrotate(self.plot)
            self._set_label("bottom", data.x_field or "value")
            pos_of = {v: i for i, v in enumerate(data.xs)}
            _x_ticks(self.plot, data, cat, log_x)
            series = []  # (path, x, y, pairs of (Cell, baseline Cell) in x order)
            if data.mode == "line":
                for path in ordered(data.paths):
                    if path == self.baseline_path:
                        continue
                    pairs, xs = [], []
                    for coord, c in data.path_cells(path):
                        b = base.get(coord)
                        if b is not None:
                            pairs.append((c, b))
                            xs.append(pos_of.get(coord, 0) if cat else coord)
                    if not pairs:
                        continue
                    x = np.array(xs, dtype=float)
                    med = np.array([(b.median, c.median) for c, b in pairs], dtype=float)
                    order = np.argsort(x, kind="stable")  # as sorted(): equal x keep their arrival order
                    series.append((path, x[order], (med[:, 0] / med[:, 1])[order], pairs, order))
            structure = (data.mode, cat) + tuple((p, len(x) > SYMBOLS_UP_TO) for p, x, *_ in series)
            rebuild = structure != self._structure
            if rebuild:  # other curves: new items; else the same items take the new arrays
                self._reset_items()
                self.curves = {}
                self._structure = structure
            hover = []
            for path, x, y, pairs, order in series:
                clean = _finite(x, log_x) and _finite(y, True)
                if rebuild:
                    style = _line_style(path_color(path), len(x))
                    if cat:  # categories: points, no line through them
                        style = {**_line_style(path_color(path), 0), "pen": None, "symbolSize": 9}
                    curve = pg.PlotDataItem(x, y, skipFiniteCheck=clean, **style)
                    self._add(curve, path)
                    self.curves[path] = curve
                else:
                    self.curves[path].setData(x, y, skipFiniteCheck=clean)
                hover.append((x, y, path, pairs, order))
            self._hover_later(functools.partial(_speedup_hover, hover, log_x, self.baseline_path))
            if getattr(self, "noisy_marks", None) is None:
                self.noisy_marks = _noisy_marks(self.plot)
            mx, my = [], []
            for path, x, y, pairs, order in series:
                flags = np.array([c.noisy or b.noisy for c, b in pairs], dtype=bool)[order]
                mx += list(x[flags])
                my += list(y[flags])
            _set_marks(self.noisy_marks, mx, my)
        if data.mode == "batch" and getattr(self, "noisy_marks", None) is not None:
            _set_marks(self.noisy_marks, [], [])
        self.plot.enableAutoRange()
        if not self.curves:
            msg = (f"No {self.baseline_path} results yet to compare with." if data.cells else
                   "Speedups against the baseline path appear here.")
            self._show_message(msg)
        else:
            self._show_message("")
        self._compose_title()


def _speedup_hover(parts, log_x: bool, baseline_path: str) -> tuple:
    """The speedup lines' hover points: (x, speedup, path, (Cell, baseline Cell) pairs, x order) per curve."""
    hx, hy, texts = [], [], []
    for x, y, path, pairs, order in parts:
        hx.append(_log(x, log_x))
        hy.append(np.log10(y))
        for i, s in zip(order, y):
            c, b = pairs[i]
            unsure = " (uncertain: noisy)" if (c.noisy or b.noisy) else ""
            texts.append(f"{c.desc}\n{path}: {s:.3g}x vs {baseline_path}{unsure}\n{c.median:.4g} ms vs {b.median:.4g} ms")
    return (np.concatenate(hx) if hx else np.empty(0), np.concatenate(hy) if hy else np.empty(0), texts)


def _x_ticks(plot: pg.PlotItem, data: SweepData, cat: bool, log_x: bool) -> None:
    """Ticks at the swept values themselves (categorical, log x, or up to 12 linear values: one point must not
    read 0.6..1.4), thinned to about 12 labels."""
    ax = plot.getAxis("bottom")
    numeric = [v for v in data.xs if isinstance(v, (int, float))]
    few = bool(numeric) and len(numeric) <= 12
    key = (cat, log_x, tuple(data.xs)) if (cat or log_x or few) and data.xs else None
    if getattr(ax, "_sweep_ticks", ()) == key:
        return  # the same ticks: setTicks would drop the axis' drawing and lay it out again
    ax._sweep_ticks = key
    if key is None:
        ax.setTicks(None)
        return
    step = max(1, math.ceil(len(data.xs) / 12))
    if cat:
        ticks = [(i, str(v)) for i, v in enumerate(data.xs)]
    elif log_x:
        ticks = [(math.log10(v), str(v)) for v in sorted(data.xs) if isinstance(v, (int, float)) and v > 0]
    else:
        ticks = [(v, str(v)) for v in sorted(numeric)]
    ax.setTicks([ticks[::step], []])


def _common_prefix(names) -> str:
    """The `net:` prefix every layer name shares ('' when they differ)."""
    heads = {n.split(":", 1)[0] + ":" if ":" in n and not n.startswith("mb") else "" for n in names}
    return heads.pop() if len(heads) == 1 else ""


def _layer_ticks(plot: pg.PlotItem, data: SweepData, width_px: int, height_px: int = 0) -> None:
    """Whole layer names under the bar groups, drawn vertically (the shared `net:` prefix goes into the axis
    label); every k-th name when there are more than the width has lines for. Only a name longer than
    about 40% of the chart's height is shortened, in the middle, and the hover still gives it whole."""
    n = len(data.layers)
    ax = plot.getAxis("bottom")
    ax._sweep_ticks = ()  # _x_ticks sets its ticks again after these
    if n == 0:
        _unrotate(plot)
        ax.setTicks([[]])
        return
    fulls = [full for _, full in data.layers]
    prefix = _common_prefix(fulls)
    names = [f[len(prefix):] if prefix and f.startswith(prefix) else f for f in fulls]
    from PySide6.QtGui import QFontMetricsF

    fm = QFontMetricsF(ax.style["tickFont"] or plot.font())
    vb_w = plot.getViewBox().width()  # the plotting area itself (the widget also holds the axis)
    per = max((vb_w if vb_w > 50 else width_px - 80), 100) / n
    step = max(1, math.ceil((fm.height() + 2) / per))
    room = max(80.0, 0.4 * (height_px or 400))
    ticks = []
    for i, name in enumerate(names):
        if i % step:
            continue
        if fm.horizontalAdvance(name) > room:
            keep = max(8, int(len(name) * room / fm.horizontalAdvance(name)) - 1)
            name = name[: keep // 2] + "…" + name[-(keep - keep // 2):]
        ticks.append((i, name))
    longest = max((fm.horizontalAdvance(t) for _, t in ticks), default=0.0)
    # pyqtgraph drops tick labels whose horizontal text would overlap: it is given short stand-ins (the
    # layer's number), which drawPicture replaces with the vertical names.
    ax.rotated_names = {str(i): t for i, t in ticks}
    ticks = [(i, str(i)) for i, _ in ticks]
    ax.rotated = True
    ax.setStyle(tickTextOffset=4, autoExpandTextSpace=False)
    ax.setHeight(int(longest + 8 + fm.height() + 10))  # the names, then the axis label under them
    ax.setTicks([ticks, []])
    plot.setLabel("bottom", f"layer ({prefix.rstrip(':')})" if prefix else "layer")


def _unrotate(plot: pg.PlotItem) -> None:
    ax = plot.getAxis("bottom")
    if ax.rotated:
        ax.rotated = False
        ax.setStyle(autoExpandTextSpace=True)
        ax.setHeight(None)


# ---- bar chart (batch) -------------------------------------------------------------------------------------
class BarChart(_ChartBase):
    """One bar group per layer (one bar per path), IQR whiskers, baselines as dashed outlines."""

    title = "Batch: per layer"

    def __init__(self, parent=None):
        super().__init__(parent)
        self.metric = "gflops"
        self.log_y = False
        self.bars: dict[str, pg.BarGraphItem] = {}

    def set_axes(self, metric: str | None = None, log_y: bool | None = None, **_) -> None:
        if metric is not None:
            self.metric = metric
        if log_y is not None:
            self.log_y = log_y

    def group_count(self) -> int:
        return len({c for p in self.bar_x.values() for c in p})

    def redraw(self, data: SweepData) -> None:
        self.redraws += 1
        self._data = data
        self._reset_items()
        self.bars = {}
        self.bar_x: dict[str, list] = {}
        self.plot.setLabel("left", METRICS[self.metric])
        self.plot.setLabel("bottom", "layer")
        paths = ordered(data.paths)
        k = max(1, len(paths))
        w = 0.8 / k
        vals = [c.value(self.metric) for p in paths for _, c in data.path_cells(p)]
        vals += [c.value(self.metric) for b in data.baselines for cs in b.series.values() for _, c in cs]
        vals = [v for v in vals if v]
        floor = 10 ** math.floor(math.log10(min(vals))) if (self.log_y and vals) else 0.0
        self.plot.setLogMode(False, self.log_y)
        lf = math.log10(floor) if floor > 0 else 0.0

        def heights(v):
            v = np.asarray(v, dtype=float)
            return (np.log10(v) - lf) if self.log_y else v

        hx, hy, htexts = [], [], []
        y0 = lf if self.log_y else 0.0
        for j, path in enumerate(paths):
            cells = data.path_cells(path)
            if not cells:
                continue
            x = np.array([coord - 0.4 + w * (j + 0.5) for coord, _ in cells], dtype=float)
            v = np.array([c.value(self.metric) or np.nan for _, c in cells], dtype=float)
            h = heights(v)
            color = path_color(path)
            bars = pg.BarGraphItem(x=x, y0=y0, height=h, width=w * 0.92, brush=pg.mkBrush(qcolor(path, 225)),
                                   pen=pg.mkPen(color))
            self._add(bars, path)
            self.bars[path] = bars
            self.bar_x[path] = [coord for coord, _ in cells]
            lo_hi = np.array([c.spread(self.metric) for _, c in cells], dtype=float).reshape(-1, 2)
            top_v = y0 + h
            err = pg.ErrorBarItem(x=x, y=top_v, top=np.nan_to_num(y0 + heights(lo_hi[:, 1]) - top_v),
                                  bottom=np.nan_to_num(top_v - y0 - heights(lo_hi[:, 0])), beam=w * 0.4,
                                  pen=pg.mkPen(theme(self._theme)["fg"], width=1))
            self._add(err)
            hx.append(x)
            hy.append(top_v)
            htexts += [functools.partial(_prefixed, data.layers[coord][1], c.text) for coord, c in cells]
        for b in data.baselines:
            for path, cells in b.series.items():
                if path not in paths:
                    continue
                j = paths.index(path)
                x = np.array([coord - 0.4 + w * (j + 0.5) for coord, _ in cells], dtype=float)
                v = np.array([c.value(self.metric) or np.nan for _, c in cells], dtype=float)
                h = heights(v)
                outline = pg.BarGraphItem(x=x, y0=y0, height=h, width=w * 0.92, brush=pg.mkBrush(None),
                                          pen=pg.mkPen(path_color(path), width=1.6, style=Qt.DashLine))
                self._add(outline, f"{path} · {b.label}")
                hx.append(x)
                hy.append(y0 + h)
                htexts += [functools.partial(_prefixed, data.layers[coord][1], functools.partial(c.text, b.label))
                           for coord, c in cells]
        self._hover_pts = (np.concatenate(hx) if hx else np.empty(0), np.concatenate(hy) if hy else np.empty(0), htexts)
        _layer_ticks(self.plot, data, self.plot_widget.width(), self.plot_widget.height())
        self.plot.enableAutoRange()
        if data.layers:
            self.plot.setXRange(-0.6, len(data.layers) - 0.4, padding=0)
        self._show_message("" if self.bars else "Run a batch: one bar group per layer appears as each finishes.")
        self._compose_title()

    def _lookup(self, view_pos, scene_pos):
        """A bar under the mouse (any height) gives its row; else the nearest bar top."""
        xs, ys, texts = self._hover_pts
        if xs.size == 0:
            return None
        paths = max(1, len(self.bars))
        w = 0.8 / paths
        i = int(np.argmin(np.abs(xs - view_pos.x())))
        if abs(xs[i] - view_pos.x()) <= w / 2:
            return _text(texts[i]), QPointF(float(xs[i]), float(ys[i]))
        return super()._lookup(view_pos, scene_pos)


# ---- heatmap (two fields) ---------------------------------------------------------------------------------
class HeatmapChart(_ChartBase):
    """A two-field grid: the fastest path per cell, or one path's speedup against the baseline path."""

    title = "Two-field sweep"
    MAX_LABELS = 300  # cell labels only for small grids: thousands of TextItems are slow

    def __init__(self, parent=None):
        super().__init__(parent)
        self.mode = "fastest"  # or "speedup"
        self.path = "mkldnn"
        self.baseline_path = "dense"
        self.image = pg.ImageItem(axisOrder="col-major")
        # Data before the colour bar is linked: linked to an image without data, the bar's levels (-1, 1) are
        # deferred by pyqtgraph and applied after the image's first setImage, over the fastest-path levels, so
        # a heatmap drawn once (a reopened session) showed wrong colours until the next redraw.
        self.image.setImage(np.full((1, 1), np.nan, dtype=np.float32), autoLevels=False, levels=(-1, 1))
        self.plot.addItem(self.image)
        self.plot.showGrid(x=False, y=False)
        self.plot.getViewBox().setMouseEnabled(False, False)
        self.colorbar = pg.ColorBarItem(values=(-1, 1), width=14, colorMap=pg.colormap.get("CET-D1A"),
                                        interactive=False, label="speedup")
        self.colorbar.setImageItem(self.image, insert_in=self.plot)
        self.colorbar.hide()
        self.colorbar.setMaximumWidth(0)
        self.grid = np.full((0, 0), np.nan, dtype=np.float32)
        self._texts: list[pg.TextItem] = []
        self._cell_text: dict[tuple[int, int], str] = {}
        self.legend_paths: list[str] = []  # paths named in the fastest-path key

    def filled(self) -> int:
        """Cells with a value (tests: a full sweep fills the grid)."""
        return int(np.isfinite(self.grid).sum())

    def redraw(self, data: SweepData) -> None:
        self.redraws += 1
        self._data = data
        nx, ny = len(data.xs), len(data.ys)
        grid = np.full((max(nx, 1), max(ny, 1)), np.nan, dtype=np.float32)
        texts: dict[tuple[int, int], str] = {}
        labels: dict[tuple[int, int], str] = {}
        f1, f2 = (data.fields + ("", ""))[:2]
        by_cell: dict[tuple, dict[str, Cell]] = {}
        for (idx, p), c in data.cells.items():
            if c.ok and idx in data.coord:
                by_cell.setdefault(data.coord[idx], {})[p] = c
        paths = ordered(data.paths)
        rank = {p: i for i, p in enumerate(PATHS)}
        for (i, j), cs in by_cell.items():
            head = f"{f1}={data.xs[i]}, {f2}={data.ys[j]}"
            base = cs.get(self.baseline_path)
            if self.mode == "fastest":
                best = min(cs.values(), key=lambda c: c.median)
                grid[i, j] = rank.get(best.path, len(PATHS))
                lines = [head, f"fastest: {best.path}"]
                for p in ordered(cs):
                    c = cs[p]
                    lines.append(f"  {p}: {c.median:.4g} ms" + (f" · {c.gflops:.4g} GFLOP/s" if c.gflops else ""))
                unsure = any(c.noisy for c in cs.values())
                if unsure:
                    lines.append("uncertain: a noisy timing in this cell")
                texts[(i, j)] = "\n".join(lines)
                labels[(i, j)] = (_abbrev_path(best.path) + ("?" if unsure else "")
                                  + (f"\n{fmt_x(base.median / best.median)}" if base else ""))
            else:
                c = cs.get(self.path)
                if c is None or base is None:
                    continue
                s = base.median / c.median
                grid[i, j] = math.log2(s)
                unsure = c.noisy or base.noisy
                texts[(i, j)] = (f"{head}\n{self.path}: {s:.3g}x vs {self.baseline_path}"
                                 f"{' (uncertain: noisy)' if unsure else ''}\n"
                                 f"{c.median:.4g} ms vs {base.median:.4g} ms")
                labels[(i, j)] = fmt_x(s) + ("?" if unsure else "")
        self.grid = grid if (nx and ny) else np.full((0, 0), np.nan, dtype=np.float32)
        self._cell_text = texts
        self.legend.clear()
        self.legend.hide()
        self.legend_paths = []
        if self.mode == "fastest":
            # The legend lives in the title (coloured squares): a legend box would cover cells.
            keys = "&nbsp;&nbsp;".join(f'<span style="color:{path_color(p)}">&#9632;</span>&nbsp;{p}' for p in paths)
            # Two lines: one long line sets the plot's minimum width and pushes cells out of the view.
            self._set_title(f"Fastest path per cell (label: speedup vs {self.baseline_path})"
                            + (f"<br>{keys}" if keys else ""))
            self.legend_paths = list(paths)
            n = len(PATHS) + 1
            lut = np.array([list(qcolor(p).getRgb()) for p in PATHS] + [[180, 180, 180, 255]], dtype=np.ubyte)
            self.image.setLookupTable(lut)
            self.image.setImage(grid, levels=(-0.5, n - 0.5), autoLevels=False)
            self.colorbar.hide()
            self.colorbar.setMaximumWidth(0)
            self.colorbar.setMinimumWidth(0)
        else:
            finite = grid[np.isfinite(grid)]
            m = max(0.25, float(np.abs(finite).max())) if finite.size else 1.0
            # The colour key goes in the title too (the colorbar item can end up squeezed out of the layout).
            self._set_title(f"Speedup of {self.path} vs {self.baseline_path}<br>"
                               f"<span style='color:#3b4cc0'>&#9632;</span> slower ({fmt_x(2 ** -m)}) · "
                               f"&#9633; same · <span style='color:#b40426'>&#9632;</span> faster ({fmt_x(2 ** m)})")
            cmap = pg.colormap.get("CET-D1A")
            self.image.setLookupTable(cmap.getLookupTable(nPts=256))
            self.image.setImage(grid, levels=(-m, m), autoLevels=False)
            self.colorbar.setLevels((-m, m))
            self.colorbar.show()
            self.colorbar.setMaximumWidth(80)
            self.colorbar.setMinimumWidth(60)
            self.plot.layout.invalidate()
            ticks = [(v, f"{2 ** v:.2g}x") for v in np.linspace(-m, m, 5)]
            self.colorbar.axis.setTicks([ticks])
        self.image.setRect(QRectF(-0.5, -0.5, max(nx, 1), max(ny, 1)))
        self.plot.setLabel("bottom", f1)
        self.plot.setLabel("left", f2)
        self.plot.getAxis("bottom").setTicks([[(i, str(v)) for i, v in enumerate(data.xs)]])
        self.plot.getAxis("left").setTicks([[(j, str(v)) for j, v in enumerate(data.ys)]])
        self.plot.getViewBox().setRange(xRange=(-0.5, max(nx, 1) - 0.5), yRange=(-0.5, max(ny, 1) - 0.5), padding=0)
        self._dark = set()
        if self.mode == "speedup":
            finite = grid[np.isfinite(grid)]
            m = max(0.25, float(np.abs(finite).max())) if finite.size else 1.0
            self._dark = {k for k in labels if abs(float(grid[k])) > 0.55 * m}
        self._draw_labels(labels, nx, ny)
        self._show_message("" if texts else "Cells fill in as points finish.")

    def _draw_labels(self, labels: dict, nx: int, ny: int) -> None:
        show = nx * ny <= self.MAX_LABELS
        keys = list(labels) if show else []
        while len(self._texts) < len(keys):
            t = pg.TextItem("", color="#111111", anchor=(0.5, 0.5))
            f = QFont()
            f.setPointSize(8)
            t.setFont(f)
            self.plot.addItem(t, ignoreBounds=True)
            self._texts.append(t)
        for t, k in zip(self._texts, keys):
            t.setText(labels[k])
            t.setColor("#ffffff" if k in self._dark else "#111111")
            t.setPos(k[0], k[1])
            t.show()
        for t in self._texts[len(keys):]:
            t.hide()

    def _lookup(self, view_pos, scene_pos):
        i, j = int(round(view_pos.x())), int(round(view_pos.y()))
        text = self._cell_text.get((i, j))
        return (text, QPointF(i, j)) if text else None


def fmt_x(s: float) -> str:
    """A speedup for a label: 0.52x, 1.6x, 12x, 630x."""
    return f"{s:.0f}x" if s >= 10 else f"{s:.2g}x"


def _abbrev_path(p: str) -> str:
    return {"mkldnn_functional": "mkldnn_fn", "mkldnn_roundtrip": "mkldnn_rt", "channels_last": "ch_last"}.get(p, p)
