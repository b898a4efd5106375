"""CSV schema, atomic writes, reading back (pandas-compatible) and clear errors on bad files."""

import csv
import os

import pytest

from explorer.core.errors import InputError
from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.results import (
    CSV_COLUMNS,
    REQUIRED_COLUMNS,
    CsvSink,
    Result,
    atomic_write_text,
    check_writable,
    read_csv,
)

REQUIRED = ("desc, name, mb, g, ic, ih, iw, oc, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, dtype, bias, path, threads, "
            "status, error, samples, median_ms, iqr_ms, min_ms, mean_ms, gflops, max_abs_err, input_bytes, "
            "weight_bytes, output_bytes, torch_version, onednn_version, isa, started_at").split(", ")


def _result(path="dense", status="ok", median=1.5):
    spec = parse_descriptor('mb2ic16ih14oc16oh14kh3ph1n"layer, with comma"')
    return Result(spec=spec, path=path, threads=2, status=status, samples=7, median_ms=median, iqr_ms=0.1,
                  min_ms=1.0, mean_ms=1.6, gflops=1.2, max_abs_err=1e-6, input_bytes=10, weight_bytes=20,
                  output_bytes=30, torch_version="2.13.0", onednn_version="3.12.0", isa="AVX512",
                  started_at="2026-11-30T00:00:00", error="" if status == "ok" else 'reason "quoted"')


def test_required_columns_in_order():
    assert list(REQUIRED_COLUMNS) == REQUIRED
    assert list(CSV_COLUMNS[: len(REQUIRED)]) == REQUIRED


def test_row_values_and_dilation_is_benchdnn_style():
    row = parse_descriptor("mb1ic4ih9oc4kh3ph2dh1")
    r = Result(spec=row, path="dense", threads=1).row()
    assert r["dh"] == "1" and r["dw"] == "1" and r["oh"] == "9" and r["bias"] == "1"


def test_sink_writes_every_row_atomically(tmp_path):
    out = tmp_path / "r.csv"
    sink = CsvSink(out)
    sink.add(_result("dense"))
    first = out.read_text()
    sink.add(_result("mkldnn", "unsupported", None))
    rows = list(csv.DictReader(out.open()))
    assert first.count("\n") == 2 and len(rows) == 2
    assert rows[0]["name"] == "layer, with comma" and rows[1]["error"] == 'reason "quoted"'
    sink.close()
    assert [p.name for p in tmp_path.iterdir()] == ["r.csv"]  # no temp files, nor the writer's lock, left behind


def test_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    out = tmp_path / "r.csv"
    atomic_write_text(out, "old\n")

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write_text(out, "new\n")
    assert out.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["r.csv"]


def test_read_back_types(tmp_path):
    out = tmp_path / "r.csv"
    sink = CsvSink(out)
    sink.add(_result())
    sink.add(_result("mkldnn", "unsupported", None))
    rows = read_csv(out)
    assert rows[0]["median_ms"] == 1.5 and rows[0]["threads"] == 2 and rows[1]["median_ms"] is None


def test_loads_in_pandas_when_available(tmp_path):
    pd = pytest.importorskip("pandas")
    out = tmp_path / "r.csv"
    CsvSink(out).add(_result())
    df = pd.read_csv(out)
    assert list(df.columns) == list(CSV_COLUMNS) and df["median_ms"][0] == 1.5


@pytest.mark.parametrize("text, words", [
    ("a,b\n1,2\n", "line 1 is not an MKLDNN Explorer results header"),
    (None, "line 3: wrong number of cells"),
    (None, "line 2: column median_ms holds"),
])
def test_bad_files_name_the_line(tmp_path, text, words):
    out = tmp_path / "bad.csv"
    if text is None:
        CsvSink(out).add(_result())
        good = out.read_text()
        if "wrong number" in words:
            text = good + good.splitlines()[1][:40] + "\n"
        else:
            text = good.replace(",1.5,", ",fast,", 1)
    out.write_text(text)
    with pytest.raises(InputError, match=words):
        read_csv(out)


def test_missing_file_and_unwritable_output(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_csv(tmp_path / "nope.csv")
    with pytest.raises(InputError, match="does not exist"):
        check_writable(tmp_path / "no" / "dir.csv")
    with pytest.raises(InputError, match="is a folder"):
        check_writable(tmp_path)
    (tmp_path / "x.csv").write_text("keep")
    with pytest.raises(InputError, match="--force"):
        check_writable(tmp_path / "x.csv", overwrite=False)
