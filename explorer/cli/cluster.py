"""The batch and sweep commands' pieces for many machines: --shard, --resume and --cluster.

Shared by the command modules like `common` (it registers no command). Rows go to the CSV as they
finish, local or remote; a cluster run's CSV is the local schema plus the host columns.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field

from explorer.cli.common import allocator_note, fmt, plural, run_options


@dataclass
class Plan:
    """What a batch or sweep runs after --shard and --resume, and where its rows go."""

    points: list
    target: str | None  # the CSV rows are written to
    rows: list = field(default_factory=list)  # the resumed CSV's rows, written again first
    done: set = field(default_factory=set)  # their identities (with the host for --every-host)
    already: int = 0  # problems the resumed CSV holds (local and spread runs)


def plan(points: list, args) -> Plan:
    """Apply --shard and --resume; check the CSV target before any work (one sentence when wrong)."""
    from explorer.core.errors import InputError
    from explorer.core.fleet.hosts import CLUSTER_COLUMNS
    from explorer.core.fleet.pieces import parse_shard, point_done, resume_rows, row_identity, shard
    from explorer.core.report.results import CSV_COLUMNS, check_writable

    if args.cluster:
        from explorer.core.fleet.cluster import require_dask

        require_dask()
    if args.every_host and not args.cluster:
        raise InputError("--every-host measures on every worker of a cluster: give --cluster ADDRESS too.", "cluster")
    if args.shard:
        points = shard(points, *parse_shard(args.shard))
    out = Plan(points, args.csv)
    if args.resume:
        import os

        header, rows = resume_rows(args.resume)
        columns = CLUSTER_COLUMNS if args.cluster else CSV_COLUMNS
        if tuple(header) != tuple(columns):
            if tuple(header) == CSV_COLUMNS:
                why = "a local run's rows (no host columns); resume it without --cluster"
            elif tuple(header) == CLUSTER_COLUMNS:
                why = "a cluster run's rows (host columns); resume it with --cluster"
            else:
                why = "columns this version does not write; start a new CSV"
            raise InputError(f"{args.resume!r} holds {why}.", "resume")
        if args.csv and os.path.abspath(args.csv) != os.path.abspath(args.resume):
            check_writable(args.csv, overwrite=args.force)
        else:
            out.target = args.resume  # our own CSV, just read: it goes on in place
        out.rows = rows
        out.done = {row_identity(r, with_host=args.every_host) for r in rows}
        if not args.every_host:
            opts = run_options(args)
            kept = [p for p in points if not point_done(p, opts.paths, out.done)]
            out.already, out.points = len(points) - len(kept), kept
    elif args.csv:
        check_writable(args.csv, overwrite=args.force)
    return out


def run_on_cluster(p: Plan, args, label_cols: tuple, label_of, quiet: bool) -> int:
    """Measure the plan's points on the cluster at args.cluster; exit 1 when a problem went missing."""
    from explorer.core.fleet.cluster import ClusterMissing, ClusterRows, ClusterStarted, connect, run_points
    from explorer.core.fleet.hosts import CLUSTER_COLUMNS
    from explorer.core.fleet.pieces import point_done
    from explorer.core.jobs.sweep import skipped_row
    from explorer.core.measure.interference import warning_line
    from explorer.core.report.results import CsvSink

    opts = run_options(args)
    client = connect(args.cluster)
    sink = CsvSink(p.target, CLUSTER_COLUMNS, p.rows)
    sink.flush()
    table: list[tuple] = []
    new_rows: list[dict] = []
    missing: list[tuple] = []

    def note(msg: str) -> None:
        if not quiet:
            print(msg, file=sys.stderr, flush=True)

    def keep(rows, cols) -> None:
        for r in rows:
            sink.add(r)
            new_rows.append(r)
            table.append((cols, r.get("host") or "-", r.get("path") or "-", r.get("status"), r.get("error") or "",
                          r.get("median_ms"), r.get("gflops"), r.get("quality"), r.get("quality_reason") or ""))

    for point in (x for x in p.points if x.skipped):  # nothing to measure: written here, once
        if not point_done(point, opts.paths, p.done, "" if args.every_host else None):
            row, _ = skipped_row(point, opts.threads or 0)
            keep([{**row, "host": "", "worker": ""}], label_of(point, cols=True))
    gen = run_points(client, [x for x in p.points if not x.skipped], opts, args.every_host, p.done)
    try:
        for ev in gen:
            if isinstance(ev, ClusterStarted):
                hosts = sorted(set(ev.hosts.values()))
                note(f"cluster {args.cluster}: {plural(len(ev.hosts), 'measuring worker')} ({', '.join(hosts)}); "
                     f"{plural(ev.tasks, 'task')}" + (f", {ev.already + p.already} already in {args.resume}"
                                                      if args.resume else ""))
            elif isinstance(ev, ClusterRows):
                keep(ev.rows, label_of(ev.point, cols=True))
                note(f"[{ev.done}/{ev.total}] {label_of(ev.point)} on {ev.host}: {plural(len(ev.rows), 'row')}")
            elif isinstance(ev, ClusterMissing):
                missing.append((label_of(ev.point), ev.host, ev.reason))
                note(f"[{ev.done}/{ev.total}] {label_of(ev.point)}" + (f" on {ev.host}" if ev.host else "")
                     + f": missing ({ev.reason})")
    finally:
        gen.close()  # cancels what is still queued on the cluster (Ctrl+C included)
        client.close()
        if not quiet and table:
            print(format_table(label_cols, table))
            warn = warning_line([{"quality": r[-2] or "", "quality_reason": r[-1]} for r in table])
            if warn:
                print(warn)
            print(allocator_note(opts.allocator), file=sys.stderr)
        if p.target and not quiet:
            print(f"wrote {sink.count} rows to {p.target}", file=sys.stderr)
    if quiet:
        print(json.dumps({"results": new_rows, "missing": [{"problem": m[0], "host": m[1], "reason": m[2]}
                                                           for m in missing]}, indent=1))
    if missing:
        print(f"{plural(len(missing), 'problem')} went missing; run the same command with --resume "
              f"{p.target or 'CSV'} to measure them.", file=sys.stderr)
        return 1
    return 0


def format_table(label_cols: tuple, table: list[tuple]) -> str:
    head = (*label_cols, "host", "path", "status", "median ms", "GFLOP/s")
    rows = []
    for cols, host, path, status, error, median, gflops, quality, _reason in table:
        if status != "ok":
            rows.append((*cols, host, path, status, error[:100]))
        else:
            mark = "~" if quality == "noisy" else ""
            rows.append((*cols, host, path, "noisy" if mark else "ok", mark + fmt(_num(median)),
                         fmt(_num(gflops), "{:.1f}")))
    widths = [max(len(str(r[i])) for r in [head, *rows] if i < len(r)) for i in range(len(head))]
    return "\n".join("  ".join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip() for r in [head, *rows])


def _num(cell):
    try:
        return float(cell) if cell not in (None, "") else None
    except ValueError:
        return None
