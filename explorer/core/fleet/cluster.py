"""Problems measured on a Dask cluster (dask.distributed), results streamed back as they finish.

Each problem is one task that needs the worker resource `measure` (a worker is started with
`--resources measure=1`, so one measurement runs at a time on it; a worker per machine keeps measurements
from disturbing each other). Spread: each problem once, on whichever worker is free; the scheduler runs a
lost worker's task again elsewhere. Every host: each problem pinned to every worker (`workers=[addr]`);
a worker that leaves takes its pending problems with it, and they are reported missing for that host.
Closing the generator (Ctrl+C in the caller) cancels every task still on the cluster. A cluster left with no
worker offering `measure` (the only one killed) would hold the tasks forever (the scheduler only logs "Lost all
workers"): after LOST_AFTER_S without one, every task still pending is reported missing and the run ends.
"""

from __future__ import annotations

import dataclasses
import socket
import uuid
from typing import Callable, Iterator

from explorer.core.errors import InputError
from explorer.core.fleet.hosts import host_labels
from explorer.core.fleet.pieces import point_done
from explorer.core.fleet.task import isa_env, measure_point

INSTALL_HINT = 'pip install "dask[distributed]" (or the extra: pip install -e ".[fleet]")'
WORKER_HINT = "dask worker ADDRESS --nthreads 1 --resources measure=1"
# How long the cluster may have no measuring worker before the run gives up: a nanny restarts a killed worker
# within seconds on a quiet machine; a cluster that stays empty this long is taken as gone.
LOST_AFTER_S = 20.0
LIVE_CHECK_S = 1.0  # how often the scheduler is asked which workers it has


NO_WORKER_LEFT = "no worker with the `measure` resource was left in the cluster"


def no_worker_reason(waited_s: float) -> str:
    return f"{NO_WORKER_LEFT} for {waited_s:.0f} s"


@dataclasses.dataclass
class ClusterStarted:
    hosts: dict  # worker address -> host label
    tasks: int
    already: int  # problems (x hosts) the resumed CSV holds


@dataclasses.dataclass
class ClusterRows:
    point: object
    host: str
    rows: list  # CSV row dicts, host columns included
    done: int
    total: int

    def results(self) -> list:
        """The rows as Results again (with host and worker), for the views and the planner's per-layer table."""
        from explorer.core.report.results import result_from_cells

        return [result_from_cells(r, self.point.spec) for r in self.rows]


@dataclasses.dataclass
class ClusterMissing:
    point: object
    host: str  # "" in spread mode: the problem found no worker to finish it
    reason: str
    done: int
    total: int


def missing_dask(what: str = "--cluster") -> str:
    """'' when Dask's distributed scheduler can be imported, else one sentence saying how to install it. Looked
    up without importing it (the window asks at start, and importing distributed takes a second)."""
    import importlib.util

    try:
        found = importlib.util.find_spec("distributed") is not None
    except (ImportError, ValueError):
        found = False
    return "" if found else f"{what} needs Dask's distributed scheduler: {INSTALL_HINT}."


