"""The model CSV: one row per layer, per (layer, path) and per mode, in one column set (the per-layer
CSV's columns after the planner's own), written atomically, and the sink that appends to it as rows arrive."""

from __future__ import annotations

import math

from explorer.core.model.inventory import Inventory, Layer
from explorer.core.model.report import LayerSummary, ModelReport, ModeResult, mode_path

MODEL_COLUMNS_HEAD = ("kind", "model", "input_shape", "count", "modules", "best_path", "best_ms", "margin",
                      "mode", "measured_ms", "predicted_ms", "speedup", "predicted_speedup", "conv_ms",
                      "conv_alone_ms", "conv_seq_quality", "convs_in_model_ms", "in_sequence_ms", "conversion_ms", "remainder_ms", "remainder_quality", "host_drift_pct", "rel_err", "convs_faster", "convs_total", "uncertain",
                      "uncertain_reason", "note", "f32_max_abs_err", "f32_rel_err")


def model_columns() -> tuple[str, ...]:
    from explorer.core.report.results import CSV_COLUMNS

    return MODEL_COLUMNS_HEAD + tuple(c for c in CSV_COLUMNS if c not in MODEL_COLUMNS_HEAD)


def _cell(v) -> str:
    from explorer.core.report.results import csv_cell as cell

    return cell(v)


def _modules_cell(lay: Layer) -> str:
    """The layer's module paths, `;`-separated; a layer repeated so often that they pass the CSV's cell limit
    keeps the first ones and says how many more (`count` has them all)."""
    from explorer.core.report.csv_cells import list_cell

    return list_cell(lay.modules, "modules")


def layer_row(inv: Inventory, s: LayerSummary) -> dict:
    lay = s.layer
    row: dict = {}
    if lay.spec is not None:
        from explorer.core.report.results import Result

        row.update(Result(spec=lay.spec, path="", threads=0).row())
        for k in ("path", "threads", "status", "samples"):
            row[k] = ""
    row.update(kind="layer", model=inv.model, input_shape="x".join(map(str, lay.input_shape)), count=lay.count,
               modules=_modules_cell(lay), best_path=s.best_path, best_ms=s.best_ms, margin=s.margin,
               name=lay.name, desc=lay.desc, dtype=inv.dtype, status="ok" if not lay.error else "skipped",
               error=lay.error, quality="noisy" if s.noisy else "")
    return {k: _cell(v) if not isinstance(v, str) else v for k, v in row.items()}


def layer_path_row(inv: Inventory, lay: Layer, result, in_sequence: float | None = None) -> dict:
    row = dict(result.row())
    row.update(kind="layer_path", model=inv.model, input_shape="x".join(map(str, lay.input_shape)),
               count=str(lay.count), modules=_modules_cell(lay), in_sequence_ms=_cell(in_sequence))
    if getattr(result, "host", ""):  # measured on a cluster's worker: the CSV's host columns (model --cluster)
        row.update(host=result.host, worker=result.worker)
    return row


def mode_row(inv: Inventory, r: ModeResult, threads: int | None = None) -> dict:
    row = {"kind": "mode", "model": inv.model, "input_shape": "x".join(map(str, inv.input_shape)),
           "dtype": inv.dtype, "mode": r.mode, "name": r.mode, "path": mode_path(r),
           "median_ms": r.measured_ms, "threads": threads, "count": inv.total,
           "note": "; ".join(n for n in (r.mode_note, r.predict_note, r.convs_in_model_note and
                                         f"convs in model: {r.convs_in_model_note}", r.host_drift_note,
                                         r.finding) if n)}
    for k in ("status", "error", "samples", "measured_ms", "iqr_ms", "min_ms", "mean_ms", "p25_ms", "p75_ms",
              "stop_reason", "max_abs_err", "rel_err", "f32_max_abs_err", "f32_rel_err", "compile_ms", "conv_ms", "conv_alone_ms", "conv_seq_quality", "convs_in_model_ms", "conversion_ms", "remainder_ms", "remainder_quality",
              "host_drift_pct", "predicted_ms",
              "speedup", "predicted_speedup", "convs_faster", "convs_total", "uncertain", "uncertain_reason",
              "quality", "quality_reason", "samples_used", "attempts", "runq_wait_pct", "faults_per_call",
              "ctx_switches_per_call", "cpu_pct", "steal_pct", "other_cpu_pct", "slowdown_pct", "loadavg"):
        row[k] = getattr(r, k)
    out = {k: _cell(v) for k, v in row.items()}
    for k in ("max_abs_err", "rel_err", "f32_max_abs_err", "f32_rel_err"):  # a NaN/inf output's error as such
        v = getattr(r, k)
        if isinstance(v, float) and not math.isfinite(v):
            out[k] = str(v)  # 'nan', 'inf': what float() reads back, not a blank
    return out


def report_rows(report: ModelReport) -> list[dict]:
    """Every row of the model CSV: layers, then (layer, path) rows, then modes."""
    inv = report.inventory
    rows = [layer_row(inv, s) for s in report.layers]
    for s in report.layers:
        for r in s.results.values():
            rows.append(layer_path_row(inv, s.layer, r, s.in_sequence.get(r.path)))
        if s.chained is not None:
            rows.append(layer_path_row(inv, s.layer, s.chained, s.in_sequence.get(s.chained.path)))
    rows += [mode_row(inv, r, report.threads) for r in report.modes]
    return rows


def rows_to_text(rows: list[dict], extra: tuple[str, ...] = ()) -> str:
    """The model CSV's text; `extra` columns after the schema's (a cluster run's host columns)."""
    import csv
    import io

    from explorer.core.report.csv_cells import fit_row

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=model_columns() + tuple(extra), extrasaction="ignore", lineterminator="\n",
                       restval="")
    w.writeheader()
    w.writerows(fit_row(r) for r in rows)  # no cell a reader refuses (csv_cells)
    return buf.getvalue()


def write_model_csv(path, rows: list[dict]) -> None:
    from explorer.core.files import atomic_write_text
    from explorer.core.output_lock import lock_output

    with lock_output(path):  # one writer per CSV, as every sink
        atomic_write_text(path, rows_to_text(rows))


class ModelCsvSink:
    """The model CSV as rows arrive (explorer.core.files.RowsFile): layer_path and mode rows appended while
    measuring, the whole report rewritten atomically once at the end; its writer's lock taken at construction
    (before any work). `on_disk` counts the rows really in the file. A failed write raises WriteFault."""

    def __init__(self, path, extra: tuple[str, ...] = ()):
        from explorer.core.files import RowsFile

        self.path = path
        self.extra = tuple(extra)  # columns after the schema's (model --cluster: host, worker)
        self.rows: list[dict] = []
        self.file = RowsFile(path, rows_to_text([], self.extra))

    @property
    def on_disk(self) -> int:
        return self.file.on_disk if self.path else len(self.rows)

    def add(self, row: dict) -> None:
        self.rows.append(row)
        self.file.add(rows_to_text([row], self.extra)[len(self.file.header):])

    def flush(self) -> None:
        self.file.flush()

    def replace(self, rows: list[dict]) -> None:
        self.rows = list(rows)
        self.file.replace([rows_to_text([r], self.extra)[len(self.file.header):] for r in self.rows])

    def close(self) -> None:
        self.file.close()
