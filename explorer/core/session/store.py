"""A saved session: the spec, the run options and the result rows, as one JSON file (Qt-free).

The rows are the CSV schema's rows (results.CSV_COLUMNS), so a session and a CSV agree. The last sweep and the
Model tab's last report (with the inputs it was planned from) are kept too, and the window's own part: the
selected tab and the baselines kept for Compare (a file without them, from an older version, still opens). Per-call samples
and the raw oneDNN trace lines are kept too, so charts and the trace view come back on open; tensor
layouts are not (they are read from live tensors: run again to see them). Writes are atomic. A file that
is not a session, or is damaged, raises InputError with one sentence naming the problem.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from explorer.core.errors import ExplorerError, InputError, SpecError
from explorer.core.files import refuse_unreadable_kind
from explorer.core.problem.spec import ConvSpec, parse_descriptor
from explorer.core.report.results import (
    CSV_COLUMNS,
    FLOAT_COLUMNS,
    INT_COLUMNS,
    MAX_FILE_NUMBER,
    POSITIVE_COLUMNS,
    STATUSES,
    VIEW_ONLY_FIELDS,
    Result,
    atomic_write_text,
    cell_number,
)

FORMAT = "mkldnn-explorer-session"
VERSION = 1
# Every Result field but the identity (spec, path, threads) and the views' objects, read off the dataclass
# so a column added to Result is saved and restored without a second list to keep in step.
_RESULT_FIELDS = tuple(f.name for f in dataclasses.fields(Result)
                       if f.name not in ("path", "threads", *VIEW_ONLY_FIELDS))
_STR_FIELDS = {f.name for f in dataclasses.fields(Result) if f.type in (str, "str")}


@dataclass
class Session:
    """What a session file holds. `spec` is None only if the saved descriptor no longer parses."""

    spec: ConvSpec
    options: dict = field(default_factory=dict)  # paths (list), threads (int|None), budget_ms, trace, baseline
    results: list[Result] = field(default_factory=list)
    # The Sweep tab's last sweep or batch: {"setup": dict, "points": [SweepPoint], "items": [(point, Result|row)]}
    sweep: dict | None = None
    model: object = None  # the Model tab's last core.model.report.ModelReport (None in files saved before it)
    model_inputs: dict | None = None  # the Model tab's fields that report was planned from (model, input, dtype, modes)
    # The window's own part: {"tab": tab name, "baselines": [{"label", "rows"}], "pair": [A label, B label]}
    window: dict = field(default_factory=dict)


def spec_to_dict(spec: ConvSpec) -> dict:
    out = {"desc": spec.descriptor(), "dtype": spec.dtype, "bias": bool(spec.bias), "direction": spec.direction}
    if spec.post_ops:  # older sessions have no key: the plain conv
        out["post_ops"] = spec.post_ops
    if spec.io_tag:
        out["io_tag"] = spec.io_tag
    out.update({k: getattr(spec, k) for k in ("scales", "zero_points") if getattr(spec, k)})  # int8 only
    return out


def spec_from_dict(d: dict, where: str = "spec") -> ConvSpec:
    if not isinstance(d, dict) or not isinstance(d.get("desc"), str):
        raise InputError(f"{where} must be an object with a 'desc' string (a benchdnn descriptor).", "session")
    dtype = d.get("dtype") if isinstance(d.get("dtype"), str) else None
    bias = d.get("bias") if isinstance(d.get("bias"), bool) else None
    # files saved before directions have none: forward (FWD_B, or FWD_D without a bias)
    direction = d.get("direction") if isinstance(d.get("direction"), str) else None
    post = d.get("post_ops", "")
    if not isinstance(post, str):
        raise InputError(f"{where}: post_ops must be a string such as 'sum+relu'.", "session")
    tag = d.get("io_tag", "")
    if not isinstance(tag, str):
        raise InputError(f"{where}: io_tag must be a string ('', 'abx' or 'axb').", "session")
    try:
        spec = parse_descriptor(d["desc"], dtype=dtype, bias=bias, direction=direction)
        quant = {k: d[k] for k in ("scales", "zero_points") if isinstance(d.get(k), str) and d[k]}
        return spec.replace(post_ops=post, io_tag=tag, **quant).validate() if (post or tag or quant) else spec
    except SpecError as e:
        raise InputError(f"{where}: {e}", "session") from None


def _clean(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, np.generic):
        return v.item()
    return v


def result_to_dict(r: Result, with_samples: bool = True) -> dict:
    d = {"spec": spec_to_dict(r.spec), "path": r.path, "threads": r.threads}
    for f in _RESULT_FIELDS:
        d[f] = _clean(getattr(r, f))
    if with_samples and r.samples_ms is not None and len(r.samples_ms):
        d["samples_ms"] = [float(f"{x:.6g}") for x in np.asarray(r.samples_ms, dtype=float)]
    if r.trace:
        d["trace"] = [p.raw for p in r.trace if getattr(p, "raw", "")]
    if r.aten:
        d["aten"] = [o.to_dict() for o in r.aten]
    d["row"] = r.row()  # the CSV row, for readers that want the flat schema
    return d


def result_from_dict(d: dict, where: str) -> Result:
    if not isinstance(d, dict):
        raise InputError(f"{where} must be an object.", "session")
    spec = spec_from_dict(d.get("spec"), f"{where}.spec")
    path = d.get("path")
    if not isinstance(path, str) or not path:
        raise InputError(f"{where} has no 'path' string.", "session")
    threads = d.get("threads")
    if not isinstance(threads, int) or isinstance(threads, bool) or not 0 <= threads <= MAX_THREADS:
        raise InputError(f"{where}.threads must be a whole number from 0 to {MAX_THREADS}, got {str(threads)[:40]}.",
                         "session")
    r = Result(spec=spec, path=path, threads=threads)
    for f in _RESULT_FIELDS:
        if f not in d or d[f] is None:
            continue
        v = d[f]
        if f in _STR_FIELDS:
            if not isinstance(v, str):
                raise InputError(f"{where}.{f} must be text, got {v!r}.", "session")
        elif f in INT_COLUMNS or f == "samples":
            if not isinstance(v, int) or isinstance(v, bool) or abs(v) > MAX_FILE_NUMBER:
                raise InputError(f"{where}.{f} must be a whole number of at most {MAX_FILE_NUMBER:.2g}, "
                                 f"got {str(v)[:40]}.", "session")
        elif f in FLOAT_COLUMNS:
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                raise InputError(f"{where}.{f} must be a number, got {str(v)[:40]!r}.", "session")
            v = float(v)
            if not math.isfinite(v) or abs(v) > MAX_FILE_NUMBER or (f in POSITIVE_COLUMNS and v <= 0):
                raise InputError(f"{where}.{f} must be a finite number" + (" above 0" if f in POSITIVE_COLUMNS else "")
                                 + f" of at most {MAX_FILE_NUMBER:.2g}, got {v!r}.", "session")
        setattr(r, f, v)
    if r.status not in STATUSES:
        raise InputError(f"{where}.status {r.status!r} is not one of {', '.join(STATUSES)}.", "session")
    samples = d.get("samples_ms")
    if samples is not None:
        if not isinstance(samples, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                    and math.isfinite(x) and abs(x) <= MAX_FILE_NUMBER
                                                    for x in samples):
            raise InputError(f"{where}.samples_ms must be a list of finite numbers.", "session")
        r.samples_ms = np.asarray(samples, dtype=float)
    lines = d.get("trace")
    if lines is not None:
        if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
            raise InputError(f"{where}.trace must be a list of oneDNN verbose lines.", "session")
        from explorer.core.trace.onednn import Primitive, parse_line

        r.trace = [p for p in (parse_line(x) for x in lines) if isinstance(p, Primitive)]
    ops = d.get("aten")
    if ops is not None:
        from explorer.core.trace.aten import AtenOp

        try:
            r.aten = [AtenOp(str(o["name"]), int(o["depth"]), float(o["start_us"]), float(o["dur_us"])) for o in ops]
        except (TypeError, KeyError, ValueError):
            raise InputError(f"{where}.aten must be a list of {{name, depth, start_us, dur_us}} objects.", "session") from None
    return r


def _checked_row(row: dict, where: str) -> dict:
    """A CSV row kept in the session (a Compare baseline's, a sweep's refused or skipped line) by the CSV
    reader's rules (results.cell_number): numbers finite, of a sane size, times above 0, as in a CSV file."""
    out = dict(row)
    for k in INT_COLUMNS | FLOAT_COLUMNS:
        if k in out:
            v, why = cell_number(k, out[k])
            if why:
                raise InputError(f"{where}.{k} holds {str(out[k])[:40]!r}: {why}.", "session")
            # numbers as read_csv gives them (files saved before held some as text: '0', '99999999999')
            out[k] = v if v is not None or out[k] is None else out[k]
    return out


