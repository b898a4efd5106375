"""Result rows, the CSV schema, atomic CSV writes and CSV reading.

One row per (spec, path). The CSV loads in pandas unchanged: a header row, one row per result, empty
cells for missing values. A whole write goes to a temp file in the same folder and is renamed over the
target; rows as they finish are appended and fsynced, so the file on disk is always complete: a crash or
Ctrl+C loses at most the row in flight, and a line torn by a crash mid-write is dropped (with one sentence)
when the file is read again.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from explorer.core.errors import InputError
from explorer.core.files import RowsFile, atomic_write_text, check_writable, read_text  # noqa: F401 - re-exported
from explorer.core.output_lock import lock_output
from explorer.core.problem.spec import ConvSpec
from explorer.core.report.csv_cells import fit_row
from explorer.core.trace.aten import csv_chain

STATUSES = ("ok", "unsupported", "error", "skipped", "refused")  # refused: a batch line's options not honoured

CSV_COLUMNS = (
    "desc", "name", "mb", "g", "ic", "ih", "iw", "oc", "oh", "ow", "kh", "kw", "sh", "sw", "ph", "pw",
    "dh", "dw", "dtype", "bias", "path", "threads", "status", "error", "samples", "median_ms", "iqr_ms",
    "min_ms", "mean_ms", "gflops", "max_abs_err", "input_bytes", "weight_bytes", "output_bytes",
    "torch_version", "onednn_version", "isa", "started_at",
    # Beyond the required schema:
    "p25_ms", "p75_ms", "stop_reason", "budget_ms", "ops", "pct_peak",
    "conv_impl", "src_tag", "wei_tag", "dst_tag", "reorder_count", "trace_conv_ms", "trace_reorder_ms",
    "cpu", "vary",
    # The interference meter (explorer.core.measure.interference): is this row's figure trustworthy?
    "quality", "quality_reason", "runq_wait_pct", "faults_per_call", "ctx_switches_per_call", "cpu_pct",
    "steal_pct", "other_cpu_pct", "slowdown_pct", "loadavg", "samples_used", "attempts", "allocator",
    # The ISA what-if (issue 22): `isa` is oneDNN's, read back from its verbose info line; ATen's own beside it.
    "aten_isa",
    # The ATen view, the routes' one-off cost and the split of the median (issue 14):
    "aten_ops", "compile_ms", "onednn_ms", "reorder_ms", "other_ms", "route_note",
    # benchdnn's --attr-post-ops as timed after (or fused into) the conv, '' for the plain conv (issue 32):
    "post_ops",
    # --stag/--dtag as honoured: '' each path's own layout, axb channels_last, abx NCHW (only the paths taking it run)
    "io_tag",
    # int8 (issue 32): the line's scales/zero points; max |out - f32 reference| / max |f32 reference|
    "scales", "zero_points", "rel_err",
)
INT_COLUMNS = {"bias", "mb", "g", "ic", "ih", "iw", "oc", "oh", "ow", "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw",
                "threads", "samples", "input_bytes", "weight_bytes", "output_bytes", "ops", "reorder_count",
               "samples_used", "attempts"}
FLOAT_COLUMNS = {"median_ms", "iqr_ms", "min_ms", "mean_ms", "gflops", "max_abs_err", "p25_ms", "p75_ms",
                  "budget_ms", "pct_peak", "trace_conv_ms", "trace_reorder_ms",
                 "runq_wait_pct", "faults_per_call", "ctx_switches_per_call", "cpu_pct", "steal_pct", "other_cpu_pct", "slowdown_pct", "loadavg",
                 "compile_ms", "onednn_ms", "reorder_ms", "other_ms", "rel_err"}
QUALITIES = ("ok", "noisy", "")
# A time read from a file must be above zero (a zero median would give "ok/ok" ratios and divide by zero).
POSITIVE_COLUMNS = {"median_ms", "min_ms", "mean_ms", "p25_ms", "p75_ms"}


def _clip(text: str, n: int = 40) -> str:
    """A cell echoed in a message: at most n characters (a 100,000-digit number is not one sentence)."""
    return text if len(text) <= n else text[: n - 3] + "..."

# 1-D/3-D problems, benchdnn's right pads (what the output size implies) and the exact op count.
SHAPE_COLUMNS = ("exact_ops", "ndims", "id", "od", "kd", "sd", "pd", "dd", "pd_r", "ph_r", "pw_r")
CSV_COLUMNS += SHAPE_COLUMNS
INT_COLUMNS |= set(SHAPE_COLUMNS)
# The fresh-script check (run --verify, explorer.core.process.verify); empty when not asked for.
VERIFY_COLUMNS = ("verify_median_ms", "verify_ratio", "verify_script", "verify_note")
CSV_COLUMNS += VERIFY_COLUMNS
FLOAT_COLUMNS |= {"verify_median_ms", "verify_ratio"}
# benchdnn's --dir of the row (spec.DIRECTIONS): a BWD_* row timed the gradients. CSVs of older versions lack it:
# their rows are forward ones (FWD_B with a bias, FWD_D without). Not the last column: a crash's torn line is
# told by its missing cells, and a cut inside a last "FWD_B" would leave their count whole.
DIRECTION_COLUMN = "direction"
CSV_COLUMNS += (DIRECTION_COLUMN,)
# A batch's or sweep's row: which problem of its list it measured, 0-based in the whole list (as --shard counts);
# resume and merge match rows to problems by it, so a descriptor listed twice is two problems. Empty for `run`.
# CSVs of older versions lack it (read_csv reads them; --resume matches their rows by descriptor, in order).
PROBLEM_COLUMN = "problem_index"
CSV_COLUMNS += (PROBLEM_COLUMN,)
INT_COLUMNS.add(PROBLEM_COLUMN)
REQUIRED_COLUMNS = CSV_COLUMNS[: CSV_COLUMNS.index("started_at") + 1]


@dataclass
class Result:
    """One (spec, path) outcome. Times in ms; bytes as the path stores the tensors."""

    spec: ConvSpec
    path: str
    threads: int
    status: str = "ok"
    error: str = ""
    samples: int = 0
    median_ms: float | None = None
    iqr_ms: float | None = None
    min_ms: float | None = None
    mean_ms: float | None = None
    p25_ms: float | None = None
    p75_ms: float | None = None
    gflops: float | None = None
    max_abs_err: float | None = None
    rel_err: float | None = None  # max_abs_err / max |reference|; int8: against the f32 conv on dequantized values
    input_bytes: int | None = None
    weight_bytes: int | None = None
    output_bytes: int | None = None
    stop_reason: str = ""
    budget_ms: float | None = None
    pct_peak: float | None = None
    torch_version: str = ""
    onednn_version: str = ""
    isa: str = ""  # oneDNN's ISA in the measuring process, read back (e.g. avx2, avx512_core_bf16)
    aten_isa: str = ""  # torch.backends.cpu.get_cpu_capability() there (e.g. AVX2, AVX512)
    cpu: str = ""
    started_at: str = ""
    conv_impl: str = ""
    src_tag: str = ""
    wei_tag: str = ""
    dst_tag: str = ""
    reorder_count: int | None = None
    trace_conv_ms: float | None = None
    trace_reorder_ms: float | None = None
    vary: str = ""
    quality: str = ""  # ok | noisy | "" (no interference counters on this platform, or not measured)
    quality_reason: str = ""  # one sentence: the cause and its size
    runq_wait_pct: float | None = None
    faults_per_call: float | None = None
    ctx_switches_per_call: float | None = None
    cpu_pct: float | None = None
    steal_pct: float | None = None
    other_cpu_pct: float | None = None
    slowdown_pct: float | None = None
    loadavg: float | None = None
    samples_used: int | None = None  # samples behind the statistics (undisturbed ones)
    attempts: int | None = None
    allocator: str = ""
    aten_ops: str = ""  # the profiled call's ATen chain, e.g. "aten::conv2d > ... > aten::mkldnn_convolution"
    compile_ms: float | None = None  # one-off conversion / compile time of a route, outside the timed call
    onednn_ms: float | None = None  # the median split: inside oneDNN compute primitives ...
    reorder_ms: float | None = None  # ... inside oneDNN reorders ...
    other_ms: float | None = None  # ... and the rest (PyTorch's own kernels, dispatch, Python)
    route_note: str = ""  # what a route inserted or calls
    verify_median_ms: float | None = None  # the fresh script's median (--verify)
    verify_ratio: float | None = None  # median_ms / verify_median_ms
    verify_script: str = ""  # where that script was written
    verify_note: str = ""  # "not reproduced in a fresh script: ..." beyond +-10%, or why there is no figure
    problem_index: int | None = None  # the problem's place in its batch or sweep list (PROBLEM_COLUMN)
    # Which machine measured it, set in a cluster run (explorer.core.fleet.hosts); empty for this machine's
    # rows. Not local CSV columns: a cluster run's CSV adds them.
    host: str = ""
    worker: str = ""
    # Kept for charts and views, not written to the CSV:
    samples_ms: object = field(default=None, repr=False)  # numpy array of per-call times
    trace: list = field(default_factory=list, repr=False)  # trace.Primitive records of one traced call
    layouts: dict = field(default_factory=dict, repr=False)  # role -> path_layouts.TensorLayout
    aten: list = field(default_factory=list, repr=False)  # aten.AtenOp records of one profiled call
    sample_starts_ns: object = field(default=None, repr=False)  # numpy array: perf_counter_ns of each sample
    sample_waits_ns: object = field(default=None, repr=False)  # numpy array: run-queue wait during each sample
    trace_window_ns: tuple | None = field(default=None, repr=False)  # (start, end) of the traced call
    aten_window_ns: tuple | None = field(default=None, repr=False)  # (start, duration) of the profiled call

    @property
    def noisy(self) -> bool:
        return self.quality == "noisy"

    def row(self) -> dict:
        s = self.spec
        out = {
            "desc": s.desc, "name": s.name, "mb": s.mb, "g": s.g, "ic": s.ic, "ih": s.ih, "iw": s.iw,
            "oc": s.oc, "oh": s.oh, "ow": s.ow, "kh": s.kh, "kw": s.kw, "sh": s.sh, "sw": s.sw, "ph": s.ph,
            "pw": s.pw, "dh": s.dh, "dw": s.dw, "dtype": s.dtype, "bias": int(s.bias), "ops": s.ops,
            "direction": s.direction,
            "post_ops": s.post_ops, "io_tag": s.io_tag,
            "scales": s.scales, "zero_points": s.zero_points,
        }
        out.update(shape_cells(s))
        for f in dataclasses.fields(self):
            if f.name in VIEW_ONLY_FIELDS:
                continue
            out[f.name] = getattr(self, f.name)
        out["aten_ops"] = csv_chain(self.aten_ops or "")  # a whole model's chain: collapsed, at most 32 KiB
        return {k: csv_cell(out.get(k)) for k in CSV_COLUMNS}


VIEW_ONLY_FIELDS = ("spec", "samples_ms", "trace", "layouts", "aten", "sample_starts_ns", "sample_waits_ns", "trace_window_ns",
              "aten_window_ns")


def result_from_cells(row: dict, spec: ConvSpec) -> Result:
    """A Result again from its CSV row as text cells (what a cluster worker sends back), for the views and the
    planner: every field the row has, typed as the dataclass types it; the spec is the caller's own."""
    r = Result(spec=spec, path=str(row.get("path") or ""), threads=0)
    for f in dataclasses.fields(Result):
        if f.name in VIEW_ONLY_FIELDS or f.name not in row:
            continue
        v = row[f.name]
        numeric = f.name in INT_COLUMNS or f.name in FLOAT_COLUMNS
        if v is None or v == "":
            v = (0 if f.default is dataclasses.MISSING else f.default) if numeric else ""
        elif f.name in INT_COLUMNS:
            v = int(float(v))
        elif f.name in FLOAT_COLUMNS:
            v = float(v)
        else:
            v = str(v)
        setattr(r, f.name, v)
    return r


