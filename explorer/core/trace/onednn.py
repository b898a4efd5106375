"""Capture and parse oneDNN verbose output (the "trace").

oneDNN prints its verbose lines with C stdio to the process's file descriptor 1, not to
Python's sys.stdout, so the only in-process way to see them is to point fd 1 somewhere
else for the duration of a call (see FIELD_GUIDE section 4).

Capture caveats, by design:
  * fd 1 is process-wide. Anything written to it during the window (by any thread,
    including Python ``print`` when sys.stdout is fd 1) lands in the capture. Such text
    is not lost: it comes back as ``Trace.other_lines`` so the caller can show it.
  * Captures are serialised by a module-level lock, so two traces never interleave.
    The lock is re-entrant, so a nested capture from the same thread does not deadlock
    (the inner one takes its part, the outer one the rest).
  * oneDNN prints its ``info`` lines once per process; the last ones seen are remembered
    so every Trace can report version / ISA / runtime.

This module is part of explorer.core: it must never import Qt. torch is imported lazily,
so the parser works on saved logs without loading torch.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from explorer.core.errors import InputError

__all__ = [
    "MemArg",
    "Primitive",
    "InfoLine",
    "TraceSummary",
    "Trace",
    "capture_fd_output",
    "run_traced",
    "parse_line",
    "parse_verbose",
    "parse_info",
    "parse_trace",
    "is_verbose_line",
]

# Markers used by oneDNN 3.x, DNNL 1.x/2.x and MKL-DNN 0.x respectively.
_MARKERS = ("onednn_verbose", "dnnl_verbose", "mkldnn_verbose")
_MARKER_RE = re.compile(r"(?:onednn|dnnl|mkldnn)_verbose,")
_API_KINDS = ("primitive", "graph", "common", "ukernel")
_VERSION_RE = re.compile(r"^v\d+$")
# Data types: f32, bf16, s8, u8, f8_e5m2, undef, boolean ... (never "", "a", "p", "ap").
_DT = r"(?:undef|bool(?:ean)?|[a-z]+\d+(?:_[a-z0-9]+)?)"
_DT_RE = re.compile(rf"^{_DT}$")
_OLD_NAME_RE = re.compile(rf"^(?P<name>.+?)_(?P<dt>{_DT})$")

_capture_lock = threading.RLock()
_info_seen: dict[str, Any] = {}  # info lines oneDNN printed earlier in this process


# --------------------------------------------------------------------------- data types


@dataclass(frozen=True)
class MemArg:
    """One memory descriptor of a primitive, e.g. ``src:f32:ap:blocked:aBcd16b::f0``."""

    dt: str | None
    props: str = ""  # "a" = created with format `any`, "p" = padded
    kind: str = ""  # blocked, undef, wino, ...
    tag: str | None = None
    strides: str = ""
    flags: str = ""

    @property
    def padded(self) -> bool:
        return "p" in self.props


@dataclass
class Primitive:
    """One parsed ``exec`` or ``create`` line."""

    kind: str  # "exec" or "create"
    op: str  # convolution, reorder, ...
    engine: str | None
    impl: str
    prop: str
    args: dict[str, MemArg]
    attrs: str = ""
    aux: str = ""
    problem: str = ""
    time_ms: float = 0.0
    raw: str = ""
    cache: str | None = None  # "hit"/"miss" for create:cache_hit / create:cache_miss
    timestamp: float | None = None

    def _tag(self, name: str) -> str | None:
        arg = self.args.get(name)
        return arg.tag if arg else None

    def _dt(self, name: str) -> str | None:
        arg = self.args.get(name)
        return arg.dt if arg else None

    @property
    def src(self) -> str | None:
        return self._tag("src")

    @property
    def wei(self) -> str | None:
        return self._tag("wei")

    @property
    def dst(self) -> str | None:
        return self._tag("dst")

    @property
    def bia(self) -> str | None:
        # oneDNN prints "bia:undef::undef:::" when there is no bias; report that as None.
        arg = self.args.get("bia")
        return arg.tag if arg and arg.dt != "undef" else None

    @property
    def alg(self) -> str | None:
        for token in self.aux.split():
            if token.startswith("alg:"):
                return token[4:]
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "op": self.op,
            "impl": self.impl,
            "prop": self.prop,
            "src": self.src,
            "wei": self.wei,
            "dst": self.dst,
            "src_dt": self._dt("src"),
            "wei_dt": self._dt("wei"),
            "dst_dt": self._dt("dst"),
            "alg": self.alg,
            "problem": self.problem,
            "time_ms": self.time_ms,
        }


@dataclass(frozen=True)
class InfoLine:
    """An ``info`` line; ``fields`` are the comma-separated parts after ``info``."""

    fields: tuple[str, ...]
    api: str | None = None
    raw: str = ""

    @property
    def text(self) -> str:
        return ",".join(self.fields)


@dataclass
class TraceSummary:
    """Where the time went in one traced call (exec lines only)."""

    conv_time_ms: float = 0.0
    reorder_time_ms: float = 0.0
    other_time_ms: float = 0.0
    reorder_count: int = 0
    conv_count: int = 0
    conv_impl: str | None = None  # of the LAST convolution: after warm-up runs it is the steady one
    src_tag: str | None = None
    wei_tag: str | None = None
    dst_tag: str | None = None

    @property
    def total_time_ms(self) -> float:
        return self.conv_time_ms + self.reorder_time_ms + self.other_time_ms

    @classmethod
    def from_primitives(cls, prims: list[Primitive]) -> "TraceSummary":
        s = cls()
        for p in prims:
            if p.kind != "exec":  # create times are set-up cost, not run time
                continue
            if p.op == "convolution":
                s.conv_time_ms += p.time_ms
                s.conv_count += 1
                s.conv_impl, s.src_tag, s.wei_tag, s.dst_tag = p.impl, p.src, p.wei, p.dst
            elif p.op == "reorder":
                s.reorder_time_ms += p.time_ms
                s.reorder_count += 1
            else:
                s.other_time_ms += p.time_ms
        return s

    def to_dict(self) -> dict[str, Any]:
        return {
            "conv_time_ms": self.conv_time_ms,
            "reorder_time_ms": self.reorder_time_ms,
            "other_time_ms": self.other_time_ms,
            "total_time_ms": self.total_time_ms,
            "reorder_count": self.reorder_count,
            "conv_count": self.conv_count,
            "conv_impl": self.conv_impl,
            "src_tag": self.src_tag,
            "wei_tag": self.wei_tag,
            "dst_tag": self.dst_tag,
        }


@dataclass
class Trace:
    """Everything one traced call produced."""

    primitives: list[Primitive] = field(default_factory=list)  # exec lines only
    creates: list[Primitive] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    other_lines: list[str] = field(default_factory=list)  # captured text that is not oneDNN's
    summary: TraceSummary = field(default_factory=TraceSummary)
    result: Any = field(default=None, repr=False)  # what the traced fn returned


# --------------------------------------------------------------------------- capture


def _libc_fflush() -> Callable[[], None]:
    """fflush(NULL) flushes every C stdio stream, so oneDNN's buffered lines hit the fd."""
    try:
        libc = ctypes.CDLL(None)
        fflush = libc.fflush
    except (OSError, AttributeError):  # e.g. Windows: no global libc namespace
        return lambda: None
    fflush.argtypes = [ctypes.c_void_p]
    return lambda: fflush(None)


