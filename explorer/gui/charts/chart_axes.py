"""The sweep charts' axes: the metrics' names, the fields read on a log axis, log axes with readable ticks,
ticks at the swept values, layer names drawn upright.

Shared by every chart (and the roofline view's log axes); the ticks are set here so a chart's redraw only says
what it draws, not how its axis reads.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt

from explorer.core.report.sweep_data import SweepData

__all__ = ["METRICS", "LOG_FIELDS", "LogAxis", "log_axes", "x_ticks", "layer_ticks", "unrotate"]


METRICS = {"median_ms": "median time per call (ms)", "gflops": "GFLOP/s"}
# Fields whose sweeps are usually geometric: a log x axis spreads 1, 2, 4, ... 256 evenly.
LOG_FIELDS = ("mb", "g", "ic", "oc", "threads")


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
            text = names.get(text, text)  # the tick's stand-in (see layer_ticks) -> the whole name
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
    """A left and a bottom LogAxis, as PlotWidget(axisItems=...) takes them."""
    return {"left": LogAxis("left"), "bottom": LogAxis("bottom")}


def x_ticks(plot: pg.PlotItem, data: SweepData, cat: bool, log_x: bool) -> None:
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


def layer_ticks(plot: pg.PlotItem, data: SweepData, width_px: int, height_px: int = 0) -> None:
    """Whole layer names under the bar groups, drawn vertically (the shared `net:` prefix goes into the axis
    label); every k-th name when there are more than the width has lines for. Only a name longer than
    about 40% of the chart's height is shortened, in the middle, and the hover still gives it whole."""
    n = len(data.layers)
    ax = plot.getAxis("bottom")
    ax._sweep_ticks = ()  # x_ticks sets its ticks again after these
    if n == 0:
        unrotate(plot)
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


def unrotate(plot: pg.PlotItem) -> None:
    ax = plot.getAxis("bottom")
    if ax.rotated:
        ax.rotated = False
        ax.setStyle(autoExpandTextSpace=True)
        ax.setHeight(None)
