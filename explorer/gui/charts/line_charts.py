"""The sweep's line charts: the metric against the varied field (LineChart) and the speedup against a baseline
path (SpeedupChart: lines, or bars per layer for a batch), with the array helpers they share.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush

from explorer.core.report.sweep_data import SweepData
from explorer.gui.charts.chart_axes import METRICS, layer_ticks, unrotate, x_ticks
from explorer.gui.charts.chart_base import ChartBase
from explorer.gui.common.colors import ordered, path_color, qcolor, theme
from explorer.gui.common.doubt import MARK_NAME, mark_color, mark_pen

__all__ = ["LineChart", "SpeedupChart", "SYMBOLS_UP_TO"]


SYMBOLS_UP_TO = 200  # more points a curve than this: a plain 1 px line (symbols cost ~26 ms a redraw at 1,000)


def _line_style(color, n: int) -> dict:
    if n > SYMBOLS_UP_TO:
        return {"pen": pg.mkPen(color, width=1)}
    return {"pen": pg.mkPen(color, width=2), "symbol": "o", "symbolSize": 6, "symbolBrush": pg.mkBrush(color),
            "symbolPen": pg.mkPen(color)}


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


def _noisy_marks(plot, theme_name: str = "light") -> pg.PlotDataItem:
    """Crosses over the points another program disturbed (follows log axes), in the theme's text colour (the old
    amber was close to mkldnn's orange); their key is in the title (common.doubt.MARK_NAME)."""
    # Behind the curves, larger than their symbols: the arms stick out, the path's colour stays in the middle.
    item = pg.PlotDataItem([], [], pen=None, symbol="x", symbolSize=17, symbolBrush=mark_color(theme_name),
                           symbolPen=mark_pen(theme_name, 1.0))
    item.setZValue(-1)
    plot.addItem(item)
    return item


def _set_marks(item, xs, ys) -> None:
    item.setData(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float))


def _key_marks(chart) -> None:
    """The crosses' entry in the chart's key while any is drawn."""
    marks = getattr(chart, "noisy_marks", None)
    n = 0 if marks is None or marks.xData is None else len(marks.xData)
    chart.keys = [k for k in chart.keys if k[0] != MARK_NAME]
    if n:
        chart.keys.append((MARK_NAME, mark_color(chart._theme), False))
    if marks is not None:
        marks.setSymbolBrush(mark_color(chart._theme))
        marks.setSymbolPen(mark_pen(chart._theme, 1.0))


# ---- line chart -------------------------------------------------------------------------------------------
class LineChart(ChartBase):
    """Metric against the first varied field: one curve per path, IQR whiskers, dashed baseline overlays."""

    title = "Sweep"

    def __init__(self, parent=None):
        super().__init__(parent)
        self.metric_name = "median_ms"  # not "metric": PySide took that attribute for QWidget::metric()
        self.log_x = False
        self.log_y = False
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.baseline_curves: dict[tuple[str, str], pg.PlotDataItem] = {}
        self._errs: dict[str, pg.ErrorBarItem] = {}
        self._set_label("left", METRICS[self.metric_name])

    def set_axes(self, metric: str | None = None, log_x: bool | None = None, log_y: bool | None = None) -> None:
        if metric is not None:
            self.metric_name = metric
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
        self._set_label("left", METRICS[self.metric_name])
        unrotate(self.plot)
        self._set_label("bottom", data.x_field or "value")
        x_ticks(self.plot, data, cat, log_x)
        pos_of = {v: i for i, v in enumerate(data.xs)} if cat else None
        # (key, legend name, cells, x, y, lo, hi) per curve: paths first, then baselines
        series = []
        for path in ordered(data.paths):
            cells = data.path_cells(path)
            if cells:
                series.append((("path", path, len(cells) > SYMBOLS_UP_TO), path, cells)
                              + _series_arrays(cells, self.metric_name, pos_of))
        for b in data.baselines:
            for path, cells in b.series.items():
                if cells:
                    series.append((("base", b.label, path), f"{path} · {b.label}", cells)
                                  + _series_arrays(cells, self.metric_name, pos_of))
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
        _key_marks(self)
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
class SpeedupChart(ChartBase):
    """baseline median / path median: lines against the varied field, or bars per layer for a batch."""

    title = "Speedup vs baseline path"
    draws_layer_ticks = True

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
            layer_ticks(self.plot, data, self.plot_widget.width(), self.plot_widget.height())
            self._hover_pts = (np.asarray(hx, dtype=float), np.asarray(hy, dtype=float), htexts)
        else:
            cat = data.categorical_x
            log_x = self.log_x and not cat
            self.plot.setLogMode(log_x, True)
            unrotate(self.plot)
            self._set_label("bottom", data.x_field or "value")
            pos_of = {v: i for i, v in enumerate(data.xs)}
            x_ticks(self.plot, data, cat, log_x)
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
        _key_marks(self)
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
