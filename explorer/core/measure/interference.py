"""What else the machine did while a loop was timed: the interference meter behind every row's quality.

A 2-thread OpenMP convolution loses a whole scheduler slice (several ms) whenever one of its threads is
kept off a core by another program, so a 0.05 ms call can measure 20 ms, in the median and even in the
minimum. Linux says when that happens: the second field of /proc/self/task/<tid>/schedstat is the time
the thread has waited on a run queue (ns). The meter reads it between timed calls (about 3 us a thread,
outside the timed region; short calls share one read, see harness.READ_EVERY_NS), so each sample knows
whether a measuring thread waited during it or its group.
Around the whole loop it also reads getrusage (involuntary context switches, minor page faults), CPU
time against wall time, the hypervisor's steal time and the load average.

Where the counters do not exist (not Linux, /proc hidden), every reader returns None, the quality
columns stay empty and no sample is ever left out.
"""

from __future__ import annotations

import math
import os
import resource
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

# A sample is "disturbed" when its threads waited longer than this for a core: above the few us of
# wake-up latency a quiet machine shows (measured: 99.6% of samples wait 0, the rest < 50 us).
DISTURBED_MIN_NS = 2_000
DISTURBED_FRACTION = 0.01  # ... or more than 1% of the sample itself, whichever is larger
# A loop is trusted when at least this share of its samples ran undisturbed (and at least min_samples),
MIN_CLEAN_SHARE = 0.5
# ... when its threads waited for a core less than this share of the loop (a core that busy elsewhere
# also slows the undisturbed samples: caches refilled after every switch, a shared core on the host),
MAX_WAIT_PCT = 20.0
# ... when other programs used less than this share of the machine's CPU time (beyond the 10 ms tick
# resolution of /proc/stat, which is taken off first),
MAX_OTHER_CPU_PCT = 25.0
MAX_STEAL_PCT = 5.0  # ... when the hypervisor stole less than this share of the CPUs' time,
# ... and when the canary's median over the loop ran at most this much slower than its best on this machine.
# Measured on a quiet 2-vCPU VM: canaries 10-48% over their best from the host's own variation while the
# same conv's medians stayed within 5%, so only a gross slowdown (a core shared on the host) is a verdict;
# smaller ones stay in `slowdown_pct` for the reader.
MAX_SLOWDOWN_PCT = 50.0


class SchedReader:
    """Run-queue wait and run time, summed over every thread of this process (Linux schedstat).

    `reader(tid_dir) -> (run_ns, wait_ns)` can be replaced in tests; the default keeps one open file per
    thread and re-reads it with pread (no open/close per sample)."""

    def __init__(self, task_dir: str = "/proc/self/task", reader: Callable[[str], tuple[int, int]] | None = None):
        self.task_dir = task_dir
        self._reader = reader
        self._fds: list[int] = []
        self.available = self.refresh()

    def refresh(self) -> bool:
        """Re-list this process's threads (OpenMP starts its pool on the first parallel call)."""
        self.close()
        try:
            tids = os.listdir(self.task_dir)
        except OSError:
            return False
        if self._reader is not None:
            self._tids = tids
            return True
        for tid in tids:
            try:
                self._fds.append(os.open(os.path.join(self.task_dir, tid, "schedstat"), os.O_RDONLY))
            except OSError:
                continue
        return bool(self._fds)

    def read(self) -> tuple[int, int] | None:
        """(run_ns, wait_ns) summed over the threads, or None when unreadable."""
        run = wait = 0
        try:
            if self._reader is not None:
                for tid in self._tids:
                    r, w = self._reader(os.path.join(self.task_dir, tid))
                    run, wait = run + r, wait + w
                return run, wait
            for fd in self._fds:
                f = os.pread(fd, 96, 0).split()
                run, wait = run + int(f[0]), wait + int(f[1])
        except (OSError, ValueError, IndexError):
            return None  # a thread ended mid-loop: the caller refreshes
        return run, wait

    def close(self) -> None:
        for fd in self._fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds = []

    def __del__(self):
        self.close()


TICK_NS = 10**9 // (os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100)


