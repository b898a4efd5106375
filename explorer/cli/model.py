"""`model`: the whole-model planner. Should I convert my model, and what will it gain end to end?

    mkldnn-explorer model resnet50 --mb 1 --csv m.csv
    mkldnn-explorer model mypkg.net:make --input 1,3,32,32
    mkldnn-explorer model mypkg.audio:make --input 1,16000 --input 1,16000
    mkldnn-explorer model mypkg.net:make --input mypkg.net:example_inputs
    mkldnn-explorer model exported.pt2
    mkldnn-explorer model resnet50 --cluster tcp://10.0.0.5:8786   # the per-layer table on a Dask cluster

Inventory of every convolution (identical ones counted), the per-layer table over the paths (the batch
machinery), the end-to-end modes measured for real, each predicted from the per-layer table, and the
answer in one line. The CSV (one file) has `kind` = layer, layer_path and mode rows; it is rewritten
atomically as rows finish.
"""

from __future__ import annotations

import argparse
import sys

from explorer.cli.common import (
    EXIT_FAULT,
    add_allocator_option,
    add_isa_option,
    allocator_note,
    isa_note,
    int_arg,
    measured_events,
    strict_json,
    writing_failed,
    paths_arg,
    positive_float,
    plural,
    positive_int_arg,
    print_environment_notes,
)
from explorer.cli.common import fmt as _fmt
from explorer.core.model.drift import drift_label

COMMANDS: dict = {}


def add_parsers(sub) -> None:
    from explorer.core.model.report import DEFAULT_MODE_BUDGET_MS, DEFAULT_MODES, MODES

    p = sub.add_parser(
        "model", help="plan a whole model: per-layer paths, end-to-end modes measured and predicted",
        description="MODEL is a built-in reference network (resnet50, resnet18, mobilenet_v2, tiny), a "
                    "package.module:callable returning an nn.Module (imported from the current folder or "
                    "sys.path) or path/to/file.py:callable, or a saved torch.export program (.pt2) or TorchScript file.")
    # the built-ins by name, not from core.model.zoo: importing it here would load torch for every --help
    p.add_argument("model", help="resnet50 | resnet18 | mobilenet_v2 | tiny | package.module:callable | "
                                 "file.py:callable | file.pt2 | file.pt")
    p.add_argument("--input", type=str, action="append", default=None,
                   help="the model's input: a shape such as 1,3,224,224 or 1,16000 (any rank: it is the forward's "
                        "input, not its first conv's); given again for each further positional input; or "
                        "package.module:callable (or file.py:callable) returning the input (a tensor, a tuple of them, or a dict of "
                        "keyword inputs; called with the minibatch when --mb is given). Default: the built-in's, "
                        "the exported program's, or 1,3,224,224")
    p.add_argument("--mb", type=positive_int_arg, default=None, help="minibatch (replaces the input's first dimension)")
    p.add_argument("--dtype", type=str, default=None,
                   help="f32 (default), bf16 or f16: the whole plan (per-layer table and every mode); bf16 modes "
                        "state their output error against the f32 model")
    p.add_argument("--threads", type=int_arg, default=None, help="torch threads (default: torch's setting)")
    p.add_argument("--paths", type=str, default="all", help="per-layer paths, comma-separated, or 'all' (default)")
    p.add_argument("--budget-ms", type=positive_float, default=300.0, help="time budget per layer and path (default 300)")
    p.add_argument("--modes", type=str, default=None,
                   help=f"end-to-end modes: {','.join(MODES)}, or 'all' (default: {','.join(DEFAULT_MODES)}; "
                        "compiled, autocast_bf16 and int8 are opt-in)")
    p.add_argument("--mode-budget-ms", type=positive_float, default=DEFAULT_MODE_BUDGET_MS,
                   help=f"time budget per end-to-end loop (default {DEFAULT_MODE_BUDGET_MS:.0f}); the rounds "
                        "that time a mode's forward, its remainder and its convs in model order get twice it, and stop "
                        "once the prediction and the forward each have a median known to 2%%")
    p.add_argument("--no-trace", action="store_true", help="skip the traced call per layer and path")
    add_allocator_option(p)
    add_isa_option(p)
    p.add_argument("--csv", type=str, default=None, help="write the model CSV (layer, layer_path and mode rows)")
    p.add_argument("--force", action="store_true", help="overwrite an existing CSV")
    p.add_argument("--json", action="store_true", help="print JSON (the CSV's rows) instead of tables")
    g = p.add_argument_group("many machines")
    g.add_argument("--cluster", type=str, default=None, metavar="ADDRESS",
                   help="measure the per-layer table on the workers of the Dask scheduler at ADDRESS, each distinct "
                        "layer a task (as batch --cluster); the end-to-end modes still run here, on the model; "
                        "layer_path rows get host and worker columns")
    # Refused with its reason (a plan's table holds each layer once): listed nowhere, it only explains itself.
    g.add_argument("--every-host", action="store_true", help=argparse.SUPPRESS)


