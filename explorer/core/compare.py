"""Compare two results CSVs: rows matched on (desc, path, dtype, threads), ratio B/A of the median time.

ratio = B median / A median, so below 1 means B is faster. The geometric mean is over every matched
pair where both rows are `ok` with a positive median and neither is `noisy` (another program disturbed
its timing): a ratio on a noisy row is shown as uncertain and never counted as a finding. A key that occurs several times on one side (a
batch file listing one shape twice) is paired in order of appearance; rows left over are unmatched.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from explorer.core.results import read_csv

KEY_COLUMNS = ("desc", "path", "dtype", "threads")


def row_key(row: dict) -> tuple:
    return tuple(row.get(k) for k in KEY_COLUMNS)


@dataclass
class Match:
    key: tuple
    a: dict
    b: dict

    @property
    def ratio(self) -> float | None:
        """B median / A median (None unless both rows are ok with a positive median)."""
        am, bm = self.a.get("median_ms"), self.b.get("median_ms")
        if self.a.get("status") != "ok" or self.b.get("status") != "ok" or not am or not bm or am <= 0 or bm <= 0:
            return None
        return bm / am

    @property
    def uncertain(self) -> bool:
        """Either side's timing was disturbed by another program (quality=noisy)."""
        return "noisy" in ((self.a.get("quality") or ""), (self.b.get("quality") or ""))


@dataclass
class Comparison:
    a_label: str
    b_label: str
    matched: list[Match] = field(default_factory=list)
    only_a: list[dict] = field(default_factory=list)
    only_b: list[dict] = field(default_factory=list)

    @property
    def ratios(self) -> list[float]:
        """The trusted B/A ratios: both medians present, neither row noisy."""
        return [m.ratio for m in self.matched if m.ratio is not None and not m.uncertain]

    @property
    def uncertain(self) -> int:
        """Pairs with both medians whose ratio is uncertain (a noisy row): left out of the geometric mean."""
        return sum(1 for m in self.matched if m.ratio is not None and m.uncertain)

    @property
    def geomean(self) -> float | None:
        """Geometric mean of the trusted B/A ratios (None when no pair has both medians and no noise)."""
        rs = self.ratios
        return math.exp(sum(math.log(r) for r in rs) / len(rs)) if rs else None

    def to_json(self) -> dict:
        def brief(row: dict) -> dict:
            return {k: row.get(k) for k in (*KEY_COLUMNS, "name", "vary", "status", "median_ms", "gflops")}

        return {
            "a": self.a_label,
            "b": self.b_label,
            "key": list(KEY_COLUMNS),
            "ratio": "B median / A median (below 1: B is faster)",
            "geomean": self.geomean,
            "uncertain": self.uncertain,
            "matched": [
                {**{k: v for k, v in zip(KEY_COLUMNS, m.key)}, "name": m.a.get("name") or m.b.get("name"),
                 "a_status": m.a.get("status"), "b_status": m.b.get("status"),
                 "a_median_ms": m.a.get("median_ms"), "b_median_ms": m.b.get("median_ms"), "ratio": m.ratio,
                 "uncertain": m.uncertain}
                for m in self.matched
            ],
            "only_a": [brief(r) for r in self.only_a],
            "only_b": [brief(r) for r in self.only_b],
        }


def compare_rows(a_rows: list[dict], b_rows: list[dict], a_label: str = "A", b_label: str = "B") -> Comparison:
    """Match rows of two result sets (as read_csv returns them) and pair them up."""
    pending: dict[tuple, list[dict]] = {}
    for row in b_rows:
        pending.setdefault(row_key(row), []).append(row)
    out = Comparison(a_label, b_label)
    for row in a_rows:
        queue = pending.get(row_key(row))
        if queue:
            out.matched.append(Match(row_key(row), row, queue.pop(0)))
        else:
            out.only_a.append(row)
    matched_b = {id(m.b) for m in out.matched}
    out.only_b = [r for r in b_rows if id(r) not in matched_b]
    return out


def compare_csv(a_path: str | os.PathLike, b_path: str | os.PathLike) -> Comparison:
    """Read both CSVs (InputError naming the file and line when one is bad) and compare them."""
    return compare_rows(read_csv(a_path), read_csv(b_path), str(a_path), str(b_path))
