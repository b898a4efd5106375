"""The Run table's selection and its inspectors: the selected row's layouts and trace, the table's columns and
spans, copying rows; a mixin of MainWindow."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from explorer.gui.run.results_model import RESULT_ROLE, selection_tsv


class WindowInspector:
    """The selected row's inspectors and the table's look."""

    _COLUMN_CAPS = {"status": 110, "kernel": 230, "src / wei / dst": 220, "spec": 240, "error": 320,
                    "stored in / wei / out": 200, "fresh script": 420}

    def _fit_columns(self) -> None:
        """Every column as wide as its header and its values (capped; never the path names, which must not
        elide, nor a header such as "vs baseline"). A row that did not run spans its reason over the numbers."""
        from PySide6.QtGui import QFont, QFontMetrics

        from explorer.core.paths.base import PATHS
        from explorer.gui.run.results_model import REASON_COLUMN

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
        self._show_key_columns()

    KEY_COLUMNS = 5  # path, status, median, vs baseline, GFLOP/s: what the table must show without scrolling
    DETAIL_MIN_W = 360  # the layouts / trace beside the table keep at least this

    def key_columns_width(self) -> int:
        """The width the table needs to show its key columns whole (its frame and scroll bar included)."""
        t = self.table
        cols = sum(t.columnWidth(c) for c in range(min(self.KEY_COLUMNS, self.proxy.columnCount())))
        return cols + t.verticalScrollBar().sizeHint().width() + 2 * t.frameWidth() + 2

    def _show_key_columns(self) -> None:
        """Beside the layouts, the table widens (the layouts narrow) until its key columns show."""
        split = self.bottom_split
        if split.orientation() != Qt.Horizontal:
            return  # stacked: the table has the whole width
        sizes = split.sizes()
        total = sum(sizes)
        need = min(self.key_columns_width(), total - self.DETAIL_MIN_W)
        if len(sizes) == 2 and total > 0 and sizes[0] < need:
            split.setSizes([need, total - need])

    def _update_spans(self, *_) -> None:
        """A row that did not run shows torch's reason across the number columns (rows move when sorted)."""
        from explorer.gui.run.results_model import REASON_COLUMN

        self.table.clearSpans()
        n = self.proxy.columnCount() - REASON_COLUMN
        for row in range(self.proxy.rowCount()):
            r = self.proxy.data(self.proxy.index(row, 0), RESULT_ROLE)
            if r is not None and r.status != "ok" and r.error and n > 1:
                self.table.setSpan(row, REASON_COLUMN, 1, n)

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
        nolayouts = self.session.layouts_missing(r)  # a reopened session's rows carry no layouts: say so
        ph = getattr(self.layout_view, "placeholder", None)
        if ph is not None:
            ph.setText(why or nolayouts or self.layout_view.PLACEHOLDER)
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
