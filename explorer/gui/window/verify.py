"""The Run tab's "Check in a fresh script": the selected row's standalone torch.utils.benchmark script written,
run in a fresh process off the GUI thread (a CallWorker, as the peak), and its median and ratio shown in the
row's "fresh script" column through the session (RowVerified); a mixin of MainWindow.
"""

from __future__ import annotations

from PySide6.QtWidgets import QPushButton

from explorer.gui.jobs.worker import CallWorker


class WindowVerify:
    """One fresh-script check at a time, of the table's current row."""

    def _make_verify_button(self) -> QPushButton:
        self.verify_worker = None
        b = QPushButton("Check in a fresh script")
        b.setObjectName("verifyButton")
        b.setToolTip("Write the selected row's standalone torch.utils.benchmark script (the printed allocator variables, "
                     "the same tensors, dtype and threads), run it in a new process and show its median beside the row; "
                     "beyond ±10% the row says it was not reproduced. The script is kept for you to rerun.")
        b.setEnabled(False)
        b.clicked.connect(self.verify_selected)
        self.verify_button = b
        return b

    def _update_verify_button(self, *_):
        busy = self.running or (self.verify_worker is not None and self.verify_worker.running) \
            or getattr(self, "_sweeping", False)
        r = self.selected_result()
        self.verify_button.setEnabled(not busy and r is not None and r.status == "ok")

    def verify_selected(self) -> bool:
        """Start the check of the current row; False when there is none or something is measuring."""
        from explorer.core.process.verify import check, default_folder, verifiable

        r = self.selected_result()
        if r is None or self.running or (self.verify_worker is not None and self.verify_worker.running) \
                or getattr(self, "_sweeping", False):
            return False
        why = verifiable(r)
        if why:
            self.status_label.setText(f"No fresh-script check: {why}.")
            return False
        folder = default_folder(self.csv_path)
        budget_s = (self.session.run_options.get("budget_ms") or 500) / 1e3 if self.session.run_options else 0.5
        self.verify_worker = CallWorker(lambda: check(r, folder, min_run_time=budget_s), self)
        self.verify_worker.succeeded.connect(lambda v: self._on_verified(r, v))
        self.verify_worker.failed.connect(lambda m: self.status_label.setText(f"Fresh-script check failed: {m}"))
        self.verify_worker.finished.connect(self._update_verify_button)
        self.verify_button.setEnabled(False)
        self.status_label.setText(f"Checking {r.path} in a fresh script ({folder})…")
        self.verify_worker.start()
        return True

    def _on_verified(self, r, v) -> None:
        from explorer.core.session.state import RowVerified

        self.session.apply(RowVerified(r, v))  # the table follows (session_sync: "verified")
        self._show_verified_cell(r)
        if v.median_ms is None:
            self.status_label.setText(f"{r.path}: {v.note}.")
        elif v.note:
            self.status_label.setText(f"{r.path}: {v.note}. Script: {v.script}")
        else:
            self.status_label.setText(f"{r.path}: reproduced in a fresh script, {v.median_ms:.4g} ms "
                                      f"({v.ratio:.2f}x). Script: {v.script}")

    def _show_verified_cell(self, r) -> None:
        """Scroll the row's "fresh script" cell into view: the column sits right of the narrow table's first ones."""
        from explorer.gui.run.results_model import HEADERS, RESULT_ROLE

        col = HEADERS.index("fresh script")
        for row in range(self.proxy.rowCount()):
            if self.proxy.data(self.proxy.index(row, 0), RESULT_ROLE) is r:
                self.table.scrollTo(self.proxy.index(row, col))
                return
