"""The events a run or a sweep yields, which the CLI and the window both consume."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.core.problem.spec import ConvSpec
from explorer.core.problem.sweep_plan import SweepPoint
from explorer.core.report.results import Result


# ---- a run's events -----------------------------------------------------------------------------------------
@dataclass
class PathStarted:
    spec: ConvSpec
    path: str
    index: int
    total: int


@dataclass
class Samples:
    spec: ConvSpec
    path: str
    new_ms: np.ndarray
    n: int
    elapsed_s: float
    budget_s: float


@dataclass
class PathRetry:
    """The loop just measured was disturbed; the path is measured again (its samples start over)."""

    spec: ConvSpec
    path: str
    attempt: int  # the attempt about to start (2, 3, ...)
    reason: str


@dataclass
class PathFinished:
    result: Result


# ---- a sweep's events -----------------------------------------------------------------------------
@dataclass
class SweepProgress:
    done: int  # points finished or skipped
    total: int
    skipped: int
    rows: int  # result rows emitted (one per point x path, one per skipped point)
    elapsed_s: float
    eta_s: float | None  # time left; None before anything could be estimated

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0


@dataclass
class SweepStarted:
    points: list[SweepPoint]
    total: int
    runnable: int  # points that will run (not skipped)
    paths: tuple[str, ...]


@dataclass
class PointStarted:
    point: SweepPoint
    progress: SweepProgress


@dataclass
class PointSkipped:
    point: SweepPoint
    row: dict  # the CSV row (status skipped, error = the reason)
    result: Result | None  # the same as a Result when the point has a spec
    progress: SweepProgress


@dataclass
class PointFinished:
    point: SweepPoint
    results: list[Result]
    progress: SweepProgress


@dataclass
class SweepFinished:
    progress: SweepProgress
    cancelled: bool
