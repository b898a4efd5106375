"""The Model tab: pick a built-in network or type package.module:callable, run the whole-model planner,
see the layer table (sortable; each layer's best path, a bar of its share of the model's conv time) and the
end-to-end modes (measured beside predicted), the one-line answer, and jump from a layer to the Run tab.

The job is core.model.iter_model, run through explorer.gui.jobs.measure (the measuring child process) like the
Run and Sweep tabs: never in the window's process. worker.ModelController runs it in the job worker every
tab shares (a QThread that only reads the pipe and forwards the events as queued signals).

API (for the main window):
    ModelView(parent=None)
    set_model(text), set_input(text), set_options(opts: RunOptions), set_mode_budget(ms)
    run() -> bool, stop(), is_running(), shutdown(timeout_ms) -> bool
    report                      the last ModelReport (None before a run ends): the session model's
                                (ModelView(bridge=...) shares the window's session; saved and reopened with it)
    inv, layer_results, modes   the plan so far, read from the session's ModelState (the view keeps no copy):
                                the controller's signals are applied to the session, and the tables are drawn
                                when the bridge's model_changed says what changed
    export_csv(path) -> bool    the model CSV (layer, layer_path and mode rows), the CLI's schema
    signals: started(), finished(bool cancelled), open_spec(ConvSpec), status(str), step(done, total, what)
"""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QStyledItemDelegate,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from explorer.core.errors import ExplorerError
from explorer.core.model.drift import drift_label
from explorer.gui.common.colors import path_color
from explorer.gui.common.doubt import approx, hatch_brush, is_noisy
from explorer.gui.common.inputs import ask_save_path
from explorer.gui.jobs.worker import ModelController
from explorer.gui.jobs.worker import live_threads as live_threads  # the one registry of job threads

SHARE_ROLE = Qt.UserRole + 1
SPEC_ROLE = Qt.UserRole + 2
DOUBT_ROLE = Qt.UserRole + 4  # the share is uncertain (a noisy row): its bar is hatched, as a noisy bar elsewhere
BUILTIN_CHOICES = ("resnet50", "mobilenet_v2", "resnet18", "tiny")


class _Num(QTableWidgetItem):
    """A cell that sorts by its number (Qt.UserRole), not its text."""

    def __init__(self, text: str, value):
        super().__init__(text)
        self.setData(Qt.UserRole, value)
        self.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)

    def __lt__(self, other):
        a, b = self.data(Qt.UserRole), other.data(Qt.UserRole)
        if a is None:
            return False
        if b is None:
            return True
        return a < b


class ShareBar(QStyledItemDelegate):
    """A bar of the layer's share of the model's conv time, in its best path's colour."""

    def paint(self, painter: QPainter, option, index):
        super().paint(painter, option, index)
        share = index.data(SHARE_ROLE)
        if not share:
            return
        color = QColor(index.data(Qt.UserRole + 3) or "#4C72B0")
        color.setAlpha(150)  # the percentage stays readable under the bar
        r = option.rect.adjusted(3, 4, -3, -4)
        painter.save()
        rect = QRect(r.left(), r.top(), max(1, int(r.width() * min(1.0, share))), r.height())
        painter.fillRect(rect, QBrush(color, Qt.BDiagPattern) if index.data(DOUBT_ROLE) else color)
        painter.restore()


LAYER_HEAD = ("layer", "count", "desc", "best path", "best ms", "margin", "share of conv time")
MODE_HEAD = ("mode", "status", "measured ms", "predicted ms", "pred/meas", "drift", "speedup", "predicted speedup",
             "conv ms", "table conv ms", "convs in model ms", "conversions ms", "remainder ms", "quality", "note / error")


