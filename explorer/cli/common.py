"""What every command group shares: the parser class, argument types, the run options and the spec, and
the many-machines pieces of batch and sweep (--shard, --resume, --cluster).

Nothing here imports a command module, so the command modules import it freely and never each other.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, field

# Exit codes (README "Exit codes"): 0 done, 2 bad input (nothing measured, or bad batch lines after the good
# ones ran), 3 a fault stopped the run (the measuring process killed, an output that could not be written), 130
# interrupted (Ctrl+C or SIGTERM). After 3 and 130 every finished row is in the CSV, and the count printed is
# the count on disk.
EXIT_BAD_INPUT = 2
EXIT_FAULT = 3
EXIT_INTERRUPTED = 130
OUTPUT_OPTIONS = ("csv", "timeline", "screenshot")  # every option that names a file the tool writes


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error (no usage dump) and exit status 2. No abbreviations: `--dt=bf16` is a
    benchdnn word, never taken for `--dtype`."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # noqa: D401 - argparse API
        raise UsageError(f"{self.prog}: {message}{benchdnn_word_hint(message)}")


def benchdnn_word_hint(message: str) -> str:
    """For argparse's 'unrecognized arguments: --dir=BWD_D' when the word is a benchdnn option typed outside the
    problem's quotes: where it goes. '' for any other message."""
    from explorer.core.problem.benchdnn_options import option_of

    if not message.startswith("unrecognized arguments:"):
        return ""
    words = [w for w in message.split(":", 1)[1].split() if w.startswith("--") and option_of(w)[0] is not None]
    if not words:
        return ""
    return (f"; {words[0]} is a benchdnn option: put it inside the problem line's quotes, with the descriptor "
            f"(e.g. run '{words[0]} mb1ic8ih8oc8oh8kh3ph1')")


class UsageError(Exception):
    pass


class Terminated(BaseException):
    """SIGTERM, turned into an exception so finished rows are kept exactly as on Ctrl+C."""


# ---- argument types ---------------------------------------------------------------------------------
def paths_arg(text: str) -> tuple[str, ...]:
    from explorer.core.jobs.options import expand_paths

    return expand_paths(text)


def positive_float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def int_arg(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def positive_int_arg(text: str) -> int:
    v = int_arg(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return v


def add_allocator_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--allocator", type=str, default="tuned",
                   help="the measuring process's allocator: tuned (default: glibc that never maps a buffer per call nor "
                        "returns memory, so a warm loop takes no page faults), "
                        "default (glibc's own settings, no variables: in run, a new process per path, timed before its "
                        "check and trace; its faults per call move with the heap's history, so even two runs of a "
                        "plain script differ), jemalloc, tcmalloc (when installed)")


def add_isa_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--isa", type=str, default=None, metavar="NAME",
                   help="cap oneDNN (ONEDNN_MAX_CPU_ISA) and ATen (ATEN_CPU_CAPABILITY) in the measuring process at "
                        "this ISA: what this conv does on a smaller CPU, e.g. avx2, avx512_core, sse41 (default: no "
                        "cap); every row's isa column is what oneDNN reports it ran with")


def isa_note(requested: str | None, rows) -> str:
    """What the rows ran with, read back from oneDNN; a warning when that is not what was asked for."""
    got = sorted({getattr(r, "isa", None) or (r.get("isa") if isinstance(r, dict) else None) or "?" for r in rows})
    text = f"isa (read back from oneDNN): {', '.join(got)}"
    if requested and got != [requested]:
        text += f"; asked for {requested}"
    return text


def add_run_options(p: argparse.ArgumentParser, csv: bool = True) -> None:
    p.add_argument("--paths", type=str, default="all",
                   help="comma-separated paths; 'all' = the six seed paths (default), 'routes' = jit_frozen, compiled, "
                        "mkldnn_prepacked (torch.compile takes seconds per spec); e.g. all,routes")
    p.add_argument("--dtype", type=str, default=None, help="f32 (default), bf16 or f16")
    p.add_argument("--threads", type=int_arg, default=None, help="torch threads (default: torch's setting)")
    p.add_argument("--budget-ms", type=positive_float, default=500.0, help="time budget per path in ms (default 500)")
    p.add_argument("--no-bias", action="store_true", help="convolution without bias")
    p.add_argument("--no-trace", action="store_true", help="skip the traced call (no conv_impl/tag columns)")
    add_allocator_option(p)
    add_isa_option(p)
    if csv:
        p.add_argument("--csv", type=str, default=None, help="write results to this CSV (atomically, row by row)")
        p.add_argument("--force", action="store_true", help="overwrite an existing CSV or --timeline file")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--timeline", type=str, default=None, metavar="FILE.json",
                   help="write every timed call, the traced call's oneDNN primitives and the profiled ATen ops as "
                        "a Chrome trace-event JSON (opens in ui.perfetto.dev or chrome://tracing)")



