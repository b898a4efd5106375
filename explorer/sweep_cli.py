"""Command-line parsers and handlers for sweep, batch and compare (filled in by the sweeps work)."""

COMMANDS: dict = {}


def add_parsers(sub, add_run_options) -> None:
    """Register the sweep/batch/compare subcommands on the main parser's subparsers."""
