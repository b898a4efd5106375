"""benchdnn-style conv batch files: one descriptor per line, run one after another like a sweep.

Format (as benchdnn's `--batch=` files): `#` starts a comment (whole line or trailing), blank lines are
skipped, `n"name"` at the end of a descriptor names it (kept in the CSV `name` column). Option lines
work as in benchdnn, applying to the problems after them until `--reset`:
    --cfg=... / --dt=...   data type (f32, bf16, f16; others make the following lines skipped rows)
    --mb=N                 minibatch override (0: the descriptor's own mb)
    --dir=FWD_B|FWD_I|FWD_D  bias on / on / off (backward directions are not measured: skipped rows)
    --reset                back to the defaults
    --batch=FILE           the lines of FILE (relative to this file's folder, or a shipped batch), inline
Every other option (--stag, --strides, --attr-..., ...) is ignored and reported once. A line that does not
parse becomes a skipped point carrying its line number and the reason; the other lines still run.
A CLI --mb, --dtype or --no-bias overrides the file.

Shipped batches live in explorer.resources/batches/*.txt and can be named bare (`resnet_50`).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from explorer.core.errors import InputError, SpecError
from explorer.core.files import read_text
from explorer.core.problem.spec import ConvSpec, parse_descriptor, strip_comment
from explorer.core.problem.sweep_plan import SweepPoint

_WORD = re.compile(r'(?:[^\s"]+|"[^"]*")+')
_NAME_AFTER_SPACE = re.compile(r'(?<=\S)\s+(n"[^"]*")')
_FWD_BIAS = {"FWD_B": True, "FWD_I": True, "FWD_D": False}


@dataclass
class Batch:
    """A parsed batch file: one SweepPoint per problem (skipped ones carry `error` and `line`)."""

    source: str
    points: list[SweepPoint]
    ignored: dict[str, list[int]] = field(default_factory=dict)  # option -> lines where it was ignored
    sources: list[str] = field(default_factory=list)  # per point: the file it came from (nested --batch=)
    bad: list[int] = field(default_factory=list)  # indexes of points whose line does not parse (bad input)

    def source_of(self, point) -> str:
        return self.sources[point.index] if point.index < len(self.sources) else self.source

    def bad_lines_sentence(self) -> str:
        """One sentence naming the first bad line (file and line) and how many there are ('' when none)."""
        if not self.bad:
            return ""
        first = self.points[self.bad[0]]
        more = f" ({len(self.bad)} bad lines in all)" if len(self.bad) > 1 else ""
        return f"{self.source_of(first)} {first.error.rstrip('.')}{more}."

    @property
    def skipped(self) -> list[SweepPoint]:
        return [p for p in self.points if p.skipped]

    def ignored_summary(self) -> str:
        """One sentence naming each ignored option once, with its lines ('' when none)."""
        if not self.ignored:
            return ""
        parts = []
        for opt, lines in self.ignored.items():
            where = f"line {lines[0]}" if len(lines) == 1 else f"lines {', '.join(map(str, lines[:5]))}" + (
                ", ..." if len(lines) > 5 else "")
            parts.append(f"{opt} ({where})")
        return f"ignored benchdnn options that do not apply here: {'; '.join(parts)}."


def shipped_dir():
    return resources.files("explorer.resources") / "batches"


def shipped_batches() -> list[str]:
    """Bare names of the batch files that ship with the app (resnet_50, quick, ...)."""
    try:
        return sorted(p.name[:-4] for p in shipped_dir().iterdir() if p.name.endswith(".txt"))
    except (OSError, ModuleNotFoundError):
        return []


def read_batch_text(name_or_path: str) -> tuple[str, str]:
    """(source label, text) of a batch file path or a shipped batch's bare name. Raises InputError."""
    p = Path(name_or_path)
    if not p.exists() and "/" not in name_or_path and "\\" not in name_or_path:
        bare = name_or_path.removeprefix("shapes_")  # oneDNN's own file names work too
        cand = shipped_dir() / (bare if bare.endswith(".txt") else f"{bare}.txt")
        if cand.is_file():
            return name_or_path.removesuffix(".txt"), cand.read_text(encoding="utf-8")
        names = ", ".join(shipped_batches())
        raise InputError(f"cannot open batch {name_or_path!r}: no such file, and no shipped batch of that name "
                         f"(shipped: {names}).", "batch")
    return str(p), read_text(p, "batch")


