"""One counting rule for a set of rows (Results or CSV row dicts), said the same way by the Run status, the Sweep
status and `gui --vary`'s last line: "6 paths: 4 trusted, 2 noisy, 0 failed".

trusted: status ok and the timing loop undisturbed; noisy: status ok but another program disturbed the loop
(quality "noisy"; its time is uncertain); failed: status error; not run: unsupported or skipped (said only when
there are any). Every row is in exactly one of the four."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RowCounts", "count_rows", "count_text"]


@dataclass(frozen=True)
class RowCounts:
    total: int
    trusted: int
    noisy: int
    failed: int
    not_run: int


def _get(r, key: str) -> str:
    v = r.get(key) if isinstance(r, dict) else getattr(r, key, "")
    return v or ""


def count_rows(rows) -> RowCounts:
    rows = list(rows)
    ok = [r for r in rows if _get(r, "status") == "ok"]
    noisy = sum(1 for r in ok if _get(r, "quality") == "noisy")
    failed = sum(1 for r in rows if _get(r, "status") == "error")
    return RowCounts(len(rows), len(ok) - noisy, noisy, failed, len(rows) - len(ok) - failed)


def count_text(rows, noun: str = "rows") -> str:
    """ "36 rows: 0 trusted, 36 noisy, 0 failed" (", 2 not run" added when some are unsupported or skipped);
    `noun` is plural ("paths"), made singular for one row."""
    c = count_rows(rows)
    word = noun[:-1] if c.total == 1 and noun.endswith("s") else noun
    text = f"{c.total} {word}: {c.trusted} trusted, {c.noisy} noisy, {c.failed} failed"
    if c.not_run:
        text += f", {c.not_run} not run (unsupported or skipped)"
    return text
