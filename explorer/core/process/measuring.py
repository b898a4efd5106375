"""Where measurements run: in a measuring child process per allocator and ISA setting (explorer.core.process.child).

The CLI and the window both measure here, so their figures come from the same kind of process: a fresh
interpreter started with the chosen allocator's environment, its own GIL, nothing else inside it. The
window asks for paced jobs (the child waits at each burst boundary until the window has drawn); the CLI
does not. MKLDNN_EXPLORER_IN_PROCESS=1 measures in the calling process instead (tests that patch the
core in-process, comparisons); the allocator is then whatever this process was started with.
"""

from __future__ import annotations

import atexit
import os
import threading

from explorer.core.errors import InputError
from explorer.core.measure.allocator import DEFAULT_ALLOCATOR, env_for, fresh_per_run
from explorer.core.measure.isa import validate as check_isa

from explorer.core.process.child import ChildPool


def in_child() -> bool:
    return os.environ.get("MKLDNN_EXPLORER_IN_PROCESS", "") != "1"


_pool: ChildPool | None = None
_lock = threading.Lock()


def pool() -> ChildPool:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ChildPool()
        return _pool


def prestart(allocator: str = DEFAULT_ALLOCATOR) -> None:
    """Start the measuring process in the background (it imports torch: about a second)."""
    if in_child():
        threading.Thread(target=lambda: pool().get(allocator).start(), name="mkldnn-explorer-prestart",
                         daemon=True).start()


def events(kind: str, *args, cancel=None, allocator: str | None = None, pace: bool = False,
           in_process: bool | None = None, isa: str | None = None, **kwargs):
    """The events of a core job ("run": iter_run, "points": iter_points), measured in the child unless
    in_process (default: MKLDNN_EXPLORER_IN_PROCESS). `isa` caps oneDNN and ATen in that child
    (explorer.core.measure.isa). Raises InputError at once for an allocator or ISA that cannot be had here."""
    allocator = allocator or DEFAULT_ALLOCATOR
    env_for(allocator)  # one sentence, before anything starts, when e.g. jemalloc is not installed
    isa = check_isa(isa)
    if in_process is None:
        in_process = not in_child()
    if in_process and (isa or (kind == "points" and any(getattr(p, "isa", None) for p in args[0]))):
        raise InputError("an ISA cap needs the measuring process (oneDNN reads it at process start); "
                         "unset MKLDNN_EXPLORER_IN_PROCESS.", "isa")
    if not in_process:
        if kind == "points" and _mixed_settings(args[0], allocator, isa):
            return _routed_points(args[0], args[1], allocator, isa, pace, **kwargs)
        if kind == "run" and fresh_per_run(allocator) and len(args) > 1 and len(getattr(args[1], "paths", ())) > 1:
            return _fresh_per_path(args[0], args[1], args[2:], allocator, isa, pace, **kwargs)
        return pool().get(allocator, isa).iter(kind, *args, pace=pace, **kwargs)

    from explorer.core.process.child import jobs_by_kind

    job = jobs_by_kind()[kind]  # the same jobs as the measuring process runs
    flag = cancel.is_set if isinstance(cancel, threading.Event) else cancel
    return job(*args, cancel=flag, **kwargs)


def _setting(p, allocator: str, isa: str | None) -> tuple[str, str | None]:
    """The (allocator, ISA cap) a sweep point runs with: its own where it varies them, else the run's."""
    return getattr(p, "allocator", None) or allocator, getattr(p, "isa", None) or isa


