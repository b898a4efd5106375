"""`run`: one convolution over the paths, a table and a CSV."""

from __future__ import annotations

import json
import sys

from explorer.cli.common import (
    add_run_options,
    allocator_note,
    close_timeline,
    isa_note,
    measured_events,
    open_timeline,
    print_environment_notes,
    ratio_text,
    run_options,
    spec_from,
    strict_json,
)
from explorer.cli.common import (
    fmt as _fmt,
)
from explorer.core.measure.interference import warning_line


def add_parsers(sub) -> None:
    p = sub.add_parser("run", help="time one convolution over the execution paths")
    p.add_argument("desc", help='benchdnn conv descriptor, e.g. mb2ic16ih14oc16oh14kh3ph1')
    p.add_argument("--list", action="store_true",
                   help="only list the problem (like benchdnn --mode=L): dims, left/right pads, outputs, op counts")
    add_run_options(p)
    p.add_argument("--verify", action="store_true",
                   help="after the run, check every row in a fresh script: write the standalone torch.utils.benchmark "
                        "script of each path (next to --csv, else in the cache folder), run it in a new process with "
                        "the printed allocator variables, and show its median and the ratio")


def cmd_run(args) -> int:
    from explorer.core.jobs.events import PathFinished, PathRetry, PathStarted, Samples
    from explorer.core.problem.memory import check_memory
    from explorer.core.report.results import CsvSink, check_writable
    from explorer.core.session.state import RunFinished, RunStarted, SessionState

    if args.list:
        return _list_one(args)
    spec = spec_from(args)
    opts = run_options(args)
    check_memory(spec, opts.paths)  # refuse before printing anything: one line, exit 2
    sink = CsvSink(check_writable(args.csv, overwrite=args.force) if args.csv else None)
    if args.verify:  # its scripts' folder refused now, not after every path was measured
        from explorer.core.process.verify import check_folder

        check_folder(args.csv)
    timeline = open_timeline(args)
    # The window's session model: every event goes through its apply, and the table prints from its rows.
    session = SessionState(spec, {"paths": list(opts.paths), "threads": opts.threads, "budget_ms": opts.budget_ms,
                                  "trace": opts.trace})
    session.apply(RunStarted(spec, session.options))
    results = session.results
    quiet = args.json
    if not quiet:
        exact = f", exact_ops={spec.exact_ops:,} (benchdnn's count takes its shortcut and counts padding taps)" \
            if spec.exact_ops != spec.ops else ""
        what = " (each call: aten.convolution_backward alone, no forward)" if spec.backward else ""
        post = (f"  post_ops={spec.post_ops}" if spec.post_ops else "") + (
            f"  io_tag={spec.io_tag} (timed only on the paths taking it)" if spec.io_tag else "")
        print(f"{spec.descriptor()}  dtype={spec.dtype}  direction={spec.direction}{what}{post}  ops={spec.ops:,}  "
              f"(GFLOP count: benchdnn's){exact}", file=sys.stderr)
        if spec.is_int8:
            print(f"  int8: scales={spec.scales or 'none given'}  zero points={spec.zero_points or 'none given'} (a "
                  f"scale left out is calibrated on the data, a zero point left out is 0 beside a given scale); "
                  f"rel err = max |dequantized out - f32 conv on the dequantized inputs and weights| / max |f32|",
                  file=sys.stderr)
        if spec.asymmetric:  # the listing's sentence: mkldnn_roundtrip pads on every call, the other two once
            from explorer.core.problem.conv_nd import pad_note

            print(f"  {pad_note(spec)}", file=sys.stderr)
    try:
        for ev in measured_events("run", spec, opts, allocator=opts.allocator, isa=opts.isa):
            if isinstance(ev, (PathStarted, Samples, PathRetry, PathFinished)):
                session.apply(ev)
            if isinstance(ev, PathStarted) and not quiet:
                print(f"  [{ev.index + 1}/{ev.total}] {ev.path} ...", file=sys.stderr, flush=True)
            elif isinstance(ev, PathRetry) and not quiet:
                print(f"        disturbed ({ev.reason}); measuring again, attempt {ev.attempt}", file=sys.stderr,
                      flush=True)
            elif isinstance(ev, PathFinished):
                sink.add(ev.result)
                if timeline is not None:
                    timeline.add(ev.result)
        if args.verify:
            _verify_rows(results, args, opts, quiet)
    finally:
        session.apply(RunFinished())
        if results and not quiet:
            print(format_table(results))
            warn = warning_line(results)
            if warn:
                print(warn)
            print(allocator_note(opts.allocator), file=sys.stderr)
            print(isa_note(opts.isa, results), file=sys.stderr)
        if results:
            print_environment_notes(opts.allocator, opts.paths)
        close_timeline(timeline, args, quiet)
    if quiet:
        print(strict_json({"results": [r.row() for r in results]}))
    if args.csv and not quiet:
        print(f"wrote {sink.count} rows to {args.csv}", file=sys.stderr)
    return 0



