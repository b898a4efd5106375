"""The main window: parameters on the left; live timing and the per-path summary on top; the results table
with the Layouts and Trace views of the selected path below. All torch work runs in worker.RunController's
QThread; this module only draws and routes signals.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QDockWidget,
    QFileDialog,
    QHeaderView,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QScrollArea,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from explorer.core.errors import ExplorerError
from explorer.gui import colors
from explorer.gui.export import export_plot
from explorer.gui.param_panel import ParamPanel
from explorer.gui.results_model import RESULT_ROLE, ResultsModel, ResultsProxy, selection_tsv
from explorer.gui.summary_chart import SummaryChart
from explorer.gui.timing_chart import TimingChart
from explorer.gui.worker import CallWorker, RunController

SETTINGS_VERSION = 1


def _default_threads() -> int:
    """torch's default thread count: what the measuring process uses when the panel says auto."""
    import torch

    return torch.get_num_threads()


class _ElidedLabel(QLabel):
    """A one-line label that ends in … when the window is too narrow for its text."""

    def paintEvent(self, ev) -> None:  # noqa: N802 - Qt API
        from PySide6.QtGui import QPainter
        from PySide6.QtWidgets import QStyle, QStyleOption

        p = QPainter(self)
        opt = QStyleOption()
        opt.initFrom(self)
        self.style().drawPrimitive(QStyle.PE_Widget, opt, p, self)  # the style sheet's background and border
        rect = self.contentsRect().adjusted(6, 0, -6, 0)
        p.drawText(rect, int(Qt.AlignVCenter | Qt.AlignLeft),
                   self.fontMetrics().elidedText(self.text(), Qt.ElideRight, rect.width()))

    def minimumSizeHint(self):  # noqa: N802 - Qt API
        h = super().minimumSizeHint()
        h.setWidth(40)  # never widens the window
        return h


def _placeholder(text: str) -> QWidget:
    w = QWidget()
    lay = QVBoxLayout(w)
    lab = QLabel(text)
    lab.setAlignment(Qt.AlignCenter)
    lab.setWordWrap(True)
    lay.addWidget(lab)
    return w


def _scrolled(w: QWidget) -> QScrollArea:
    """A view inside a scroll area: its minimum size can grow with its content without squeezing the table."""
    area = QScrollArea()
    area.setWidget(w)
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.NoFrame)
    return area


def _make_layout_view():
    from explorer.gui.layout_view import LayoutView  # a broken view fails the window, not silently its tab

    return LayoutView()


def _make_sweep_view():
    from explorer.gui.sweep_view import SweepView  # a broken view fails the window, not silently its tab

    return SweepView()


def _make_trace_view():
    from explorer.gui.trace_view import TraceView  # a broken view fails the window, not silently its tab

    return TraceView()


def _make_model_view():
    from explorer.gui.model_view import ModelView  # a broken view fails the window, not silently its tab

    return ModelView()


