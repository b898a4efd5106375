"""The results table: one row per finished (spec, path), sortable through a QSortFilterProxyModel."""

from __future__ import annotations

import math

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from explorer.core.paths.base import PATH_HELP
from explorer.gui.common.colors import qcolor

SORT_ROLE = Qt.UserRole + 1
RESULT_ROLE = Qt.UserRole + 2


def _bytes(v) -> str:
    if v is None:
        return ""
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if v >= div:
            return f"{v / div:.1f} {unit}"
    return f"{v} B"


def _num(v, fmt="{:.4g}") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return fmt.format(v)


def _gflops(v) -> str:
    """Three significant digits, never "0.0" for a tiny problem: 0.00164, 2.73, 142."""
    return _num(v, "{:.3g}" if v is not None and abs(v) < 1000 else "{:.0f}")


def _speed(v) -> str:
    return _num(v, "{:.2f}x" if v is None or v >= 0.095 else "{:.2g}x")


def _stored(r) -> str:
    vals = (r.input_bytes, r.weight_bytes, r.output_bytes)
    return "" if all(v is None for v in vals) else " / ".join(_bytes(v) or "-" for v in vals)


def _kernel(r) -> str:
    if not r.conv_impl:
        return ""
    n = r.reorder_count
    return r.conv_impl + ("" if n is None else f" · {n} reorder{'s' if n != 1 else ''}")


def _verified(r) -> str:
    if getattr(r, "verify_median_ms", None) is None:
        return getattr(r, "verify_note", "")  # why there is no figure ("" before a check)
    if r.verify_note:
        return r.verify_note  # "not reproduced in a fresh script: the row ..., the script ..."
    return f"{r.verify_median_ms:.4g} ms · {r.verify_ratio:.2f}x"


# (header, tooltip, value(result, model) -> sort value, text(value) -> str); the most useful columns first
# (what a narrow table shows without scrolling: path, status, median, speed, GFLOP/s); the bytes, kernel and
# reorders are one column each, and a row's tooltip has every figure.
COLUMNS = [
    ("path", "Execution path (hover a path for what it does).", lambda r, m: r.path, str),
    ("status", "ok, noisy (another program disturbed the timing: the figure and its ratios are uncertain), "
               "unsupported (torch refuses this path) or error.",
     lambda r, m: "noisy" if (r.status == "ok" and getattr(r, "quality", "") == "noisy") else r.status, str),
    ("median ms", "Median time per call in milliseconds (for a path that did not run: torch's reason).",
     lambda r, m: r.median_ms, _num),
    ("vs baseline", "Speed relative to the baseline path chosen above the summary chart (>1 is faster).",
     lambda r, m: m.speedup(r), _speed),
    ("GFLOP/s", "benchdnn op count divided by the median time.", lambda r, m: r.gflops, _gflops),
    ("IQR ms", "Interquartile range of the per-call times (p75 - p25).", lambda r, m: r.iqr_ms, _num),
    ("% peak", "GFLOP/s as a share of this machine's matmul peak at the row's thread count (blank until "
     "measured; ⚠ above 100%: the peak is too low, measure it again).",
     lambda r, m: m.pct_peak(r), lambda v: _num(v, "{:.1f}%") + (" ⚠" if v is not None and v > 100 else "")),
    ("stored in / wei / out", "Bytes the path stores for the input, weight and output (blocked padding included).",
     lambda r, m: sum(v or 0 for v in (r.input_bytes, r.weight_bytes, r.output_bytes)) or None, lambda v: v),
    ("kernel", "oneDNN implementation of the convolution and the reorders in one traced call (blank: not oneDNN).",
     lambda r, m: r.conv_impl or None, lambda v: v),
    ("src / wei / dst", "oneDNN format tags the kernel used.",
     lambda r, m: " / ".join(t or "-" for t in (r.src_tag, r.wei_tag, r.dst_tag)) if r.conv_impl else "", str),
    ("min ms", "Fastest single call.", lambda r, m: r.min_ms, _num),
    ("samples", "Timed calls after one warm-up.", lambda r, m: r.samples or None, lambda v: "" if v is None else str(v)),
    ("max err", "Largest absolute difference from PyTorch's own f32 kernels.", lambda r, m: r.max_abs_err,
     lambda v: _num(v, "{:.1e}")),
    ("fresh script", "The row checked in a fresh script (Run tab: Check in a fresh script; CLI: run --verify): the "
     "standalone torch.utils.benchmark script's median and row/script; beyond ±10%: not reproduced.",
     lambda r, m: getattr(r, "verify_ratio", None), lambda v: v),
    ("dtype", "Data type (an int8 config such as u8s8u8: source, weights, destination).",
     lambda r, m: r.spec.dtype, str),
    ("dir", "benchdnn's --dir: FWD_B/FWD_D time the forward conv; BWD_D, BWD_W, BWD_WB only its gradients.",
     lambda r, m: r.spec.direction, str),
    ("post-ops", "benchdnn's --attr-post-ops the row ran after the conv (blank: the plain conv); a fused path "
     "runs them inside the conv, an eager one as separate ops.", lambda r, m: r.spec.post_ops, str),
    ("io tag", "benchdnn's --stag/--dtag: axb is channels-last input and output, abx plain NCHW (blank: the "
     "path's own layout).", lambda r, m: r.spec.io_tag, str),
    ("threads", "torch threads during the run.", lambda r, m: r.threads, str),
    ("spec", "benchdnn descriptor of the problem.", lambda r, m: r.spec.descriptor(), str),
    ("error", "torch's reason when the path did not run.", lambda r, m: r.error, str),
]
HEADERS = [c[0] for c in COLUMNS]
TEXT_COLUMNS = {"path", "status", "kernel", "src / wei / dst", "dtype", "dir", "post-ops", "io tag", "spec", "error"}
# Columns whose text is not their sort value: the text comes from the whole result.
_TEXT_OF = {"stored in / wei / out": _stored, "kernel": _kernel, "fresh script": _verified}
REASON_COLUMN = HEADERS.index("median ms")  # where a row that did not run shows torch's reason


