"""The main window's menus and actions (File, Run, View, Edit): a mixin of MainWindow, which owns the slots."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence


class WindowMenus:
    """The menu bar and its actions; the slots are MainWindow's (and its other mixins')."""

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
        self.reset_settings_action = self._action(
            "Reset settings to defaults", lambda: self.reset_settings(), None,
            "Forget the saved options, theme, window layout and last problem (read from the settings file at "
            "start) and show the defaults.")
        quit_action = self._action("&Quit", self.close, "Ctrl+Q")
        for a in (self.open_action, self.save_action, self.baseline_action, None, self.export_action,
                  self.export_timeline_action, self.export_sweep_csv_action, self.export_timing_action,
                  self.export_summary_action, self.export_sweep_action,
                  self.export_roofline_action, self.screenshot_action, None, self.reset_settings_action, quit_action):
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