def _modes_arg(text: str | None) -> tuple[str, ...]:
    from explorer.core.model.report import DEFAULT_MODES, MODES

    if text is None:
        return DEFAULT_MODES
    if text.strip() == "all":
        return MODES
    from explorer.core.errors import InputError

    modes = tuple(m.strip() for m in text.split(","))
    if "" in modes:
        raise InputError(f"--modes {text[:40]!r} has an empty item; give modes separated by single commas.", "modes")
    twice = sorted({m for m in modes if modes.count(m) > 1})
    if twice:
        raise InputError(f"--modes names {', '.join(twice)} more than once; each mode is measured once.", "modes")
    return modes


def cmd_model(args) -> int:
    from explorer.core.errors import InputError
    from explorer.core.jobs.events import PathFinished, PointSkipped, PointStarted
    from explorer.core.jobs.options import RunOptions
    from explorer.core.measure.interference import warning_line
    from explorer.core.model.load import parse_inputs
    from explorer.core.model.model_csv import ModelCsvSink, layer_path_row, mode_row, report_rows
    from explorer.core.model.report import ModeFinished, ModelFinished, ModelOptions, ModelStarted, ModeStarted
    from explorer.core.problem.spec import parse_dtype
    from explorer.core.report.results import check_writable
    from explorer.core.session.state import ModelDone, SessionState

    if args.every_host:
        raise InputError("model measures each layer once, on whichever worker is free (spread mode), as its plan "
                         "needs one per-layer table; to compare CPUs layer by layer, use batch or sweep with "
                         "--every-host.", "cluster")
    if args.cluster:
        from explorer.core.fleet.cluster import require_dask

        require_dask()
    dtype = parse_dtype(args.dtype) if args.dtype else "f32"
    shape = parse_inputs(args.input)
    mopts = ModelOptions(modes=_modes_arg(args.modes), mode_budget_ms=args.mode_budget_ms).validate()
    ropts = RunOptions(paths=paths_arg(args.paths), threads=args.threads, budget_ms=args.budget_ms,
                       trace=not args.no_trace, allocator=args.allocator, isa=args.isa,
                       precision=mopts.precision, earliest_share=mopts.earliest_share,
                       ).validate()  # a cluster's workers time the table at it too
    fleet = _ClusterStage(args) if args.cluster else None
    sink = ModelCsvSink(check_writable(args.csv, overwrite=args.force) if args.csv else None,
                        fleet.columns if fleet else ())
    quiet = args.json
    inv = None
    session = SessionState()  # the window's session model: the report is kept there, and printed from it
    layer_of: dict[int, object] = {}
    current = {"i": -1}

    def note(msg: str) -> None:
        if not quiet:
            print(msg, file=sys.stderr, flush=True)

    here = fleet.here if fleet else (lambda row: row)  # a cluster run's CSV says where each row was measured
    try:
        # In the measuring process, as run and sweep: one allocator state for the per-layer loops and the whole
        # forwards. In a plain glibc process a forward's page faults depend on what ran before (MobileNetV2 mb1
        # channels_last: 0 per forward after a per-layer sweep, ~2300 in a fresh process), which no per-layer
        # time or stubbed remainder can predict.
        import os

        job = ("model", args.model, shape, args.mb, dtype, args.threads, ropts, mopts)
        kw = {"allocator": args.allocator, "isa": ropts.isa, "folder": os.getcwd()}
        events = fleet.events(job, kw, ropts) if fleet else measured_events(*job, **kw)
        for ev in events:
            if isinstance(ev, ModelStarted):
                inv = ev.inventory
                layer_of = dict(enumerate(inv.layers))
                note(inv.summary())
            elif isinstance(ev, PointStarted):
                current["i"] = ev.point.index
                lay = layer_of[ev.point.index]
                note(f"[{ev.progress.done + 1}/{ev.progress.total}] {lay.name}"
                     f"{f' (x{lay.count})' if lay.count > 1 else ''}  {lay.desc}")
            elif isinstance(ev, PointSkipped):
                note(f"[{ev.progress.done}/{ev.progress.total}] {layer_of[ev.point.index].name}  skipped: {ev.point.error}")
            elif isinstance(ev, PathFinished):
                sink.add(layer_path_row(inv, layer_of[current["i"]], ev.result))
            elif fleet is not None and fleet.takes(ev):
                for r in fleet.take(ev, note):
                    sink.add(layer_path_row(inv, layer_of[ev.point.index], r))
            elif isinstance(ev, ModeStarted):
                note(f"mode {ev.index + 1}/{ev.total}: {ev.mode} ...")
            elif isinstance(ev, ModeFinished):  # on disk now: Ctrl+C or a killed child later keeps it
                sink.add(here(mode_row(inv, ev.result, args.threads)))
            elif isinstance(ev, ModelFinished):
                session.apply(ModelDone(ev.report))
                sink.replace([here(r) for r in report_rows(ev.report)])
    finally:
        report = session.model_report
        if report is not None and not quiet:
            print(format_layers(report))
            print()
            print(format_modes(report))
            rows = [r for s in report.layers for r in s.results.values()] + list(report.modes)
            warn = warning_line(rows)
            if warn:
                print(warn)
            print()
            from explorer.core.model.report import mode_line

            for r in report.modes:
                print(mode_line(r))
            if fleet is not None:
                print(fleet.where_line())
            print(f"answer: {report.answer()}")
            for line in report.findings:  # the measured subnormal convs: under the answer, as the Model tab shows
                print(line)
            print(allocator_note(args.allocator), file=sys.stderr)
            layer_rows = [r for s in report.layers for r in s.results.values()]
            if layer_rows:
                print(isa_note(ropts.isa, layer_rows), file=sys.stderr)
        if report is not None:
            print_environment_notes(args.allocator)
        if args.csv and not quiet and not writing_failed():
            print(f"wrote {sink.on_disk} rows to {args.csv}", file=sys.stderr)
    if quiet and report is not None:
        print(strict_json({"rows": [here(r) for r in report_rows(report)], "answer": report.answer()}))
    if fleet is not None and fleet.missing:
        print(f"{plural(len(fleet.missing), 'layer')} went missing on the cluster ({fleet.missing[0]}); the plan "
              "has no per-layer row for them: run it again.", file=sys.stderr)
        return EXIT_FAULT
    return 0


