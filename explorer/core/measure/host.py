"""This host: its CPU model and flags, its cores (the threads a run may ask for) and the cache folder."""

from __future__ import annotations

import functools
import os
import platform
from pathlib import Path

from explorer.core.errors import InputError


@functools.lru_cache(maxsize=1)
def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def cache_dir() -> Path:
    base = os.environ.get("MKLDNN_EXPLORER_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "mkldnn-explorer"
    )
    return Path(base)


def validate_threads(n) -> int:
    """The threads a run may ask for: a whole number from 1 to this machine's cores."""
    cores = os.cpu_count() or 1
    if not isinstance(n, int) or isinstance(n, bool) or n < 1 or n > cores:
        raise InputError(f"threads must be a whole number from 1 to {cores} (this machine's cores), got {n!r}.", "threads")
    return n
