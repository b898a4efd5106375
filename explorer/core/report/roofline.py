"""Roofline model of measured results: arithmetic intensity, ceilings from the measured peak, attainable.

Definitions (BYTES_DEFINITION and AI_DEFINITION are the texts a chart prints):
    ops           benchdnn's op count of the spec (2 * mb * oc * ic/g * kernel taps inside the input)
    bytes moved   (input + weight + output elements) * bytes per element of the spec dtype: each tensor's
                  logical size, read or written once; no bias, no padding of blocked layouts, no reorders
    AI            ops / bytes moved   (FLOP per byte)
    attainable    min(peak GFLOP/s, bandwidth GB/s * AI)
Ceilings come from machine.peak(): the fp32 (or bf16) large-matmul GFLOP/s and the large-copy bandwidth.
f32 results use the fp32 ceiling, bf16 results the bf16 one (fp32 when bf16 was not measured), and f16
results the fp32 one (no f16 peak is measured).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from explorer.core.problem.spec import ConvSpec
from explorer.core.report.results import row_is_noisy

BYTES_DEFINITION = (
    "bytes moved = (input + weight + output elements) x dtype size: each tensor's logical size read or "
    "written once (no bias, no layout padding, no reorders)"
)
TRAFFIC_DEFINITION = (
    "bytes moved by the path = its input, weight and output as the path stores them (blocked padding "
    "included), each read or written once, plus every reorder of one traced call reading its source and "
    "writing its destination (rows without a trace, such as sweep rows, count no reorders)"
)
BYTES_MODES = ("path", "logical")  # roofline(bytes_mode=...): what each point's bytes are
AI_DEFINITION = "arithmetic intensity = benchdnn op count / bytes moved (FLOP/byte)"
ATTAINABLE_DEFINITION = "attainable GFLOP/s = min(peak GFLOP/s, bandwidth GB/s x arithmetic intensity)"


def bytes_moved(spec: ConvSpec) -> int:
    """Logical bytes of input + weight + output in the spec dtype (see BYTES_DEFINITION)."""
    n = math.prod(spec.input_shape) + math.prod(spec.weight_shape) + math.prod(spec.output_shape)
    return n * spec.itemsize


def _tensor_bytes(tag: str | None, dims: list[int], dt: str | None) -> int:
    """A reorder side's bytes: as oneDNN lays `tag` out (padding included), else the logical size."""
    size = {"f32": 4, "bf16": 2, "f16": 2, "s8": 1, "u8": 1, "s32": 4}.get(dt or "f32", 4)
    if tag:
        from explorer.core.layout.tags import layout_from_tag

        try:
            return layout_from_tag(tag, dims, dt if dt in ("f32", "bf16", "f16") else "f32").nbytes
        except Exception:  # noqa: BLE001 - an unusual tag: its logical size
            pass
    return math.prod(dims) * size


def reorder_bytes(trace) -> tuple[int, int]:
    """(bytes, reorders) the reorders of one traced call move: each reads its source and writes its destination."""
    total = n = 0
    for p in trace or []:
        if getattr(p, "op", "") != "reorder" or getattr(p, "kind", "exec") != "exec":
            continue
        try:
            dims = [int(d) for d in p.problem.split("x")]
        except (AttributeError, ValueError):
            continue
        src, dst = p.args.get("src"), p.args.get("dst")
        total += _tensor_bytes(src.tag if src else None, dims, src.dt if src else None)
        total += _tensor_bytes(dst.tag if dst else None, dims, dst.dt if dst else None)
        n += 1
    return total, n


def path_bytes(r, spec: ConvSpec) -> int:
    """What the path really moves per call (TRAFFIC_DEFINITION); the logical bytes when nothing is known."""
    get = r.get if isinstance(r, dict) else (lambda k: getattr(r, k, None))
    stored = []
    for k in ("input_bytes", "weight_bytes", "output_bytes"):
        try:
            stored.append(int(float(get(k))))  # CSV rows hold text
        except (TypeError, ValueError):
            return bytes_moved(spec)
    return sum(stored) + reorder_bytes(getattr(r, "trace", None) if not isinstance(r, dict) else None)[0]


def arithmetic_intensity(spec: ConvSpec) -> float:
    """benchdnn op count / bytes moved, in FLOP per byte."""
    return spec.ops / bytes_moved(spec)


def attainable(ai: float, peak_gflops: float, bandwidth_gbs: float) -> float:
    """The roofline: min(peak, bandwidth * AI) in GFLOP/s."""
    return min(peak_gflops, bandwidth_gbs * ai)


@dataclass(frozen=True)
class Ceiling:
    """One roof: a flat compute ceiling meeting a bandwidth slope at the ridge point."""

    name: str  # "fp32" or "bf16"
    peak_gflops: float
    bandwidth_gbs: float

    @property
    def ridge_ai(self) -> float:
        """The AI where the bandwidth slope meets the peak: below it a kernel is memory bound."""
        return self.peak_gflops / self.bandwidth_gbs

    def attainable(self, ai: float) -> float:
        return attainable(ai, self.peak_gflops, self.bandwidth_gbs)

    def line(self, ai_min: float, ai_max: float) -> tuple[list[float], list[float]]:
        """Polyline of the roof over [ai_min, ai_max] (3 points, exact on log-log axes: the ridge is a corner)."""
        xs = [ai_min] + ([self.ridge_ai] if ai_min < self.ridge_ai < ai_max else []) + [ai_max]
        return xs, [self.attainable(x) for x in xs]


