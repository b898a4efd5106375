"""Measure in a child process: the core's event generators (iter_run, iter_points) run in a separate
Python process and their events come back over a pipe.

Why: in one process the timing loop and the GUI share the GIL. Between two timed calls the loop needs
the GIL to read the clock, so a GUI redraw holding it lands inside a sample; and a worker doing pure
Python between paths (trace parsing, layouts) holds it while the window waits to repaint. A child
process has its own GIL: the window only reads a pipe, and the measurement only competes for cores.

The child is started once and reused (importing torch costs about a second), except for the `default`
allocator, whose figures need a fresh process's glibc state: that child is new for every job (and a run
under `default` is one job per path: explorer.core.process.measuring). It is
started with its allocator's environment (explorer.core.measure.allocator), which glibc and the loader read at
process start. Cancel is a shared flag the child reads after every timed call.

Paced jobs (the window's): the child stops at every burst boundary (each Samples event, ~50 ms of
timing) and waits until the parent acknowledges that the window has drawn it. The window therefore
never draws while a sample is taken, and the measuring process needs no lower priority. The harness
leaves those pauses out of the budget and out of the interference meter. Closing the parent kills the child if it does not stop in time;
everything that finished was already sent. A child that dies (a crash inside oneDNN, the OOM killer)
becomes a ChildDied error in the parent, never a hang.
"""

from __future__ import annotations

import multiprocessing as mp
import threading
import traceback
from typing import Iterator

from explorer.core.errors import ExplorerError, Fault, InputError, SpecError

_ERRORS = {"InputError": InputError, "SpecError": SpecError, "ExplorerError": ExplorerError}
ACK_TIMEOUT_S = 0.5  # a window that does not answer in time lets the measurement go on (it never stalls)
_env_lock = threading.Lock()  # os.environ is changed around a spawn: one spawn at a time


class ChildDied(Fault):
    """The measuring process ended without finishing the job (crashed or was killed): a fault, not bad input."""


def jobs_by_kind():
    from explorer.core.jobs.run import iter_run
    from explorer.core.jobs.sweep import iter_points
    from explorer.core.measure.machine import iter_peak
    from explorer.core.model.job import iter_model

    return {"run": iter_run, "points": iter_points, "peak": iter_peak, "model": iter_model}


def _wait_ack(conn, flag, seq: int) -> None:
    """Paused at a burst boundary until the parent acknowledges `seq` (or cancels, or time runs out)."""
    import time

    deadline = time.monotonic() + ACK_TIMEOUT_S
    while flag.value == 0:
        left = deadline - time.monotonic()
        if left <= 0 or not conn.poll(min(left, 0.05)):
            if left <= 0:
                return
            continue
        msg = conn.recv()
        if msg[0] == "ack" and msg[1] == seq:
            return


def _child_main(conn, flag, nice: int = 0) -> None:
    """The child's loop: one job at a time, every event sent as it is yielded."""
    import os
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C belongs to the parent, which cancels or kills us
    if nice:
        os.nice(nice)
    jobs = jobs_by_kind()
    from explorer.core.jobs.events import Samples

    seq = 0
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return  # the parent is gone
        if msg[0] == "quit":
            return
        if msg[0] != "job":
            continue  # a late acknowledgement of a burst that already went on
        _, kind, args, kwargs, paced = msg
        try:
            for ev in jobs[kind](*args, cancel=lambda: flag.value != 0, **kwargs):
                if paced and isinstance(ev, Samples):
                    seq += 1
                    conn.send(("event", ev, seq))
                    _wait_ack(conn, flag, seq)
                else:
                    conn.send(("event", ev, None))
            conn.send(("done", None))
        except (BrokenPipeError, ConnectionResetError, EOFError):
            return  # the parent is gone (killed, or a cluster worker that was): nobody to tell, no traceback, just end
        except BaseException as e:  # noqa: BLE001 - every failure is reported to the parent
            field = getattr(e, "field", None)
            try:
                conn.send(("error", (type(e).__name__, str(e), field, traceback.format_exc())))
            except OSError:
                return