_c_flush = _libc_fflush()


def _flush_all() -> None:
    # Python's buffer first (it may sit on fd 1), then C stdio.
    for stream in (sys.stdout, sys.__stdout__):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()
    _c_flush()


def capture_fd_output(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, str]:
    """Run ``fn(*args, **kwargs)`` with fd 1 redirected; return ``(result, captured_text)``.

    A temp file (not a pipe) receives the output, so large output cannot deadlock.
    fd 1 is always restored, also when fn raises (the exception is re-raised).
    """
    with _capture_lock, tempfile.TemporaryFile(mode="w+b") as sink:
        _flush_all()  # earlier output must go to the real stdout, not into the capture
        saved = os.dup(1)
        try:
            os.dup2(sink.fileno(), 1)
            try:
                result = fn(*args, **kwargs)
            finally:
                _flush_all()  # push what fn wrote into the sink before switching back
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        sink.seek(0)
        text = sink.read().decode("utf-8", errors="replace")
    return result, text


def run_traced(fn: Callable[[], Any], context: Any = None, level: int | None = None) -> Trace:
    """Run ``fn()`` with oneDNN verbose on and return the parsed Trace.

    ``context`` (optional) is a context manager entered around the call, e.g.
    ``torch.backends.mkldnn.flags(enabled=False)``. ``level`` defaults to VERBOSE_ON
    (exec lines); pass VERBOSE_ON_CREATION to also get create lines.
    """
    if not callable(fn):
        raise InputError("The traced function is not callable.", field="fn")
    if context is not None and not hasattr(context, "__enter__"):
        raise InputError("The trace context must be a context manager.", field="context")
    import torch.backends.mkldnn as mkldnn  # lazy: parsing saved logs needs no torch

    verbose_level = mkldnn.VERBOSE_ON if level is None else level

    def call() -> Any:
        with contextlib.ExitStack() as stack:
            if context is not None:
                stack.enter_context(context)
            _enter_verbose(stack, mkldnn, verbose_level)
            return fn()

    with _capture_lock:  # re-entrant: also guards _info_seen
        result, text = capture_fd_output(call)
        trace = parse_trace(text)
        _info_seen.update(trace.info)  # oneDNN prints info once per process: remember it
        trace.info = dict(_info_seen)
    trace.result = result
    return trace