def point_to_dict(p) -> dict:
    d = {"index": p.index, "values": dict(p.values), "threads": p.threads, "error": p.error,
         "error_field": p.error_field, "line": p.line, "text": p.text}
    if p.spec is not None:
        d["spec"] = {**spec_to_dict(p.spec), "name": p.spec.name}
    return d


def point_from_dict(d, where: str):
    from explorer.core.problem.sweep_plan import SweepPoint

    if not isinstance(d, dict) or not isinstance(d.get("index"), int) or not isinstance(d.get("values", {}), dict):
        raise InputError(f"{where} must be an object with an 'index' and 'values'.", "session")
    for k, v in (d.get("values") or {}).items():  # a chart's axis value: a list would not hash, 1e308 not draw
        if not (isinstance(v, str) or _sane_number(v)):
            raise InputError(f"{where}.values.{k} must be text or a finite number of at most "
                             f"{MAX_FILE_NUMBER:.2g}, got {str(v)[:40]!r}.", "session")
    spec = None
    if d.get("spec") is not None:
        spec = spec_from_dict(d["spec"], f"{where}.spec")
        if isinstance(d["spec"].get("name"), str) and d["spec"]["name"] != spec.name:
            spec = spec.replace(name=d["spec"]["name"])
    threads = d.get("threads") if isinstance(d.get("threads"), int) else None
    line = d.get("line") if isinstance(d.get("line"), int) else None
    return SweepPoint(d["index"], dict(d.get("values") or {}), spec, threads, str(d.get("error") or ""),
                      d.get("error_field") if isinstance(d.get("error_field"), str) else None, line,
                      str(d.get("text") or ""))


