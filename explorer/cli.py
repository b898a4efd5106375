"""The command line: the same core as the desktop app, with no display needed.

Bad input anywhere exits 2 with one line on stderr and no traceback. Ctrl+C or SIGTERM during a run
keeps every finished row in the CSV (written atomically after each row) and exits 130.
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys

from explorer import __version__

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error (no usage dump) and exit status 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        raise _UsageError(f"{self.prog}: {message}")


class _UsageError(Exception):
    pass


class _Terminated(BaseException):
    """SIGTERM, turned into an exception so finished rows are kept exactly as on Ctrl+C."""


# ---- argument types ---------------------------------------------------------------------------------
def _paths_arg(text: str) -> tuple[str, ...]:
    from explorer.core.paths import PATHS
    from explorer.core.runner import validate_paths

    if text.strip() == "all":
        return PATHS
    return validate_paths(tuple(p.strip() for p in text.split(",") if p.strip()))


def _positive_float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _int_arg(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def _add_run_options(p: argparse.ArgumentParser, csv: bool = True) -> None:
    p.add_argument("--paths", type=str, default="all", help="comma-separated paths, or 'all' (default)")
    p.add_argument("--dtype", type=str, default=None, help="f32 (default), bf16 or f16")
    p.add_argument("--threads", type=_int_arg, default=None, help="torch threads (default: torch's setting)")
    p.add_argument("--budget-ms", type=_positive_float, default=500.0, help="time budget per path in ms (default 500)")
    p.add_argument("--no-bias", action="store_true", help="convolution without bias")
    p.add_argument("--no-trace", action="store_true", help="skip the traced call (no conv_impl/tag columns)")
    if csv:
        p.add_argument("--csv", type=str, default=None, help="write results to this CSV (atomically, row by row)")
        p.add_argument("--force", action="store_true", help="overwrite an existing CSV")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mkldnn-explorer", description="What to_mkldnn() really does to a convolution on this CPU.")
    parser.add_argument("--version", action="version", version=f"mkldnn-explorer {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("run", help="time one convolution over the execution paths")
    p.add_argument("desc", help='benchdnn conv descriptor, e.g. mb2ic16ih14oc16oh14kh3ph1')
    _add_run_options(p)

    p = sub.add_parser("gui", help="open the desktop app (optionally run, export and exit)")
    p.add_argument("desc", nargs="?", default=None, help="benchdnn conv descriptor to open (default: the last one, or a preset)")
    p.add_argument("--run", action="store_true", help="start the run as soon as the window opens")
    p.add_argument("--screenshot", type=str, default=None, help="when the run ends, save a PNG of the whole window")
    p.add_argument("--exit-when-done", action="store_true", help="exit when the run ends (prints event-loop stall p99/max)")
    p.add_argument("--size", type=str, default="1440x900", help="window size WxH (default 1440x900)")
    _add_run_options(p)

    p = sub.add_parser("layout", help="a format tag's layout, or how a path stores its input, weight and output")
    p.add_argument("desc", nargs="?", default=None, help="benchdnn conv descriptor (omit with --tag)")
    p.add_argument("--tag", type=str, default=None, help="oneDNN format tag, e.g. aBcd16b")
    p.add_argument("--dims", type=str, default=None, help="logical dims for --tag, e.g. 2,17,5,4")
    p.add_argument("--offset", type=str, default=None, help="with --tag: logical index whose offset to print, e.g. 1,16,2,3")
    p.add_argument("--kind", choices=("data", "weight"), default="data", help="with --tag: name aliases as data or weight")
    p.add_argument("--path", type=str, default="mkldnn", help="with DESC: the path to inspect (default mkldnn)")
    p.add_argument("--dtype", type=str, default=None, help="f32 (default), bf16 or f16")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("trace", help="the oneDNN primitives each path really runs (one traced call)")
    p.add_argument("desc", help="benchdnn conv descriptor")
    p.add_argument("--paths", type=str, default="all", help="comma-separated paths, or 'all' (default)")
    p.add_argument("--dtype", type=str, default=None, help="f32 (default), bf16 or f16")
    p.add_argument("--no-bias", action="store_true", help="convolution without bias")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("info", help="versions, CPU ISA, threads and the measured peak")
    p.add_argument("--remeasure", action="store_true", help="measure the peak again instead of using the cache")
    p.add_argument("--no-peak", action="store_true", help="do not measure the peak if it is not cached")
    p.add_argument("--json", action="store_true")

    from explorer import sweep_cli  # sweep, batch and compare live in their own module

    sweep_cli.add_parsers(sub, _add_run_options)
    return parser


# ---- commands ---------------------------------------------------------------------------------------
def _run_options(args):
    from explorer.core.runner import RunOptions

    return RunOptions(
        paths=_paths_arg(args.paths), threads=args.threads, budget_ms=args.budget_ms, trace=not args.no_trace,
    ).validate()


def _spec_from(args):
    from explorer.core.spec import parse_descriptor, parse_dtype

    dtype = parse_dtype(args.dtype) if args.dtype else None
    return parse_descriptor(args.desc, dtype=dtype, bias=False if args.no_bias else None)


def cmd_run(args) -> int:
    from explorer.core.results import CsvSink, check_writable
    from explorer.core.runner import PathFinished, PathStarted, iter_run

    from explorer.core.memory import check_memory

    spec = _spec_from(args)
    opts = _run_options(args)
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
    if quiet:
        print(json.dumps({"results": [r.row() for r in results]}, indent=1))
    if args.csv and not quiet:
        print(f"wrote {len(results)} rows to {args.csv}", file=sys.stderr)
    return 0


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _fmt(v, spec="{:.4g}") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return spec.format(v)


def format_table(results) -> str:
    from explorer.core.memory import fmt_bytes

    base = {r.spec.desc + r.spec.dtype: r.median_ms for r in results if r.path == "dense" and r.status == "ok"}
    head = ("path", "status", "median ms", "IQR ms", "GFLOP/s", "vs dense", "max err", "in/wei/out stored", "kernel")
    rows = []
    for r in results:
        b = base.get(r.spec.desc + r.spec.dtype)
        speed = f"{b / r.median_ms:.2f}x" if (b and r.median_ms) else "-"
        stored = "/".join(fmt_bytes(x) if x is not None else "-" for x in (r.input_bytes, r.weight_bytes, r.output_bytes))
        if r.status != "ok":
            rows.append((r.path, r.status, r.error[:90], "", "", "", "", "", ""))
            continue
        rows.append((
            r.path, r.status, _fmt(r.median_ms), _fmt(r.iqr_ms), _fmt(r.gflops, "{:.1f}"), speed,
            _fmt(r.max_abs_err, "{:.1e}"), stored, r.conv_impl or "-",
        ))
    widths = [max(len(str(x)) for x in col) for col in zip(head, *[r for r in rows if r[1] == "ok"] or [head])]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(head, widths))]
    for row in rows:
        if row[1] != "ok":
            lines.append("  ".join([row[0].ljust(widths[0]), row[1].ljust(widths[1]), row[2]]))
        else:
            lines.append("  ".join(str(x).ljust(w) for x, w in zip(row, widths)))
    return "\n".join(lines)


def cmd_info(args) -> int:
    from explorer.core import machine

    if not args.no_peak and not args.json:
        print("measuring the peak (cached afterwards) ...", file=sys.stderr, flush=True)
    data = machine.info(measure_peak_now=not args.no_peak, remeasure=args.remeasure)
    if args.json:
        print(json.dumps(data, indent=1))
        return 0
    labels = {
        "torch_version": "torch", "onednn_version": "oneDNN", "cpu": "CPU", "torch_isa": "ISA (torch)",
        "onednn_isa": "ISA (oneDNN)", "avx512": "AVX-512", "amx": "AMX", "bf16_supported": "bf16 in oneDNN",
        "fp16_supported": "f16 in oneDNN", "threads": "threads", "cores": "cores",
        "mkldnn_available": "MKLDNN available", "peak_fp32_gflops": "peak fp32 GFLOP/s (best large GEMM)",
        "peak_bf16_gflops": "peak bf16 GFLOP/s (best large GEMM)", "peak_source": "peak from",
        "bandwidth_gbs": "memory bandwidth GB/s (256 MiB copy)",
        "peak_measured_at": "peak measured at",
    }
    for k, label in labels.items():
        v = data.get(k)
        print(f"{label:38s} {_fmt(v, '{:.1f}') if isinstance(v, float) else ('-' if v is None else v)}")
    return 0


def cmd_gui(args) -> int:
    from explorer.gui.app import run_gui  # imports Qt only when the window is asked for

    return run_gui(args)


def _int_list(text: str, what: str) -> tuple[int, ...]:
    from explorer.core.errors import InputError

    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise InputError(f"{what} must be whole numbers separated by commas, like 2,17,5,4; got {text!r}.", what) from None
    return values


def cmd_layout(args) -> int:
    from explorer.core.errors import InputError

    if args.tag:
        if args.desc:
            raise InputError("give either a descriptor or --tag with --dims, not both.", "tag")
        return _layout_of_tag(args)
    if not args.desc:
        raise InputError("give a conv descriptor (layout mb2ic17ih5oc17kh3ph1) or --tag TAG --dims D1,D2,...", "desc")
    for opt in ("dims", "offset"):
        if getattr(args, opt):
            raise InputError(f"--{opt} goes with --tag, not with a descriptor.", opt)
    from explorer.core.path_layouts import inspect_path
    from explorer.core.runner import validate_paths

    args.no_bias = False
    spec = _spec_from(args)
    path = validate_paths((args.path,))[0]
    ins = inspect_path(spec, path)
    if args.json:
        print(json.dumps(ins.to_dict(), indent=1))
        return 0
    from explorer.core.memory import fmt_bytes

    print(f"{spec.descriptor()}  dtype={spec.dtype}  path={path}")
    for role, t in ins.tensors.items():
        d = t.to_dict()
        stored = f"{d['tag']} ({d['alias']})" if d["alias"] else (d["tag"] or d["unknown_reason"])
        print(f"  {role:7s} dims {'x'.join(map(str, t.shape)):14s} stored {stored}  from the {t.source}")
        if d["padded_dims"]:
            print(f"          padded {'x'.join(map(str, d['padded_dims']))}  strides {d['strides']}")
        print(f"          {fmt_bytes(t.stored_bytes)} stored vs {fmt_bytes(t.logical_bytes)} logical "
              f"({t.stored_bytes} vs {t.logical_bytes} bytes, overhead {t.overhead_pct:.1f}%)")
        if t.kernel_tag:
            alias = f" ({t.kernel.alias})" if t.kernel is not None and t.kernel.alias else ""
            note = "" if t.stored is not None and t.kernel_tag == t.stored.tag else "  <- reordered for the kernel"
            print(f"          kernel used {t.kernel_tag}{alias} (from the trace){note}")
    if not ins.trace:
        print("  no oneDNN primitive ran: this path uses PyTorch's own kernels")
    return 0


def _layout_of_tag(args) -> int:
    from explorer.core.errors import InputError
    from explorer.core.layout import layout_from_tag
    from explorer.core.spec import parse_dtype

    if not args.dims:
        raise InputError("--tag needs --dims, e.g. --dims 2,17,5,4.", "dims")
    dims = _int_list(args.dims, "dims")
    if any(d < 1 for d in dims):
        raise InputError(f"every dim must be at least 1, got {args.dims}.", "dims")
    dtype = parse_dtype(args.dtype) if args.dtype else "f32"
    lay = layout_from_tag(args.tag, dims, dtype, kind=args.kind)
    data = lay.to_dict()
    if args.offset:
        index = _int_list(args.offset, "offset")
        if len(index) != len(dims) or any(not 0 <= i < d for i, d in zip(index, dims)):
            raise InputError(f"--offset {args.offset} is not an element of dims {args.dims}.", "offset")
        data["index"] = list(index)
        data["offset"] = lay.offset(index)
        data["byte_offset"] = data["offset"] * lay.itemsize
        data["formula"] = lay.offset_formula(index)
    if args.json:
        print(json.dumps(data, indent=1))
        return 0
    for k in ("tag", "alias", "dims", "padded_dims", "strides", "inner_blks", "inner_idxs", "dtype", "nbytes",
              "logical_nbytes", "overhead_pct"):
        print(f"{k:15s} {data.get(k)}")
    if args.offset:
        print(f"{'offset':15s} {data['offset']} elements ({data['byte_offset']} bytes)")
        print(f"{'formula':15s} {data['formula']}")
    return 0


def cmd_trace(args) -> int:
    from explorer.core.path_layouts import inspect_path
    from explorer.core.paths import Tensors, is_unsupported, one_line

    spec = _spec_from(args)
    paths = _paths_arg(args.paths)
    tensors = Tensors.make(spec)
    out: dict = {"desc": spec.descriptor(), "dtype": spec.dtype, "paths": {}, "summary": {}, "errors": {}}
    for path in paths:
        try:
            ins = inspect_path(spec, path, tensors)
        except Exception as exc:  # noqa: BLE001 - a path torch refuses is reported, the others still run
            out["errors"][path] = ("unsupported: " if is_unsupported(exc) else "error: ") + one_line(exc)
            continue
        out["paths"][path] = [p.to_dict() for p in ins.trace]
        out["summary"][path] = ins.summary.to_dict() if ins.summary is not None else {}
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"{spec.descriptor()}  dtype={spec.dtype}")
    for path in paths:
        print(f"\n{path}:")
        if path in out["errors"]:
            print(f"  {out['errors'][path]}")
            continue
        prims = out["paths"][path]
        if not prims:
            print("  no oneDNN primitive ran: PyTorch's own kernels")
            continue
        for i, p in enumerate(prims, 1):
            fmts = " ".join(f"{k}:{p[k]}" for k in ("src", "wei", "dst") if p.get(k))
            print(f"  {i}. {p['op']:12s} {p['impl']:28s} {fmts}  {p['time_ms']:.4f} ms")
        s = out["summary"][path]
        print(f"  conv {s.get('conv_time_ms', 0):.4f} ms, reorders {s.get('reorder_time_ms', 0):.4f} ms "
              f"({_plural(s.get('reorder_count', 0), 'reorder')})")
    return 0


COMMANDS = {"run": cmd_run, "info": cmd_info, "gui": cmd_gui, "layout": cmd_layout, "trace": cmd_trace}


def _on_sigterm(signum, frame):
    raise _Terminated()


def main(argv: list[str] | None = None) -> int:
    from explorer.core.errors import ExplorerError

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except _UsageError as e:
        print(str(e), file=sys.stderr)
        return EXIT_BAD_INPUT
    if not args.command:
        parser.print_help()
        return EXIT_BAD_INPUT
    old = signal.signal(signal.SIGTERM, _on_sigterm) if _in_main_thread() else None
    from explorer import sweep_cli

    handler = COMMANDS.get(args.command) or sweep_cli.COMMANDS[args.command]
    try:
        return handler(args) or 0
    except (ExplorerError, _UsageError, argparse.ArgumentTypeError) as e:
        print(f"mkldnn-explorer {args.command}: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (KeyboardInterrupt, _Terminated):
        print("interrupted: every finished row was kept.", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)


def _in_main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


if __name__ == "__main__":
    raise SystemExit(main())
