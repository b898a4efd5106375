"""Sweep plans: one spec over a list or range of values of one or two fields (the full grid for two).

`--vary` forms (FIELD is any spec field, dtype, dir, threads, allocator or isa):
    g=1,2,4,8        a list (items may also be ranges: mb=1,3,8:64:x2)
    mb=1:64:x2       a geometric range, ratio a whole number >= 2, end included when reached
    ic=16:256:+16    an arithmetic range (step >= 1); ic=16:32 steps by 1
    g=divisors       every g dividing both ic and oc (of each point, so it composes with ic/oc sweeps)
    dir=FWD_I,BWD_D  benchdnn's directions: each point's bias as benchdnn gives that --dir (FWD_B, BWD_WB: on)

Points follow benchdnn's rules: w-values copy h-values unless the descriptor gave them (varying ih on
mb2ic16ih28oc16kh3 keeps the image square), and oh/ow are always computed from ih/iw, so they follow.
An invalid combination is a `skipped` point (its SpecError sentence as the reason); the sweep goes on.

"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Iterable

from explorer.core.errors import InputError, SpecError
from explorer.core.problem.spec import (
    DEPTH_FIELDS,
    DIRECTIONS,
    DTYPES,
    MAX_FIELD_VALUE,
    SPEC_FIELDS,
    ConvSpec,
    has_bias,
    parse_descriptor,
    parse_dtype,
)

MAX_POINTS = 10_000
MAX_VARIES = 2
# Fields a sweep can vary: every settable spec field (oh/ow are computed), the dtype and the threads.
# `allocator` too: its points run in the measuring process of each setting (explorer.core.process.measuring).
# `isa` likewise: a measuring process per ISA cap (explorer.core.measure.isa).
VARY_FIELDS = tuple(f for f in SPEC_FIELDS if f not in ("oh", "ow")) + DEPTH_FIELDS + ("dtype", "dir", "threads",
                                                                                      "allocator", "isa")
_W_OF_H = {"ih": "iw", "kh": "kw", "sh": "sw", "ph": "pw", "dh": "dw"}
_MIN_VALUE = {f: (0 if f in ("ph", "pw", "dh", "dw") else 1) for f in VARY_FIELDS}
_INT = re.compile(r"^\d+$")


# ---- --vary parsing ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Vary:
    """One varied field: its values, or `divisors` (g only: resolved per point against ic and oc)."""

    field: str
    values: tuple = ()
    divisors: bool = False
    text: str = ""

    def values_for(self, spec: ConvSpec) -> tuple:
        if self.divisors:
            return tuple(common_divisors(spec.ic, spec.oc))
        return self.values

    def __str__(self) -> str:
        return self.text or f"{self.field}={','.join(map(str, self.values))}"


def _forms(f: str) -> str:
    if f == "dtype":
        return f"use a list such as dtype=f32,bf16 (choices: {', '.join(DTYPES)})"
    if f == "dir":
        return f"use a list such as dir=FWD_I,BWD_D,BWD_W (choices: {', '.join(DIRECTIONS)})"
    extra = ", or g=divisors (every g dividing ic and oc)" if f == "g" else ""
    return (f"use a list such as {f}=1,2,4, a geometric range such as {f}=1:64:x2 or an arithmetic range "
            f"such as {f}=16:256:+16{extra}")


def _bad(f: str, what: str) -> InputError:
    return InputError(f"--vary {f}: {what}; {_forms(f)}.", f)


def divisors(n: int) -> list[int]:
    """Every positive divisor of n, ascending."""
    if n < 1:
        return []
    small, large = [], []
    for d in range(1, math.isqrt(n) + 1):
        if n % d == 0:
            small.append(d)
            if d != n // d:
                large.append(n // d)
    return small + large[::-1]


def common_divisors(a: int, b: int) -> list[int]:
    """Every g that divides both a and b (the divisors of gcd(a, b))."""
    return divisors(math.gcd(a, b))


def _int_value(f: str, raw: str) -> int:
    raw = raw.strip()
    if not _INT.match(raw):
        if raw.startswith("-") and _INT.match(raw[1:]):
            raise _bad(f, f"{raw} is negative (the smallest allowed value is {_MIN_VALUE[f]})")
        raise _bad(f, f"{raw!r} is not a whole number")
    v = int(raw)
    if v < _MIN_VALUE[f]:
        raise _bad(f, f"{v} is below the smallest allowed value {_MIN_VALUE[f]}")
    if v > MAX_FIELD_VALUE:
        raise _bad(f, f"{v} is above the largest allowed value {MAX_FIELD_VALUE}")
    return v


def _range_values(f: str, item: str) -> list[int]:
    parts = item.split(":")
    if len(parts) not in (2, 3):
        raise _bad(f, f"{item!r} is not a range START:END:STEP")
    start, end = _int_value(f, parts[0]), _int_value(f, parts[1])
    step = parts[2].strip() if len(parts) == 3 else "+1"
    if end < start:
        raise _bad(f, f"the range {item!r} goes backwards (end {end} is below start {start})")
    if step[:1] in ("x", "*"):
        ratio = step[1:]
        if not _INT.match(ratio):
            raise _bad(f, f"the ratio {step!r} in {item!r} is not a whole number such as x2")
        r = int(ratio)
        if r < 2:
            raise _bad(f, f"the ratio {step!r} in {item!r} never grows (use x2 or more)")
        if start == 0:
            raise _bad(f, f"a geometric range cannot start at 0 ({item!r})")
        out, v = [], start
        while v <= end:
            out.append(v)
            v *= r
        return out
    s = step[1:] if step.startswith("+") else step
    if not _INT.match(s):
        raise _bad(f, f"the step {step!r} in {item!r} is not a whole number such as +16 or a ratio such as x2")
    s_val = int(s)
    if s_val == 0:
        raise _bad(f, f"the step in {item!r} is zero")
    count = (end - start) // s_val + 1
    if count > MAX_POINTS:
        raise _bad(f, f"{item!r} has {count} values, more than the limit of {MAX_POINTS}")
    return list(range(start, end + 1, s_val))


def parse_vary(text: str) -> Vary:
    """Parse one --vary FIELD=VALUES. Raises InputError (one sentence naming the field and the allowed forms)."""
    if not isinstance(text, str) or "=" not in text:
        raise InputError(
            f"--vary {text!r} has no '='; give FIELD=VALUES such as g=1,2,4 or mb=1:64:x2, where FIELD is one of "
            f"{', '.join(VARY_FIELDS)}.", "vary")
    f, raw = (s.strip() for s in text.split("=", 1))
    f = f.lower()
    if f not in VARY_FIELDS:
        hint = " (they follow ih/iw: oh and ow are computed)" if f in ("oh", "ow") else ""
        raise InputError(f"--vary cannot vary {f!r}{hint}; choose one of {', '.join(VARY_FIELDS)}.", f or "vary")
    if not raw or not raw.strip(", "):
        raise _bad(f, "the list of values is empty")
    if raw.lower() == "divisors":
        if f != "g":
            raise _bad(f, "'divisors' is only for g")
        return Vary("g", (), True, f"g={raw}")
    items = [s.strip() for s in raw.split(",")]
    if any(not s for s in items):
        raise _bad(f, f"{raw!r} has an empty item")
    values: list = []
    if f == "allocator":
        from explorer.core.measure.allocator import env_for

        for s in items:
            env_for(s)  # unknown, or not installed here: one sentence
            values.append(s)
    elif f == "isa":
        from explorer.core.measure.isa import validate as validate_isa

        values = [validate_isa(s) or "default" for s in items]  # unknown, or above this CPU: one sentence, up front
    elif f == "dtype":
        for s in items:
            try:
                values.append(parse_dtype(s))
            except SpecError:
                raise _bad(f, f"{s!r} is not a data type") from None
    elif f == "dir":
        for s in items:
            if s.upper() not in DIRECTIONS:
                raise _bad(f, f"{s!r} is not a benchdnn direction")
            values.append(s.upper())
    else:
        for s in items:
            values.extend(_range_values(f, s) if ":" in s else [_int_value(f, s)])
            if len(values) > MAX_POINTS:
                raise _bad(f, f"{raw!r} has more than {MAX_POINTS} values")
        if f == "threads":
            from explorer.core.measure.host import validate_threads

            for v in values:
                try:
                    validate_threads(v)
                except InputError as e:
                    raise _bad(f, str(e).rstrip(".")) from None
    unique = tuple(dict.fromkeys(values))  # repeated values would only repeat the same point
    return Vary(f, unique, False, f"{f}={raw}")


def parse_varies(texts: Iterable[str | Vary]) -> list[Vary]:
    """One or two --vary options; the same field twice or more than two fields is an InputError."""
    varies = [t if isinstance(t, Vary) else parse_vary(t) for t in texts]
    if not varies:
        raise InputError("a sweep needs --vary FIELD=VALUES, such as --vary g=1,2,4 or --vary mb=1:64:x2.", "vary")
    if len(varies) > MAX_VARIES:
        raise InputError(f"a sweep varies at most {MAX_VARIES} fields (the full grid of both); got {len(varies)}.", "vary")
    seen = set()
    for v in varies:
        if v.field in seen:
            raise InputError(f"--vary {v.field} is given twice; put all its values in one list.", v.field)
        seen.add(v.field)
    return varies


# ---- points -----------------------------------------------------------------------------------------
@dataclass
class SweepPoint:
    """One point of a sweep (or one line of a batch file). `error` set: skipped, not run."""

    index: int
    values: dict = field(default_factory=dict)  # varied field -> value, in --vary order
    spec: ConvSpec | None = None
    threads: int | None = None  # None: the run options' threads
    error: str = ""
    error_field: str | None = None
    line: int | None = None  # batch files: 1-based line number
    text: str = ""  # batch files: the problem as written
    allocator: str | None = None  # None: the run options' allocator
    isa: str | None = None  # None: the run options' ISA cap
    paths: tuple = ()  # set by --resume when some of its rows are there: only these paths run (else all)
    refused: bool = False  # batch files: its options are not honoured (a `refused` row, never timed)

    @property
    def skipped(self) -> bool:
        return bool(self.error)

    @property
    def label(self) -> str:
        """The CSV `vary` cell: "g=4" or "g=4;mb=8" (empty for batch lines)."""
        return ";".join(f"{k}={v}" for k, v in self.values.items())


def given_keys(desc: str) -> set[str]:
    """Keys written in a descriptor (so w-values given explicitly do not follow their h-values)."""
    from explorer.core.problem import spec as spec_mod

    problem = spec_mod._extract_problem(desc)
    return {m.group(3) for m in spec_mod._TOKEN.finditer(problem) if m.group(3)}


def _apply(base: ConvSpec, values: dict, given: set[str]) -> tuple[ConvSpec, int | None]:
    changes, threads = {}, None
    for f, v in values.items():
        if f == "threads":
            threads = v
        elif f in ("allocator", "isa"):
            continue  # not spec fields: SweepPoint.allocator, SweepPoint.isa
        elif f == "dir":
            changes["direction"], changes["bias"] = v, has_bias(v)  # benchdnn's bias of that --dir
        else:
            changes[f] = v
    for h, w in _W_OF_H.items():
        if h in changes and w not in changes and w not in given:
            changes[w] = changes[h]  # benchdnn: w copies h when the descriptor does not give it
    return base.replace(**changes), threads


def _check(spec: ConvSpec) -> tuple[str, str | None]:
    try:
        spec.validate()
    except SpecError as e:
        return str(e), e.field
    return "", None


def plan_sweep(base: ConvSpec | str, varies: Iterable[str | Vary], given: set[str] | None = None) -> list[SweepPoint]:
    """Every point of the sweep (the full grid for two fields), each validated; invalid ones carry `error`.

    `base` is a spec or a descriptor; with a spec, pass `given` (keys written in its descriptor) to keep
    explicitly given w-values fixed. Raises InputError for bad --vary text or more than MAX_POINTS points.
    """
    vs = parse_varies(varies)
    if isinstance(base, str):
        given = given_keys(base) if given is None else given
        base = parse_descriptor(base)
    given = given or set()
    # A `divisors` list depends on ic/oc of the point, so fixed lists are applied first.
    if not any(v.divisors for v in vs) and math.prod(len(v.values) for v in vs) > MAX_POINTS:
        raise InputError(
            f"this sweep has {math.prod(len(v.values) for v in vs)} points, more than the limit of {MAX_POINTS}; "
            f"narrow the ranges of {' and '.join(v.field for v in vs)}.", vs[0].field)
    order = sorted(range(len(vs)), key=lambda i: vs[i].divisors)
    points: list[SweepPoint] = []

    def expand(i: int, values: dict, spec: ConvSpec):
        if i == len(order):
            yield {vs[k].field: values[vs[k].field] for k in range(len(vs))}
            return
        v = vs[order[i]]
        for val in v.values_for(spec):
            vals = {**values, v.field: val}
            nxt, _ = _apply(base, vals, given)
            yield from expand(i + 1, vals, nxt)

    for values in expand(0, {}, base):
        if len(points) >= MAX_POINTS:
            raise InputError(
                f"this sweep has more than {MAX_POINTS} points; narrow the ranges of "
                f"{' and '.join(v.field for v in vs)}.", vs[0].field)
        spec, threads = _apply(base, values, given)
        if spec.name and spec.replace(name="", dtype=base.dtype, direction=base.direction,
                                      bias=base.bias) != base.replace(name=""):
            # Another shape is not the named layer any more (a g sweep of resnet_50:res2a is not res2a):
            # only points of the layer's own shape (another dtype or thread count) keep its name.
            spec = spec.replace(name="")
        err, err_field = _check(spec)
        points.append(SweepPoint(len(points), values, spec, threads, err, err_field, allocator=values.get("allocator"),
                                  isa=values.get("isa")))
    # Keep --vary order in the output: the first --vary is the outer loop.
    if order != list(range(len(vs))):
        first = vs[0].field
        firsts = list(dict.fromkeys(p.values[first] for p in points))
        rank = {v: i for i, v in enumerate(firsts)}
        points.sort(key=lambda p: rank[p.values[first]])
        for i, p in enumerate(points):
            p.index = i
    if not points:
        raise InputError(f"this sweep has no points; check the values of {' and '.join(v.field for v in vs)}.", vs[0].field)
    return points


def grid_shape(points: list[SweepPoint]) -> tuple[list, list]:
    """The distinct values of the first and (if any) second varied field, in order: a chart's axes."""
    if not points or not points[0].values:
        return [], []
    keys = list(points[0].values)
    first = list(dict.fromkeys(p.values[keys[0]] for p in points))
    second = list(dict.fromkeys(p.values[keys[1]] for p in points)) if len(keys) > 1 else []
    return first, second


