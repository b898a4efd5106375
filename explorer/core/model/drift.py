"""Did the machine (or the process) change between the per-layer table and a mode's loop?

The planner predicts a mode from the per-layer table, measured minutes before the mode's own loop. On a
host whose speed wanders (BENCHMARKS §0e: a fixed conv's median probe 1.5x its fastest, quiet stretches
of 2 s), the two can be taken at different speeds, and predicted against measured then says nothing about
the model. So one reference layer, the one with the largest share of the dense conv time, is timed again
right before and right after each mode's loops and compared with its own row in the table. When it moved
by more than DRIFT_LIMIT, that mode's comparison is marked uncertain, with the reference's figures.
It caught a process-state change too: a 38.5 MB output that faulted on every call after the modes ran and
not during the table (BENCHMARKS §0d, fixed by MALLOC_MMAP_MAX_=0 in the tuned allocator setting).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Callable

DRIFT_LIMIT = 0.10  # the planner's own target is 10%: a drift that large would decide it on its own
REF_BUDGET_MS = 100.0


@dataclass
class Reference:
    name: str
    table_ms: float  # its dense median in the per-layer table
    fn: Callable[[], object]
    context: Callable

    @property
    def label(self) -> str:
        return f"reference layer {self.name} (dense)"


def pick_reference(summaries) -> Reference | None:
    """The layer with the largest share of dense conv time (count x median) whose dense row is ok, a row
    not marked noisy first (on a host that is never quiet every row may be)."""
    from explorer.core.paths.base import Tensors
    from explorer.core.paths.registry import prepare

    rows = []
    for s in summaries:
        r = s.results.get("dense")
        if s.layer.spec is not None and r is not None and r.status == "ok" and r.median_ms:
            rows.append((r.quality != "noisy", s.layer.count * r.median_ms, s))
    if not rows:
        return None
    *_, s = max(rows, key=lambda t: t[:2])
    prep = prepare("dense", Tensors.make(s.layer.spec))
    return Reference(s.layer.name, s.results["dense"].median_ms, prep.fn, prep.context)


def time_reference(ref: Reference, cancel) -> float | None:
    """The reference's median now (the harness, REF_BUDGET_MS), or None if cancelled."""
    import torch

    from explorer.core.measure.harness import Budget, measure

    with torch.no_grad(), ref.context():
        m = measure(ref.fn, Budget(REF_BUDGET_MS, 5, warmup=1), cancel)
    if m.stop_reason == "cancelled" or not m.n:
        return None
    return m.median_ms


def drift_label(pct: float | None) -> str:
    """'+17%', '-4%', '0%' (no signed zero), '' when not measured."""
    if pct is None:
        return ""
    return "0%" if round(pct) == 0 else f"{pct:+.0f}%"


def drift(ref: Reference, before: float | None, after: float | None) -> tuple[float | None, str]:
    """(drift as a fraction of the table's time, one line saying what was seen) for one mode."""
    seen = [v for v in (before, after) if v]
    if not seen:
        return None, ""
    now = statistics.median(seen)
    d = now / ref.table_ms - 1.0
    how = "/".join(f"{v:.4g}" for v in seen)
    return d, f"{ref.label}: {ref.table_ms:.4g} ms in the per-layer table, {how} ms around this mode"
