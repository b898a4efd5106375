"""Live per-call time of every path: curves that grow while the run goes.

Samples arrive in coalesced chunks (a few per second) into growing numpy buffers; a ~30 Hz QTimer calls
setData only for the curves that changed (pyqtgraph examples/scrollingPlots.py). Clip-to-view, peak
downsampling and skipFiniteCheck keep 100k+ points smooth.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QGraphicsView, QVBoxLayout, QWidget

from explorer.gui.common.colors import ordered, path_color, theme

REDRAW_MS = 33


def cache_static_items(plot) -> None:
    """Axes, title and legend redraw from a pixmap cache: replaying their text costs more than the curves."""
    from PySide6.QtWidgets import QGraphicsItem

    for name in ("left", "bottom", "right", "top"):
        ax = plot.getAxis(name)
        ax.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
    plot.titleLabel.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
    legend = getattr(plot, "legend", None)
    if legend is not None:
        legend.setCacheMode(QGraphicsItem.DeviceCoordinateCache)


def _nice(v: float) -> float:
    """The next of 1, 1.5, 2, 3, 5, 7 x 10^k at or above v."""
    if v <= 0:
        return 1.0
    e = 10 ** np.floor(np.log10(v))
    for m in (1, 1.5, 2, 3, 5, 7, 10):
        if m * e >= v:
            return float(m * e)
    return float(10 * e)


class _Buffer:
    __slots__ = ("data", "n", "dirty", "top")

    def __init__(self):
        self.data = np.empty(4096, dtype=np.float64)
        self.n = 0
        self.dirty = False
        self.top = 0.0  # a robust upper value (p90) for the y range

    def extend(self, arr: np.ndarray) -> None:
        need = self.n + arr.size
        if need > self.data.size:
            cap = self.data.size
            while cap < need:
                cap *= 2
            new = np.empty(cap, dtype=np.float64)
            new[: self.n] = self.data[: self.n]
            self.data = new
        self.data[self.n : need] = arr
        self.n = need
        self.dirty = True

    @property
    def values(self) -> np.ndarray:
        return self.data[: self.n]


class TimingChart(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("timingChart")
        self.plot_widget = pg.PlotWidget()
        # One bounding-rect repaint instead of a complex clip region per changed curve (28 -> 10 ms here).
        self.plot_widget.setViewportUpdateMode(QGraphicsView.BoundingRectViewportUpdate)
        self.plot = self.plot_widget.getPlotItem()
        self.plot.setTitle("Time per call (live)")
        self.plot.setLabel("bottom", "call #")
        self.plot.setLabel("left", "time per call", units="ms")
        self.plot.getAxis("left").enableAutoSIPrefix(False)
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.plot.setClipToView(True)
        self.plot.setDownsampling(auto=True, mode="peak")
        self.plot.setMouseEnabled(x=True, y=True)
        self.legend = self.plot.addLegend(offset=(-10, 10), labelTextSize="8pt", verSpacing=-6)
        # Above the plot area, under the title, never over the curves: the title row grows to hold it.
        self.legend.setParentItem(self.plot)
        self.legend.anchor(itemPos=(0.5, 0), parentPos=(0.5, 0), offset=(0, 22))
        self.legend.setColumnCount(3)
        self.placeholder = pg.TextItem("Press Run (Ctrl+R): every timed call of every path appears here.",
                                       anchor=(0.5, 0.5))
        self.plot.getViewBox().addItem(self.placeholder, ignoreBounds=True)
        self.placeholder.setPos(0.5, 0.5)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.plot_widget)
        self._buffers: dict[str, _Buffer] = {}
        self._curves: dict[str, pg.PlotDataItem] = {}
        self._xs = np.arange(0, dtype=np.float64)
        self.timer = QTimer(self)
        self.timer.setInterval(REDRAW_MS)
        self.timer.timeout.connect(self._timed_redraw)
        self.timer.start()
        self.redraws = 0
        self._auto_y = True
        self._xmax = 0.0
        self._ymax = 0.0
        self.placeholder.setVisible(True)
        self.legend.setVisible(False)
        self.plot.getViewBox().setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
        self.plot.getViewBox().disableAutoRange()
        self.plot.getViewBox().sigRangeChangedManually.connect(self._manual_range)
        cache_static_items(self.plot)
        self.set_theme("light")

    def _fit_legend(self) -> None:
        """Columns for the width, and a title row as tall as title + key (the key sits in it, outside the plot)."""
        n = len(self.legend.items)
        width = self.plot_widget.width()
        # A short chart keeps its height for the curves: the summary beside it names the same colours.
        short = self.plot_widget.height() < 300
        has_data = not self.placeholder.isVisible()
        self.legend.setVisible(has_data and not short)

        cols = 3 if width >= 470 else 2 if width >= 300 else 1
        if self.legend.columnCount != cols:
            self.legend.setColumnCount(cols)
        rows = math.ceil(n / cols) if (n and self.legend.isVisible()) else 0
        line = max(14.0, self.legend.boundingRect().height() / rows) if rows else 0.0
        self.plot.layout.setRowFixedHeight(0, 26 + rows * line)

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        self._fit_legend()

    # ---- data in -----------------------------------------------------------------------------------
    def clear(self) -> None:
        for c in self._curves.values():
            self.plot.removeItem(c)
        self.legend.clear()
        self._buffers.clear()
        self._curves.clear()
        self._auto_y = True
        self._xmax = 0.0
        self._ymax = 0.0

    def _curve(self, path: str, legend: bool = True) -> pg.PlotDataItem:
        if path not in self._curves:
            pen = pg.mkPen(path_color(path), width=1)  # 1 px: Qt draws wider lines through a far slower path
            c = self.plot.plot([], [], pen=pen, name=path, skipFiniteCheck=True)
            c.setDownsampling(auto=True, method="peak")
            c.setClipToView(True)
            self._curves[path] = c
            self._buffers[path] = _Buffer()
            if legend:
                self._reorder_legend()
        return self._curves[path]

    def _reorder_legend(self) -> None:
        self.legend.clear()
        QTimer.singleShot(0, self._fit_legend)
        for p in ordered(self._curves):
            self.legend.addItem(self._curves[p], p)

    def reset(self, paths) -> None:
        """A new run: empty curves for every path it will time, created now rather than mid-run."""
        self.clear()
        for p in paths:
            self._curve(p, legend=False)
        self._reorder_legend()

    def path_started(self, path: str) -> None:
        self._curve(path)

    def add_samples(self, path: str, arr) -> None:
        self._curve(path)
        self._buffers[path].extend(np.asarray(arr, dtype=np.float64).ravel())

    def set_samples(self, path: str, arr) -> None:
        """Replace a path's samples (a loaded session)."""
        self._curve(path)
        b = _Buffer()
        if arr is not None and len(arr):
            b.extend(np.asarray(arr, dtype=np.float64).ravel())
        self._buffers[path] = b
        b.dirty = True

    # ---- drawing -----------------------------------------------------------------------------------
    def _timed_redraw(self) -> None:
        from explorer.gui.jobs.measure import may_draw

        if may_draw():  # never while the measuring process times a burst (drawn at its boundary instead)
            self.redraw()

    def redraw(self) -> None:
        changed = False
        for path, b in self._buffers.items():
            if not b.dirty:
                continue
            b.dirty = False
            changed = True
            if b.n > self._xs.size:
                self._xs = np.arange(max(b.n, 2 * self._xs.size, 4096), dtype=np.float64)
            y = b.values
            self._curves[path].setData(self._xs[: b.n], y, skipFiniteCheck=True)
            # p90: the y range follows the bulk of the calls; spikes (another process or the GUI preempting
            # a torch thread, page faults) run off the top instead of squashing every curve to the floor.
            # (on at most ~8k evenly spaced samples: the same p90 at 1/20 of the cost for 100k points)
            b.top = float(np.percentile(y[:: max(1, b.n // 8192)], 90)) if b.n else 0.0
        if changed:
            self.redraws += 1
            if self.placeholder.isVisible():
                self.placeholder.setVisible(False)
                self._fit_legend()
            if self._auto_y:
                self._fit()

    def _fit(self) -> None:
        """Ranges that move in steps, not every frame: an axis repaint costs more than the curves."""
        live = [b for b in self._buffers.values() if b.n]
        if not live:
            return
        vb = self.plot.getViewBox()
        n = max(b.n for b in live)
        if n > self._xmax or n < self._xmax / 4:
            self._xmax = _nice(n * 1.4)
            vb.setXRange(0, self._xmax, padding=0)
        top = (max(b.top for b in live) or 1.0) * 2.0
        if top > self._ymax or top < self._ymax * 0.4:
            self._ymax = _nice(top)
            vb.setYRange(0, self._ymax, padding=0)

    def _manual_range(self, *args) -> None:
        self._auto_y = False  # the user zoomed: stop fitting until the next run

    def point_count(self, path: str | None = None) -> int:
        if path is not None:
            b = self._buffers.get(path)
            return b.n if b else 0
        return sum(b.n for b in self._buffers.values())

    def samples_of(self, path: str) -> np.ndarray:
        b = self._buffers.get(path)
        return b.values.copy() if b else np.empty(0)

    def set_theme(self, name: str) -> None:
        t = theme(name)
        self.plot_widget.setBackground(t["bg"])
        for ax in ("left", "bottom"):
            a = self.plot.getAxis(ax)
            a.setPen(pg.mkPen(t["muted"]))
            a.setTextPen(pg.mkPen(t["fg"]))
        self._fg = t["fg"]
        self.plot.titleLabel.setText(self.plot.titleLabel.text, color=t["fg"])
        self.legend.setLabelTextColor(t["fg"])
        for _, label in self.legend.items:  # existing labels keep their old colour unless re-set
            label.setText(label.text, color=t["fg"])
        self.legend.setBrush(pg.mkBrush(t["bg"] + "cc" if len(t["bg"]) == 7 else t["bg"]))
        self.legend.setPen(pg.mkPen(t["grid"]))
        self.placeholder.setColor(t["muted"])