def run_options(args):
    from explorer.core.jobs.options import RunOptions
    from explorer.core.measure.allocator import env_for

    opts = RunOptions(
        paths=paths_arg(args.paths), threads=args.threads, budget_ms=args.budget_ms, trace=not args.no_trace,
        allocator=args.allocator, isa=getattr(args, "isa", None),
    ).validate()
    env_for(opts.allocator)  # jemalloc/tcmalloc not installed: one sentence before any work
    return opts


def measured_events(kind: str, *args, allocator: str, isa: str | None = None, **kwargs):
    """A core job's events from the measuring process (explorer.core.process.measuring), as the window gets them."""
    from explorer.core.process import measuring

    return measuring.events(kind, *args, allocator=allocator, isa=isa, **kwargs)


def allocator_note(allocator: str) -> str:
    from explorer.core.measure.allocator import reproduce_hint

    return f"allocator: {allocator}; to reproduce a figure in your own script: {reproduce_hint(allocator)}"


def print_environment_notes(allocator: str, paths=None) -> None:
    """The closing lines on the user's environment: each variable the tool removed or that changed what was
    measured, one line each, on stderr (also under --json: stdout stays the JSON)."""
    from explorer.core.measure.user_env import notes
    from explorer.core.process.measuring import in_child

    compiled = paths is None or "compiled" in paths
    for line in notes(allocator, in_process=not in_child(), compiled=compiled):
        print(line, file=sys.stderr)


def open_timeline(args):
    """A Timeline when --timeline was given (its file checked writable before any work), else None."""
    path = getattr(args, "timeline", None)
    if not path:
        return None
    from explorer.core.report.results import check_writable
    from explorer.core.report.timeline import Timeline

    check_writable(path, overwrite=getattr(args, "force", False))
    return Timeline()


def close_timeline(timeline, args, quiet: bool) -> None:
    """Write the timeline (also after Ctrl+C: every finished path is in it); a failed write is a WriteFault."""
    import sys

    from explorer.core.errors import WriteFault

    if timeline is None:
        return
    try:
        timeline.write(args.timeline)
    except OSError as e:
        raise WriteFault(args.timeline, e.strerror or str(e), text=timeline.text()) from None
    if not quiet:
        print(f"wrote a timeline of {plural(timeline.sample_count, 'timed call')} to {args.timeline} "
              "(open it in ui.perfetto.dev or chrome://tracing)", file=sys.stderr)


def check_outputs(args) -> None:
    """Before any work: no output option is empty (--csv ""), and no two name one file (--timeline t.json
    --csv t.json). Each file is then checked by check_writable where the command opens it."""
    from explorer.core.errors import InputError
    from explorer.core.files import check_distinct

    given = {f"--{k}": getattr(args, k, None) for k in OUTPUT_OPTIONS}
    for opt, path in given.items():
        if path is not None and not str(path).strip():
            raise InputError(f"{opt} is empty; give a file name.", opt.lstrip("-"))
    check_distinct(given)


def clip_long(text: str, n: int = 40) -> str:
    """A message on one readable line: a number longer than n digits (a 100,000-digit size) or a word of
    hundreds of characters is cut, its length said; paths of ordinary length are left whole."""
    import re

    def cut(m):
        w = m.group(0)
        return f"{w[: n - 3]}... ({len(w):,} characters)"

    text = re.sub(rf"\d{{{n + 1},}}", cut, text.replace("\n", " "))
    return re.sub(r"\S{400,}", cut, text)


def writing_failed() -> bool:
    """In a finally block: is a WriteFault on its way out? (Then no "wrote N rows" line: the fault says it.)"""
    import sys

    from explorer.core.errors import WriteFault

    return isinstance(sys.exc_info()[1], WriteFault)


