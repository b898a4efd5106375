"""Which memory allocator the measuring process runs with, and how to start a process with it.

Why it matters: a dense conv that reorders into a temporary buffer asks the allocator for that buffer on
every call. glibc hands large freed blocks back to the OS when they exceed its mmap/trim thresholds, and
it raises those thresholds on its own after freeing a large block, so the same call can take ~1,000
page faults in a fresh process and ~2 in one whose history raised the thresholds: 1.7x apart for
mb8ic64ih28oc64oh28kh3ph1. A figure is only reproducible when that state is chosen, not inherited.

The settings (read by glibc or the dynamic loader at process start, so they need a new process):
- `tuned` (the default): glibc with MALLOC_MMAP_THRESHOLD_=33554432, MALLOC_MMAP_MAX_=0 and
  MALLOC_TRIM_THRESHOLD_=1000000000: no buffer of any size is mapped per call or returned to the OS, so
  once warm a loop takes no page faults, independent of what ran before. (The threshold alone stops at
  32 MiB, glibc's cap; a larger buffer then faults on every call or not, by the heap's history.)
- `default`: glibc's own settings, no variables (dynamic thresholds). In a run every path gets a new
  measuring process and is timed right after its warm-up call, before the accuracy check, the trace and
  the profile (the f32 reference's im2col buffer raised the thresholds: 0 faults a call against a plain
  script's 556). It is *not* "a fresh script": a fresh script has no one state to reproduce. The same plain
  torch.utils.benchmark script, run 16 times on a quiet machine, took 0 page faults a call in some runs and
  556 in others (mb4ic64ih28oc64oh28kh3ph1: 1.1 against 2.3 ms), by what its heap held when the loop began
  (BENCHMARKS.md §13). A sweep, batch or model job gets one new process, whose earlier points move the
  thresholds further. For a figure a user's own script would give, `run --verify` runs that script.
- `jemalloc`, `tcmalloc`: preloaded with LD_PRELOAD when the library is installed (Debian: libjemalloc2,
  libtcmalloc-minimal4), as Intel's launcher (torch.backends.xeon.run_cpu) offers.
"""

from __future__ import annotations

import glob
import os

from explorer.core.errors import InputError

ALLOCATORS = ("tuned", "default", "jemalloc", "tcmalloc")
DEFAULT_ALLOCATOR = "tuned"
ENV_NAME = "MKLDNN_EXPLORER_ALLOCATOR"  # set in the measuring process: which setting it was started with
# MALLOC_MMAP_MAX_=0 because glibc caps the mmap threshold at 32 MiB: without it a larger buffer (MobileNetV2
# mb8's 38.5 MB activations) is mapped afresh on every call, or not, depending on what the heap holds: one
# 1x1 conv measured 8.4 ms with 0 faults in one process and 47 ms with 18,818 faults per call in another.
TUNED_ENV = {"MALLOC_MMAP_THRESHOLD_": "33554432", "MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": "1000000000"}
_LIBS = {
    "jemalloc": ("libjemalloc.so.2", "libjemalloc.so"),
    "tcmalloc": ("libtcmalloc_minimal.so.4", "libtcmalloc.so.4", "libtcmalloc_minimal.so", "libtcmalloc.so"),
}
_PACKAGES = {"jemalloc": "libjemalloc2", "tcmalloc": "libtcmalloc-minimal4"}
_LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib",
             "/lib/x86_64-linux-gnu", "/lib64", "/lib")
# Variables this module sets; they are cleared first so one setting never leaks into another.
_OWNED = ("LD_PRELOAD", *TUNED_ENV, ENV_NAME)


def validate(name) -> str:
    if name not in ALLOCATORS:
        raise InputError(f"unknown allocator {name!r}; choose from {', '.join(ALLOCATORS)}.", "allocator")
    return name


def find_library(name: str) -> str | None:
    """The shared library behind jemalloc/tcmalloc on this machine, or None."""
    extra = [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p]
    conda = [os.path.join(os.environ["CONDA_PREFIX"], "lib")] if os.environ.get("CONDA_PREFIX") else []
    for d in (*extra, *conda, *_LIB_DIRS):
        for lib in _LIBS[name]:
            hits = glob.glob(os.path.join(d, lib))
            if hits:
                return hits[0]
    return None


def env_for(name: str) -> dict[str, str | None]:
    """Environment changes that start a process with allocator `name` (None: remove the variable).
    Raises InputError with one sentence when the setting cannot be had here."""
    validate(name)
    env: dict[str, str | None] = {k: None for k in _OWNED}
    env[ENV_NAME] = name
    if name == "tuned":
        env.update(TUNED_ENV)
    elif name in _LIBS:
        lib = find_library(name)
        if lib is None:
            raise InputError(f"{name} is not installed on this machine (Debian: apt-get install {_PACKAGES[name]}); "
                             f"choose from {', '.join(available())}.", "allocator")
        env["LD_PRELOAD"] = lib
    return env


def available() -> tuple[str, ...]:
    return tuple(a for a in ALLOCATORS if a not in _LIBS or find_library(a) is not None)


def _mapped(lib_word: str) -> bool | None:
    """Whether a library whose file name holds `lib_word` is loaded in this process (None: unknown)."""
    try:
        with open("/proc/self/maps") as f:
            return any(lib_word in line for line in f)
    except OSError:
        return None


def current() -> str:
    """The setting this process really runs with: the preloaded library as the loader mapped it, else the
    variables glibc read at start."""
    for name in ("jemalloc", "tcmalloc"):
        if name in os.environ.get("LD_PRELOAD", "") and _mapped(f"lib{name}") is not False:
            return name
    if all(os.environ.get(k) == v for k, v in TUNED_ENV.items()):
        return "tuned"
    if any(k in os.environ for k in TUNED_ENV):
        return "custom"
    return "default"


def reproduce_hint(name: str) -> str:
    """How a user's own script gets the same allocator state (printed by the CLI)."""
    if name == "tuned":
        return " ".join(f"{k}={v}" for k, v in TUNED_ENV.items()) + " python your_script.py"
    if name in _LIBS:
        lib = find_library(name) or _LIBS[name][0]
        return f"LD_PRELOAD={lib} python your_script.py"
    return "python your_script.py (a fresh process, glibc as it comes)"


def fresh_per_run(name: str) -> bool:
    """`default` (glibc's own settings) gets a new measuring process for every job (a run's path), which
    times before it checks, traces or profiles: nothing of the tool's own moves glibc's thresholds first."""
    return name == "default"
