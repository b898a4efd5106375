"""The subnormal finding: which convs the model feeds subnormal inputs, what they cost of the conv time, and
what torch.set_flush_denormal(True) saves on them and on the whole forward, measured in alternated rounds
(flush off / on, the order swapped every round, so a host that speeds up or slows down favours neither)."""

from __future__ import annotations

import statistics
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable

ROUNDS = 5
BUDGET_MS = 30.0  # each part's loop per round and flag (at least MIN_SAMPLES calls: a big model's forward)
MIN_SAMPLES = 3


@dataclass
class DenormalFinding:
    modules: list  # the affected convs' module paths, model order
    shares: list  # their subnormal input shares, same order
    convs_ms: float  # their time per forward, flush-denormal off (as the model runs by default)
    convs_flush_ms: float  # the same with torch.set_flush_denormal(True)
    forward_ms: float | None = None  # the whole forward, off / on (None when it was not timed)
    forward_flush_ms: float | None = None
    synthesised: int = 0  # affected convs timed on synthesised inputs (over the keep cap)
    noisy: bool = False  # a loop behind it was noisy (other programs held the cores)

    def text(self) -> str:
        n = len(self.modules)
        names = ", ".join(self.modules[:3]) + (f" and {n - 3} more" if n > 3 else "")
        worst = max(self.shares) if self.shares else 0.0
        # the cost as a share of the forward timed in the same rounds (a figure from another loop would not add up)
        cost = f" of the {self.forward_ms:.4g} ms forward" if self.forward_ms else ""
        line = (f"finding: {n} conv{'s are' if n > 1 else ' is'} fed subnormal (denormal) inputs ({names}; up to "
                f"{100 * worst:.0f}% of an input): {self.convs_ms:.3g} ms per forward{cost}; "
                f"torch.set_flush_denormal(True) measured {self.convs_flush_ms:.3g} ms on them")
        if self.forward_ms and self.forward_flush_ms:
            saved = self.forward_ms - self.forward_flush_ms
            how = f"{saved:.3g} ms saved" if saved > 0 else f"no saving, {-saved:.3g} ms slower"
            line += f", whole forward {self.forward_ms:.4g} -> {self.forward_flush_ms:.4g} ms ({how})"
        if self.synthesised:
            line += f" ({self.synthesised} of them on synthesised inputs of the same statistics: over the memory cap)"
        if self.noisy:
            line += " (~: a loop behind these figures is noisy)"
        return line + " (it changes results below ~1e-38 to zero)"


def flush_is_on() -> bool:
    """torch has no getter for the flag: a product that must be subnormal comes out zero when it is on."""
    import torch

    return bool((torch.tensor([1e-30], dtype=torch.float32) * 1e-9).item() == 0.0)


@contextmanager
def flush_restored():
    """Whatever the timing does to the flag, it is set back on the way out (also on error and cancel)."""
    import torch

    before = flush_is_on()
    try:
        yield
    finally:
        torch.set_flush_denormal(before)


def measure_finding(calls: list, forward: Callable | None, cancelled: Callable[[], bool] = lambda: False,
                    modules: dict | None = None, shares: dict | None = None, rounds: int = ROUNDS):
    """The finding from the kept calls (KeptInputs.materialised()), or None when there is none, the platform
    has no flush-denormal (set_flush_denormal returns False), or it was cancelled. `forward` runs the whole
    model once (None: only the convs are timed). `modules`/`shares`: per site index, its path and share."""
    import torch

    from explorer.core.measure.harness import Budget, measure

    if not calls:
        return None
    with flush_restored():
        if not torch.set_flush_denormal(False):
            return None

        def convs():
            for c in calls:
                c.run()

        parts = {"convs": convs} if forward is None else {"convs": convs, "forward": forward}
        got = {(name, flag): [] for name in parts for flag in (False, True)}
        noisy = False
        with torch.no_grad():
            convs()  # untimed: the first call of a shape builds its primitive
            for r in range(rounds):
                for flag in ((False, True) if r % 2 == 0 else (True, False)):
                    torch.set_flush_denormal(flag)
                    for name, fn in parts.items():
                        # the harness, as every figure of the plan: its median is of the undisturbed samples
                        m = measure(fn, Budget(BUDGET_MS, MIN_SAMPLES, warmup=1), cancelled)
                        if cancelled() or m.n_stats == 0:
                            return None
                        got[name, flag].append(m.median_ms)
                        noisy = noisy or m.quality == "noisy"
    modules, shares = modules or {}, shares or {}
    return DenormalFinding([modules.get(c.site, f"conv#{c.site}") for c in calls],
                           [shares.get(c.site, 0.0) for c in calls],
                           statistics.median(got["convs", False]), statistics.median(got["convs", True]),
                           statistics.median(got["forward", False]) if forward is not None else None,
                           statistics.median(got["forward", True]) if forward is not None else None,
                           synthesised=sum(1 for c in calls if c.synthesised), noisy=noisy)
