"""The timing loop and its statistics.

One untimed warm-up, then one sample per call on the monotonic ns clock (time.perf_counter_ns), the
clock read right around the call and nothing else inside the timed region. Between calls (outside the
timed region) the interference meter reads how long the measuring threads waited for a core: after every
call that ends READ_EVERY_NS or more after the last read, so a group of short calls shares one read (the
read's syscalls slow the call after them by ~2.5 us: 15% of a 15 us conv when read after every call).
Every sample of a group whose threads waited is disturbed; the statistics use the undisturbed samples
when enough of them exist, and the loop's quality says whether they do (explorer.core.measure.interference). The loop stops at the time
budget (after at least `min_samples`), when the median is known precisely enough, on cancel, or at a
sample cap that keeps memory flat. Progress goes out as generator yields every ~50 ms, so a GUI worker
can stream samples without a callback inside the loop.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np

from explorer.core.measure import interference as itf

DEFAULT_BUDGET_MS = 500.0
DEFAULT_MIN_SAMPLES = 5
DEFAULT_PRECISION = 0.005  # stop early once the median's 95% CI half-width is below 0.5% of it
MAX_SAMPLES = 200_000
# The meter's read costs the next call ~2.5 us of cold caches (measured on a 15 us conv: 17.3 vs 14.6 us
# with a read after every call, 14.6 us without). Calls shorter than this share one read.
READ_EVERY_NS = 250_000
# A consumer that holds the loop at a burst boundary this long (the window painting) lets OpenMP's threads
# fall asleep and other work evict the caches: the first call after it measured ~15% slow (a 6.5 ms conv
# held 20 ms every 50 ms; 2% without the hold), which moved the median ~4%. After such a hold one untimed
# call, counted with the pause, puts the loop back where it was, when calls are short enough to afford it.
HOLD_REWARM_NS = 2_000_000


@dataclass
class Measurement:
    """Per-call samples of one callable and their statistics (times in ms)."""

    samples_ns: np.ndarray
    stop_reason: str = "budget"  # budget | converged | decided (Budget.decided) | cancelled | max_samples
    wall_s: float = 0.0
    waits_ns: np.ndarray | None = None  # per sample: its share of its read group's run-queue wait (None: unknown)
    interference: itf.Interference | None = None
    min_samples: int = DEFAULT_MIN_SAMPLES

    def __post_init__(self):
        self.verdict = itf.Verdict("", "")
        if self.interference is not None:
            self.verdict = itf.judge(self.interference, self.min_samples)
        if self.disturbed is None and self.waits_ns is not None and self.waits_ns.size == self.samples_ns.size:
            self.disturbed = itf.disturbed_mask(self.samples_ns, self.waits_ns)
        self._stats = self.samples_ns[self.kept]
    starts_ns: np.ndarray | None = None  # perf_counter_ns at the start of each sample (timeline export)
    disturbed: np.ndarray | None = None  # per sample: did a measuring thread wait for a core during its group

    @property
    def kept(self) -> np.ndarray:
        """Per sample, whether it is behind the statistics: in a trusted loop, the undisturbed ones (the
        figures a quiet machine gives), if any; otherwise all."""
        keep = np.ones(self.samples_ns.size, dtype=bool)
        if self.disturbed is not None and self.disturbed.size == self.samples_ns.size and self.verdict.quality == "ok":
            if (~self.disturbed).any():
                keep = ~self.disturbed
        return keep

    @property
    def n(self) -> int:
        return int(self.samples_ns.size)

    @property
    def n_stats(self) -> int:
        """Samples behind the statistics (the undisturbed ones when the loop is trusted)."""
        return int(self._stats.size)

    @property
    def quality(self) -> str:
        return self.verdict.quality

    @property
    def quality_reason(self) -> str:
        return self.verdict.reason

    @property
    def samples_ms(self) -> np.ndarray:
        return self.samples_ns / 1e6

    def _q(self, q: float) -> float:
        return float(np.percentile(self._stats, q)) / 1e6 if self._stats.size else math.nan

    @property
    def median_ms(self) -> float:
        return self._q(50)

    @property
    def p25_ms(self) -> float:
        return self._q(25)

    @property
    def p75_ms(self) -> float:
        return self._q(75)

    @property
    def iqr_ms(self) -> float:
        return self.p75_ms - self.p25_ms

    @property
    def min_ms(self) -> float:
        return float(self._stats.min()) / 1e6 if self._stats.size else math.nan

    @property
    def mean_ms(self) -> float:
        return float(self._stats.mean()) / 1e6 if self._stats.size else math.nan

    @property
    def rel_ci(self) -> float:
        return median_rel_ci(self._stats)

    def __repr__(self) -> str:
        q = f", {self.quality}" if self.quality else ""
        return (f"Measurement(median={self.median_ms:.4f} ms, iqr={self.iqr_ms:.4f} ms, n={self.n}, "
                f"{self.stop_reason}{q})")


@dataclass
class Progress:
    """Yielded while measuring: the samples taken since the previous yield (ns) and totals so far."""

    new_samples_ns: np.ndarray
    n: int
    elapsed_s: float
    budget_s: float


def median_rel_ci(samples_ns: np.ndarray) -> float:
    """Half-width of an approximate 95% CI of the median, relative to it (robust sigma from the IQR)."""
    n = samples_ns.size
    if n < 2:
        return math.inf
    q25, med, q75 = np.percentile(samples_ns, (25, 50, 75))
    if med <= 0:
        return math.inf
    sigma = (q75 - q25) / 1.349
    return 1.96 * 1.2533 * sigma / math.sqrt(n) / med


@dataclass
class Budget:
    budget_ms: float = DEFAULT_BUDGET_MS
    min_samples: int = DEFAULT_MIN_SAMPLES
    precision: float = DEFAULT_PRECISION
    max_samples: int = MAX_SAMPLES
    warmup: int = 1
    extra: dict = field(default_factory=dict)
    # A caller's own early stop, asked at the `converged` checks with the undisturbed samples (ns) so far:
    # True ends the loop as "decided" (the model planner: this path's rank among a layer's paths is settled)
    decided: Callable[[np.ndarray], bool] | None = None
    # The early-stop checks: first at `check_from` samples, then every `check_step` more (0: geometric, half
    # again each time). A loop of long samples (the planner's rounds, a whole forward each) checks every one.
    check_from: int = 20
    check_step: int = 0
    # No early stop before this share of the budget has passed (a short quiet streak must not end the loop)
    earliest_share: float = 0.2


def measure_iter(
    fn: Callable[[], object],
    budget: Budget | None = None,
    cancel: Callable[[], bool] | None = None,
    progress_interval_s: float = 0.05,
    meter: bool = True,
) -> Iterator[Progress]:
    """Time fn per call; yields Progress every `progress_interval_s`; returns the Measurement (StopIteration.value)."""
    b = budget or Budget()
    clock = time.perf_counter_ns
    start = clock()
    for _ in range(b.warmup):
        fn()
        if cancel is not None and cancel():
            return Measurement(np.empty(0, dtype=np.int64), "cancelled", (clock() - start) / 1e9)
    sched = itf.SchedReader() if meter else None  # after the warm-up: OpenMP's threads exist by now
    canaries: list[int] = [itf.canary_ns()] if meter else []
    read_wait = (lambda: None) if sched is None or not sched.available else sched.read
    samples: list[int] = []
    waits: list[int] = []  # per sample, its share of its group's wait
    hits: list[bool] = []  # per sample, whether its group was disturbed
    append = samples.append
    starts: list[int] = []
    append_start = starts.append
    first = itf.snapshot(sched, clock)
    paused = itf.Paused()
    # A boundary before the first sample: a paced consumer (the window) draws now, not mid-loop.
    yield Progress(np.empty(0, dtype=np.int64), 0, 0.0, b.budget_ms / 1e3)
    p1 = itf.snapshot(sched, clock)
    paused.add(first, p1)
    last_wait = p1.sched

    def close_group(now, wall_ns: int) -> None:
        """The samples since the last read share this read's wait (None: a thread came or went)."""
        k = len(samples) - len(waits)
        if k <= 0:
            return
        w = (1 << 62) if now is None else now[1] - last_wait[1]
        waits.extend([w // k] * k)
        hits.extend([itf.group_disturbed(w, wall_ns)] * k)

    t_begin = clock()
    group_t0 = t_begin
    deadline = t_begin + int(b.budget_ms * 1e6)
    # Early stop is checked only after a share of the budget (a fifth unless told) and on a geometric
    # schedule: cheap, and never on so few samples that a lucky streak ends the run.
    earliest_stop = t_begin + int(b.budget_ms * 1e6 * b.earliest_share)
    next_check = max(b.min_samples, b.check_from)
    interval_ns = int(progress_interval_s * 1e9)
    next_yield = t_begin + interval_ns
    last_yielded = 0
    reason = "budget"
    while True:
        t0 = clock()
        fn()
        t1 = clock()
        append(t1 - t0)
        append_start(t0)
        if last_wait is not None and t1 - group_t0 >= READ_EVERY_NS:
            # outside the timed region: did a measuring thread wait for a core during this group?
            now = read_wait()
            close_group(now, t1 - group_t0)
            if now is None:  # a thread came or went: re-list (the group was counted as disturbed)
                sched.refresh()
                now = read_wait()
            last_wait = now
            group_t0 = clock()
        n = len(samples)
        if cancel is not None and cancel():
            reason = "cancelled"
            break
        if n >= b.min_samples and t1 >= deadline:
            break
        if n >= b.max_samples:
            reason = "max_samples"
            break
        if n >= next_check:
            next_check = n + (b.check_step or max(10, n // 2))
            if t1 >= earliest_stop:
                clean = _clean(samples, hits)
                if median_rel_ci(clean) < b.precision:
                    reason = "converged"
                    break
                if b.decided is not None and b.decided(clean):
                    reason = "decided"
                    break
        if t1 >= next_yield:
            # The consumer may hold us here (the window drawing this burst): that time is neither budget
            # nor loop for the meter, and the next sample's wait is counted from the resume.
            p0 = itf.snapshot(sched, clock)
            if last_wait is not None:
                close_group(p0.sched, p0.wall_ns - group_t0)
            if meter:  # one canary run per burst, in the pause: the loop's speed of the CPU, hiccups outvoted
                canaries.append(itf._canary_once())
            yield Progress(np.asarray(samples[last_yielded:], dtype=np.int64), n, (t1 - t_begin) / 1e9, b.budget_ms / 1e3)
            if clock() - p0.wall_ns > HOLD_REWARM_NS and samples[-1] < interval_ns // 4:
                fn()
            p1 = itf.snapshot(sched, clock)
            paused.add(p0, p1)
            held = p1.wall_ns - p0.wall_ns
            deadline, earliest_stop, t_begin = deadline + held, earliest_stop + held, t_begin + held
            if last_wait is not None:
                last_wait = p1.sched if p1.sched is not None else read_wait()
            last_yielded = n
            group_t0 = clock()
            next_yield = group_t0 + interval_ns
    end = itf.snapshot(sched, clock)
    if last_wait is not None:
        close_group(end.sched, end.wall_ns - group_t0)
    if meter:
        canaries.append(itf.canary_ns())
    canary = canaries if meter else None
    arr = np.asarray(samples, dtype=np.int64)
    waits_arr = np.asarray(waits, dtype=np.int64) if len(waits) == arr.size and sched is not None else None
    hits_arr = np.asarray(hits, dtype=bool) if waits_arr is not None else None
    if sched is not None:
        sched.close()
    meter_out = itf.summarize(first, end, arr.size, _threads(), waits_arr, arr, canary, paused, hits_arr) if meter else None
    if meter:
        itf.note_canary(min(canary))  # after judging this loop: a faster canary raises the bar for the next
    if last_yielded < arr.size:
        yield Progress(arr[last_yielded:], arr.size, (clock() - t_begin) / 1e9, b.budget_ms / 1e3)
    return Measurement(arr, reason, (clock() - start) / 1e9, waits_arr, meter_out, b.min_samples,
                       np.asarray(starts, dtype=np.int64), hits_arr)


def _clean(samples: list[int], hits: list[bool]) -> np.ndarray:
    """The samples so far without the disturbed ones (the calls since the last read count as clean)."""
    arr = np.asarray(samples)
    if not hits:
        return arr
    keep = np.ones(arr.size, dtype=bool)
    keep[: len(hits)] = ~np.asarray(hits, dtype=bool)
    return arr[keep] if keep.sum() >= 2 else arr


def _threads() -> int:
    try:
        import torch

        return torch.get_num_threads()
    except Exception:  # noqa: BLE001 - a label only
        return 1


def measure(fn: Callable[[], object], budget: Budget | None = None, cancel: Callable[[], bool] | None = None) -> Measurement:
    """measure_iter without progress: drain the generator and return its Measurement."""
    gen = measure_iter(fn, budget, cancel, progress_interval_s=3600.0)
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value