class ResultsModel(QAbstractTableModel):
    """The Run table over a list of Results it does not own: `bind(rows)` shows the session's own list (the
    window's SessionState.results) and `shown()` tells it rows were added or replaced there; a model without
    a bound list keeps its own (add / set_results). % of peak reads a Peaks object (core.session.state), the
    session's when `set_peaks(peaks)` gave it: one peak for every view, no copy."""

    def __init__(self, parent=None, rows: list | None = None, peaks=None):
        super().__init__(parent)
        from explorer.core.session.state import Peaks

        self._rows: list = rows if rows is not None else []
        self._n = len(self._rows)  # rows shown: the view learns of each new one through begin/endInsertRows
        self.baseline = "dense"
        self.theme = "light"
        self.peaks = peaks if peaks is not None else Peaks()

    @property
    def _results(self) -> list:
        return self._rows if len(self._rows) == self._n else self._rows[: self._n]

    # ---- data ------------------------------------------------------------------------------------
    @property
    def results(self) -> list:
        return list(self._results)

    def bind(self, rows: list) -> None:
        """Show this list (the session's rows, changed in place by the session); see shown()."""
        self.beginResetModel()
        self._rows, self._n = rows, len(rows)
        self.endResetModel()

    def shown(self) -> None:
        """Rows were appended to the bound list: the table inserts them."""
        n = len(self._rows)
        if n > self._n:
            self.beginInsertRows(QModelIndex(), self._n, n - 1)
            self._n = n
            self.endInsertRows()
            self._refresh_derived()
        elif n < self._n:
            self.reshow()

    def reshow(self) -> None:
        """The bound list was replaced in place: the table shows it afresh."""
        self.beginResetModel()
        self._n = len(self._rows)
        self.endResetModel()

    def add(self, result) -> None:
        self._rows.append(result)
        self.shown()

    def set_results(self, results) -> None:
        self._rows[:] = list(results)
        self.reshow()

    def clear(self) -> None:
        self.set_results([])

    def result(self, row: int):
        return self._results[row] if 0 <= row < self._n else None

    def set_baseline(self, path: str) -> None:
        self.baseline = path
        self._refresh_derived()

    def set_peaks(self, peaks=None) -> None:
        """Judge % of peak against this Peaks object (kept, not copied); None: the one held changed."""
        if peaks is not None:
            self.peaks = peaks
        self._refresh_derived()

    def set_theme(self, name: str) -> None:
        """The status colours in this theme (every cell repainted; no layout change, so no proxy upset)."""
        self.theme = name
        if self._results:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._results) - 1, len(COLUMNS) - 1))

    def changed(self, result) -> None:
        """One shown row's figures changed in place (its fresh-script check): its cells repaint."""
        for i, r in enumerate(self._results):
            if r is result:
                self.dataChanged.emit(self.index(i, 0), self.index(i, len(COLUMNS) - 1))

    def _refresh_derived(self) -> None:
        if self._results:
            for name in ("vs baseline", "% peak"):
                c = HEADERS.index(name)
                self.dataChanged.emit(self.index(0, c), self.index(len(self._results) - 1, c))

    def speedup(self, r):
        if r.status != "ok" or not r.median_ms:
            return None
        for b in self._results:
            if b.path == self.baseline and b.status == "ok" and b.median_ms and b.spec == r.spec:
                return b.median_ms / r.median_ms
        return None

    def uncertain(self, r) -> bool:
        """A ratio involving r is uncertain when r or its baseline row is noisy."""
        if getattr(r, "quality", "") == "noisy":
            return True
        return any(b.path == self.baseline and b.spec == r.spec and getattr(b, "quality", "") == "noisy"
                   for b in self._results)

    def pct_peak(self, r):
        """% of the peak at the row's threads (else what the measuring process stored with the row)."""
        return self.peaks.pct(r)

    # ---- Qt model API ------------------------------------------------------------------------------
    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else self._n

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation == Qt.Horizontal:
            if role == Qt.DisplayRole:
                return COLUMNS[section][0]
            if role == Qt.ToolTipRole:
                return COLUMNS[section][1]
        elif role == Qt.DisplayRole:
            return str(section + 1)
        return None

    def value(self, row: int, col: int):
        r = self._results[row]
        return COLUMNS[col][2](r, self)

    def text(self, row: int, col: int) -> str:
        r = self._results[row]
        if col == REASON_COLUMN and r.status != "ok" and r.error:
            return r.error
        fn = _TEXT_OF.get(HEADERS[col])
        if fn is not None:
            return fn(r)
        v = self.value(row, col)
        if v is None or v == "":
            return ""
        return COLUMNS[col][3](v)

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        r = self._results[row]
        name = HEADERS[col]
        noisy = getattr(r, "quality", "") == "noisy"
        if role == Qt.DisplayRole:
            text = self.text(row, col)
            if text and noisy and name in ("median ms", "GFLOP/s", "% peak"):
                return "~" + text
            if text and name == "vs baseline" and self.uncertain(r):
                return f"~{text}?"
            return text
        if role == Qt.BackgroundRole and noisy:  # hatched like its bar: this row is no finding
            return QBrush(QColor(230, 160, 40, 70), Qt.BDiagPattern)
        if role == SORT_ROLE:
            v = self.value(row, col)
            if name in TEXT_COLUMNS:
                return "" if v is None else str(v)
            return -math.inf if v is None else float(v)
        if role == RESULT_ROLE:
            return r
        if role == Qt.DecorationRole and name == "path":
            return qcolor(r.path)
        if role == Qt.ForegroundRole and name == "% peak" and (self.pct_peak(r) or 0) > 100:
            from explorer.gui.common.colors import theme

            return QBrush(QColor(theme(self.theme)["error"]))
        if role == Qt.ForegroundRole and name in ("status", "median ms") and r.status != "ok":
            from explorer.gui.common.colors import theme

            return QBrush(QColor(theme(self.theme)["error"]))
        if role == Qt.ForegroundRole and name == "status" and noisy:
            from explorer.gui.common.colors import theme

            return QBrush(QColor(theme(self.theme)["warn"]))  # #d68910 read at 2.8:1 on white
        if role == Qt.FontRole and name == "path":
            f = QFont()
            f.setBold(True)
            return f
        if role == Qt.ToolTipRole:
            if noisy and r.quality_reason and name != "path":
                return f"Noisy: {r.quality_reason}. The figure and every ratio built on it are uncertain."
            if name == "path":  # what the path does, then every figure of the row (no scrolling needed)
                figures = [f"{h}: {self.text(row, c)}" for c, h in enumerate(HEADERS)
                           if c > 0 and self.text(row, c) and h not in ("spec", "error")]
                return PATH_HELP.get(r.path, r.path) + ("\n\n" + "\n".join(figures) if figures else "")
            if name in ("error", "status", "median ms") and r.error and r.status != "ok":
                return r.error
            if name == "% peak" and (self.pct_peak(r) or 0) > 100:
                return (f"{self.pct_peak(r):.1f}% of the measured peak at {r.threads} threads: above 100%, so the "
                        "peak is too low (measured while the machine was busy, or at other threads). "
                        "Run > Measure machine peak measures it again.")
            return self.text(row, col) or None
        if role == Qt.TextAlignmentRole and col == REASON_COLUMN and r.status != "ok":
            return int(Qt.AlignLeft | Qt.AlignVCenter)
        if role == Qt.TextAlignmentRole and name not in TEXT_COLUMNS and name != "fresh script":  # a sentence when not reproduced
            return int(Qt.AlignRight | Qt.AlignVCenter)
        return None


class ResultsProxy(QSortFilterProxyModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setSortRole(SORT_ROLE)
        self.setDynamicSortFilter(True)


def selection_tsv(view) -> str:
    """The selected cells of a table view as tab-separated text with a header row (what Ctrl+C copies)."""
    model = view.model()
    idx = view.selectionModel().selectedIndexes() if view.selectionModel() else []
    if not idx:
        return ""
    rows = sorted({i.row() for i in idx})
    cols = sorted({i.column() for i in idx})
    chosen = {(i.row(), i.column()) for i in idx}
    lines = ["\t".join(str(model.headerData(c, Qt.Horizontal, Qt.DisplayRole)) for c in cols)]
    for r in rows:
        cells = []
        for c in cols:
            v = model.data(model.index(r, c), Qt.DisplayRole) if (r, c) in chosen else ""
            cells.append(str(v or "").replace("\t", " ").replace("\n", " "))
        lines.append("\t".join(cells))
    return "\n".join(lines) + "\n"
