"""Measure in a child process: the core's event generators (iter_run, iter_points) run in a separate
Python process and their events come back over a pipe.

Why: in one process the timing loop and the GUI share the GIL. Between two timed calls the loop needs
the GIL to read the clock, so a GUI redraw holding it lands inside a sample; and a worker doing pure
Python between paths (trace parsing, layouts) holds it while the window waits to repaint. A child
process has its own GIL: the window only reads a pipe, and the measurement only competes for cores.

The child is started once and reused (importing torch costs about a second). Cancel is a shared flag
the child reads after every timed call. Closing the parent kills the child if it does not stop in time;
everything that finished was already sent. A child that dies (a crash inside oneDNN, the OOM killer)
becomes a ChildDied error in the parent, never a hang.
"""

from __future__ import annotations

import multiprocessing as mp
import threading
import traceback
from typing import Iterator

from explorer.core.errors import ExplorerError, InputError, SpecError

_ERRORS = {"InputError": InputError, "SpecError": SpecError, "ExplorerError": ExplorerError}


class ChildDied(ExplorerError):
    """The measuring process ended without finishing the job (crashed or was killed)."""


def _jobs():
    from explorer.core.model import iter_model
    from explorer.core.runner import iter_run
    from explorer.core.sweep import iter_points

    return {"run": iter_run, "points": iter_points, "model": iter_model}


def _child_main(conn, flag, nice: int = 0) -> None:
    """The child's loop: one job at a time, every event sent as it is yielded."""
    import os
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C belongs to the parent, which cancels or kills us
    if nice:
        os.nice(nice)
    jobs = _jobs()
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return  # the parent is gone
        if msg[0] == "quit":
            return
        _, kind, args, kwargs = msg
        try:
            for ev in jobs[kind](*args, cancel=lambda: flag.value != 0, **kwargs):
                conn.send(("event", ev))
            conn.send(("done", None))
        except BaseException as e:  # noqa: BLE001 - every failure is reported to the parent
            field = getattr(e, "field", None)
            conn.send(("error", (type(e).__name__, str(e), field, traceback.format_exc())))


class ChildRunner:
    """A reusable measuring process. `iter(kind, *args, **kwargs)` yields the job's events in the parent."""

    def __init__(self, start_now: bool = False, nice: int = 0):
        self._ctx = mp.get_context("spawn")  # a fork of a process running Qt and OpenMP threads is unsafe
        self._proc = None
        self._conn = None
        self._flag = self._ctx.RawValue("b", 0)
        self._lock = threading.Lock()  # one job at a time
        self.nice = nice  # > 0: the child yields a core to the parent's GUI thread when both want it
        if start_now:
            self.start()

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.is_alive()

    def start(self) -> None:
        """Start the child if it is not running (about a second: it imports torch)."""
        if self.alive:
            return
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_child_main, args=(child, self._flag, self.nice), name="mkldnn-explorer-measure",
                                       daemon=True)
        self._proc.start()
        child.close()
        self._conn = parent

    def cancel(self) -> None:
        """Thread-safe: the child sees it after the current timed call."""
        self._flag.value = 1

    def iter(self, kind: str, *args, **kwargs) -> Iterator:
        with self._lock:
            self.start()
            self._flag.value = 0
            self._conn.send(("job", kind, args, kwargs))
            finished = False
            try:
                while True:
                    tag, payload = self._recv()
                    if tag == "event":
                        yield payload
                    elif tag == "done":
                        finished = True
                        return
                    else:
                        finished = True
                        name, msg, field, tb = payload
                        if name in _ERRORS:
                            raise _ERRORS[name](msg, field) if name != "ExplorerError" else ExplorerError(msg)
                        raise RuntimeError(f"{name}: {msg}\n--- in the measuring process ---\n{tb}")
            finally:
                if not finished:  # the consumer stopped early: cancel and drain, or kill the child
                    self._abandon()

    def _recv(self):
        while True:
            if self._conn.poll(0.1):  # waits without the GIL
                try:
                    return self._conn.recv()
                except (EOFError, OSError):
                    pass
            if not self.alive:
                code = self._proc.exitcode if self._proc is not None else None
                self._proc = None
                how = f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"
                raise ChildDied(f"the measuring process stopped unexpectedly ({how}); finished rows were kept.")

    def _abandon(self, timeout_s: float = 1.5) -> None:
        self.cancel()
        if not self._drain(timeout_s):
            self.kill()

    def _drain(self, timeout_s: float) -> bool:
        import time

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._conn.poll(0.05):
                try:
                    tag, _ = self._conn.recv()
                except (EOFError, OSError):
                    return False
                if tag in ("done", "error"):
                    return True
            elif not self.alive:
                return False
        return False

    def kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.join(2)
        self._proc = None

    def shutdown(self, timeout_s: float = 1.0) -> None:
        """Ask the child to quit; kill it if it is still busy after timeout_s."""
        if not self.alive:
            return
        self.cancel()
        try:
            self._conn.send(("quit",))
        except OSError:
            pass
        self._proc.join(timeout_s)
        if self._proc.is_alive():
            self.kill()
        self._proc = None
