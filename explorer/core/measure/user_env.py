"""The user's environment variables that would change what is measured, what the measuring process does with
them, and the closing line that says so.

- ONEDNN_VERBOSE / DNNL_VERBOSE / MKLDNN_VERBOSE: oneDNN would print a line for every primitive call, inside
  the timed loop (and onto the CLI's stdout, breaking --json). Removed from the measuring process; the traced
  call switches verbose on through torch's API for itself.
- PYTHONWARNINGS: `error` made the measuring process die at import (torch warns that script_method is
  deprecated); `always` prints a warning raised in a timed call every time. Removed from the measuring process.
- LD_PRELOAD: the allocator setting owns it (explorer.core.measure.allocator): removed, or replaced by
  jemalloc/tcmalloc.
- TORCH_COMPILE_DISABLE=1: kept (it is a torch setting the user may want), so the `compiled` path and mode
  are refused with that reason (explorer.core.paths.routes.compile_disabled) instead of timing eager code.

With MKLDNN_EXPLORER_IN_PROCESS=1 nothing is removed: the lines then say the variable was in effect.
"""

from __future__ import annotations

import os

VERBOSE_VARS = ("ONEDNN_VERBOSE", "DNNL_VERBOSE", "MKLDNN_VERBOSE")
REMOVED = (*VERBOSE_VARS, "PYTHONWARNINGS")  # never passed to the measuring process


def measuring_env() -> dict[str, None]:
    """Environment changes for a measuring process (None: the variable removed)."""
    return {k: None for k in REMOVED}


def _clip(value: str, n: int = 80) -> str:
    return value if len(value) <= n else value[: n - 3] + "..."


def notes(allocator: str, environ=None, in_process: bool = False, compiled: bool = True) -> list[str]:
    """One line for each variable of `environ` (default os.environ) that the tool removed, replaced or that
    changed what was measured. `compiled`: the run had a torch.compile path or mode."""
    env = os.environ if environ is None else environ
    out: list[str] = []
    preload = env.get("LD_PRELOAD", "")
    if preload:
        if in_process:
            out.append(f"LD_PRELOAD={_clip(preload)} was in effect: this process measured with it "
                       "(MKLDNN_EXPLORER_IN_PROCESS=1).")
        elif allocator in ("jemalloc", "tcmalloc"):
            out.append(f"your LD_PRELOAD={_clip(preload)} was replaced in the measuring process by --allocator "
                       f"{allocator}'s library.")
        else:
            out.append(f"your LD_PRELOAD={_clip(preload)} was removed from the measuring process (--allocator "
                       f"{allocator} starts it with its own environment; jemalloc and tcmalloc are --allocator "
                       "choices).")
    for k in VERBOSE_VARS:
        if env.get(k, "") not in ("", "0", "none"):
            if in_process:
                out.append(f"{k}={_clip(env[k])} was in effect: oneDNN printed a line in every timed call, and "
                           "the figures include it.")
            else:
                out.append(f"your {k}={_clip(env[k])} was removed from the measuring process: oneDNN would print "
                           "a line in every timed call; the traced call records the primitives (the kernel "
                           "column, `trace`, --timeline).")
    if env.get("PYTHONWARNINGS"):
        if in_process:
            out.append(f"PYTHONWARNINGS={_clip(env['PYTHONWARNINGS'])} was in effect in this process: a warning "
                       "printed or raised inside a timed call is part of its figure.")
        else:
            out.append(f"your PYTHONWARNINGS={_clip(env['PYTHONWARNINGS'])} was not applied in the measuring "
                       "process: a warning printed or raised inside a timed call would change what is timed.")
    if compiled and env.get("TORCH_COMPILE_DISABLE") == "1":  # exactly what torch._dynamo.config reads
        out.append("TORCH_COMPILE_DISABLE is set: torch.compile does nothing, so the compiled path and mode were "
                   "refused (their rows say so); unset it to time inductor's code.")
    return out
