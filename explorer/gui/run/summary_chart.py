"""Per-path summary: median time as a bar with the IQR (p25..p75) as whiskers, one row per path, and a
label with GFLOP/s, % of peak and the speed against the chosen baseline path.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QFontMetricsF
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from explorer.core.paths.base import PATH_HELP, PATHS
from explorer.gui.common.colors import ordered, path_color, qcolor, theme
from explorer.gui.run.timing_chart import cache_static_items


class _Stat:
    __slots__ = ("median", "p25", "p75", "gflops", "pct", "status", "live", "n", "noisy", "stopped")

    def __init__(self, median=None, p25=None, p75=None, gflops=None, pct=None, status="ok", live=False, n=0, noisy=False):
        self.median, self.p25, self.p75 = median, p25, p75
        self.gflops, self.pct, self.status, self.live, self.n = gflops, pct, status, live, n
        self.noisy = noisy  # another program disturbed the loop: the bar is hatched, its ratios uncertain
        self.stopped = False  # a live estimate whose job was stopped: no result will replace it


class SummaryChart(QWidget):
    baseline_changed = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("summaryChart")
        self.baseline_combo = QComboBox()
        self.baseline_combo.setToolTip("The path every other path's speed is compared with (>1x means faster).")
        for p in PATHS:
            self.baseline_combo.addItem(p)
            self.baseline_combo.setItemData(self.baseline_combo.count() - 1, PATH_HELP[p], 3)  # Qt.ToolTipRole
            self.baseline_combo.setItemData(self.baseline_combo.count() - 1, qcolor(p), 1)  # Qt.DecorationRole
        self.baseline_combo.currentTextChanged.connect(self._on_baseline)
        head = QHBoxLayout()
        head.setContentsMargins(6, 2, 6, 0)
        self.caption = QLabel("Median per call, whiskers: IQR")
        head.addWidget(self.caption)
        head.addStretch(1)
        head.addWidget(QLabel("Baseline:"))
        head.addWidget(self.baseline_combo)
        self.plot_widget = pg.PlotWidget()
        self.plot = self.plot_widget.getPlotItem()
        self.plot.setTitle("Summary per path")
        self.plot.setLabel("bottom", "median time per call", units="ms")
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.plot.showGrid(x=True, y=False, alpha=0.25)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.getViewBox().invertY(True)
        self.plot.setContentsMargins(2, 2, 14, 2)  # room for the last x tick label at the right edge
        # The label room depends on the view box's width in pixels: recompute when it changes (the widget's
        # own resizeEvent comes before the plot's layout has resized the view box).
        self.plot.getViewBox().sigResized.connect(self._on_view_resized)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addLayout(head)
        lay.addWidget(self.plot_widget)
        self.placeholder = pg.TextItem("Each path's median and IQR appear here as it finishes.", anchor=(0.5, 0.5))
        self.plot.getViewBox().addItem(self.placeholder, ignoreBounds=True)
        self._stats: dict[str, _Stat] = {}
        self._bars = None
        self._errs = None
        self._texts: list = []
        self._tick_paths: list = [None]
        self._xr = 0.0
        self.peaks = None  # core.session.state.Peaks (the window's one peak object), read at draw time
        self.peak_threads: int | None = None  # the thread count whose peak the bars are judged against
        self.dtype = "f32"
        self._theme = "light"
        cache_static_items(self.plot)
        self.set_theme("light")

    # ---- data in -----------------------------------------------------------------------------------
    @property
    def baseline(self) -> str:
        return self.baseline_combo.currentText()

    def set_baseline(self, path: str) -> None:
        if path in PATHS:
            self.baseline_combo.setCurrentText(path)

    def _on_baseline(self, path: str) -> None:
        self.redraw()
        self.baseline_changed.emit(path)

    def clear(self) -> None:
        self._stats.clear()
        self.redraw()

    def set_peaks(self, peaks, threads: int | None) -> None:
        """Judge % of peak against `peaks` (a Peaks object, kept, not copied) at this thread count."""
        self.peaks, self.peak_threads = peaks, threads
        self.redraw()

    def _peak(self, dtype: str) -> float | None:
        return self.peaks.gflops(dtype, self.peak_threads) if self.peaks is not None else None

    @property
    def peak_fp32(self) -> float | None:
        return self._peak("f32")

    @property
    def peak_bf16(self) -> float | None:
        p = self.peaks.at(self.peak_threads) if self.peaks is not None else None
        return p.bf16_gflops if p is not None else None

    def set_live(self, path: str, samples: np.ndarray, ops: int | None = None) -> None:
        """A running path's estimate from the samples so far (drawn lighter until its result arrives)."""
        if samples is None or not len(samples):
            return
        p25, med, p75 = np.percentile(samples, (25, 50, 75))
        g = ops / (med / 1e3) / 1e9 if (ops and med > 0) else None
        self._stats[path] = _Stat(float(med), float(p25), float(p75), g, None, "ok", True, len(samples))

    def stop_live(self) -> None:
        """The job ended without finishing the live paths (Stop, a failure): their bars say stopped."""
        for s in self._stats.values():
            if s.live:
                s.stopped = True
        self.redraw()

    def set_result(self, r) -> None:
        if r.status != "ok" or r.median_ms is None:
            self._stats[r.path] = _Stat(status=r.status)
        else:
            p25 = r.p25_ms if r.p25_ms is not None else r.median_ms
            p75 = r.p75_ms if r.p75_ms is not None else r.median_ms
            self._stats[r.path] = _Stat(r.median_ms, p25, p75, r.gflops, r.pct_peak, "ok", False, r.samples,
                                        getattr(r, "quality", "") == "noisy")
        self.dtype = r.spec.dtype
        self.redraw()

    def _pct(self, s: _Stat):
        peak = self._peak(self.dtype)
        if s.gflops and peak:
            return 100.0 * s.gflops / peak
        return s.pct

    def bar_labels(self) -> dict[str, str]:
        """Path -> the label drawn beside its bar now (tests and screenshots read what the user reads)."""
        return {p: self._texts[i].textItem.toPlainText().strip() for i, p in enumerate(ordered(self._stats))
                if i < len(self._texts)}

    def bar_count(self) -> int:
        return sum(1 for s in self._stats.values() if s.median is not None)

    # ---- drawing -----------------------------------------------------------------------------------
    def _ensure_items(self) -> None:
        if self._bars is None:
            self._bars = pg.BarGraphItem(x0=[0.0], y=[0.0], height=[0.0], width=[0.0], pen=pg.mkPen(None))
            self._errs = pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0), left=np.zeros(0), right=np.zeros(0), beam=0.28)
            self.plot.addItem(self._bars)
            self.plot.addItem(self._errs)

    def _text_item(self, i: int) -> pg.TextItem:
        while len(self._texts) <= i:
            item = pg.TextItem("", anchor=(0, 0.5))
            self.plot.addItem(item)
            self._texts.append(item)
        return self._texts[i]

    def redraw(self) -> None:
        """One bar item and one error-bar item for all paths, text items reused: cheap enough for live updates."""
        self._ensure_items()
        t = theme(self._theme)
        paths = ordered(self._stats)
        if paths != self._tick_paths:  # an axis repaint is costly: only when the rows change
            self._tick_paths = paths
            self.plot.getAxis("left").setTicks([[(i, p) for i, p in enumerate(paths)]])
            self.plot.setYRange(-0.6, max(len(paths), 3) - 0.4, padding=0)
        base = self._stats.get(self.baseline)
        base_med = base.median if (base and base.median and not base.live) else None
        self._base_noisy = bool(base and base.noisy)
        ys, widths, brushes, pens, meds, lefts, rights = [], [], [], [], [], [], []
        fm = QFontMetricsF(self.font())
        width_px = max(self.plot.getViewBox().width(), 120.0)
        rows = []  # (index, path, stat) of the drawn bars
        for i, p in enumerate(paths):
            s = self._stats[p]
            txt = self._text_item(i)
            if s.median is None:
                txt.setColor(t["error"])
                txt.setText(f" {s.status}")
                txt.setPos(0, i)
                continue
            rows.append((i, p, s))
            ys.append(i)
            widths.append(s.median)
            if s.noisy:  # hatched, not filled: a figure another program disturbed is no finding
                brushes.append(QBrush(qcolor(p, 230), Qt.BDiagPattern))
                pens.append(pg.mkPen(path_color(p), width=1, style=Qt.DashLine))
            else:
                brushes.append(pg.mkBrush(qcolor(p, 110 if s.live else 230)))
                pens.append(pg.mkPen(path_color(p), width=1))
            meds.append(s.median)
            lefts.append(s.median - s.p25)
            rights.append(s.p75 - s.median)
        # The most detailed labels that leave the bars about a third of the width (narrow charts drop
        # % of peak, then GFLOP/s; the table has every number).
        label_px: list[tuple[float, float]] = []  # (x where a label starts, its width in pixels)
        texts: list[str] = []
        for detail in (3, 2, 1):
            texts = [" " + self.label(p, s, base_med, detail) for _, p, s in rows]
            label_px = [(s.p75, fm.horizontalAdvance(text) + 12) for (_, _, s), text in zip(rows, texts)]
            if all(w <= 0.68 * width_px for _, w in label_px):
                break
        for (i, p, s), text in zip(rows, texts):
            txt = self._text_item(i)
            txt.setColor(t["fg"])
            txt.setText(text)
            txt.setPos(s.p75, i)
        for txt in self._texts[len(paths):]:
            txt.setText("")
        n = len(ys)
        visible = n > 0
        if n == 0:  # (pyqtgraph's BarGraphItem cannot take empty pen lists)
            ys, widths, meds, lefts, rights = [0.0], [0.0], [0.0], [0.0], [0.0]
            brushes, pens, n = [pg.mkBrush(None)], [pg.mkPen(None)], 1
        self._bars.setOpts(x0=np.zeros(n), y=np.asarray(ys, dtype=float), height=np.full(n, 0.62),
                           width=np.asarray(widths, dtype=float), brushes=brushes, pens=pens)
        self._errs.setData(x=np.asarray(meds, dtype=float), y=np.asarray(ys, dtype=float),
                           left=np.asarray(lefts, dtype=float), right=np.asarray(rights, dtype=float),
                           beam=0.28, pen=pg.mkPen(t["fg"], width=1.5))
        # After setData, which shows the item again (an empty chart drew a stray whisker at 0).
        self._bars.setVisible(visible)
        self._errs.setVisible(visible)
        self.placeholder.setVisible(not paths)
        if not paths:
            self.placeholder.setPos(0.5, 1.0)  # the middle of the empty view (x 0..1, y -0.6..2.6)
        if not label_px:
            if self._xr != 1.0:
                self._xr = 1.0
                self.plot.setXRange(0, 1, padding=0)
            return
        # Room on the right for every label: R >= x / (1 - w/W) for a label of w px at x in a W px wide view.
        want = max(x / max(0.25, 1.0 - w / width_px) for x, w in label_px)
        if want > self._xr or want < self._xr * 0.6:
            self._xr = want * 1.05
            self.plot.setXRange(0, self._xr, padding=0)

    def label(self, p: str, s: _Stat, base_med, detail: int = 3) -> str:
        """The bar's label: median, then (detail >= 1) speed against the baseline, (>= 2) GFLOP/s, (>= 3) % peak."""
        parts = [f"{'~' if s.noisy else ''}{s.median:.3g} ms"]
        if s.live:
            state = "stopped" if s.stopped else "running"
            return parts[0] + (f" · {state} ({s.n} calls)" if detail >= 2 else f" · {state}")
        if base_med:
            uncertain = s.noisy or getattr(self, "_base_noisy", False)
            ratio = f"~{base_med / s.median:.3g}x?" if uncertain else f"{base_med / s.median:.3g}x"
            parts.append("baseline" if p == self.baseline else ratio)
        if s.noisy:
            parts.append("noisy")
        if s.gflops and detail >= 2:
            parts.append(f"{s.gflops:.3g} GFLOP/s")
        pct = self._pct(s)
        if pct is not None and detail >= 3:
            parts.append(f"{pct:.0f}% peak" + (" ⚠" if pct > 100 else ""))  # above the peak: it needs re-measuring
        return " · ".join(parts)

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        self._xr = 0.0  # labels need a new range for the new width
        self.redraw()

    def _on_view_resized(self, *_) -> None:
        self._xr = 0.0
        self.redraw()

    def set_theme(self, name: str) -> None:
        self._theme = name
        t = theme(name)
        self.plot_widget.setBackground(t["bg"])
        for axn in ("left", "bottom"):
            a = self.plot.getAxis(axn)
            a.setPen(pg.mkPen(t["muted"]))
            a.setTextPen(pg.mkPen(t["fg"]))
        self.plot.titleLabel.setText(self.plot.titleLabel.text, color=t["fg"])
        self.placeholder.setColor(t["muted"])
        self.redraw()


def finite(v) -> bool:
    return v is not None and not (isinstance(v, float) and math.isnan(v))
