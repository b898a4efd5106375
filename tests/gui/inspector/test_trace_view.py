"""TraceView on real oneDNN traces of real paths."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from explorer.core.layout.path_layouts import inspect_path
from explorer.core.problem.spec import parse_descriptor
from explorer.core.trace.onednn import TraceSummary
from explorer.gui.inspect.time_bar import format_ms
from explorer.gui.inspect.trace_view import NO_PRIMITIVES_TEXT, TraceView

SPEC = "mb2ic17ih5oc17oh5kh3ph1"


@pytest.fixture(scope="module")
def insp():
    spec = parse_descriptor(SPEC)
    return {p: inspect_path(spec, p) for p in ("dense", "mkldnn_roundtrip", "native")}


@pytest.fixture
def view(qtbot):
    w = TraceView()
    qtbot.addWidget(w)
    w.resize(900, 520)
    w.show()
    return w


@pytest.mark.parametrize("path", ["dense", "mkldnn_roundtrip"])
def test_rows_and_reorders(view, insp, path):
    ins = insp[path]
    view.set_trace(ins.trace, ins.summary, title=path)
    m = view.model
    assert m.rowCount() == len(ins.trace) > 0
    assert view.stack.currentIndex() == 1
    for row, p in enumerate(ins.trace):
        assert m.data(m.index(row, 0)) == str(row + 1)
        assert m.data(m.index(row, 1)).startswith(p.op)
        assert m.data(m.index(row, 2)) == p.impl
        bg = m.data(m.index(row, 3), Qt.BackgroundRole)
        tip = m.data(m.index(row, 0), Qt.ToolTipRole)
        if p.op == "reorder":
            assert bg is not None and bg.color().red() > 200 and bg.color().blue() < 50  # amber
            assert "reorder copies a tensor" in tip and f"{p.src} \u2192 {p.dst}" in tip
            assert m.data(m.index(row, 4)) == f"{p.src} {p.args['src'].dt}"
        elif p.op == "convolution":
            assert m.data(m.index(row, 1), Qt.FontRole).bold()
            assert m.data(m.index(row, 5)) == f"{p.wei} f32"
        assert m.data(m.index(row, 8)) == format_ms(p.time_ms)
    reorders = [r for r in range(m.rowCount()) if m.primitive(r).op == "reorder"]
    assert len(reorders) == ins.summary.reorder_count


def test_summary_matches_trace_summary(view, insp):
    ins = insp["dense"]
    s = ins.summary
    view.set_trace(ins.trace, s)
    text = view.summary_text()
    assert f"<b>{s.reorder_count}</b> reorders" in text
    assert format_ms(s.conv_time_ms) in text and format_ms(s.reorder_time_ms) in text
    assert s.conv_impl in text
    segs = {n: v for n, v, _ in view.bar.segments}
    assert segs["convolution"] == pytest.approx(s.conv_time_ms)
    assert segs["reorders"] == pytest.approx(s.reorder_time_ms)
    # Without a summary the view computes the same one.
    view.set_trace(ins.trace)
    assert view.summary == TraceSummary.from_primitives(ins.trace)


def test_native_and_empty_states(view, insp):
    ins = insp["native"]
    assert ins.trace == []
    view.set_trace(ins.trace, ins.summary, title="native")
    assert view.stack.currentWidget() is view.placeholder
    assert view.placeholder.text() == NO_PRIMITIVES_TEXT
    assert "No oneDNN primitive ran" in NO_PRIMITIVES_TEXT and "PyTorch's own kernels" in NO_PRIMITIVES_TEXT
    assert view.model.rowCount() == 0
    view.set_trace(None)
    assert "No trace yet" in view.placeholder.text()


def test_selecting_a_row_shows_the_raw_line(view, insp):
    ins = insp["mkldnn_roundtrip"]
    view.set_trace(ins.trace, ins.summary)
    view.table.selectRow(2)
    assert view.raw_line.text() == ins.trace[2].raw
    assert view.raw_line.text().startswith("onednn_verbose")
    assert view.grab().width() > 0
