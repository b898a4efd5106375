"""The ATen side of the Trace tab: the ops one profiled call dispatched to, and where the median went.

A tree of the profiled call's ops (nesting as torch.profiler saw it, times in microseconds; bookkeeping ops
such as aten::empty greyed), the one-line chain, the route's note (what it inserted or calls), and a bar
splitting the path's median into oneDNN compute, reorders and the rest (PyTorch's own kernels, dispatch and
Python). Shown beside the oneDNN primitives table, so "the dense path calls oneDNN" reads at both levels.
"""

from __future__ import annotations

from PySide6 import QtGui, QtWidgets
from PySide6.QtCore import Qt

from explorer.core.trace.aten import BOOKKEEPING
from explorer.gui.common.doubt import approx
from explorer.gui.inspect.time_bar import CONV_COLOUR, OTHER_COLOUR, REORDER_COLOUR, TimeBar, format_ms

__all__ = ["AtenView", "NO_ATEN_TEXT", "split_text"]

NO_ATEN_TEXT = "No ATen profile: run with the trace on to profile one call per path."
REST_TIP = ("The rest: everything outside a oneDNN primitive (PyTorch's own kernels, inductor's C++ loops, "
            "framework dispatch and Python). From one traced call, so an estimate.")


def split_text(median_ms, onednn_ms, reorder_ms, other_ms, doubtful: bool = False) -> str:
    """The median's split, every part at the median's precision (a sub-microsecond rest read "2.31e-04" in one
    run and "0" in another); a doubtful split (a disturbed traced call) carries the app's `~`."""
    if median_ms is None or onednn_ms is None:
        return ""
    digits = _digits(median_ms)

    def ms(v):
        return approx(f"{v:.{digits}f}", doubtful)

    def pct(v):
        return f" ({100 * v / median_ms:.0f} %)" if median_ms else ""

    return (f"median <b>{format_ms(median_ms)} ms</b> = oneDNN {ms(onednn_ms)}{pct(onednn_ms)} + reorders "
            f"{ms(reorder_ms or 0.0)}{pct(reorder_ms or 0.0)} + the rest <b>{ms(other_ms or 0.0)}</b>"
            f"{pct(other_ms or 0.0)}")


def _digits(median_ms: float) -> int:
    """Decimals that show the median to about four significant digits (at most 6: a microsecond-level call)."""
    import math

    if median_ms <= 0:
        return 3
    return max(1, min(6, 3 - math.floor(math.log10(median_ms))))


class AtenView(QtWidgets.QWidget):
    """ATen ops of one profiled call (tree) + the split of the median (bar)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        head = QtWidgets.QLabel("<b>ATen ops</b> (torch.profiler, one call)")
        lay.addWidget(head)
        self.split_label = QtWidgets.QLabel()
        self.split_label.setTextFormat(Qt.RichText)
        self.split_label.setWordWrap(True)
        self.split_label.setToolTip(REST_TIP)
        lay.addWidget(self.split_label)
        self.split_bar = TimeBar()
        lay.addWidget(self.split_bar)
        self.chain_label = QtWidgets.QLabel()
        self.chain_label.setWordWrap(True)
        self.chain_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.chain_label.setFont(QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.FixedFont))
        lay.addWidget(self.chain_label)
        self.tree = QtWidgets.QTreeWidget()
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["op", "time (µs)"])
        self.tree.setUniformRowHeights(True)
        self.tree.setRootIsDecorated(True)
        self.tree.setIndentation(10)
        self.tree.setTextElideMode(Qt.ElideRight)  # "aten::_convolution" stays readable from its start
        self.tree.header().setStretchLastSection(False)
        # The op names decide the first column's width (a horizontal scroll bar when the pane is narrow);
        # a squeezed Stretch column middle-elided them to "aten::_...olution".
        self.tree.header().setSectionResizeMode(0, QtWidgets.QHeaderView.ResizeToContents)
        self.tree.header().setSectionResizeMode(1, QtWidgets.QHeaderView.ResizeToContents)
        self.tree.setToolTip("The ops one profiled call dispatched to, nested as torch.profiler saw them; "
                             "greyed: allocation and view bookkeeping.")
        lay.addWidget(self.tree, 1)
        self.note_label = QtWidgets.QLabel()
        self.note_label.setWordWrap(True)
        self.note_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        lay.addWidget(self.note_label)
        self.set_result(None)

    # ------------------------------------------------------------------------------------------- API
    def set_result(self, r, doubtful: bool = False) -> None:
        """Show a runner Result's ATen ops (r.aten), chain (r.aten_ops), split and route note; None clears.
        doubtful: the profiled call was disturbed (its split carries `~`)."""
        self.tree.clear()
        ops = list(getattr(r, "aten", None) or []) if r is not None else []
        chain = getattr(r, "aten_ops", "") if r is not None else ""
        self.chain_label.setText(chain or NO_ATEN_TEXT)
        self.chain_label.setToolTip(chain)
        note = getattr(r, "route_note", "") if r is not None else ""
        compile_ms = getattr(r, "compile_ms", None) if r is not None else None
        if compile_ms is not None:
            note = (note + "; " if note else "") + f"one-off set-up {format_ms(compile_ms)} ms (not in the median)"
        self.note_label.setText(note)
        self.note_label.setVisible(bool(note))
        text = split_text(r.median_ms, r.onednn_ms, r.reorder_ms, r.other_ms, doubtful) if r is not None else ""
        self.split_label.setText(text)
        self.split_label.setVisible(bool(text))
        self.split_bar.setVisible(bool(text))
        if text:
            self.split_bar.set_segments([("oneDNN", r.onednn_ms, CONV_COLOUR),
                                         ("reorders", r.reorder_ms or 0.0, REORDER_COLOUR),
                                         ("the rest", r.other_ms or 0.0, OTHER_COLOUR)])
        self._fill(ops)

    def op_names(self) -> list[str]:
        """Every op shown in the tree, depth first (for tests and copy)."""
        out: list[str] = []

        def walk(item):
            for i in range(item.childCount()):
                c = item.child(i)
                out.append(c.text(0))
                walk(c)

        walk(self.tree.invisibleRootItem())
        return out

    # --------------------------------------------------------------------------------------- helpers
    def _fill(self, ops) -> None:
        grey = self.palette().color(QtGui.QPalette.PlaceholderText)
        stack: list[tuple[int, QtWidgets.QTreeWidgetItem]] = []
        for op in ops:
            while stack and stack[-1][0] >= op.depth:
                stack.pop()
            parent = stack[-1][1] if stack else self.tree.invisibleRootItem()
            item = QtWidgets.QTreeWidgetItem(parent, [op.name, f"{op.dur_us:.1f}"])
            item.setToolTip(0, f"{op.name}: {op.dur_us:.1f} µs, from {op.start_us:.1f} µs into the call")
            item.setTextAlignment(1, int(Qt.AlignRight | Qt.AlignVCenter))
            if op.name in BOOKKEEPING:
                item.setForeground(0, grey)
                item.setForeground(1, grey)
            elif "mkldnn" in op.name or "onednn" in op.name.lower():
                f = item.font(0)
                f.setBold(True)
                item.setFont(0, f)
                item.setBackground(0, QtGui.QColor(CONV_COLOUR.red(), CONV_COLOUR.green(), CONV_COLOUR.blue(), 55))
            stack.append((op.depth, item))
        self.tree.expandAll()
