"""`sweep` and `batch`: many points, each over the paths, through the core's iter_points.

sweep and batch write the CSV row by row as each (point, path) finishes (header first, then one
appended row at a time), print progress to stderr and a table at the end, also after Ctrl+C.
"""

from __future__ import annotations

import json
import sys

from explorer.cli.common import (
    EXIT_BAD_INPUT,
    add_fleet_options,
    add_run_options,
    clip_long,
    allocator_note,
    fleet_plan,
    close_timeline,
    isa_note,
    measured_events,
    network_total_json,
    open_timeline,
    plural,
    positive_int_arg,
    print_environment_notes,
    ratio_text,
    run_on_cluster,
    run_options,
    spec_from,
    strict_json,
    writing_failed,
)
from explorer.cli.common import (
    fmt as _fmt,
)
from explorer.core.measure.interference import warning_line

COMMANDS: dict = {}
_BRIEF = ("name", "desc", "dtype", "threads", "path", "status", "median_ms", "quality", "problem_index")


def add_parsers(sub) -> None:
    """Register the sweep/batch/compare subcommands on the main parser's subparsers."""
    p = sub.add_parser(
        "sweep", help="run one convolution over values of one or two fields (the full grid)",
        description="Vary one or two fields: --vary g=1,2,4,8 (list), mb=1:64:x2 (geometric), "
                    "ic=16:256:+16 (arithmetic), g=divisors (every g dividing ic and oc). Any spec field, "
                    "dtype, dir (benchdnn's --dir: dir=FWD_I,BWD_D,BWD_W), threads, allocator or isa "
                    "(isa=avx2,avx512_core: one measuring process per ISA cap).")
    p.add_argument("desc", help="benchdnn conv descriptor, e.g. mb2ic32ih28oc32oh28kh3ph1")
    p.add_argument("--vary", action="append", default=[], metavar="FIELD=VALUES",
                   help="field and values to sweep; give it twice for a grid")
    add_run_options(p)
    add_fleet_options(p)

    p = sub.add_parser("batch", help="run a benchdnn conv batch file (or a shipped one: resnet_50, quick, ...)")
    p.add_argument("file", help="batch file path, or the bare name of a shipped batch")
    p.add_argument("--mb", type=positive_int_arg, default=None, help="minibatch for every line (overrides the file)")
    p.add_argument("--list", action="store_true",
                   help="list every problem (like benchdnn --mode=L): line, descriptor, dims, left/right pads, "
                        "output sizes, op counts; runs nothing")
    add_run_options(p)
    add_fleet_options(p)