def require_dask() -> None:
    """One sentence saying how to install Dask's distributed scheduler when it is missing."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise InputError(missing_dask() or f"--cluster needs Dask's distributed scheduler: {INSTALL_HINT}.",
                         "cluster") from None


def connect(address: str, timeout_s: float | None = None, cancel: Callable[[], bool] | None = None):
    """A Client of the scheduler at `address` within `timeout_s` (default reach.CONNECT_DEADLINE_S); one
    sentence when dask is missing, nobody answers or something that is not a scheduler does."""
    require_dask()
    from explorer.core.fleet import reach

    return reach.connect_client(address, reach.CONNECT_DEADLINE_S if timeout_s is None else timeout_s, cancel)


def measuring_workers(client) -> dict[str, str]:
    """Address -> host label of the workers that offer the `measure` resource; InputError when none does."""
    info = client.scheduler_info(n_workers=-1)["workers"]
    addrs = [a for a, w in info.items() if (w.get("resources") or {}).get("measure", 0) >= 1]
    if not addrs:
        raise InputError(f"no worker of the cluster offers the `measure` resource; start one per machine with "
                         f"`{WORKER_HINT}`.", "cluster")
    hostnames = client.run(socket.gethostname, workers=addrs)
    return host_labels(hostnames, {a: info[a].get("name", a) for a in addrs})


def run_points(client, points: list, opts, every_host: bool = False, done: set | None = None,
               poll_s: float = 0.2, cancel: Callable[[], bool] | None = None,
               lost_after_s: float = LOST_AFTER_S) -> Iterator:
    """Yield ClusterStarted, then a ClusterRows or ClusterMissing per task as it ends.

    `points` must be runnable (the caller writes skipped ones itself). `done`: row identities of a resumed
    CSV (with the host in every-host mode); problems fully in it are not submitted. `cancel` (the window's
    Stop) is checked at every poll: when it says so the generator ends and the run's tasks are cancelled.
    No measuring worker for `lost_after_s`: a ClusterMissing for every pending task, then the generator ends.
    """
    import time

    from distributed import as_completed

    labels = measuring_workers(client)
    env = isa_env()
    run = uuid.uuid4().hex[:8]
    futures: dict = {}  # future -> (point, worker address or None)
    already = 0
    for i, point in enumerate(points):
        targets = list(labels) if every_host else [None]
        for addr in targets:
            if done and point_done(point, opts.paths, done, labels[addr] if addr else None):
                already += 1
                continue
            kw = {"workers": [addr], "allow_other_workers": False} if addr else {}
            f = client.submit(measure_point, point, opts, env, resources={"measure": 1}, pure=False,
                              key=f"mkldnn-explorer-{run}-{i}" + (f"-{labels[addr]}" if addr else ""), **kw)
            futures[f] = (point, addr)
    total = len(futures)
    yield ClusterStarted(dict(labels), total, already)
    pending = set(futures)
    ready = as_completed(futures)
    finished = 0
    next_check = 0.0
    empty_since: float | None = None  # since when the scheduler has had no measuring worker
    try:
        while pending:
            if cancel is not None and cancel():
                return  # the finally below cancels what is still queued or running
            ended = [f for f in ready.next_batch(block=False) if f in pending]
            if not ended:
                time.sleep(poll_s)  # as_completed has no timeout per result: poll, so a departed worker is seen
            for f in ended:
                got = _outcome(f)
                if got is None:  # its result died with a worker after finishing: the scheduler runs it again
                    ready.add(f)
                    continue
                pending.discard(f)
                point, addr = futures[f]
                finished += 1
                rows, reason = got
                if reason is None:
                    for r in rows:  # the label of the cluster as it started, else the worker's hostname
                        r["host"] = labels.get(r.get("worker"), r.get("host", ""))
                    host = rows[0]["host"] if rows else labels.get(addr, "")
                    yield ClusterRows(point, host, rows, finished, total)
                else:
                    yield ClusterMissing(point, labels.get(addr, "") if addr else "", reason, finished, total)
            now = time.monotonic()
            if pending and now >= next_check:
                next_check = now + LIVE_CHECK_S
                workers = client.scheduler_info(n_workers=-1)["workers"]
                if every_host:  # a pinned task of a worker that left can run nowhere else
                    gone = [f for f in pending if futures[f][1] not in workers]
                    if gone:
                        client.cancel(gone)
                        for f in gone:
                            pending.discard(f)
                            point, addr = futures[f]
                            finished += 1
                            yield ClusterMissing(point, labels[addr], "its worker left the cluster", finished, total)
                if any((w.get("resources") or {}).get("measure", 0) >= 1 for w in workers.values()):
                    empty_since = None
                elif empty_since is None:
                    empty_since = now
                elif pending and now - empty_since >= lost_after_s:
                    reason = no_worker_reason(now - empty_since)
                    lost = [f for f in futures if f in pending]  # in submission order
                    client.cancel(lost)
                    for f in lost:
                        pending.discard(f)
                        point, addr = futures[f]
                        finished += 1
                        yield ClusterMissing(point, labels.get(addr, "") if addr else "", reason, finished, total)
    finally:
        if pending:  # Ctrl+C or the consumer stopped: nothing of this run stays queued on the cluster
            client.cancel(list(pending))


def _outcome(f) -> tuple[list, str | None] | None:
    """(rows, None) of a finished task, ([], reason) of one that failed for good, None while it runs again."""
    if f.status in ("lost", "pending"):
        return None
    if f.status == "finished":
        try:
            return f.result(), None
        except Exception:  # noqa: BLE001 - the result was lost while being fetched
            return None if f.status in ("lost", "pending") else ([], f"its result could not be fetched ({f.status})")
    exc = f.exception() if f.status == "error" else None
    return [], (str(exc).splitlines()[0] if exc is not None else f.status)
