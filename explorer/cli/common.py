"""What every command group shares: the parser class, argument types, the run options and the spec.

Nothing here imports a command module, so the command modules import it freely and never each other.
"""

from __future__ import annotations

import argparse
import math

# Exit codes (README "Exit codes"): 0 done, 2 bad input (nothing measured, or bad batch lines after the good
# ones ran), 3 a fault stopped the run (the measuring process killed, an output that could not be written), 130
# interrupted (Ctrl+C or SIGTERM). After 3 and 130 every finished row is in the CSV, and the count printed is
# the count on disk.
EXIT_BAD_INPUT = 2
EXIT_FAULT = 3
EXIT_INTERRUPTED = 130
OUTPUT_OPTIONS = ("csv", "timeline", "screenshot")  # every option that names a file the tool writes


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error (no usage dump) and exit status 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        raise UsageError(f"{self.prog}: {message}")


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
                        "default (glibc as a fresh process has it), jemalloc, tcmalloc (when installed)")


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
    if csv:
        p.add_argument("--csv", type=str, default=None, help="write results to this CSV (atomically, row by row)")
        p.add_argument("--force", action="store_true", help="overwrite an existing CSV")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--timeline", type=str, default=None, metavar="FILE.json",
                   help="write every timed call, the traced call's oneDNN primitives and the profiled ATen ops as "
                        "a Chrome trace-event JSON (opens in ui.perfetto.dev or chrome://tracing)")



def run_options(args):
    from explorer.core.jobs.options import RunOptions
    from explorer.core.measure.allocator import env_for

    opts = RunOptions(
        paths=paths_arg(args.paths), threads=args.threads, budget_ms=args.budget_ms, trace=not args.no_trace,
        allocator=args.allocator,
    ).validate()
    env_for(opts.allocator)  # jemalloc/tcmalloc not installed: one sentence before any work
    return opts


def measured_events(kind: str, *args, allocator: str, **kwargs):
    """A core job's events from the measuring process (explorer.core.process.measuring), as the window gets them."""
    from explorer.core.process import measuring

    return measuring.events(kind, *args, allocator=allocator, **kwargs)


def allocator_note(allocator: str) -> str:
    from explorer.core.measure.allocator import reproduce_hint

    return f"allocator: {allocator}; to reproduce a figure in your own script: {reproduce_hint(allocator)}"


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