def row_is_noisy(row: dict) -> bool:
    """A CSV row (dict) whose figure another program disturbed: a ratio built on it is uncertain."""
    return (row.get("quality") or "") == "noisy"


def shape_cells(s: ConvSpec) -> dict:
    """The SHAPE_COLUMNS of a spec (absent dims at benchdnn's neutral values)."""
    return {"exact_ops": s.exact_ops, "ndims": s.ndims, "id": s.id, "od": s.od, "kd": s.kd, "sd": s.sd, "pd": s.pd,
            "dd": s.dd, "pd_r": s.pad_r("d"), "ph_r": s.pad_r("h"), "pw_r": s.pad_r("w")}


def csv_cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, float):
        return "" if not math.isfinite(v) else f"{v:.6g}"
    return str(v)


def rows_to_csv_text(rows: list[dict], columns: tuple[str, ...] | list[str] = CSV_COLUMNS) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    w.writerows(fit_row(r) for r in rows)  # no cell a reader refuses (csv_cells)
    return buf.getvalue()


class CsvSink:
    """Rows written as they finish (explorer.core.files.RowsFile): the file is started once (the header, and a
    resume's rows, atomically), then each add is one appended, fsynced line, so the file on disk is always a
    complete CSV of every finished row and a row costs the same at row 1 and row 1,000,000; `count` is how many
    rows are really on disk. The CSV's writer's lock is taken here, before any work (a second writer of the
    file is refused, naming this process) and given back by close() or at the process's end. A write that
    fails raises WriteFault (the rows safe, the rest recoverable)."""

    def __init__(self, path: str | os.PathLike | None, columns: tuple[str, ...] | list[str] = CSV_COLUMNS,
                 rows: list[dict] = ()):
        """`columns`: the schema (a cluster run adds host columns); `rows`: the rows of a CSV that goes on
        (--resume: written again once, atomically, at the first flush or add)."""
        self.columns = tuple(columns)
        self._buf = io.StringIO()  # one writer for every line: a resume of 50,000 rows formats 4x faster
        self._writer = csv.DictWriter(self._buf, fieldnames=self.columns, extrasaction="ignore", lineterminator="\n")
        self.file = RowsFile(path, rows_to_csv_text([], self.columns), [self._line(r) for r in rows])
        self.path = self.file.path

    def _line(self, row: dict) -> str:
        self._buf.seek(0)
        self._buf.truncate()
        self._writer.writerow(row)
        return self._buf.getvalue()

    @property
    def count(self) -> int:
        """Rows on disk (all rows added when there is no file)."""
        return self.file.on_disk if self.path is not None else self.file.count

    def add(self, result: Result | dict) -> None:
        self.file.add(self._line(result.row() if isinstance(result, Result) else result))

    def flush(self) -> None:
        self.file.flush()

    def close(self) -> None:
        self.file.close()


