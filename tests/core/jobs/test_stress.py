"""Stress: a few hundred tiny specs, cancelled at random points; every CSV left behind must be valid
and hold exactly the rows that finished."""

import random

from explorer.core.errors import SpecError
from explorer.core.jobs.events import PathFinished, PathStarted
from explorer.core.jobs.options import RunOptions
from explorer.core.jobs.run import iter_run
from explorer.core.paths.base import PATHS
from explorer.core.problem.spec import ConvSpec
from explorer.core.report.results import CsvSink, read_csv


def _random_spec(rng: random.Random) -> ConvSpec:
    g = rng.choice([1, 1, 2, 4])
    return ConvSpec(
        mb=rng.randint(1, 2), g=g, ic=g * rng.randint(1, 4), oc=g * rng.randint(1, 4), ih=rng.randint(1, 9),
        iw=rng.randint(1, 9), kh=rng.randint(1, 3), kw=rng.randint(1, 3), sh=rng.randint(1, 2), sw=rng.randint(1, 2),
        ph=rng.randint(0, 1), pw=rng.randint(0, 1), dh=rng.randint(0, 1), dw=0, bias=rng.random() < 0.5,
        dtype=rng.choice(["f32", "f32", "bf16"]),
    )


def test_random_cancels_always_leave_a_valid_csv(tmp_path):
    """The cancel point is counted in cancel checks from the start of a chosen path, and only the first 7
    checks of a path that runs are used: they always happen (3 around the untimed call, then at least
    min_samples=5 timed calls), however fast this CPU is and whichever paths it supports. Counting checks
    over the whole run made whether a run was cancelled depend on how many calls fit in the 1 ms budget."""
    rng = random.Random(1234)
    runs = cancelled_runs = invalid = total_rows = 0
    for i in range(300):
        spec = _random_spec(rng)
        paths = tuple(rng.sample(PATHS, rng.randint(1, 3)))
        # cancel during path `target` (-1: before any work; len(paths): never), at its check `at`
        target, at = rng.randint(-1, len(paths)), rng.randint(0, 6)
        state = {"started": -1, "checks": 0, "fired": False}

        def cancel():
            if state["started"] >= target:
                state["checks"] += 1
                state["fired"] = state["checks"] > at
            return state["fired"]

        out = tmp_path / f"run{i}.csv"
        sink = CsvSink(out)
        sink.flush()  # the file exists (header only) from the start, as the CLI's sink does after its first row
        finished = after_cancel = 0
        try:
            for ev in iter_run(spec, RunOptions(paths=paths, budget_ms=1, trace=rng.random() < 0.3), cancel=cancel):
                if isinstance(ev, PathStarted):
                    state["started"] = ev.index
                if isinstance(ev, PathFinished):
                    after_cancel += state["fired"]
                    sink.add(ev.result)
                    finished += 1
        except SpecError:
            invalid += 1
            continue
        runs += 1
        total_rows += finished
        cancelled_runs += finished < len(paths)
        # Stop means stop: no row after cancel said so, and without a cancel every path has its row.
        assert after_cancel == 0
        assert state["fired"] or finished == len(paths)
        rows = read_csv(out)  # raises on any malformed file
        assert len(rows) == finished
        assert all(r["status"] in ("ok", "unsupported", "error") for r in rows)
        assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    # the test really exercised both finished rows and mid-run cancels
    assert runs > 150 and cancelled_runs > 25 and total_rows > 150
