"""One CSV measured on several hosts (a cluster run with --every-host), hosts side by side.

Per problem and path (compare's key: desc, path, dtype, threads), each host's median and its speedup
against a chosen host: speedup = chosen host's median / this host's median (above 1: this host is faster),
the app's one convention. The geometric mean per host counts only pairs where both rows are `ok` and
neither is noisy, as compare does; the rest are shown, never counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from explorer.core.errors import InputError
from explorer.core.report.compare import Comparison, compare_rows, row_key


@dataclass
class HostComparison:
    against: str
    hosts: list[str]  # every host, the chosen one first
    keys: list[tuple] = field(default_factory=list)  # every (desc, path, dtype, threads), in file order
    rows: dict = field(default_factory=dict)  # (key, host) -> row
    pairs: dict[str, Comparison] = field(default_factory=dict)  # host -> against vs host

    def speedup(self, key: tuple, host: str) -> tuple[float | None, bool]:
        """(against median / host median, uncertain) for one problem and path."""
        for m in self.pairs[host].matched:
            if m.key == key:
                return m.speedup, m.uncertain
        return None, False

    def to_json(self) -> dict:
        return {
            "against": self.against, "hosts": self.hosts,
            "speedup": f"speedup = {self.against} median / host median (above 1: the host is faster)",
            "geomean": {h: self.pairs[h].geomean for h in self.hosts[1:]},
            "rows": [
                {"desc": k[0], "path": k[1], "dtype": k[2], "threads": k[3], "direction": k[4],
                 "median_ms": {h: (self.rows.get((k, h)) or {}).get("median_ms") for h in self.hosts},
                 "speedup": {h: self.speedup(k, h)[0] for h in self.hosts[1:]}}
                for k in self.keys
            ],
        }


def hosts_in(rows: list[dict]) -> list[str]:
    out: list[str] = []
    for r in rows:
        h = r.get("host")
        if h and h not in out:
            out.append(h)
    return out


def compare_hosts(rows: list[dict], against: str | None = None, label: str = "the CSV") -> HostComparison:
    """Hosts side by side; InputError in one sentence without host columns, with one host, or an unknown one."""
    hosts = hosts_in(rows)
    if not rows or "host" not in rows[0]:
        raise InputError(f"{label} has no host column: compare two CSVs (compare A.csv B.csv), or measure with "
                         "--cluster ADDRESS --every-host.", "against")
    if len(hosts) < 2:
        raise InputError(f"{label} holds rows of {len(hosts)} host{'' if len(hosts) == 1 else 's'}: nothing to "
                         "set side by side.", "against")
    against = against or hosts[0]
    if against not in hosts:
        raise InputError(f"host {against!r} is not in {label}; it holds {', '.join(hosts)}.", "against")
    by_host = {h: [r for r in rows if r.get("host") == h] for h in hosts}
    out = HostComparison(against, [against] + [h for h in hosts if h != against])
    for r in rows:
        k = row_key(r)
        if k not in out.keys:
            out.keys.append(k)
        out.rows.setdefault((k, r.get("host")), r)
    for h in out.hosts[1:]:
        out.pairs[h] = compare_rows(by_host[against], by_host[h], against, h)
    return out