class _ClusterStage:
    """model --cluster: the per-layer table as cluster tasks (core.fleet, exactly as batch --cluster measures
    a problem), streamed back and fed into the plan; the inventory and the modes run here, in the measuring
    process, as they need the model. Two jobs there: the inventory, then the plan from the table's rows."""

    def __init__(self, args):
        from explorer.core.fleet.hosts import FLEET_COLUMNS

        self.address = args.cluster
        self.columns = FLEET_COLUMNS
        self.missing: list[str] = []
        self.hosts: dict[str, int] = {}  # host label -> per-layer rows it measured
        self.per_layer: dict[int, dict] = {}
        self.inv = None
        self.skipped: list = []
        import socket

        self.hostname = socket.gethostname()

    def here(self, row: dict) -> dict:
        """A row measured by this process (a mode, a mkldnn_chained layer row) names this machine."""
        if row.get("kind") in ("layer_path", "mode") and not row.get("host"):
            row = {**row, "host": self.hostname, "worker": ""}
        return row

    def takes(self, ev) -> bool:
        from explorer.core.fleet.cluster import ClusterMissing, ClusterRows, ClusterStarted

        return isinstance(ev, (ClusterStarted, ClusterRows, ClusterMissing))

    def events(self, job: tuple, kw: dict, ropts):
        """The local jobs' events with the cluster's in between: ModelStarted, ClusterStarted, a ClusterRows
        (or ClusterMissing) per layer, then the modes' events and ModelFinished."""
        from explorer.core.fleet.cluster import ClusterRows, connect, run_points
        from explorer.core.fleet.reach import close_client, lost_as_fault
        from explorer.core.model.job import layer_points
        from explorer.core.model.report import ModelStarted

        client = connect(self.address)  # before the model loads: a wrong address is one sentence at once
        try:
            for ev in measured_events(*job, inventory_only=True, **kw):
                if isinstance(ev, ModelStarted):
                    self.inv = ev.inventory
                    yield ev
            points = layer_points(self.inv)
            self.skipped = [p for p in points if p.skipped]
            gen = run_points(client, [p for p in points if not p.skipped], ropts)
            try:
                for ev in lost_as_fault(gen, self.address):  # "Stream is closed": one sentence, exit 3
                    if isinstance(ev, ClusterRows):  # a path-less row is a layer the worker skipped
                        self.per_layer[ev.point.index] = {r.path: r for r in ev.results() if r.path}
                    yield ev
            finally:
                close_client(client, gen.close)  # Ctrl+C: nothing of this plan stays queued there (3 s at most)
                client = None
        finally:
            if client is not None:
                close_client(client)
        for ev in measured_events(*job, layer_results=self.per_layer, **kw):
            if not isinstance(ev, ModelStarted):  # the same inventory again (checked layer by layer there)
                yield ev

    def take(self, ev, note) -> list:
        """Print a cluster event; the Results of a layer's task (its layer_path rows)."""
        from explorer.core.fleet.cluster import ClusterMissing, ClusterStarted

        if isinstance(ev, ClusterStarted):
            hosts = sorted(set(ev.hosts.values()))
            note(f"cluster {self.address}: {plural(len(ev.hosts), 'measuring worker')} ({', '.join(hosts)}); "
                 f"{plural(ev.tasks, 'layer')} as tasks, the modes here on {self.hostname}")
            for p in self.skipped:
                note(f"layer {self._name(p)} skipped: {p.error}")
            return []
        if isinstance(ev, ClusterMissing):
            self.missing.append(f"layer {self._name(ev.point)}: {ev.reason}")
            note(f"[{ev.done}/{ev.total}] {self._name(ev.point)}: missing ({ev.reason})")
            return []
        taken = list(self.per_layer.get(ev.point.index, {}).values())
        for r in taken:
            self.hosts[r.host] = self.hosts.get(r.host, 0) + 1
        note(f"[{ev.done}/{ev.total}] {self._name(ev.point)} on {ev.host}: {plural(len(taken), 'row')}")
        return taken

    def _name(self, point) -> str:
        return self.inv.layers[point.index].name

    def where_line(self) -> str:
        hosts = ", ".join(f"{h} ({n})" for h, n in sorted(self.hosts.items())) or "none"
        return (f"per-layer rows from the cluster at {self.address}: {hosts}; the modes were measured here on "
                f"{self.hostname}, so predicted against measured compares machines (the drift check marks a mode "
                "uncertain where they differ by more than 10%).")


