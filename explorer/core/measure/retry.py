"""The one retry rule: a loop another program disturbed is measured again, and the better loop is kept."""

from __future__ import annotations

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
