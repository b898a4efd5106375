"""Issue 12, item 1: a sweep is saved like a run: CSV export (the CLI's schema), sessions, Compare baseline."""

import csv

from explorer.core.report.results import CSV_COLUMNS

TINY = "mb1ic8ih8oc8kh3ph1"


def _sweep(win, qtbot, vary=("g", "1,2")):
    from explorer.core.problem.spec import parse_descriptor

    win.panel.set_spec(parse_descriptor(TINY))
    win.panel.set_options(["dense", "mkldnn"], 1, 5, False)
    sv = win.sweep_view
    win.tabs.setCurrentIndex(1)
    sv.set_vary(*vary)
    with qtbot.waitSignal(sv.finished, timeout=60_000):
        assert sv.run()
    sv.redraw_now()
    return sv


def _rows(path):
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        return r.fieldnames, list(r)


def test_sweep_exports_saves_restores_and_becomes_a_baseline(make_window, qtbot, tmp_path):
    win = make_window()
    sv = _sweep(win, qtbot)
    assert len(sv.results()) == 4 and sv.export_button.isEnabled()
    # Ctrl+E on the Sweep tab writes the sweep's rows, not the (empty) Run table
    out = tmp_path / "s.csv"
    assert win.export_csv(str(out), ask=False)
    head, rows = _rows(out)
    assert tuple(head) == CSV_COLUMNS
    assert sorted((r["vary"], r["path"]) for r in rows) == [("g=1", "dense"), ("g=1", "mkldnn"),
                                                            ("g=2", "dense"), ("g=2", "mkldnn")]
    assert "4 sweep rows" in win.status_label.text()
    # the explicit menu action works from any tab
    win.tabs.setCurrentIndex(0)
    out2 = tmp_path / "s2.csv"
    assert win.export_csv(str(out2), ask=False, which="sweep")
    assert len(_rows(out2)[1]) == 4
    # sessions keep the sweep and the options it was measured with
    win.panel.set_options(["dense"], 2, 77, True)  # changed after the sweep: not what the rows were measured with
    sess = tmp_path / "sess.json"
    assert win.save_session(str(sess), ask=False)
    win2 = make_window()
    assert win2.open_session(str(sess))
    sv2 = win2.sweep_view
    assert len(sv2.results()) == 4
    assert sv2.data.mode == "line" and sv2.data.xs == [1, 2] and sv2.data.ok_count() == 4
    assert set(sv2.line.curves) == {"dense", "mkldnn"}
    assert sv2._run_setup["paths"] == "dense,mkldnn" and sv2._run_setup["budget_ms"] == 5
    assert sv2.values1.text() == "1,2" and sv2.field1.currentText() == "g"
    out3 = tmp_path / "s3.csv"
    assert sv2.export_csv(str(out3))
    assert [r["median_ms"] for r in _rows(out3)[1]] == [r["median_ms"] for r in rows]
    # and usable as a Compare baseline: the same rows against themselves are "no difference"
    sv2.request_baseline()
    bv = win2.baseline_view
    assert len(bv.baselines) == 1
    label = next(iter(bv.baselines))
    assert label.startswith("sweep g=1,2")
    bv.set_current(win2.all_results())
    bv.set_pair(label)
    c = bv.comparison
    assert len(c.matched) == 4
    if c.uncertain == 4:  # the machine was busy: every pair holds a noisy row, so no finding
        assert c.verdict == "uncertain" and c.geomean is None
    else:
        assert c.verdict == "no difference" and abs(c.geomean - 1.0) < 1e-9


def test_switching_the_batch_clears_the_old_bars(make_window):
    win = make_window()
    sv = win.sweep_view
    assert sv.set_batch("quick")
    from explorer.core.report.results import Result

    p = sv.points[0]
    sv.data.configure(sv.points, "batch", paths=["dense"])
    sv.data.add(p.index, Result(spec=p.spec, path="dense", threads=1, median_ms=1.0, p25_ms=1.0, p75_ms=1.0))
    sv.redraw_now()
    assert sv.bars.group_count() == 1
    assert sv.set_batch("mobilenet_dw")
    sv.redraw_now()
    assert sv.bars.group_count() == 0
    assert [full for _, full in sv.data.layers][0].startswith("mobilenet:")
