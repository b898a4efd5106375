"""The main window's files: exports (CSV, timeline, charts, screenshot), baselines and the file dialogs; a
mixin of MainWindow."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QMessageBox

from explorer.core.errors import ExplorerError
from explorer.gui.common.export import export_plot
from explorer.gui.common.inputs import ask_save_path


class WindowFiles:
    """Exports and file dialogs of the window."""

    def _ask_path(self, caption: str, filters: str, default: str, save: bool = True) -> str | None:
        start = str(Path(self._last_dir()) / default)
        if save:
            # Qt's dialog asks before replacing an existing file; the filter's extension is added when none was typed.
            path = ask_save_path(self, caption, start, filters)
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
        except (OSError, ExplorerError) as e:
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
        except (OSError, ExplorerError) as e:
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
        from explorer.core.files import commit_file, refuse_special

        try:
            refuse_special(path)
            pm = self.grab()
            tmp = f"{path}.part.png"
            if not pm.save(tmp, "PNG"):
                self._error_box("Screenshot failed", f"Cannot write {path}.")
                return False
            commit_file(tmp, path)  # the output layer's rules: never over a link, device or FIFO
        except (OSError, ExplorerError) as e:
            self._error_box("Screenshot failed", f"Cannot write {path}: {getattr(e, 'strerror', None) or e}")
            return False
        return True

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
            self.roofline_view.redraw()  # the session's rows now, even when the tab was never shown
            return self.roofline_view.export(path)
        return self.sweep_view is not None and self.sweep_view.export_chart(path)
