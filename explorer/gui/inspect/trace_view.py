"""Trace view: the oneDNN primitives one path ran, in order, and where the time went.

A table (one row per primitive: #, op, implementation, prop, src / wei / dst format and data type,
problem, time) with reorders in amber and convolutions emphasised, above a stacked bar of convolution vs
reorder vs other time. The native path runs no oneDNN primitive at all; the view says so instead of
showing an empty table.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtCore import Qt

from explorer.core.layout.tags import alias_of
from explorer.core.trace.onednn import TraceSummary
from explorer.gui.common.doubt import DoubtBanner, approx, trace_doubt
from explorer.gui.common.widgets import ElidedLabel
from explorer.gui.inspect.time_bar import CONV_COLOUR, OTHER_COLOUR, REORDER_COLOUR, TimeBar, format_ms
from explorer.gui.inspect.time_bar import format_ms as _format_ms

__all__ = ["TraceView", "TraceTableModel", "TimeBar", "REORDER_TIP", "NO_PRIMITIVES_TEXT"]

REORDER_TIP = (
    "A reorder copies a tensor into another memory layout, e.g. plain nchw (abcd) into the blocked "
    "nChw16c (aBcd16b, AVX-512) or nChw8c (aBcd8b, AVX2) the convolution kernel prefers, or back again.\n"
    "It costs a full read and write of the tensor on every call unless the tensor is kept in the "
    "kernel's layout (which is what MKLDNN tensors and prepacked MKLDNN weights are for).")
CONV_TIP = "The convolution itself: the implementation column names the kernel oneDNN chose (ISA, algorithm)."
NO_PRIMITIVES_TEXT = ("No oneDNN primitive ran: PyTorch's own kernels did this work, so there is nothing "
                      "to trace (the native path switches oneDNN off).")
NO_TRACE_TEXT = "No trace yet.\n\nInspect a path to see the oneDNN primitives it runs, in order, with their times."


_PROP_SHORT = {"forward_training": "fwd training", "forward_inference": "fwd inference",
               "backward_data": "bwd data", "backward_weights": "bwd weights", "backward": "bwd", "undef": ""}


def _arg_text(p, name: str) -> str:
    arg = p.args.get(name) if getattr(p, "args", None) else None
    if arg is None or arg.dt in (None, "undef") and not arg.tag:
        return ""
    tag = arg.tag or "?"
    return f"{tag} {arg.dt}" if arg.dt and arg.dt != "undef" else tag


def _arg_tip(p, name: str) -> str:
    arg = p.args.get(name) if getattr(p, "args", None) else None
    if arg is None or not arg.tag:
        return ""
    kind = "weight" if name == "wei" else "data"
    alias = alias_of(arg.tag, kind) or alias_of(arg.tag, "weight" if kind == "data" else "data")
    bits = [f"{name}: {arg.tag}" + (f" = {alias}" if alias else ""), f"data type {arg.dt}"]
    if arg.padded:
        bits.append("padded (its blocked dims are rounded up; the padding is zeros)")
    if "a" in (arg.props or ""):
        bits.append("created with format 'any': oneDNN chose this layout")
    return "\n".join(bits)


class TraceTableModel(QtCore.QAbstractTableModel):
    COLUMNS = ("#", "op", "implementation", "prop", "src", "wei", "dst", "problem", "time (ms)")
    COL_TIME = 8
    COL_PROBLEM = 7

    def __init__(self, parent=None):
        super().__init__(parent)
        self._prims: list = []
        self._bold = QtGui.QFont()
        self._bold.setBold(True)

    def set_primitives(self, prims) -> None:
        self.beginResetModel()
        self._prims = list(prims or [])
        self.endResetModel()

    def primitive(self, row: int):
        return self._prims[row]

    def rowCount(self, parent=QtCore.QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._prims)

    def columnCount(self, parent=QtCore.QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation == Qt.Horizontal:
            if role == Qt.DisplayRole:
                return self.COLUMNS[section]
            if role == Qt.ToolTipRole:
                return {
                    2: "The oneDNN implementation (kernel) that ran and its ISA, e.g. jit:avx2 or jit:avx512_core",
                    3: "Propagation kind: forward training / inference, backward ...",
                    4: "Source memory: format tag and data type",
                    5: "Weight memory: format tag and data type",
                    6: "Destination memory: format tag and data type",
                    7: "The problem in benchdnn's descriptor form (reorders: the tensor shape)",
                    8: "Execution time oneDNN reported for this call, in milliseconds",
                }.get(section)
        return None

    @staticmethod
    def _kind(p) -> str:
        return "reorder" if p.op == "reorder" else ("conv" if p.op == "convolution" else "other")

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        p = self._prims[index.row()]
        col = index.column()
        kind = self._kind(p)
        if role == Qt.DisplayRole:
            if col == 0:
                return str(index.row() + 1)
            if col == 1:
                return p.op + ("" if getattr(p, "kind", "exec") == "exec" else f" ({p.kind})")
            if col == 2:
                return p.impl
            if col == 3:
                return _PROP_SHORT.get(p.prop, p.prop)
            if col in (4, 5, 6):
                return _arg_text(p, ("src", "wei", "dst")[col - 4])
            if col == 7:
                return p.problem
            if col == 8:
                return approx(format_ms(p.time_ms), getattr(self, "doubtful", False))
        elif role == Qt.UserRole:
            return p
        elif role == Qt.ToolTipRole:
            if col in (4, 5, 6):
                tip = _arg_tip(p, ("src", "wei", "dst")[col - 4])
                if tip:
                    return tip
            if col == 3 and p.prop:
                return p.prop
            if col == 7 and p.problem:
                return p.problem
            if kind == "reorder":
                src, dst = p.src or "?", p.dst or "?"
                return f"reorder {src} \u2192 {dst}\n\n{REORDER_TIP}"
            if kind == "conv":
                return CONV_TIP
            return f"{p.op}: another oneDNN primitive"
        elif role == Qt.BackgroundRole:
            if kind == "reorder":
                c = QtGui.QColor(REORDER_COLOUR)
                c.setAlpha(95)
                return QtGui.QBrush(c)
            if kind == "conv":
                c = QtGui.QColor(CONV_COLOUR)
                c.setAlpha(55)
                return QtGui.QBrush(c)
        elif role == Qt.FontRole:
            if kind == "conv" or (kind == "reorder" and col == 1):
                return self._bold
        elif role == Qt.TextAlignmentRole:
            if col in (0, 8):
                return int(Qt.AlignRight | Qt.AlignVCenter)
        return None


class TraceView(QtWidgets.QWidget):
    """The primitives one path ran (table) and where the time went (bar + summary line)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.summary: TraceSummary | None = None
        self.setAutoFillBackground(True)  # the window colour, as the other tabs (not the tab frame's)
        outer = QtWidgets.QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        outer.setSpacing(4)

        self.title_label = ElidedLabel()  # a long descriptor must not widen the view
        f = self.title_label.font()
        f.setBold(True)
        self.title_label.setFont(f)
        outer.addWidget(self.title_label)
        self.doubt = DoubtBanner()  # the app's one banner: a disturbed traced call's times are uncertain
        outer.addWidget(self.doubt)

        self.stack = QtWidgets.QStackedWidget()
        # oneDNN primitives (left) beside the ATen ops of one profiled call (right, aten_view.AtenView).
        from explorer.gui.inspect.aten_view import AtenView

        self.aten_view = AtenView()
        self.splitter = QtWidgets.QSplitter(Qt.Horizontal)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.stack)
        self.splitter.addWidget(self.aten_view)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        outer.addWidget(self.splitter, 1)
        self.placeholder = QtWidgets.QLabel(NO_TRACE_TEXT)
        self.placeholder.setAlignment(Qt.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setMargin(12)
        self.stack.addWidget(self.placeholder)

        content = QtWidgets.QWidget()
        cl = QtWidgets.QVBoxLayout(content)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.setSpacing(4)
        self.summary_label = QtWidgets.QLabel()
        self.summary_label.setTextFormat(Qt.RichText)
        self.summary_label.setWordWrap(True)
        self.summary_label.setToolTip(REORDER_TIP)
        cl.addWidget(self.summary_label)
        self.bar = TimeBar()
        cl.addWidget(self.bar)

        self.model = TraceTableModel(self)
        self.table = QtWidgets.QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SingleSelection)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.ElideMiddle)
        self.table.setHorizontalScrollMode(QtWidgets.QAbstractItemView.ScrollPerPixel)
        hh = self.table.horizontalHeader()
        hh.setStretchLastSection(False)
        hh.setMinimumSectionSize(28)
        # Shown right after the op (the model's order is unchanged): where the time went is what a narrow
        # view must show without scrolling.
        hh.moveSection(TraceTableModel.COL_TIME, 2)
        cl.addWidget(self.table, 1)

        self.raw_line = QtWidgets.QLineEdit()
        self.raw_line.setReadOnly(True)
        self.raw_line.setPlaceholderText("Select a row to see its raw oneDNN verbose line")
        self.raw_line.setFont(QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.FixedFont))
        cl.addWidget(self.raw_line)
        self.stack.addWidget(content)

        self.table.selectionModel().currentRowChanged.connect(self._on_row)
        self.set_trace(None)

    # ------------------------------------------------------------------------------------------- API
    def set_trace(self, primitives: list | None, summary=None, title: str = "") -> None:
        """Show `primitives` (explorer.core.trace.onednn.Primitive, in order). None = no trace yet; [] = the
        path ran no oneDNN primitive. `summary` (TraceSummary) is computed from the primitives if absent."""
        self.title_label.setText(title)
        self.title_label.setVisible(bool(title))
        self.doubtful = self.model.doubtful = False  # until set_aten judges this call
        self.doubt.say("")
        prims = list(primitives) if primitives is not None else None
        self.model.set_primitives(prims or [])
        self.raw_line.clear()
        if not prims:
            self.summary = summary if prims is not None else None
            self.placeholder.setText(NO_TRACE_TEXT if prims is None else NO_PRIMITIVES_TEXT)
            self.stack.setCurrentWidget(self.placeholder)
            return
        if summary is None:
            summary = TraceSummary.from_primitives(prims)
        self.summary = summary
        self.stack.setCurrentIndex(1)
        self._set_summary(summary, len(prims))
        self._fit_columns()

    def set_aten(self, result) -> None:
        """The ATen ops, chain, median split and route note of a runner Result (None clears); after set_trace,
        whose traced call it judges: a disturbed one (or a noisy row) gets the banner and its times a `~`."""
        s = self.summary
        traced = (s.conv_time_ms + s.reorder_time_ms + s.other_time_ms) if s is not None else None
        why = trace_doubt(result, traced)
        self.doubt.say(why)
        self.doubtful = self.model.doubtful = bool(why)
        if why and self.model.rowCount():
            self.model.dataChanged.emit(self.model.index(0, 0), self.model.index(self.model.rowCount() - 1,
                                                                                 self.model.columnCount() - 1))
        if s is not None and self.stack.currentIndex() == 1:
            self._set_summary(s, self.model.rowCount())
        self.aten_view.set_result(result, doubtful=bool(why))

    # --------------------------------------------------------------------------------------- helpers
    def summary_text(self) -> str:
        return self.summary_label.text()

    def _set_summary(self, s, nrows: int) -> None:
        total = s.conv_time_ms + s.reorder_time_ms + s.other_time_ms
        doubtful = getattr(self, "doubtful", False)

        def format_ms(v):  # a disturbed call's times carry the app's `~`
            return approx(_format_ms(v), doubtful)

        def pct(v):
            return f" ({100 * v / total:.0f} %)" if total > 0 else ""

        def swatch(c):
            return f"<span style='color:{c.name()}'>\u25a0</span>"

        n_re = s.reorder_count
        parts = [
            f"{swatch(CONV_COLOUR)} convolution <b>{format_ms(s.conv_time_ms)} ms</b>{pct(s.conv_time_ms)}",
            f"{swatch(REORDER_COLOUR)} <b>{n_re}</b> reorder{'s' if n_re != 1 else ''} "
            f"<b>{format_ms(s.reorder_time_ms)} ms</b>{pct(s.reorder_time_ms)}",
        ]
        if s.other_time_ms > 0:
            parts.append(f"{swatch(OTHER_COLOUR)} other {format_ms(s.other_time_ms)} ms{pct(s.other_time_ms)}")
        tail = f"{nrows} primitive{'s' if nrows != 1 else ''}"
        if s.conv_impl:
            tail += f", kernel <b>{s.conv_impl}</b>"
        self.summary_label.setText(" &nbsp;\u00b7&nbsp; ".join(parts) + f" &nbsp;\u00b7&nbsp; {tail}")
        self.bar.set_segments([("convolution", s.conv_time_ms, CONV_COLOUR),
                               ("reorders", s.reorder_time_ms, REORDER_COLOUR),
                               ("other", s.other_time_ms, OTHER_COLOUR)])

    def _fit_columns(self) -> None:
        hh = self.table.horizontalHeader()
        prob = TraceTableModel.COL_PROBLEM
        for c in range(self.model.columnCount()):
            if c != prob:
                hh.setSectionResizeMode(c, QtWidgets.QHeaderView.Interactive)
        self.table.resizeColumnsToContents()
        # The problem string is long: it gets whatever width is left, elided in the middle (full text in
        # its tooltip).
        hh.setSectionResizeMode(prob, QtWidgets.QHeaderView.Stretch)

    def _on_row(self, current, _previous) -> None:
        if current.isValid():
            p = self.model.primitive(current.row())
            self.raw_line.setText(getattr(p, "raw", "") or "")
            self.raw_line.setCursorPosition(0)
