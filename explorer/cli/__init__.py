"""The command line: the same core as the desktop app, with no display needed.

One module per command group (run, gui, inspect_cmds, sweep, compare, model, fleet: merge), each with `add_parsers(sub)`
and `COMMANDS`; what they share is in `common`. This module only composes them: no command module imports
it, so there is no import circle. `gui` is parsed here but opened by explorer.launch (the console script),
so the command line never imports Qt.

Bad input anywhere exits 2 with one line on stderr and no traceback. Ctrl+C or SIGTERM during a run
keeps every finished row in the CSV (written atomically after each row) and exits 130. A fault (the
measuring process killed, a full disk) keeps the same and exits 3, with one sentence: which file, why, how
many rows are safe in it, and where the recovery copy of all of them went (the cache folder, or stdout).
"""

from __future__ import annotations

import argparse
import signal
import sys

from explorer import __version__
from explorer.cli import compare, fleet, gui, inspect_cmds, model, run, sweep
from explorer.cli.empty_values import check_not_empty
from explorer.cli.json_stdout import json_only_stdout
from explorer.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FAULT,
    EXIT_INTERRUPTED,
    Parser,
    Terminated,
    UsageError,
    check_outputs,
    clip_long,
)

GROUPS = (run, gui, inspect_cmds, sweep, compare, model, fleet)
COMMANDS = {name: fn for g in GROUPS for name, fn in g.COMMANDS.items()}


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="mkldnn-explorer", description="What to_mkldnn() really does to a convolution on this CPU.")
    parser.add_argument("--version", action="version", version=f"mkldnn-explorer {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for g in GROUPS:
        g.add_parsers(sub)
    return parser


def _on_sigterm(signum, frame):
    raise Terminated()


def main(argv: list[str] | None = None, handlers: dict | None = None) -> int:
    """Run one command; `handlers` adds commands whose code lives above the CLI (explorer.launch: `gui`)."""
    from explorer.core.errors import ExplorerError, Fault, WriteFault

    commands = {**COMMANDS, **(handlers or {})}

    if hasattr(sys, "set_int_max_str_digits"):  # a 5,000-digit size is refused by the checks, not by int()
        sys.set_int_max_str_digits(0)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as e:
        print(clip_long(str(e)), file=sys.stderr)
        return EXIT_BAD_INPUT
    args.argv = list(sys.argv[1:] if argv is None else argv)  # as typed: for the --resume command of a fault
    if not args.command:
        parser.print_help()
        return EXIT_BAD_INPUT
    if args.command not in commands:
        print(f"mkldnn-explorer {args.command}: run it as `mkldnn-explorer {args.command}` or `python -m explorer "
              f"{args.command}`.", file=sys.stderr)
        return EXIT_BAD_INPUT
    old = signal.signal(signal.SIGTERM, _on_sigterm) if _in_main_thread() else None
    try:
        check_not_empty(args)
        check_outputs(args)
        with json_only_stdout(bool(getattr(args, "json", False))):  # stdout: the JSON, nothing a library prints
            return commands[args.command](args) or 0
    except Fault as e:
        if isinstance(e, WriteFault):
            _recover(e)
        print(f"mkldnn-explorer {args.command}: {e}", file=sys.stderr)
        return EXIT_FAULT
    except (ExplorerError, UsageError, argparse.ArgumentTypeError) as e:
        print(f"mkldnn-explorer {args.command}: {clip_long(str(e))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (KeyboardInterrupt, Terminated):
        print("interrupted: every finished row was kept.", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)


def _recover(fault) -> None:
    """A copy of what could not be written: in the cache folder, or else on stdout after the tables."""
    from explorer.core.files import recover

    if fault.text and recover(fault) is None:
        fault.recovered = "stdout (below)"
        fault.args = (fault.sentence(),)
        try:
            sys.stdout.write(fault.text)
            sys.stdout.flush()
        except OSError:
            fault.recovered = None
            fault.args = (fault.sentence(),)


def _in_main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()
