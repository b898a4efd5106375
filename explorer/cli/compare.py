"""`compare`: two results CSVs matched row by row (desc, path, dtype, threads)."""

from __future__ import annotations

import json

from explorer.cli.common import fmt as _fmt
from explorer.cli.common import strict_json


def add_parsers(sub) -> None:
    p = sub.add_parser("compare", help="compare two results CSVs (speedup A/B of the median per matched row, above 1: B faster)")
    p.add_argument("a", help="baseline CSV (A)")
    p.add_argument("b", help="CSV to compare (B)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


# ---- compare ----------------------------------------------------------------------------------------
def cmd_compare(args) -> int:
    from explorer.core.report.compare import KEY_COLUMNS, SPEEDUP_DEFINITION, compare_csv

    c = compare_csv(args.a, args.b)
    if args.json:
        print(strict_json(c.to_json()))
        return 0
    head = ("desc", "path", "dtype", "threads", "A median ms", "B median ms", "speedup", "verdict")
    rows = []
    for m in c.matched:
        desc, path, dtype, threads = m.key
        if m.speedup is None:
            ratio = f"{m.a.get('status')}/{m.b.get('status')}"
        elif m.uncertain:
            ratio = f"~{m.speedup:.3f}x?"  # a noisy row: shown, never counted
        else:
            ratio = f"{m.speedup:.3f}x"
        rows.append((desc or "-", path or "-", dtype or "-", _fmt(threads, "{}"), _fmt(m.a.get("median_ms")),
                     _fmt(m.b.get("median_ms")), ratio, m.verdict or "-"))
    print(f"A = {c.a_label}\nB = {c.b_label}\nmatched on {', '.join(KEY_COLUMNS)}; {SPEEDUP_DEFINITION}; "
          f"no difference: inside the rows' spread (IQR / median), or under 1%")
    if rows:
        widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
        print("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
        for r in rows:
            print("  ".join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip())
    g = c.geomean
    print(f"{len(c.matched)} matched rows, {len(c.speedups)} trusted (both medians, neither noisy); geometric mean "
          f"speedup A/B = {_fmt(g, '{:.3f}')}x" + (f" ({c.verdict})" if g is not None else ""))
    if c.uncertain:
        print(f"{c.uncertain} pairs involve a noisy row (verdict uncertain): left out of the geometric mean")
    for side, label, only in (("A", c.a_label, c.only_a), ("B", c.b_label, c.only_b)):
        if only:
            print(f"only in {side} ({label}): {len(only)} rows")
            for r in only:
                print(f"  {r.get('desc') or '-'}  {r.get('path') or '-'}  {r.get('dtype') or '-'}  "
                      f"threads={_fmt(r.get('threads'), '{}')}  {r.get('status')}")
    return 0


COMMANDS = {"compare": cmd_compare}