def sweep_to_dict(sweep: dict) -> dict:
    """A sweep's setup (mode, varies, batch, run options), its points and its rows, each with its point index."""
    items = []
    for idx, item in sweep.get("items", []):
        if isinstance(item, Result):
            items.append({"point": idx, "result": result_to_dict(item, with_samples=False)})
        else:
            items.append({"point": idx, "row": {k: _clean(v) for k, v in item.items()}})
    return {"setup": {k: _clean(v) for k, v in (sweep.get("setup") or {}).items()},
            "points": [point_to_dict(p) for p in sweep.get("points", [])], "items": items}


def sweep_from_dict(d, name: str) -> dict | None:
    if d is None:
        return None
    where = f"{name}: sweep"
    if not isinstance(d, dict) or not isinstance(d.get("points"), list) or not isinstance(d.get("items"), list):
        raise InputError(f"{where} must be an object with 'points' and 'items' lists.", "session")
    points = [point_from_dict(p, f"{where}.points[{i}]") for i, p in enumerate(d["points"])]
    items = []
    for i, it in enumerate(d["items"]):
        w = f"{where}.items[{i}]"
        if not isinstance(it, dict) or not isinstance(it.get("point"), int):
            raise InputError(f"{w} must be an object with a 'point' index.", "session")
        if "result" in it:
            items.append((it["point"], result_from_dict(it["result"], w)))
        elif isinstance(it.get("row"), dict):
            items.append((it["point"], _checked_row(it["row"], f"{w}.row")))
        else:
            raise InputError(f"{w} has neither a 'result' nor a 'row'.", "session")
    setup = d.get("setup") if isinstance(d.get("setup"), dict) else {}
    _check_axes(points, setup, where)
    return {"setup": setup, "points": points, "items": items}


