"""What a run is asked to do: the paths, threads, budget and allocator, each checked with one sentence."""

from __future__ import annotations

from dataclasses import dataclass

from explorer.core.errors import InputError
from explorer.core.measure.allocator import DEFAULT_ALLOCATOR
from explorer.core.measure.allocator import validate as validate_allocator
from explorer.core.measure.harness import DEFAULT_BUDGET_MS, DEFAULT_MIN_SAMPLES, DEFAULT_PRECISION
from explorer.core.measure.host import validate_threads
from explorer.core.measure.isa import validate as validate_isa
from explorer.core.paths.base import ALL_PATHS, PATHS


@dataclass
class RunOptions:
    paths: tuple[str, ...] = PATHS
    threads: int | None = None  # None: torch's current setting
    budget_ms: float = DEFAULT_BUDGET_MS
    min_samples: int = DEFAULT_MIN_SAMPLES
    precision: float = DEFAULT_PRECISION
    earliest_share: float = 0.2  # no early stop before this share of the budget (Budget.earliest_share)
    check: bool = True  # compare each path's output with the f32 reference
    trace: bool = True  # capture one traced call per path for conv_impl / tags / reorders
    progress_interval_s: float = 0.05
    allocator: str = DEFAULT_ALLOCATOR  # the measuring process's allocator (explorer.core.measure.allocator)
    isa: str | None = None  # cap oneDNN/ATen at this ISA in the measuring process (explorer.core.measure.isa)

    def validate(self) -> RunOptions:
        validate_allocator(self.allocator)
        self.isa = validate_isa(self.isa)
        validate_paths(self.paths)
        if self.threads is not None:
            validate_threads(self.threads)
        validate_budget(self.budget_ms)
        return self


def validate_paths(paths) -> tuple[str, ...]:
    if not paths:
        raise InputError(f"no path selected; choose from {', '.join(ALL_PATHS)}.", "paths")
    for p in paths:
        if p not in ALL_PATHS:
            raise InputError(f"unknown path {p!r}; choose from {', '.join(ALL_PATHS)}.", "paths")
    return tuple(paths)


def expand_paths(text: str) -> tuple[str, ...]:
    """'dense,mkldnn', 'all' (the six seed paths), 'routes' (jit_frozen, compiled, mkldnn_prepacked) or a mix
    such as 'all,routes'; each name once, in the order given. Raises InputError on an unknown name."""
    from explorer.core.paths.base import INT8_PATHS, ROUTES

    out: list[str] = []
    for name in (p.strip() for p in text.split(",")):
        if not name:
            continue
        group = {"all": PATHS, "routes": ROUTES, "int8": INT8_PATHS}.get(name, (name,))
        out += [p for p in group if p not in out]
    return validate_paths(tuple(out))


def validate_budget(ms) -> float:
    if not isinstance(ms, (int, float)) or isinstance(ms, bool) or not (1 <= ms <= 600_000):
        raise InputError(f"budget must be from 1 to 600000 ms per path, got {ms!r}.", "budget_ms")
    return float(ms)
