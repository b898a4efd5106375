"""The command that finishes a run cut short: the user's own command line, its CSV given to --resume.

Printed after a fault (a cluster left without workers), so the user copies one line instead of working out
which options to drop: --csv and --force go (the CSV goes on in place), --resume names the CSV kept.
"""

from __future__ import annotations

import shlex

_DROP_WITH_VALUE = ("--csv", "--resume")
_DROP = ("--force",)


def resume_command(argv: list[str] | None, csv: str, prog: str = "mkldnn-explorer") -> str:
    """`argv` (the arguments after the program name) with --resume `csv` in place of --csv/--resume/--force."""
    out: list[str] = []
    words = list(argv or [])
    i = 0
    while i < len(words):
        w = words[i]
        if w in _DROP_WITH_VALUE:
            i += 2
            continue
        if w in _DROP or any(w.startswith(o + "=") for o in _DROP_WITH_VALUE):
            i += 1
            continue
        out.append(w)
        i += 1
    return shlex.join([prog, *out, "--resume", csv])
