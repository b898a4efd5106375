"""The Sweep tab: vary one or two fields of the current problem (or run a batch file) over the selected paths.

The main window owns the parameters; it calls `set_base(spec)` and `set_options(opts)` whenever they change.
Everything torch does runs in sweep_worker's QThread; rows arrive in coalesced batches (already written to
the CSV sink), go into a SweepData, and the charts redraw from it on a ~20 Hz timer, never per event.

API (for the main window):
    SweepView(parent=None)
    set_base(spec: ConvSpec | str)         the problem a sweep varies (a descriptor string is parsed)
    set_options(opts: RunOptions)          paths, threads, budget ... of every point
    set_csv_sink(path | None)              each finished row is written there (atomic rewrite) before it is shown
    set_batch(name_or_path | None) -> bool  run a batch file (shipped bare name or path) instead of the fields
    set_vary(field, values, field2=None, values2="")  fill the vary controls (as typed by a user)
    run() -> bool, stop(), is_running(), shutdown(timeout_ms=5000) -> bool
    results() -> list                      every finished row so far: Result objects, or CSV row dicts for
                                           batch lines that did not parse (they have no spec)
    add_baseline(rows, label), clear_baselines()   dashed overlays (rows: read_csv dicts or Results)
    export_chart(path, which="main"|"speedup") -> bool   PNG or SVG by suffix
    export_csv(path) -> bool               every row of the last sweep or batch, the CLI's CSV schema
    session_state() -> dict | None, restore_state(d)   the last sweep (setup, points, rows) for a session file
    cluster_edit                           the Cluster field: the session's sweep.cluster ("" = this machine)
    session, data                          the SessionState the rows live in (SweepView(bridge=...) shares the
                                           window's; alone it makes its own), and its sweep's SweepData
    signals: started(), finished(bool cancelled), result_ready(Result), status(str),
             baseline_requested(list rows, str label)   "Use as baseline": the main window's Compare tab takes them
"""

from __future__ import annotations

import html
import os
import time

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from explorer.core.errors import ExplorerError, InputError
from explorer.core.fleet.cluster import WORKER_HINT, missing_dask
from explorer.core.paths.base import PATHS
from explorer.core.problem.sweep_plan import VARY_FIELDS, parse_vary, plan_sweep
from explorer.core.report.sweep_data import SweepData, count_text  # counts.count_text, the one rule
from explorer.core.session.state import SweepBegun, SweepMissing, SweepRows
from explorer.gui.charts.bar_chart import BarChart
from explorer.gui.charts.chart_axes import LOG_FIELDS
from explorer.gui.charts.heatmap_chart import HeatmapChart
from explorer.gui.charts.line_charts import LineChart, SpeedupChart
from explorer.gui.common.colors import path_color, qcolor, theme
from explorer.gui.common.doubt import DoubtBanner, banner_text
from explorer.gui.common.export import export_plot
from explorer.gui.common.inputs import ask_save_path
from explorer.gui.common.widgets import FlowLayout
from explorer.gui.jobs.sweep_worker import SweepController

# The fields offered in the combos (the spec fields a user sweeps, then dtype, threads and the ISA cap: one
# measuring process per ISA, the ISAs side by side as categories).
FIELDS = ("mb", "g", "ic", "oc", "ih", "iw", "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw", "id", "kd", "sd", "pd", "dd",
          "dtype", "threads", "isa")
FIELDS = tuple(f for f in FIELDS if f in VARY_FIELDS)
NO_FIELD = "—"
NO_BATCH = "(vary the fields)"
REDRAW_MS = 50
CLUSTER_TIP = ("Measure the sweep on the workers of the Dask scheduler at this address (e.g. tcp://10.0.0.5:8786): "
               f"each point a task, one at a time per worker (a worker per machine: {WORKER_HINT}); rows get the "
               "host that measured them. Empty: this machine.")
_W_OF_H = {"ih": "iw", "kh": "kw", "sh": "sw", "ph": "pw", "dh": "dw"}
def _bad_style(name: str) -> str:
    t = theme(name)
    return f"QLineEdit {{ border: 1px solid {t['error']}; background: {t['bad_bg']}; color: {t['fg']}; }}"


def _given_of(spec) -> set[str]:
    """w-values that differ from their h-values stay fixed when the h-value is swept (square stays square)."""
    return {w for h, w in _W_OF_H.items() if getattr(spec, h) != getattr(spec, w)}


def _eta(s: float | None) -> str:
    if s is None:
        return ""
    s = max(0.0, s)
    if s < 90:
        return f"about {s:.0f} s left"
    if s < 5400:
        return f"about {s / 60:.0f} min left"
    return f"about {s / 3600:.1f} h left"