# ---- shared running loop ----------------------------------------------------------------------------
def _eta(s: float | None) -> str:
    if s is None:
        return "?"
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def _run_points(points, args, label_cols, label_of, sink_path, quiet, totals: bool = False,
                resumed: list | None = None) -> int:
    """Run points through iter_points, writing each row as it finishes; print the table at the end.
    `resumed`: the rows of the CSV that goes on (--resume), written again first."""
    from explorer.core.jobs.events import PathFinished, PathRetry, PointSkipped, PointStarted
    from explorer.core.report.results import CsvSink

    opts = run_options(args)
    timeline = open_timeline(args)
    sink = CsvSink(sink_path, rows=resumed or [])
    sink.flush()  # the header is on disk before the first point runs
    table: list[tuple] = []  # small summaries only, never Results
    json_rows: list[dict] = []
    dense: dict = {}
    quality_rows: list[dict] = []
    current_cols: tuple = ()
    # What a batch's network total needs of each row: every row of the CSV, the resumed ones too.
    brief: list[dict] = [{k: r.get(k) for k in _BRIEF} for r in (resumed or [])]
    isas: list[str] = []  # oneDNN's ISA of the rows, read back
    n_refused = 0

    def note(msg: str) -> None:
        if not quiet:
            print(msg, file=sys.stderr, flush=True)

    try:
        for ev in measured_events("points", points, opts, allocator=opts.allocator, isa=opts.isa):
            if isinstance(ev, PointStarted):
                current_cols = label_of(ev.point, cols=True)
                p = ev.progress
                note(f"[{p.done + 1}/{p.total}] {label_of(ev.point)}  ({_eta(p.eta_s)} left)")
            elif isinstance(ev, PointSkipped):
                brief.append({k: ev.row.get(k) for k in _BRIEF})
                st = "refused" if ev.point.refused else "skipped"
                if not ev.point.refused:  # refusals are listed, grouped, before the first run and at the end
                    note(f"[{ev.progress.done}/{ev.progress.total}] {label_of(ev.point)}  {st}: {ev.point.error}")
                if ev.point.refused:  # grouped on stderr, before and after: a harness file's thousands of
                    n_refused += 1    # refusals would bury the table's measured rows
                else:
                    table.append((label_of(ev.point, cols=True), "-", st, ev.point.error, None, None, None))
                if quiet:
                    json_rows.append(ev.row)
                sink.add(ev.row)
            elif isinstance(ev, PathRetry):
                note(f"        {ev.path} disturbed ({ev.reason}); measuring again, attempt {ev.attempt}")
            elif isinstance(ev, PathFinished):
                r = ev.result
                if r.isa and r.isa not in isas:
                    isas.append(r.isa)
                quality_rows.append({"quality": r.quality, "quality_reason": r.quality_reason})
                if timeline is not None:
                    timeline.add(r)
                # This point's own dense row: a descriptor listed twice (two names, two lines) is two points.
                key = (current_cols, r.spec.desc, r.spec.dtype, r.threads, r.vary)
                if r.path == "dense" and r.status == "ok":
                    dense[key] = (r.median_ms, r.noisy)
                status = "noisy" if r.status == "ok" and r.noisy else r.status
                table.append((current_cols, r.path, status, r.error, r.median_ms, r.gflops, key))
                brief.append({"name": r.spec.name, "desc": r.spec.desc, "dtype": r.spec.dtype, "threads": r.threads,
                              "path": r.path, "status": r.status, "median_ms": r.median_ms, "quality": r.quality,
                              "problem_index": r.problem_index})
                if quiet:
                    json_rows.append(r.row())
                sink.add(r)  # last: on a write error the row is still in the table and the recovery copy
    finally:
        if not quiet and (table or n_refused or (totals and resumed)):
            if table:
                print(_format_table(label_cols, table, dense))
            if n_refused:
                print(f"{plural(n_refused, 'refused problem')} not in the table: not timed, each named on stderr"
                      + (" (their rows, status refused, are in the CSV)" if sink_path else ""))
            if totals and brief:
                from explorer.core.problem.batch import batch_summary

                if resumed:
                    print(f"every row of {sink_path}: {len(resumed)} from before, {len(brief) - len(resumed)} "
                          "measured now")
                print("\n".join(batch_summary(brief, "dense").lines()))
            warn = warning_line(quality_rows)
            if warn:
                print(warn)
            print(allocator_note(opts.allocator), file=sys.stderr)
            if isas:
                print(isa_note(opts.isa if len(isas) == 1 else None, [{"isa": i} for i in isas]), file=sys.stderr)
        if table:
            print_environment_notes(opts.allocator, opts.paths)
        if sink_path and not quiet and not writing_failed():
            print(f"wrote {sink.count} rows to {sink_path}", file=sys.stderr)
        close_timeline(timeline, args, quiet)
    if quiet:
        out = {"results": json_rows}
        if totals:
            out["network_total"] = network_total_json(brief)  # every row of the CSV, as the table's total
        print(strict_json(out))
    return 0


def _format_table(label_cols: tuple[str, ...], table: list[tuple], dense: dict) -> str:
    head = (*label_cols, "path", "status", "median ms", "GFLOP/s", "vs dense")
    rows = []
    for cols, path, status, error, median, gflops, key in table:
        if status not in ("ok", "noisy"):
            rows.append((*cols, path, status, error[:100]))
            continue
        base, base_noisy = dense.get(key, (None, False))
        speed = ratio_text(base, median, base_noisy or status == "noisy") if (base and median) else "-"
        mark = "~" if status == "noisy" else ""
        rows.append((*cols, path, status, mark + _fmt(median), _fmt(gflops, "{:.1f}"), speed))
    n = len(head)
    widths = [len(h) for h in head]
    for r in rows:
        for i, x in enumerate(r[: n if r[len(label_cols) + 1] in ("ok", "noisy") else len(label_cols) + 2]):
            widths[i] = max(widths[i], len(str(x)))
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip()]
    for r in rows:
        if len(r) < n:  # skipped / error: the reason runs on past the columns
            lines.append(("  ".join(str(x).ljust(w) for x, w in zip(r[:-1], widths)) + "  " + r[-1]).rstrip())
        else:
            lines.append("  ".join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip())
    return "\n".join(lines)


# ---- sweep ------------------------------------------------------------------------------------------
def cmd_sweep(args) -> int:
    from explorer.core.problem.sweep_plan import given_keys, parse_varies, plan_sweep

    varies = parse_varies(args.vary)
    spec = spec_from(args)
    _run_options_check(args)
    plan = fleet_plan(plan_sweep(spec, varies, given=given_keys(args.desc)), args,
                      source=f"the sweep of {spec.descriptor()} over {' x '.join(args.vary)}")
    points = plan.points
    fields = tuple(v.field for v in varies)
    n_skip = sum(p.skipped for p in points)
    if not args.json:
        print(f"sweep of {spec.descriptor()} over {' x '.join(str(v) for v in varies)}: {len(points)} points"
              + (f" ({n_skip} invalid, recorded as skipped)" if n_skip else ""), file=sys.stderr)

    def label_of(point, cols=False):
        if cols:
            return tuple(str(point.values[f]) for f in fields)
        return point.label

    _note_plan(plan, args)
    if args.cluster:
        return run_on_cluster(plan, args, fields, label_of, args.json)
    return _run_points(points, args, fields, label_of, plan.target, args.json, resumed=plan.rows)


