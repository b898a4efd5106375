"""The batch chart: one bar group per layer, one bar per path, whole layer names under the bars."""

from __future__ import annotations

import functools
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt

from explorer.core.report.sweep_data import SweepData
from explorer.gui.charts.chart_axes import METRICS, layer_ticks
from explorer.gui.charts.chart_base import ChartBase, hover_text
from explorer.gui.common.colors import ordered, path_color, qcolor, theme

__all__ = ["BarChart"]


# ---- bar chart (batch) -------------------------------------------------------------------------------------
class BarChart(ChartBase):
    """One bar group per layer (one bar per path), IQR whiskers, baselines as dashed outlines."""

    title = "Batch: per layer"
    draws_layer_ticks = True

    def __init__(self, parent=None):
        super().__init__(parent)
        self.metric_name = "gflops"
        self.log_y = False
        self.bars: dict[str, pg.BarGraphItem] = {}

    def set_axes(self, metric: str | None = None, log_y: bool | None = None, **_) -> None:
        if metric is not None:
            self.metric_name = metric
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
        self.plot.setLabel("left", METRICS[self.metric_name])
        self.plot.setLabel("bottom", "layer")
        paths = ordered(data.paths)
        k = max(1, len(paths))
        w = 0.8 / k
        vals = [c.value(self.metric_name) for p in paths for _, c in data.path_cells(p)]
        vals += [c.value(self.metric_name) for b in data.baselines for cs in b.series.values() for _, c in cs]
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
            v = np.array([c.value(self.metric_name) or np.nan for _, c in cells], dtype=float)
            h = heights(v)
            color = path_color(path)
            bars = pg.BarGraphItem(x=x, y0=y0, height=h, width=w * 0.92, brush=pg.mkBrush(qcolor(path, 225)),
                                   pen=pg.mkPen(color))
            self._add(bars, path)
            self.bars[path] = bars
            self.bar_x[path] = [coord for coord, _ in cells]
            lo_hi = np.array([c.spread(self.metric_name) for _, c in cells], dtype=float).reshape(-1, 2)
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
                v = np.array([c.value(self.metric_name) or np.nan for _, c in cells], dtype=float)
                h = heights(v)
                outline = pg.BarGraphItem(x=x, y0=y0, height=h, width=w * 0.92, brush=pg.mkBrush(None),
                                          pen=pg.mkPen(path_color(path), width=1.6, style=Qt.DashLine))
                self._add(outline, f"{path} · {b.label}")
                hx.append(x)
                hy.append(y0 + h)
                htexts += [functools.partial(_prefixed, data.layers[coord][1], functools.partial(c.text, b.label))
                           for coord, c in cells]
        self._hover_pts = (np.concatenate(hx) if hx else np.empty(0), np.concatenate(hy) if hy else np.empty(0), htexts)
        layer_ticks(self.plot, data, self.plot_widget.width(), self.plot_widget.height())
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
            return hover_text(texts[i]), QPointF(float(xs[i]), float(ys[i]))
        return super()._lookup(view_pos, scene_pos)


def _prefixed(head: str, text) -> str:
    return f"{head}\n{text()}"