def _check_axes(points: list, setup: dict, where: str) -> None:
    """A line sweep's points each vary its one field, a grid's its two, in the same order (the chart's axes are
    read so, by position: a point varying nothing raised IndexError in the window's Open session)."""
    mode = setup.get("mode") or ("batch" if any(not p.values for p in points) else "line")
    if mode == "batch" or not points:
        return
    need = 1 if mode == "line" else 2
    axes = max((list(p.values)[:need] for p in points), key=len)  # the first point that varies the most
    for i, p in enumerate(points):
        if len(axes) < need or list(p.values)[:need] != axes:
            what = "its one varied field" if need == 1 else "its two varied fields"
            raise InputError(f"{where}.points[{i}] must vary {what} ({', '.join(map(str, axes)) or 'none given'}), "
                             f"as every point of a {mode} sweep does.", "session")


# ---- the Model tab's report ------------------------------------------------------------------------------------
def _plain(v):
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return _clean(v)


def _fields(obj, skip=()) -> dict:
    return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.name not in skip}


def _sane_number(v, whole: bool = False) -> bool:
    if isinstance(v, bool) or not isinstance(v, int if whole else (int, float)):
        return False
    return math.isfinite(v) and abs(v) <= MAX_FILE_NUMBER


def _numbers_within(v) -> bool:
    """Every number inside a (nested) list is finite and of a sane size (text may sit beside them)."""
    if isinstance(v, (list, tuple)):
        return all(_numbers_within(x) for x in v)
    return not isinstance(v, (int, float)) or isinstance(v, bool) or _sane_number(v)


def _field_refusal(t: str, v) -> str:
    """What a model report's field (its annotation `t`) must hold, when `v` does not; '' when it does. Such a
    number reaches the Model tab's cells and charts: 10**30 overflowed a cell in every paint, text in a time
    failed its format."""
    if v is None:
        return "" if "None" in t or t == "object" else "a value"
    if t.startswith("float"):
        return "" if _sane_number(v) else f"a finite number of at most {MAX_FILE_NUMBER:.2g}"
    if t.startswith("int"):
        return "" if _sane_number(v, whole=True) else f"a whole number of at most {MAX_FILE_NUMBER:.2g}"
    if t == "bool":
        return "" if isinstance(v, bool) else "true or false"
    if t == "str":
        return "" if isinstance(v, str) else "text"
    if t == "list[str]":
        return "" if isinstance(v, list) and all(isinstance(x, str) for x in v) else "a list of texts"
    if t in ("tuple", "list"):
        return "" if isinstance(v, list) and _numbers_within(v) else \
            f"a list whose numbers are finite and at most {MAX_FILE_NUMBER:.2g}"
    return ""


def _take(cls, d: dict, where: str, **given):
    """A dataclass from a dict of its plain fields (lists back to tuples where the field holds a tuple)."""
    if not isinstance(d, dict):
        raise InputError(f"{where} must be an object.", "session")
    kw = dict(given)
    for f in dataclasses.fields(cls):
        if f.name in kw or f.name not in d:
            continue
        v = d[f.name]
        why = _field_refusal(str(f.type), v)
        if why:
            raise InputError(f"{where}.{f.name} must be {why}, got {str(v)[:40]!r}.", "session")
        if isinstance(v, list) and "tuple" in str(f.type):
            v = tuple(tuple(x) if isinstance(x, list) else x for x in v)
        kw[f.name] = v
    try:
        return cls(**kw)
    except TypeError as e:
        raise InputError(f"{where}: {e}.", "session") from None


