"""Baselines: earlier results CSVs (this machine or another) overlaid on the sweep charts and compared row by row.

Rows are matched on (desc, path, dtype, threads) by core.compare; speedup = A median / B median, the app's one
convention (above 1: B is faster), and "no difference" inside the rows' spread. A CSV that does not read (read_csv's InputError names the line) is reported in a message
box and nothing already loaded is lost.

API:
    BaselineView(parent=None)
    attach(sweep_view)                 overlays go to sweep_view.add_baseline / clear_baselines, and the
                                       "current sweep" side follows sweep_view.results()
    open_csv(path) -> bool             load a CSV as a baseline (False and a message on a bad file)
    add_rows(rows, label)              a baseline from rows already in memory (read_csv dicts or Results)
    clear()                            drop every baseline (and the overlays)
    set_current(rows)                  the rows compared as "current" (Results or dicts)
    set_pair(a_label, b_label)         choose what is compared ("current" is the current rows)
    comparison -> core.compare.Comparison | None;  model: ComparisonModel (QAbstractTableModel)
    signals: baseline_added(list rows, str label), baselines_cleared(), status(str)
"""

from __future__ import annotations

import math
import os

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from explorer.core.errors import ExplorerError
from explorer.core.report.sweep_data import result_row
from explorer.gui.common.colors import qcolor
from explorer.gui.common.doubt import DoubtBanner, approx, hatch_brush, is_noisy

CURRENT = "current results"

COLUMNS = ("match", "name / desc", "vary", "path", "dtype", "threads", "A median ms", "B median ms", "speedup",
           "verdict", "A isa", "B isa")  # the ISA each side ran with (read back from oneDNN): ISAs side by side


def _num(v, fmt="{:.4g}") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return fmt.format(v)


def _may_draw() -> bool:
    from explorer.gui.jobs.measure import may_draw

    return may_draw()