def _verify_rows(results, args, opts, quiet: bool) -> None:
    """--verify: each row's fresh script written, run in a new process, its median set on the row (and the CSV)."""
    from explorer.core.process.verify import default_folder, verify
    from explorer.core.report.results import write_csv

    folder = default_folder(args.csv)
    for r in results:
        if not quiet:
            print(f"  fresh script: {r.path} ...", file=sys.stderr, flush=True)
        verify(r, folder, min_run_time=opts.budget_ms / 1e3)
        if args.csv:
            write_csv(args.csv, results)  # the row's verify columns on disk as soon as they are known
    if not quiet:
        print(f"fresh scripts in {folder} (rerun one as its first lines say)", file=sys.stderr)


def verify_cells(r) -> tuple[str, str]:
    """The table's fresh-script columns of one row: the script's median, and the ratio or the mark."""
    from explorer.core.process.verify import NOT_REPRODUCED, UNCERTAIN

    if r.verify_median_ms is None:
        return "-", r.verify_note[:60] or "-"
    ratio = f"{r.verify_ratio:.2f}x" if r.verify_ratio is not None else "-"
    if r.verify_note.startswith("~"):  # a disagreement on a figure that is not trusted: no verdict
        return "~" + _fmt(r.verify_median_ms), f"~{ratio} {UNCERTAIN}"
    return _fmt(r.verify_median_ms), ratio if not r.verify_note else f"{ratio} {NOT_REPRODUCED}"


def _list_one(args) -> int:
    from explorer.core.problem.listing import Entry, format_entry
    from explorer.core.problem.spec import parse_descriptor, parse_dtype

    dtype = parse_dtype(args.dtype) if args.dtype else None
    spec = parse_descriptor(args.desc, dtype=dtype, bias=False if args.no_bias else None, sizes=False)
    e = Entry("", None, spec, args.desc)
    if args.json:
        print(json.dumps(e.as_dict(), indent=1))
    else:
        print(format_entry(e).removeprefix("-  "))
    return 0


# How each path runs a row's post-ops (explorer/core/paths/post_ops.py); the route's note has the detail.
_POST_OPS_HOW = {"mkldnn_prepacked": "fused in one call", "compiled": "inductor", "jit_frozen": "jit freeze"}


def post_ops_cell(r) -> str:
    return f"{r.spec.post_ops} ({_POST_OPS_HOW.get(r.path, 'eager, after the conv')})" if r.spec.post_ops else ""


def format_table(results) -> str:
    from explorer.core.problem.memory import fmt_bytes

    base = {r.spec.desc + r.spec.dtype: r for r in results if r.path == "dense" and r.status == "ok"}
    head = ("path", "status", "median ms", "IQR ms", "GFLOP/s", "vs dense", "oneDNN/reorder/rest ms", "max err",
            "in/wei/out stored", "kernel", "set-up ms")
    rows = []
    for r in results:
        b = base.get(r.spec.desc + r.spec.dtype)
        speed = ratio_text(b.median_ms, r.median_ms, b.noisy or r.noisy) if (b and r.median_ms) else "-"
        stored = "/".join(fmt_bytes(x) if x is not None else "-" for x in (r.input_bytes, r.weight_bytes, r.output_bytes))
        if r.status != "ok":
            rows.append((r.path, r.status, r.error[:90], "", "", "", "", "", ""))
            continue
        split = "/".join(_fmt(v, "{:.3g}") for v in (r.onednn_ms, r.reorder_ms, r.other_ms)) if r.other_ms is not None else "-"
        rows.append((
            r.path, "noisy" if r.noisy else r.status, ("~" if r.noisy else "") + _fmt(r.median_ms), _fmt(r.iqr_ms),
            _fmt(r.gflops, "{:.1f}"), speed, split,
            _fmt(r.max_abs_err, "{:.1e}"), stored, r.conv_impl or "-", _fmt(r.compile_ms, "{:.4g}"),
        ))
    if any(r.spec.post_ops for r in results):  # how each path ran them: the point of a post-ops row
        head += ("post-ops",)
        rows = [row + (post_ops_cell(r),) if row[1] in ("ok", "noisy") else row for row, r in zip(rows, results)]
    if any(r.spec.is_int8 for r in results):  # int8: the error against f32 (float tables keep their columns)
        head += ("rel err vs f32",)
        rows = [row + (_fmt(r.rel_err, "{:.1e}"),) if row[1] in ("ok", "noisy") else row for row, r in zip(rows, results)]
    if any(r.verify_median_ms is not None or r.verify_note for r in results):  # run --verify only
        head += ("fresh script ms", "row/script")
        rows = [row + verify_cells(r) if row[1] in ("ok", "noisy") else row for row, r in zip(rows, results)]
    measured = ("ok", "noisy")
    widths = [max(len(str(x)) for x in col) for col in zip(head, *[r for r in rows if r[1] in measured] or [head])]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(head, widths))]
    for row in rows:
        if row[1] not in measured:
            lines.append("  ".join([row[0].ljust(widths[0]), row[1].ljust(widths[1]), row[2]]))
        else:
            lines.append("  ".join(str(x).ljust(w) for x, w in zip(row, widths)))
    lines += [f"{r.path}: {r.verify_note}" for r in results if r.verify_median_ms is not None and r.verify_note]
    return "\n".join(lines)



COMMANDS = {"run": cmd_run}