def model_to_dict(report, inputs: dict | None = None) -> dict:
    """A ModelReport as plain JSON: the inventory, each layer's summary (its rows) and the end-to-end modes.
    A mode's in-order conv timing object (conv_seq) is not kept: its figures are in the mode's own fields."""
    inv = report.inventory
    layers = []
    for lay in inv.layers:
        d = _fields(lay, skip=("spec",))
        d["spec"] = None if lay.spec is None else {**spec_to_dict(lay.spec), "name": lay.spec.name}
        layers.append(d)
    summaries = []
    for s in report.layers:
        summaries.append({
            "layer": inv.layers.index(s.layer) if s.layer in inv.layers else None,
            "results": {p: result_to_dict(r, with_samples=False) for p, r in s.results.items()},
            "best_path": s.best_path, "best_ms": _clean(s.best_ms), "margin": _clean(s.margin), "noisy": s.noisy,
            "chained": None if s.chained is None else result_to_dict(s.chained, with_samples=False),
            "in_sequence": {p: _clean(v) for p, v in s.in_sequence.items()},
        })
    return {
        "inventory": {"model": inv.model, "input_shape": list(inv.input_shape), "dtype": inv.dtype,
                      "sites": [_fields(x) for x in inv.sites], "layers": layers},
        "layers": summaries,
        "modes": [_fields(m, skip=("conv_seq",)) for m in report.modes],
        "threads": report.threads, "started_at": report.started_at,
        "planned": list(report.planned),  # the modes asked for: a stopped plan's answer names those not run
        **({"inputs": model_inputs_to_dict(inputs)} if inputs else {}),
    }


MODEL_INPUT_KEYS = ("model", "input", "dtype", "modes")


def model_inputs_to_dict(inputs: dict) -> dict:
    return {"model": str(inputs.get("model") or ""), "input": str(inputs.get("input") or ""),
            "dtype": str(inputs.get("dtype") or ""), "modes": [str(m) for m in inputs.get("modes") or ()]}


def model_inputs_from_dict(d, where: str) -> dict | None:
    if d is None:
        return None
    if (not isinstance(d, dict) or not all(isinstance(d.get(k, ""), str) for k in ("model", "input", "dtype"))
            or not isinstance(d.get("modes", []), list) or not all(isinstance(m, str) for m in d.get("modes", []))):
        raise InputError(f"{where} must be an object with 'model', 'input' and 'dtype' texts and a 'modes' list.",
                         "session")
    return {"model": d.get("model", ""), "input": d.get("input", ""), "dtype": d.get("dtype", ""),
            "modes": list(d.get("modes", []))}


def window_to_dict(window: dict) -> dict:
    """The window's own part: the selected tab, the baselines kept for Compare (their rows as read_csv gives
    them) and the pair compared."""
    out = {}
    if window.get("tab"):
        out["tab"] = str(window["tab"])
    baselines = window.get("baselines") or []
    if baselines:
        out["baselines"] = [{"label": str(b["label"]), "rows": [{k: _clean(v) for k, v in r.items()} for r in b["rows"]]}
                            for b in baselines]
    pair = window.get("pair")
    if pair and any(pair):
        out["pair"] = [str(pair[0] or ""), str(pair[1] or "")]
    return out