def _cpu_ticks() -> tuple[int, int] | None:
    """(busy, steal) ticks summed over all CPUs, from /proc/stat; None if unknown."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
        user, nice, system, idle, iowait, irq, softirq, steal = v
        return user + nice + system + irq + softirq, steal
    except (OSError, ValueError, IndexError):
        return None


def cpu_ticks() -> tuple[int, int] | None:
    """(busy, steal) ticks of the whole machine now (around work this meter does not time: a fresh script)."""
    return _cpu_ticks()


def _loadavg() -> float | None:
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


# ---- the canary: a fixed piece of pure-Python work timed around every loop --------------------------
# It catches what no counter shows: a host that runs another VM on our core (steal below the 10 ms tick),
# a shared core, a lower clock. Its best time is kept per machine in the cache, so the first loop of a
# process is judged against a quiet figure too.
_CANARY_N = 20_000
_canary_best: dict = {}


def _canary_once() -> int:
    clock = time.perf_counter_ns
    t = clock()
    for _ in range(_CANARY_N):
        pass
    return clock() - t


def canary_ns(repeats: int = 3) -> int:
    """The best of a few runs of the canary (about 0.3 ms each on a current core)."""
    return min(_canary_once() for _ in range(repeats))


def _canary_cache():
    from explorer.core.measure.host import cache_dir

    return cache_dir() / "canary.json"


def canary_best() -> int | None:
    """The fastest canary this machine has shown (this process, or earlier ones from the cache)."""
    if "best" not in _canary_best:
        best = None
        try:
            import json

            best = int(json.loads(_canary_cache().read_text()).get(_canary_key(), 0)) or None
        except (OSError, ValueError, TypeError, AttributeError):
            best = None
        _canary_best["best"] = best
    return _canary_best["best"]


def note_canary(ns: int) -> None:
    best = canary_best()
    if best is None or ns < best:
        _canary_best["best"] = ns
        try:
            import json

            path = _canary_cache()
            data = {}
            try:
                data = json.loads(path.read_text())
            except (OSError, ValueError):
                data = {}
            data[_canary_key()] = ns
            path.parent.mkdir(parents=True, exist_ok=True)
            from explorer.core.files import atomic_write_text

            atomic_write_text(path, json.dumps(data))
        except OSError:
            pass


def _canary_key() -> str:
    import platform
    import sys

    from explorer.core.measure.host import cpu_model

    return f"{cpu_model()}|{sys.version.split()[0]}|{platform.machine()}"


@dataclass
class LoopSnapshot:
    wall_ns: int
    sched: tuple[int, int] | None
    nivcsw: int
    minflt: int
    ticks: tuple[int, int] | None  # (busy, steal) of the whole machine
    own_cpu_ns: int  # this process's CPU time (user + system)


class Paused:
    """What happened while the loop was paused at burst boundaries (the window drawing): left out."""

    def __init__(self):
        self.wall = self.run = self.wait = self.nivcsw = self.minflt = self.busy = self.steal = self.own = 0

    def add(self, a: LoopSnapshot, b: LoopSnapshot) -> None:
        self.wall += b.wall_ns - a.wall_ns
        if a.sched is not None and b.sched is not None:
            self.run += b.sched[0] - a.sched[0]
            self.wait += b.sched[1] - a.sched[1]
        self.nivcsw += b.nivcsw - a.nivcsw
        self.minflt += b.minflt - a.minflt
        if a.ticks is not None and b.ticks is not None:
            self.busy += b.ticks[0] - a.ticks[0]
            self.steal += b.ticks[1] - a.ticks[1]
        self.own += b.own_cpu_ns - a.own_cpu_ns


def snapshot(sched: SchedReader | None, clock: Callable[[], int]) -> LoopSnapshot:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return LoopSnapshot(clock(), sched.read() if sched is not None and sched.available else None,
                        ru.ru_nivcsw, ru.ru_minflt, _cpu_ticks(), int((ru.ru_utime + ru.ru_stime) * 1e9))


@dataclass
class Interference:
    """What disturbed one timed loop, and whether its statistics can be trusted."""

    samples: int = 0
    disturbed: int | None = None  # samples during which a measuring thread waited for a core
    runq_wait_pct: float | None = None  # run-queue wait of the measuring threads, % of the loop's wall time
    faults_per_call: float | None = None  # minor page faults per timed call
    ctx_switches_per_call: float | None = None  # involuntary context switches per timed call
    cpu_pct: float | None = None  # CPU time of the process's threads, % of wall time x threads
    steal_pct: float | None = None  # hypervisor steal, % of the loop's wall time x CPUs (tick resolution off)
    other_cpu_pct: float | None = None  # other programs' CPU time, % of the machine's (tick resolution off)
    slowdown_pct: float | None = None  # the canary around the loop against its best on this machine
    loadavg: float | None = None
    threads: int = 1

    @property
    def clean_share(self) -> float | None:
        if self.disturbed is None or not self.samples:
            return None
        return 1.0 - self.disturbed / self.samples


def disturbed_mask(samples_ns: np.ndarray, waits_ns: np.ndarray) -> np.ndarray:
    """True for each sample whose threads waited for a core longer than wake-up latency."""
    limit = np.maximum(DISTURBED_MIN_NS, DISTURBED_FRACTION * samples_ns)
    return waits_ns > limit


def group_disturbed(wait_ns: int, wall_ns: int) -> bool:
    """A group of samples read together: disturbed when its threads waited longer than wake-up latency."""
    return wait_ns > max(DISTURBED_MIN_NS, DISTURBED_FRACTION * wall_ns)


def summarize(start: LoopSnapshot, end: LoopSnapshot, n: int, threads: int, waits_ns: np.ndarray | None,
              samples_ns: np.ndarray, canary: list[int] | None = None, paused: Paused | None = None,
              disturbed: np.ndarray | None = None) -> Interference:
    p = paused or Paused()
    wall = max(1, end.wall_ns - start.wall_ns - p.wall)
    out = Interference(samples=n, threads=threads, loadavg=_loadavg())
    if canary:
        best = canary_best()
        if best:
            # the median of the canaries around and inside the loop (one per burst): a sustained slowdown
            # moves it, a hiccup of a few ms does not
            out.slowdown_pct = max(0.0, 100.0 * (float(np.median(canary)) - best) / best)
    if n:
        out.faults_per_call = (end.minflt - start.minflt - p.minflt) / n
        out.ctx_switches_per_call = (end.nivcsw - start.nivcsw - p.nivcsw) / n
    if start.sched is not None and end.sched is not None:
        run, wait = end.sched[0] - start.sched[0] - p.run, end.sched[1] - start.sched[1] - p.wait
        out.runq_wait_pct = 100.0 * wait / (wall * max(1, threads))
        out.cpu_pct = 100.0 * run / (wall * max(1, threads))
    if disturbed is not None and disturbed.size == samples_ns.size:
        out.disturbed = int(disturbed.sum())
    elif waits_ns is not None and waits_ns.size == samples_ns.size:
        out.disturbed = int(disturbed_mask(samples_ns, waits_ns).sum())
    if start.ticks is not None and end.ticks is not None:
        cpus = os.cpu_count() or 1
        busy = (end.ticks[0] - start.ticks[0] - p.busy) * TICK_NS
        slack = 2 * cpus * TICK_NS  # each CPU's count can be off by one tick at either end of the loop
        out.steal_pct = 100.0 * max(0, (end.ticks[1] - start.ticks[1] - p.steal) * TICK_NS - slack) / (wall * cpus)
        own = end.own_cpu_ns - start.own_cpu_ns - p.own
        other = max(0, busy - own - slack)
        out.other_cpu_pct = 100.0 * other / (wall * cpus)
    return out


@dataclass
class Verdict:
    quality: str  # "ok" | "noisy" | "" (no counters on this platform)
    reason: str


def judge(i: Interference, min_samples: int) -> Verdict:
    """ok or noisy, with one sentence naming the cause and its size."""
    if i.disturbed is None and i.steal_pct is None:
        return Verdict("", "")
    if i.steal_pct is not None and i.steal_pct > MAX_STEAL_PCT:
        return Verdict("noisy", f"the hypervisor took {i.steal_pct:.0f}% of the CPUs' time during the loop (steal)")
    if i.disturbed is not None and i.samples:
        clean = i.samples - i.disturbed
        held = (f"other programs held the cores: the measuring threads waited for a core {i.runq_wait_pct:.0f}% "
                f"of the loop" if i.runq_wait_pct is not None else "other programs held the cores")
        if clean < max(min_samples, math.ceil(MIN_CLEAN_SHARE * i.samples)):
            return Verdict("noisy", f"{held}, and {i.disturbed} of {i.samples} calls were slowed")
        if i.runq_wait_pct is not None and i.runq_wait_pct > MAX_WAIT_PCT:
            return Verdict("noisy", held)
    if i.slowdown_pct is not None and i.slowdown_pct > MAX_SLOWDOWN_PCT:
        return Verdict("noisy", f"the CPU ran {i.slowdown_pct:.0f}% slower than its best during the loop "
                                f"(another program or virtual machine on the same core)")
    if i.other_cpu_pct is not None and i.other_cpu_pct > MAX_OTHER_CPU_PCT:
        return Verdict("noisy", f"other programs used {i.other_cpu_pct:.0f}% of the machine's CPU time during the loop")
    if i.disturbed:
        return Verdict("ok", f"{i.disturbed} of {i.samples} calls waited for a core and were left out")
    return Verdict("ok", "")


ADVICE = "closing other programs helps; so do fewer threads (--threads 1) when the load is light"


def warning_line(rows) -> str:
    """One line for under a table: how many rows are noisy, the worst cause, and what helps ('' if none)."""
    noisy = [r for r in rows if (r.get("quality") if isinstance(r, dict) else getattr(r, "quality", "")) == "noisy"]
    if not noisy:
        return ""
    reason = lambda r: r.get("quality_reason") if isinstance(r, dict) else r.quality_reason  # noqa: E731
    return (f"warning: {len(noisy)} of {len(rows)} rows are noisy (marked ~): {reason(noisy[0])}; their figures and "
            f"ratios are uncertain; {ADVICE}.")