def write_csv(path: str | os.PathLike, results: list[Result]) -> None:
    with lock_output(path):  # also a CSV this process is writing (run --verify's columns): holds nest
        atomic_write_text(path, rows_to_csv_text([r.row() for r in results]))


def write_rows(path: str | os.PathLike, items, columns: tuple[str, ...] = CSV_COLUMNS) -> int:
    """Results and CSV row dicts (a sweep's skipped batch lines) as one CSV, the CLI's schema (or a cluster
    run's, `columns` with the host columns). Returns the count."""
    rows = [{**r.row(), "host": r.host, "worker": r.worker} if isinstance(r, Result) else r for r in items]
    with lock_output(path):  # the window's Save: refused while another process writes that CSV
        atomic_write_text(path, rows_to_csv_text(rows, columns))
    return len(rows)


def whole_rows_text(path: str | os.PathLike, notes: list[str] | None = None) -> str:
    """The CSV's text without a torn last line: one with no newline at its end and not the header's count of
    cells (or an open quote), what a crash leaves of the row it was writing (our rows always end in a newline;
    a spreadsheet's complete last line without one is kept). The dropped line is said in one sentence,
    appended to `notes`, or else on stderr."""
    p = Path(path)
    text = read_text(p, "csv")
    if not text or text.endswith("\n"):
        return text
    cut = text.rfind("\n")
    quotes = text.count('"')
    while cut >= 0 and (quotes - text.count('"', cut + 1)) % 2:  # inside a quoted cell: the record began earlier
        cut = text.rfind("\n", 0, cut)
    if cut < 0:
        return text  # no data row ends before it: read_csv says what is wrong
    tail = text[cut + 1:]
    header = next(csv.reader([text[:text.index("\n")]]))
    try:
        cells = list(csv.reader(io.StringIO(tail)))
    except csv.Error:
        cells = []
    if tail.count('"') % 2 == 0 and len(cells) == 1 and len(cells[0]) == len(header):
        return text
    n = sum(len(r) for r in cells)
    sentence = (f"{str(p)!r}: dropped a torn last line (line {text.count(chr(10), 0, cut + 1) + 1}, {n} of "
                f"{len(header)} cells and no line end: a crash cut it as it was written); with --resume it will "
                "be run again.")
    if notes is None:
        print(sentence, file=sys.stderr, flush=True)
    else:
        notes.append(sentence)
    return text[:cut + 1]


