"""The ATen view of a path: one call under torch.profiler (outside the timed loop), the ops it dispatched to.

`profile_call(fn, context)` returns the ops of the calling thread in start order with their nesting depth
and times, e.g. for the dense path on x86::

    aten::conv2d > aten::convolution > aten::_convolution > aten::mkldnn_convolution

or `aten::thnn_conv2d > aten::_slow_conv2d_forward` where PyTorch picks its own kernel. `chain_text` is the
one-line form written to the CSV column `aten_ops`.

Also here: the split of a path's median into oneDNN compute, reorders and the rest (`time_split`).

Qt-free; torch is imported lazily.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["AtenOp", "Profile", "profile_call", "chain_text", "children", "time_split", "BOOKKEEPING"]

# Kineto prints "USDT:... profiler_start" / "profiler_stop" on fd 2 around every profile.
_KINETO_NOISE = ("USDT:",)


@dataclass(frozen=True)
class AtenOp:
    """One op (or record_function range) of the profiled call. Times in microseconds from the call's start."""

    name: str
    depth: int
    start_us: float
    dur_us: float

    def to_dict(self) -> dict:
        return {"name": self.name, "depth": self.depth, "start_us": round(self.start_us, 3),
                "dur_us": round(self.dur_us, 3)}


@dataclass
class Profile:
    ops: list[AtenOp]
    start_ns: int  # perf_counter_ns when the profiled call began (approximately: profiler start)
    wall_ns: int  # perf_counter_ns duration of the profiled region (profiler overhead included)


@contextlib.contextmanager
def _quiet_fd2():
    """Drop Kineto's USDT lines from fd 2 during the profile; anything else written there is passed on."""
    sys.stderr.flush()
    with tempfile.TemporaryFile(mode="w+b") as sink:
        saved = os.dup(2)
        try:
            os.dup2(sink.fileno(), 2)
            try:
                yield
            finally:
                with contextlib.suppress(Exception):
                    sys.stderr.flush()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        sink.seek(0)
        rest = [ln for ln in sink.read().decode("utf-8", "replace").splitlines(keepends=True)
                if not ln.startswith(_KINETO_NOISE)]
    if rest:
        sys.stderr.write("".join(rest))


def profile_call(fn: Callable[[], Any], context: Callable[[], Any] | None = None) -> Profile:
    """One call of fn under torch.profiler (CPU), in no_grad and the path's context."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    ctx = context or contextlib.nullcontext
    with torch.no_grad(), ctx(), _quiet_fd2():
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            t0 = time.perf_counter_ns()
            fn()
            t1 = time.perf_counter_ns()
    events = list(prof.events())
    if not events:
        return Profile([], t0, t1 - t0)
    thread = _main_thread(events)
    mine = [e for e in events if e.thread == thread]
    origin = min(e.time_range.start for e in mine)
    ops = []
    for e in sorted(mine, key=lambda e: (e.time_range.start, -e.time_range.elapsed_us())):
        depth, p = 0, e.cpu_parent
        while p is not None:
            depth, p = depth + 1, p.cpu_parent
        ops.append(AtenOp(e.name, depth, e.time_range.start - origin, e.time_range.elapsed_us()))
    return Profile(ops, t0, t1 - t0)


def _main_thread(events) -> int:
    """The thread holding the outermost (longest) event: the caller's thread, not OpenMP workers."""
    top = max(events, key=lambda e: e.time_range.elapsed_us())
    return top.thread


# Allocation and view bookkeeping every op does: left out of the one-line chain (kept in `ops`).
BOOKKEEPING = frozenset({
    "aten::empty", "aten::empty_strided", "aten::empty_like", "aten::resize_", "aten::view", "aten::as_strided",
    "aten::as_strided_", "aten::reshape", "aten::_nnpack_available", "aten::detach", "aten::alias",
    "aten::lift_fresh", "Pregraph bytecode", "AOTDispatcher Runtime Wrapper Prologue",
})


def children(ops: list[AtenOp], index: int) -> list[int]:
    """Indices of the direct children of ops[index] (ops in start order, with depths)."""
    out, depth = [], ops[index].depth
    for j in range(index + 1, len(ops)):
        if ops[j].depth <= depth:
            break
        if ops[j].depth == depth + 1:
            out.append(j)
    return out


def _render(ops: list[AtenOp], index: int) -> str:
    kids = [j for j in children(ops, index) if ops[j].name not in BOOKKEEPING]
    name = ops[index].name
    if not kids:
        return name
    if len(kids) == 1:
        return f"{name} > {_render(ops, kids[0])}"
    return f"{name} > (" + ", ".join(_render(ops, j) for j in kids) + ")"


def chain_text(ops: list[AtenOp]) -> str:
    """The dispatch tree on one line: 'aten::conv2d > aten::convolution > ... > aten::mkldnn_convolution';
    siblings in parentheses, top-level ops separated by ' | ', bookkeeping ops (BOOKKEEPING) left out."""
    tops = [i for i, op in enumerate(ops) if op.depth == 0 and op.name not in BOOKKEEPING]
    return " | ".join(_render(ops, i) for i in tops)


CELL_LIMIT = 32 * 1024  # the longest aten_ops a CSV cell holds (csv's default field limit is 128 KiB)


def csv_chain(chain: str, limit: int = CELL_LIMIT) -> str:
    """aten_ops as the CSV holds it: a run of the same top-level op once, with its count ('aten::add (x12)'),
    and a chain still over `limit` bytes cut at an op, saying how much was left out. A traced forward of a
    whole model can run tens of thousands of ops; one cell that size breaks readers at csv's default limit."""
    parts: list[list] = []
    for p in chain.split(" | ") if chain else ():
        if parts and parts[-1][0] == p:
            parts[-1][1] += 1
        else:
            parts.append([p, 1])
    text = " | ".join(p if n == 1 else f"{p} (x{n})" for p, n in parts)
    if len(text.encode()) <= limit:
        return text
    raw = text.encode()
    keep = raw[:limit - 80].decode(errors="ignore")
    cut = max(keep.rfind(" | "), keep.rfind(", "), keep.rfind(" > "))
    keep = keep[:cut] if cut > 0 else keep
    return f"{keep} ... ({len(raw) - len(keep.encode())} more bytes of ops left out)"


def time_split(median_ms: float | None, onednn_ms: float, reorder_ms: float) -> tuple[float, float, float] | None:
    """(oneDNN compute, reorders, the rest) of a median, from one traced call's primitive times.

    The rest is everything outside a oneDNN primitive: PyTorch's own kernels, framework dispatch and
    Python. The traced call is a single call, so the parts are estimates; when the traced primitives took
    longer than the median (a cold or disturbed traced call) they are scaled down to fit it.
    """
    if median_ms is None or median_ms != median_ms or median_ms <= 0:
        return None
    inside = onednn_ms + reorder_ms
    if inside > median_ms:
        f = median_ms / inside
        return onednn_ms * f, reorder_ms * f, 0.0
    return onednn_ms, reorder_ms, median_ms - inside
