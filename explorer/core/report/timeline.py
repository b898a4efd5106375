"""Timeline export: a run as Chrome trace-event JSON (opens in ui.perfetto.dev and chrome://tracing).

One process, one track (thread) per path. On each path's track:

- one `call` slice per timed call, at its real start (perf_counter_ns) with its measured duration, inside a
  `timed loop` slice per (spec, path) that carries the spec and the statistics;
- the `traced call` slice (oneDNN verbose on, before the timed loop) with the oneDNN primitives it ran
  nested under it. Verbose gives each primitive's time but not its start, so the primitives are laid end to
  end from the call's start (args.start = "laid end to end");
- the `profiled call` slice (torch.profiler) with the ATen ops it dispatched to, at their profiled offsets.

Format: the JSON object form, {"traceEvents": [...], "displayTimeUnit": "ms"}; complete events (ph "X")
with ts and dur in microseconds, and metadata events (ph "M") naming the process and the tracks.
Reference: "Trace Event Format" (Google), the format Perfetto's legacy JSON importer reads.

Qt-free; keeps only numbers per result (no tensors), so a sweep's timeline costs ~16 bytes per sample.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import numpy as np

from explorer.core.files import atomic_write_text

PID = 1
CALL_CAT = "call"  # one slice per timed call: their count is the number of samples taken

__all__ = ["Timeline", "PID", "CALL_CAT"]


@dataclass
class _Entry:
    path: str
    desc: str
    dtype: str
    threads: int
    starts_ns: np.ndarray
    durs_ns: np.ndarray
    stats: dict
    trace_window: tuple | None
    primitives: list  # (name, time_ms, args)
    aten_window: tuple | None
    aten: list  # (name, depth, start_us, dur_us)
    waits_ns: np.ndarray | None = None  # per-sample run-queue wait, when the harness records it


@dataclass
class Timeline:
    """Collects finished results (add) and writes them as trace-event JSON (write / to_dict)."""

    title: str = "MKLDNN Explorer"
    entries: list[_Entry] = field(default_factory=list)

    def add(self, res) -> None:
        """Keep what the timeline needs of a runner Result (ok rows with samples, traces, profiles)."""
        starts = getattr(res, "sample_starts_ns", None)
        durs = None
        if res.samples_ms is not None and starts is not None and len(starts):
            durs = np.rint(np.asarray(res.samples_ms, dtype=np.float64) * 1e6).astype(np.int64)
            starts = np.asarray(starts, dtype=np.int64)
        prims = [(f"{p.op} {p.impl}", float(p.time_ms),
                  {"src": p.src, "wei": p.wei, "dst": p.dst, "prop": p.prop, "time_ms": p.time_ms})
                 for p in (res.trace or []) if getattr(p, "kind", "exec") == "exec"]
        aten = [(o.name, o.depth, o.start_us, o.dur_us) for o in (getattr(res, "aten", None) or [])]
        if durs is None and not prims and not aten and res.trace_window_ns is None:
            return
        stats = {"status": res.status, "samples": res.samples, "median_ms": res.median_ms, "iqr_ms": res.iqr_ms,
                 "onednn_ms": res.onednn_ms, "reorder_ms": res.reorder_ms, "other_ms": res.other_ms,
                 "compile_ms": res.compile_ms, "aten_ops": res.aten_ops}
        # Per-sample time the measuring threads waited for a core (schedstat), once the harness records it
        # as `sample_waits_ns` (one value per sample); drawn as a counter track under the path's calls.
        waits = getattr(res, "sample_waits_ns", None)
        if waits is not None and durs is not None and len(waits) == durs.size:
            waits = np.asarray(waits, dtype=np.int64)
        else:
            waits = None
        self.entries.append(_Entry(
            res.path, res.spec.desc, res.spec.dtype, res.threads,
            starts if durs is not None else np.empty(0, np.int64), durs if durs is not None else np.empty(0, np.int64),
            stats, res.trace_window_ns, prims, res.aten_window_ns, aten, waits,
        ))

    @property
    def sample_count(self) -> int:
        return int(sum(e.durs_ns.size for e in self.entries))

    # ------------------------------------------------------------------------------------------ output
    def _origin(self) -> int:
        firsts = []
        for e in self.entries:
            if e.starts_ns.size:
                firsts.append(int(e.starts_ns.min()))
            if e.trace_window:
                firsts.append(int(e.trace_window[0]))
            if e.aten_window:
                firsts.append(int(e.aten_window[0]))
        return min(firsts) if firsts else 0

    def to_dict(self) -> dict:
        origin = self._origin()
        tids: dict[str, int] = {}
        events: list[dict] = [{"name": "process_name", "ph": "M", "ts": 0, "pid": PID, "tid": 0,
                               "args": {"name": self.title}}]

        def us(ns: int) -> float:
            return round((ns - origin) / 1e3, 3)

        for e in self.entries:
            if e.path not in tids:
                tids[e.path] = len(tids) + 1
                tid = tids[e.path]
                events.append({"name": "thread_name", "ph": "M", "ts": 0, "pid": PID, "tid": tid,
                               "args": {"name": e.path}})
                events.append({"name": "thread_sort_index", "ph": "M", "ts": 0, "pid": PID, "tid": tid,
                               "args": {"sort_index": tid}})
            tid = tids[e.path]
            label = f"{e.desc} {e.dtype} t{e.threads}"
            if e.trace_window:
                t0, t1 = e.trace_window
                events.append(_x("traced call", "trace", us(t0), (t1 - t0) / 1e3, tid,
                                 {"spec": label, "primitives": len(e.primitives)}))
                total_ms = sum(ms for _, ms, _ in e.primitives)
                scale = min(1.0, (t1 - t0) / 1e6 / total_ms) if total_ms > 0 else 1.0
                at = float(t0)
                for name, ms, args in e.primitives:
                    d = ms * 1e6 * scale
                    events.append(_x(name, "onednn", us(int(at)), d / 1e3, tid,
                                     dict(args, start="laid end to end")))
                    at += d
            if e.aten_window:
                a0, wall = e.aten_window
                events.append(_x("profiled call", "aten", us(a0), wall / 1e3, tid, {"spec": label, "ops": len(e.aten)}))
                end_us = us(a0) + wall / 1e3
                for name, depth, start_us, dur_us in e.aten:
                    ts = min(us(a0) + start_us, end_us)
                    events.append(_x(name, "aten", ts, max(0.0, min(dur_us, end_us - ts)), tid, {"depth": depth}))
            if e.durs_ns.size:
                s0 = int(e.starts_ns[0])
                s1 = int(e.starts_ns[-1] + e.durs_ns[-1])
                events.append(_x("timed loop", "loop", us(s0), (s1 - s0) / 1e3, tid,
                                 {"spec": label, **{k: v for k, v in e.stats.items() if v not in (None, "")}}))
                ts = np.round((e.starts_ns - origin) / 1e3, 3)
                dur = np.round(e.durs_ns / 1e3, 3)
                name = f"{e.path} call"
                events.extend({"name": name, "cat": CALL_CAT, "ph": "X", "ts": float(a), "dur": float(b),
                               "pid": PID, "tid": tid} for a, b in zip(ts.tolist(), dur.tolist()))
                if e.waits_ns is not None:
                    cname = f"{e.path}: waited for a core (us)"
                    for a, b, w in zip(ts.tolist(), dur.tolist(), (e.waits_ns / 1e3).round(3).tolist()):
                        if w > 0:  # the wait rises at the call's start and falls back at its end
                            events.append({"name": cname, "ph": "C", "ts": float(a), "pid": PID, "tid": tid,
                                           "args": {"wait_us": float(w)}})
                            events.append({"name": cname, "ph": "C", "ts": round(float(a) + float(b), 3),
                                           "pid": PID, "tid": tid, "args": {"wait_us": 0.0}})
        return {"traceEvents": events, "displayTimeUnit": "ms",
                "otherData": {"producer": self.title, "samples": self.sample_count}}

    def text(self) -> str:
        """Strict JSON (no bare NaN: a figure that is not a number is left out as null)."""
        return json.dumps(_finite(self.to_dict()), separators=(",", ":"), allow_nan=False)

    def write(self, path: str | os.PathLike) -> None:
        atomic_write_text(path, self.text())


def _finite(obj):
    import math

    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj


def _x(name: str, cat: str, ts: float, dur_us: float, tid: int, args: dict | None = None) -> dict:
    ev = {"name": name, "cat": cat, "ph": "X", "ts": round(ts, 3), "dur": round(max(0.0, dur_us), 3),
          "pid": PID, "tid": tid}
    if args:
        ev["args"] = {k: v for k, v in args.items() if v is not None}
    return ev