class MainWindow(QMainWindow):
    run_finished = Signal(bool)  # True when stopped by the user
    run_failed = Signal(str)

    def __init__(self, settings: QSettings | None = None, csv_path: str | None = None, parent=None):
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.setWindowTitle("MKLDNN Explorer")
        # No dock animations: a relayout (a label's new text) goes through QPropertyAnimations otherwise,
        # seen under Xvfb repainting the window inside the measuring process's bursts.
        self.setAnimated(False)
        self.settings = settings
        self.csv_path = csv_path
        self.theme = "light"
        self.last_error: str | None = None
        self.run_spec = None
        self.run_opts: dict | None = None  # the options the Run table's rows were measured with
        self._run_started = 0.0
        self._progress = {"index": 0, "total": 0, "elapsed": 0.0, "budget": 0.0, "path": ""}
        self._live_path = ""
        self._sized = False
        self._restored_splitters = False

        self.controller = RunController(self)
        self.controller.on_boundary = self._draw_boundary
        self.controller.path_started.connect(self._on_path_started)
        self.controller.samples.connect(self._on_samples)
        self.controller.path_retry.connect(self._on_path_retry)
        self.controller.path_finished.connect(self._on_path_finished)
        self.controller.failed.connect(self._on_failed)
        self.controller.finished.connect(self._on_finished)
        self.peak_worker: CallWorker | None = None
        self.peaks: dict = {}  # threads -> machine.Peak: one peak per (dtype, threads), shared by every view

        # ---- left: parameters ------------------------------------------------------------------------
        self.panel = ParamPanel()
        scroll = QScrollArea()
        scroll.setWidget(self.panel)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        # The panel's preferred width (its fields at their natural size), not its squeezed minimum.
        scroll.setMinimumWidth(self.panel.sizeHint().width() + scroll.verticalScrollBar().sizeHint().width() + 4)
        self.param_dock = QDockWidget("Parameters", self)
        self.param_dock.setObjectName("paramDock")
        dock_body = QWidget()
        dock_lay = QVBoxLayout(dock_body)
        dock_lay.setContentsMargins(0, 0, 0, 0)
        dock_lay.setSpacing(2)
        dock_lay.addWidget(scroll, 1)
        footer = self.panel.detach_footer()  # Run/Stop stay in view however short the window
        footer.layout().setContentsMargins(8, 2, 8 + scroll.verticalScrollBar().sizeHint().width(), 4)
        dock_lay.addWidget(footer)
        self.param_dock.setWidget(dock_body)
        self.param_dock.setFeatures(QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetFloatable)
        self.addDockWidget(Qt.LeftDockWidgetArea, self.param_dock)
        self.panel.run_button.clicked.connect(self.start_run)
        self.panel.stop_button.clicked.connect(self.stop_run)

        # ---- charts ------------------------------------------------------------------------------------
        self.timing = TimingChart()
        self.summary = SummaryChart()
        self.summary.baseline_changed.connect(self._on_baseline)
        self.chart_split = QSplitter(Qt.Horizontal)
        self.chart_split.setObjectName("chartSplit")
        self.chart_split.addWidget(self.timing)
        self.chart_split.addWidget(self.summary)
        self.chart_split.setSizes([560, 440])

        # ---- table ---------------------------------------------------------------------------------------
        self.model = ResultsModel(self)
        self.proxy = ResultsProxy(self)
        self.proxy.setSourceModel(self.model)
        self.table = QTableView()
        self.table.setObjectName("resultsTable")
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(-1, Qt.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.ExtendedSelection)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setTextElideMode(Qt.ElideMiddle)
        self.table.setWordWrap(False)
        self.table.setHorizontalScrollMode(QAbstractItemView.ScrollPerPixel)
        self.table.horizontalHeader().setMinimumSectionSize(36)
        self.table.setToolTip("Click a row to show that path's layouts and trace; Ctrl+C copies the selection.")
        self.table.selectionModel().currentRowChanged.connect(self._on_current_row)
        self.copy_action = QAction("Copy rows as TSV", self.table)
        self.copy_action.setShortcut(QKeySequence.Copy)
        self.copy_action.setShortcutContext(Qt.WidgetWithChildrenShortcut)
        self.copy_action.triggered.connect(self.copy_selection)
        self.table.addAction(self.copy_action)
        self.table.setContextMenuPolicy(Qt.ActionsContextMenu)
        for sig in (self.proxy.layoutChanged, self.proxy.rowsInserted, self.proxy.modelReset):
            sig.connect(self._update_spans)

        # ---- layouts / trace -------------------------------------------------------------------------------
        self.layout_view = _make_layout_view()
        self.trace_view = _make_trace_view()
        self.detail_tabs = QTabWidget()
        self.detail_tabs.setObjectName("detailTabs")
        # Not in a scroll area: the layout view wraps its controls and sizes its panes to the space it gets.
        self.detail_tabs.addTab(self.layout_view or _placeholder("The layout view is not installed."), "Layouts")
        self.detail_tabs.addTab(self.trace_view or _placeholder("The trace view is not installed."), "Trace")
        self.bottom_split = QSplitter(Qt.Horizontal)
        self.bottom_split.setObjectName("bottomSplit")
        self.bottom_split.addWidget(self.table)
        self.bottom_split.addWidget(self.detail_tabs)
        self.bottom_split.setSizes([560, 440])

        # One line above the charts when any row is noisy: why, and what helps.
        self.quality_label = _ElidedLabel("")  # one line: a small window keeps its charts; the tooltip has it all
        self.quality_label.setObjectName("qualityLabel")
        self.quality_label.setStyleSheet("QLabel#qualityLabel { background: rgba(230,160,40,60); border: 1px solid "
                                         "rgba(214,137,16,180); border-radius: 3px; padding: 3px 6px; }")
        self.quality_label.setVisible(False)
        self.charts_box = QWidget()
        box = QVBoxLayout(self.charts_box)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(2)
        box.addWidget(self.quality_label)
        box.addWidget(self.chart_split, 1)
        # Six summary bars stay legible at this height; a splitter state saved in a larger window and
        # restored in a small one would otherwise crush the charts to ~110 px with overlapping labels.
        self.chart_split.setMinimumHeight(self.CHARTS_MIN_H)
        self.main_split = QSplitter(Qt.Vertical)
        self.main_split.setObjectName("mainSplit")
        self.main_split.addWidget(self.charts_box)
        self.main_split.addWidget(self.bottom_split)
        self.main_split.setSizes([430, 400])
        self.main_split.setStretchFactor(0, 1)
        self.main_split.setStretchFactor(1, 1)
        self.chart_split.setStretchFactor(0, 3)
        self.chart_split.setStretchFactor(1, 2)
        self.bottom_split.setStretchFactor(0, 1)
        self.bottom_split.setStretchFactor(1, 1)

        for split in (self.main_split, self.chart_split, self.bottom_split):
            split.splitterMoved.connect(self._user_split)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("mainTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.main_split, "Run")
        self.sweep_view = _make_sweep_view()
        # In a scroll area: the sweep view's minimum size must not widen the window past 1280x800.
        self.tabs.addTab(_scrolled(self.sweep_view or _placeholder("Sweeps (vary one field over a range) will appear here.")),
                         "Sweep")
        if self.sweep_view is not None:
            self.panel.spec_changed.connect(self._sync_sweep)
            self.sweep_view.started.connect(lambda: self._sweep_running(True))
            self.sweep_view.finished.connect(lambda _stopped: self._sweep_running(False))
            self.sweep_view.status.connect(lambda text: self.status_label.setText(text))
            self.sweep_view.baseline_requested.connect(self._sweep_as_baseline)
        # Roofline and Compare: everything measured in this window (runs and sweeps) against the machine's
        # ceilings, and against baseline CSVs from earlier runs or other CPUs.
        from explorer.gui.baseline_view import BaselineView
        from explorer.gui.roofline_view import RooflineView

        self.roofline_view = RooflineView()
        self.baseline_view = BaselineView()
        self.baseline_view.current_source = self.all_results
        if self.sweep_view is not None:
            self.baseline_view.attach(self.sweep_view)
            self.sweep_view.finished.connect(lambda *_: self._refresh_overviews())
        for view in (self.roofline_view, self.baseline_view):
            view.status.connect(lambda text: self.status_label.setText(text))
        # The Roofline's "Measure peak" is the window's: measured in the measuring process, shared by all views.
        self.roofline_view.measure_button.clicked.disconnect()
        self.roofline_view.measure_button.clicked.connect(self.measure_peak)
        self.tabs.addTab(self.roofline_view, "Roofline")
        self.tabs.addTab(self.baseline_view, "Compare")
        self.model_view = _make_model_view()
        if self.model_view is not None:  # the whole-model planner (explorer.gui.model_view)
            # In a scroll area, as the sweep view: its controls must not widen the window past 1280x800.
            self.model_tab = _scrolled(self.model_view)
            self.tabs.addTab(self.model_tab, "Model")
            self.model_view.options_source = lambda: self.panel.run_options()
            self.model_view.open_spec.connect(self.open_layer)
            self.model_view.started.connect(lambda: self._sweep_running(True))
            self.model_view.finished.connect(lambda _stopped: self._sweep_running(False))
            self.model_view.status.connect(lambda text: self.status_label.setText(text))
        self.tabs.currentChanged.connect(lambda *_: self._refresh_overviews())
        self.setCentralWidget(self.tabs)

        # ---- status bar ------------------------------------------------------------------------------------
        self.status_label = QLabel("Ready.")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.progress.setMaximumWidth(260)
        self.progress.setTextVisible(True)
        self.progress.setFormat("")
        self.eta_label = QLabel("")
        self.statusBar().addWidget(self.status_label, 1)
        self.statusBar().addPermanentWidget(self.eta_label)
        self.statusBar().addPermanentWidget(self.progress)
        self.status_timer = QTimer(self)
        self.status_timer.setInterval(200)
        self.status_timer.timeout.connect(self._timed_status)

        self._build_actions()
        self.panel.validity_changed.connect(self._on_validity)
        self.resize(1440, 900)
        self.resizeDocks([self.param_dock], [scroll.minimumWidth()], Qt.Horizontal)
        self._load_peak()

    # ---- actions and menus ---------------------------------------------------------------------------------
    def _action(self, text, slot, shortcut=None, tip=None) -> QAction:
        a = QAction(text, self)
        if shortcut:
            a.setShortcut(QKeySequence(shortcut))
        if tip:
            a.setStatusTip(tip)
            a.setToolTip(tip)
        a.triggered.connect(slot)
        self.addAction(a)
        return a

    def _build_actions(self) -> None:
        mb = self.menuBar()
        f = mb.addMenu("&File")
        self.open_action = self._action("&Open session…", lambda: self.open_session(), "Ctrl+O",
                                        "Open a saved session (spec, options and results).")
        self.save_action = self._action("&Save session…", lambda: self.save_session(), "Ctrl+S",
                                        "Save the spec, options and results as JSON.")
        self.export_action = self._action("&Export CSV…", lambda: self.export_csv(), "Ctrl+E",
                                          "Write the current tab's rows as CSV (the CLI's schema): the Run table, "
                                          "or on the Sweep tab the sweep's rows.")
        self.export_sweep_csv_action = self._action("Export sweep CSV…", lambda: self.export_csv(which="sweep"), None,
                                                    "Write every row of the last sweep or batch as CSV.")
        self.export_timing_action = self._action("Export timing chart…", lambda: self.export_chart("timing"), None,
                                                 "Save the live timing chart as PNG or SVG.")
        self.export_summary_action = self._action("Export summary chart…", lambda: self.export_chart("summary"), None,
                                                  "Save the summary chart as PNG or SVG.")
        self.export_timeline_action = self._action(
            "Export &timeline…", lambda: self.export_timeline(), None,
            "Write every timed call, traced oneDNN primitive and profiled ATen op as Chrome trace-event JSON "
            "(opens in ui.perfetto.dev or chrome://tracing).")
        self.screenshot_action = self._action("Save window screenshot…", lambda: self.save_screenshot(), None,
                                              "Save a PNG of the whole window.")
        self.export_sweep_action = self._action("Export sweep chart…", lambda: self.export_view("sweep chart"), None,
                                                "Save the sweep chart as PNG or SVG.")
        self.export_roofline_action = self._action("Export roofline…", lambda: self.export_view("roofline"), None,
                                                   "Save the roofline chart as PNG or SVG.")
        self.baseline_action = self._action("Open &baseline CSV…", lambda: self.open_baseline(), "Ctrl+B",
                                            "Compare with the results CSV of an earlier run or another machine.")
        quit_action = self._action("&Quit", self.close, "Ctrl+Q")
        for a in (self.open_action, self.save_action, self.baseline_action, None, self.export_action,
                  self.export_timeline_action, self.export_sweep_csv_action, self.export_timing_action,
                  self.export_summary_action, self.export_sweep_action,
                  self.export_roofline_action, self.screenshot_action, None, quit_action):
            f.addSeparator() if a is None else f.addAction(a)
        r = mb.addMenu("&Run")
        self.run_action = self._action("&Run", self.start_run, "Ctrl+R", "Time every selected path.")
        self.stop_action = self._action("&Stop", self.stop_run, "Esc", "Stop after the current call.")
        self.stop_action.setEnabled(False)
        self.peak_action = self._action("Measure machine &peak", self.measure_peak, None,
                                        "Measure this CPU's matmul peak (about 3 s) for the % of peak column.")
        for a in (self.run_action, self.stop_action, None, self.peak_action):
            r.addSeparator() if a is None else r.addAction(a)
        v = mb.addMenu("&View")
        self.dark_action = QAction("&Dark theme", self, checkable=True)
        self.dark_action.toggled.connect(lambda on: self.apply_theme("dark" if on else "light"))
        v.addAction(self.dark_action)
        v.addAction(self.param_dock.toggleViewAction())
        e = mb.addMenu("&Edit")
        e.addAction(self.copy_action)

    # ---- run ---------------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.controller.running

    def start_run(self) -> bool:
        if self.running or (self.peak_worker and self.peak_worker.running) or getattr(self, "_sweeping", False):
            return False
        spec = self.panel.spec
        if spec is None:
            msg = self.panel.error[0] if self.panel.error else "the spec is not valid."
            self.status_label.setText(msg)
            return False
        try:
            opts = self.panel.run_options().validate()
        except ExplorerError as e:
            self.status_label.setText(str(e))
            return False
        self.last_error = None
        self.run_spec = spec
        self.run_opts = {"paths": list(opts.paths), "threads": opts.threads, "budget_ms": opts.budget_ms,
                         "trace": opts.trace}
        self.model.clear()
        self.timing.reset(opts.paths)
        self.summary.clear()
        self._update_quality()
        self._show_path(None)
        self._progress = {"index": 0, "total": len(opts.paths), "elapsed": 0.0, "budget": opts.budget_ms / 1e3,
                          "path": ""}
        self._run_started = time.monotonic()
        self._path_times: list[float] = []
        self._path_t0 = None
        self.controller.start(spec, opts, self.csv_path)
        self._set_running(True)
        self.status_label.setText(f"Running {spec.descriptor()} ({spec.dtype}) on {len(opts.paths)} paths…")
        self.status_timer.start()
        return True

    def stop_run(self) -> None:
        if self.running:
            self.controller.stop()
            self.status_label.setText("Stopping after the current call…")

    def _set_running(self, on: bool) -> None:
        self.panel.set_running(on)
        if self.sweep_view is not None:
            self.sweep_view.setEnabled(not on)  # one measurement at a time
        self.run_action.setEnabled(not on and self.panel.is_valid)
        self.stop_action.setEnabled(on)
        self.peak_action.setEnabled(not on)
        self.open_action.setEnabled(not on)

    def _sync_sweep(self, spec) -> None:
        """The Sweep tab starts from the spec and options in the panel."""
        if spec is None or self.sweep_view is None:
            return
        try:
            self.sweep_view.set_base(spec)
            self.sweep_view.set_options(self.panel.run_options())
        except Exception as e:  # noqa: BLE001 - the sweep tab must not break the form
            self.status_label.setText(f"Sweep view: {type(e).__name__}: {e}")

    def all_results(self) -> list:
        """Every row measured in this window: the Run tab's, then the sweep's."""
        rows = list(self.model.results)
        if self.sweep_view is not None:
            rows += list(self.sweep_view.results())
        return rows

    def _refresh_overviews(self) -> None:
        """Feed the Roofline and Compare tabs when they are in view (they redraw from all results)."""
        current = self.tabs.currentWidget()
        if current is self.roofline_view:
            self.roofline_view.set_results(self.all_results())
        elif current is self.baseline_view:
            self.baseline_view._mark_dirty()

    def open_baseline(self, path: str | None = None) -> bool:
        self.tabs.setCurrentWidget(self.baseline_view)
        if path is None:
            self.baseline_view._open_dialog()
            return bool(self.baseline_view.baselines)
        return self.baseline_view.open_csv(path)

    def export_view(self, which: str, path: str | None = None) -> bool:
        """Export the roofline or the sweep chart as PNG or SVG."""
        if path is None:
            path = self._ask_path(f"Export {which}", "PNG image (*.png);;SVG image (*.svg)", f"{which}.png")
            if not path:
                return False
        elif not self._confirm_overwrite(path):
            return False
        if which == "roofline":
            self.roofline_view.set_results(self.all_results())
            return self.roofline_view.export(path)
        return self.sweep_view is not None and self.sweep_view.export_chart(path)

    def open_layer(self, spec) -> None:
        """A layer of the Model tab, opened in the Run tab with its spec."""
        self.panel.set_spec(spec)
        self.tabs.setCurrentIndex(0)

    def _sweep_running(self, on: bool) -> None:
        """One measurement at a time: a sweep and a run would time each other."""
        self._sweeping = on
        self.panel.run_button.setEnabled(not on and self.panel.is_valid)
        self.run_action.setEnabled(not on and self.panel.is_valid)
        self.peak_action.setEnabled(not on)

    def _on_validity(self, ok: bool) -> None:
        self.run_action.setEnabled(ok and not self.running)

    def _on_path_started(self, path, index, total) -> None:
        self._progress.update(index=index, total=total, elapsed=0.0, path=path)
        self._path_t0 = time.monotonic()
        self._live_path = path
        self.timing.path_started(path)

    def _on_samples(self, path, arr, n, elapsed, budget) -> None:
        self.timing.add_samples(path, arr)
        self._progress.update(elapsed=elapsed, budget=budget, path=path)

    def _update_quality(self) -> None:
        """The line above the charts: how many rows another program disturbed, the worst cause, what helps."""
        from explorer.core.measure.interference import ADVICE

        rows = [r for r in self.model.results if r.status == "ok"]
        noisy = [r for r in rows if getattr(r, "quality", "") == "noisy"]
        self.quality_label.setVisible(bool(noisy))
        if noisy:
            worst = max(noisy, key=lambda r: r.runq_wait_pct or 0.0)
            names = ", ".join(r.path for r in noisy)
            text = (f"⚠ {len(noisy)} of {len(rows)} paths are noisy (hatched: {names}): {worst.quality_reason}. "
                    f"Their times and every ratio built on them are uncertain; {ADVICE}.")
            self.quality_label.setText(text)
            self.quality_label.setToolTip(text)

    def _on_path_retry(self, path, attempt, reason) -> None:
        self.status_label.setText(f"{path}: disturbed ({reason}); measuring again, attempt {attempt}…")
        self.timing.set_samples(path, [])  # the new loop's samples replace the disturbed ones

    def _on_path_finished(self, result) -> None:
        self.model.add(result)
        self._update_quality()
        if result.threads and result.threads not in self.peaks:
            self._cached_peaks({result.threads})
            self._apply_peaks()
        self._fit_columns()  # cheap (a few rows); path names never elide mid-run
        self.summary.set_result(result)
        if result.samples_ms is not None and len(result.samples_ms):
            self.timing.set_samples(result.path, result.samples_ms)
        self._progress.update(index=self._progress["index"] + 1, elapsed=0.0)
        t0 = getattr(self, "_path_t0", None)
        if t0 is not None:
            took = time.monotonic() - t0
            self._path_times.append(took)
            from explorer.gui.sweep_view import note_path_time

            note_path_time(took, self._progress["budget"] or 0.0)
            self._path_t0 = None
        self._live_path = ""
        # The first row is selected when the run ends: filling the layout view costs tens of ms, which
        # the event loop should not spend while the run is timing (a row the user clicks shows at once).

    # Widest a column gets from its content (the rest is elided; the cell's tooltip has the full text).
    _COLUMN_CAPS = {"status": 110, "kernel": 230, "src / wei / dst": 220, "spec": 240, "error": 320,
                    "stored in / wei / out": 200}

    def _fit_columns(self) -> None:
        """Every column as wide as its header and its values (capped; never the path names, which must not
        elide, nor a header such as "vs baseline"). A row that did not run spans its reason over the numbers."""
        from PySide6.QtGui import QFont, QFontMetrics

        from explorer.core.paths.base import PATHS
        from explorer.gui.results_model import REASON_COLUMN

        fm = QFontMetrics(self.table.font())
        bold = QFont(self.table.font())
        bold.setBold(True)
        fmb = QFontMetrics(bold)
        head = self.table.horizontalHeader()
        hfm = QFontMetrics(head.font())
        rows = self.proxy.rowCount()
        for c in range(self.proxy.columnCount()):
            name = self.proxy.headerData(c, Qt.Horizontal)
            w = hfm.horizontalAdvance(str(name)) + 28  # room for the sort arrow
            if c == 0:  # every path name, also those not run yet: the column never changes during a run
                w = max(w, max(fmb.horizontalAdvance(p) for p in PATHS) + 44)
            for row in range(rows):
                idx = self.proxy.index(row, c)
                r = self.proxy.data(idx, RESULT_ROLE)
                if c >= REASON_COLUMN and r is not None and r.status != "ok":
                    continue  # the spanned reason is not this column's content
                text = self.proxy.data(idx, Qt.DisplayRole) or ""
                w = max(w, (fmb if c == 0 else fm).horizontalAdvance(str(text)) + (44 if c == 0 else 14))
            cap = self._COLUMN_CAPS.get(name)
            self.table.setColumnWidth(c, min(w, cap) if cap else w)
        self._update_spans()

    def _update_spans(self, *_) -> None:
        """A row that did not run shows torch's reason across the number columns (rows move when sorted)."""
        from explorer.gui.results_model import REASON_COLUMN

        self.table.clearSpans()
        n = self.proxy.columnCount() - REASON_COLUMN
        for row in range(self.proxy.rowCount()):
            r = self.proxy.data(self.proxy.index(row, 0), RESULT_ROLE)
            if r is not None and r.status != "ok" and r.error and n > 1:
                self.table.setSpan(row, REASON_COLUMN, 1, n)

    def _on_failed(self, message, field) -> None:
        self.last_error = message
        self.status_label.setText(f"Run failed: {message}")
        details = getattr(self.controller, "last_details", "")
        if details and not os.environ.get("MKLDNN_EXPLORER_NO_DIALOGS"):
            # An unexpected failure: visible, with the traceback one click away; non-modal, so a
            # scripted run (--exit-when-done) still ends.
            box = QMessageBox(QMessageBox.Critical, "Run failed", f"The run stopped: {message}", parent=self)
            box.setInformativeText("Finished rows were kept. Details hold the traceback.")
            box.setDetailedText(details)
            box.setModal(False)
            box.show()
            self.failure_box = box
        self.run_failed.emit(message)

    def _on_finished(self, cancelled: bool) -> None:
        self.status_timer.stop()
        self._fit_columns()
        self._set_running(False)
        self.timing.redraw()
        n = self.model.rowCount()
        took = time.monotonic() - self._run_started
        if self.last_error:
            pass
        elif cancelled:
            self.status_label.setText(f"Stopped: {n} finished paths kept ({took:.1f} s).")
        else:
            ok = sum(1 for r in self.model.results if r.status == "ok")
            noisy = sum(1 for r in self.model.results if r.status == "ok" and getattr(r, "quality", "") == "noisy")
            extra = f", {noisy} of them noisy" if noisy else ""
            self.status_label.setText(f"Done: {n} paths ({ok} ok{extra}) in {took:.1f} s.")
        if not self.table.selectionModel().hasSelection():
            ok = [r for r in self.model.results if r.status == "ok"]
            if ok:
                self.select_path(ok[0].path)
        self.progress.setValue(self.progress.maximum() if not cancelled else self.progress.value())
        self.progress.setFormat("done" if not cancelled else "stopped")
        self.eta_label.setText("")
        self._apply_peaks()  # the roofline and summary judge against the peak at these rows' threads
        self._refresh_overviews()
        self.run_finished.emit(cancelled)

    def _timed_status(self) -> None:
        from explorer.gui.measure import may_draw

        if may_draw():  # never while the measuring process times a burst
            self._tick_status()

    def _draw_boundary(self) -> None:
        """At a burst boundary (the measuring process waits): draw everything that arrived."""
        self.timing.redraw()
        self._tick_status()

    def _tick_status(self) -> None:
        p = self._progress
        total = max(p["total"], 1)
        budget = p["budget"] or 0.0
        frac_cur = min(1.0, p["elapsed"] / budget) if budget else 0.0
        done = (p["index"] + frac_cur) / total
        self.progress.setValue(int(done * 1000))
        self.progress.setFormat(f"{p['path'] or '…'} {min(p['index'] + 1, total)}/{total}")
        # Each path takes its budget plus warm-up, the accuracy check and the traced call: the estimate is the
        # mean wall time of the paths finished so far (else the budget plus the overhead seen earlier).
        from explorer.gui.sweep_view import path_overhead_s

        times = getattr(self, "_path_times", [])
        per = sum(times) / len(times) if times else budget + path_overhead_s()
        t0 = getattr(self, "_path_t0", None)
        cur = (time.monotonic() - t0) if t0 is not None else 0.0
        left = max(0.0, (total - p["index"]) * per - min(cur, per))
        self.eta_label.setText(f"about {left:.1f} s left")
        self._ticks = getattr(self, "_ticks", 0) + 1
        if self._live_path and self._ticks % 5 == 0:  # the running path's estimate, once a second
            samples = self.timing.samples_of(self._live_path)
            if samples.size:
                self.summary.set_live(self._live_path, samples, self.run_spec.ops if self.run_spec else None)
                self.summary.redraw()

    # ---- selection -> layouts / trace ----------------------------------------------------------------------
    def select_path(self, path: str) -> bool:
        for row in range(self.proxy.rowCount()):
            r = self.proxy.data(self.proxy.index(row, 0), RESULT_ROLE)
            if r is not None and r.path == path:
                self.table.selectRow(row)
                self.table.setCurrentIndex(self.proxy.index(row, 0))
                return True
        return False

    def _on_current_row(self, current, previous) -> None:
        r = self.proxy.data(self.proxy.index(current.row(), 0), RESULT_ROLE) if current.isValid() else None
        self._show_path(r)

    def selected_result(self):
        idx = self.table.currentIndex()
        return self.proxy.data(self.proxy.index(idx.row(), 0), RESULT_ROLE) if idx.isValid() else None

    def _show_path(self, r) -> None:
        title = f"{r.path} — {r.spec.descriptor()} ({r.spec.dtype})" if r is not None else ""
        # A path that did not run says why (not "no tensors yet").
        why = (f"{r.path} did not run ({r.status}): {r.error}" if (r is not None and r.status != "ok" and r.error)
               else "")
        ph = getattr(self.layout_view, "placeholder", None)
        if ph is not None:
            ph.setText(why or self.layout_view.PLACEHOLDER)
        if self.layout_view is not None:
            try:
                self.layout_view.set_tensors((r.layouts or None) if r is not None else None, title)
            except Exception as e:  # noqa: BLE001 - a view's bug must not take the window down
                self.status_label.setText(f"Layout view: {type(e).__name__}: {e}")
        if self.trace_view is not None:
            try:
                if r is None:
                    self.trace_view.set_trace([], None, "")
                else:
                    from explorer.core.trace.onednn import TraceSummary

                    prims = list(r.trace or [])
                    self.trace_view.set_trace(prims, TraceSummary.from_primitives(prims) if prims else None, title)
                if hasattr(self.trace_view, "set_aten"):
                    self.trace_view.set_aten(r)
                if why and getattr(self.trace_view, "placeholder", None) is not None:
                    self.trace_view.placeholder.setText(why)
            except Exception as e:  # noqa: BLE001
                self.status_label.setText(f"Trace view: {type(e).__name__}: {e}")

    def copy_selection(self) -> str:
        text = selection_tsv(self.table)
        if text:
            QGuiApplication.clipboard().setText(text)
            self.status_label.setText(f"Copied {text.count(chr(10)) - 1} rows as TSV.")
        return text

    def _on_baseline(self, path: str) -> None:
        self.model.set_baseline(path)

    # ---- peak: one per (dtype, threads), measured in the measuring process, shared by every view ----------
    def _load_peak(self) -> None:
        """The cached peaks for the thread counts of the rows shown (and the panel's), never measured here."""
        threads = {r.threads for r in self.all_results() if getattr(r, "threads", None)}
        threads.add(self.peak_threads() or _default_threads())
        self._cached_peaks(threads)
        self._apply_peaks()

    def _cached_peaks(self, threads) -> None:
        from explorer.core.measure import machine

        for t in threads:
            if t in self.peaks:
                continue
            try:
                p = machine.peak(threads=int(t), allow_measure=False)
            except Exception:  # noqa: BLE001 - a cache problem only hides % of peak
                p = None
            if p is not None:
                self.peaks[int(t)] = p

    def peak_threads(self) -> int | None:
        """The thread count the views judge against: the Run rows' (most common), else the panel's."""
        counts: dict = {}
        for r in self.model.results:
            if r.threads:
                counts[r.threads] = counts.get(r.threads, 0) + 1
        if counts:
            return max(counts, key=counts.get)
        return self.panel.options().get("threads") or None

    def _apply_peaks(self) -> None:
        self.model.set_peaks({t: (p.fp32_gflops, p.bf16_gflops) for t, p in self.peaks.items()})
        t = self.peak_threads() or _default_threads()
        p = self.peaks.get(t)
        if p is not None:
            self.summary.set_peak(p.fp32_gflops, p.bf16_gflops)
            bf = f", bf16 {p.bf16_gflops:.0f}" if p.bf16_gflops else ""
            self.peak_action.setToolTip(f"Measured peak at {p.threads} threads: fp32 {p.fp32_gflops:.0f}{bf} "
                                        f"GFLOP/s ({p.measured_at}).")
        else:
            self.summary.set_peak(None, None)
        self.roofline_view.set_peak(p)

    def _set_peak(self, p) -> None:
        self.peaks[p.threads] = p
        self._apply_peaks()

    def measure_peak(self) -> None:
        if self.running or (self.peak_worker and self.peak_worker.running) or getattr(self, "_sweeping", False):
            return
        import threading

        from explorer.gui import measure

        threads = self.peak_threads()

        def job():
            # In the measuring process, like every measurement (the window's GIL stays out of it).
            out = None
            for ev in measure.events("peak", threads, remeasure=True, cancel=threading.Event()):
                out = ev
            return out

        self.peak_worker = CallWorker(job, self)
        self.peak_worker.succeeded.connect(self._on_peak)
        self.peak_worker.failed.connect(lambda m: self.status_label.setText(f"Peak measurement failed: {m}"))
        self.peak_worker.finished.connect(lambda: self._set_running(False))
        self.peak_worker.finished.connect(self._peak_done)
        self._set_running(False)
        self.run_action.setEnabled(False)
        self.panel.run_button.setEnabled(False)
        self.peak_action.setEnabled(False)
        self.roofline_view.measure_button.setEnabled(False)
        self.roofline_view.measure_button.setText("Measuring…")
        where = f"{threads} threads" if threads else "the default threads"
        self.status_label.setText(f"Measuring the machine's peak at {where} in the measuring process (about 3 s)…")
        self.peak_worker.start()

    def _peak_done(self) -> None:
        self.roofline_view.measure_button.setEnabled(True)
        self.roofline_view.measure_button.setText("Measure peak")

    def _on_peak(self, p) -> None:
        if p:
            self._set_peak(p)
            self.status_label.setText(f"Peak at {p.threads} threads: fp32 {p.fp32_gflops:.0f} GFLOP/s"
                                      + (f", bf16 {p.bf16_gflops:.0f} GFLOP/s" if p.bf16_gflops else "")
                                      + " (the Run table, the summary and the Roofline use it).")

    # ---- files -------------------------------------------------------------------------------------------
    def _ask_path(self, caption: str, filters: str, default: str, save: bool = True) -> str | None:
        start = str(Path(self._last_dir()) / default)
        if save:
            # Qt's dialog asks before replacing an existing file.
            path, _ = QFileDialog.getSaveFileName(self, caption, start, filters)
        else:
            path, _ = QFileDialog.getOpenFileName(self, caption, str(self._last_dir()), filters)
        if path and self.settings is not None:
            self.settings.setValue("last_dir", str(Path(path).parent))
        return path or None

    def _last_dir(self) -> str:
        d = self.settings.value("last_dir", "") if self.settings is not None else ""
        return d if d and os.path.isdir(d) else os.getcwd()

    def _confirm_overwrite(self, path: str) -> bool:
        """Paths given in code (not through the dialog) still ask before replacing a file."""
        if not os.path.exists(path):
            return True
        answer = QMessageBox.question(self, "Replace file?", f"{path} already exists. Replace it?",
                                      QMessageBox.Yes | QMessageBox.No, QMessageBox.No)
        return answer == QMessageBox.Yes

    def _error_box(self, title: str, message: str) -> None:
        self.status_label.setText(message)
        if os.environ.get("MKLDNN_EXPLORER_NO_DIALOGS"):
            return
        QMessageBox.warning(self, title, message)

    def _sweep_tab_current(self) -> bool:
        return self.sweep_view is not None and self.tabs.currentIndex() == 1

    def export_csv(self, path: str | None = None, ask: bool = True, which: str | None = None) -> bool:
        """The Run table's rows, or (which="sweep", or on the Sweep tab) the last sweep's rows, as CSV."""
        from explorer.core.report.results import write_rows

        which = which or ("sweep" if self._sweep_tab_current() else "run")
        rows = self.sweep_view.results() if (which == "sweep" and self.sweep_view is not None) else self.model.results
        what = "sweep rows" if which == "sweep" else "rows"
        if path is None:
            path = self._ask_path(f"Export {what} as CSV", "CSV files (*.csv)", f"{'sweep' if which == 'sweep' else 'results'}.csv")
            if not path:
                return False
        elif ask and not self._confirm_overwrite(path):
            return False
        try:
            n = write_rows(path, rows)
        except OSError as e:
            self._error_box("Export failed", f"Cannot write {path}: {e.strerror or e}.")
            return False
        self.status_label.setText(f"Wrote {n} {what} to {path}.")
        return True

    def export_timeline(self, path: str | None = None, ask: bool = True) -> bool:
        """The finished rows as a Chrome trace-event JSON timeline (explorer.core.report.timeline)."""
        from explorer.core.report.timeline import Timeline

        if path is None:
            path = self._ask_path("Export timeline", "Trace-event JSON (*.json)", "timeline.json")
            if not path:
                return False
        elif ask and not self._confirm_overwrite(path):
            return False
        tl = Timeline()
        for r in self.model.results:
            tl.add(r)
        try:
            tl.write(path)
        except OSError as e:
            self._error_box("Export failed", f"Cannot write {path}: {e.strerror or e}.")
            return False
        self.status_label.setText(f"Wrote a timeline of {tl.sample_count} timed calls to {path}.")
        return True

    def _sweep_as_baseline(self, rows, label) -> None:
        """The Sweep tab's "Use as baseline": its rows become a Compare baseline."""
        if rows:
            self.baseline_view.add_rows(rows, label)
            self.status_label.setText(f"Baseline {label}: {len(rows)} rows (Compare tab, and dashed on the sweep charts).")

    def export_chart(self, which: str, path: str | None = None, ask: bool = True) -> bool:
        chart = self.timing if which == "timing" else self.summary
        if path is None:
            path = self._ask_path(f"Export {which} chart", "PNG image (*.png);;SVG image (*.svg)", f"{which}.png")
            if not path:
                return False
        elif ask and not self._confirm_overwrite(path):
            return False
        try:
            export_plot(chart, path)
        except Exception as e:  # noqa: BLE001
            self._error_box("Export failed", f"Cannot export the {which} chart to {path}: {e}.")
            return False
        self.status_label.setText(f"Saved the {which} chart to {path}.")
        return True

    def save_screenshot(self, path: str | None = None, ask: bool = True) -> bool:
        if path is None:
            path = self._ask_path("Save window screenshot", "PNG image (*.png)", "mkldnn-explorer.png")
            if not path:
                return False
        elif ask and not self._confirm_overwrite(path):
            return False
        pm = self.grab()
        tmp = f"{path}.part.png"
        if not pm.save(tmp, "PNG"):
            self._error_box("Screenshot failed", f"Cannot write {path}.")
            return False
        os.replace(tmp, path)
        return True

    def session_options(self) -> dict:
        """The options the Run rows were measured with (the panel's only before any run)."""
        o = dict(self.run_opts) if (self.run_opts and self.model.rowCount()) else self.panel.options()
        o["baseline"] = self.summary.baseline
        return o

    def save_session(self, path: str | None = None, ask: bool = True) -> bool:
        from explorer.core.session.store import save_session

        spec = (self.run_spec if self.model.rowCount() else None) or self.panel.spec or self.run_spec
        if spec is None:
            self._error_box("Cannot save", "The spec is not valid; fix it before saving the session.")
            return False
        if path is None:
            path = self._ask_path("Save session", "MKLDNN Explorer session (*.json)", "session.json")
            if not path:
                return False
        elif ask and not self._confirm_overwrite(path):
            return False
        try:
            sweep = self.sweep_view.session_state() if self.sweep_view is not None else None
            save_session(path, spec, self.session_options(), self.model.results, sweep)
        except (OSError, ValueError) as e:
            self._error_box("Save failed", f"Cannot save the session to {path}: {e}.")
            return False
        self.status_label.setText(f"Saved the session to {path}.")
        return True

    def open_session(self, path: str | None = None) -> bool:
        from explorer.core.session.store import load_session

        if self.running:
            return False
        if path is None:
            path = self._ask_path("Open session", "MKLDNN Explorer session (*.json);;All files (*)", "", save=False)
            if not path:
                return False
        try:
            s = load_session(path)
        except ExplorerError as e:
            self._error_box("Cannot open the session", str(e))
            return False
        self.panel.set_spec(s.spec)
        o = s.options
        self.panel.set_options(o.get("paths"), o.get("threads", 0) or 0, o.get("budget_ms"), o.get("trace"))
        if o.get("baseline"):
            self.summary.set_baseline(o["baseline"])
        self.run_opts = {k: o.get(k) for k in ("paths", "threads", "budget_ms", "trace")} if s.results else None
        if s.sweep is not None and self.sweep_view is not None:
            try:
                self.sweep_view.restore_state(s.sweep)
            except Exception as e:  # noqa: BLE001 - the Run rows still open
                self.status_label.setText(f"Sweep view: {type(e).__name__}: {e}")
        self.model.set_results(s.results)
        self._update_quality()
        self._fit_columns()
        self.timing.clear()
        self.summary.clear()
        for r in s.results:
            self.summary.set_result(r)
            if r.samples_ms is not None and len(r.samples_ms):
                self.timing.set_samples(r.path, r.samples_ms)
        self.timing.redraw()
        self.run_spec = s.results[0].spec if s.results else s.spec
        ok = [r for r in s.results if r.status == "ok"]
        if ok:
            self.select_path(ok[0].path)
        nsweep = len(s.sweep["items"]) if s.sweep else 0
        self.status_label.setText(f"Opened {path}: {len(s.results)} rows" + (f" and {nsweep} sweep rows" if nsweep else "")
                                  + " (layouts are not stored: run again to see them).")
        return True

    # ---- theme -------------------------------------------------------------------------------------------
    def apply_theme(self, name: str) -> None:
        self.theme = name if name in colors.THEMES else "light"
        app = QApplication.instance()
        if app is not None:
            app.setPalette(colors.palette(self.theme))
        self.timing.set_theme(self.theme)
        self.summary.set_theme(self.theme)
        self.model.set_theme(self.theme)
        # Every view follows the theme: charts, tables and labels (a test checks each one's background).
        for view in (self.layout_view, self.trace_view, self.sweep_view, self.roofline_view, self.baseline_view):
            fn = getattr(view, "set_theme", None)
            if callable(fn):
                try:
                    fn(self.theme)
                except Exception:  # noqa: BLE001
                    pass
        if self.dark_action.isChecked() != (self.theme == "dark"):
            self.dark_action.blockSignals(True)
            self.dark_action.setChecked(self.theme == "dark")
            self.dark_action.blockSignals(False)

    # ---- settings ------------------------------------------------------------------------------------------
    def restore_settings(self, restore_spec: bool = True) -> bool:
        """Window layout and options from QSettings; the last spec too when restore_spec. True if a spec was set."""
        s = self.settings
        if s is None:
            return False
        if s.value("version", 0, int) != SETTINGS_VERSION:
            return False
        geo = s.value("geometry")
        if isinstance(geo, QByteArray):
            self.restoreGeometry(geo)
        state = s.value("window_state")
        if isinstance(state, QByteArray):
            self.restoreState(state)
        for split in (self.main_split, self.chart_split, self.bottom_split):
            v = s.value(f"splitter/{split.objectName()}")
            if isinstance(v, QByteArray) and split.restoreState(v):
                self._restored_splitters = True
        theme = s.value("theme", "")
        if theme in colors.THEMES:
            self.apply_theme(theme)
        paths = s.value("paths")
        if isinstance(paths, str):
            paths = [p for p in paths.split(",") if p]
        try:
            threads = int(s.value("threads", 0))
            budget = float(s.value("budget_ms", 500))
        except (TypeError, ValueError):
            threads, budget = 0, 500.0
        trace = str(s.value("trace", "true")).lower() in ("true", "1")
        self.panel.set_options(paths or None, threads, budget, trace)
        base = s.value("baseline", "")
        if base:
            self.summary.set_baseline(str(base))
        if restore_spec:
            desc = s.value("spec/desc", "")
            if desc:
                from explorer.core.problem.spec import parse_descriptor

                try:
                    spec = parse_descriptor(str(desc), dtype=str(s.value("spec/dtype", "f32")),
                                            bias=str(s.value("spec/bias", "true")).lower() in ("true", "1"))
                except ExplorerError:
                    return False
                self.panel.set_spec(spec)
                return True
        return False

    def save_settings(self) -> None:
        s = self.settings
        if s is None:
            return
        s.setValue("version", SETTINGS_VERSION)
        s.setValue("geometry", self.saveGeometry())
        s.setValue("window_state", self.saveState())
        for split in (self.main_split, self.chart_split, self.bottom_split):
            s.setValue(f"splitter/{split.objectName()}", split.saveState())
        s.setValue("theme", self.theme)
        spec = self.panel.spec
        if spec is not None:
            s.setValue("spec/desc", spec.descriptor())
            s.setValue("spec/dtype", spec.dtype)
            s.setValue("spec/bias", "true" if spec.bias else "false")
        o = self.panel.options()
        s.setValue("paths", ",".join(o["paths"]))
        s.setValue("threads", o["threads"] or 0)
        s.setValue("budget_ms", o["budget_ms"])
        s.setValue("trace", "true" if o["trace"] else "false")
        s.setValue("baseline", self.summary.baseline)
        s.sync()

    # ---- closing ---------------------------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop any run and wait for its thread; finished rows still queued reach the table first."""
        self.status_timer.stop()
        self.timing.timer.stop()
        self.controller.shutdown()
        if self.sweep_view is not None:
            try:
                self.sweep_view.shutdown()
            except Exception:  # noqa: BLE001
                pass
        if getattr(self, "model_view", None) is not None:
            self.model_view.shutdown()
        if self.peak_worker is not None:
            self.peak_worker.wait()
        self.roofline_view.shutdown(2000)  # its own "Measure peak" worker, if one is running
        self.baseline_view.timer.stop()

    def closeEvent(self, event) -> None:
        self.shutdown()
        self.save_settings()
        super().closeEvent(event)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._sized:
            self._sized = True
            self.fit_splitters()

    NARROW = 900  # below this Run-tab width the table sits above the layouts, not beside them

    CHARTS_MIN_H = 170
    DETAIL_MIN_H = 300  # what the layout view needs once a row is selected (measured: 291 px)

    def fit_splitters(self) -> None:
        """Share the space by proportion of the current size (restored splitter states win, except the
        table/layouts orientation, which always follows the width)."""
        w = max(self.main_split.width(), 400)
        h = max(self.main_split.height(), 300)
        narrow = w < self.NARROW
        orient = Qt.Vertical if narrow else Qt.Horizontal
        changed = self.bottom_split.orientation() != orient
        if changed:
            self.bottom_split.setOrientation(orient)
        if self._restored_splitters and not changed:
            return
        # In a narrow window the table keeps room for six rows (the six paths) whatever the layouts want,
        # or four (and a scroll bar) when six would leave the charts less than their legible minimum.
        rows = 6
        if narrow and (self.charts_box.minimumSizeHint().height() + self._rows(6) + self.DETAIL_MIN_H + 12 > h):
            rows = 4
        self.table.setMinimumHeight(self._rows(rows) if narrow else 0)
        if narrow:
            # Charts 36 % (at least their minimum); below them the table and the layouts get the rest.
            top = max(int(h * 0.36), self.charts_box.minimumSizeHint().height())
            self.main_split.setSizes([top, h - top])
            table = self._rows(rows)
            self.bottom_split.setSizes([table, h - top - table])
        else:
            # The table and the layout view below need more height than the charts: 45 % charts, 55 % below.
            top = int(h * 0.45)
            self.main_split.setSizes([top, h - top])
            detail = int(w * 0.55)
            self.bottom_split.setSizes([w - detail, detail])
        self.chart_split.setSizes([int(w * 0.54), w - int(w * 0.54)])

    def _rows(self, n: int) -> int:
        return (self.table.horizontalHeader().sizeHint().height() + n * self.table.verticalHeader().defaultSectionSize()
                + self.table.horizontalScrollBar().sizeHint().height() + 4)

    def _user_split(self, *_):
        self._restored_splitters = True  # the user's proportions from now on

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self._sized:
            # After the layout has given the splitters their new size (they still have the old one here).
            QTimer.singleShot(0, self.fit_splitters)

    def sizeHint(self) -> QSize:
        return QSize(1440, 900)
