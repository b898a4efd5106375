"""The Trace tab shows the ATen chain beside the oneDNN primitives; File > Export timeline writes the run."""

import json

import pytest

from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.timeline import CALL_CAT

# Big enough that the dense conv dispatches to oneDNN on x86 (tiny ones go to thnn_conv2d).
SPEC = "mb1ic32ih28oc32oh28kh3ph1"
PATHS = ["dense", "native", "mkldnn_prepacked"]


@pytest.fixture
def ran(make_window, qtbot):
    win = make_window(spec=parse_descriptor(SPEC), options={"paths": PATHS, "budget_ms": 20})
    with qtbot.waitSignal(win.run_finished, timeout=120_000):
        assert win.start_run()
    assert [r.path for r in win.model.results] == PATHS
    return win


def test_trace_tab_shows_the_aten_chain_beside_the_primitives(ran):
    win = ran
    tv = win.trace_view
    win.detail_tabs.setCurrentWidget(tv)
    assert win.select_path("dense")
    r = win.selected_result()
    av = tv.aten_view
    assert av.isVisible() and tv.table.isVisible()  # side by side, both on screen
    names = av.op_names()
    assert names[:4] == ["aten::conv2d", "aten::convolution", "aten::_convolution", "aten::mkldnn_convolution"]
    assert av.chain_label.text() == r.aten_ops
    assert tv.model.rowCount() == len(r.trace) and any(p.op == "convolution" for p in r.trace)
    assert "the rest" in av.split_label.text() and av.split_bar.isVisible()
    assert [name for name, _, _ in av.split_bar.segments] == ["oneDNN", "reorders", "the rest"]

    # native: no oneDNN primitive, yet the ATen side still says which kernel ran
    assert win.select_path("native")
    assert "aten::_slow_conv2d_forward" in av.op_names()
    assert tv.stack.currentWidget() is tv.placeholder

    # the prepacked route: its note says what it calls and what it packed once
    assert win.select_path("mkldnn_prepacked")
    assert av.op_names()[0] == "mkldnn::_convolution_pointwise"
    assert "_reorder_convolution_weight" in av.note_label.text() and "one-off set-up" in av.note_label.text()


def test_export_timeline_from_the_file_menu(ran, tmp_path):
    win = ran
    assert win.export_timeline_action in win.menuBar().actions()[0].menu().actions()
    out = tmp_path / "t.json"
    assert win.export_timeline(str(out))
    doc = json.loads(out.read_text())
    calls = [e for e in doc["traceEvents"] if e.get("cat") == CALL_CAT]
    assert len(calls) == sum(r.samples for r in win.model.results)
    tracks = {e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    assert tracks == set(PATHS)