def _dtype_of(raw: str) -> str | None:
    """f32/bf16/f16 from a --cfg/--dt value (bf16bf16f32, f32:f32:f32, ...); None if not one of those."""
    for dt in ("bf16", "f16", "f32"):
        if raw.lower().startswith(dt):
            return dt
    return None


MAX_NESTING = 8


def _nested_text(name: str, base_dir: Path | None) -> tuple[str, str, Path | None]:
    """(source, text, folder) of a --batch= file: relative to the including file's folder, else shipped."""
    p = Path(name)
    cands = [p] if p.is_absolute() else ([base_dir / p] if base_dir else []) + [p]
    for c in cands:
        if c.is_file():
            return str(c), read_text(c, "batch"), c.parent
    bare = p.name.removeprefix("shapes_")
    source, text = read_batch_text(bare)
    return source, text, None


def parse_batch(text: str, source: str = "", *, mb: int | None = None, dtype: str | None = None,
                bias: bool | None = None, base_dir: Path | None = None, sizes: bool = True) -> Batch:
    """Parse batch text into points. mb/dtype/bias (from the CLI) override the file's options.
    base_dir: the folder that nested --batch= names are relative to (the file's own folder).
    sizes=False: no allocation limits (listing mode)."""
    if mb is not None and (not isinstance(mb, int) or isinstance(mb, bool) or mb < 1):
        raise InputError(f"--mb must be a positive whole number, got {mb!r}.", "mb")
    points: list[SweepPoint] = []
    sources: list[str] = []
    bad: list[int] = []
    ignored: dict[str, list[int]] = {}
    state: dict = {}
    top = os.path.realpath(source) if source and Path(source).is_file() else source
    _parse_into(text, source, base_dir, state, points, sources, bad, ignored, mb, dtype, bias, (top,), sizes)
    if not any(p.spec is not None or p.text for p in points):
        raise InputError(f"batch {source or 'text'!r} has no convolution lines.", "batch")
    return Batch(source, points, ignored, sources, bad)


def _parse_into(text, source, base_dir, state, points, sources, bad, ignored, mb, dtype, bias, chain, sizes) -> None:
    def skip(lineno: int, text: str, reason: str, fld: str | None = None, is_bad: bool = True) -> None:
        if is_bad:
            bad.append(len(points))
        sources.append(source)
        points.append(SweepPoint(len(points), {}, None, None, f"line {lineno}: {reason}", fld, lineno, text))

    for lineno, raw in enumerate(text.splitlines(), start=1):
        body = _NAME_AFTER_SPACE.sub(r"\1", strip_comment(raw).strip())  # `... n"x"` names the problem before it
        if not body:
            continue
        for word in _WORD.findall(body):
            if word.startswith("--"):
                key, _, value = word[2:].partition("=")
                key = key.lower()
                if key == "reset":
                    state = {}
                elif key in ("cfg", "dt"):
                    dt = _dtype_of(value)
                    state["dtype"] = dt if dt else f"!{value} (--{key})"
                elif key == "mb":
                    if not value.isdigit():
                        skip(lineno, word, f"--mb={value} is not a whole number", "mb")
                        continue
                    state["mb"] = int(value) or None
                elif key == "dir":
                    d = value.upper()
                    state["bias"] = _FWD_BIAS.get(d, f"!{d}")
                elif key == "batch":
                    try:
                        sub_source, sub_text, sub_dir = _nested_text(value, base_dir)
                    except InputError as e:
                        skip(lineno, word, str(e).rstrip("."), "batch")
                        continue
                    key_of = os.path.realpath(sub_source) if sub_dir is not None else sub_source
                    if len(chain) > MAX_NESTING or key_of in chain:
                        skip(lineno, word, f"--batch={value} nests too deep or includes itself", "batch")
                        continue
                    _parse_into(sub_text, sub_source, sub_dir, state, points, sources, bad, ignored, mb, dtype,
                                bias, chain + (key_of,), sizes)
                else:
                    ignored.setdefault(f"--{key}", []).append(lineno)
                continue
            point = _problem(word, lineno, state, mb, dtype, bias, sizes)
            point.index = len(points)
            if point.spec is None and point.error_field not in ("dtype", "dir"):
                bad.append(point.index)
            sources.append(source)
            points.append(point)


