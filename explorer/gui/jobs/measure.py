"""The window's measurements run in the measuring child processes of explorer.core.process.measuring.

The window never shares a GIL with the timing loop, and it asks for paced jobs: the child waits at each
burst boundary until the window has drawn that burst (see explorer.core.process.child), so the window's drawing
never lands inside a sample and the child needs no lower priority.
"""

from __future__ import annotations

from explorer.core.process.measuring import ack, cancel, in_child, kill, prestart, shutdown  # noqa: F401

IN_CHILD = in_child()


def events(kind: str, *args, cancel, allocator=None, **kwargs):
    from explorer.core.process import measuring

    return measuring.events(kind, *args, cancel=cancel, allocator=allocator, pace=IN_CHILD, in_process=not IN_CHILD,
                            **kwargs)


# True while the measuring process is timing a burst: the window's timers skip their redraws then (what
# arrived is drawn at the next burst boundary, while the child waits). Set by the worker threads.
_timing = False


def set_timing(on: bool) -> None:
    global _timing
    _timing = on


def may_draw() -> bool:
    """False while a burst is being timed: a timer-driven redraw now would take a core from a sample."""
    return not _timing


def paced_boundary(worker, emit_boundary) -> None:
    """In a worker thread, at a burst boundary: let the window draw (emit_boundary(event) queues that to
    the GUI thread, which sets the event when done), then let the measuring process go on."""
    import threading

    if not IN_CHILD:
        return
    done = threading.Event()
    emit_boundary(done)
    done.wait(0.5)  # a window that cannot draw in time does not hold the measurement up
    if not worker.cancelled:
        set_timing(True)
        ack()
