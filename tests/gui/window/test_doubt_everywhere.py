"""One visual language for doubt in every view (issue 24, point 3): a noisy row is marked in the Sweep tab (the
crosses with their key, the banner, the status), the Roofline (crossed points), the Compare tab (`~` on the
medians and the speedup) and the Trace pane (a disturbed traced call flagged); a new baseline becomes A."""

from PySide6.QtGui import QColor

from explorer.core.measure import interference as itf
from explorer.core.measure.machine import Peak
from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.results import Result

DESC = "mb1ic8ih8oc8kh3ph1"
REASON = "other programs held the cores: the measuring threads waited for a core 47% of the loop"


def _result(path, median, quality="ok", ic=8, threads=1, **kw):
    spec = parse_descriptor(DESC).replace(ic=ic)
    return Result(spec=spec, path=path, threads=threads, samples=10, median_ms=median, p25_ms=median * 0.99,
                  p75_ms=median * 1.01, iqr_ms=median * 0.02, gflops=spec.ops / (median / 1e3) / 1e9,
                  quality=quality, quality_reason=REASON if quality == "noisy" else "", **kw)


def _far(c1: QColor, c2: QColor) -> int:
    return abs(c1.red() - c2.red()) + abs(c1.green() - c2.green()) + abs(c1.blue() - c2.blue())


def test_sweep_marks_noisy_points_with_a_key_a_banner_and_the_status(make_window, qtbot, monkeypatch):
    from explorer.gui.common.colors import PATH_COLORS
    from explorer.gui.common.doubt import MARK_NAME
    from explorer.gui.jobs import measure

    monkeypatch.setattr(measure, "IN_CHILD", False)
    monkeypatch.setattr(itf, "judge", lambda i, min_samples: itf.Verdict("noisy", REASON))
    win = make_window(spec=parse_descriptor(DESC), options={"paths": ["dense", "mkldnn"], "budget_ms": 5,
                                                            "trace": False})
    win.tabs.setCurrentIndex(1)
    sv = win.sweep_view
    sv.set_vary("g", "1,2")
    with qtbot.waitSignal(sv.finished, timeout=120_000):
        assert sv.run()
    sv.redraw_now()
    rows = sv.results()
    assert rows and all(r.quality == "noisy" for r in rows)
    n = len(rows)
    assert f"{n} rows: 0 trusted, {n} noisy, 0 failed" in win.status_label.text()
    assert sv.doubt.isVisible() and f"{n} of {n} rows are noisy" in sv.doubt.text() and "47%" in sv.doubt.text()
    assert any(name == MARK_NAME for name, _, _ in sv.line.keys) and MARK_NAME in sv.line.plot.titleLabel.text
    # the crosses are in no path's colour (they were amber, beside mkldnn's orange)
    pen = sv.line.noisy_marks.opts["symbolPen"]
    color = pen.color() if hasattr(pen, "color") else QColor(pen)
    assert all(_far(color, QColor(c)) > 120 for c in PATH_COLORS.values())
    x, _ = sv.line.noisy_marks.getOriginalDataset()
    assert len(x) == n


def test_count_text_counts_noisy_rows_apart():
    from explorer.core.report.counts import count_text

    rows = [_result("dense", 1.0), _result("mkldnn", 0.5, "noisy"), {"status": "ok", "quality": "noisy"},
            {"status": "unsupported"}, {"status": "error"}]
    assert count_text(rows) == "5 rows: 1 trusted, 2 noisy, 1 failed, 1 not run (unsupported or skipped)"
    assert count_text([_result("dense", 1.0)], "paths") == "1 path: 1 trusted, 0 noisy, 0 failed"


def test_roofline_crosses_noisy_points(qtbot):
    from explorer.core.session.state import PeakMeasured
    from explorer.gui.common.doubt import MARK_NAME
    from explorer.gui.common.session_bridge import SessionBridge
    from explorer.gui.tabs.roofline_view import RooflineView

    bridge = SessionBridge()
    v = RooflineView(bridge)
    qtbot.addWidget(v)
    v.resize(1000, 560)
    v.show()
    bridge.session.apply(PeakMeasured(Peak(300.0, 600.0, 12.0, 1, "2025-01-01T00:00:00", "test")))
    rows = [_result("dense", 1.0, ic=8), _result("mkldnn", 0.4, "noisy", ic=8), _result("dense", 2.0, ic=16)]
    bridge.session.set_results(rows, rows[0].spec)
    v.redraw()
    assert v.noisy_points == 1
    assert [p.noisy for p in v.roof.points].count(True) == 1
    names = [label.text for _, label in v.legend.items]
    assert MARK_NAME in names
    p = next(p for p in v.roof.points if p.noisy)
    assert "noisy" in v.hover_text_at(p.ai, p.gflops)


