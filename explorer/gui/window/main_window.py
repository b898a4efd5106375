"""The main window: parameters on the left; live timing and the per-path summary on top; the results table
with the Layouts and Trace views of the selected path below. All torch work runs in worker.RunController's
QThread; this module only draws and routes signals.

The state lives in one Qt-free session model (explorer.core.session.state.SessionState, `self.session`): the
workers' events are applied to it, and the views follow it through one SessionBridge (`self.bridge`). The
window's other parts are mixins in their own modules: menus (menus and actions), files
(exports and dialogs), session_sync (session files and the views' subscriptions), peak (the one
peak) and inspector (the selected row's layouts and trace).
"""

from __future__ import annotations

import os
import time

from PySide6.QtCore import QByteArray, QSettings, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QDockWidget,
    QHBoxLayout,
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
from explorer.core.jobs.events import PathFinished, PathRetry, PathStarted, Samples
from explorer.core.session.state import RunFinished, RunStarted, SessionState
from explorer.gui.common import colors
from explorer.gui.common.doubt import DoubtBanner
from explorer.gui.common.inputs import guard_wheel
from explorer.gui.common.session_bridge import SessionBridge
from explorer.gui.jobs.worker import RunController
from explorer.gui.run.param_panel import ParamPanel
from explorer.gui.run.results_model import ResultsModel, ResultsProxy
from explorer.gui.run.summary_chart import SummaryChart
from explorer.gui.run.timing_chart import TimingChart
from explorer.gui.window.files import WindowFiles
from explorer.gui.window.inspector import WindowInspector
from explorer.gui.window.menus import WindowMenus
from explorer.gui.window.peak import WindowPeak
from explorer.gui.window.session_sync import WindowSession
from explorer.gui.window.verify import WindowVerify

SETTINGS_VERSION = 1


def fit_size(width: int, height: int, screen=None, frame: QSize | None = None) -> QSize:
    """(width, height) shrunk to fit `screen`'s available geometry (the primary screen when None), less the
    window frame: a window must open on the screen, status bar included."""
    screen = screen or QApplication.primaryScreen()
    if screen is None:
        return QSize(width, height)
    avail = screen.availableGeometry().size()
    fw, fh = (frame.width(), frame.height()) if frame is not None else (0, 0)
    return QSize(max(320, min(width, avail.width() - fw)), max(240, min(height, avail.height() - fh)))


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
    from explorer.gui.inspect.layout_view import LayoutView  # a broken view fails the window, not silently its tab

    return LayoutView()


def _make_sweep_view(bridge):
    from explorer.gui.tabs.sweep_view import SweepView  # a broken view fails the window, not silently its tab

    return SweepView(bridge=bridge)


def _make_trace_view():
    from explorer.gui.inspect.trace_view import TraceView  # a broken view fails the window, not silently its tab

    return TraceView()


def _make_model_view(bridge):
    from explorer.gui.tabs.model_view import ModelView  # a broken view fails the window, not silently its tab

    return ModelView(bridge=bridge)


