"""benchdnn-style conv batch files: one descriptor per line, run one after another like a sweep.

Format (as benchdnn's `--batch=` files): `#` starts a comment (whole line or trailing), blank lines are
skipped, `n"name"` at the end of a descriptor names it (kept in the CSV `name` column). Option words work
as in benchdnn: each applies to the problems after it (until the same option is set again or `--reset`),
a comma list (`--dt=f32,bf16`, `--dir=FWD_B,BWD_D`) makes one problem per value and per descriptor, and
`--batch=FILE` reads FILE's lines inline (relative to this file's folder, or a shipped batch), sharing the
settings both ways. Every problem is then judged by the one rule (benchdnn_options.option_refusal): honoured
(its dtype, direction's bias, mb are what is timed) or a `refused` point naming the word, its line and why;
`--match=REGEX` leaves out the problems whose benchdnn line does not match, as benchdnn does (counted).
A line that does not parse is a skipped point carrying its line number and the reason (bad input); the
other lines still run. A CLI --mb or --dtype replaces the file's; --no-bias turns the bias off.

Shipped batches live in explorer.resources/batches/*.txt and can be named bare (`resnet_50`).
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from explorer.core.errors import InputError, SpecError
from explorer.core.files import read_text
from explorer.core.problem.benchdnn_options import option_key, split_values, uniform_dtype
from explorer.core.problem.benchdnn_options import io_tag
from explorer.core.problem.int8_config import INT8_DTYPES, int8_dtype
from explorer.core.problem.post_ops import canonical as canonical_post_ops
from explorer.core.problem.spec import (
    ConvSpec,
    combination_refusal,
    has_bias,
    option_refusal,
    parse_descriptor,
    strip_comment,
)
from explorer.core.problem.sweep_plan import SweepPoint

_WORD = re.compile(r'(?:[^\s"]+|"[^"]*")+')
_NAME_AFTER_SPACE = re.compile(r'(?<=\S)\s+(n"[^"]*")')


@dataclass
class Batch:
    """A parsed batch file: one SweepPoint per problem (skipped ones carry `error` and `line`)."""

    source: str
    points: list[SweepPoint]
    sources: list[str] = field(default_factory=list)  # per point: the file it came from (nested --batch=)
    bad: list[int] = field(default_factory=list)  # indexes of points whose line does not parse (bad input)
    filtered: int = 0  # problems left out by --match (not asked for, as in benchdnn)

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

    @property
    def refused(self) -> list[SweepPoint]:
        return [p for p in self.points if p.refused]

    def refused_lines(self, most: int = 5) -> list[str]:
        """One line per refusal reason: how many problems, the first lines (file:line) and the sentence."""
        groups: dict[str, list[str]] = {}
        for p in self.refused:
            reason = p.error.split(": ", 1)[1] if p.error.startswith("line ") else p.error
            groups.setdefault(reason, []).append(f"{self.source_of(p)}:{p.line}")
        out = []
        for reason, where in groups.items():
            firsts = list(dict.fromkeys(where))
            shown = ", ".join(firsts[:most]) + (", ..." if len(firsts) > most else "")
            out.append(f"  refused {len(where)} problem{'s' if len(where) != 1 else ''} ({shown}): {reason}")
        return out

    def refused_sentence(self) -> str:
        """One sentence saying how many problems were refused, naming the first ('' when none)."""
        ref = self.refused
        if not ref:
            return ""
        more = f" ({len(ref)} refused problems in all, each a `refused` row)" if len(ref) > 1 else " (a `refused` row)"
        return f"{self.source_of(ref[0])} {ref[0].error.rstrip('.')}{more}."


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


@dataclass
class _Reader:
    """What the lines of a batch (and the files it includes) add to: the points and the settings so far."""

    mb: int | None
    dtype: str | None
    bias: bool | None
    sizes: bool
    points: list = field(default_factory=list)
    sources: list = field(default_factory=list)
    bad: list = field(default_factory=list)
    filtered: int = 0
    # option -> (its words, one per value; source; line): benchdnn's settings, shared with included files
    state: dict = field(default_factory=dict)
    match: tuple | None = None  # (compiled REGEX, word, source, line)

    def add(self, source: str, point: SweepPoint, is_bad: bool = False) -> None:
        point.index = len(self.points)
        if is_bad:
            self.bad.append(point.index)
        self.sources.append(source)
        self.points.append(point)


def parse_batch(text: str, source: str = "", *, mb: int | None = None, dtype: str | None = None,
                bias: bool | None = None, base_dir: Path | None = None, sizes: bool = True) -> Batch:
    """Parse batch text into points. mb/dtype/bias (from the CLI) override the file's options.
    base_dir: the folder that nested --batch= names are relative to (the file's own folder).
    sizes=False: no allocation limits (listing mode)."""
    if mb is not None and (not isinstance(mb, int) or isinstance(mb, bool) or mb < 1):
        raise InputError(f"--mb must be a positive whole number, got {mb!r}.", "mb")
    r = _Reader(mb, dtype, bias, sizes)
    top = os.path.realpath(source) if source and Path(source).is_file() else source
    _parse_into(r, text, source, base_dir, (top,))
    if not r.points and not r.filtered:
        raise InputError(f"batch {source or 'text'!r} has no convolution lines.", "batch")
    return Batch(source, r.points, r.sources, r.bad, r.filtered)


def _parse_into(r: _Reader, text: str, source: str, base_dir: Path | None, chain: tuple) -> None:
    def skip(lineno: int, text: str, reason: str, fld: str | None = None) -> None:
        r.add(source, SweepPoint(0, {}, None, None, f"line {lineno}: {reason}", fld, lineno, text), is_bad=True)

    for lineno, body in logical_lines(text):
        for word in _WORD.findall(body):
            if not word.startswith("--"):
                _problems(r, word, source, lineno)
                continue
            key = option_key(word)
            value = word.partition("=")[2]
            if key == "reset":
                r.state.clear()  # in place: an included file's --reset resets the includer too, as in benchdnn
                r.match = None
            elif key == "mb" and not all(v.isdigit() for v in value.split(",") if v):
                skip(lineno, word, f"--mb={value} is not a whole number", "mb")
            elif key == "match":
                try:
                    r.match = (re.compile(value), word, source, lineno) if value else None
                except re.error as e:
                    skip(lineno, word, f"{word} is not a regular expression ({e})", "match")
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
                _parse_into(r, sub_text, sub_source, sub_dir, chain + (key_of,))
            else:
                r.state[key] = (split_values(word), source, lineno)


def logical_lines(text: str):
    """(first line number, text) of each non-empty line, comments dropped and benchdnn's shell-style line
    breaks joined: a word ending in `\\` continues with the next word, with no space (common.cpp `batch`)."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        start, body = i + 1, strip_comment(lines[i]).strip()
        while body.endswith("\\") and i + 1 < len(lines):
            i += 1
            body = body[:-1].rstrip() + strip_comment(lines[i]).strip()
        i += 1
        body = _NAME_AFTER_SPACE.sub(r"\1", body.removesuffix("\\"))  # `... n"x"` names the problem before it
        if body:
            yield start, body


def _where(source: str, line: int, here: tuple) -> str:
    """` (set on line 8)` when an option came from another line than the problem's ('' on the same line)."""
    if (source, line) == here:
        return ""
    return f" (set on line {line})" if source == here[0] else f" (set in {source} line {line})"


def _problems(r: _Reader, word: str, source: str, lineno: int) -> None:
    """The problems one descriptor stands for: one per combination of the list options' values."""
    def point(error: str = "", fld: str | None = None, spec: ConvSpec | None = None, refused: bool = False):
        return SweepPoint(0, {}, spec, None, f"line {lineno}: {error}" if error else "", fld, lineno, word,
                          refused=refused)

    base, err = _shape(word, r.sizes)
    if err is not None:
        r.add(source, point(str(err), err.field), is_bad=True)
        return
    bad_count = layer_count_error(base.name)
    if bad_count:
        r.add(source, point(bad_count, "name"), is_bad=True)
        return
    here = (source, lineno)
    overridden = ({"dt"} if r.dtype else set()) | ({"mb"} if r.mb else set())  # the CLI's word replaces the file's
    choices = []  # per setting: (key, word, refusal sentence or '') for each of its values
    for key, (words, src, ln) in r.state.items():
        opts = []
        for w in words:
            why = "" if key in overridden else _refusal(w)
            if why:
                shown, _, rest = why.partition(": ")
                why = f"line {lineno}: {shown}{_where(src, ln, here)}: {rest}"
            opts.append((key, w, why))
        choices.append(opts)
    for combo in itertools.product(*choices):
        why = next((c[2] for c in combo if c[2]), "") or _float_quant_refusal(combo, r.dtype, lineno)
        value = {key: w.partition("=")[2] for key, w, _ in combo}
        tag = ""
        if not why:
            try:
                tag = io_tag(value.get("stag") or "any", value.get("dtag") or "any")
            except ValueError as e:  # --stag and --dtag ask for two layouts: a pair of words, refused together
                why = f"line {lineno}: {e}"
        if why and r.match is None:  # refused: no spec is built, nothing of it is timed
            r.add(source, SweepPoint(0, {}, None, None, why, "option", lineno, word, refused=True))
            continue
        dt = r.dtype or uniform_dtype(value.get("dt") or "f32") or int8_dtype(value.get("dt") or "") or "f32"
        quant = {"scales": value.get("attr-scales") or "", "zero_points": value.get("attr-zero-points") or ""}
        bias = r.bias if r.bias is not None else has_bias(value.get("dir") or "FWD_B", value.get("bia-dt") or "undef")
        new_mb = r.mb or int(value.get("mb") or 0) or None
        post = "" if why else canonical_post_ops(value.get("attr-post-ops") or "")
        direction = (value.get("dir") or "FWD_B").upper()  # a --dir=BWD_D line runs as that backward
        if not why:  # words honoured alone that no path times together: refused by name, as one word is
            tag_word = next((f"--{k}={value[k]}" for k in ("stag", "dtag") if (value.get(k) or "any") != "any"), "")
            clash = combination_refusal(direction, dt, post, tag, tag_word)
            why = f"line {lineno}: {clash}" if clash else ""
            if why and r.match is None:
                r.add(source, SweepPoint(0, {}, None, None, why, "option", lineno, word, refused=True))
                continue
            if why:  # --match decides below on the plain forward conv; the point is refused either way
                direction, post, tag = "FWD_B", "", ""
        try:
            spec = base.replace(dtype=dt, bias=bias, direction=direction, post_ops=post, io_tag=tag, **quant,
                                **({"mb": new_mb} if new_mb else {})).validate(r.sizes)
        except SpecError as e:
            r.add(source, point(str(e), e.field), is_bad=True)
            continue
        if r.match is not None and not r.match[0].search(_benchdnn_line(combo, spec)):
            r.filtered += 1  # not asked for: benchdnn leaves it out too
            continue
        if why:
            r.add(source, SweepPoint(0, {}, None, None, why, "option", lineno, word, refused=True))
        else:
            r.add(source, point(spec=spec))


@functools.lru_cache(maxsize=65536)
def _shape(word: str, sizes: bool) -> tuple[ConvSpec | None, SpecError | None]:
    """The descriptor's problem (f32, bias on) or its error: oneDNN's harness files include one shape file
    under many settings, so each descriptor is read once."""
    try:
        return parse_descriptor(word, dtype="f32", bias=True, sizes=sizes), None
    except SpecError as e:
        return None, e


@functools.lru_cache(maxsize=4096)
def _refusal(word: str) -> str:
    return option_refusal(word, in_batch=True)  # a corpus repeats its words a million times


def _benchdnn_line(combo: tuple, spec: ConvSpec) -> str:
    """The problem as benchdnn's --match sees it (prb_t::str): the options, then the descriptor as it prints it."""
    words = [w for key, w, _ in combo if key != "mb"]
    return " ".join(words + [spec.benchdnn_descriptor()])


def _float_quant_refusal(combo, cli_dtype: str | None, lineno: int) -> str:
    """A sentence when scales or zero points come with a float data type (they would be dropped), else ''."""
    value = {key: w.partition("=")[2] for key, w, _ in combo}
    dt = cli_dtype or int8_dtype(value.get("dt") or "") or "f32"
    for key in ("attr-scales", "attr-zero-points"):
        if value.get(key) and dt not in INT8_DTYPES:
            return (f"line {lineno}: --{key}={value[key][:30]}: scales and zero points apply to an int8 config "
                    f"(--cfg=u8s8u8 or --dt=u8:s8:u8); drop the word to time the float conv without it.")
    return ""


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
    if not re.fullmatch(r"[-+\d.eE]*", n):  # `*5&a1b2` in oneDNN's framework names is text, not a count
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
