"""#33's rule for numbers read from files, in every part of a session file: a hand-edited huge number (1e308,
10**30), text where a number goes or a negative GFLOP/s once opened and crashed the window (a chart's range
overflowed to inf, a table cell's int64 overflowed in every paint, a NaN point segfaulted the roofline). The
file is now refused with one sentence naming the key; a figure of a sane size still opens."""

import json

import pytest

from explorer.core.errors import InputError
MAX_FILE_NUMBER = 2 ** 53  # explorer.core.report.results.MAX_FILE_NUMBER
from explorer.core.report.sweep_data import result_row
from explorer.core.session.state import ModelDone
from explorer.core.session.store import load_session
from tests.core.session.test_session_state import _report, _row
from tests.core.session.test_session_window_part import _state

HUGE = [1e308, 10 ** 30, -1e308, "inf", "1e308", "abc"]
# (the part's name, where in the JSON, keys to the value)
PLACES = [
    ("a mode's time", ("model", "modes", 0, "measured_ms")),
    ("a mode's speedup", ("model", "modes", 0, "speedup")),
    ("a mode's sample count", ("model", "modes", 0, "samples")),
    ("a layer's best time", ("model", "layers", 0, "best_ms")),
    ("a layer's margin", ("model", "layers", 0, "margin")),
    ("the report's threads", ("model", "threads")),
    ("a baseline row's time", ("window", "baselines", 0, "rows", 0, "median_ms")),
    ("a baseline row's threads", ("window", "baselines", 0, "rows", 0, "threads")),
    ("a row's GFLOP/s", ("results", 0, "gflops")),
    ("a row's time", ("results", 0, "median_ms")),
    ("a row's threads", ("results", 0, "threads")),
    ("a row's samples", ("results", 0, "samples_ms")),
]


def _saved(tmp_path) -> dict:
    s = _state()
    s.apply(ModelDone(_report()))
    s.window["baselines"][0]["rows"].append(result_row(_row("mkldnn", 0.5)))
    path = tmp_path / "whole.json"
    s.save(path)
    return json.loads(path.read_text())


def _set(data: dict, keys, value) -> dict:
    if keys[-1] == "samples_ms":  # a list of per-call times
        value = [value, 1.0]
    d = json.loads(json.dumps(data))
    o = d
    for k in keys[:-1]:
        o = o[k]
    o[keys[-1]] = value
    return d


def test_the_saved_session_opens(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(json.dumps(_saved(tmp_path)))
    load_session(p)


@pytest.mark.parametrize("value", HUGE, ids=str)
@pytest.mark.parametrize("what, keys", PLACES, ids=[w for w, _ in PLACES])
def test_a_huge_or_text_number_anywhere_is_refused_in_one_sentence(tmp_path, what, keys, value):
    p = tmp_path / "s.json"
    p.write_text(json.dumps(_set(_saved(tmp_path), keys, value)))
    with pytest.raises(InputError) as e:
        load_session(p)
    msg = str(e.value)
    assert "\n" not in msg and msg.endswith("."), msg
    assert keys[-1] in msg, msg  # the key named


@pytest.mark.parametrize("keys", [k for _, k in PLACES if k[-1] not in ("threads", "samples")])
def test_a_large_figure_of_a_sane_size_still_opens(tmp_path, keys):
    p = tmp_path / "s.json"
    p.write_text(json.dumps(_set(_saved(tmp_path), keys, float(MAX_FILE_NUMBER))))
    load_session(p)


@pytest.mark.parametrize("column, cell", [("threads", "1e30"), ("median_ms", "1e308"), ("gflops", "-1e300")])
def test_a_csv_number_beyond_the_file_rule_names_its_line(tmp_path, column, cell):
    """The same rule for a CSV (a Compare baseline, --resume, compare): a number beyond 2**53 is refused with its
    line and column, as a non-finite one is."""
    from explorer.core.report.results import CSV_COLUMNS, Result, read_csv, rows_to_csv_text
    from tests.core.session.test_session_window_part import SPEC

    row = Result(spec=SPEC, path="dense", threads=1, status="ok", median_ms=1.5, gflops=2.0, samples=5).row()
    row[column] = cell
    p = tmp_path / "r.csv"
    p.write_text(rows_to_csv_text([row], CSV_COLUMNS))
    with pytest.raises(InputError) as e:
        read_csv(p)
    assert "line 2" in str(e.value) and column in str(e.value) and "\n" not in str(e.value)