# The largest magnitude a number read from a file may have (2**53, about 9.0e15: every whole number up to it is
# exact in a double and in JSON). No figure this tool writes comes near it (a conv's op count, its bytes, a time
# in ms); a hand-edited 1e308 or 10**30 once reached the window, where a chart's range overflowed to inf and a
# table cell's int64 overflowed in every paint.
MAX_FILE_NUMBER = 2 ** 53


def cell_number(k: str, v):
    """A numeric column's value as read from a file (a number, numeric text, '' or None): (value, refusal). The
    refusal ('' when the value is fine) is the end of a sentence naming what is wrong with it."""
    if v is None or v == "":
        return None, ""
    if isinstance(v, bool):
        return v, "not a number"
    try:
        if isinstance(v, str):
            v = float(v) if k not in INT_COLUMNS else int(float(v))
        elif k in INT_COLUMNS and isinstance(v, float):
            v = int(v)
    except (ValueError, OverflowError):
        return v, "not a number" if not isinstance(v, str) or "inf" not in v.lower() else "not a finite number"
    if not isinstance(v, (int, float)):
        return v, "not a number"
    if isinstance(v, float) and not math.isfinite(v):
        return v, "not a finite number"
    if abs(v) > MAX_FILE_NUMBER:
        return v, f"beyond {MAX_FILE_NUMBER:.2g} in size, no figure this tool writes"
    if k in POSITIVE_COLUMNS and v <= 0:
        return v, "a time must be above 0"
    return v, ""