def parse_label(label: str) -> dict:
    """The `vary` cell back to values: "g=4;dtype=bf16" -> {"g": 4, "dtype": "bf16"}."""
    out: dict = {}
    for part in (label or "").split(";"):
        k, sep, v = part.partition("=")
        if sep:
            out[k.strip()] = int(v) if _INT.match(v.strip()) else v.strip()
    return out


def series(results, x: str, y: str = "gflops", by: str | None = None) -> dict[tuple, tuple[list, list]]:
    """Chart lines of a sweep: (path,) or (path, value of `by`) -> (x values, y values), sorted by x.

    `results` are Results or CSV row dicts (read_csv); only `ok` rows with a value of `y` are used, and
    x/by values come from the `vary` column, so a saved CSV plots exactly like a live sweep.
    """
    lines: dict[tuple, list] = {}
    for r in results:
        get = r.get if isinstance(r, dict) else (lambda k, _r=r: getattr(_r, k, None))
        if get("status") != "ok" or get(y) is None:
            continue
        vals = parse_label(get("vary") or "")
        if x not in vals or (by is not None and by not in vals):
            continue
        key = (get("path"),) + ((vals[by],) if by is not None else ())
        lines.setdefault(key, []).append((vals[x], float(get(y))))
    out = {}
    for key, pts in lines.items():
        pts.sort(key=lambda p: (isinstance(p[0], str), p[0]))
        out[key] = ([p[0] for p in pts], [p[1] for p in pts])
    return out


__all__ = [
    "MAX_POINTS", "VARY_FIELDS", "Vary", "parse_vary", "parse_varies", "divisors", "common_divisors",
    "SweepPoint", "plan_sweep", "given_keys", "grid_shape",
    "parse_label", "series",
]
