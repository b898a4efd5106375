"""Roofline chart: every ok result at its arithmetic intensity (core.roofline), under the machine's ceilings.

Log-log axes; fp32 (and bf16) roofs drawn as a bandwidth slope meeting a flat peak; the byte-count and AI
definitions are printed under the chart (and exported with it). The view keeps no copy of the rows or the peak:
it draws the session model's rows (session.all_results()) against the session's one Peaks object at
peak_threads(), read at redraw time, and follows the bridge's results, sweep and peaks signals (redrawn when
visible, else on show). "Measure peak" only asks (measure_requested): the window measures, in the measuring
process, and the session's new peak redraws the view. Without a peak the points are still drawn and the chart
says how to get the ceilings.

API:
    RooflineView(bridge=None, peak_threads=None, parent=None)
        bridge          the window's SessionBridge (alone the view makes its own, over a new SessionState)
        peak_threads    callable -> thread count whose peak the roofs are (None: session.peak_threads());
                        when it gives None, torch's default thread count
    session, peak       the SessionState drawn; the session's machine.Peak at peak_threads() (read-only)
    set_measuring(on)   the button while the window measures
    redraw(), export(path) -> bool   PNG or SVG by suffix (chart and definitions)
    point_count() -> int, hover_text_at(ai, gflops) -> str
    signals: measure_requested(), status(str)
"""

from __future__ import annotations

import math
import os

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from explorer.gui.charts.chart_axes import log_axes
from explorer.gui.charts.chart_base import HoverLabel, nearest
from explorer.gui.common.colors import ordered, path_color, theme
from explorer.gui.common.doubt import MARK_NAME, mark_color, mark_pen
from explorer.gui.common.export import export_plot
from explorer.gui.common.inputs import ask_save_path

SYMBOLS = {"f32": "o", "bf16": "t", "f16": "s"}
REDRAW_MS = 50  # session changes while the tab is in view are drawn at most this often
_UNDRAWN = object()


def _default_threads() -> int:
    """torch's default thread count: what the measuring process uses when no thread count is chosen."""
    import torch

    return torch.get_num_threads()


def _may_draw() -> bool:
    from explorer.gui.jobs.measure import may_draw

    return may_draw()


class _NoPeak:
    """Stands in for a Peak when none is cached: points get their AI, no ceilings are drawn."""

    fp32_gflops = 1.0
    bf16_gflops = None
    bandwidth_gbs = 1.0