def test_roofline_legend_is_outside_the_plot_area(qtbot):
    from explorer.core.session.state import PeakMeasured
    from explorer.gui.common.session_bridge import SessionBridge
    from explorer.gui.tabs.roofline_view import RooflineView

    bridge = SessionBridge()
    v = RooflineView(bridge)
    qtbot.addWidget(v)
    v.resize(1000, 560)
    v.show()
    bridge.session.apply(PeakMeasured(Peak(300.0, 600.0, 12.0, 1, "2025-01-01T00:00:00", "test")))
    rows = [_result(p, m, ic=ic) for ic in (8, 16) for p, m in (("dense", 1.0), ("channels_last", 0.8),
                                                                ("native", 1.5), ("mkldnn", 0.5))]
    bridge.session.set_results(rows, rows[0].spec)
    v.redraw()
    qtbot.wait(50)
    plot_area = v.plot.getViewBox().sceneBoundingRect()
    legend = v.legend.sceneBoundingRect()
    assert legend.width() > 20 and not legend.intersects(plot_area), (legend, plot_area)


def test_compare_marks_uncertain_pairs_with_tilde(qtbot, tmp_path):
    from explorer.core.report.results import write_csv
    from explorer.gui.tabs.baseline_view import COLUMNS, BaselineView

    bv = BaselineView()
    qtbot.addWidget(bv)
    bv.show()
    a = [_result("dense", 1.0), _result("mkldnn", 0.5, "noisy")]
    path = tmp_path / "a.csv"
    write_csv(path, a)
    assert bv.open_csv(path)
    bv.set_current([_result("dense", 0.5), _result("mkldnn", 0.25)])
    m = bv.model
    rows = {m.data(m.index(i, COLUMNS.index("path"))): i for i in range(m.rowCount())}

    def cell(path, col):
        return m.data(m.index(rows[path], COLUMNS.index(col)))

    assert cell("mkldnn", "verdict") == "uncertain"
    assert cell("mkldnn", "speedup").startswith("~") and cell("mkldnn", "A median ms").startswith("~")
    assert not cell("mkldnn", "B median ms").startswith("~")  # the quiet side stays plain
    assert not cell("dense", "speedup").startswith("~") and not cell("dense", "A median ms").startswith("~")
    assert bv.doubt.isVisible() and "1 matched pair has a noisy side" in bv.doubt.text()


def test_a_new_baseline_becomes_a(make_window, qtbot, tmp_path):
    from explorer.core.report.results import write_csv

    win = make_window(spec=parse_descriptor(DESC))
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    write_csv(first, [_result("dense", 1.0)])
    write_csv(second, [_result("dense", 2.0)])
    assert win.open_baseline(str(first))
    assert win.baseline_view.a_combo.currentText() == "first.csv"
    assert win.open_baseline(str(second))  # what Ctrl+B does once its dialog returns a file
    assert win.baseline_view.a_combo.currentText() == "second.csv"
    assert win.baseline_view.comparison.a_label == "second.csv"


def test_trace_pane_flags_a_disturbed_traced_call(qtbot):
    from explorer.core.trace.onednn import parse_line
    from explorer.gui.inspect.trace_view import TraceView

    line = ("onednn_verbose,v1,primitive,exec,cpu,convolution,brg_conv_fwd:avx512_core,forward_training,"
            "src:f32::blocked:acdb::f0 wei:f32:a:blocked:Acdb16a::f0 bia:f32::blocked:a::f0 dst:f32::blocked:acdb::f0,"
            ",alg:convolution_direct,mb1_ic8oc8_ih8oh8kh3sh1dh0ph1_iw8ow8kw3sw1dw0pw1,8.279")
    prim = parse_line(line)
    assert prim is not None
    tv = TraceView()
    qtbot.addWidget(tv)
    tv.show()
    quiet = _result("mkldnn", 1.02)
    tv.set_trace([prim], None, "mkldnn")
    tv.set_aten(quiet)  # one call of 8.279 ms beside a 1.02 ms median: that call was disturbed
    assert tv.doubt.isVisible() and "8.28 ms" in tv.doubt.text()
    assert "~8.279" in tv.summary_text()
    assert tv.model.data(tv.model.index(0, 8)).startswith("~")
    ok = _result("mkldnn", 8.0)
    tv.set_trace([prim], None, "mkldnn")
    tv.set_aten(ok)  # a traced call near its median: nothing to flag
    assert not tv.doubt.isVisible() and "~" not in tv.summary_text()
    noisy = _result("mkldnn", 8.0, "noisy")
    tv.set_trace([prim], None, "mkldnn")
    tv.set_aten(noisy)
    assert tv.doubt.isVisible() and "noisy" in tv.doubt.text() and "~8.279" in tv.summary_text()