class ComparisonModel(QAbstractTableModel):
    """One row per matched pair (ratio B/A), then the rows only in A, then the rows only in B."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.comparison = None
        self._rows: list[tuple] = []  # (kind, a_row, b_row, speedup, verdict)
        self.theme = "light"

    def set_comparison(self, comp) -> None:
        self.beginResetModel()
        self.comparison = comp
        self._rows = []
        if comp is not None:
            self._rows += [("matched", m.a, m.b, m.speedup, m.verdict) for m in comp.matched]
            self._rows += [("only A", r, None, None, "") for r in comp.only_a]
            self._rows += [("only B", None, r, None, "") for r in comp.only_b]
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation == Qt.Horizontal and role == Qt.DisplayRole:
            return COLUMNS[section]
        if orientation == Qt.Horizontal and role == Qt.ToolTipRole and COLUMNS[section] in ("speedup", "verdict"):
            return ("A median / B median: above 1 means B is faster (as everywhere in the app). 'no difference': "
                    "inside the rows' spread (mean IQR / median), or under 1%.")
        return None

    def row_at(self, i: int) -> tuple:
        return self._rows[i]

    def ratio(self, i: int):
        """The speedup A/B of row i (above 1: B is faster)."""
        return self._rows[i][3]

    def verdict(self, i: int) -> str:
        return self._rows[i][4]

    def kinds(self) -> dict:
        out: dict = {}
        for k, *_ in self._rows:
            out[k] = out.get(k, 0) + 1
        return out

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        kind, a, b, ratio, verdict = self._rows[index.row()]
        from explorer.gui.common.colors import theme

        t = theme(self.theme)
        any_row = a or b or {}
        col = COLUMNS[index.column()]
        if role == Qt.DisplayRole:
            if col == "match":
                return kind
            if col == "name / desc":
                return f"{any_row.get('name')}  {any_row.get('desc')}" if any_row.get("name") else any_row.get("desc")
            if col in ("vary", "path", "dtype", "threads"):
                v = any_row.get(col)
                return "" if v is None else str(v)
            if col in ("A isa", "B isa"):
                side = a if col == "A isa" else b
                return str((side or {}).get("isa") or "")
            # An uncertain pair (a noisy side) carries the app's `~` on its speedup and on the noisy median.
            if col == "A median ms":
                return approx(self._median(a), is_noisy(a))
            if col == "B median ms":
                return approx(self._median(b), is_noisy(b))
            if col == "speedup":
                return approx(_num(ratio, "{:.3f}x"), verdict == "uncertain" or is_noisy(a) or is_noisy(b))
            if col == "verdict":
                return verdict
        if role == Qt.BackgroundRole and kind == "matched" and (is_noisy(a) or is_noisy(b)):
            return hatch_brush()  # hatched as in the Run table: this pair is no finding
        if role == Qt.DecorationRole and col == "path" and any_row.get("path"):
            return qcolor(any_row["path"])
        if role == Qt.ForegroundRole:
            if kind != "matched":
                return QBrush(QColor(t["muted"]))
            if col in ("speedup", "verdict") and ratio is not None:
                return QBrush(QColor(t["good"] if verdict == "B faster" else t["bad"] if verdict == "B slower"
                                     else t["muted"] if verdict == "no difference" else t["fg"]))
        if role == Qt.TextAlignmentRole and col in ("A median ms", "B median ms", "speedup", "threads"):
            return int(Qt.AlignRight | Qt.AlignVCenter)
        if role == Qt.ToolTipRole:
            if col == "name / desc":
                return self.data(index, Qt.DisplayRole)
            parts = []
            for side, r in (("A", a), ("B", b)):
                if r is not None and r.get("status") != "ok":
                    parts.append(f"{side}: {r.get('status')} {r.get('error') or ''}".strip())
                elif is_noisy(r):
                    parts.append(f"{side} is noisy: another program disturbed its timing, so this speedup is "
                                 f"uncertain{': ' + r['quality_reason'] if r.get('quality_reason') else ''}")
            return "\n".join(parts) or None
        return None

    @staticmethod
    def _median(r) -> str:
        if r is None:
            return ""
        if r.get("status") != "ok":
            return r.get("status") or ""
        return _num(r.get("median_ms"))


class BaselineView(QWidget):
    baseline_added = Signal(list, str)
    baselines_cleared = Signal()
    status = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("baselineView")
        self.baselines: dict[str, list[dict]] = {}  # label -> rows (read_csv form)
        self.current: list[dict] = []
        self.comparison = None
        self.sweep_view = None
        self.current_source = None  # callable giving the "current results" rows; default: the sweep view's
        self._dirty = False
        self.last_error = ""

        self.open_button = QPushButton("Open baseline CSV…")
        self.open_button.setToolTip("Results CSV of an earlier run (this machine or another): overlaid dashed on "
                                    "the sweep charts and compared below.")
        self.clear_button = QPushButton("Clear baselines")
        self.keep_button = QPushButton("Keep current as baseline")
        self.keep_button.setToolTip("Snapshot the current results (Run table and sweep) as a baseline, to compare "
                                    "the next run or sweep with.")
        self.a_combo = QComboBox()
        self.b_combo = QComboBox()
        self.b_combo.addItem(CURRENT)
        for c in (self.a_combo, self.b_combo):
            c.setMinimumContentsLength(18)
            c.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        from explorer.gui.common.widgets import FlowLayout

        self.head = QWidget()  # wraps onto a second line in a narrow window
        head = FlowLayout(self.head, 6, 4)
        head.setContentsMargins(0, 0, 0, 0)
        for w in (self.open_button, self.keep_button, self.clear_button, QLabel("A (baseline)"), self.a_combo,
                  QLabel("B"), self.b_combo):
            head.addWidget(w)
        for w in (self.open_button, self.keep_button, self.clear_button, self.a_combo, self.b_combo):
            w.setProperty("flowBreak", True)  # a label stays on the line of its combo
        self.summary = QLabel("Open a results CSV to compare against.")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.model = ComparisonModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        # The answer first: the medians, speedup and verdict right after the path (the model keeps its order);
        # the long name / desc and vary go last, so a 1024 px window shows the answer without scrolling.
        hh = self.table.horizontalHeader()
        for pos, name in enumerate(("match", "path", "A median ms", "B median ms", "speedup", "verdict", "dtype",
                                    "threads")):
            hh.moveSection(hh.visualIndex(COLUMNS.index(name)), pos)
        self.doubt = DoubtBanner()  # the app's one banner for noisy figures
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 4)
        lay.setSpacing(4)
        lay.addWidget(self.head)
        lay.addWidget(self.summary)
        lay.addWidget(self.doubt)
        lay.addWidget(self.table, 1)

        self.timer = QTimer(self)
        self.timer.setInterval(300)
        self.timer.timeout.connect(lambda: self._refresh_if_dirty() if _may_draw() else None)
        self.timer.start()
        self.open_button.clicked.connect(self._open_dialog)
        self.clear_button.clicked.connect(self.clear)
        self.keep_button.clicked.connect(self.keep_current)
        self.a_combo.currentTextChanged.connect(lambda *_: self.refresh())
        self.b_combo.currentTextChanged.connect(lambda *_: self.refresh())

    # ---- wiring ---------------------------------------------------------------------------------------
    def attach(self, sweep_view) -> None:
        """Overlay baselines on `sweep_view` and compare against its rows as they arrive."""
        self.sweep_view = sweep_view
        sweep_view.result_ready.connect(self._mark_dirty)
        sweep_view.finished.connect(lambda *_: self._mark_dirty())
        sweep_view.started.connect(self._mark_dirty)
        for label, rows in self.baselines.items():
            sweep_view.add_baseline(rows, label)
        self._mark_dirty()

    def _mark_dirty(self, *_):
        self._dirty = True

    def _refresh_if_dirty(self) -> None:
        if self._dirty:
            self._dirty = False
            if self.current_source is not None:
                self.set_current(self.current_source())
            elif self.sweep_view is not None:
                self.set_current(self.sweep_view.results())

    # ---- baselines ------------------------------------------------------------------------------------
    def _open_dialog(self) -> None:
        if os.environ.get("MKLDNN_EXPLORER_NO_DIALOGS"):
            return
        path, _ = QFileDialog.getOpenFileName(self, "Open a results CSV as baseline", os.getcwd(),
                                              "CSV files (*.csv);;All files (*)")
        if path:
            self.open_csv(path)

    def open_csv(self, path) -> bool:
        """Load a results CSV as a baseline. A bad file is reported (its line named); nothing loaded is lost."""
        from explorer.core.report.results import read_csv

        try:
            rows = read_csv(path)
        except ExplorerError as e:
            self._error("Cannot open the baseline", str(e))
            return False
        except OSError as e:
            self._error("Cannot open the baseline", f"cannot read {path}: {e.strerror or e}.")
            return False
        if not rows:
            self._error("Empty baseline", f"{path} has a header but no rows.")
            return False
        from explorer.core.report.hosts import hosts_in

        name = os.path.basename(str(path))
        hosts = hosts_in(rows)
        if len(hosts) > 1:  # a cluster run over several hosts: one baseline per host, the first two compared
            labels = [self.add_rows([r for r in rows if r.get("host") == h], f"{name} @ {h}") for h in hosts]
            self.set_pair(labels[0], labels[1])
            return True
        self.add_rows(rows, name)
        return True

    def add_rows(self, rows, label: str) -> str:
        rows = [result_row(r) for r in rows]
        base, n = label, 2
        while label in self.baselines or label == CURRENT:
            label = f"{base} ({n})"
            n += 1
        self.baselines[label] = rows
        self.a_combo.addItem(label)
        self.b_combo.addItem(label)
        self.a_combo.setCurrentText(label)  # a new baseline (Ctrl+B, Keep current) is what is compared against
        if self.sweep_view is not None:
            self.sweep_view.add_baseline(rows, label)
        self.baseline_added.emit(rows, label)
        self.status.emit(f"Baseline {label}: {len(rows)} rows.")
        self.refresh()
        return label

    def clear(self) -> None:
        self.baselines.clear()
        self.a_combo.clear()
        while self.b_combo.count() > 1:
            self.b_combo.removeItem(1)
        if self.sweep_view is not None:
            self.sweep_view.clear_baselines()
        self.baselines_cleared.emit()
        self.refresh()

    def set_current(self, rows) -> None:
        """The rows compared as "current results" (until the attached sweep view reports new rows)."""
        self._dirty = False
        self.current = [result_row(r) for r in rows or []]
        self.refresh()

    def set_pair(self, a_label: str, b_label: str = CURRENT) -> None:
        self.a_combo.setCurrentText(a_label)
        self.b_combo.setCurrentText(b_label)
        self.refresh()

    def _rows_of(self, label: str) -> list[dict]:
        return self.current if label == CURRENT else self.baselines.get(label, [])

    # ---- comparison -------------------------------------------------------------------------------------
    def refresh(self) -> None:
        from explorer.core.report.compare import compare_rows

        a, b = self.a_combo.currentText(), self.b_combo.currentText()
        if not a or a not in self.baselines:
            self.doubt.say("")
            self.comparison = None
            self.model.set_comparison(None)
            self.summary.setText("Open a results CSV to compare against." if not self.baselines else
                                 "Choose the baseline (A).")
            return
        self.comparison = compare_rows(self._rows_of(a), self._rows_of(b), a, b)
        self.model.set_comparison(self.comparison)
        c = self.comparison
        g = c.geomean
        ratios = len(c.speedups)
        if g is None and c.uncertain:
            head = "Every matched pair with both medians has a noisy side: no trusted speedup to average"
        elif g is None:
            head = "No matched pair has both medians yet"
        else:
            head = f"Geometric mean speedup A / B = {g:.3f}x ({c.verdict}) over {ratios} matched pairs"
        self.summary.setText(
            f"{head} · {len(c.matched)} matched on desc, path, dtype and threads · {len(c.only_a)} only in A "
            f"({a}) · {len(c.only_b)} only in B ({b}). Speedup = A median / B median: above 1, B is faster "
            f"(as in the Run table and the sweep charts); inside the rows' spread it is 'no difference'.")
        n_unsure = c.uncertain
        self.doubt.say(f"⚠ {n_unsure} matched pair{'s' if n_unsure != 1 else ''} {'have' if n_unsure != 1 else 'has'} "
                       "a noisy side (hatched, ~): another program disturbed the timing, so their speedups are "
                       "uncertain and left out of the geometric mean; measure again on a quieter machine."
                       if n_unsure else "")
        if self.model.rowCount():
            self._fit_columns()

    def _fit_columns(self) -> None:
        """Columns as wide as their contents (the name/desc column capped, its tooltip... the full text)."""
        self.table.resizeColumnsToContents()
        c = COLUMNS.index("name / desc")
        self.table.setColumnWidth(c, min(self.table.columnWidth(c), 240))
        c = COLUMNS.index("vary")
        self.table.setColumnWidth(c, min(self.table.columnWidth(c), 160))

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        self._fit_head()

    def showEvent(self, ev) -> None:
        super().showEvent(ev)
        self._fit_head()

    def _fit_head(self) -> None:
        """The wrapped controls' height for this width (a resize while the tab was hidden left it stale)."""
        lay = self.head.layout()
        w = self.width() - 12
        if lay is not None and w > 0:
            self.head.setMinimumHeight(lay.heightForWidth(w))

    def keep_current(self) -> str | None:
        """The current results (Run table and sweep) as a new baseline, labelled with the time."""
        import time

        rows = self.current_source() if self.current_source is not None else (
            self.sweep_view.results() if self.sweep_view is not None else self.current)
        if not rows:
            self.status.emit("No current results to keep yet: run or sweep first.")
            return None
        return self.add_rows(rows, f"results {time.strftime('%H:%M:%S')}")

    def set_theme(self, name: str) -> None:
        self.model.theme = name
        n = self.model.rowCount()
        if n:  # the verdict colours in this theme
            self.model.dataChanged.emit(self.model.index(0, 0), self.model.index(n - 1, len(COLUMNS) - 1))

    def _error(self, title: str, message: str) -> None:
        self.last_error = message
        self.status.emit(message)
        self.refresh()  # what was loaded stays; the error goes on top of its summary
        self.summary.setText(f"{message}\n{self.summary.text()}")
        if os.environ.get("MKLDNN_EXPLORER_NO_DIALOGS"):
            return
        QMessageBox.warning(self, title, message)
