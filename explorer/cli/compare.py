"""`compare`: two results CSVs matched row by row (desc, path, dtype, threads)."""

from __future__ import annotations

import json

from explorer.cli.common import fmt as _fmt
from explorer.cli.common import strict_json


def add_parsers(sub) -> None:
    p = sub.add_parser("compare", help="compare two results CSVs (speedup A/B of the median per matched row, above 1: B faster)")
    p.add_argument("a", help="baseline CSV (A), or one CSV of several hosts (a cluster run with --every-host)")
    p.add_argument("b", nargs="?", default=None, help="CSV to compare (B); leave out to set A's hosts side by side")
    p.add_argument("--against", type=str, default=None, metavar="HOST",
                   help="with one CSV of several hosts: the host the others are compared with (default: the first)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


# ---- compare ----------------------------------------------------------------------------------------
def cmd_compare(args) -> int:
    from explorer.core.report.compare import KEY_COLUMNS, SPEEDUP_DEFINITION, compare_csv

    if args.b is None or args.against:
        return _compare_hosts(args)
    c = compare_csv(args.a, args.b)
    if args.json:
        print(strict_json(c.to_json()))
        return 0
    head = ("desc", "path", "dtype", "threads", "A median ms", "B median ms", "speedup", "verdict")
    rows = []
    for m in c.matched:
        desc, path, dtype, threads, direction = m.key
        path = path if direction == "FWD" else f"{path} {direction}"  # a backward pair says so
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
    a_isa, b_isa = c.isas()
    if a_isa != b_isa:  # an ISA what-if: the same shapes as two CPUs (oneDNN's ISA as each CSV recorded it)
        print(f"isa: A {', '.join(a_isa) or '-'}; B {', '.join(b_isa) or '-'}")
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


def _compare_hosts(args) -> int:
    """One CSV (or two joined) measured on several hosts: each host's median and speedup against one host."""
    from explorer.core.report.hosts import compare_hosts
    from explorer.core.report.results import read_csv

    rows = read_csv(args.a) + (read_csv(args.b) if args.b else [])
    c = compare_hosts(rows, args.against, repr(args.a) if args.b is None else f"{args.a!r} and {args.b!r}")
    if args.json:
        print(json.dumps(c.to_json(), indent=1))
        return 0
    others = c.hosts[1:]
    head = ("desc", "path", "dtype", "threads", f"{c.against} ms", *(f"{h} ms" for h in others),
            *(f"{h} speedup" for h in others))
    table = []
    for k in c.keys:
        cells = []
        for h in c.hosts:
            r = c.rows.get((k, h))
            if r is None:
                cells.append("-")
            elif r.get("status") != "ok":
                cells.append(str(r.get("status")))
            else:
                cells.append(("~" if r.get("quality") == "noisy" else "") + _fmt(r.get("median_ms")))
        ratios = []
        for h in others:
            v, uncertain = c.speedup(k, h)
            ratios.append("-" if v is None else (f"~{v:.3f}x?" if uncertain else f"{v:.3f}x"))
        table.append((k[0] or "-", (k[1] or "-") + ("" if k[4] == "FWD" else f" {k[4]}"), k[2] or "-", _fmt(k[3], "{}"), *cells, *ratios))
    print(f"hosts side by side; speedup = {c.against} median / host median (above 1: the host is faster); "
          "~x? marks a noisy row (shown, never counted)")
    widths = [max(len(str(x)) for x in col) for col in zip(head, *table)]
    for r in (head, *table):
        print("  ".join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip())
    for h in others:
        p = c.pairs[h]
        g = p.geomean
        print(f"{h} vs {c.against}: {len(p.speedups)} trusted pairs; geometric mean speedup = {_fmt(g, '{:.3f}x')}"
              + (f" ({p.verdict.replace('B ', h + ' ')})" if g is not None else "")
              + (f"; {p.uncertain} pairs with a noisy row left out" if p.uncertain else ""))
    return 0


COMMANDS = {"compare": cmd_compare}