def window_from_dict(d, name: str) -> dict:
    if d is None:
        return {}
    where = f"{name}: window"
    if not isinstance(d, dict):
        raise InputError(f"{where} must be an object.", "session")
    out = {}
    if "tab" in d:
        if not isinstance(d["tab"], str):
            raise InputError(f"{where}.tab must be a tab's name, got {str(d['tab'])[:40]!r}.", "session")
        out["tab"] = d["tab"]
    baselines = d.get("baselines", [])
    if not isinstance(baselines, list):
        raise InputError(f"{where}.baselines must be a list.", "session")
    kept = []
    for i, b in enumerate(baselines):
        if (not isinstance(b, dict) or not isinstance(b.get("label"), str) or not isinstance(b.get("rows"), list)
                or not all(isinstance(r, dict) for r in b["rows"])):
            raise InputError(f"{where}.baselines[{i}] must be an object with a 'label' and a list of 'rows'.",
                             "session")
        kept.append({"label": b["label"],
                     "rows": [_checked_row(r, f"{where}.baselines[{i}].rows[{k}]") for k, r in enumerate(b["rows"])]})
    if kept:
        out["baselines"] = kept
    if "pair" in d:
        pair = d["pair"]
        if not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(x, str) for x in pair):
            raise InputError(f"{where}.pair must be two labels [A, B].", "session")
        out["pair"] = list(pair)
    return out


def model_from_dict(d, name: str):
    if d is None:
        return None
    from explorer.core.model.inventory import ConvSite, Inventory, Layer
    from explorer.core.model.report import LayerSummary, ModelReport, ModeResult

    where = f"{name}: model"
    if not isinstance(d, dict) or not isinstance(d.get("inventory"), dict):
        raise InputError(f"{where} must be an object with an 'inventory'.", "session")
    i = d["inventory"]
    layers = []
    for k, ld in enumerate(i.get("layers") or []):
        w = f"{where}.inventory.layers[{k}]"
        spec = None
        if isinstance(ld, dict) and ld.get("spec") is not None:
            spec = spec_from_dict(ld["spec"], f"{w}.spec")
            if isinstance(ld["spec"].get("name"), str) and ld["spec"]["name"] != spec.name:
                spec = spec.replace(name=ld["spec"]["name"])
        layers.append(_take(Layer, ld, w, spec=spec))
    sites = [_take(ConvSite, x, f"{where}.inventory.sites[{k}]") for k, x in enumerate(i.get("sites") or [])]
    inv = Inventory(str(i.get("model") or ""), tuple(i.get("input_shape") or ()), str(i.get("dtype") or "f32"),
                    sites, layers)
    summaries = []
    for k, sd in enumerate(d.get("layers") or []):
        w = f"{where}.layers[{k}]"
        if not isinstance(sd, dict) or not isinstance(sd.get("layer"), int) or not 0 <= sd["layer"] < len(layers):
            raise InputError(f"{w} must name one of the inventory's layers by index.", "session")
        for key in ("best_ms", "margin"):
            if sd.get(key) is not None and not _sane_number(sd[key]):
                raise InputError(f"{w}.{key} must be a finite number of at most {MAX_FILE_NUMBER:.2g}, got "
                                 f"{str(sd[key])[:40]!r}.", "session")
        seq = sd.get("in_sequence") or {}
        if not isinstance(seq, dict) or not all(v is None or _sane_number(v) for v in seq.values()):
            raise InputError(f"{w}.in_sequence must map paths to finite numbers of at most {MAX_FILE_NUMBER:.2g}.",
                             "session")
        results = {p: result_from_dict(r, f"{w}.results.{p}") for p, r in (sd.get("results") or {}).items()}
        chained = result_from_dict(sd["chained"], f"{w}.chained") if sd.get("chained") else None
        summaries.append(LayerSummary(layers[sd["layer"]], results, sd.get("best_path") or "", sd.get("best_ms"),
                                      sd.get("margin"), bool(sd.get("noisy")), chained,
                                      dict(sd.get("in_sequence") or {})))
    modes = [_take(ModeResult, m, f"{where}.modes[{k}]") for k, m in enumerate(d.get("modes") or [])]
    threads = d.get("threads")
    if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool)
                                or not 1 <= threads <= MAX_THREADS):
        raise InputError(f"{where}.threads must be a whole number from 1 to {MAX_THREADS}, got {str(threads)[:40]!r}.",
                         "session")
    threads = threads or 1
    planned = tuple(m for m in (d.get("planned") or ()) if isinstance(m, str))
    return ModelReport(inv, summaries, modes, threads, str(d.get("started_at") or ""), planned)