class SweepView(QWidget):
    started = Signal()
    finished = Signal(bool)  # True when stopped by the user
    result_ready = Signal(object)  # explorer.core.report.results.Result, one per finished row
    status = Signal(str)
    baseline_requested = Signal(list, str)

    def __init__(self, parent=None, bridge=None):
        super().__init__(parent)
        self.setObjectName("sweepView")
        from explorer.core.jobs.options import RunOptions
        from explorer.gui.common.session_bridge import SessionBridge

        # The rows, points and setup of the last sweep live in the session model, once; this view draws them.
        self.bridge = bridge if bridge is not None else SessionBridge(parent=self)
        self.session = self.bridge.session
        self.bridge.sweep_changed.connect(self._on_session_sweep)

        self._theme = "light"
        self.base = None
        self.opts = RunOptions()
        self.csv_path: str | None = None
        self.batch = None  # core.batch.Batch when a batch is selected
        self.points: list = []  # the planned points (valid input) or []
        self.error = ""  # the current input problem ('' when Run is possible)
        self._drawn = -1
        self._last_status = ""
        self.controller = SweepController(self)
        self.controller.on_boundary = lambda: self._redraw()
        self.controller.sweep_started.connect(self._on_sweep_started)
        self.controller.rows_ready.connect(self._on_rows)
        self.controller.progress.connect(self._on_progress)
        self.controller.live.connect(self._on_live)
        self.controller.failed.connect(self._on_failed)
        self.controller.finished.connect(self._on_finished)

        # ---- vary controls -----------------------------------------------------------------------------
        self.field1 = QComboBox()
        self.field1.addItems(FIELDS)
        self.field1.setCurrentText("g")
        self.values1 = QLineEdit("divisors")
        self.field2 = QComboBox()
        self.field2.addItems((NO_FIELD,) + FIELDS)
        self.values2 = QLineEdit("")
        tip = ("Values: a list 1,2,4,8 · a geometric range 1:64:x2 · an arithmetic range 16:256:+16 · "
               "divisors (g only: every g dividing ic and oc) · dtype: f32,bf16 · isa: sse41,avx2")
        for w in (self.values1, self.values2):
            w.setToolTip(tip)
            w.setPlaceholderText("1,2,4 or 1:64:x2 or 16:256:+16")
            w.setMinimumWidth(120)
        self.field1.setToolTip("The field to vary (the x axis).")
        self.field2.setToolTip("An optional second field: the full grid of both, drawn as a heatmap.")
        self.batch_combo = QComboBox()
        self.batch_combo.addItem(NO_BATCH)
        from explorer.core.problem.batch import shipped_batches

        for name in shipped_batches():
            self.batch_combo.addItem(name, name)
        self.batch_combo.setToolTip("Run a benchdnn batch file (one problem per line) instead of varying fields.")
        self.batch_button = QPushButton("Batch file…")
        self.batch_button.setToolTip("Open a benchdnn conv batch file.")
        self.run_button = QPushButton("Run sweep")
        self.run_button.setDefault(True)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setEnabled(False)
        self.stop_button.setToolTip("Stop after the current call; every finished row is kept.")
        self.export_button = QPushButton("Export CSV…")
        self.export_button.setToolTip("Write every row of the last sweep or batch as CSV (the CLI's schema).")
        self.export_button.setEnabled(False)
        self.baseline_button = QPushButton("Use as baseline")
        self.baseline_button.setToolTip("Keep these rows as a Compare baseline (and dashed overlay on the next sweep).")
        self.baseline_button.setEnabled(False)
        # Where the sweep runs (the session holds the address): empty for this machine, else a Dask scheduler.
        self.cluster_edit = QLineEdit(self.session.sweep.cluster)
        self.cluster_edit.setPlaceholderText("this machine")
        self._no_dask = missing_dask("The Cluster field")
        self.cluster_edit.setToolTip(self._no_dask or CLUSTER_TIP)
        self._waiting = None  # a cluster sweep's setup until the cluster answers (a refusal leaves the last sweep)

        # The controls wrap onto a second line in a narrow window (never a horizontal scroll bar); each
        # group (a label with its inputs) stays on one line.
        self.controls = QWidget()
        row1 = FlowLayout(self.controls, 6, 4)
        row1.setContentsMargins(0, 0, 0, 0)

        def group(*widgets):
            for w in widgets:
                row1.addWidget(w)
            widgets[-1].setProperty("flowBreak", True)

        for w in (self.values1, self.values2, self.cluster_edit):
            w.setFixedWidth(170)
        group(QLabel("Vary"), self.field1, self.values1)
        group(QLabel("and"), self.field2, self.values2)
        group(QLabel("or batch"), self.batch_combo, self.batch_button)
        group(QLabel("Cluster"), self.cluster_edit)
        group(self.run_button, self.stop_button)
        group(self.export_button, self.baseline_button)

        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.doubt = DoubtBanner()  # the app's one banner: how many points are noisy, why, what helps

        # ---- chart controls ----------------------------------------------------------------------------
        self.metric_combo = QComboBox()
        self.metric_combo.addItem("median time", "median_ms")
        self.metric_combo.addItem("GFLOP/s", "gflops")
        self.log_x = QCheckBox("log x")
        self.log_y = QCheckBox("log y")
        self.baseline_combo = QComboBox()
        for p in PATHS:
            self.baseline_combo.addItem(p)
            self.baseline_combo.setItemData(self.baseline_combo.count() - 1, qcolor(p), Qt.DecorationRole)
        self.baseline_combo.setToolTip("Speedups are this path's median / each path's median (>1: faster).")
        self.heat_combo = QComboBox()
        self.heat_combo.addItem("fastest path", "fastest")
        self.heat_combo.addItem("speedup of", "speedup")
        self.heat_path = QComboBox()
        for p in PATHS:
            self.heat_path.addItem(p)
            self.heat_path.setItemData(self.heat_path.count() - 1, qcolor(p), Qt.DecorationRole)
        self.heat_path.setCurrentText("mkldnn")
        self.heat_label = QLabel("Heatmap:")
        # The chart controls wrap too (at 1024 px the heatmap's combos pushed Export CSV off the tab); each
        # label stays on the line of its combo.
        self.chart_controls = QWidget()
        row2 = FlowLayout(self.chart_controls, 6, 4)
        row2.setContentsMargins(0, 0, 0, 0)
        base_label = QLabel("Baseline path")
        for w in (QLabel("Show"), self.metric_combo, self.log_x, self.log_y, base_label, self.baseline_combo,
                  self.heat_label, self.heat_combo, self.heat_path):
            row2.addWidget(w)
        for w in (self.metric_combo, self.log_x, self.log_y, self.baseline_combo, self.heat_path):
            w.setProperty("flowBreak", True)

        # "Does it help my network?": a batch's total, each layer weighted by its *N count, and the geomean.
        self.total_label = QLabel("")
        self.total_label.setWordWrap(True)
        self.total_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.total_label.setVisible(False)

        # ---- charts --------------------------------------------------------------------------------------
        self.line = LineChart()
        self.heatmap = HeatmapChart()
        self.bars = BarChart()
        self.speedup = SpeedupChart()
        self.stack = QStackedWidget()
        for w in (self.line, self.heatmap, self.bars):
            self.stack.addWidget(w)
        self.split = QSplitter(Qt.Horizontal)
        self.split.addWidget(self.stack)
        self.split.addWidget(self.speedup)
        self.split.setStretchFactor(0, 3)
        self.split.setStretchFactor(1, 2)
        self.split.setSizes([600, 400])

        # ---- progress -------------------------------------------------------------------------------------
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("")
        self.progress.setTextVisible(True)
        self.progress.setMaximumWidth(320)
        self.eta_label = QLabel("")
        self.live_label = QLabel("")
        self.live_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        row3 = QHBoxLayout()
        row3.setContentsMargins(0, 0, 0, 0)
        row3.addWidget(self.live_label, 1)
        row3.addWidget(self.eta_label)
        row3.addWidget(self.progress)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 4)
        lay.setSpacing(4)
        lay.addWidget(self.controls)
        lay.addWidget(self.message)
        lay.addWidget(self.doubt)
        lay.addWidget(self.chart_controls)
        lay.addWidget(self.total_label)
        lay.addWidget(self.split, 1)
        lay.addLayout(row3)

        self.timer = QTimer(self)
        self.timer.setInterval(REDRAW_MS)
        self.timer.timeout.connect(self._tick)
        self.timer.start()

        for w in (self.values1, self.values2):
            w.textChanged.connect(self.validate)
        self.field1.currentTextChanged.connect(self._on_field_changed)
        self.field2.currentTextChanged.connect(self._on_field_changed)
        self.batch_combo.currentIndexChanged.connect(self._on_batch_combo)
        self.batch_button.clicked.connect(self._browse_batch)
        self.run_button.clicked.connect(self.run)
        self.cluster_edit.textChanged.connect(self.session.set_cluster)
        self.controller.cluster_ready.connect(self._on_cluster_ready)
        self.controller.cluster_note.connect(self.live_label.setText)
        self.controller.point_missing.connect(lambda i, why: self.session.apply(SweepMissing(i, why)))
        self.stop_button.clicked.connect(self.stop)
        self.export_button.clicked.connect(self._export_dialog)
        self.baseline_button.clicked.connect(self.request_baseline)
        self.metric_combo.currentIndexChanged.connect(self._on_chart_option)
        self.log_x.toggled.connect(self._on_chart_option)
        self.log_y.toggled.connect(self._on_chart_option)
        self.baseline_combo.currentTextChanged.connect(self._on_chart_option)
        self.heat_combo.currentIndexChanged.connect(self._on_chart_option)
        self.heat_path.currentTextChanged.connect(self._on_chart_option)
        self._on_field_changed()
        self._show_mode("line")

    # ---- the session's sweep ------------------------------------------------------------------------
    @property
    def data(self) -> SweepData:
        """The SweepData of the session's last sweep (one object for the session)."""
        return self.session.sweep.data

    @property
    def _run_setup(self) -> dict:
        return self.session.sweep.setup

    def _on_session_sweep(self, change) -> None:
        if change and change[0] == "restored":
            self._show_restored()
        elif change and change[0] == "cluster":
            if self.cluster_edit.text().strip() != change[1]:
                self.cluster_edit.setText(change[1])
            self.validate()  # the field marked (or not) and the refusal said

    # ---- inputs from the main window -----------------------------------------------------------------
    def set_base(self, spec) -> None:
        """The problem every point starts from (a ConvSpec, or a descriptor string)."""
        if isinstance(spec, str):
            from explorer.core.problem.spec import parse_descriptor

            spec = parse_descriptor(spec)
        self.base = spec
        self.validate()

    def set_options(self, opts) -> None:
        """Run options of every point (paths, threads, budget, ...)."""
        self.opts = opts
        paths = list(getattr(opts, "paths", ()) or ())
        if paths and self.baseline_combo.currentText() not in paths:
            self.baseline_combo.setCurrentText("dense" if "dense" in paths else paths[0])
        if paths and self.heat_path.currentText() not in paths:
            others = [p for p in paths if p != self.baseline_combo.currentText()]
            self.heat_path.setCurrentText((others or paths)[0])
        self.validate()

    def set_csv_sink(self, path) -> None:
        """Write every finished row of the next sweeps to this CSV (None: no file)."""
        self.csv_path = str(path) if path else None

    def set_vary(self, field: str, values: str, field2: str | None = None, values2: str = "") -> None:
        """Fill the vary controls as a user would type them (and select 'vary the fields')."""
        self.batch_combo.setCurrentIndex(0)
        self.field1.setCurrentText(field)
        self.values1.setText(values)
        self.field2.setCurrentText(field2 or NO_FIELD)
        self.values2.setText(values2 if field2 else "")
        self.validate()

    def set_batch(self, name_or_path) -> bool:
        """Select a batch (a shipped bare name or a file path); None goes back to varying fields."""
        if not name_or_path:
            self.batch_combo.setCurrentIndex(0)
            return True
        idx = self.batch_combo.findData(str(name_or_path))
        if idx < 0:
            label = os.path.basename(str(name_or_path))
            self.batch_combo.addItem(label, str(name_or_path))
            self.batch_combo.setItemData(self.batch_combo.count() - 1, str(name_or_path), Qt.ToolTipRole)
            idx = self.batch_combo.count() - 1
        self.batch_combo.setCurrentIndex(idx)
        return self.batch is not None

    # ---- validation -----------------------------------------------------------------------------------
    def _on_field_changed(self, *_):
        two = self.field2.currentText() != NO_FIELD
        self.values2.setEnabled(two and self.batch_combo.currentIndex() == 0)
        self.validate()

    def _on_batch_combo(self, *_):
        batch_mode = self.batch_combo.currentIndex() > 0
        for w in (self.field1, self.values1, self.field2):
            w.setEnabled(not batch_mode)
        self.values2.setEnabled(not batch_mode and self.field2.currentText() != NO_FIELD)
        self.batch = None
        if batch_mode:
            from explorer.core.problem.batch import load_batch

            try:
                self.batch = load_batch(self.batch_combo.currentData())
            except ExplorerError as e:
                self.batch = None
                self._batch_error = str(e)
        self.validate()
        if not self.is_running() and self.data.configured:
            # Another batch (or back to fields): the old bars and names go; the last sweep's rows stay
            # exportable until the next run.
            if self.mode == "batch" and self.points:
                self.data.configure(self.points, "batch", paths=list(getattr(self.opts, "paths", ()) or ()))
            else:
                self.data.clear()
            self._show_mode(self.mode)
            self._redraw(force=True)

    def _browse_batch(self) -> None:
        if os.environ.get("MKLDNN_EXPLORER_NO_DIALOGS"):
            return
        path, _ = QFileDialog.getOpenFileName(self, "Open a benchdnn batch file", os.getcwd(),
                                              "Batch files (*.txt *.batch);;All files (*)")
        if path:
            self.set_batch(path)

    def varies(self) -> list[str]:
        out = [f"{self.field1.currentText()}={self.values1.text().strip()}"]
        if self.field2.currentText() != NO_FIELD:
            out.append(f"{self.field2.currentText()}={self.values2.text().strip()}")
        return out

    def validate(self, *_) -> bool:
        """Check the vary text (or the batch) as typed: mark bad fields red, say why in one sentence, count points."""
        self.points, self.error = [], ""
        bad1 = bad2 = False
        mode = "line"
        try:
            if self.batch_combo.currentIndex() > 0:
                mode = "batch"
                if self.batch is None:
                    raise InputError(getattr(self, "_batch_error", "the batch did not load."), "batch")
                self.points = list(self.batch.points)
            else:
                if self.field2.currentText() == self.field1.currentText():
                    bad2 = True
                    raise InputError(f"the second field is {self.field1.currentText()} again; choose another "
                                     f"field or —.", "vary")
                try:
                    parse_vary(self.varies()[0])
                except InputError:
                    bad1 = True
                    raise
                if len(self.varies()) > 1:
                    mode = "grid"
                    try:
                        parse_vary(self.varies()[1])
                    except InputError:
                        bad2 = True
                        raise
                if self.base is None:
                    raise InputError("no problem to sweep yet: set one in the parameter panel.", "base")
                self.points = plan_sweep(self.base, self.varies(), given=_given_of(self.base))
        except ExplorerError as e:
            self.error = str(e)
            self.points = []
        self.values1.setStyleSheet(_bad_style(self._theme) if bad1 else "")
        self.values2.setStyleSheet(_bad_style(self._theme) if bad2 else "")
        self.cluster_edit.setStyleSheet(_bad_style(self._theme) if self.session.sweep.cluster_error else "")
        self.mode = mode
        self._update_message()
        self._update_buttons()
        return not self.error

    def _update_message(self) -> None:
        t = theme(self._theme)
        if self.error:
            msg = self.error[0].upper() + self.error[1:]
            self.message.setText(msg)
            self.message.setStyleSheet(f"color: {t['error']};")
            return
        refused = self.session.sweep.cluster_error  # the last try to reach the cluster field's address
        if refused:
            self.message.setText(refused[0].upper() + refused[1:])
            self.message.setStyleSheet(f"color: {t['error']};")
            return
        paths = list(getattr(self.opts, "paths", ()) or ())
        n = len(self.points)
        skipped = sum(1 for p in self.points if p.skipped)
        not_honoured = sum(1 for p in self.points if p.refused)  # batch lines whose options are refused
        refused = self._refused(paths)  # the memory guard will refuse these when their turn comes
        runs = (n - skipped - refused) * len(paths)
        budget = float(getattr(self.opts, "budget_ms", 500.0))
        secs = runs * self.session.path_times.per_path_s(budget / 1e3)
        parts = [f"batch {self.batch.source}: {n} problems" if self.mode == "batch" else f"{n} point{'s' if n != 1 else ''}"]
        if skipped - not_honoured:
            parts.append(f"{skipped - not_honoured} {'invalid, recorded' if self.mode != 'batch' else 'will be'} skipped")
        if refused:
            parts.append(f"{refused} too large for the free memory now (the memory guard will skip "
                         f"{'it' if refused == 1 else 'them'})")
        parts.append(f"{len(paths)} path{'s' if len(paths) != 1 else ''} → {runs} runs, {_eta(secs) or 'about 0 s'}"
                     .replace(" left", ""))
        if self.mode == "batch" and self.batch is not None and not_honoured:
            parts.append(f"{not_honoured} refused, not timed: {self.batch.refused_sentence()}")
        self.message.setText(" · ".join(parts))
        self.message.setStyleSheet(f"color: {t['muted']};")

    def _refused(self, paths) -> int:
        """Points the memory guard would refuse now (checked on the first 2,000: a preview, not a promise)."""
        from explorer.core.problem.memory import available_bytes, check_memory

        avail = available_bytes()
        if avail is None or not paths:
            return 0
        n = 0
        for p in self.points[:2000]:
            if p.skipped or p.spec is None:
                continue
            try:
                check_memory(p.spec, paths, avail)
            except ExplorerError:
                n += 1
        return n

    def _update_buttons(self) -> None:
        running = self.is_running()
        self.run_button.setEnabled(not running and not self.error and bool(self.points))
        self.stop_button.setEnabled(running)
        for w in (self.field1, self.values1, self.field2, self.batch_combo, self.batch_button):
            w.setEnabled(not running and (w in (self.batch_combo, self.batch_button) or self.batch_combo.currentIndex() == 0))
        self.values2.setEnabled(not running and self.batch_combo.currentIndex() == 0
                                and self.field2.currentText() != NO_FIELD)
        self.cluster_edit.setEnabled(not running and not self._no_dask)

    @property
    def point_count(self) -> int:
        return len(self.points)

    # ---- running --------------------------------------------------------------------------------------
    def is_running(self) -> bool:
        return self.controller.running

    def run(self) -> bool:
        """Start the sweep (or batch) shown in the controls. False when invalid or already running."""
        if self.is_running() or not self.validate() or not self.points:
            if self.error:
                self._say(self.error)
            return False
        try:
            opts = self.opts.validate()
        except ExplorerError as e:
            self.error = str(e)
            self._update_message()
            self._say(str(e))
            return False
        batch_mode = self.mode == "batch"
        setup = {
            "mode": self.mode, "varies": ";".join(self.varies()) if not batch_mode else "",
            "batch": str(self.batch_combo.currentData() or "") if batch_mode else "",
            "base": self.base.descriptor() if self.base is not None else "",
            "paths": ",".join(opts.paths), "threads": opts.threads, "budget_ms": opts.budget_ms, "trace": opts.trace,
        }
        cluster = self.session.sweep.cluster if not self._no_dask else ""
        sweep = (self.points, self.mode, opts.paths, self.varies() if not batch_mode else [], setup)
        if cluster:  # configured once the cluster answered: a refused address leaves the last sweep as it was
            setup["cluster"], self._waiting = cluster, sweep
        else:
            self._configure(*sweep)
        self.export_button.setEnabled(False)
        self.baseline_button.setEnabled(False)
        self.progress.setRange(0, max(1, len(self.points)))
        self.progress.setValue(0)
        self.progress.setFormat("%v/%m points")
        self.eta_label.setText("")
        self.live_label.setText(f"Connecting to the cluster at {cluster}…" if cluster else "Starting…")
        self.controller.start(self.points, opts, self.csv_path, cluster=cluster)
        self._update_buttons()
        what = f"batch {self.batch.source}" if self.mode == "batch" else " × ".join(self.varies())
        self._say(f"Sweep started: {what}, {len(self.points)} points on {len(opts.paths)} paths.")
        self._redraw(force=True)
        self.started.emit()
        return True

    def _configure(self, points, mode: str, paths, varies, setup: dict | None = None) -> None:
        """A new sweep in the session (its points fix the charts' axes before any row arrives), and this view's
        axes for it."""
        geometric = any(":x" in v.replace(" ", "") or "divisors" in v for v in varies)
        if setup is None:
            setup = {"mode": mode, "varies": ";".join(varies), "paths": ",".join(paths)}
        self.session.apply(SweepBegun(list(points), setup, mode, tuple(paths), geometric))
        self._configure_axes(mode, geometric)

    def _configure_axes(self, mode: str, geometric: bool) -> None:
        x_field = self.data.x_field
        if mode == "line" and not self.data.categorical_x:
            xs = [x for x in self.data.xs if isinstance(x, (int, float))]
            wide = bool(xs) and min(xs) > 0 and max(xs) / min(xs) >= 16
            self.log_x.setChecked(bool(xs) and min(xs) > 0 and (geometric or x_field in LOG_FIELDS and wide or wide))
        self._show_mode(mode)

    def stop(self) -> None:
        """Stop after the current timed call; finished rows are kept (and already on disk)."""
        if self.is_running():
            self.controller.stop()
            self.live_label.setText("Stopping after the current call…")

    def shutdown(self, timeout_ms: int = 5000) -> bool:
        """Stop and join the worker thread (window close). True when no thread is left running."""
        self.timer.stop()
        ok = self.controller.shutdown(timeout_ms)
        self._redraw(force=True)
        return ok

    def results(self) -> list:
        """Every finished row so far: Result objects (CSV row dicts for batch lines that did not parse)."""
        return self.session.sweep.rows()

    # ---- worker signals -------------------------------------------------------------------------------
    def _on_sweep_started(self, ev) -> None:
        pass

    def _on_cluster_ready(self, hosts: dict) -> None:
        """The cluster answered and has measuring workers: the sweep begins in the session, as a local one."""
        self.session.refuse_cluster("")
        if self._waiting is not None:
            self._configure(*self._waiting)
            self._waiting = None
        names = ", ".join(sorted(set(hosts.values())))
        self.live_label.setText(f"On the cluster at {self.session.sweep.cluster}: {len(hosts)} measuring "
                                f"worker{'s' if len(hosts) != 1 else ''} ({names}).")
        self._redraw(force=True)

    def _on_rows(self, rows) -> None:
        self.session.apply(SweepRows([(sr.point_index, sr.result if sr.result is not None else sr.row)
                                      for sr in rows]))
        for sr in rows:
            if sr.result is not None:
                self.result_ready.emit(sr.result)

    def _on_progress(self, p) -> None:
        self.session.apply(p)
        self.progress.setMaximum(max(1, p.total))
        self.progress.setValue(p.done)

    def _on_live(self, s) -> None:
        pct = f" {min(100, 100 * s.elapsed_s / s.budget_s):.0f}%" if s.budget_s else ""
        self.live_label.setText(f"{s.label or 'point ' + str(s.point_index + 1)} · {s.path} "
                                f"({s.path_index + 1}/{s.path_total}){pct}")

    def _on_failed(self, message, field) -> None:
        if field == "cluster":  # nobody answered, or no worker measures: the field is marked, nothing ran
            self.session.refuse_cluster(message)
            self._say(message)
            return
        self.error = message
        self.message.setText(f"Sweep failed: {message}")
        self.message.setStyleSheet(f"color: {theme(self._theme)['error']};")
        self._say(f"Sweep failed: {message}")

    def _on_finished(self, cancelled: bool) -> None:
        from explorer.core.jobs.events import SweepFinished, SweepProgress

        if self._waiting is not None:  # refused (or stopped) before the cluster answered: nothing ran
            self._waiting = None
            self.live_label.setText(self.session.sweep.cluster_error or self.controller.last_error
                                    or "Stopped before the cluster answered; nothing ran.")
            self.validate()
            self.finished.emit(cancelled)
            return
        job = self.session.job
        took = time.monotonic() - job.started_at if job is not None else 0.0
        last = job.sweep if (job is not None and job.sweep is not None) else SweepProgress(0, 0, 0, 0, took, None)
        self.session.apply(SweepFinished(last, cancelled))  # the session learns the paths' overhead from it
        rows = self.results()
        n = len(rows)
        failed = self.controller.last_error  # it ended on an error: never called done
        if failed:  # one that measured nothing gives way to the last sweep (back_to_last)
            back = self.session.sweep.back_to_last()
            msg = f"Sweep failed after {n} finished rows, kept: {failed[0].upper() + failed[1:]}{back}"
            if back:
                self._configure_axes(self.session.sweep.mode, self.session.sweep.geometric)
                rows = self.results()
            self.progress.setFormat("failed at %v/%m")
        elif cancelled:
            msg = f"Sweep stopped: {n} finished rows kept ({took:.1f} s)."
            self.progress.setFormat("stopped at %v/%m")
        else:
            msg = f"Sweep done in {took:.1f} s. {count_text(rows)}."
            self.progress.setValue(self.progress.maximum())
            self.progress.setFormat("done: %m points")
        lost = self.session.sweep.missing
        if lost:  # their tasks failed for good on the cluster: said, never drawn as measured
            msg += (f" {len(lost)} point{'s' if len(lost) != 1 else ''} went missing on the cluster ({lost[0][1]}); "
                    "run the sweep again for them.")
        if self.controller.csv_written:  # never named when it could not be opened
            msg += f" Rows are in {self.controller.csv_written}."
        self.live_label.setText(msg)
        self.eta_label.setText("")
        self.error = ""
        self.validate()
        self._redraw(force=True)
        self._say(msg)
        self.export_button.setEnabled(bool(rows))
        self.baseline_button.setEnabled(bool(rows))
        self.finished.emit(cancelled)

    # ---- saving: CSV, session, baseline -----------------------------------------------------------------
    def export_csv(self, path) -> bool:
        """Every row of the last sweep or batch (skipped points included) as CSV, the CLI's schema."""
        from explorer.core.fleet.hosts import CLUSTER_COLUMNS
        from explorer.core.report.results import CSV_COLUMNS, write_rows

        rows = self.results()  # a cluster sweep's rows keep their host columns
        remote = any(getattr(r, "host", "") or (isinstance(r, dict) and r.get("host")) for r in rows)
        try:
            n = write_rows(path, rows, CLUSTER_COLUMNS if remote else CSV_COLUMNS)
        except (OSError, ValueError) as e:  # ValueError: InputError, a path the output layer refuses
            self._say(f"Cannot write {path}: {getattr(e, 'strerror', None) or e}")
            return False
        self._say(f"Wrote {n} sweep rows to {path}.")
        return True

    def _export_dialog(self) -> None:
        if os.environ.get("MKLDNN_EXPLORER_NO_DIALOGS"):
            return
        path = ask_save_path(self, "Export sweep rows as CSV", os.path.join(os.getcwd(), "sweep.csv"), "CSV files (*.csv)")
        if path:
            self.export_csv(path)

    def baseline_label(self) -> str:
        s = self._run_setup
        what = f"batch {os.path.basename(s.get('batch') or '')}" if s.get("mode") == "batch" else f"sweep {s.get('varies', '')}"
        return f"{what} {time.strftime('%H:%M:%S')}"

    def request_baseline(self) -> None:
        """Offer the last sweep's rows as a Compare baseline (the main window's Compare tab takes them)."""
        rows = self.results()
        if rows:
            self.baseline_requested.emit(rows, self.baseline_label())

    def session_state(self) -> dict | None:
        """The last sweep for a session file: its setup, points and rows (None when nothing ran)."""
        return self.session.sweep.to_store()

    def restore_state(self, state: dict | None) -> None:
        """Show a saved sweep again: the session takes it, and this view follows (see _show_restored)."""
        if not state or self.is_running():
            return
        self.session.set_sweep(state)

    def _show_restored(self) -> None:
        """The session's sweep was restored: the vary controls (or batch), the charts and its rows."""
        sw = self.session.sweep
        setup, mode, varies = sw.setup, sw.mode, sw.varies
        if mode == "batch" and setup.get("batch"):
            self.set_batch(setup["batch"])
        elif varies:
            f1, _, v1 = varies[0].partition("=")
            f2, _, v2 = (varies[1] if len(varies) > 1 else "").partition("=")
            self.set_vary(f1, v1, f2 or None, v2)
        if sw.points:  # set_batch / set_vary may have re-shaped the charts: the saved sweep's shape again
            sw.replace(sw.to_store())
        self._configure_axes(mode, sw.geometric)
        rows = self.results()
        self.export_button.setEnabled(bool(rows))
        self.baseline_button.setEnabled(bool(rows))
        self.live_label.setText(f"Restored {len(rows)} sweep rows from the session.")
        self._redraw(force=True)

    def _say(self, msg: str) -> None:
        self._last_status = msg
        self.status.emit(msg)

    # ---- charts -----------------------------------------------------------------------------------------
    def _show_mode(self, mode: str) -> None:
        self.stack.setCurrentWidget({"line": self.line, "grid": self.heatmap, "batch": self.bars}[mode])
        if mode != "batch":
            self.total_label.setVisible(False)
        self.speedup.setVisible(mode != "grid")
        grid = mode == "grid"
        for w in (self.heat_label, self.heat_combo, self.heat_path):
            w.setVisible(grid)
        self.log_x.setVisible(mode == "line")
        self.metric_combo.setEnabled(mode != "grid")
        self.log_y.setEnabled(mode != "grid")

    def _on_chart_option(self, *_) -> None:
        self.heat_path.setEnabled(self.heat_combo.currentData() == "speedup")
        self._redraw(force=True)

    def _apply_options(self) -> None:
        metric = self.metric_combo.currentData()
        self.line.set_axes(metric, self.log_x.isChecked(), self.log_y.isChecked())
        self.bars.set_axes(metric, log_y=self.log_y.isChecked())
        self.speedup.baseline_path = self.baseline_combo.currentText()
        self.speedup.log_x = self.log_x.isChecked()
        self.heatmap.mode = self.heat_combo.currentData()
        self.heatmap.path = self.heat_path.currentText()
        self.heatmap.baseline_path = self.baseline_combo.currentText()

    def _tick(self) -> None:
        from explorer.gui.jobs.measure import may_draw

        if not may_draw():  # the measuring process is timing a burst: draw at its boundary instead
            return
        self._redraw()
        job = self.session.job
        if self.is_running() and job is not None and job.eta_s is not None:
            self.eta_label.setText(_eta(job.eta_s - (time.monotonic() - job.eta_at)))

    def _redraw(self, force: bool = False) -> None:
        if not force and self._drawn == self.data.version:
            return
        self._drawn = self.data.version
        # rows, as the status bar counts them (count_text): a point has a row per path
        self.doubt.say(banner_text(self.results(), "rows", "crossed on the charts, ~ in the heatmap"))
        self._apply_options()
        mode = self.data.mode if self.data.configured else self.mode
        if mode == "grid":
            self.heatmap.redraw(self.data)
        elif mode == "batch":
            self.bars.redraw(self.data)
            self.speedup.redraw(self.data)
            self._update_total()
        else:
            self.line.redraw(self.data)
            self.speedup.redraw(self.data)

    def batch_summary(self):
        """core.batch.batch_summary of the rows shown (None outside a batch)."""
        from explorer.core.problem.batch import batch_summary

        if self.data.mode != "batch":
            return None
        # The rows are the last job's: a total is theirs only while the batch chosen is the one they were made
        # from (a sweep's rows under a batch not yet run are not that network's total).
        job = self.session.sweep
        if job.mode != "batch" or job.points != self.points:
            return None
        return batch_summary(self.results(), self.baseline_combo.currentText())

    def _update_total(self) -> None:
        summ = self.batch_summary()
        show = summ is not None and bool(summ.totals)
        self.total_label.setVisible(show)
        if not show:
            return
        t = theme(self._theme)
        parts = []
        for pt in summ.totals.values():
            mark = "~" if pt.noisy else ""  # noisy rows are in this sum, as a noisy row's time reads ~
            text = f"<b style='color:{path_color(pt.path)}'>&#9632;</b> {pt.path} <b>{mark}{pt.total_ms:.4g} ms</b>"
            if pt.noisy:
                text += f" ({pt.noisy} noisy)"
            if pt.path == summ.baseline:
                text += " (baseline)"
            elif pt.speedup is not None and pt.same_rows:  # the ratio of the very totals shown: the verdict
                text += f" = <b>{pt.speedup:.2f}x</b> (geomean {pt.geomean:.2f}x)"
            elif pt.speedup is not None or pt.uncertain:  # on fewer rows than the totals: said, never bold
                text += f" <span style='color:{t['muted']}'>[{html.escape(pt.ratio_words(summ.layers))}]</span>"
            if pt.layers < summ.layers:
                text += f" <span style='color:{t['muted']}'>[{pt.layers}/{summ.layers} layers]</span>"
            parts.append(text)
        self.total_label.setText(
            f"Network total, each layer × its *N count ({summ.layers} layers, {summ.instances} in the net; "
            f"speedup = {summ.baseline} / path, above 1 is faster): " + " · ".join(parts))

    def redraw_now(self) -> None:
        """Draw what arrived so far at once (tests and exports; the timer does it otherwise)."""
        self._redraw(force=True)

    def main_chart(self):
        mode = self.data.mode if self.data.configured else self.mode
        return {"line": self.line, "grid": self.heatmap, "batch": self.bars}[mode]

    # ---- baselines ---------------------------------------------------------------------------------------
    def add_baseline(self, rows, label: str) -> None:
        """Overlay earlier rows (read_csv dicts or Results) dashed in the path colours."""
        self.data.add_baseline(rows, label)
        if not self.is_running():
            self._show_mode(self.data.mode)
        self._redraw(force=True)

    def clear_baselines(self) -> None:
        self.data.clear_baselines()
        self._redraw(force=True)

    # ---- export / theme ----------------------------------------------------------------------------------
    def export_chart(self, path: str, which: str = "main") -> bool:
        chart = self.speedup if which == "speedup" else self.main_chart()
        self._redraw(force=True)
        try:
            export_plot(chart, path)
        except Exception as e:  # noqa: BLE001 - reported, never raised into the GUI
            self._say(f"Cannot export the chart to {path}: {e}.")
            return False
        self._say(f"Saved the chart to {path}.")
        return True

    def set_theme(self, name: str) -> None:
        self._theme = name
        for c in (self.line, self.heatmap, self.bars, self.speedup):
            c.set_theme(name)
        if self.error and self.message.text().startswith("Sweep failed"):
            self.message.setStyleSheet(f"color: {theme(name)['error']};")
        else:
            self.validate()  # the summary line and any red field in this theme's colours
        self._redraw(force=True)
