"""Compare two results CSVs: rows matched on (desc, path, dtype, threads), speedup = A median / B median.

The app's one convention, as in the Run table and the sweep charts: speedup = baseline (A) time / time,
so above 1 means B is faster. Inside the noise the verdict is "no difference": the two medians differ by
less than the rows' typical spread (the mean of their IQR / median), and never by less than 1%. A noisy
row (another program disturbed it) makes the verdict "uncertain". The geometric mean is over every
matched pair where both rows are `ok` with a positive median and neither is noisy (those are shown as
uncertain, never counted); its noise is the pairs' median noise over
sqrt(pairs). A key that occurs several times on one side (a batch file listing one shape twice) is
paired in order of appearance; rows left over are unmatched.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from explorer.core.report.results import read_csv, row_is_noisy

KEY_COLUMNS = ("desc", "path", "dtype", "threads", "direction")
NOISE_FLOOR = 0.01  # a difference below 1% is never called a difference
SPEEDUP_DEFINITION = "speedup = A median / B median (above 1: B is faster)"


def row_key(row: dict) -> tuple:
    """The matching key. Every forward direction is "FWD" (a CSV written before the column has forward rows, and
    FWD_B/FWD_D/FWD_I time the same forward): a backward row is never matched with a forward one."""
    d = str(row.get("direction") or "FWD")
    return tuple(row.get(k) for k in KEY_COLUMNS[:-1]) + (d if d.startswith("BWD") else "FWD",)


def rel_spread(row: dict) -> float | None:
    """IQR / median of a row (p75 - p25 when iqr_ms is missing); None without a spread."""
    med = row.get("median_ms")
    iqr = row.get("iqr_ms")
    if iqr is None and row.get("p75_ms") is not None and row.get("p25_ms") is not None:
        iqr = row["p75_ms"] - row["p25_ms"]
    if not med or med <= 0 or iqr is None:
        return None
    return max(0.0, float(iqr)) / float(med)


def verdict(speedup: float | None, noise: float, uncertain: bool = False) -> str:
    """"B faster", "B slower", "no difference" (inside the noise) or "uncertain" (a noisy row)."""
    if speedup is None:
        return ""
    if uncertain:  # a noisy row: not even "no difference" is a finding
        return "uncertain"
    if abs(math.log(speedup)) < math.log1p(max(noise, NOISE_FLOOR)):
        return "no difference"
    return "B faster" if speedup > 1 else "B slower"


@dataclass
class Match:
    key: tuple
    a: dict
    b: dict

    @property
    def speedup(self) -> float | None:
        """A median / B median (None unless both rows are ok with a positive median); above 1: B is faster."""
        am, bm = self.a.get("median_ms"), self.b.get("median_ms")
        if self.a.get("status") != "ok" or self.b.get("status") != "ok" or not am or not bm or am <= 0 or bm <= 0:
            return None
        return am / bm

    @property
    def noise(self) -> float:
        """The pair's typical relative spread: the mean of both rows' IQR / median (at least NOISE_FLOOR)."""
        spreads = [s for s in (rel_spread(self.a), rel_spread(self.b)) if s is not None]
        return max(NOISE_FLOOR, sum(spreads) / len(spreads)) if spreads else NOISE_FLOOR

    @property
    def noisy(self) -> bool:
        return row_is_noisy(self.a) or row_is_noisy(self.b)

    @property
    def verdict(self) -> str:
        return verdict(self.speedup, self.noise, self.noisy)

    @property
    def uncertain(self) -> bool:
        """Either side's timing was disturbed by another program (quality=noisy): shown, never counted."""
        return self.noisy


@dataclass
class Comparison:
    a_label: str
    b_label: str
    matched: list[Match] = field(default_factory=list)
    only_a: list[dict] = field(default_factory=list)
    only_b: list[dict] = field(default_factory=list)

    @property
    def speedups(self) -> list[float]:
        """The trusted speedups A/B: both medians present, neither row noisy."""
        return [m.speedup for m in self.matched if m.speedup is not None and not m.noisy]

    @property
    def uncertain(self) -> int:
        """Pairs with both medians whose speedup is uncertain (a noisy row): left out of the geometric mean."""
        return sum(1 for m in self.matched if m.speedup is not None and m.noisy)

    @property
    def geomean(self) -> float | None:
        """Geometric mean of the trusted speedups A/B (None when none); above 1: B is faster."""
        rs = self.speedups
        return math.exp(sum(math.log(r) for r in rs) / len(rs)) if rs else None

    @property
    def geomean_noise(self) -> float:
        noises = sorted(m.noise for m in self.matched if m.speedup is not None and not m.noisy)
        if not noises:
            return NOISE_FLOOR
        return max(NOISE_FLOOR, noises[len(noises) // 2] / math.sqrt(len(noises)))

    @property
    def verdict(self) -> str:
        if self.geomean is None and self.uncertain:
            return "uncertain"  # every pair with both medians has a noisy row: no finding
        return verdict(self.geomean, self.geomean_noise)

    def isas(self) -> tuple[list[str], list[str]]:
        """The ISAs each side's rows ran with, in order of appearance (the `isa` column, read back from oneDNN)."""
        def of(rows):
            return list(dict.fromkeys(str(r["isa"]) for r in rows if r.get("isa")))

        return of([m.a for m in self.matched] + self.only_a), of([m.b for m in self.matched] + self.only_b)

    def to_json(self) -> dict:
        def brief(row: dict) -> dict:
            return {k: row.get(k) for k in (*KEY_COLUMNS, "name", "vary", "status", "median_ms", "gflops")}

        return {
            "a": self.a_label,
            "b": self.b_label,
            "key": list(KEY_COLUMNS),
            "speedup": SPEEDUP_DEFINITION,
            "geomean": self.geomean,
            "verdict": self.verdict,
            "uncertain": self.uncertain,
            "matched": [
                {**{k: v for k, v in zip(KEY_COLUMNS, m.key)}, "name": m.a.get("name") or m.b.get("name"),
                 "a_status": m.a.get("status"), "b_status": m.b.get("status"),
                 "a_median_ms": m.a.get("median_ms"), "b_median_ms": m.b.get("median_ms"), "speedup": m.speedup,
                 "verdict": m.verdict, "a_isa": m.a.get("isa"), "b_isa": m.b.get("isa")}
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