def read_csv(path: str | os.PathLike, notes: list[str] | None = None) -> list[dict]:
    """Read a results CSV (ours, from any machine). Numbers are converted; a bad file names its line; a torn
    last line is dropped (whole_rows_text: said in `notes`, or else on stderr)."""
    p = Path(path)
    text = whole_rows_text(p, notes)
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    missing = [c for c in ("desc", "path", "dtype", "threads", "status", "median_ms") if c not in header]
    if missing:
        raise InputError(
            f"{str(p)!r} line 1 is not an MKLDNN Explorer results header (missing {', '.join(missing)}).", "csv"
        )
    rows = []
    for lineno, raw in enumerate(reader, start=2):
        if None in raw or any(v is None for v in raw.values()):
            raise InputError(f"{str(p)!r} line {lineno}: wrong number of cells (truncated or foreign file).", "csv")
        row: dict = dict(raw)
        for k in header:
            v = row[k]
            if v == "":
                row[k] = None
                continue
            try:
                if k in INT_COLUMNS:
                    row[k] = int(float(v))
                elif k in FLOAT_COLUMNS:
                    row[k] = float(v)
            except (ValueError, OverflowError):
                raise InputError(f"{str(p)!r} line {lineno}: column {k} holds {_clip(v)!r}, not a number.", "csv") from None
            if isinstance(row[k], float) and not math.isfinite(row[k]):
                raise InputError(f"{str(p)!r} line {lineno}: column {k} holds {_clip(v)!r}, not a finite number.",
                                 "csv")
            if isinstance(row[k], (int, float)) and abs(row[k]) > MAX_FILE_NUMBER:
                raise InputError(f"{str(p)!r} line {lineno}: column {k} holds {_clip(v)!r}, beyond "
                                 f"{MAX_FILE_NUMBER:.2g} in size, no figure this tool writes.", "csv")
            if k in POSITIVE_COLUMNS and row[k] <= 0:
                raise InputError(f"{str(p)!r} line {lineno}: column {k} holds {_clip(v)!r}; a time must be above 0.",
                                 "csv")
        if row.get("status") not in STATUSES:
            raise InputError(f"{str(p)!r} line {lineno}: status {row.get('status')!r} is not one of {', '.join(STATUSES)}.", "csv")
        rows.append(row)
    return rows