def _fresh_per_path(spec, opts, rest, allocator: str, isa: str | None, pace: bool, **kwargs):
    """A run under `default`: every path in a measuring process of its own, as each would be in a user's
    script (one path's buffers move glibc's thresholds for the next). Events read as one run."""
    import dataclasses

    from explorer.core.jobs.events import PathFinished, PathStarted

    child = pool().get(allocator, isa)  # fresh_per_job: a new process for every job
    for i, path in enumerate(opts.paths):
        finished = False
        for ev in child.iter("run", spec, dataclasses.replace(opts, paths=(path,)), *rest, pace=pace, **kwargs):
            if isinstance(ev, PathStarted):
                ev = dataclasses.replace(ev, index=i, total=len(opts.paths))
            finished = finished or isinstance(ev, PathFinished)
            yield ev
        if child.cancelled or not finished:
            return  # cancelled (or the run ended early): no further path starts


def _mixed_settings(points, allocator: str, isa: str | None) -> bool:
    return any(_setting(p, allocator, isa) != (allocator, isa) for p in points)


def _routed_points(points, opts, default: str, default_isa: str | None, pace: bool, **kwargs):
    """A sweep over allocators or ISAs: consecutive points of one setting run in that setting's process; the
    events read as one sweep (one SweepStarted and SweepFinished, progress over all the points)."""
    import dataclasses

    from explorer.core.jobs.events import SweepFinished, SweepProgress, SweepStarted

    groups: list[tuple[tuple[str, str | None], list]] = []
    for p in points:
        a = _setting(p, default, default_isa)
        if groups and groups[-1][0] == a:
            groups[-1][1].append(p)
        else:
            groups.append((a, [p]))
    total = len(points)
    base = {"done": 0, "skipped": 0, "rows": 0}
    cancelled = False
    last = None
    for gi, ((alloc, isa), group) in enumerate(groups):
        later = sum(len(g) for _, g in groups[gi + 1:])
        gopts = dataclasses.replace(opts, allocator=alloc, isa=isa)
        for ev in pool().get(alloc, isa).iter("points", group, gopts, pace=pace, **kwargs):
            if isinstance(ev, SweepStarted):
                if gi == 0:
                    yield dataclasses.replace(ev, points=list(points), total=total,
                                              runnable=sum(1 for p in points if not p.skipped))
                continue
            prog = getattr(ev, "progress", None)
            if prog is not None:
                per_point = prog.elapsed_s / prog.done if prog.done else None
                eta = (prog.eta_s or 0.0) + later * per_point if per_point is not None else prog.eta_s
                prog = dataclasses.replace(prog, done=prog.done + base["done"], total=total,
                                           skipped=prog.skipped + base["skipped"], rows=prog.rows + base["rows"], eta_s=eta)
                ev = dataclasses.replace(ev, progress=prog)
                last = prog
            if isinstance(ev, SweepFinished):
                cancelled = ev.cancelled
                break
            yield ev
        if last is not None:
            base = {"done": last.done, "skipped": last.skipped, "rows": last.rows}
        if cancelled:
            break
    yield SweepFinished(last or SweepProgress(0, total, 0, 0, 0.0, None), cancelled)


def ack() -> None:
    """The window has drawn the last burst: the paused measuring process goes on (thread-safe)."""
    if _pool is not None:
        _pool.ack()


def cancel() -> None:
    """Thread-safe: the measuring process sees it after its current timed call."""
    if _pool is not None:
        _pool.cancel()


def kill() -> None:
    """End a measurement that does not stop in time; rows finished so far were already received."""
    if _pool is not None:
        _pool.kill()


def shutdown(timeout_s: float = 1.0) -> None:
    if _pool is not None:
        _pool.shutdown(timeout_s)


def _shutdown_at_exit() -> None:
    """The atexit shutdown, deaf to Ctrl+C: the answer is given and every row kept, so a Ctrl+C while the
    measuring process is joined (up to half a second) would only print "Exception ignored in atexit callback"
    with a traceback (seen under load, when the signal came before the command line's own guard)."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        except (ValueError, OSError):  # an embedding interpreter that owns its signals
            pass
    try:
        shutdown(0.5)
    except KeyboardInterrupt:  # one already on its way when the handler changed
        pass


atexit.register(_shutdown_at_exit)