class RooflineView(QWidget):
    measure_requested = Signal()  # "Measure peak": the window measures (in the measuring process)
    status = Signal(str)

    def __init__(self, bridge=None, peak_threads=None, parent=None):
        super().__init__(parent)
        self.setObjectName("rooflineView")
        from explorer.gui.common.session_bridge import SessionBridge

        # The rows and the peak live in the session model, once; this view reads them when it draws.
        self.bridge = bridge if bridge is not None else SessionBridge(parent=self)
        self.session = self.bridge.session
        self._peak_threads = peak_threads if peak_threads is not None else self.session.peak_threads
        self.roof = None
        self._theme = "light"
        self._dirty = True
        self._drawn_peak = _UNDRAWN  # the peak the chart was last drawn against
        self._redraw_timer = QTimer(self)
        self._redraw_timer.setSingleShot(True)
        self._redraw_timer.setInterval(REDRAW_MS)
        self._redraw_timer.timeout.connect(self._redraw_if_dirty)

        self.measure_button = QPushButton("Measure peak")
        self.measure_button.setToolTip("Measure this CPU's matmul peak and copy bandwidth (about 3 s, in the "
                                       "background) for the ceilings.")
        from PySide6.QtWidgets import QComboBox

        self.bytes_combo = QComboBox()
        self.bytes_combo.addItem("bytes each path moves", "path")
        self.bytes_combo.addItem("logical bytes (same for every path)", "logical")
        self.bytes_combo.setToolTip("What a point's bytes are: what the path really moves (its stored tensors with "
                                    "padding, plus its reorders), or each tensor's logical size once.")
        self.bytes_combo.currentIndexChanged.connect(lambda *_: self.redraw())
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip("Save the roofline as PNG or SVG.")
        self.peak_label = QLabel("")
        self.peak_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.peak_label.setWordWrap(True)  # a long peak line wraps: it must not set the window's minimum width
        self.peak_label.setMinimumWidth(120)
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        head.addWidget(self.peak_label, 1)
        head.addWidget(self.bytes_combo)
        head.addWidget(self.measure_button)
        head.addWidget(self.export_button)

        self.layout_widget = pg.GraphicsLayoutWidget()
        self.plot = self.layout_widget.addPlot(row=0, col=0, axisItems=log_axes())
        self.plot.setTitle("Roofline")
        self.plot.setLabel("bottom", "arithmetic intensity (FLOP/byte)")
        self.plot.setLabel("left", "GFLOP/s")
        for ax in ("left", "bottom"):
            self.plot.getAxis(ax).enableAutoSIPrefix(False)
        self.plot.setLogMode(True, True)
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        # The legend in its own column, beside the plot: inside it, whatever corner it took covered points or
        # the "fp32 peak" label on some machine. It is exported with the chart (the layout is the export item).
        self.legend = pg.LegendItem(labelTextSize="8pt", verSpacing=-6)
        self.layout_widget.addItem(self.legend, row=0, col=1)
        self.layout_widget.ci.layout.setAlignment(self.legend, Qt.AlignTop)  # its natural height, at the top
        self.legend.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Fixed)
        self.definition = pg.LabelItem("", justify="left", size="8pt")
        self.layout_widget.addItem(self.definition, row=1, col=0, colspan=2)
        self.note = pg.TextItem("", color="#b3261e", anchor=(0.5, 0.5))
        self.plot.addItem(self.note, ignoreBounds=True)
        self.hover = HoverLabel(self.plot, self._lookup)
        self._hover_pts = (np.empty(0), np.empty(0), [])
        self._items: list = []

        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 4)
        lay.setSpacing(4)
        lay.addLayout(head)
        lay.addWidget(self.layout_widget, 1)
        self.measure_button.clicked.connect(lambda *_: self.measure_requested.emit())
        self.export_button.clicked.connect(self._export_dialog)
        for sig in (self.bridge.results_changed, self.bridge.sweep_changed, self.bridge.peaks_changed):
            sig.connect(self._on_session)
        self.set_theme("light")

    # ---- the session ------------------------------------------------------------------------------------
    @property
    def peak(self):
        """The session's machine.Peak at peak_threads() (None when none is cached or measured)."""
        return self.session.peaks.at(self._peak_threads() or _default_threads())

    def _on_session(self, _change=None) -> None:
        """Rows or peaks changed: drawn soon when the tab is in view, else when it is shown."""
        self._dirty = True
        if self.isVisible() and not self._redraw_timer.isActive():
            self._redraw_timer.start()

    def _redraw_if_dirty(self) -> None:
        if not self._dirty or not self.isVisible():
            return
        if not _may_draw():  # never while the measuring process times a burst
            self._redraw_timer.start()
            return
        self.redraw()

    def showEvent(self, ev) -> None:
        super().showEvent(ev)
        # The peak also follows the panel's thread count, which is not a session change: compare on show.
        if self._dirty or self.peak is not self._drawn_peak:
            self.redraw()

    def set_measuring(self, on: bool) -> None:
        """The button while the window measures the peak."""
        self.measure_button.setEnabled(not on)
        self.measure_button.setText("Measuring…" if on else "Measure peak")
        if on:
            self.peak_label.setText("Measuring the peak (about 3 s, in the measuring process)…")
        else:
            self._on_session()

    # ---- drawing ----------------------------------------------------------------------------------------
    def redraw(self) -> None:
        from explorer.core.report.roofline import (
            AI_DEFINITION,
            ATTAINABLE_DEFINITION,
            BYTES_DEFINITION,
            TRAFFIC_DEFINITION,
            roofline,
        )

        t = theme(self._theme)
        for it in self._items:
            self.plot.removeItem(it)
        self._items = []
        self.legend.clear()
        self._dirty = False
        peak = self._drawn_peak = self.peak
        try:
            mode = self.bytes_combo.currentData() if hasattr(self, "bytes_combo") else "path"
            self.roof = roofline(self.session.all_results(), peak or _NoPeak(), bytes_mode=mode)
        except Exception as e:  # noqa: BLE001 - a bad row must not break the tab
            self.roof = None
            self._set_note(f"Cannot compute the roofline: {e}")
            return
        roof = self.roof
        if peak is None:
            roof.ceilings = []
            self.peak_label.setText("No peak measured for this machine yet: press Measure peak (about 3 s) for the "
                                    "ceilings.")
        else:
            bf = f", bf16 {peak.bf16_gflops:.0f}" if peak.bf16_gflops else ""
            self.peak_label.setText(f"Peak: fp32 {peak.fp32_gflops:.0f}{bf} GFLOP/s · bandwidth "
                                    f"{peak.bandwidth_gbs:.1f} GB/s · {peak.threads} threads · measured "
                                    f"{peak.measured_at}")
        lo, hi = roof.ai_range()
        # ceilings
        for c in roof.ceilings:
            xs, ys = c.line(lo, hi)
            style = Qt.SolidLine if c.name == "fp32" else Qt.DashLine
            line = pg.PlotDataItem(xs, ys, pen=pg.mkPen(t["fg"], width=2, style=style))
            self._add(line, f"{c.name} roof")
            flat = pg.TextItem(f"{c.name} peak {c.peak_gflops:.0f} GFLOP/s", color=t["fg"], anchor=(1, 1))
            flat.setPos(math.log10(hi), math.log10(c.peak_gflops))
            self._add(flat)
            if c.ridge_ai > lo:
                x_slope = max(lo, c.ridge_ai / 30)
                slope = pg.TextItem(f"{c.bandwidth_gbs:.0f} GB/s", color=t["muted"], anchor=(0, 1), angle=0)
                slope.setPos(math.log10(x_slope), math.log10(c.attainable(x_slope)))
                self._add(slope)
        # points, one item per (path, dtype)
        groups: dict[tuple[str, str], list] = {}
        for p in roof.points:
            groups.setdefault((p.path, p.dtype), []).append(p)
        hx, hy, texts = [], [], []
        noisy_x, noisy_y = [], []  # points another program disturbed: crossed, as in the sweep charts
        self.point_items = {}
        self.above_roof = 0  # points above their roof (flagged)
        for path in ordered({k[0] for k in groups}):
            for (gp, dt), pts in sorted(groups.items()):
                if gp != path:
                    continue
                x = np.array([p.ai for p in pts])
                y = np.array([p.gflops for p in pts])
                color = path_color(path)
                above = [peak is not None and p.efficiency > 1.0 for p in pts]
                # a point above its roof is flagged: a thick outline in the error colour
                pens = [pg.mkPen(t["error"], width=2.5) if a else pg.mkPen(t["bg"], width=0.8) for a in above]
                item = pg.PlotDataItem(x, y, pen=None, symbol=SYMBOLS.get(dt, "o"), symbolSize=9,
                                       symbolBrush=pg.mkBrush(color), symbolPen=pens)
                self.above_roof = getattr(self, "above_roof", 0) + sum(above)
                self._add(item, f"{path} ({dt})" if len({k[1] for k in groups}) > 1 else path)
                self.point_items[(path, dt)] = item
                noisy_x += [p.ai for p in pts if p.noisy]
                noisy_y += [p.gflops for p in pts if p.noisy]
                hx.append(np.log10(x))
                hy.append(np.log10(y))
                texts += [self._point_text(p, peak is not None) for p in pts]
        self._hover_pts = (np.concatenate(hx) if hx else np.empty(0), np.concatenate(hy) if hy else np.empty(0), texts)
        self.noisy_points = len(noisy_x)
        if noisy_x:
            # Behind the points, larger: the arms stick out and the path's colour stays readable in the middle.
            marks = pg.PlotDataItem(np.array(noisy_x), np.array(noisy_y), pen=None, symbol="x", symbolSize=19,
                                    symbolBrush=mark_color(self._theme), symbolPen=mark_pen(self._theme, 1.0))
            marks.setZValue(-1)
            self._add(marks, MARK_NAME)
        ys = [p.gflops for p in roof.points] + [c.peak_gflops for c in roof.ceilings]
        ys += [c.attainable(lo) for c in roof.ceilings]
        if ys:
            self.plot.setXRange(math.log10(lo), math.log10(hi), padding=0.02)
            self.plot.setYRange(math.log10(min(ys) / 2), math.log10(max(ys) * 2), padding=0.02)
        else:
            self.plot.setXRange(-1, 2, padding=0)
            self.plot.setYRange(0, 3, padding=0)
        notes = []
        if not roof.points:
            notes.append("No ok results yet: run, sweep or open results to place them here.")
        if peak is None:
            notes.append("No peak cached for this machine: press Measure peak (about 3 s) to draw the ceilings.")
        elif self.above_roof:
            notes.append(f"⚠ {self.above_roof} point{'s' if self.above_roof != 1 else ''} above the roof (red "
                         "outline): the peak is too low; press Measure peak.")
        self._set_note("\n".join(notes))
        self.definition.setText(
            f"<span style='color:{t['muted']}'>{AI_DEFINITION}.<br>"
            f"{TRAFFIC_DEFINITION if mode == 'path' else BYTES_DEFINITION}.<br>"
            f"{ATTAINABLE_DEFINITION}; f32 points judged against the fp32 roof, bf16 against bf16.</span>")
        self._wrap_texts()
        QTimer.singleShot(0, self._wrap_texts)  # again once the legend column has taken its width

    def _point_text(self, p, with_peak: bool) -> str:
        lines = [f"{p.name + '  ' if p.name else ''}{p.desc}", f"path {p.path} · {p.dtype}"
                 + (f" · {p.threads} threads" if p.threads else "")]
        if p.vary:
            lines.append(p.vary.replace(";", ", "))
        lines.append(f"{'~' if p.noisy else ''}{p.gflops:.4g} GFLOP/s at AI {p.ai:.3g} FLOP/byte")
        if p.noisy:
            lines.append("noisy: another program disturbed this timing (uncertain)")
        lines.append(f"{p.ops:.3g} FLOP, {p.bytes / 1e6:.3g} MB moved")
        if with_peak:
            lines.append(f"{100 * p.efficiency:.0f}% of attainable ({p.attainable:.4g} GFLOP/s, {p.bound} bound)")
            if p.efficiency > 1.0:
                lines.append("⚠ above the roof: the peak is too low (measured while the machine was busy, or at "
                             "other threads); measure it again")
            pt = getattr(self._drawn_peak, "threads", None)
            if pt and p.threads and p.threads != pt:
                lines.append(f"measured at {p.threads} threads; this roof is the {pt}-thread peak")
        return "\n".join(lines)

    def _add(self, item, name: str | None = None) -> None:
        self.plot.addItem(item)
        self._items.append(item)
        if name:
            self.legend.addItem(item, name)

    def _set_note(self, text: str) -> None:
        self.note.setText(text)
        vr = self.plot.getViewBox().viewRect()
        self.note.setPos(vr.center())
        self.note.setVisible(bool(text))

    def _lookup(self, view_pos, scene_pos):
        xs, ys, texts = self._hover_pts
        i = nearest(self.plot.getViewBox(), scene_pos, xs, ys)
        if i is None:
            return None
        return texts[i], QPointF(float(xs[i]), float(ys[i]))

    def hover_text_at(self, ai: float, gflops: float) -> str:
        """What hovering at (ai, gflops) shows ('' when no point is near)."""
        return self.hover.show_at(QPointF(math.log10(ai), math.log10(gflops)))

    def point_count(self) -> int:
        return len(self.roof.points) if self.roof else 0

    # ---- export / theme -----------------------------------------------------------------------------------
    def export_item(self):
        return self.layout_widget.ci  # the plot and the definitions under it

    def export(self, path: str) -> bool:
        """PNG or SVG by the suffix of `path` (the chart and its definitions). False (and status) on failure."""
        try:
            export_plot(self, str(path))
        except Exception as e:  # noqa: BLE001
            self.status.emit(f"Cannot export the roofline to {path}: {e}.")
            return False
        self.status.emit(f"Saved the roofline to {path}.")
        return True

    def _export_dialog(self) -> None:
        if os.environ.get("MKLDNN_EXPLORER_NO_DIALOGS"):
            return
        path = ask_save_path(self, "Export roofline", "roofline.png", "PNG image (*.png);;SVG image (*.svg)")
        if path:
            self.export(path)

    def set_theme(self, name: str) -> None:
        self._theme = name
        t = theme(name)
        self.layout_widget.setBackground(t["bg"])
        for ax in ("left", "bottom"):
            a = self.plot.getAxis(ax)
            a.setPen(pg.mkPen(t["muted"]))
            a.setTextPen(pg.mkPen(t["fg"]))
        self.plot.titleLabel.setText(self.plot.titleLabel.text, color=t["fg"])
        self.legend.setLabelTextColor(t["fg"])
        self.legend.setBrush(pg.mkBrush(t["bg"]))
        self.legend.setPen(pg.mkPen(t["grid"]))
        self.hover.set_theme(name)
        self.note.setColor(t["error"])
        self.redraw()

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        self._wrap_texts()

    def _wrap_texts(self) -> None:
        """The definitions and the note wrap at the chart's width: a long line must not widen the chart past
        the window (at 1024 px its right edge was cut off)."""
        w = max(200, self.layout_widget.width() - 30)
        self.definition.item.setTextWidth(w)
        self.definition.updateMin()
        self.definition.setMinimumWidth(0)
        # the note sits in the plot's view box, narrower than the chart by the axis and the legend column
        vb_w = self.plot.getViewBox().width() or w
        self.note.textItem.setTextWidth(max(120.0, min(0.9 * vb_w, 560)))
        self.note.updateTextPos()
        # The view gave the layout its size before the texts shrank, and a layout cannot be smaller than its
        # texts were: after a window shrinks (1440 -> 1024) the chart stayed 1440-wide, legend off-screen.
        self.layout_widget.ci.setGeometry(QRectF(0, 0, self.layout_widget.width(), self.layout_widget.height()))

    def hideEvent(self, ev) -> None:
        super().hideEvent(ev)
        self.hover.hide()  # a tab switch must not leave the hover box behind
