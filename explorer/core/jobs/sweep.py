"""Run the points of a planned sweep (explorer.core.problem.sweep_plan), each over the paths.

The generator `iter_points` is what the CLI and a GUI worker both consume: SweepStarted, then per point
PointStarted, the runner's own PathStarted/Samples/PathFinished events, PointFinished (or PointSkipped),
and finally SweepFinished. Every point event carries a SweepProgress (done/total, time left estimate).
Finished results are not kept by the generator; by default their per-call samples, trace and layouts
are dropped once their PathFinished event has been consumed, so memory stays flat over long sweeps.
"""

from __future__ import annotations

import dataclasses
import re
import time
from typing import Callable, Iterable, Iterator

from explorer.core.errors import SpecError
from explorer.core.jobs.events import (
    PointFinished,
    PointSkipped,
    PointStarted,
    SweepFinished,
    SweepProgress,
    SweepStarted,
)
from explorer.core.problem.spec import ConvSpec
from explorer.core.problem.sweep_plan import SweepPoint, Vary, plan_sweep
from explorer.core.report.results import CSV_COLUMNS, Result


def skipped_result(point: SweepPoint, threads: int, path: str = "") -> Result:
    return Result(spec=point.spec, path=path, threads=threads, status="skipped", error=point.error,
                  vary=point.label, started_at=time.strftime("%Y-%m-%dT%H:%M:%S"), problem_index=point.index)


def skipped_row(point: SweepPoint, threads: int) -> tuple[dict, Result | None]:
    """The CSV row of a skipped point; a batch line that did not parse has no spec, so only its text."""
    if point.spec is not None:
        try:
            r = skipped_result(point, threads)
            return r.row(), r
        except (ArithmeticError, ValueError):
            pass
    row = {c: "" for c in CSV_COLUMNS}
    status = "refused" if point.refused else "skipped"  # refused: a batch line whose options are not honoured
    row.update(desc=point.text or (point.spec.desc if point.spec else ""), status=status, error=point.error,
               threads=str(threads), vary=point.label, started_at=time.strftime("%Y-%m-%dT%H:%M:%S"),
               problem_index=str(point.index))
    name = re.search(r'n"([^"]*)"', point.text or "")
    if name:
        row["name"] = name.group(1)
    return row, None


def _strip(res: Result) -> None:
    res.samples_ms = None
    res.trace = []
    res.layouts = {}
    res.aten = []
    res.sample_starts_ns = None
    res.sample_waits_ns = None


def iter_points(
    points: list[SweepPoint],
    opts=None,
    cancel: Callable[[], bool] | None = None,
    ctx=None,
    keep_details: bool = False,
    decide_for: Callable | None = None,
    tensors_for: Callable | None = None,
) -> Iterator:
    """Run every point in order, yielding sweep and runner events (see the module docstring).
    `tensors_for(point)` may give a point its own tensor maker (spec -> Tensors), or None for the seeded one.

    Skipped points (and points the runner refuses before any work, such as the memory guard) yield
    PointSkipped with their row; a point whose run fails outside a path yields one `error` row per path.
    With keep_details=False each Result's samples_ms/trace/layouts are dropped right after its
    PathFinished event has been consumed (copy them in the handler if needed). `decide_for` goes to
    iter_run (a path's early stop once its rank is settled: the model planner's).
    """
    import torch

    from explorer.core.jobs.events import PathFinished
    from explorer.core.jobs.options import RunOptions
    from explorer.core.jobs.run import RunContext, iter_run

    opts = (opts or RunOptions()).validate()
    ctx = ctx or RunContext.current()
    cancelled = cancel or (lambda: False)
    total = len(points)
    runnable = sum(1 for p in points if not p.skipped)
    default_threads = opts.threads or torch.get_num_threads()
    start = time.monotonic()
    done = skipped = rows = 0
    runs_left = runnable
    run_time = 0.0
    runs_done = 0
    per_point_guess = len(opts.paths) * (opts.budget_ms / 1e3 + 0.05)

    def progress() -> SweepProgress:
        per_point = run_time / runs_done if runs_done else per_point_guess
        return SweepProgress(done, total, skipped, rows, time.monotonic() - start, runs_left * per_point)

    yield SweepStarted(points, total, runnable, tuple(opts.paths))
    was_cancelled = False
    for point in points:
        if cancelled():
            was_cancelled = True
            break
        threads = point.threads or default_threads
        if point.skipped:
            row, res = skipped_row(point, threads)
            done, skipped, rows = done + 1, skipped + 1, rows + 1
            yield PointSkipped(point, row, res, progress())
            continue
        yield PointStarted(point, progress())
        t0 = time.monotonic()
        popts = dataclasses.replace(opts, threads=point.threads) if point.threads else opts
        if point.paths:  # a resumed point that has some of its rows already: only the rest
            popts = dataclasses.replace(popts, paths=tuple(point.paths))
        results: list[Result] = []
        # decide_for and make_tensors only when given: iter_run's stand-ins (tests, callers) keep their old signature
        extra = {"decide_for": decide_for} if decide_for is not None else {}
        if tensors_for is not None:
            extra["make_tensors"] = tensors_for(point)
        gen = iter_run(point.spec, popts, cancelled, ctx, vary=point.label, **extra)
        try:
            for ev in gen:
                if isinstance(ev, PathFinished):
                    rows += 1
                    ev.result.problem_index = point.index  # its row says which problem of the list it is
                    results.append(ev.result)
                yield ev
                if isinstance(ev, PathFinished) and not keep_details:
                    _strip(ev.result)
        except SpecError as e:  # refused before any work (memory guard): the point is skipped
            point.error, point.error_field = str(e), e.field
            row, res = skipped_row(point, threads)
            done, skipped, rows, runs_left = done + 1, skipped + 1, rows + 1, runs_left - 1
            yield PointSkipped(point, row, res, progress())
            continue
        except Exception as e:  # noqa: BLE001 - e.g. allocation failure: this point's rows, not the sweep
            from explorer.core.paths.base import one_line

            finished = {r.path for r in results}
            for path in popts.paths:
                if path in finished:
                    continue
                r = Result(spec=point.spec, path=path, threads=threads, status="error", error=one_line(e),
                           vary=point.label, budget_ms=opts.budget_ms, started_at=time.strftime("%Y-%m-%dT%H:%M:%S"),
                           problem_index=point.index)
                rows += 1
                results.append(r)
                yield PathFinished(r)
        finally:
            gen.close()
        if cancelled():
            was_cancelled = True
            break
        run_time += time.monotonic() - t0
        runs_done += 1
        done, runs_left = done + 1, runs_left - 1
        yield PointFinished(point, results, progress())
        del results
    yield SweepFinished(progress(), was_cancelled)


def iter_sweep(base: ConvSpec | str, varies: Iterable[str | Vary], opts=None, cancel=None, ctx=None,
               keep_details: bool = False) -> Iterator:
    """plan_sweep + iter_points: the events of a whole sweep."""
    return iter_points(plan_sweep(base, varies), opts, cancel, ctx, keep_details)