def _enter_verbose(stack: contextlib.ExitStack, mkldnn: Any, level: int) -> None:
    # torch raises a bare AssertionError when verbose cannot be switched on; say it plainly.
    try:
        stack.enter_context(mkldnn.verbose(level))
    except AssertionError as exc:
        raise InputError(f"oneDNN verbose could not be enabled at level {level}.", field="trace") from exc


# --------------------------------------------------------------------------- parsing


def is_verbose_line(line: str) -> bool:
    """True for any line oneDNN printed (even kinds we skip, such as graph lines)."""
    return line.split(",", 1)[0].strip() in _MARKERS


def _split_header(fields: list[str]) -> tuple[int, str | None, float | None]:
    """Skip the optional version ("v1") and timestamp fields after the marker."""
    i, version, stamp = 1, None, None
    while i < len(fields):
        tok = fields[i]
        if version is None and _VERSION_RE.match(tok):
            version = tok
        elif stamp is None and _is_float(tok):
            stamp = float(tok)
        else:
            break
        i += 1
    return i, version, stamp


def _is_float(tok: str) -> bool:
    try:
        float(tok)
    except ValueError:
        return False
    return True


def parse_line(line: str) -> Primitive | InfoLine | None:
    """Parse one verbose line; None for graph lines, errors, junk and unknown shapes."""
    line = line.strip()
    if not is_verbose_line(line):
        return None
    fields = line.split(",")
    i, _version, stamp = _split_header(fields)
    api = None
    if i < len(fields) and fields[i] in _API_KINDS:
        api, i = fields[i], i + 1
    if api == "graph" or i >= len(fields):
        return None  # graph-API lines describe partitions, not primitives
    operation, rest = fields[i], fields[i + 1 :]
    if operation == "info":
        return InfoLine(tuple(rest), api, line)
    if operation == "exec" or re.fullmatch(r"create(:cache_\w+)?", operation):
        # other create:* kinds (dispatch, check) explain skipped impls, not primitives
        return _parse_primitive(operation, rest, line, stamp)
    return None


def _parse_primitive(operation: str, f: list[str], raw: str, stamp: float | None) -> Primitive | None:
    # Layout: [engine,] primitive, impl, prop, mds, [attrs...,] [aux,] problem, time.
    # MKL-DNN 0.x has no engine and no attrs, so count from both ends.
    engine = None
    if f and f[0].split(":")[0] in ("cpu", "gpu"):
        engine, f = f[0], f[1:]
    if len(f) < 6 or not _is_float(f[-1]):
        return None
    op, impl, prop, mds = f[0], f[1], f[2], f[3]
    middle = f[4:-1]  # attrs..., aux, problem
    kind, _, cache = operation.partition(":")
    return Primitive(
        kind=kind,
        op=op,
        engine=engine,
        impl=impl,
        prop=prop,
        args=_parse_mds(mds),
        attrs=",".join(middle[:-2]),
        aux=middle[-2] if len(middle) >= 2 else "",
        problem=middle[-1],
        time_ms=float(f[-1]),
        raw=raw,
        cache=cache.removeprefix("cache_") or None,
        timestamp=stamp,
    )


