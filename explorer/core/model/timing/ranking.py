"""The per-layer table's early stop: a path whose time no mode's prediction uses is timed only until its
rank among the layer's paths is settled (issue 36, "a verdict in 30 s").

A layer's paths are timed one after the other. The paths a planned mode runs on (and dense, every ratio's
baseline) keep the full budget: their medians are the prediction, so pred/meas stays what it was. Any other
path (native, mkldnn_functional, mkldnn_roundtrip) only ranks: its loop stops once the approximate 95%
confidence interval of its median lies wholly above or below that of the best path timed so far, and goes on
to the budget when the two overlap (a close race is timed in full)."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from explorer.core.measure.harness import median_rel_ci

MIN_SAMPLES = 10  # never decide on fewer: a handful of calls gives no interval worth the name


def median_ci_ms(median_ms: float, p25_ms: float, p75_ms: float, n: int) -> float:
    """Half-width (ms) of the approximate 95% CI of a median from its quartiles, as median_rel_ci computes it."""
    if n < 2:
        return math.inf
    return 1.96 * 1.2533 * (p75_ms - p25_ms) / 1.349 / math.sqrt(n)


def separated(samples_ns: np.ndarray, best_ms: float, best_half_ms: float) -> bool:
    """Whether these samples' median interval lies wholly above or below the best one's."""
    if samples_ns.size < MIN_SAMPLES:
        return False
    med = float(np.median(samples_ns)) / 1e6
    half = median_rel_ci(samples_ns) * med
    return med - half > best_ms + best_half_ms or med + half < best_ms - best_half_ms


def best_so_far(finished) -> tuple[float, float] | None:
    """(median, CI half-width) in ms of the fastest ok row among a layer's finished paths, or None."""
    rows = [r for r in finished if r.status == "ok" and r.median_ms and r.p25_ms is not None and r.p75_ms is not None]
    if not rows:
        return None
    r = min(rows, key=lambda r: r.median_ms)
    return r.median_ms, median_ci_ms(r.median_ms, r.p25_ms, r.p75_ms, r.samples_used or r.samples)


def ranking_stop(full_paths) -> Callable:
    """iter_run's decide_for: None (the full budget) for the paths in `full_paths`, else a stop once the path's
    interval is separated from the best finished path's."""
    keep = frozenset(full_paths)

    def decide_for(path: str, finished) -> Callable[[np.ndarray], bool] | None:
        best = None if path in keep else best_so_far(finished)
        if best is None:
            return None
        return lambda samples_ns: separated(samples_ns, *best)

    return decide_for
