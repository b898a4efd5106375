"""`run` (one convolution over the paths, a table and a CSV) and `gui` (the desktop app)."""

from __future__ import annotations

import json
import sys

from explorer.cli.common import add_run_options, fmt as _fmt, ratio_text, run_options, spec_from
from explorer.core.interference import warning_line


def add_parsers(sub) -> None:
    p = sub.add_parser("run", help="time one convolution over the execution paths")
    p.add_argument("desc", help='benchdnn conv descriptor, e.g. mb2ic16ih14oc16oh14kh3ph1')
    add_run_options(p)

    p = sub.add_parser("gui", help="open the desktop app (optionally run, export and exit)")
    p.add_argument("desc", nargs="?", default=None, help="benchdnn conv descriptor to open (default: the last one, or a preset)")
    p.add_argument("--run", action="store_true", help="start the run as soon as the window opens")
    p.add_argument("--screenshot", type=str, default=None, help="when the run ends, save a PNG of the whole window")
    p.add_argument("--exit-when-done", action="store_true", help="exit when the run ends (prints event-loop stall p99/max)")
    p.add_argument("--size", type=str, default="1440x900", help="window size WxH (default 1440x900)")
    p.add_argument("--vary", action="append", default=[], metavar="FIELD=VALUES",
                   help="open the Sweep tab on this sweep of DESC (twice for a grid); with --run, run it")
    p.add_argument("--batch", type=str, default=None, metavar="FILE",
                   help="open the Sweep tab on this batch file (or shipped name); with --run, run it")
    p.add_argument("--theme", choices=("light", "dark"), default=None, help="colour theme (default: the last one)")
    p.add_argument("--tab", choices=("run", "sweep", "roofline", "compare"), default=None,
                   help="the tab to show (default: run, or sweep with --vary/--batch)")
    add_run_options(p)


def cmd_run(args) -> int:
    from explorer.core.results import CsvSink, check_writable
    from explorer.core.runner import PathFinished, PathStarted, iter_run

    from explorer.core.memory import check_memory

    spec = spec_from(args)
    opts = run_options(args)
    check_memory(spec, opts.paths)  # refuse before printing anything: one line, exit 2
    sink = CsvSink(check_writable(args.csv, overwrite=args.force) if args.csv else None)
    results = []
    quiet = args.json
    if not quiet:
        print(f"{spec.descriptor()}  dtype={spec.dtype}  ops={spec.ops:,}  (GFLOP count: benchdnn's)", file=sys.stderr)
    try:
        for ev in iter_run(spec, opts):
            if isinstance(ev, PathStarted) and not quiet:
                print(f"  [{ev.index + 1}/{ev.total}] {ev.path} ...", file=sys.stderr, flush=True)
            elif isinstance(ev, PathFinished):
                results.append(ev.result)
                sink.add(ev.result)
    finally:
        if results and not quiet:
            print(format_table(results))
            warn = warning_line(results)
            if warn:
                print(warn)
    if quiet:
        print(json.dumps({"results": [r.row() for r in results]}, indent=1))
    if args.csv and not quiet:
        print(f"wrote {len(results)} rows to {args.csv}", file=sys.stderr)
    return 0



def format_table(results) -> str:
    from explorer.core.memory import fmt_bytes

    base = {r.spec.desc + r.spec.dtype: r for r in results if r.path == "dense" and r.status == "ok"}
    head = ("path", "status", "median ms", "IQR ms", "GFLOP/s", "vs dense", "max err", "in/wei/out stored", "kernel")
    rows = []
    for r in results:
        b = base.get(r.spec.desc + r.spec.dtype)
        speed = ratio_text(b.median_ms, r.median_ms, b.noisy or r.noisy) if (b and r.median_ms) else "-"
        stored = "/".join(fmt_bytes(x) if x is not None else "-" for x in (r.input_bytes, r.weight_bytes, r.output_bytes))
        if r.status != "ok":
            rows.append((r.path, r.status, r.error[:90], "", "", "", "", "", ""))
            continue
        rows.append((
            r.path, "noisy" if r.noisy else r.status, ("~" if r.noisy else "") + _fmt(r.median_ms), _fmt(r.iqr_ms), _fmt(r.gflops, "{:.1f}"), speed,
            _fmt(r.max_abs_err, "{:.1e}"), stored, r.conv_impl or "-",
        ))
    measured = ("ok", "noisy")
    widths = [max(len(str(x)) for x in col) for col in zip(head, *[r for r in rows if r[1] in measured] or [head])]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(head, widths))]
    for row in rows:
        if row[1] not in measured:
            lines.append("  ".join([row[0].ljust(widths[0]), row[1].ljust(widths[1]), row[2]]))
        else:
            lines.append("  ".join(str(x).ljust(w) for x, w in zip(row, widths)))
    return "\n".join(lines)



def cmd_gui(args) -> int:
    from explorer.gui.app import run_gui  # imports Qt only when the window is asked for

    return run_gui(args)




COMMANDS = {"run": cmd_run, "gui": cmd_gui}