def _table(head: tuple, rows: list[tuple]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)] if rows else [len(h) for h in head]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(head, widths)).rstrip()]
    for r in rows:
        lines.append("  ".join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip())
    return "\n".join(lines)


def format_layers(report) -> str:
    """One line per distinct conv: its count, descriptor, every path's median and the winner's margin."""
    paths = []
    for s in report.layers:
        for p in s.results:
            if p not in paths:
                paths.append(p)
    from explorer.core.model.chained import CHAINED_PATH

    chained = any(s.chained is not None for s in report.layers)  # jit_mkldnn's per-layer time, not a contender
    head = ("layer", "count", "desc", *(f"{p} ms" for p in paths), *((f"{CHAINED_PATH} ms",) if chained else ()),
            "best", "margin")
    rows = []
    for s in report.layers:
        cells = []
        for p in paths + ([CHAINED_PATH] if chained else []):
            r = s.chained if p == CHAINED_PATH else s.results.get(p)
            if r is None:
                cells.append("-")
            elif r.status != "ok":
                cells.append(r.status)
            else:
                cells.append(("~" if r.noisy else "") + _fmt(r.median_ms))
        margin = f"{s.margin:.2f}x" if s.margin else "-"
        name = s.layer.name if len(s.layer.name) <= 28 else "..." + s.layer.name[-25:]
        rows.append((name, s.layer.count, s.layer.desc if not s.layer.error else s.layer.error[:60], *cells,
                     s.best_path or "-", margin))
    return _table(head, rows)