def session_to_dict(spec: ConvSpec, options: dict, results: list[Result], sweep: dict | None = None,
                    model=None, model_inputs: dict | None = None, window: dict | None = None) -> dict:
    out = {
        "format": FORMAT,
        "version": VERSION,
        "spec": spec_to_dict(spec),
        "options": {k: _clean(v) for k, v in (options or {}).items()},
        "columns": list(CSV_COLUMNS),
        "results": [result_to_dict(r) for r in results],
    }
    if sweep and (sweep.get("items") or sweep.get("points")):
        out["sweep"] = sweep_to_dict(sweep)
    if model is not None:
        out["model"] = model_to_dict(model, model_inputs)
    if window_to_dict(window or {}):
        out["window"] = window_to_dict(window or {})
    return out


def save_session(path: str | os.PathLike, spec: ConvSpec, options: dict, results: list[Result],
                 sweep: dict | None = None, model=None, model_inputs: dict | None = None,
                 window: dict | None = None) -> None:
    """Write the session atomically (temp file + rename): the file on disk is always whole."""
    text = json.dumps(session_to_dict(spec, options, results, sweep, model, model_inputs, window), indent=1,
                      allow_nan=False)
    atomic_write_text(path, text + "\n")


# The numbers a run may carry, as the window's fields and RunOptions take them (core.jobs.options): a larger or
# non-finite figure in a settings or session file is refused (session) or reset (settings), never passed on.
MAX_BUDGET_MS = 600_000.0
MAX_THREADS = 4096  # far above any machine's cores; a session from a bigger machine still opens
DEFAULT_SETTINGS_BUDGET_MS = 500.0


def _budget_ok(v) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            and 0 < v <= MAX_BUDGET_MS)


def settings_numbers(threads, budget_ms, cores: int | None = None) -> tuple[int, float, list[str]]:
    """The window's stored threads (0 = auto) and budget, as read from its settings file (text or numbers):
    anything unreadable, non-finite or out of range is reset to the default, with one sentence for each."""
    cores = cores or os.cpu_count() or 1
    notes: list[str] = []
    try:
        t = float(threads if threads is not None else 0)
        t_ok = math.isfinite(t) and t == int(t) and 0 <= t <= cores
    except (TypeError, ValueError, OverflowError):
        t_ok = False
    if not t_ok:
        notes.append(f"the settings' threads {str(threads)[:40]!r} is not a whole number from 0 to {cores}; "
                     "reset to auto.")
    try:
        b = float(budget_ms if budget_ms is not None else DEFAULT_SETTINGS_BUDGET_MS)
        b_ok = _budget_ok(b) and b >= 1
    except (TypeError, ValueError, OverflowError):
        b_ok = False
    if not b_ok:
        notes.append(f"the settings' budget_ms {str(budget_ms)[:40]!r} is not a number from 1 to "
                     f"{MAX_BUDGET_MS:.0f}; reset to {DEFAULT_SETTINGS_BUDGET_MS:.0f} ms.")
    return (int(t) if t_ok else 0), (b if b_ok else DEFAULT_SETTINGS_BUDGET_MS), notes