def finite(obj):
    """obj with every NaN or infinity replaced by None (null in JSON), through dicts, lists and tuples."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def strict_json(obj, indent: int | None = 1) -> str:
    """JSON that strict parsers read: no bare NaN or Infinity (they become null)."""
    import json

    return json.dumps(finite(obj), indent=indent, allow_nan=False)


def spec_from(args):
    from explorer.core.problem.spec import parse_descriptor, parse_dtype

    dtype = parse_dtype(args.dtype) if args.dtype else None
    return parse_descriptor(args.desc, dtype=dtype, bias=False if args.no_bias else None)


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def fmt(v, spec="{:.4g}") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return spec.format(v)


def ratio_text(base_ms: float, ms: float, uncertain: bool) -> str:
    """base/ms as "1.23x" (above 1: faster than the base); "~1.23x?" when either figure is noisy."""
    v = base_ms / ms
    text = f"{v:.2f}x" if v >= 0.095 else f"{v:.2g}x"
    return f"~{text}?" if uncertain else text


# ---- many machines (explorer.core.fleet; the running loop is run_on_cluster below) ----------------------
def add_fleet_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("many machines")
    g.add_argument("--cluster", type=str, default=None, metavar="ADDRESS",
                   help="measure on the workers of the Dask scheduler at ADDRESS (e.g. tcp://10.0.0.5:8786); each "
                        "problem is a task, one at a time per worker (workers started with --nthreads 1 --resources "
                        "measure=1); rows get host and worker columns")
    g.add_argument("--every-host", action="store_true",
                   help="with --cluster: every problem on every worker (to compare CPUs), not once anywhere")
    g.add_argument("--resume", type=str, default=None, metavar="CSV",
                   help="go on with this CSV: skip the problems it already holds and append the rest to it "
                        "(or to --csv)")
    g.add_argument("--shard", type=str, default=None, metavar="I/N",
                   help="run every N-th problem from the I-th (0-based), e.g. 0/2 and 1/2 on two machines; "
                        "join the CSVs with `mkldnn-explorer merge`")


# ---- --shard, --resume and --cluster for batch and sweep: rows go to the CSV as they finish, local or remote;
# a cluster run's CSV is the local schema plus the host columns (explorer.core.fleet).
@dataclass
class Plan:
    """What a batch or sweep runs after --shard and --resume, and where its rows go."""

    points: list
    target: str | None  # the CSV rows are written to
    rows: list = field(default_factory=list)  # the resumed CSV's rows, written again first
    done: set = field(default_factory=set)  # their identities (with the host for --every-host)
    already: int = 0  # problems of this run (after --shard) whose rows are all in the resumed CSV
    partly: int = 0  # problems with some of their rows there: only their other paths run
    rewrite: bool = False  # the resumed CSV is of an older version (no problem_index): rewritten with it
    lock: object = None  # the target's writer's lock (explorer.core.output_lock), taken before its rows are read


def fleet_plan(points: list, args, source: str = "this list") -> Plan:
    """Apply --shard and --resume; check the CSV target before any work (one sentence when wrong).
    `points`: the whole list (resumed rows are matched to it before --shard); `source` names it."""
    from explorer.core.errors import InputError
    from explorer.core.fleet.hosts import CLUSTER_COLUMNS
    from explorer.core.fleet.pieces import (
        match_resumed,
        parse_shard,
        paths_left,
        resume_rows,
        row_identity,
        shard,
        what_header_holds,
    )
    from explorer.core.report.results import CSV_COLUMNS, PROBLEM_COLUMN, check_writable

    if args.cluster:
        from explorer.core.fleet.cluster import require_dask

        require_dask()
    if args.cluster and getattr(args, "timeline", None):
        raise InputError("--timeline records the calls of this machine's measuring process; run without --cluster "
                         "to write one.", "timeline")
    if args.every_host and not args.cluster:
        raise InputError("--every-host measures on every worker of a cluster: give --cluster ADDRESS too.", "cluster")
    whole = points
    if args.shard:
        points = shard(points, *parse_shard(args.shard))
    out = Plan(points, args.csv)
    if args.resume:
        import os

        from explorer.core.output_lock import lock_output

        in_place = not args.csv or os.path.abspath(args.csv) == os.path.abspath(args.resume)
        if in_place and os.path.isfile(args.resume):
            # Going on in place: locked before its rows are read, so no other writer appends behind our back.
            out.lock = lock_output(args.resume, "resume")
        header, rows = resume_rows(args.resume)
        columns = CLUSTER_COLUMNS if args.cluster else CSV_COLUMNS
        if tuple(header) not in (columns, tuple(c for c in columns if c != PROBLEM_COLUMN)):
            holds = what_header_holds(header)
            hint = {"a local run's rows (no host columns)": "resume it without --cluster",
                    "a cluster run's rows (host columns)": "resume it with --cluster"}.get(holds)
            expected = "a CSV that batch or sweep wrote" + (" with --cluster" if args.cluster else "")
            raise InputError(f"{args.resume!r} holds {holds}; " + (hint or f"--resume expects {expected}; start a "
                             "new CSV") + ".", "resume")
        resumed = match_resumed(args.resume, header, rows, whole, source)
        if args.csv and os.path.abspath(args.csv) != os.path.abspath(args.resume):
            check_writable(args.csv, overwrite=args.force)
        else:
            out.target = args.resume  # our own CSV, just read: it goes on in place
        out.rows, out.rewrite = resumed.rows, resumed.upgraded
        out.done = {row_identity(r, with_host=args.every_host) for r in out.rows}
        if not args.every_host:
            opts = run_options(args)
            kept = []
            for p in points:
                left = paths_left(p, opts.paths, out.done)
                if left and len(left) < len(opts.paths) and not p.skipped:
                    p.paths = tuple(left)  # the paths it has rows for are not measured twice
                    out.partly += 1
                if left:
                    kept.append(p)
            out.already, out.points = len(points) - len(kept), kept
    elif args.csv:
        check_writable(args.csv, overwrite=args.force)
    return out


def run_on_cluster(p: Plan, args, label_cols: tuple, label_of, quiet: bool, totals: bool = False) -> int:
    """Measure the plan's points on the cluster at args.cluster; exit 3 (a fault) when a problem went missing.
    `totals`: a batch's network total over every row of the CSV (one per host with --every-host)."""
    from explorer.core.fleet.cluster import ClusterMissing, ClusterRows, ClusterStarted, connect, run_points
    from explorer.core.fleet.hosts import CLUSTER_COLUMNS
    from explorer.core.fleet.pieces import point_done
    from explorer.core.fleet.reach import close_client, lost_as_fault
    from explorer.core.jobs.sweep import skipped_row
    from explorer.core.measure.interference import warning_line
    from explorer.core.report.results import CsvSink

    from explorer.core.fleet.cluster import NO_WORKER_LEFT

    opts = run_options(args)
    client = connect(args.cluster)
    sink = None  # made once the cluster took the run: a refused run leaves no header-only CSV behind
    table: list[tuple] = []
    new_rows: list[dict] = []
    missing: list[tuple] = []
    lost_said = False  # the cluster left empty: one line for all its missing tasks, not one each

    def note(msg: str) -> None:
        if not quiet:
            print(msg, file=sys.stderr, flush=True)

    def keep(rows, cols) -> None:
        for r in rows:
            sink.add(r)
            new_rows.append(r)
            table.append((cols, r.get("host") or "-", r.get("path") or "-", r.get("status"), r.get("error") or "",
                          r.get("median_ms"), r.get("gflops"), r.get("quality"), r.get("quality_reason") or ""))

    gen = run_points(client, [x for x in p.points if not x.skipped], opts, args.every_host, p.done)
    try:
        for ev in lost_as_fault(gen, args.cluster):
            if isinstance(ev, ClusterStarted):
                sink = CsvSink(p.target, CLUSTER_COLUMNS, p.rows)
                sink.flush()
                hosts = sorted(set(ev.hosts.values()))
                note(f"cluster {args.cluster}: {plural(len(ev.hosts), 'measuring worker')} ({', '.join(hosts)}); "
                     f"{plural(ev.tasks, 'task')}" + (f", {ev.already + p.already} already in {args.resume}"
                                                      if args.resume else ""))
                for point in (x for x in p.points if x.skipped):  # nothing to measure: written here, once
                    if not point_done(point, opts.paths, p.done, "" if args.every_host else None):
                        row, _ = skipped_row(point, opts.threads or 0)
                        keep([{**row, "host": "", "worker": ""}], label_of(point, cols=True))
            elif isinstance(ev, ClusterRows):
                keep(ev.rows, label_of(ev.point, cols=True))
                note(f"[{ev.done}/{ev.total}] {label_of(ev.point)} on {ev.host}: {plural(len(ev.rows), 'row')}")
            elif isinstance(ev, ClusterMissing):
                missing.append((label_of(ev.point), ev.host, ev.reason))
                emptied = ev.reason.startswith(NO_WORKER_LEFT)
                if not (emptied and lost_said):
                    note(f"[{ev.done}/{ev.total}] {label_of(ev.point)}" + (f" on {ev.host}" if ev.host else "")
                         + f": missing ({ev.reason})" + ("; so is every task still queued" if emptied else ""))
                lost_said = lost_said or emptied
    finally:
        close_client(client, gen.close)  # cancels what is still queued there (Ctrl+C included), within 3 s
        if not quiet and table:
            print(cluster_table(label_cols, table))
            warn = warning_line([{"quality": r[-2] or "", "quality_reason": r[-1]} for r in table])
            if warn:
                print(warn)
            if totals:
                print("\n".join(_cluster_totals(p.rows + new_rows, args.every_host)))
            print(allocator_note(opts.allocator), file=sys.stderr)
        if sink is not None and p.target and not quiet and not writing_failed():
            print(f"wrote {sink.count} rows to {p.target}", file=sys.stderr)
    if quiet:
        out = {"results": new_rows, "missing": [{"problem": m[0], "host": m[1], "reason": m[2]} for m in missing]}
        if totals:  # as a local batch's; with --every-host a list, one per host
            per = {h: network_total_json(mine) for h, mine in _host_rows(p.rows + new_rows, args.every_host).items()}
            out["network_total"] = per[""] if "" in per else [{"host": h, **t} for h, t in per.items()]
        print(strict_json(out))
    if missing:
        how = (f"to measure them: `{resume_command(getattr(args, 'argv', None), p.target)}`" if p.target else
               "run it again with --csv FILE to keep the rows of a run")
        print(f"{plural(len(missing), 'problem')} went missing; {how}.", file=sys.stderr)
        return EXIT_FAULT
    return 0