class MainWindow(WindowMenus, WindowFiles, WindowSession, WindowPeak, WindowInspector, WindowVerify, QMainWindow):
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
        # The one model of this window's state; the views follow it through the bridge (session_sync).
        self.session = SessionState()
        self.bridge = SessionBridge(self.session, self)
        self._sized = False
        self._restored_splitters = False
        self.placed = False  # a saved window rectangle was restored (restore_settings)

        self.controller = RunController(self)
        self.controller.on_boundary = self._draw_boundary
        self.controller.path_started.connect(self._on_path_started)
        self.controller.samples.connect(self._on_samples)
        self.controller.path_retry.connect(self._on_path_retry)
        self.controller.path_finished.connect(self._on_path_finished)
        self.controller.failed.connect(self._on_failed)
        self.controller.finished.connect(self._on_finished)
        self.peak_worker = None  # a CallWorker while the peak is measured (peak.py)

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
        self.summary.baseline_changed.connect(self.session.set_baseline)
        self.chart_split = QSplitter(Qt.Horizontal)
        self.chart_split.setObjectName("chartSplit")
        self.chart_split.addWidget(self.timing)
        self.chart_split.addWidget(self.summary)
        self.chart_split.setSizes([560, 440])

        # ---- table ---------------------------------------------------------------------------------------
        self.model = ResultsModel(self, rows=self.session.results, peaks=self.session.peaks)  # no copies
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
        self.table.selectionModel().currentRowChanged.connect(self._update_verify_button)
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
        # It wraps (its advice is the point) and never widens the window (the views' one banner, common.doubt).
        self.quality_label = DoubtBanner()
        self.charts_box = QWidget()
        box = QVBoxLayout(self.charts_box)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(2)
        top_row = QHBoxLayout()  # the quality line, and the selected row's fresh-script check (verify.py)
        top_row.setContentsMargins(0, 0, 0, 0)
        top_row.addWidget(self.quality_label, 1)
        top_row.addStretch(0)
        top_row.addWidget(self._make_verify_button())
        box.addLayout(top_row)
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
        # In a scroll area, as the Sweep and Model tabs: no minimum size below (the banner, a weight shown as
        # the kernel used it) can grow the window past the screen; the views wrap so no scroll bar shows.
        self.run_tab = _scrolled(self.main_split)
        self.tabs.addTab(self.run_tab, "Run")
        self.sweep_view = _make_sweep_view(self.bridge)
        # In a scroll area: the sweep view's minimum size must not widen the window past 1280x800.
        self.tabs.addTab(_scrolled(self.sweep_view or _placeholder("Sweeps (vary one field over a range) will appear here.")),
                         "Sweep")
        if self.sweep_view is not None:
            self.panel.spec_changed.connect(self._sync_sweep)
            self.sweep_view.started.connect(lambda: self._sweep_running(True))
            self.sweep_view.finished.connect(lambda _stopped: self._sweep_running(False))
            self.sweep_view.status.connect(lambda text: self.status_label.setText(text))
            self.sweep_view.controller.progress.connect(  # the sweep's points, as its tab's bar counts them
                lambda p: self._show_step(p.done, p.total, f"point {min(p.done + 1, p.total)}/{p.total}"))
            self.sweep_view.finished.connect(lambda stopped: self._end_step(stopped, self.sweep_view.controller.last_error))
            self.sweep_view.baseline_requested.connect(self._sweep_as_baseline)
        # Roofline and Compare: everything measured in this window (runs and sweeps) against the machine's
        # ceilings, and against baseline CSVs from earlier runs or other CPUs.
        from explorer.gui.tabs.baseline_view import BaselineView
        from explorer.gui.tabs.roofline_view import RooflineView

        # The Roofline draws the session's rows against its peak at the window's thread count (no copies).
        self.roofline_view = RooflineView(self.bridge, peak_threads=self.peak_threads)
        self.baseline_view = BaselineView()
        self.baseline_view.current_source = self.all_results
        if self.sweep_view is not None:
            self.baseline_view.attach(self.sweep_view)
            self.sweep_view.finished.connect(lambda *_: self._refresh_overviews())
        for view in (self.roofline_view, self.baseline_view):
            view.status.connect(lambda text: self.status_label.setText(text))
        # The Roofline's "Measure peak" asks the window: measured in the measuring process, shared by all views.
        self.roofline_view.measure_requested.connect(self.measure_peak)
        self.tabs.addTab(self.roofline_view, "Roofline")
        self.tabs.addTab(self.baseline_view, "Compare")
        self.model_view = _make_model_view(self.bridge)
        if self.model_view is not None:  # the whole-model planner (explorer.gui.tabs.model_view)
            # In a scroll area, as the sweep view: its controls must not widen the window past 1280x800.
            self.model_tab = _scrolled(self.model_view)
            self.tabs.addTab(self.model_tab, "Model")
            self.model_view.options_source = lambda: self.panel.run_options()
            self.model_view.open_spec.connect(self.open_layer)
            self.model_view.started.connect(lambda: self._sweep_running(True))
            self.model_view.finished.connect(lambda _stopped: self._sweep_running(False))
            self.model_view.status.connect(lambda text: self.status_label.setText(text))
            self.model_view.step.connect(self._show_step)
            self.model_view.finished.connect(lambda stopped: self._end_step(stopped, self.model_view.last_error))
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
        self._connect_session()
        self.panel.validity_changed.connect(self._on_validity)
        self.resize(1440, 900)  # the app shrinks it to the screen (resize_within_screen)
        self.resizeDocks([self.param_dock], [scroll.minimumWidth()], Qt.Horizontal)
        self._load_peak()
        # The wheel scrolls the panels; it edits a spin box or combo box only once clicked or tabbed to (#38).
        guard_wheel(self)
        from explorer.gui.window.focus_return import FocusReturn

        self.focus_return = FocusReturn(self)  # shortcuts work at once after a dialog, window manager or not

    # ---- run ---------------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.controller.running

    def start_run(self) -> bool:
        if self.running or (self.peak_worker and self.peak_worker.running) or getattr(self, "_sweeping", False) \
                or (self.verify_worker and self.verify_worker.running):  # a fresh script and a run would time each other
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
        self.timing.reset(opts.paths)
        self.summary.clear()
        self._show_path(None)
        # The session clears the Run rows (the table follows) and starts the job the status bar reads.
        self.session.apply(RunStarted(spec, {"paths": list(opts.paths), "threads": opts.threads,
                                             "budget_ms": opts.budget_ms, "trace": opts.trace,
                                             "allocator": opts.allocator, "isa": opts.isa}))
        self.controller.start(spec, opts, self.csv_path)
        self._set_running(True)
        self.status_label.setText(f"Running {spec.descriptor()} ({spec.dtype}) on {len(opts.paths)} paths…")
        self.status_timer.start()
        return True

    def stop_run(self) -> None:
        """Run > Stop (Esc): stops what is measuring, the Run tab's run or a Sweep or Model tab's job."""
        if self.running:
            self.controller.stop()
            self.status_label.setText("Stopping after the current call…")
            return
        for view in (self.sweep_view, self.model_view):
            if view is not None and view.is_running():
                view.stop()
                self.status_label.setText("Stopping after the current call…")

    def _set_running(self, on: bool) -> None:
        self.panel.set_running(on)
        if self.sweep_view is not None:
            self.sweep_view.setEnabled(not on)  # one measurement at a time
        self.run_action.setEnabled(not on and self.panel.is_valid)
        self.stop_action.setEnabled(on)
        self.peak_action.setEnabled(not on)
        self.open_action.setEnabled(not on)
        self._update_verify_button()

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
        """Every row measured in this window: the Run tab's, then the sweep's (both held by the session)."""
        return self.session.all_results()

    def _refresh_overviews(self) -> None:
        """The Compare tab re-compares all results when it is in view (the Roofline follows the session itself)."""
        if self.tabs.currentWidget() is self.baseline_view:
            self.baseline_view._mark_dirty()

    def open_layer(self, spec) -> None:
        """A layer of the Model tab, opened in the Run tab with its spec."""
        self.panel.set_spec(spec)
        self.tabs.setCurrentIndex(0)

    def _sweep_running(self, on: bool) -> None:
        """One measurement at a time: a sweep and a run would time each other."""
        self._sweeping = on
        if on:  # the last job's "done" is not this one's
            self._show_step(0, 1, "starting…")
        self.panel.run_button.setEnabled(not on and self.panel.is_valid)
        self.run_action.setEnabled(not on and self.panel.is_valid)
        self.peak_action.setEnabled(not on)
        self.stop_action.setEnabled(on or self.running)  # Esc stops a sweep or a model plan too

    # The status bar's progress follows a Sweep or Model job as the tab does ("layer 7/11"), never a stale "done".
    def _show_step(self, done: int, total: int, what: str) -> None:
        self.progress.setValue(int(1000 * done / max(total, 1)))
        self.progress.setFormat(what)
        self.eta_label.setText("")

    def _end_step(self, cancelled: bool, error: str) -> None:
        if error:
            self.progress.setFormat("failed")
        else:
            self.progress.setValue(self.progress.value() if cancelled else self.progress.maximum())
            self.progress.setFormat("stopped" if cancelled else "done")

    def _on_validity(self, ok: bool) -> None:
        self.run_action.setEnabled(ok and not self.running)

    # The run's events: each is applied to the session; the views draw what the session says changed.
    def _on_path_started(self, path, index, total) -> None:
        self.session.apply(PathStarted(self.session.run_spec, path, index, total))
        self.timing.path_started(path)

    def _on_samples(self, path, arr, n, elapsed, budget) -> None:
        self.session.apply(Samples(self.session.run_spec, path, arr, n, elapsed, budget))
        self.timing.add_samples(path, arr)

    def _update_quality(self) -> None:
        """The line above the charts: how many rows another program disturbed, the worst cause, what helps."""
        from explorer.gui.common.doubt import banner_text

        noisy = [r.path for r in self.model.results if r.status == "ok" and getattr(r, "quality", "") == "noisy"]
        self.quality_label.say(banner_text(self.model.results, "paths", f"hatched: {', '.join(noisy)}"))

    def _on_path_retry(self, path, attempt, reason) -> None:
        self.session.apply(PathRetry(self.session.run_spec, path, attempt, reason))
        self.status_label.setText(f"{path}: disturbed ({reason}); measuring again, attempt {attempt}…")
        self.timing.set_samples(path, [])  # the new loop's samples replace the disturbed ones

    def _on_path_finished(self, result) -> None:
        self.session.apply(PathFinished(result))  # the table, quality line and charts follow (_on_result_added)
        # The first row is selected when the run ends: filling the layout view costs tens of ms, which
        # the event loop should not spend while the run is timing (a row the user clicks shows at once).

    def _on_result_added(self, result) -> None:
        """A Run row the session just took: the table, the quality line, its peak, the charts."""
        self.model.shown()
        self._update_quality()
        if result.threads and result.threads not in self.session.peaks:
            self._cached_peaks({result.threads})
            self._apply_peaks()
        self._fit_columns()  # cheap (a few rows); path names never elide mid-run
        self.summary.set_result(result)
        if result.samples_ms is not None and len(result.samples_ms):
            self.timing.set_samples(result.path, result.samples_ms)

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
        self.summary.stop_live()  # a path cut short keeps its estimate, saying stopped, not running
        self.timing.redraw()
        n = self.model.rowCount()
        job = self.session.job
        took = time.monotonic() - job.started_at if job is not None else 0.0
        self.session.apply(RunFinished(cancelled, self.last_error or ""))
        if self.last_error:
            pass
        elif cancelled:
            self.status_label.setText(f"Stopped: {n} finished paths kept ({took:.1f} s).")
        else:
            from explorer.core.report.counts import count_text  # the Sweep status's rule too

            self.status_label.setText(f"Done in {took:.1f} s. {count_text(self.model.results, 'paths')}.")
        if not self.table.selectionModel().hasSelection():
            ok = [r for r in self.model.results if r.status == "ok"]
            if ok:
                self.select_path(ok[0].path)
        self._end_step(cancelled, self.last_error or "")  # "failed" when it failed, as for a sweep or a model
        self.eta_label.setText("")
        self._apply_peaks()  # the roofline and summary judge against the peak at these rows' threads
        self._refresh_overviews()
        self.run_finished.emit(cancelled)

    def _timed_status(self) -> None:
        from explorer.gui.jobs.measure import may_draw

        if may_draw():  # never while the measuring process times a burst
            self._tick_status()

    def _draw_boundary(self) -> None:
        """At a burst boundary (the measuring process waits): draw everything that arrived."""
        self.timing.redraw()
        self._tick_status()

    def _tick_status(self) -> None:
        job = self.session.job
        if job is None or job.kind != "run":
            return
        total = max(job.total, 1)
        self.progress.setValue(int(job.fraction() * 1000))
        self.progress.setFormat(f"{job.path or '…'} {min(job.index + 1, total)}/{total}")
        # Each path takes its budget plus warm-up, the accuracy check and the traced call: the estimate is the
        # mean wall time of the paths finished so far (else the budget plus the overhead the session learned).
        left = job.run_eta_s(self.session.path_times.overhead_s)
        self.eta_label.setText(f"about {left:.1f} s left")
        self._ticks = getattr(self, "_ticks", 0) + 1
        if job.path and self._ticks % 5 == 0:  # the running path's estimate, once a second
            samples = self.timing.samples_of(job.path)
            if samples.size:
                spec = self.session.run_spec
                self.summary.set_live(job.path, samples, spec.ops if spec else None)
                self.summary.redraw()

    # ---- theme -------------------------------------------------------------------------------------------
    def apply_theme(self, name: str) -> None:
        self.theme = name if name in colors.THEMES else "light"
        app = QApplication.instance()
        if app is not None:
            app.setPalette(colors.palette(self.theme))
        colors.announce_theme(self.theme)  # views that colour their own text (colors.follow_theme)
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
        # what "Reset settings to defaults" goes back to: the window as a first launch shows it
        self.default_options, self.default_theme = self.panel.options(), self.theme
        if s is None:
            return False
        if s.value("version", 0, int) != SETTINGS_VERSION:
            return False
        # a "fresh" window shows an earlier session's choices: say where they came from (docs: window.md)
        self.status_label.setText(f"Options, theme and last problem restored from {s.fileName()}; "
                                  "File > Reset settings to defaults starts afresh.")
        self._restore_placement(s)
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
        from explorer.core.session.store import settings_numbers

        threads, budget, notes = settings_numbers(s.value("threads", 0), s.value("budget_ms", 500))
        if notes:
            self.status_label.setText(" ".join(n[0].upper() + n[1:] for n in notes))
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

    def reset_settings(self) -> None:
        """Forget the saved settings file's contents and show the defaults (options, theme, the default
        preset); the window's layout goes back to its defaults at the next launch."""
        d = getattr(self, "default_options", None) or self.panel.options()
        if self.settings is not None:
            self.settings.clear()
            self.settings.sync()
        self.panel.set_options(d["paths"], d["threads"] or 0, d["budget_ms"], d["trace"], d["allocator"], d["isa"])
        self.apply_theme(getattr(self, "default_theme", "light"))
        self.panel.select_default_preset()
        where = self.settings.fileName() if self.settings is not None else "no settings file"
        self.status_label.setText(f"Settings reset to the defaults ({where} emptied).")

    def save_settings(self) -> None:
        s = self.settings
        if s is None:
            return
        s.setValue("version", SETTINGS_VERSION)
        self._save_placement(s)
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

    def _save_placement(self, s) -> None:
        """The client rectangle (the normal one when maximized) and the frame around it (window.placement)."""
        from explorer.gui.window.placement import frame_margins

        s.setValue("window/rect", self.normalGeometry() if self.isMaximized() else self.geometry())
        m = frame_margins(self)
        s.setValue("window/frame", f"{m.left()},{m.top()},{m.right()},{m.bottom()}")
        s.setValue("window/maximized", "true" if self.isMaximized() else "false")
        s.remove("geometry")  # Qt's blob moved the window by its guessed title bar on every relaunch

    def _restore_placement(self, s) -> None:
        from PySide6.QtCore import QMargins, QRect

        from explorer.gui.window.placement import place

        rect = s.value("window/rect")
        if not isinstance(rect, QRect) or not rect.isValid():
            geo = s.value("geometry")  # a settings file from before: Qt's blob, then clamped like the rest
            if not isinstance(geo, QByteArray) or not self.restoreGeometry(geo):
                return
            rect = self.geometry()
        try:
            margins = QMargins(*(max(0, min(200, int(v))) for v in str(s.value("window/frame", "0,0,0,0")).split(",")))
        except (TypeError, ValueError):
            margins = QMargins()
        self._fitted_size = place(self, rect, margins).size()
        self.placed = True  # `gui` without --size keeps this place and size
        if str(s.value("window/maximized", "false")).lower() == "true":
            self.setWindowState(self.windowState() | Qt.WindowMaximized)

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
        if self.verify_worker is not None:
            self.verify_worker.wait()  # a fresh script runs for about its budget plus torch's import
        self.baseline_view.timer.stop()

    def closeEvent(self, event) -> None:
        self.shutdown()
        self.save_settings()
        super().closeEvent(event)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        guard_wheel(self)  # inputs built since __init__ too (each is guarded once)
        if not self._sized:
            self._sized = True
            self.fit_splitters()
            self._keep_on_screen()
            QTimer.singleShot(0, self._keep_on_screen)  # a window manager adds its frame after the first show

    def _keep_on_screen(self) -> None:
        """Sized before its frame was known, the window may overhang the screen: the frame must fit in too."""
        from explorer.gui.window.placement import clamp_rect, frame_margins, screen_for

        g = self.geometry()
        fitted = getattr(self, "_fitted_size", None)
        if self.isMaximized() or self.isFullScreen() or fitted is None or g.size() != fitted:
            return  # only the size this window chose for the screen (a size asked for since is kept)
        screen = screen_for(g)
        if screen is None:
            return
        want = clamp_rect(g, screen.availableGeometry(), frame_margins(self))
        if want != g:
            self.setGeometry(want)

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
        # The table keeps room for the six paths' rows whatever the banner and the layouts want: when they do
        # not all fit (1024x700 with the noisy banner), the Run tab scrolls instead of squeezing the table.
        rows = 6
        self.table.setMinimumHeight(self._rows(rows))
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
            self._show_key_columns()
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
        return fit_size(1440, 900, self.screen())  # what a window manager places: never past the screen

    def resize_within_screen(self, width: int, height: int) -> None:
        """The asked size, but never past the screen's available geometry (its frame included)."""
        self.resize(fit_size(width, height, self.screen(), self.frameGeometry().size() - self.geometry().size()))
        self._fitted_size = self.size()
