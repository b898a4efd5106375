"""The one bridge from the Qt-free session model (explorer.core.session.state) to the window's views.

SessionBridge subscribes to every aspect of a SessionState and re-emits each change as a Qt signal (the
evented-model idea of napari: the model stays plain Python, the views connect to signals). Views keep no copy
of the state: they read `bridge.session` when a signal tells them it changed.

    bridge = SessionBridge(session, parent)
    bridge.session                              the SessionState
    bridge.<aspect>_changed(object change)      one signal per aspect (spec, options, results, sweep, model,
                                                peaks, baseline, job); `change` is what the model passed
    bridge.changed(str aspect, object change)   every change, with its aspect's name

The session's callbacks run in the thread that changed it; the window changes it only in the GUI thread (the
workers' signals arrive there), so the signals are emitted directly.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from explorer.core.session.state import ASPECTS, SessionState


class SessionBridge(QObject):
    changed = Signal(str, object)
    spec_changed = Signal(object)
    options_changed = Signal(object)
    results_changed = Signal(object)
    sweep_changed = Signal(object)
    model_changed = Signal(object)
    peaks_changed = Signal(object)
    baseline_changed = Signal(object)
    job_changed = Signal(object)

    def __init__(self, session: SessionState | None = None, parent=None):
        super().__init__(parent)
        self.session = session if session is not None else SessionState()
        self._unsubscribe = self.session.subscribe("*", self._relay)

    def _relay(self, aspect: str, change) -> None:
        getattr(self, f"{aspect}_changed").emit(change)
        self.changed.emit(aspect, change)

    def detach(self) -> None:
        """Stop following the session (the views keep what they drew)."""
        self._unsubscribe()


assert all(hasattr(SessionBridge, f"{a}_changed") for a in ASPECTS)