class ChildRunner:
    """A reusable measuring process. `iter(kind, *args, **kwargs)` yields the job's events in the parent."""

    def __init__(self, start_now: bool = False, nice: int = 0, env: dict | None = None, fresh_per_job: bool = False):
        self._ctx = mp.get_context("spawn")  # a fork of a process running Qt and OpenMP threads is unsafe
        self._proc = None
        self._conn = None
        self._flag = self._ctx.RawValue("b", 0)
        self._lock = threading.Lock()  # one job at a time
        self._pending_ack = None
        self.nice = nice
        self.env = dict(env or {})  # environment changes for the child (None: variable removed)
        self.fresh_per_job = fresh_per_job
        self._jobs_done = 0
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
        with _env_lock:
            import os

            import sys

            saved = {k: os.environ.get(k) for k in self.env}
            warnoptions = list(sys.warnoptions)
            try:
                for k, v in self.env.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
                if "PYTHONWARNINGS" in self.env:  # spawn passes sys.warnoptions on as -W: those go with it
                    sys.warnoptions[:] = []
                self._proc.start()  # spawn: the new interpreter starts with this environment
            finally:
                sys.warnoptions[:] = warnoptions
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
        child.close()
        self._conn = parent
        self._jobs_done = 0

    def cancel(self) -> None:
        """Thread-safe: the child sees it after the current timed call."""
        self._flag.value = 1

    @property
    def cancelled(self) -> bool:
        """Whether the last job was cancelled (the flag stays set until the next job starts)."""
        return self._flag.value != 0

    def ack(self) -> None:
        """The parent has shown the last burst: the paused child may time the next one (thread-safe)."""
        seq, self._pending_ack = self._pending_ack, None
        if seq is not None and self._conn is not None:
            try:
                self._conn.send(("ack", seq))
            except OSError:
                pass

    def iter(self, kind: str, *args, pace: bool = False, **kwargs) -> Iterator:
        with self._lock:
            if self.fresh_per_job and self._jobs_done and self.alive:
                self.shutdown()  # a fresh process for every job: the allocator state of a new script
            self.start()
            self._flag.value = 0
            self._pending_ack = None
            self._conn.send(("job", kind, args, kwargs, pace))
            self._jobs_done += 1
            finished = False
            try:
                while True:
                    msg = self._recv()
                    tag, payload = msg[0], msg[1]
                    if tag == "event":
                        self._pending_ack = msg[2]
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
                    tag = self._conn.recv()[0]
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


class ChildPool:
    """One measuring process per (allocator, ISA cap) setting, each started with that setting's environment."""

    def __init__(self, nice: int = 0):
        self.nice = nice
        self._children: dict[str, ChildRunner] = {}
        self._lock = threading.Lock()

    def get(self, allocator: str, isa: str | None = None) -> ChildRunner:
        from explorer.core.measure.allocator import env_for, fresh_per_run
        from explorer.core.measure.isa import env_for as isa_env
        from explorer.core.measure.user_env import measuring_env

        with self._lock:
            c = self._children.get((allocator, isa))
            if c is None:
                c = ChildRunner(nice=self.nice, env={**measuring_env(), **env_for(allocator), **isa_env(isa)},
                                fresh_per_job=fresh_per_run(allocator))
                self._children[(allocator, isa)] = c
            return c

    def children(self) -> list[ChildRunner]:
        with self._lock:
            return list(self._children.values())

    def cancel(self) -> None:
        for c in self.children():
            c.cancel()

    def ack(self) -> None:
        for c in self.children():
            c.ack()

    def kill(self) -> None:
        for c in self.children():
            c.kill()

    def shutdown(self, timeout_s: float = 1.0) -> None:
        for c in self.children():
            c.shutdown(timeout_s)
