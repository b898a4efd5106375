"""The two-field sweep chart: a grid of the fastest path per cell, or of one path's speedup against another."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QFont

from explorer.core.paths.base import PATHS
from explorer.core.report.sweep_data import Cell, SweepData
from explorer.gui.charts.chart_base import ChartBase, wrap_keys
from explorer.gui.common.colors import label_on, ordered, path_color, qcolor
from explorer.gui.common.doubt import MARK_NAME, approx

__all__ = ["HeatmapChart", "fmt_x"]


# ---- heatmap (two fields) ---------------------------------------------------------------------------------
class HeatmapChart(ChartBase):
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
        self.unsure_cells = 0  # cells with a noisy timing: their labels carry ~
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
                self.unsure_cells += unsure
                if unsure:
                    lines.append("uncertain: a noisy timing in this cell")
                texts[(i, j)] = "\n".join(lines)
                # the app's `~` for a doubtful figure (a noisy timing in the cell)
                labels[(i, j)] = (approx(_abbrev_path(best.path), unsure)
                                  + (f"\n{approx(fmt_x(base.median / best.median), unsure)}" if base else ""))
            else:
                c = cs.get(self.path)
                if c is None or base is None:
                    continue
                s = base.median / c.median
                grid[i, j] = math.log2(s)
                unsure = c.noisy or base.noisy
                self.unsure_cells += unsure
                texts[(i, j)] = (f"{head}\n{self.path}: {s:.3g}x vs {self.baseline_path}"
                                 f"{' (uncertain: noisy)' if unsure else ''}\n"
                                 f"{c.median:.4g} ms vs {base.median:.4g} ms")
                labels[(i, j)] = approx(fmt_x(s), unsure)
        self.grid = grid if (nx and ny) else np.full((0, 0), np.nan, dtype=np.float32)
        self._cell_text = texts
        self.legend.clear()
        self.legend.hide()
        self.legend_paths = []
        if self.mode == "fastest":
            # The legend lives in the title (coloured squares): a legend box would cover cells. It wraps to the
            # width (_compose_title): six paths on one line set the plot's minimum width and pushed the second
            # column and half the key out of a 1024x700 window.
            self._key_parts = [(p, f'<span style="color:{path_color(p)}">&#9632;</span>&nbsp;{p}') for p in paths]
            if self.unsure_cells:
                self._key_parts.append((f"~ {MARK_NAME}", f"~ {MARK_NAME}"))
            self._set_title(f"Fastest path per cell (label: speedup vs {self.baseline_path})")
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
            self._key_parts = []
            self._set_title(f"Speedup of {self.path} vs {self.baseline_path}<br>"
                               f"<span style='color:#3b4cc0'>&#9632;</span> slower ({fmt_x(2 ** -m)}) · "
                               f"&#9633; same · <span style='color:#b40426'>&#9632;</span> faster ({fmt_x(2 ** m)})"
                               + (f" · ~ {MARK_NAME}" if self.unsure_cells else ""))
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
        # fastest mode: each label in black or white, whichever reads on its path's colour (#111111 on the
        # dense blue read at 3.9:1)
        self._label_colour = {k: label_on(path_color(PATHS[int(grid[k])])) for k in labels
                              if self.mode == "fastest" and 0 <= int(grid[k]) < len(PATHS)}
        if self.mode == "speedup":
            finite = grid[np.isfinite(grid)]
            m = max(0.25, float(np.abs(finite).max())) if finite.size else 1.0
            self._dark = {k for k in labels if abs(float(grid[k])) > 0.55 * m}
        self._draw_labels(labels, nx, ny)
        self._show_message("" if texts else "Cells fill in as points finish.")

    def _compose_title(self, **kw) -> None:
        parts = getattr(self, "_key_parts", None)
        if not parts:
            super()._compose_title(**kw)
            return
        keys = wrap_keys(parts, max(self.plot_widget.width() - 60, 160))
        self._apply_title(f"{self._base_title}<br>{keys}", **kw)

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
            t.setColor(self._label_colour.get(k) or ("#ffffff" if k in self._dark else "#111111"))
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