def _problem(word: str, lineno: int, state: dict, mb, dtype, bias, sizes: bool = True) -> SweepPoint:
    def skipped(reason: str, fld: str | None) -> SweepPoint:
        return SweepPoint(0, {}, None, None, f"line {lineno}: {reason}", fld, lineno, word)

    file_dtype = state.get("dtype")
    if dtype is None and isinstance(file_dtype, str) and file_dtype.startswith("!"):
        return skipped(f"data type {file_dtype[1:]} is not supported (only f32, bf16 and f16 are).", "dtype")
    file_bias = state.get("bias")
    if bias is None and isinstance(file_bias, str):
        return skipped(f"direction {file_bias[1:]} is not measured (only forward: FWD_B, FWD_I, FWD_D).", "dir")
    try:
        spec: ConvSpec = parse_descriptor(word, dtype=dtype or file_dtype, bias=bias if bias is not None else file_bias,
                                          sizes=sizes)
        new_mb = mb or state.get("mb")
        if new_mb:
            spec = spec.replace(mb=new_mb).validate(sizes)
    except SpecError as e:
        return skipped(str(e), e.field)
    bad_count = layer_count_error(spec.name)
    if bad_count:
        return skipped(bad_count, "name")
    return SweepPoint(0, {}, spec, None, "", None, lineno, word)


def load_batch(name_or_path: str, *, mb: int | None = None, dtype: str | None = None,
               bias: bool | None = None, sizes: bool = True) -> Batch:
    """Read and parse a batch file (a path, or the bare name of a shipped batch)."""
    source, text = read_batch_text(name_or_path)
    p = Path(name_or_path)
    return parse_batch(text, source, mb=mb, dtype=dtype, bias=bias, base_dir=p.parent if p.is_file() else None,
                       sizes=sizes)


# ---- "does it help my network?": totals over a batch ---------------------------------------------------
_COUNT = re.compile(r"\*(\d+)\s*$")


MAX_LAYER_COUNT = 100_000
_COUNT_TEXT = re.compile(r"\*([^*\s]*)\s*$")


def layer_count_error(name: str | None) -> str:
    """The sentence for a name whose `*N` is not a whole number from 1 to MAX_LAYER_COUNT ('' when fine)."""
    m = _COUNT_TEXT.search(name or "")
    if not m:
        return ""
    n = m.group(1)
    if n.isdigit() and 1 <= int(n) <= MAX_LAYER_COUNT:
        return ""
    shown = n if len(n) <= 20 else n[:17] + "..."
    return (f"the layer count *{shown} at the end of the name is not a whole number from 1 to "
            f"{MAX_LAYER_COUNT:,} (how many times the shape occurs in the net).")


def layer_count(name: str | None) -> int:
    """How many times a batch line's shape occurs in the net: the `*N` at the end of its name (else 1)."""
    m = _COUNT.search(name or "")
    return max(1, int(m.group(1))) if m else 1


@dataclass
class PathTotal:
    """One path over a whole batch, each layer weighted by its `*N` count."""

    path: str
    layers: int  # layers (lines) this path measured ok
    instances: int  # the same, weighted by *N
    total_ms: float  # sum of count x median over those layers
    speedup: float | None = None  # baseline total / this path's total, over the trusted layers both measured
    geomean: float | None = None  # count-weighted geometric mean of baseline/path per layer (>1: faster)
    common: int = 0  # trusted layers both this path and the baseline measured (neither row noisy)
    noisy: int = 0  # layers in total_ms whose row is noisy: the total is then marked `~`
    uncertain: int = 0  # layers both measured but left out of speedup and geomean: either row is noisy
    # the speedup stands on the very rows of this path's and the baseline's totals (every one trusted and
    # measured by both); else it is a ratio over `common` layers only, never to be read as the network's
    same_rows: bool = False

    def ratio_words(self, layers: int) -> str:
        """The speedup and geomean in words that say what they stand on (the CLI's line and the window's):
        "x total" only over the totals' own rows, else "over N of M layers only ...: not the network's verdict"."""
        if self.speedup is None:
            return f"no trusted ratio: the {self.uncertain} layers both ran have a noisy row" if self.uncertain else ""
        figures = f"{_x(self.speedup)} total, geomean {_x(self.geomean)}"
        if self.same_rows:
            return figures
        why = f"the trusted ones both ran; {self.uncertain} noisy left out" if self.uncertain else "the ones both ran"
        return (f"{_x(self.speedup)}, geomean {_x(self.geomean)}, on only {self.common} of {layers} layers ({why}): "
                "not the network's verdict")


