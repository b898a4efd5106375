"""What a sweep has produced so far, keyed for charts: Cell, SweepData and their baselines (Qt-free).

The GUI's sweep charts (explorer.gui line_charts, bar_chart, heatmap_chart) draw a SweepData; the session model
(explorer.core.session.state) holds the one SweepData of the last sweep, so the rows live once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from explorer.core.paths.base import ALL_PATHS
from explorer.core.problem.sweep_plan import grid_shape, parse_label
from explorer.core.report.counts import count_text as count_text  # its first home; the rule lives in counts


def ordered(paths) -> list[str]:
    """Paths in the canonical order, the six then the routes (unknown names last)."""
    rank = {p: i for i, p in enumerate(ALL_PATHS)}
    return sorted(paths, key=lambda p: rank.get(p, len(rank)))


@dataclass
class Cell:
    """One (point, path) outcome, as much as a chart needs (Results or CSV rows give the same Cell)."""

    path: str
    status: str
    median: float | None = None
    p25: float | None = None
    p75: float | None = None
    gflops: float | None = None
    desc: str = ""
    name: str = ""
    dtype: str = ""
    threads: object = None
    vary: str = ""
    error: str = ""
    noisy: bool = False  # another program disturbed its loop: marked, and ratios built on it are uncertain

    @property
    def ok(self) -> bool:
        return self.status == "ok" and bool(self.median) and self.median > 0

    def value(self, metric: str) -> float | None:
        return self.median if metric == "median_ms" else self.gflops

    def spread(self, metric: str) -> tuple[float, float]:
        """(low, high) of the IQR in the metric's unit (GFLOP/s from the p75/p25 times)."""
        med = self.median
        p25 = self.p25 if self.p25 is not None else med
        p75 = self.p75 if self.p75 is not None else med
        if metric == "median_ms":
            return p25, p75
        g = self.gflops or 0.0
        return (g * med / p75 if p75 else g), (g * med / p25 if p25 else g)

    def text(self, label: str = "") -> str:
        head = f"{self.name + '  ' if self.name else ''}{self.desc}"
        lines = [head, f"path {self.path}{' (' + label + ')' if label else ''}"
                 + (f" · {self.dtype}" if self.dtype else "") + (f" · {self.threads} threads" if self.threads else "")]
        if self.vary:
            lines.append(self.vary.replace(";", ", "))
        if not self.ok:
            lines.append(f"{self.status}: {self.error}" if self.error else self.status)
            return "\n".join(lines)
        iqr = (self.p75 - self.p25) if (self.p75 is not None and self.p25 is not None) else None
        lines.append(f"median {self.median:.4g} ms" + (f" · IQR {iqr:.3g} ms ({self.p25:.4g}..{self.p75:.4g})"
                                                       if iqr is not None else ""))
        if self.gflops:
            lines.append(f"{self.gflops:.4g} GFLOP/s")
        if self.noisy:
            lines.append("noisy: another program disturbed this timing (uncertain)")
        return "\n".join(lines)


def cell_of(r) -> Cell:
    """A Cell from a Result or a CSV row dict (read_csv's numbers)."""
    if isinstance(r, dict):
        g = r.get
        return Cell(g("path") or "", g("status") or "", _f(g("median_ms")), _f(g("p25_ms")), _f(g("p75_ms")),
                    _f(g("gflops")), g("desc") or "", g("name") or "", g("dtype") or "", g("threads"),
                    g("vary") or "", g("error") or "", (g("quality") or "") == "noisy")
    s = r.spec
    return Cell(r.path, r.status, r.median_ms, r.p25_ms, r.p75_ms, r.gflops, s.desc if s else "",
                s.name if s else "", s.dtype if s else "", r.threads, r.vary, r.error,
                getattr(r, "quality", "") == "noisy")


def _f(v) -> float | None:
    if v is None or v == "":
        return None
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def result_row(r) -> dict:
    """A Result as read_csv would return its row (numbers as numbers): what compare_rows expects."""
    if isinstance(r, dict):
        return r
    from explorer.core.report.results import FLOAT_COLUMNS as floats
    from explorer.core.report.results import INT_COLUMNS as ints  # the one list (a copy here missed 29 columns)

    out = {}
    for k, v in r.row().items():
        if v == "":
            out[k] = None
        elif k in ints:
            out[k] = int(float(v))
        elif k in floats:
            out[k] = float(v)
        else:
            out[k] = v
    return out