class ModelView(QWidget):
    started = Signal()
    finished = Signal(bool)
    open_spec = Signal(object)  # ConvSpec of the layer the user wants to see in the Run tab
    status = Signal(str)
    step = Signal(int, int, str)  # done, total, what: the progress the tab's message says ("layer k/n")

    def __init__(self, parent=None, bridge=None):
        super().__init__(parent)
        self.setObjectName("modelView")
        from explorer.core.jobs.options import RunOptions
        from explorer.core.model.report import DEFAULT_MODE_BUDGET_MS
        from explorer.gui.common.session_bridge import SessionBridge

        self.bridge = bridge if bridge is not None else SessionBridge(parent=self)
        self.session = self.bridge.session

        self.opts = RunOptions(budget_ms=300.0)
        self.mode_budget_ms = DEFAULT_MODE_BUDGET_MS
        self.options_source = None  # the main window's panel: paths, threads and budget of the Run tab
        self.last_error = ""
        self.controller = ModelController(self)
        self.controller.inventory.connect(self._on_inventory)
        self.controller.layer_done.connect(self._on_layer)
        self.controller.mode_done.connect(self._on_mode)
        self.controller.report.connect(self._on_report)
        self.bridge.model_changed.connect(self._on_model_changed)
        self.controller.progress.connect(self._on_progress)
        self.controller.step.connect(self.step)
        self.controller.failed.connect(self._on_failed)
        self.controller.finished.connect(self._on_finished)

        self.model_box = QComboBox()
        self.model_box.setEditable(True)
        self.model_box.addItems(BUILTIN_CHOICES)
        self.model_box.setMinimumWidth(220)
        self.model_box.setToolTip("A built-in reference network, or package.module:callable returning an nn.Module "
                                  "(imported from the current folder or sys.path) or path/to/file.py:callable, or a .pt2 / "
                                  "TorchScript file.")
        self.input_edit = QLineEdit("")
        self.input_edit.setPlaceholderText("input (default: the model's)")
        self.input_edit.setToolTip("The model's input: a shape (1,3,224,224 or 1,16000), several separated by ; "
                                   "(1,16000; 1,16000), or package.module:callable returning the input.")
        self.input_edit.setMaximumWidth(180)
        # the end-to-end modes: one box each (the model as it is always runs: every ratio is against it), and
        # the plan's dtype (bf16: the per-layer table and every mode in bf16, each stating its error against f32)
        from explorer.core.model.report import DEFAULT_MODES, MODE_HELP, MODES

        self.mode_boxes: dict[str, QCheckBox] = {}
        for m in MODES:
            box = QCheckBox(m)
            box.setObjectName(f"modelMode_{m}")
            box.setChecked(m in DEFAULT_MODES)
            box.setToolTip(MODE_HELP[m])
            if m == "nchw":
                box.setEnabled(False)
            self.mode_boxes[m] = box
        self.dtype_box = QComboBox()
        self.dtype_box.setObjectName("modelDtype")
        self.dtype_box.addItems(["f32", "bf16"])
        self.dtype_box.setToolTip("The plan's dtype: bf16 runs the per-layer table and every mode in bf16; each bf16 "
                                  "mode states its output error against the f32 model, and where oneDNN has no fast "
                                  "bf16 on this CPU the mode's note says so.")
        self.run_button = QPushButton("Run model")
        self.run_button.setDefault(True)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setEnabled(False)
        self.export_button = QPushButton("Export CSV…")
        self.export_button.setEnabled(False)
        self.export_button.setToolTip("Both tables in one CSV (kind = layer, layer_path, mode), as the CLI writes it.")
        self.open_button = QPushButton("Open layer in Run tab")
        self.open_button.setEnabled(False)
        self.open_button.setToolTip("Open the selected layer's spec in the Run tab (or double-click the row).")
        self.open_button.clicked.connect(lambda: self._open_row(self.layers.currentRow(), 0))
        self.run_button.clicked.connect(self.run)
        self.stop_button.clicked.connect(self.stop)
        self.export_button.clicked.connect(lambda: self.export_csv())
        # Two rows: in one, the fields and four buttons need ~870 px, and at 1024x700 the tab has ~620.
        top = QHBoxLayout()
        top.addWidget(QLabel("Model"))
        top.addWidget(self.model_box)
        top.addWidget(QLabel("Input"))
        top.addWidget(self.input_edit)
        top.addStretch(1)
        modes_row = QHBoxLayout()  # the boxes in a 3-wide grid: one row of six overflows a 1024-px window's tab
        modes_row.addWidget(QLabel("Modes"))
        grid = QGridLayout()
        for k, box in enumerate(self.mode_boxes.values()):
            grid.addWidget(box, k // 3, k % 3)
        modes_row.addLayout(grid)
        modes_row.addWidget(QLabel("dtype"))
        modes_row.addWidget(self.dtype_box)
        modes_row.addStretch(1)
        buttons = QHBoxLayout()
        for b in (self.run_button, self.stop_button, self.export_button, self.open_button):
            buttons.addWidget(b)
        buttons.addStretch(1)

        self.answer = QLabel("Pick a model and run it: every convolution over the paths, then the model end to end "
                             "in each mode, measured and predicted.")
        self.answer.setObjectName("modelAnswer")
        self.answer.setWordWrap(True)
        self.answer.setTextInteractionFlags(Qt.TextSelectableByMouse)
        f = self.answer.font()
        f.setBold(True)
        self.answer.setFont(f)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        from explorer.gui.common.colors import follow_theme

        self._message_is_error = False
        follow_theme(self.message, lambda _t: self._set_message(self.message.text(), error=True)
                     if self._message_is_error else None)

        self.layers = self._table(LAYER_HEAD)
        self.layers.setObjectName("modelLayers")
        self.layers.setItemDelegateForColumn(LAYER_HEAD.index("share of conv time"), ShareBar(self.layers))
        self.layers.setToolTip("Double-click a layer to open its spec in the Run tab.")
        self.layers.cellDoubleClicked.connect(self._open_row)
        self.layers.itemSelectionChanged.connect(
            lambda: self.open_button.setEnabled(self.layer_spec(self.layers.currentRow()) is not None))
        self.modes_table = self._table(MODE_HEAD)
        self.modes_table.setObjectName("modelModes")
        self.modes_table.setSortingEnabled(False)
        # The answer first: both speedups right after the measured time (the model's column order is unchanged,
        # as the CSV's), so a 1024 px window shows them without scrolling sideways.
        mh = self.modes_table.horizontalHeader()
        for pos, name in ((3, "speedup"), (4, "predicted speedup")):
            mh.moveSection(mh.visualIndex(MODE_HEAD.index(name)), pos)

        split = QSplitter(Qt.Vertical)
        split.addWidget(self.layers)
        bottom = QWidget()
        bl = QVBoxLayout(bottom)
        bl.setContentsMargins(0, 0, 0, 0)
        caption = QLabel("End to end: measured per forward; predicted = the convs on the mode's path, run in "
                         "model order + forced conversions + the non-conv remainder (convs stubbed out), timed "
                         "in rounds with the forward")
        caption.setWordWrap(True)  # one line of it set the whole tab's minimum width to ~1,100 px
        bl.addWidget(caption)
        bl.addWidget(self.modes_table)
        split.addWidget(bottom)
        split.setSizes([420, 230])
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addLayout(modes_row)
        lay.addLayout(buttons)
        lay.addWidget(self.message)  # above the answer: what failed reads before the report it leaves in view
        lay.addWidget(self.answer)
        lay.addWidget(split, 1)

    @staticmethod
    def _table(head) -> QTableWidget:
        t = QTableWidget(0, len(head))
        t.setHorizontalHeaderLabels(list(head))
        t.setEditTriggers(QAbstractItemView.NoEditTriggers)
        t.setSelectionBehavior(QAbstractItemView.SelectRows)
        t.setAlternatingRowColors(True)
        t.verticalHeader().setVisible(False)
        t.verticalHeader().setDefaultSectionSize(22)
        t.horizontalHeader().setSectionResizeMode(QHeaderView.Interactive)
        t.horizontalHeader().setStretchLastSection(True)
        t.setSortingEnabled(True)
        t.horizontalHeader().setSortIndicator(-1, Qt.AscendingOrder)  # the model's order until a header is clicked
        t.setWordWrap(False)
        # Every header whole from the start ("predicted speedup" was clipped to "redicted speedu"); _fit keeps it.
        t.horizontalHeader().resizeSections(QHeaderView.ResizeToContents)
        return t

    # ---- API ------------------------------------------------------------------------------------------
    def set_model(self, text: str) -> None:
        self.model_box.setCurrentText(text)

    def set_input(self, text: str) -> None:
        self.input_edit.setText(text)

    def set_options(self, opts) -> None:
        """Options for the per-layer table (else the Run tab's, read at each run)."""
        self.opts = opts
        self._fixed_opts = True

    def set_mode_budget(self, ms: float) -> None:
        self.mode_budget_ms = float(ms)

    def set_modes(self, modes) -> None:
        """Tick exactly these modes (the model as it is stays ticked)."""
        for m, box in self.mode_boxes.items():
            box.setChecked(m == "nchw" or m in modes)

    def selected_modes(self) -> tuple[str, ...]:
        return tuple(m for m, box in self.mode_boxes.items() if box.isChecked())

    def is_running(self) -> bool:
        return self.controller.running

    def run(self) -> bool:
        from explorer.core.model.load import parse_inputs
        from explorer.core.model.report import ModelOptions

        if self.controller.running:
            return False
        text = self.model_box.currentText().strip()
        try:
            # several inputs separated by ';', or a package.module:callable returning the input
            shape = parse_inputs([t for t in self.input_edit.text().split(";") if t.strip()] or None)
            mopts = ModelOptions(modes=self.selected_modes(), mode_budget_ms=self.mode_budget_ms).validate()
            if self.options_source is not None and not getattr(self, "_fixed_opts", False):
                self.opts = self.options_source()
            opts = self.opts.validate()
        except ExplorerError as e:
            self._show_error(str(e))
            return False
        self.last_error = ""
        # The last plan stays in the session and the tables until this one's inventory replaces it: a model
        # that fails to load (a mistyped path) leaves the last good report in view, its failure said above it.
        self._new_plan = False
        # the fields this plan is made from, kept with its report (a reopened session shows them); a plan that
        # fails to load gives the last report its own fields back (_on_failed)
        self._inputs_before = self.session.model.inputs
        self.session.model.inputs = {"model": text, "input": self.input_edit.text(),
                                     "dtype": self.dtype_box.currentText(), "modes": list(self.selected_modes())}
        self._set_message(f"Running {text} …")
        self.controller.start((text, shape), {"threads": opts.threads, "run_opts": opts, "model_opts": mopts,
                                              "isa": opts.isa,  # consumed by the measuring process's router
                                              "dtype": self.dtype_box.currentText()})
        self._set_running(True)
        self.started.emit()
        return True

    def stop(self) -> None:
        self.controller.stop()
        self._set_message("Stopping after the current call…")

    def shutdown(self, timeout_ms: int = 5000) -> bool:
        return self.controller.shutdown(timeout_ms)

    def _set_running(self, on: bool) -> None:
        self.run_button.setEnabled(not on)
        self.stop_button.setEnabled(on)
        self.model_box.setEnabled(not on)
        self.input_edit.setEnabled(not on)
        for m, box in self.mode_boxes.items():
            box.setEnabled(not on and m != "nchw")
        self.dtype_box.setEnabled(not on)

    def _show_error(self, msg: str) -> None:
        self.last_error = msg
        self._set_message(msg, error=True)
        self.status.emit(msg)

    def _set_message(self, text: str, error: bool = False) -> None:
        from explorer.gui.common.colors import theme, theme_of

        self._message_is_error = error
        self.message.setTextFormat(Qt.PlainText)  # a model path or an error may hold < or &
        # the theme's error red (a fixed #b3261e read at 2.1:1 on the dark panel); follow_theme re-colours it
        self.message.setStyleSheet(f"color: {theme(theme_of())['error']};" if error else "")
        self.message.setText(text)

    # ---- the session's plan (read-only: the session's ModelState holds it) -----------------------------
    @property
    def report(self):
        """The session's last ModelReport (None before a run ends)."""
        return self.session.model_report

    @property
    def inv(self):
        """The plan's Inventory (the session's)."""
        return self.session.model.inventory

    @property
    def layer_results(self) -> dict:
        """{layer index: {path: Result}} so far (the session's)."""
        return self.session.model.layer_results

    @property
    def modes(self) -> list:
        """The ModeResults so far (the session's)."""
        return self.session.model.modes

    # ---- events: the controller's signals only change the session ---------------------------------------
    def _on_inventory(self, inv) -> None:
        from explorer.core.model.report import ModelStarted

        self._new_plan = True  # the model loaded: from here the tables are this plan's
        self.export_button.setEnabled(False)
        self.session.apply(ModelStarted(inv))

    def _on_layer(self, index: int, result) -> None:
        from explorer.core.session.state import ModelLayerDone

        self.session.apply(ModelLayerDone(index, result))

    def _on_mode(self, res) -> None:
        from explorer.core.model.report import ModeFinished

        self.session.apply(ModeFinished(res))

    def _on_report(self, report) -> None:
        from explorer.core.session.state import ModelDone

        self.session.apply(ModelDone(report))

    def _on_model_changed(self, change) -> None:
        """The session's plan changed: draw what the change says from the session's ModelState."""
        kind = change[0] if isinstance(change, tuple) and change else "report"
        if kind == "inventory":
            if self.inv is not None:
                self.answer.setText(self.inv.summary())
            self._fill_layers()
            self._fill_modes(self.modes)  # none yet: the last plan's modes go with its layers
        elif kind == "layer":
            self._fill_layers()
        elif kind == "mode":
            self._fill_modes(self.modes)
        elif kind == "report":
            self._show_report(self.report)

    def _show_report(self, report) -> None:
        """The session's report (a run's, or a reopened session's): both tables, the answer, the export."""
        if report is None:
            return
        self._show_inputs(report)
        self._fill_layers()
        self._fill_modes(self.modes)
        self._fill_not_run(report.not_run)
        self.answer.setText("\n".join([report.answer(), *report.findings]))
        self.export_button.setEnabled(True)

    def _show_inputs(self, report) -> None:
        """The fields say what the report was planned from (kept with it; else what the report itself names)."""
        inv = report.inventory
        got = self.session.model.inputs or {
            "model": inv.model, "dtype": inv.dtype, "modes": [m.mode for m in report.modes],
            "input": "" if inv.input_label else ",".join(str(n) for n in inv.input_shape)}
        self.set_model(got.get("model") or inv.model)
        self.set_input(got.get("input") or "")
        if got.get("dtype") and self.dtype_box.findText(got["dtype"]) >= 0:
            self.dtype_box.setCurrentText(got["dtype"])
        self.set_modes(got.get("modes") or ())

    def _on_progress(self, text: str) -> None:
        self._set_message(text)
        self.status.emit(text)

    def _on_failed(self, msg: str, _field: str) -> None:
        if getattr(self, "_new_plan", True) or self.report is None:
            self._show_error(msg)
            self.answer.setText("The model could not be planned.")
            return
        # nothing of this run was measured: the last good report stays in view, below what failed
        self.session.model.inputs = getattr(self, "_inputs_before", None)
        self._show_error(f"{msg} The tables below are still the last good plan's "
                         f"({self.report.inventory.model}).")

    def _on_finished(self, cancelled: bool) -> None:
        self._set_running(False)
        if not self.last_error:
            self._set_message("Stopped: finished rows are kept." if cancelled else "Done.")
            self.status.emit(self.message.text())
        self.finished.emit(cancelled)

    # ---- tables ---------------------------------------------------------------------------------------
    def _paths(self) -> list[str]:
        from explorer.gui.common.colors import ordered

        seen = {p for res in self.layer_results.values() for p in res}
        return ordered(seen)

    def _fill_layers(self) -> None:
        from explorer.core.model.report import summarize_layer

        if self.inv is None:
            return
        paths = self._paths()
        # The verdict columns first (they stay in view), then one column per path.
        head = list(LAYER_HEAD) + [f"{p} ms" for p in paths]
        t = self.layers
        t.setSortingEnabled(False)
        if t.columnCount() != len(head):
            t.setColumnCount(len(head))
        t.setHorizontalHeaderLabels(head)
        t.setRowCount(len(self.inv.layers))
        sums = [summarize_layer(lay, self.layer_results.get(i, {})) for i, lay in enumerate(self.inv.layers)]
        total = sum((s.best_ms or 0) * s.layer.count for s in sums) or 1.0
        for i, s in enumerate(sums):
            lay = s.layer
            name = QTableWidgetItem(lay.name)
            name.setData(SPEC_ROLE, lay.spec)
            name.setToolTip("\n".join(lay.modules))
            desc = QTableWidgetItem(lay.desc or lay.error)
            desc.setToolTip(lay.error or lay.desc)
            cells = [name, _Num(str(lay.count), lay.count), desc]
            best = QTableWidgetItem(s.best_path or "")
            if s.best_path:
                best.setForeground(QColor(path_color(s.best_path)))
            # A noisy row (a path's loop another program disturbed) is no finding: its best, margin and share
            # carry the app's `~` and hatch (common.doubt), as the Run and Sweep tables mark a noisy figure.
            doubt = s.noisy
            derived = [_Num(approx(f"{s.best_ms:.4g}" if s.best_ms else "", doubt), s.best_ms),
                       _Num(approx(f"{s.margin:.2f}x" if s.margin else "", doubt), s.margin)]
            share = (s.best_ms or 0) * lay.count / total
            bar = _Num(approx(f"{100 * share:.0f}%" if s.best_ms else "", doubt), share)
            bar.setData(SHARE_ROLE, share)
            bar.setData(Qt.UserRole + 3, path_color(s.best_path) if s.best_path else None)
            bar.setData(DOUBT_ROLE, doubt)
            derived.append(bar)
            if doubt and s.best_ms:
                why = "; ".join(sorted({f"{p}: {r.quality_reason or 'another program disturbed it'}"
                                        for p, r in s.results.items() if is_noisy(r)}))
                for c in derived:
                    c.setBackground(hatch_brush())
                    c.setToolTip(f"uncertain: a path's timing is noisy ({why})")
            cells += [best] + derived
            for p in paths:
                r = s.results.get(p)
                if r is None:
                    cells.append(_Num("", None))
                elif r.status != "ok":
                    c = _Num(r.status, None)
                    c.setToolTip(r.error)
                    cells.append(c)
                else:
                    c = _Num(("~" if r.noisy else "") + f"{r.median_ms:.4g}", r.median_ms)
                    if r.noisy:
                        c.setToolTip(r.quality_reason)
                    cells.append(c)
            for c, item in enumerate(cells):
                t.setItem(i, c, item)
        t.setSortingEnabled(True)
        if t.rowCount() and (self.report is not None or t.columnWidth(0) < 60):
            self._fit(t, {0: 190, 1: 50, 2: 210, 6: 150})

    @staticmethod
    def _fit(t: QTableWidget, caps: dict) -> None:
        """Columns as wide as their content, capped (a cell's tooltip has the full text), never narrower than
        their header."""
        t.resizeColumnsToContents()
        hh = t.horizontalHeader()
        for c in range(t.columnCount()):
            t.setColumnWidth(c, max(min(t.columnWidth(c), caps.get(c, 110)), hh.sectionSizeHint(c)))

    def _fill_modes(self, modes) -> None:
        from explorer.core.model.report import direction_doubt, mode_label

        t = self.modes_table
        t.clearSpans()
        t.setRowCount(len(modes))
        for i, r in enumerate(modes):
            ok = r.status == "ok"
            t_ = "~" if r.uncertain else ""
            agree = r.predicted_ms / r.measured_ms if ok and r.predicted_ms and r.measured_ms else None
            cells = [
                QTableWidgetItem(mode_label(r)), QTableWidgetItem(r.status),
                _Num(("~" if r.noisy else "") + f"{r.measured_ms:.4g}" if ok else "", r.measured_ms),
                _Num(("~" if r.predicted_noisy else "") + f"{r.predicted_ms:.4g}" if r.predicted_ms else "",
                     r.predicted_ms),
                _Num(("~" if r.agreement_noisy else "") + f"{agree:.2f}" if agree else "", agree),
                _Num(drift_label(r.host_drift_pct), r.host_drift_pct),
                _Num(f"{t_}{r.speedup:.2f}x" if r.speedup else "", r.speedup),
                _Num(f"{t_}{r.predicted_speedup:.2f}x" if r.predicted_speedup else "", r.predicted_speedup),
                _Num(("~" if r.conv_seq_quality == "noisy" else "") + f"{r.conv_ms:.4g}" if r.conv_ms else "", r.conv_ms),
                _Num(f"{r.conv_alone_ms:.4g}" if r.conv_alone_ms else "", r.conv_alone_ms),
                _Num(f"{r.convs_in_model_ms:.4g}" if r.convs_in_model_ms else "", r.convs_in_model_ms),
                _Num(f"{r.conversion_ms:.3g}" if r.conversion_ms is not None else "", r.conversion_ms),
                _Num(f"{r.remainder_ms:.4g}" if r.remainder_ms else "", r.remainder_ms),
                QTableWidgetItem(r.quality or ""), QTableWidgetItem(
                    r.error or "; ".join(n for n in (r.mode_note, r.predict_note) if n) or r.uncertain_reason),
            ]
            if r.noisy:
                cells[MODE_HEAD.index("quality")].setToolTip(r.quality_reason)
            cells[MODE_HEAD.index("drift")].setToolTip(
                "how far the machine's speed moved between the per-layer table and this mode: "
                + (r.host_drift_note or "not measured") + "; beyond 10% the comparison is uncertain")
            cells[MODE_HEAD.index("conv ms")].setToolTip(
                "the convs the prediction takes: " + (r.conv_seq_note or "every conv of the model in its order, each "
                "with its own tensors and the others in between, timed in rounds with this mode's forward"))
            if r.agreement_noisy:
                cells[MODE_HEAD.index("pred/meas")].setToolTip("uncertain: " + "; ".join(r.agreement_noise))
            doubt = direction_doubt(r)
            for name in ("speedup", "predicted speedup") if doubt else ():  # the answer's words, at the figures
                cells[MODE_HEAD.index(name)].setToolTip(f"no clear difference from the model as it is: {doubt}")
            cells[MODE_HEAD.index("table conv ms")].setToolTip(
                "the per-layer table's convs, each timed alone (its weights and data stay hot in the caches "
                "from call to call)")
            cells[MODE_HEAD.index("convs in model ms")].setToolTip(
                "the convs timed inside this mode's own forward: " + (r.convs_in_model_note or "")
                + "; beside 'conv ms' it shows which half of the prediction missed")
            cells[-1].setToolTip(cells[-1].text())
            if not ok:  # the exact error, where the figures would be (the op and module are named in it)
                cells[2] = QTableWidgetItem(r.error)
                cells[2].setToolTip(r.error)
                cells[-1] = QTableWidgetItem("")
            for c, item in enumerate(cells):
                t.setItem(i, c, item)
            if not ok:
                t.setSpan(i, 2, 1, len(MODE_HEAD) - 2)
        if t.rowCount() == 1 or self.report is not None:
            t.resizeColumnsToContents()
            t.setColumnWidth(len(MODE_HEAD) - 1, max(200, t.columnWidth(len(MODE_HEAD) - 1)))
            hh = t.horizontalHeader()
            for c in range(len(MODE_HEAD) - 1):  # a header never clipped, a long cell capped (its tooltip has it)
                t.setColumnWidth(c, max(min(t.columnWidth(c), 150), hh.sectionSizeHint(c)))

    def _fill_not_run(self, names) -> None:
        """A stopped plan's modes that never ran: a row each saying so, where the figures would be."""
        from explorer.core.model.report import MODE_LABEL

        t = self.modes_table
        for m in names:
            i = t.rowCount()
            t.setRowCount(i + 1)
            t.setItem(i, 0, QTableWidgetItem(MODE_LABEL.get(m, m)))
            t.setItem(i, 1, QTableWidgetItem("not run"))
            t.setItem(i, 2, QTableWidgetItem("stopped before this mode ran: no figures, no verdict"))
            t.setSpan(i, 2, 1, len(MODE_HEAD) - 2)
        if names:
            t.setColumnWidth(1, max(t.columnWidth(1), t.sizeHintForColumn(1)))  # "not run" whole

    def layer_spec(self, row: int):
        item = self.layers.item(row, 0)
        return item.data(SPEC_ROLE) if item is not None else None

    def _open_row(self, row: int, _col: int) -> None:
        spec = self.layer_spec(row)
        if spec is not None:
            self.open_spec.emit(spec)

    # ---- export -------------------------------------------------------------------------------------------
    def export_csv(self, path: str | None = None) -> bool:
        import os

        from explorer.core.model.model_csv import report_rows, write_model_csv

        if self.report is None:
            return False
        if path is None:
            if os.environ.get("MKLDNN_EXPLORER_NO_DIALOGS") == "1":
                return False
            path = ask_save_path(self, "Export model CSV", "model.csv", "CSV (*.csv)")
            if not path:
                return False
        try:
            write_model_csv(path, report_rows(self.report))
        except (OSError, ExplorerError) as e:
            self._show_error(f"cannot write {path}: {e}")
            return False
        self.status.emit(f"wrote {path}")
        return True