@dataclass
class BatchSummary:
    baseline: str
    layers: int  # distinct layers (lines) with any row
    instances: int  # layers weighted by *N
    totals: dict = field(default_factory=dict)  # path -> PathTotal, in first-seen order

    def lines(self) -> list[str]:
        """One line per path: its weighted total and, against the baseline, total speedup and geomean."""
        out = [f"network total, each layer x its *N count ({self.layers} layers, {self.instances} in the net); "
               f"speedup = {self.baseline} / path, above 1 is faster:"]
        for t in self.totals.values():
            total = ("~" if t.noisy else "") + format(t.total_ms, ".4g")  # `~`: noisy rows are in this sum
            part = f"  {t.path:18s} {total:>10s} ms over {t.layers}/{self.layers} layers"
            if t.noisy:
                part += f" ({t.noisy} noisy)"
            if t.path == self.baseline:
                part += "  (baseline)"
            elif t.speedup is not None or t.uncertain:
                part += f"  {t.ratio_words(self.layers)}"
            out.append(part.rstrip())
        return out


def _x(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:.2f}x" if v >= 0.095 else f"{v:.2g}x"


def _get(r, k):
    return r.get(k) if isinstance(r, dict) else (getattr(r.spec, k, None) if k in ("desc", "name", "dtype") and
                                                 getattr(r, "spec", None) is not None else getattr(r, k, None))


def batch_summary(rows, baseline: str = "dense") -> BatchSummary:
    """Totals of a batch's rows (Results or CSV row dicts) per path, each layer weighted by its *N count.

    A layer is a (name, desc, dtype, threads, problem_index) group: rows that carry their problem_index (the
    CLI's, a resumed CSV's) are grouped by it; a shape listed twice counts twice (without problem_index, the
    k-th row of a path for a key belongs to the key's k-th occurrence). Only `ok` rows with a positive median count.
    A ratio on a noisy row is never a finding: speedup and geomean leave out every layer where this path's
    or the baseline's row is noisy (`uncertain` counts them); a total that sums noisy rows is marked
    (`noisy` counts them), as a noisy row's own time is shown marked.
    """
    seen: dict[tuple, int] = {}  # (layer key, path) -> occurrences so far
    layers: dict[tuple, int] = {}  # (layer key, occurrence) -> count
    med: dict[tuple, dict[str, float]] = {}  # (layer key, occurrence) -> path -> median
    noisy: set[tuple] = set()  # (layer, path) whose row is noisy
    order: list[str] = []
    for r in rows:
        path = _get(r, "path") or ""
        index = _get(r, "problem_index")
        key = (_get(r, "name") or "", _get(r, "desc") or "", _get(r, "dtype") or "", str(_get(r, "threads") or ""),
               "" if index in (None, "") else str(int(float(index))))
        if not path:  # a skipped line: a layer without rows
            layers.setdefault((key, 0), layer_count(key[0]))
            continue
        k = seen.get((key, path), 0)
        seen[(key, path)] = k + 1
        layer = (key, k)
        layers.setdefault(layer, layer_count(key[0]))
        try:
            m = float(_get(r, "median_ms") or 0.0)  # a CSV row holds text
        except (TypeError, ValueError):
            m = 0.0
        if _get(r, "status") == "ok" and m > 0 and math.isfinite(m):
            med.setdefault(layer, {})[path] = float(m)
            if (_get(r, "quality") or "") == "noisy":  # a Result's or a CSV row's quality column
                noisy.add((layer, path))
            if path not in order:
                order.append(path)
    out = BatchSummary(baseline, len(layers), sum(layers.values()))
    for path in ([baseline] if baseline in order else []) + [p for p in order if p != baseline]:
        mine = {lay: ms[path] for lay, ms in med.items() if path in ms}
        t = PathTotal(path, len(mine), sum(layers[lay] for lay in mine), sum(layers[lay] * v for lay, v in mine.items()))
        t.noisy = sum(1 for lay in mine if (lay, path) in noisy)
        measured = [lay for lay in mine if baseline in med[lay]]
        both = [lay for lay in measured if (lay, path) not in noisy and (lay, baseline) not in noisy]
        if path != baseline:
            t.uncertain = len(measured) - len(both)
        if path != baseline and both:
            w = sum(layers[lay] for lay in both)
            t.common = len(both)
            t.speedup = sum(layers[lay] * med[lay][baseline] for lay in both) / sum(layers[lay] * mine[lay] for lay in both)
            t.geomean = math.exp(sum(layers[lay] * math.log(med[lay][baseline] / mine[lay]) for lay in both) / w)
            base_layers = sum(1 for ms in med.values() if baseline in ms)
            t.same_rows = t.common == len(mine) == base_layers  # the ratio of the two totals shown beside it
        out.totals[path] = t
    return out
