"""The per-layer table's early stop (issue 36 item 4): a path no mode's prediction uses stops once its median's
interval is separated from the best path's, and goes on while they overlap; the paths the modes run on keep
their full budget. Synthetic timings only: nothing here is timed."""

import time

import numpy as np
import pytest

from explorer.core.measure.harness import Budget, measure
from explorer.core.model.timing.ranking import MIN_SAMPLES, best_so_far, ranking_stop, separated
from explorer.core.report.results import Result


def _ns(median_ms: float, spread: float, n: int = 40) -> np.ndarray:
    """n samples spread evenly +-spread around median_ms, in ns."""
    return (np.linspace(median_ms * (1 - spread), median_ms * (1 + spread), n) * 1e6).astype(np.int64)


def _row(path: str, median_ms: float, spread: float = 0.02, n: int = 40, status: str = "ok") -> Result:
    return Result(spec=None, threads=1, path=path, status=status, median_ms=median_ms, p25_ms=median_ms * (1 - spread / 2),
                  p75_ms=median_ms * (1 + spread / 2), samples=n, samples_used=n)


def test_a_clearly_slower_or_faster_path_is_decided_and_a_close_one_is_not():
    best = best_so_far([_row("dense", 1.0), _row("channels_last", 1.3)])
    assert best[0] == 1.0 and 0 < best[1] < 0.05
    assert separated(_ns(2.0, 0.05), *best)  # native at twice the time: settled
    assert separated(_ns(0.5, 0.05), *best)  # clearly faster than the best so far: settled too
    assert not separated(_ns(1.01, 0.05), *best)  # overlaps: timed on
    assert not separated(_ns(2.0, 0.05, n=MIN_SAMPLES - 1), *best)  # too few calls to decide anything


def test_a_wide_spread_keeps_a_path_running_that_a_narrow_one_would_stop():
    best = best_so_far([_row("dense", 1.0, spread=0.01)])
    assert separated(_ns(1.2, 0.02), *best)
    assert not separated(_ns(1.2, 2.0, n=12), *best)  # the same median on a loaded host: not settled


def test_the_paths_the_modes_run_on_keep_their_full_budget():
    decide_for = ranking_stop({"dense", "channels_last", "mkldnn"})
    done = [_row("dense", 1.0), _row("channels_last", 0.8)]
    assert decide_for("mkldnn", done) is None  # its median is to_mkldnn's prediction
    assert decide_for("dense", []) is None
    stop = decide_for("native", done)
    assert stop is not None and stop(_ns(3.0, 0.02)) and not stop(_ns(0.8, 0.02))
    # nothing finished ok to rank against: the full budget
    assert decide_for("native", [_row("dense", 1.0, status="error")]) is None


def test_the_harness_ends_a_loop_as_decided_when_told():
    # A call of half a millisecond: a no-op call reaches the harness's 200,000-sample cap before the first
    # early-stop check on a quiet machine (a fifth of the budget), and the loop then ends as max_samples.
    def call():
        time.sleep(0.0005)

    m = measure(call, Budget(400.0, 5, precision=0.0, warmup=0, decided=lambda s: s.size >= 50))
    assert m.stop_reason == "decided" and m.n >= 50
    m = measure(call, Budget(50.0, 5, precision=0.0, warmup=0, decided=lambda s: False))
    assert m.stop_reason == "budget"


def test_the_first_early_stop_check_follows_the_budget_share_and_check_schedule():
    # The planner's table asks its first early stop at a tenth of the budget (PLANNER_EARLIEST_SHARE), run at
    # a fifth; a loop of long samples checks every sample from check_from on.
    def call():
        time.sleep(0.001)

    seen: list[int] = []

    def stop(s):
        seen.append(s.size)
        return True

    m = measure(call, Budget(1000.0, 5, precision=0.0, warmup=0, decided=stop, earliest_share=0.05))
    assert m.stop_reason == "decided" and m.wall_s < 0.15  # a fifth would be 200 ms at the least
    calls = [0]

    def counted():
        calls[0] += 1
        time.sleep(0.001)

    seen.clear()
    m = measure(counted, Budget(100.0, 5, precision=0.0, warmup=0, decided=lambda s: seen.append(calls[0]) or False,
                                check_from=7, check_step=1, earliest_share=0.0))
    assert seen[:3] == [7, 8, 9] and m.stop_reason == "budget"  # (the harness passes only undisturbed samples)


def test_the_planner_times_its_table_with_its_own_early_stop_share():
    from explorer.core.errors import InputError
    from explorer.core.model.report import PLANNER_EARLIEST_SHARE, ModelOptions

    assert ModelOptions().earliest_share == PLANNER_EARLIEST_SHARE < Budget().earliest_share
    with pytest.raises(InputError, match="early-stop share"):
        ModelOptions(earliest_share=0).validate()
