"""`gui`: the desktop app's arguments. Qt-free: the window itself is opened by explorer.launch, the one
module above both the command line and the desktop app, so no command module ever imports Qt."""

from __future__ import annotations

from explorer.cli.common import add_run_options

TABS = ("run", "sweep", "roofline", "compare", "model")  # the window's tabs, by their titles


def add_parsers(sub) -> None:
    p = sub.add_parser("gui", help="open the desktop app (optionally run, export and exit)")
    p.add_argument("desc", nargs="?", default=None, help="benchdnn conv descriptor to open (default: the last one, or a preset)")
    p.add_argument("--run", action="store_true", help="start the run as soon as the window opens")
    p.add_argument("--screenshot", type=str, default=None,
                   help="save a PNG of the whole window, then exit (implies --exit-when-done): when the run ends "
                        "with --run, else half a second after the window opens")
    p.add_argument("--exit-when-done", action="store_true", help="exit when the run ends (prints event-loop stall p99/max)")
    p.add_argument("--size", type=str, default=None,
                   help="window size WxH (default: where the last window closed, else 1440x900)")
    p.add_argument("--vary", action="append", default=[], metavar="FIELD=VALUES",
                   help="open the Sweep tab on this sweep of DESC (twice for a grid); with --run, run it")
    p.add_argument("--batch", type=str, default=None, metavar="FILE",
                   help="open the Sweep tab on this batch file (or shipped name); with --run, run it")
    p.add_argument("--theme", choices=("light", "dark"), default=None, help="colour theme (default: the last one)")
    p.add_argument("--tab", choices=TABS, default=None,
                   help="the tab to show: run, sweep, roofline, compare or model (default: run, or sweep with --vary/--batch)")
    add_run_options(p)


COMMANDS: dict = {}  # `gui` runs explorer.gui.app.run_gui, handed in by explorer.launch
