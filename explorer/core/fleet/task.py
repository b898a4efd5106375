"""What a Dask worker runs: one problem over the paths, in this project's own measuring process.

The worker measures exactly as a local run does (explorer.core.process.measuring: a fresh interpreter with
the allocator's environment, the trust meter on every loop), and returns the finished rows as CSV cells
with the host columns, so only strings cross the network.
"""

from __future__ import annotations

import multiprocessing
import os

# The ISA caps a run may carry to the workers (read at the measuring process's start).
ISA_ENV = ("ONEDNN_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY", "ONEDNN_DEFAULT_FPMATH_MODE")


def isa_env() -> dict:
    """The caller's ISA settings, to be set the same way on every worker."""
    return {k: os.environ[k] for k in ISA_ENV if k in os.environ}


def _use_env(env: dict) -> None:
    """Set the ISA variables for the measuring process; a running one with other settings is restarted."""
    from explorer.core.process import measuring

    changed = False
    for k in ISA_ENV:
        want = env.get(k)
        if os.environ.get(k) != want:
            changed = True
            if want is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = want
    if changed:
        measuring.shutdown()


def measure_point(point, opts, env: dict) -> list[dict]:
    """Run one SweepPoint (a batch line or a sweep point) over opts.paths; its rows with the host columns."""
    from explorer.core.fleet.hosts import worker_facts
    from explorer.core.jobs.events import PathFinished, PointSkipped
    from explorer.core.process import measuring

    # A worker under a Nanny is a daemonic process, and daemonic processes may not start children; the
    # measuring process is this worker's child, ended by it (atexit) or on its own when the worker is gone.
    if multiprocessing.current_process().daemon:
        multiprocessing.current_process().daemon = False
    _use_env(env)
    facts = worker_facts()
    rows: list[dict] = []
    # The run's ISA cap too (it picks the measuring process, as locally): without it a worker ran uncapped.
    for ev in measuring.events("points", [point], opts, allocator=opts.allocator, isa=opts.isa):
        if isinstance(ev, PathFinished):
            rows.append({**ev.result.row(), **facts})
        elif isinstance(ev, PointSkipped):
            rows.append({**ev.row, **facts})
    return rows