def network_total_json(rows) -> dict:
    """A batch's network total for --json (rows: Results or CSV row dicts)."""
    from dataclasses import asdict

    from explorer.core.problem.batch import batch_summary

    summ = batch_summary(rows, "dense")
    return {"baseline": summ.baseline, "layers": summ.layers, "instances": summ.instances,
            "weighting": "each layer x its *N count",
            "noise_rule": "speedup and geomean leave out layers where either row is noisy (uncertain); a total "
                          "with noisy > 0 sums noisy rows; speedup is the ratio of the two totals only when same_rows",
            "paths": [asdict(t) for t in summ.totals.values()]}


def _host_rows(rows: list[dict], every_host: bool) -> dict[str, list[dict]]:
    """{'': rows}, or with --every-host {host: its rows} (a skipped line's row, host '', belongs to each), as
    each host measured the whole batch."""
    if not every_host:
        return {"": rows}
    hosts = sorted({r.get("host") for r in rows if r.get("host")})
    return {h: [r for r in rows if r.get("host") in (h, "", None)] for h in hosts}


def _cluster_totals(rows: list[dict], every_host: bool) -> list[str]:
    """The batch's network total over these rows; with --every-host one per host."""
    from explorer.core.problem.batch import batch_summary

    out = []
    for h, mine in _host_rows(rows, every_host).items():
        out += ([f"host {h}:"] if h else []) + batch_summary(mine, "dense").lines()
    return out


