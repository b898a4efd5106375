"""The main window's session glue: the views follow the session model through the bridge, and a session file
is saved from it and reopened into it whole; a mixin of MainWindow."""

from __future__ import annotations

from explorer.core.errors import ExplorerError


class WindowSession:
    """Session files and the views' subscriptions to the session model."""

    # ---- the views follow the session ----------------------------------------------------------------
    def _connect_session(self) -> None:
        b = self.bridge
        b.results_changed.connect(self._on_session_results)
        b.peaks_changed.connect(lambda _p: self._apply_peaks())
        b.baseline_changed.connect(self._on_session_baseline)
        b.spec_changed.connect(self._on_session_spec)
        b.options_changed.connect(self._on_session_options)

    def _on_session_results(self, change) -> None:
        kind, payload = change
        if kind == "added":
            self._on_result_added(payload)
            return
        if kind == "verified":
            self.model.changed(payload)  # its "fresh script" cell; the selection stays
            return
        self.model.reshow()  # a new run, or a reopened session: the table shows the session's rows afresh
        self._update_quality()
        self._fit_columns()

    def _on_session_baseline(self, path: str) -> None:
        if path and self.summary.baseline != path:
            self.summary.set_baseline(path)  # emits baseline_changed, which sets the session again: a no-op
        self.model.set_baseline(path or self.summary.baseline)

    def _on_session_spec(self, spec) -> None:
        if spec is not None and spec != self.panel.spec:
            self.panel.set_spec(spec)

    def _on_session_options(self, o: dict) -> None:
        self.panel.set_options(o.get("paths"), o.get("threads", 0) or 0, o.get("budget_ms"), o.get("trace"),
                               o.get("allocator"), o["isa"] if "isa" in o else ...)

    # ---- session files --------------------------------------------------------------------------------
    def session_options(self) -> dict:
        """The options the Run rows were measured with (the panel's only before any run)."""
        s = self.session
        o = dict(s.run_options) if (s.run_options and s.results) else self.panel.options()
        o["baseline"] = self.summary.baseline
        return o

    def save_session(self, path: str | None = None, ask: bool = True) -> bool:
        """The session model, whole (Run rows, sweep, model report, options, baseline), as a session file."""
        s = self.session
        spec = (s.run_spec if s.results else None) or self.panel.spec or s.run_spec
        if spec is None:
            self._error_box("Cannot save", "The spec is not valid; fix it before saving the session.")
            return False
        if path is None:
            path = self._ask_path("Save session", "MKLDNN Explorer session (*.json)", "session.json")
            if not path:
                return False
        elif ask and not self._confirm_overwrite(path):
            return False
        # What the panel shows now is the session's spec and options (read here, not copied on every edit).
        s.spec, s.options, s.baseline = self.panel.spec or spec, self.panel.options(), self.summary.baseline
        s.window = self._window_part()
        try:
            s.save(path)
        except (OSError, ValueError) as e:
            self._error_box("Save failed", f"Cannot save the session to {path}: {e}.")
            return False
        self.status_label.setText(f"Saved the session to {path}.")
        return True

    def _window_part(self) -> dict:
        """The window's own part of the session: the selected tab, Compare's baselines and its pair."""
        bv = self.baseline_view
        return {"tab": self.tabs.tabText(self.tabs.currentIndex()),
                "baselines": [{"label": k, "rows": rows} for k, rows in bv.baselines.items()],
                "pair": [bv.a_combo.currentText(), bv.b_combo.currentText()]}

    def _show_window_part(self, part: dict) -> None:
        """A reopened session's window part: its baselines replace Compare's, its tab is selected."""
        bv = self.baseline_view
        bv.clear()
        for b in part.get("baselines") or []:
            bv.add_rows(b["rows"], b["label"])
        pair = part.get("pair")
        if pair and pair[0] in bv.baselines:
            bv.set_pair(*pair)
        names = [self.tabs.tabText(i) for i in range(self.tabs.count())]
        if part.get("tab") in names:
            self.tabs.setCurrentIndex(names.index(part["tab"]))

    def open_session(self, path: str | None = None) -> bool:
        """Reopen a session file into the session model; every view follows it (spec, options, rows, sweep,
        model report, baseline)."""
        from explorer.core.session.store import load_session

        if self.running:
            return False
        if path is None:
            path = self._ask_path("Open session", "MKLDNN Explorer session (*.json);;All files (*)", "", save=False)
            if not path:
                return False
        try:
            stored = load_session(path)
        except ExplorerError as e:
            self._error_box("Cannot open the session", str(e))
            return False
        self.timing.clear()
        self.summary.clear()
        self.session.errors.clear()
        self.session.restore(stored)
        for r in stored.results:
            self.summary.set_result(r)
            if r.samples_ms is not None and len(r.samples_ms):
                self.timing.set_samples(r.path, r.samples_ms)
        self.timing.redraw()
        if self.session.errors:  # a view could not follow (the Run rows still open)
            self.status_label.setText(self.session.errors[-1])
        ok = [r for r in stored.results if r.status == "ok"]
        if ok:
            self.select_path(ok[0].path)
        self._show_window_part(self.session.window)
        nsweep = len(stored.sweep["items"]) if stored.sweep else 0
        extra = (f" and {nsweep} sweep rows" if nsweep else "") + (", a model report" if stored.model else "")
        o = self.session.options
        isa = (f" The rows were measured with the ISA cap {o['isa']}, which this CPU does not have: the ISA field "
               "keeps its choice." if "isa" in o and self.panel.options()["isa"] != o["isa"] else "")
        self.status_label.setText(f"Opened {path}: {len(stored.results)} rows{extra}"
                                  f" (layouts are not stored: run again to see them).{isa}")
        return True