def _note_plan(plan, args) -> None:
    if args.json:
        return
    if args.shard:
        print(f"shard {args.shard}: {plural(len(plan.points) + plan.already, 'problem')}", file=sys.stderr)
    if args.resume:
        # Counts of what is really there: its rows, and the problems of this run all of whose rows they hold.
        print(f"resuming {args.resume}: {plural(len(plan.rows), 'row')}"
              + ("; what each host still lacks is decided once the cluster's workers are known" if args.every_host
                 else f", {plural(plan.already, 'problem')} already there, {len(plan.points)} to run")
              + (f" ({plan.partly} partly there: only their missing paths run)" if plan.partly else ""),
              file=sys.stderr)
        if plan.rewrite:
            print(f"{args.resume} is of an older version (no problem_index column): its rows are matched to the "
                  "list by descriptor, in order, and the CSV is written again with the column", file=sys.stderr)


def _run_options_check(args) -> None:
    run_options(args)  # bad --paths/--threads/--budget-ms are refused before any work


# ---- batch ------------------------------------------------------------------------------------------
def cmd_batch(args) -> int:
    from explorer.core.problem.batch import load_batch
    from explorer.core.problem.spec import parse_dtype

    dtype = parse_dtype(args.dtype) if args.dtype else None
    if args.list:
        return _list_batch(load_batch(args.file, mb=args.mb, dtype=dtype, bias=False if args.no_bias else None,
                                      sizes=False), args.json)
    _run_options_check(args)
    batch = load_batch(args.file, mb=args.mb, dtype=dtype, bias=False if args.no_bias else None)
    plan = fleet_plan(batch.points, args, source=f"batch {batch.source!r}")
    if not args.json:
        print(_batch_head(batch), file=sys.stderr)
        for line in batch.refused_lines():  # every refusal before any work, and again at the end
            print(clip_long(line), file=sys.stderr)

    from explorer.core.problem.listing import honoured_words

    def label_of(point, cols=False):
        name = point.spec.name if point.spec is not None else ""
        desc = point.spec.desc if point.spec is not None else point.text
        words = honoured_words(point.spec) if point.spec is not None else ""
        if cols:  # a line's --dir, --dt, post-ops, tags: two lines of one shape are told apart in the table
            return (str(point.line), name or "-", f"{desc} {words}" if words else desc)
        return f"line {point.line}: {name or desc}" + (f" ({words})" if words else "")

    _note_plan(plan, args)
    if args.cluster:
        rc = run_on_cluster(plan, args, ("line", "name", "desc"), label_of, args.json, totals=True)
    else:
        rc = _run_points(plan.points, args, ("line", "name", "desc"), label_of, plan.target, args.json, totals=True,
                         resumed=plan.rows)
    return _batch_end(batch, rc)


def _batch_head(batch) -> str:
    n_skip = len(batch.skipped) - len(batch.refused)
    parts = [f"{n_skip} skipped: they did not parse or cannot run"] if n_skip else []
    if batch.refused:
        parts.append(f"{len(batch.refused)} refused: their options are not honoured, see below")
    if batch.filtered:
        parts.append(f"{batch.filtered} left out by --match")
    return f"batch {batch.source}: {len(batch.points)} problems" + (f" ({'; '.join(parts)})" if parts else "")


def _batch_end(batch, rc: int, groups: bool = True) -> int:
    """Every honoured line ran and its rows are kept; refused and bad lines are bad input: exit 2, named."""
    if batch.refused and groups:
        for line in batch.refused_lines():
            print(clip_long(line), file=sys.stderr)
    if batch.refused:
        print(clip_long(f"mkldnn-explorer batch: {batch.refused_sentence()}"), file=sys.stderr)
    if batch.bad:
        print(clip_long(f"mkldnn-explorer batch: {batch.bad_lines_sentence()}"), file=sys.stderr)
    return EXIT_BAD_INPUT if (batch.bad or batch.refused) else rc


def _list_batch(batch, as_json: bool) -> int:
    from explorer.core.problem.listing import format_entry, list_batch, summary

    entries = list_batch(batch)
    info = summary(entries)
    if as_json:
        print(json.dumps({"source": batch.source, "summary": info, "filtered": batch.filtered,
                          "problems": [e.as_dict() for e in entries]}, indent=1))
    else:
        src = None
        for e in entries:
            if e.source != src and (src is not None or e.source != batch.source):
                print(f"# {e.source}")
            src = e.source
            print(format_entry(e))
        print(f"{batch.source}: {info['problems']} problems, {info['accepted']} accepted, {info['refused']} refused"
              + (f", {batch.filtered} left out by --match" if batch.filtered else "")
              + f"; benchdnn's op count differs from the exact one for {info['ops_differ']}.", file=sys.stderr)
    return _batch_end(batch, 0, groups=False)  # each refused problem is listed above


COMMANDS.update({"sweep": cmd_sweep, "batch": cmd_batch})
