"""`merge`: CSV pieces of one run (--shard, or several machines' runs) joined into one CSV."""

from __future__ import annotations

import sys

from explorer.cli.common import plural


def add_parsers(sub) -> None:
    p = sub.add_parser("merge", help="join results CSVs of one kind of run (e.g. the --shard pieces) into one CSV",
                       description="Join results CSVs whose columns are the same (refused otherwise), in the order "
                                   "given, into one CSV.")
    p.add_argument("pieces", nargs="+", metavar="CSV", help="the CSVs to join")
    p.add_argument("--csv", type=str, required=True, help="the CSV to write (atomically)")
    p.add_argument("--force", action="store_true", help="overwrite an existing CSV")


def cmd_merge(args) -> int:
    from explorer.core.fleet.pieces import merge_csvs

    n = merge_csvs(args.pieces, args.csv, overwrite=args.force)
    print(f"wrote {plural(n, 'row')} from {plural(len(args.pieces), 'CSV')} to {args.csv}", file=sys.stderr)
    return 0


COMMANDS = {"merge": cmd_merge}