def _parse_mds(text: str) -> dict[str, MemArg]:
    args: dict[str, MemArg] = {}
    for token in text.split():
        parsed = _parse_md(token)
        if parsed:
            args[parsed[0]] = parsed[1]
    return args


def _parse_md(token: str) -> tuple[str, MemArg] | None:
    """Both spellings: 3.x ``src:f32:ap:blocked:aBcd16b::f0`` and old ``src_f32::blocked:aBcd16b:f0``."""
    parts = token.split(":")
    if len(parts) >= 5 and _DT_RE.match(parts[1]):  # new: name:dt:props:kind:tag:strides:flags
        name, dt, props, kind, tag = parts[:5]
        strides = parts[5] if len(parts) > 5 else ""
        flags = ":".join(parts[6:])
        return name, MemArg(dt, props, kind, tag or None, strides, flags)
    old = _OLD_NAME_RE.match(parts[0])
    if old and len(parts) >= 4:  # old: name_dt:props:kind:tag:flags
        props, kind, tag = parts[1:4]
        return old["name"], MemArg(old["dt"], props, kind, tag or None, "", ":".join(parts[4:]))
    if len(parts) >= 2:  # MKL-DNN 0.x "in:f32_nchw", or unknown: keep name, guess dt/tag
        m = re.match(r"^(f32|f16|bf16|s8|u8|s32)_(.+)$", parts[-1])
        return parts[0], MemArg(m[1], tag=m[2]) if m else MemArg(None, tag=parts[-1] or None)
    return None


def _split_lines(text: str) -> list[str]:
    """Split text into lines, also where a verbose line was glued onto unterminated output."""
    out: list[str] = []
    for line in text.splitlines():
        m = _MARKER_RE.search(line)
        if m and m.start() > 0:
            out += [line[: m.start()], line[m.start() :]]
        else:
            out.append(line)
    return out


def parse_verbose(text: str) -> list[Primitive]:
    """All exec and create primitives in ``text``, in order; everything else is skipped."""
    return [p for p in map(parse_line, _split_lines(text)) if isinstance(p, Primitive)]


def parse_info(text: str) -> dict[str, Any]:
    """Version, commit, ISA, runtime and thread count from info lines, when present."""
    info: dict[str, Any] = {}
    for line in _split_lines(text):
        rec = parse_line(line)
        if isinstance(rec, InfoLine):
            _read_info(rec.text, info)
    return info


def _read_info(text: str, info: dict[str, Any]) -> None:
    m = re.search(r"(?:oneDNN|DNNL|MKL-DNN)\s+v?(\d+\.\d+(?:\.\d+)?)", text)
    if m:
        info["version"] = m[1]
        c = re.search(r"commit\s+([0-9a-f]+)", text)
        if c:
            info["commit"] = c[1]
    m = re.search(r"isa:(.+)$", text) or re.search(r"Detected ISA is (.+)$", text)
    if m:
        info["isa"] = m[1].strip()
    if not text.startswith("gpu,"):  # the gpu runtime ("none") must not overwrite the cpu one
        m = re.search(r"runtime:(\w+)", text)
        if m:
            info["runtime"] = m[1]
    m = re.search(r"nthr:(\d+)", text)
    if m:
        info["nthr"] = int(m[1])


def parse_trace(text: str) -> Trace:
    """Build a Trace from captured text (or a saved verbose log); pure, no process state."""
    lines = _split_lines(text)
    prims = parse_verbose(text)
    return Trace(
        primitives=[p for p in prims if p.kind == "exec"],
        creates=[p for p in prims if p.kind == "create"],
        info=parse_info(text),
        other_lines=[ln for ln in lines if ln.strip() and not is_verbose_line(ln)],
        summary=TraceSummary.from_primitives(prims),
    )
