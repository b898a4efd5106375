"""--json: stdout holds the JSON and nothing else, whatever the user's environment makes libraries print.

oneDNN (ONEDNN_VERBOSE), torch and any C library print to file descriptor 1 with C stdio, in this process
and in the measuring process that inherits it. While a --json command runs, fd 1 is pointed at stderr, and
Python's sys.stdout writes to a copy of the real stdout: the command's own print() of the JSON lands there,
everything else on stderr.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys


def _real_stdout_fd() -> int | None:
    """1 when sys.stdout is the process's own fd 1 (not a test's capture object), else None."""
    try:
        return 1 if sys.stdout is not None and sys.stdout.fileno() == 1 else None
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None


@contextlib.contextmanager
def json_only_stdout(active: bool):
    """Inside: fd 1 is stderr, sys.stdout the real stdout. Restored on the way out, also on an exception."""
    if not active or _real_stdout_fd() is None:
        yield
        return
    old = sys.stdout
    old.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    real = io.TextIOWrapper(io.FileIO(saved, "w", closefd=False), encoding=old.encoding or "utf-8",
                            errors=old.errors or "strict", line_buffering=False)
    sys.stdout = real
    try:
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: main() treats it as the end
            real.flush()
        sys.stdout = old
        os.dup2(saved, 1)
        os.close(saved)
