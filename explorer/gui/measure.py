"""Where the GUI's measurements run: in a child process by default (explorer.core.child).

The window then never shares a GIL with the timing loop: a redraw cannot land inside a sample, and
pure-Python work between paths cannot stall the event loop. One child serves every run and sweep (one
measurement at a time), started in the background when the window opens so the first Run is prompt.
Set MKLDNN_EXPLORER_IN_PROCESS=1 to measure in a thread of the GUI process instead (for comparison, and
for tests that patch the core in-process).
"""

from __future__ import annotations

import atexit
import os
import threading

from explorer.core.child import ChildRunner

IN_CHILD = os.environ.get("MKLDNN_EXPLORER_IN_PROCESS", "") != "1"
# Niceness of the measuring process: with torch on every core, a nice child lets the window's thread
# take a core the moment it has something to paint (see BENCHMARKS.md, GUI responsiveness).
NICE = int(os.environ.get("MKLDNN_EXPLORER_CHILD_NICE", "10"))

_child: ChildRunner | None = None
_lock = threading.Lock()


def child() -> ChildRunner:
    global _child
    with _lock:
        if _child is None:
            _child = ChildRunner(nice=NICE)
        return _child


def prestart() -> None:
    """Start the measuring process in the background (it imports torch: about a second)."""
    if IN_CHILD:
        threading.Thread(target=lambda: child().start(), name="mkldnn-explorer-prestart", daemon=True).start()


def events(kind: str, *args, cancel: threading.Event, **kwargs):
    """The events of a core job ("run": iter_run, "points": iter_points), measured per IN_CHILD."""
    if IN_CHILD:
        return child().iter(kind, *args, **kwargs)
    from explorer.core.model import iter_model
    from explorer.core.runner import iter_run
    from explorer.core.sweep import iter_points

    job = {"run": iter_run, "points": iter_points, "model": iter_model}[kind]
    return job(*args, cancel=cancel.is_set, **kwargs)


def cancel() -> None:
    """Thread-safe: the measuring process sees it after its current timed call."""
    if _child is not None:
        _child.cancel()


def kill() -> None:
    """End a measurement that does not stop in time (a long call, the f32 reference): rows finished so far
    were already received. The next job starts a fresh process."""
    if _child is not None:
        _child.kill()


def shutdown(timeout_s: float = 1.0) -> None:
    if _child is not None:
        _child.shutdown(timeout_s)


atexit.register(shutdown, 0.5)
