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
    QAbstractItemView, QApplication, QDockWidget, QFileDialog, QHeaderView, QLabel, QMainWindow, QMessageBox,
    QProgressBar, QScrollArea, QSplitter, QTableView, QTabWidget, QVBoxLayout, QWidget,
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
    try:
        from explorer.gui.layout_view import LayoutView
    except ImportError:
        return None
    return LayoutView()


def _make_sweep_view():
    try:
        from explorer.gui.sweep_view import SweepView
    except ImportError:
        return None
    return SweepView()


def _make_trace_view():
    try:
        from explorer.gui.trace_view import TraceView
    except ImportError:
        return None
    return TraceView()


def _make_model_view():
    try:
        from explorer.gui.model_view import ModelView
    except ImportError:
        return None
    return ModelView()


class MainWindow(QMainWindow):
    run_finished = Signal(bool)  # True when stopped by the user
    run_failed = Signal(str)

    def __init__(self, settings: QSettings | None = None, csv_path: str | None = None, parent=None):
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.setWindowTitle("MKLDNN Explorer")
        self.settings = settings
        self.csv_path = csv_path
        self.theme = "light"
        self.last_error: str | None = None
        self.run_spec = None
        self._run_started = 0.0
        self._progress = {"index": 0, "total": 0, "elapsed": 0.0, "budget": 0.0, "path": ""}
        self._live_path = ""
        self._sized = False
        self._restored_splitters = False

        self.controller = RunController(self)
        self.controller.path_started.connect(self._on_path_started)
        self.controller.samples.connect(self._on_samples)
        self.controller.path_finished.connect(self._on_path_finished)
        self.controller.failed.connect(self._on_failed)
        self.controller.finished.connect(self._on_finished)
        self.peak_worker: CallWorker | None = None

        # ---- left: parameters ------------------------------------------------------------------------
        self.panel = ParamPanel()
        scroll = QScrollArea()
        scroll.setWidget(self.panel)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(self.panel.minimumSizeHint().width() + scroll.verticalScrollBar().sizeHint().width() + 4)
        self.param_dock = QDockWidget("Parameters", self)
        self.param_dock.setObjectName("paramDock")
        self.param_dock.setWidget(scroll)
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

        self.main_split = QSplitter(Qt.Vertical)
        self.main_split.setObjectName("mainSplit")
        self.main_split.addWidget(self.chart_split)
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
        self.status_timer.timeout.connect(self._tick_status)

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
                                          "Write the results table as CSV (the CLI's schema).")
        self.export_timing_action = self._action("Export timing chart…", lambda: self.export_chart("timing"), None,
                                                 "Save the live timing chart as PNG or SVG.")
        self.export_summary_action = self._action("Export summary chart…", lambda: self.export_chart("summary"), None,
                                                  "Save the summary chart as PNG or SVG.")
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
                  self.export_timing_action, self.export_summary_action, self.export_sweep_action,
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
        self.model.clear()
        self.timing.reset(opts.paths)
        self.summary.clear()
        self._show_path(None)
        self._progress = {"index": 0, "total": len(opts.paths), "elapsed": 0.0, "budget": opts.budget_ms / 1e3,
                          "path": ""}
        self._run_started = time.monotonic()
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
        self._live_path = path
        self.timing.path_started(path)

    def _on_samples(self, path, arr, n, elapsed, budget) -> None:
        self.timing.add_samples(path, arr)
        self._progress.update(elapsed=elapsed, budget=budget, path=path)

    def _on_path_finished(self, result) -> None:
        self.model.add(result)
        if self.model.rowCount() == 1:
            self._fit_columns()
        self.summary.set_result(result)
        if result.samples_ms is not None and len(result.samples_ms):
            self.timing.set_samples(result.path, result.samples_ms)
        self._progress.update(index=self._progress["index"] + 1, elapsed=0.0)
        self._live_path = ""
        # The first row is selected when the run ends: filling the layout view costs tens of ms, which
        # the event loop should not spend while the run is timing (a row the user clicks shows at once).

    # Widest a column gets from its content (the rest is elided; the cell's tooltip has the full text).
    _COLUMN_CAPS = {"path": 170, "status": 110, "kernel": 170, "src / wei / dst": 220, "spec": 240, "error": 320}

    def _fit_columns(self) -> None:
        self.table.resizeColumnsToContents()
        for c in range(self.proxy.columnCount()):
            name = self.proxy.headerData(c, Qt.Horizontal)
            self.table.setColumnWidth(c, min(self.table.columnWidth(c), self._COLUMN_CAPS.get(name, 120)))

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
            self.status_label.setText(f"Done: {n} paths ({ok} ok) in {took:.1f} s.")
        if not self.table.selectionModel().hasSelection():
            ok = [r for r in self.model.results if r.status == "ok"]
            if ok:
                self.select_path(ok[0].path)
        self.progress.setValue(self.progress.maximum() if not cancelled else self.progress.value())
        self.progress.setFormat("done" if not cancelled else "stopped")
        self.eta_label.setText("")
        self._refresh_overviews()
        self.run_finished.emit(cancelled)

    def _tick_status(self) -> None:
        p = self._progress
        total = max(p["total"], 1)
        budget = p["budget"] or 0.0
        frac_cur = min(1.0, p["elapsed"] / budget) if budget else 0.0
        done = (p["index"] + frac_cur) / total
        self.progress.setValue(int(done * 1000))
        self.progress.setFormat(f"{p['path'] or '…'} {min(p['index'] + 1, total)}/{total}")
        left = max(0.0, (total - p["index"] - frac_cur) * budget)
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
                    from explorer.core.trace import TraceSummary

                    prims = list(r.trace or [])
                    self.trace_view.set_trace(prims, TraceSummary.from_primitives(prims) if prims else None, title)
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

    # ---- peak ------------------------------------------------------------------------------------------
    def _load_peak(self) -> None:
        from explorer.core import machine

        try:
            p = machine.peak(allow_measure=False)
        except Exception:  # noqa: BLE001 - a cache problem only hides % of peak
            p = None
        if p:
            self._set_peak(p)

    def _set_peak(self, p) -> None:
        self.model.set_peak(p.fp32_gflops, p.bf16_gflops)
        self.summary.set_peak(p.fp32_gflops, p.bf16_gflops)
        bf = f", bf16 {p.bf16_gflops:.0f}" if p.bf16_gflops else ""
        self.peak_action.setToolTip(f"Measured peak: fp32 {p.fp32_gflops:.0f}{bf} GFLOP/s ({p.measured_at}).")

    def measure_peak(self) -> None:
        if self.running or (self.peak_worker and self.peak_worker.running):
            return
        from explorer.core import machine

        self.peak_worker = CallWorker(lambda: machine.peak(remeasure=True), self)
        self.peak_worker.succeeded.connect(self._on_peak)
        self.peak_worker.failed.connect(lambda m: self.status_label.setText(f"Peak measurement failed: {m}"))
        self.peak_worker.finished.connect(lambda: self._set_running(False))
        self._set_running(False)
        self.run_action.setEnabled(False)
        self.panel.run_button.setEnabled(False)
        self.peak_action.setEnabled(False)
        self.status_label.setText("Measuring the machine's peak (about 3 s)…")
        self.peak_worker.start()

    def _on_peak(self, p) -> None:
        if p:
            self._set_peak(p)
            self.status_label.setText(f"Peak: fp32 {p.fp32_gflops:.0f} GFLOP/s"
                                      + (f", bf16 {p.bf16_gflops:.0f} GFLOP/s." if p.bf16_gflops else "."))

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

    def export_csv(self, path: str | None = None, ask: bool = True) -> bool:
        from explorer.core.results import write_csv

        if path is None:
            path = self._ask_path("Export results as CSV", "CSV files (*.csv)", "results.csv")
            if not path:
                return False
        elif ask and not self._confirm_overwrite(path):
            return False
        try:
            write_csv(path, self.model.results)
        except OSError as e:
            self._error_box("Export failed", f"Cannot write {path}: {e.strerror or e}.")
            return False
        self.status_label.setText(f"Wrote {self.model.rowCount()} rows to {path}.")
        return True

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
        o = self.panel.options()
        o["baseline"] = self.summary.baseline
        return o

    def save_session(self, path: str | None = None, ask: bool = True) -> bool:
        from explorer.core.session import save_session

        spec = self.panel.spec or self.run_spec
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
            save_session(path, spec, self.session_options(), self.model.results)
        except (OSError, ValueError) as e:
            self._error_box("Save failed", f"Cannot save the session to {path}: {e}.")
            return False
        self.status_label.setText(f"Saved the session to {path}.")
        return True

    def open_session(self, path: str | None = None) -> bool:
        from explorer.core.session import load_session

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
        self.model.set_results(s.results)
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
        self.status_label.setText(f"Opened {path}: {len(s.results)} rows (layouts are not stored: run again to see them).")
        return True

    # ---- theme -------------------------------------------------------------------------------------------
    def apply_theme(self, name: str) -> None:
        self.theme = name if name in colors.THEMES else "light"
        app = QApplication.instance()
        if app is not None:
            app.setPalette(colors.palette(self.theme))
        self.timing.set_theme(self.theme)
        self.summary.set_theme(self.theme)
        for view in (self.layout_view, self.trace_view):
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
                from explorer.core.spec import parse_descriptor

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

    def fit_splitters(self) -> None:
        """Share the space by proportion of the current size (restored splitter states win)."""
        if self._restored_splitters:
            return
        w = max(self.main_split.width(), 600)
        h = max(self.main_split.height(), 400)
        # The table and the layout view below need more height than the charts: 45 % charts, 55 % below.
        top = int(h * 0.45)
        self.main_split.setSizes([top, h - top])
        self.chart_split.setSizes([int(w * 0.54), w - int(w * 0.54)])
        detail = int(w * 0.55)
        self.bottom_split.setSizes([w - detail, detail])

    def _user_split(self, *_):
        self._restored_splitters = True  # the user's proportions from now on

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self._sized and not self._restored_splitters:
            self.fit_splitters()

    def sizeHint(self) -> QSize:
        return QSize(1440, 900)
