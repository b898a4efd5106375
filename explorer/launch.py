"""The `mkldnn-explorer` command (and `python -m explorer`): every CLI command, and `gui`, the desktop app.

This is the one module above both explorer.cli and explorer.gui: the command line parses `gui`'s arguments
Qt-free, and only here is the window's code imported, when `gui` is the command.
"""

from __future__ import annotations


def run_gui(args) -> int:
    from explorer.gui.app import run_gui as open_window  # imports Qt only when the window is asked for

    return open_window(args)


def main(argv: list[str] | None = None) -> int:
    import signal

    from explorer import cli

    try:
        return cli.main(argv, handlers={"gui": run_gui})
    finally:
        # The answer is given and every row kept: a Ctrl+C or SIGTERM while the interpreter exits (the measuring
        # process is being shut down, at most a few seconds) would only print "Exception ignored in atexit".
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