def short_name(name: str, limit: int = 14) -> str:
    """A layer name short enough for an axis tick: the part after a `net:` prefix, then cut with an ellipsis."""
    s = name.split(":", 1)[1] if ":" in name and not name.startswith("mb") else name
    return s if len(s) <= limit else s[: max(1, limit - 1)] + "…"


@dataclass
class Baseline:
    label: str
    rows: list
    # path -> list of (coordinate, Cell); a coordinate is an x value (line), (i, j) (grid) or a layer index (batch)
    series: dict = field(default_factory=dict)


class SweepData:
    """What a sweep has produced so far, keyed for charts. Pure Python: no Qt here.

    mode "line" (one varied field), "grid" (two) or "batch" (one point per layer). `version` grows on every
    change, so a timer-driven view redraws only when something arrived.
    """

    def __init__(self):
        self.clear()
        self.baselines: list[Baseline] = []

    def clear(self) -> None:
        self.mode = "line"
        self.fields: tuple = ()
        self.xs: list = []  # first field's values (line, grid) in sweep order
        self.ys: list = []  # second field's values (grid)
        self.layers: list[tuple[str, str]] = []  # batch: (short label, full name) per point
        self.coord: dict[int, object] = {}  # point index -> x value | (i, j) | layer index
        self.cells: dict[tuple[int, str], Cell] = {}
        self.paths: list[str] = []
        self.geometric = False
        self._descs: dict[int, str] = {}  # batch: point index -> desc (baselines match on it)
        # path -> {point index: (coordinate, Cell)} of its ok cells, kept as rows arrive: path_cells() is then
        # a copy, not a scan of every cell (charts ask for it several times a redraw)
        self._ok: dict[str, dict[int, tuple]] = {}
        self.skipped: dict[int, tuple] = {}  # point index -> (coordinate, Cell) of points that did not run
        self.version = getattr(self, "version", 0) + 1

    # ---- shape ----------------------------------------------------------------------------------------
    def configure(self, points, mode: str | None = None, paths=(), geometric: bool = False) -> None:
        """A new sweep (or batch): its points fix the axes before any row arrives."""
        self.clear()
        self.paths = ordered(paths)
        self.geometric = geometric
        if mode is None:
            mode = "batch" if (points and not points[0].values) else ("grid" if len(points[0].values) > 1 else "line")
        self.mode = mode
        if mode == "batch":
            for p in points:
                full = (p.spec.name or p.spec.desc) if p.spec is not None else (p.text or f"line {p.line}")
                self.layers.append((short_name(full), full))
                self.coord[p.index] = p.index
                self._descs[p.index] = p.spec.desc if p.spec is not None else (p.text or "")
        else:
            self.fields = tuple(points[0].values)
            self.xs, self.ys = grid_shape(points)
            xi = {v: i for i, v in enumerate(self.xs)}
            yi = {v: i for i, v in enumerate(self.ys)}
            for p in points:
                vals = list(p.values.values())
                self.coord[p.index] = vals[0] if mode == "line" else (xi[vals[0]], yi[vals[1]])
        for b in self.baselines:
            self._place_baseline(b)
        self.version += 1

    def configure_from_rows(self, rows) -> None:
        """No sweep yet: take the shape of a saved CSV (its `vary` column, or its rows as layers)."""
        from explorer.core.problem.sweep_plan import SweepPoint

        labels = [parse_label(r.get("vary") or "") for r in rows]
        if labels and all(len(v) == 1 for v in labels) and len({tuple(v) for v in labels}) == 1:
            pts, seen = [], {}
            for v in labels:
                key = tuple(v.items())
                if key not in seen:
                    seen[key] = len(pts)
                    pts.append(SweepPoint(len(pts), dict(v)))
            self.configure(pts, "line", paths=[r.get("path") for r in rows if r.get("path")])
        else:
            from explorer.core.problem.spec import parse_descriptor

            pts, seen = [], set()
            for r in rows:
                d = r.get("desc") or ""
                if d in seen:
                    continue
                seen.add(d)
                try:
                    spec = parse_descriptor(d)
                    if r.get("name"):
                        spec = spec.replace(name=r["name"])
                except Exception:  # noqa: BLE001 - a foreign desc still gets a bar group by its text
                    spec = None
                pts.append(SweepPoint(len(pts), {}, spec, text=d))
            self.configure(pts, "batch", paths=[r.get("path") for r in rows if r.get("path")])

    @property
    def configured(self) -> bool:
        return bool(self.coord)

    @property
    def x_field(self) -> str:
        return self.fields[0] if self.fields else ""

    @property
    def categorical_x(self) -> bool:
        return self.mode == "line" and any(isinstance(x, str) for x in self.xs)

    # ---- rows -----------------------------------------------------------------------------------------
    def add(self, point_index: int, r) -> Cell | None:
        """A finished Result (or skipped row dict) of point `point_index`."""
        c = cell_of(r)
        if not c.path:  # a skipped point has no path: the line chart marks its x with the reason
            if point_index in self.coord:
                self.skipped[point_index] = (self.coord[point_index], c)
            self.version += 1
            return None
        if c.path not in self.paths:
            self.paths = ordered(self.paths + [c.path])
        key = (point_index, c.path)
        ok = self._ok.setdefault(c.path, {})
        if key in self.cells:  # a replaced row keeps its place, as in `cells`
            if c.ok and point_index in self.coord:
                if point_index in ok:
                    ok[point_index] = (self.coord[point_index], c)
                else:  # it was not ok before: rebuild this path's order from `cells`
                    self.cells[key] = c
                    self._reindex(c.path)
            else:
                ok.pop(point_index, None)
        elif c.ok and point_index in self.coord:
            ok[point_index] = (self.coord[point_index], c)
        self.cells[key] = c
        self.version += 1
        return c

    def _reindex(self, path: str) -> None:
        self._ok[path] = {idx: (self.coord[idx], c) for (idx, p), c in self.cells.items()
                          if p == path and c.ok and idx in self.coord}

    def path_cells(self, path: str) -> list[tuple[object, Cell]]:
        """(coordinate, Cell) of every ok cell of `path`, in the order the rows arrived."""
        return list(self._ok.get(path, {}).values())

    def ok_count(self, path: str | None = None) -> int:
        return sum(1 for (_, p), c in self.cells.items() if c.ok and (path is None or p == path))

    # ---- baselines --------------------------------------------------------------------------------------
    def add_baseline(self, rows, label: str) -> Baseline:
        rows = [result_row(r) for r in rows]
        b = Baseline(label, rows)
        self.baselines.append(b)
        if not self.configured and rows:
            self.configure_from_rows(rows)  # places every baseline
        else:
            self._place_baseline(b)
        self.version += 1
        return b

    def clear_baselines(self) -> None:
        self.baselines = []
        self.version += 1

    def _place_baseline(self, b: Baseline) -> None:
        b.series = {}
        if self.mode == "batch":
            by_desc: dict[str, list[int]] = {}
            for i, (_, full) in enumerate(self.layers):
                by_desc.setdefault(full, []).append(i)
            # match on desc (a CSV row's desc is the descriptor without the name) or on the name
            descs = {}
            for idx in self.coord:
                descs.setdefault(self._descs.get(idx, ""), []).append(idx)
            used: dict[tuple, int] = {}
            for r in b.rows:
                c = cell_of(r)
                if not c.ok:
                    continue
                cands = descs.get(c.desc) or by_desc.get(c.name) or []
                k = used.get((c.desc, c.path), 0)
                if k < len(cands):
                    used[(c.desc, c.path)] = k + 1
                    b.series.setdefault(c.path, []).append((cands[k], c))
            return
        for r in b.rows:
            c = cell_of(r)
            if not c.ok:
                continue
            vals = parse_label(c.vary)
            if any(f not in vals for f in self.fields):
                continue
            if self.mode == "line":
                x = vals[self.fields[0]]
                if self.categorical_x and x not in self.xs:
                    continue
                b.series.setdefault(c.path, []).append((x, c))
            # a grid has no overlay: the heatmap draws one value per cell