def cluster_table(label_cols: tuple, table: list[tuple]) -> str:
    head = (*label_cols, "host", "path", "status", "median ms", "GFLOP/s")
    rows = []
    for cols, host, path, status, error, median, gflops, quality, _reason in table:
        if status != "ok":
            rows.append((*cols, host, path, status, error[:100]))
        else:
            mark = "~" if quality == "noisy" else ""
            rows.append((*cols, host, path, "noisy" if mark else "ok", mark + fmt(_cell_number(median)),
                         fmt(_cell_number(gflops), "{:.1f}")))
    widths = [max(len(str(r[i])) for r in [head, *rows] if i < len(r)) for i in range(len(head))]
    return "\n".join("  ".join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip() for r in [head, *rows])


def _cell_number(cell):
    try:
        return float(cell) if cell not in (None, "") else None
    except ValueError:
        return None


def resume_command(argv: list[str] | None, csv: str, prog: str = "mkldnn-explorer") -> str:
    """The user's command line (`argv`, after the program name) that finishes a run cut short: --csv, --resume
    and --force dropped (the CSV goes on in place), --resume `csv` added. Printed after a fault."""
    import shlex

    out: list[str] = []
    words = list(argv or [])
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("--csv", "--resume"):
            i += 2
            continue
        if w != "--force" and not w.startswith(("--csv=", "--resume=")):
            out.append(w)
        i += 1
    return shlex.join([prog, *out, "--resume", csv])
