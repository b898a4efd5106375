"""Listing mode, like benchdnn's --mode=L: every problem of a batch file (or one descriptor) with its
canonical descriptor, dims, left and right pads, output sizes and op counts, without running anything.

A refused line gives its file, line number and one sentence. Options that benchdnn applies to the
following lines are judged by batch.parse_batch with the one option rule (benchdnn_options.py);
a refused problem is listed with the sentence naming its word.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.core.problem.batch import Batch
from explorer.core.problem.spec import ConvSpec


@dataclass
class Entry:
    source: str
    line: int | None
    spec: ConvSpec | None = None
    text: str = ""
    error: str = ""
    bad: bool = False  # the line itself is invalid (not merely a data type or direction not measured)

    def as_dict(self) -> dict:
        if self.spec is None:
            return {"source": self.source, "line": self.line, "text": self.text, "error": self.error,
                    "bad": self.bad}
        return {"source": self.source, "line": self.line, **spec_facts(self.spec)}


def spec_facts(s: ConvSpec) -> dict:
    """The listed facts of one problem (JSON-ready)."""
    dims = s.dims
    return {
        "desc": s.desc,
        "benchdnn": s.benchdnn_descriptor(),
        "name": s.name,
        "ndims": s.ndims,
        "mb": s.mb, "g": s.g, "ic": s.ic, "oc": s.oc,
        "input": [getattr(s, f"i{x}") for x in dims],
        "kernel": [getattr(s, f"k{x}") for x in dims],
        "stride": [getattr(s, f"s{x}") for x in dims],
        "dilation": [getattr(s, f"d{x}") for x in dims],
        "pad_l": [getattr(s, f"p{x}") for x in dims],
        "pad_r": [s.pad_r(x) for x in dims],
        "output": [s.out(x) for x in dims],
        "dims": "".join(dims),
        "ops": s.ops,
        "exact_ops": s.exact_ops,
        "ops_note": s.ops_note(),
        "torch_pad": list(s.torch_padding()[1]) if s.asymmetric else None,
        "dtype": s.dtype,
        "bias": s.bias,
        "direction": s.direction,
        # the line's other honoured words, as the row's columns name them (empty: not on the line)
        "post_ops": s.post_ops,
        "io_tag": s.io_tag,
        "scales": s.scales,
        "zero_points": s.zero_points,
    }


def honoured_words(s: ConvSpec) -> str:
    """The line's honoured words beyond the shape, short, for a table's problem cell: 'BWD_D', 'bf16 relu',
    'u8s8u8 scales=src:common:0.5'; '' for the plain f32 forward conv."""
    out = [s.direction] if s.backward else []
    out += [s.dtype] if s.dtype != "f32" else []
    out += [w for w in (s.post_ops, s.io_tag) if w]
    out += [f"{k}={getattr(s, k)}" for k in ("scales", "zero_points") if getattr(s, k)]
    return " ".join(out)


def _words(f: dict) -> str:
    """What the line asks beyond the shape, as the row's columns will say it: every honoured word shown."""
    out = []
    if f["dtype"] != "f32":
        out.append(f"dtype {f['dtype']}")
    for key in ("post_ops", "io_tag", "scales", "zero_points"):
        if f[key]:
            out.append(f"{key} {f[key]}")
    return "".join(f"  {w}" for w in out)


def list_batch(batch: Batch) -> list[Entry]:
    bad = set(batch.bad)
    out = []
    for p in batch.points:
        src = batch.source_of(p)
        if p.spec is None:
            out.append(Entry(src, p.line, None, p.text, p.error, p.index in bad))
        else:
            out.append(Entry(src, p.line, p.spec, p.text))
    return out


def _x(values) -> str:
    return "x".join(map(str, values))


def format_entry(e: Entry) -> str:
    where = f"line {e.line}" if e.line is not None else "-"
    if e.spec is None:
        reason = e.error.split(": ", 1)[1] if e.error.startswith("line ") and ": " in e.error else e.error
        return f"{where}  refused: {reason}"
    f = spec_facts(e.spec)
    ops = f"ops {f['ops']:,}"
    if f["exact_ops"] != f["ops"]:
        ops += f" (exact {f['exact_ops']:,}: benchdnn's shortcut counts padding taps)"
    pads = f"pad {_x(f['pad_l'])}"
    if f["pad_r"] != f["pad_l"]:
        pads += f" right {_x(f['pad_r'])}"
    return (f"{where}  {e.spec.descriptor()}  {e.spec.ndims - 2}-D {f['dims']}  in {_x(f['input'])}"
            f"  k {_x(f['kernel'])}  s {_x(f['stride'])}  {pads}  out {_x(f['output'])}  {ops}"
            + (f"  {f['direction']} (the backward alone)" if e.spec.backward else "") + _words(f))


def summary(entries: list[Entry]) -> dict:
    n = len(entries)
    ok = sum(e.spec is not None for e in entries)
    return {"problems": n, "accepted": ok, "refused": n - ok, "bad": sum(e.bad for e in entries),
            "ops_differ": sum(1 for e in entries if e.spec is not None and e.spec.ops != e.spec.exact_ops)}