@dataclass
class RooflinePoint:
    desc: str
    name: str
    path: str
    dtype: str
    threads: int | None
    vary: str
    ops: int
    bytes: int
    ai: float
    gflops: float
    ceiling: str  # the Ceiling.name this point is judged against
    attainable: float
    peak_gflops: float  # the ceiling's flat part
    noisy: bool = False  # another program disturbed its timing: drawn crossed, its efficiency uncertain

    @property
    def efficiency(self) -> float:
        """Measured / attainable (1.0 = on the roof)."""
        return self.gflops / self.attainable if self.attainable > 0 else math.nan

    @property
    def bound(self) -> str:
        """'memory' left of the ridge, 'compute' right of it."""
        return "memory" if self.attainable < self.peak_gflops else "compute"


@dataclass
class Roofline:
    points: list[RooflinePoint]
    ceilings: list[Ceiling]
    definition: str = f"{AI_DEFINITION}; {BYTES_DEFINITION}; {ATTAINABLE_DEFINITION}"

    def ai_range(self, margin: float = 2.0) -> tuple[float, float]:
        """An x range covering every point and every ridge, widened by `margin` on both sides (log scale)."""
        xs = [p.ai for p in self.points] + [c.ridge_ai for c in self.ceilings]
        if not xs:
            return (0.1, 100.0)
        return (min(xs) / margin, max(xs) * margin)

    def lines(self) -> dict[str, tuple[list[float], list[float]]]:
        """Ceiling name -> (AI values, GFLOP/s values) of its roof, over ai_range()."""
        lo, hi = self.ai_range()
        return {c.name: c.line(lo, hi) for c in self.ceilings}


def ceilings_from_peak(peak) -> list[Ceiling]:
    """fp32 (and bf16 when measured) ceilings from a machine.Peak."""
    out = [Ceiling("fp32", peak.fp32_gflops, peak.bandwidth_gbs)]
    if peak.bf16_gflops:
        out.append(Ceiling("bf16", peak.bf16_gflops, peak.bandwidth_gbs))
    return out


def ceiling_for(dtype: str, ceilings: list[Ceiling]) -> Ceiling:
    by_name = {c.name: c for c in ceilings}
    if dtype == "bf16" and "bf16" in by_name:
        return by_name["bf16"]
    return by_name["fp32"]


def spec_from_row(row: dict) -> ConvSpec:
    """The ConvSpec of a CSV row (as read_csv returns it)."""
    keys = ("mb", "g", "ic", "ih", "iw", "oc", "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw")
    more = {k: int(row[k]) for k in ("id", "kd", "sd", "pd", "dd", "ndims", "pd_r", "ph_r", "pw_r")
            if row.get(k) is not None}  # newer CSVs: 1-D/3-D and right pads
    return ConvSpec(**{k: int(row[k]) for k in keys}, **more, bias=bool(row.get("bias", 1)),
                    dtype=row.get("dtype") or "f32", name=row.get("name") or "",
                    direction=row.get("direction") or "FWD_B",  # older CSVs: forward (FWD_D when no bias)
                    post_ops=row.get("post_ops") or "", io_tag=row.get("io_tag") or "")  # older CSVs have no column: the plain conv


def _placeable(gflops) -> bool:
    """A GFLOP/s a log-log chart can place: a finite number above 0 (a negative one from a hand-edited file
    gave the chart a NaN, and the window crashed drawing it)."""
    try:
        return math.isfinite(float(gflops)) and float(gflops) > 0
    except (TypeError, ValueError):
        return False


def roofline(results, peak=None, bytes_mode: str = "logical") -> Roofline:
    """Points (ok results with GFLOP/s) and ceilings for a roofline chart.

    `results` are runner Results or CSV row dicts. `peak` is a machine.Peak; None uses machine.peak()
    (cached; measured once, about 3 s, when missing). bytes_mode "logical" gives every path of a problem the
    same bytes (BYTES_DEFINITION); "path" counts what each path moves (TRAFFIC_DEFINITION), so paths that
    pad or reorder sit at a lower arithmetic intensity.
    """
    if peak is None:
        from explorer.core.measure import machine

        peak = machine.peak()
    ceilings = ceilings_from_peak(peak)
    points = []
    for r in results:
        if isinstance(r, dict):
            if r.get("status") != "ok" or not _placeable(r.get("gflops")) or r.get("mb") is None:
                continue
            spec, path, threads, vary, gflops = spec_from_row(r), r.get("path") or "", r.get("threads"), r.get("vary") or "", float(r["gflops"])
            noisy = row_is_noisy(r)
        else:
            if r.status != "ok" or not _placeable(r.gflops):
                continue
            spec, path, threads, vary, gflops = r.spec, r.path, r.threads, r.vary, float(r.gflops)
            noisy = (getattr(r, "quality", "") or "") == "noisy"
        c = ceiling_for(spec.dtype, ceilings)
        nbytes = path_bytes(r, spec) if bytes_mode == "path" else bytes_moved(spec)
        ai = spec.ops / nbytes if nbytes else arithmetic_intensity(spec)
        p = RooflinePoint(spec.desc, spec.name, path, spec.dtype, threads, vary, spec.ops, nbytes, ai,
                          gflops, c.name, c.attainable(ai), c.peak_gflops, noisy)
        points.append(p)
    return Roofline(points, ceilings)
