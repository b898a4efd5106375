"""The timing loop and its statistics.

One untimed warm-up, then one sample per call on the monotonic ns clock (time.perf_counter_ns), the
clock read right around the call and nothing else inside the timed region. The loop stops at the time
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

DEFAULT_BUDGET_MS = 500.0
DEFAULT_MIN_SAMPLES = 5
DEFAULT_PRECISION = 0.005  # stop early once the median's 95% CI half-width is below 0.5% of it
MAX_SAMPLES = 200_000


@dataclass
class Measurement:
    """Per-call samples of one callable and their statistics (times in ms)."""

    samples_ns: np.ndarray
    stop_reason: str = "budget"  # budget | converged | cancelled | max_samples
    wall_s: float = 0.0
    starts_ns: np.ndarray | None = None  # perf_counter_ns at the start of each sample (timeline export)

    @property
    def n(self) -> int:
        return int(self.samples_ns.size)

    @property
    def samples_ms(self) -> np.ndarray:
        return self.samples_ns / 1e6

    def _q(self, q: float) -> float:
        return float(np.percentile(self.samples_ns, q)) / 1e6 if self.n else math.nan

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
        return float(self.samples_ns.min()) / 1e6 if self.n else math.nan

    @property
    def mean_ms(self) -> float:
        return float(self.samples_ns.mean()) / 1e6 if self.n else math.nan

    @property
    def rel_ci(self) -> float:
        return median_rel_ci(self.samples_ns)

    def __repr__(self) -> str:
        return f"Measurement(median={self.median_ms:.4f} ms, iqr={self.iqr_ms:.4f} ms, n={self.n}, {self.stop_reason})"


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


def measure_iter(
    fn: Callable[[], object],
    budget: Budget | None = None,
    cancel: Callable[[], bool] | None = None,
    progress_interval_s: float = 0.05,
) -> Iterator[Progress]:
    """Time fn per call; yields Progress every `progress_interval_s`; returns the Measurement (StopIteration.value)."""
    b = budget or Budget()
    clock = time.perf_counter_ns
    start = clock()
    for _ in range(b.warmup):
        fn()
        if cancel is not None and cancel():
            return Measurement(np.empty(0, dtype=np.int64), "cancelled", (clock() - start) / 1e9)
    samples: list[int] = []
    append = samples.append
    starts: list[int] = []
    append_start = starts.append
    t_begin = clock()
    deadline = t_begin + int(b.budget_ms * 1e6)
    # Early stop is checked only after a fifth of the budget and on a geometric schedule: cheap, and
    # never on so few samples that a lucky streak ends the run.
    earliest_stop = t_begin + int(b.budget_ms * 1e6 / 5)
    next_check = max(b.min_samples, 20)
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
            next_check = n + max(10, n // 2)
            if t1 >= earliest_stop and median_rel_ci(np.asarray(samples)) < b.precision:
                reason = "converged"
                break
        if t1 >= next_yield:
            yield Progress(np.asarray(samples[last_yielded:], dtype=np.int64), n, (t1 - t_begin) / 1e9, b.budget_ms / 1e3)
            last_yielded = n
            next_yield = clock() + interval_ns
    arr = np.asarray(samples, dtype=np.int64)
    if last_yielded < arr.size:
        yield Progress(arr[last_yielded:], arr.size, (clock() - t_begin) / 1e9, b.budget_ms / 1e3)
    return Measurement(arr, reason, (clock() - start) / 1e9, np.asarray(starts, dtype=np.int64))


def measure(fn: Callable[[], object], budget: Budget | None = None, cancel: Callable[[], bool] | None = None) -> Measurement:
    """measure_iter without progress: drain the generator and return its Measurement."""
    gen = measure_iter(fn, budget, cancel, progress_interval_s=3600.0)
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value