def format_modes(report) -> str:
    head = ("mode", "status", "measured ms", "predicted ms", "pred/meas", "drift", "speedup", "predicted", "conv ms",
            "table conv ms", "convs in model ms", "conversions ms", "remainder ms", "max err", "quality")
    rows = []
    for r in report.modes:
        if r.status != "ok":
            rows.append((r.mode, r.status, r.error[:140]))
            continue
        agree = (f"{'~' if r.agreement_noisy else ''}{r.predicted_ms / r.measured_ms:.2f}"
                 if r.predicted_ms and r.measured_ms else "-")
        t = "~" if r.uncertain else ""
        sp = f"{t}{r.speedup:.2f}x" if r.speedup else "-"
        ps = f"{t}{r.predicted_speedup:.2f}x" if r.predicted_speedup else "-"
        drift = drift_label(r.host_drift_pct) or "-"
        rows.append((r.mode, r.status, ("~" if r.noisy else "") + _fmt(r.measured_ms),
                     ("~" if r.predicted_ms and r.predicted_noisy else "") + _fmt(r.predicted_ms), agree,
                     drift, sp, ps, ("~" if r.conv_seq_quality == "noisy" else "") + _fmt(r.conv_ms),
                     _fmt(r.conv_alone_ms), _fmt(r.convs_in_model_ms), _fmt(r.conversion_ms), _fmt(r.remainder_ms), _fmt(r.max_abs_err, "{:.1e}"),
                     r.quality or "-"))
    full = [r for r in rows if len(r) == len(head)]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *full)] if full else [len(h) for h in head]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(head, widths)).rstrip()]
    for r in rows:
        if len(r) < len(head):
            lines.append(f"{str(r[0]).ljust(widths[0])}  {str(r[1]).ljust(widths[1])}  {r[2]}")
        else:
            lines.append("  ".join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip())
    notes = [f"  {r.mode}: {r.predict_note}" for r in report.modes if r.predict_note and r.status == "ok"]
    notes += [f"  {r.mode}: {r.mode_note}" for r in report.modes if r.mode_note and r.status == "ok"]
    notes.append("  conv ms: the convs the prediction takes, timed in model order in rounds with the mode's forward "
                 "(each with its own tensors, the others in between); table conv ms: the per-layer table's (each "
                 "alone, its data hot in the caches); convs in model ms: inside the mode's own forward; ~: the "
                 "figure, or a loop behind it, is noisy.")
    ref = next((r.host_drift_ref for r in report.modes if r.host_drift_ref), "")
    if ref:
        notes.append(f"  drift: how far a reference layer's speed moved from the per-layer table around each mode "
                     f"({ref}); beyond 10% the comparison is marked uncertain.")
    notes += [f"  {r.mode} convs in model: {r.convs_in_model_note}" for r in report.modes
              if r.status == "ok" and r.convs_in_model_note.startswith(("jit", "not read", "no conv", "the outermost"))]
    return "\n".join(lines + notes)


COMMANDS.update({"model": cmd_model})