def _check_options(o, where: str = "options") -> dict:
    if o is None:
        return {}
    if not isinstance(o, dict):
        raise InputError(f"{where} must be an object.", "session")
    out = dict(o)
    paths = out.get("paths")
    if paths is not None:
        from explorer.core.paths.base import ALL_PATHS as PATHS

        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise InputError(f"{where}.paths must be a list of path names.", "session")
        unknown = [p for p in paths if p not in PATHS]
        if unknown:
            raise InputError(f"{where}.paths names unknown path {unknown[0]!r}; known: {', '.join(PATHS)}.", "session")
    threads = out.get("threads")
    if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool)
                                or not 1 <= threads <= MAX_THREADS):
        raise InputError(f"{where}.threads must be a whole number from 1 to {MAX_THREADS} or null, "
                         f"got {str(threads)[:40]!r}.", "session")
    allocator = out.get("allocator")
    if allocator is not None:
        from explorer.core.measure.allocator import ALLOCATORS

        if allocator not in ALLOCATORS:
            raise InputError(f"{where}.allocator must be one of {', '.join(ALLOCATORS)}, got {str(allocator)[:40]!r}.",
                             "session")
    isa = out.get("isa")
    if isa is not None:
        from explorer.core.measure.isa import ISAS

        if isa not in ISAS:
            raise InputError(f"{where}.isa must be one of {', '.join(ISAS)} or null, got {str(isa)[:40]!r}.", "session")
    budget = out.get("budget_ms")
    if budget is not None and not _budget_ok(budget):
        raise InputError(f"{where}.budget_ms must be a finite number above 0 and at most {MAX_BUDGET_MS:.0f}, "
                         f"got {str(budget)[:40]!r}.", "session")
    return out


def session_from_dict(data, name: str = "the session") -> Session:
    if not isinstance(data, dict):
        raise InputError(f"{name} is not an MKLDNN Explorer session: the top level is not a JSON object.", "session")
    if data.get("format") != FORMAT:
        raise InputError(f"{name} is not an MKLDNN Explorer session (its 'format' is {data.get('format')!r}).", "session")
    version = data.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise InputError(f"{name} has session version {version!r}; this app reads version {VERSION}.", "session")
    spec = spec_from_dict(data.get("spec"), f"{name}: spec")
    options = _check_options(data.get("options"), f"{name}: options")
    raw = data.get("results", [])
    if not isinstance(raw, list):
        raise InputError(f"{name}: 'results' must be a list.", "session")
    results = [result_from_dict(d, f"{name}: results[{i}]") for i, d in enumerate(raw)]
    raw_model = data.get("model")
    inputs = (model_inputs_from_dict(raw_model.get("inputs"), f"{name}: model.inputs")
              if isinstance(raw_model, dict) else None)
    return Session(spec, options, results, _part(sweep_from_dict, data, "sweep", name),
                   _part(model_from_dict, data, "model", name), inputs,
                   window_from_dict(data.get("window"), name))


def _part(read, data: dict, key: str, name: str):
    """A nested part (sweep, model report) read by `read`: the checks above name what they know; any other
    damage a hand edit left deep inside (a list where an object goes, a word where a number goes) is still one
    sentence naming the part, never a traceback."""
    try:
        return read(data.get(key), name)
    except ExplorerError:
        raise
    except (AttributeError, TypeError, KeyError, ValueError, IndexError, OverflowError) as e:
        raise InputError(f"{name}: its {key!r} part is damaged ({e.__class__.__name__}: {str(e)[:80]}); remove "
                         f"that key to open the rest.", "session") from None


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def load_session(path: str | os.PathLike) -> Session:
    """Read a session file; any problem raises InputError with one sentence naming it."""
    p = Path(path)
    refuse_unreadable_kind(p, "session")
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"cannot open {str(p)!r}: no such file.", "session") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read {str(p)!r}: {e.__class__.__name__}: {e}.", "session") from None
    try:
        data = json.loads(text, parse_constant=_no_constant)  # NaN/Infinity are not JSON: refused
    except (json.JSONDecodeError, ValueError) as e:
        if not isinstance(e, json.JSONDecodeError):
            raise InputError(f"{str(p)!r} is not valid JSON: {e}.", "session") from None
        raise InputError(f"{str(p)!r} is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}.", "session") from None
    return session_from_dict(data, repr(str(p)))
