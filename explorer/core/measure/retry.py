"""The one retry rule: a loop another program disturbed is measured again, and the better loop is kept.

Every timed loop of the explorer goes through it: a path's row (jobs.run.iter_run), the chained MKLDNN
variant (model.chained), a model mode's own loops (model.modes.timed), the convs in model order
(model.sequence) and the machine's peak kernels (measure.machine). What differs between them is explicit
here: how many attempts, what is yielded between attempts, and whether a cancelled loop ends the retries.
"""

from __future__ import annotations

from typing import Callable, Generator, Iterator

MAX_ATTEMPTS = 3  # one loop and up to two more when another program disturbed it


def better(a, b):
    """Of two loops of the same call, the one to report: a trusted one, else the less disturbed one."""
    if a is None:
        return b
    rank = {"ok": 0, "": 1, "noisy": 2}
    ka = (rank.get(a.quality, 2), _wait(a))
    kb = (rank.get(b.quality, 2), _wait(b))
    return b if kb <= ka else a


def _wait(m) -> float:
    i = m.interference
    return i.runq_wait_pct if i is not None and i.runq_wait_pct is not None else 0.0


def iter_until_trusted(
    measure_once: Callable[[int], Generator],
    attempts: int = MAX_ATTEMPTS,
    on_retry: Callable[[int, object], object] | None = None,
    cancellable: bool = True,
) -> Generator:
    """The rule as a generator, for a loop that reports while it runs: `measure_once(attempt)` (1-based) is a
    generator whose events are passed on and which returns its Measurement. Before each attempt after the
    first, `on_retry(attempt, kept)` is called and what it returns (an event, e.g. PathRetry), if not None,
    is yielded. Measures until the kept loop (better() of the attempts) is not noisy, at most `attempts`
    loops. Returns (kept Measurement, attempts made), or None when a loop was cancelled (with
    `cancellable=False` a cancelled loop is kept like any other)."""
    kept = None
    attempt = 0
    for attempt in range(1, attempts + 1):
        if attempt > 1 and on_retry is not None:
            event = on_retry(attempt, kept)
            if event is not None:
                yield event
        new = yield from measure_once(attempt)
        if cancellable and new.stop_reason == "cancelled":
            return None
        kept = better(kept, new)
        if kept.quality != "noisy":
            break
    return kept, attempt


def measure_until_trusted(
    measure_once: Callable[[int], object],
    attempts: int = MAX_ATTEMPTS,
    on_retry: Callable[[int, object], object] | None = None,
    cancellable: bool = True,
):
    """The rule for a plain loop: `measure_once(attempt)` (1-based) returns a Measurement. Measured again
    while the kept loop is noisy, up to `attempts` loops in all; `on_retry(attempt, kept)` is called before
    each attempt after the first. Returns (kept Measurement, attempts made), or None when a loop was
    cancelled (never, with `cancellable=False`)."""

    def once(attempt: int) -> Iterator:
        return measure_once(attempt)
        yield  # a generator that yields nothing: iter_until_trusted's form of a plain loop

    run = iter_until_trusted(once, attempts, on_retry, cancellable)
    while True:
        try:
            next(run)  # only on_retry's return values: a plain loop has no events to pass on
        except StopIteration as stop:
            return stop.value
