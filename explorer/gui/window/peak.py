"""The machine peak in the main window: one Peaks object in the session model (explorer.core.session.state),
cached or measured in the measuring process, which the Run table, the summary and the Roofline all read; a
mixin of MainWindow."""

from __future__ import annotations

from explorer.gui.jobs.worker import CallWorker


def default_threads() -> int:
    """torch's default thread count: what the measuring process uses when the panel says auto."""
    import torch

    return torch.get_num_threads()


class WindowPeak:
    """The window's peak: read and measured here, held once in the session (`self.session.peaks`)."""

    @property
    def peaks(self) -> dict:
        """threads -> machine.Peak: the session's one Peaks object's table (not a copy)."""
        return self.session.peaks.by_threads

    def _load_peak(self) -> None:
        """The cached peaks for the thread counts of the rows shown (and the panel's), never measured here."""
        threads = {r.threads for r in self.all_results() if getattr(r, "threads", None)}
        threads.add(self.peak_threads() or default_threads())
        self._cached_peaks(threads)
        self._apply_peaks()

    def _cached_peaks(self, threads) -> None:
        from explorer.core.measure import machine
        from explorer.core.session.state import PeakMeasured

        for t in threads:
            if t in self.session.peaks:
                continue
            try:
                p = machine.peak(threads=int(t), allow_measure=False)
            except Exception:  # noqa: BLE001 - a cache problem only hides % of peak
                p = None
            if p is not None:
                self.session.apply(PeakMeasured(p))  # the views follow (_apply_peaks)

    def peak_threads(self) -> int | None:
        """The thread count the views judge against: the Run rows' (most common), else the panel's."""
        if self.session.results:
            return self.session.peak_threads()
        return self.panel.options().get("threads") or None

    def _apply_peaks(self) -> None:
        """Every view reads the session's Peaks: the table at each row's threads, the summary and the Roofline
        at the Run rows' threads."""
        peaks = self.session.peaks
        t = self.peak_threads() or default_threads()
        self.model.set_peaks(peaks)
        self.summary.set_peaks(peaks, t)
        p = peaks.at(t)
        if p is not None:
            bf = f", bf16 {p.bf16_gflops:.0f}" if p.bf16_gflops else ""
            self.peak_action.setToolTip(f"Measured peak at {p.threads} threads: fp32 {p.fp32_gflops:.0f}{bf} "
                                        f"GFLOP/s ({p.measured_at}).")
        # The Roofline reads the same Peaks (at self.peak_threads()) and follows the session's peaks itself.

    def measure_peak(self) -> None:
        if self.running or (self.peak_worker and self.peak_worker.running) or getattr(self, "_sweeping", False):
            return
        import threading

        from explorer.gui.jobs import measure

        threads = self.peak_threads()

        def job():
            # In the measuring process, like every measurement (the window's GIL stays out of it).
            out = None
            for ev in measure.events("peak", threads, remeasure=True, cancel=threading.Event()):
                out = ev
            return out

        self.peak_worker = CallWorker(job, self)
        self.peak_worker.succeeded.connect(self._on_peak)
        self.peak_worker.failed.connect(lambda m: self.status_label.setText(f"Peak measurement failed: {m}"))
        self.peak_worker.finished.connect(lambda: self._set_running(False))
        self.peak_worker.finished.connect(self._peak_done)
        self._set_running(False)
        self.run_action.setEnabled(False)
        self.panel.run_button.setEnabled(False)
        self.peak_action.setEnabled(False)
        self.roofline_view.set_measuring(True)
        where = f"{threads} threads" if threads else "the default threads"
        self.status_label.setText(f"Measuring the machine's peak at {where} in the measuring process (about 3 s)…")
        self.peak_worker.start()

    def _peak_done(self) -> None:
        self.roofline_view.set_measuring(False)

    def _on_peak(self, p) -> None:
        from explorer.core.session.state import PeakMeasured

        if p:
            self.session.apply(PeakMeasured(p))
            self.status_label.setText(f"Peak at {p.threads} threads: fp32 {p.fp32_gflops:.0f} GFLOP/s"
                                      + (f", bf16 {p.bf16_gflops:.0f} GFLOP/s" if p.bf16_gflops else "")
                                      + " (the Run table, the summary and the Roofline use it).")
