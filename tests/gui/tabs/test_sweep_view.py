"""SweepView: vary validation, real tiny sweeps (one and two fields, a batch), Stop, CSV on disk, shutdown."""

import time

import pytest

TINY = "mb1ic8ih8oc8kh3ph1"
PATHS2 = ("dense", "mkldnn")


@pytest.fixture
def make_view(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("MKLDNN_EXPLORER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("MKLDNN_EXPLORER_NO_DIALOGS", "1")
    from explorer.core.jobs.options import RunOptions
    from explorer.gui.jobs import sweep_worker
    from explorer.gui.tabs.sweep_view import SweepView

    made = []

    def make(base=TINY, paths=PATHS2, budget_ms=5.0, csv=None):
        v = SweepView()
        qtbot.addWidget(v)
        v.resize(1000, 560)
        v.show()
        if base:
            v.set_base(base)
        v.set_options(RunOptions(paths=paths, budget_ms=budget_ms, trace=False))
        v.set_csv_sink(csv)
        made.append(v)
        return v

    yield make
    for v in made:
        assert v.shutdown(5000)
    assert sweep_worker.live_threads() == 0, "a test left a sweep thread running"


def _run(qtbot, v, timeout=30_000):
    with qtbot.waitSignal(v.finished, timeout=timeout) as blocker:
        assert v.run()
    v.redraw_now()
    return blocker.args[0]


def test_vary_validation_marks_the_field_and_disables_run(make_view):
    v = make_view()
    v.set_vary("mb", "1:64:x1")
    assert not v.run_button.isEnabled()
    assert "border" in v.values1.styleSheet()
    assert "mb" in v.message.text() and "never grows" in v.message.text()
    v.set_vary("mb", "1:64:x2")
    assert v.run_button.isEnabled() and v.values1.styleSheet() == ""
    assert v.point_count == 7 and v.message.text().startswith("7 points")
    v.set_vary("mb", "divisors")
    assert not v.run_button.isEnabled() and "only for g" in v.message.text()
    v.set_vary("g", "divisors", "ic", "8,x")
    assert not v.run_button.isEnabled()
    assert "border" in v.values2.styleSheet() and v.values1.styleSheet() == ""
    v.set_vary("g", "divisors", "ic", "8,16")
    assert v.run_button.isEnabled() and v.point_count == 4 + 4  # g | gcd(ic, 8): 4 values for 8 and 16
    v.set_vary("g", "1,2", "g", "1")
    assert not v.run_button.isEnabled()
    # typing goes through the same check
    v.set_vary("mb", "1,2")
    v.values1.setText("1,-2")
    assert not v.run_button.isEnabled() and "negative" in v.message.text()
    assert make_view(base=None).run_button.isEnabled() is False


def test_one_field_sweep_draws_one_curve_per_path(make_view, qtbot, tmp_path):
    from explorer.core.report.results import read_csv

    csv = tmp_path / "sweep.csv"
    v = make_view(csv=csv)
    v.set_vary("g", "divisors")  # 1, 2, 4, 8
    got = []
    v.result_ready.connect(got.append)
    assert _run(qtbot, v) is False
    assert len(got) == 8 and len(v.results()) == 8
    assert set(v.line.curves) == set(PATHS2)
    assert all(v.line.point_count(p) == 4 for p in PATHS2)
    assert v.log_x.isChecked()  # divisors are geometric
    assert set(v.speedup.curves) == {"mkldnn"}  # baseline dense
    rows = read_csv(csv)
    assert len(rows) == 8 and {r["vary"] for r in rows} == {"g=1", "g=2", "g=4", "g=8"}
    assert f"Rows are in {csv}." in v.live_label.text()
    # hover shows the exact row
    xs, ys, texts = v.line._hover_pts
    from PySide6.QtCore import QPointF

    text = v.line.hover.show_at(QPointF(float(xs[0]), float(ys[0])))
    assert "mb1" in text and "median" in text and "GFLOP/s" in text
    # GFLOP/s toggle and log y redraw the same points
    v.metric_combo.setCurrentIndex(1)
    v.log_y.setChecked(True)
    assert all(v.line.point_count(p) == 4 for p in PATHS2)
    assert v.progress.value() == v.progress.maximum() == 4
    v.grab().save("/tmp/sweep_shots/sweep_one_field.png")


def test_stop_keeps_finished_rows_and_the_csv_is_valid(make_view, qtbot, tmp_path):
    from explorer.core.report.results import read_csv

    csv = tmp_path / "stopped.csv"
    v = make_view(budget_ms=20, csv=csv)
    v.set_vary("mb", "1:40:+1")
    with qtbot.waitSignal(v.result_ready, timeout=20_000):
        assert v.run()
    with qtbot.waitSignal(v.finished, timeout=10_000) as blocker:
        v.stop()
    assert blocker.args == [True]
    n = len(v.results())
    assert 1 <= n < 80
    rows = read_csv(csv)
    assert len(rows) == n  # every finished row is on disk, nothing half-written
    v.redraw_now()
    assert sum(v.line.point_count(p) for p in PATHS2) == sum(1 for r in v.results() if r.status == "ok")
    assert "stopped" in v.live_label.text().lower()
    assert v.run_button.isEnabled() and not v.stop_button.isEnabled()


def test_two_field_sweep_fills_the_heatmap(make_view, qtbot):
    v = make_view()
    v.set_vary("ic", "8,16,32", "g", "1,2")
    assert v.point_count == 6
    _run(qtbot, v)
    assert v.stack.currentWidget() is v.heatmap and not v.speedup.isVisible()
    assert v.heatmap.grid.shape == (3, 2) and v.heatmap.filled() == 6
    assert set(v.heatmap.legend_paths) <= set(PATHS2)
    from PySide6.QtCore import QPointF

    assert "fastest" in v.heatmap.hover.show_at(QPointF(0, 0))
    v.grab().save("/tmp/sweep_shots/sweep_two_field_fastest.png")
    v.heat_combo.setCurrentIndex(1)  # speedup of mkldnn vs dense
    v.heat_path.setCurrentText("mkldnn")
    v.redraw_now()
    assert v.heatmap.filled() == 6 and v.heatmap.colorbar.isVisible()
    assert "x vs dense" in v.heatmap.hover.show_at(QPointF(2, 1))
    v.grab().save("/tmp/sweep_shots/sweep_two_field_speedup.png")


def test_batch_draws_one_bar_group_per_layer(make_view, qtbot, tmp_path):
    v = make_view()
    assert v.set_batch("quick")
    assert v.point_count == 7 and v.message.text().startswith("batch quick: 7 problems")
    assert not v.values1.isEnabled()
    _run(qtbot, v)
    assert v.stack.currentWidget() is v.bars
    assert set(v.bars.bars) == set(PATHS2) and v.bars.group_count() == 7
    ticks = v.bars.plot.getAxis("bottom")._tickLevels[0]
    assert len(ticks) >= 4 and all(len(t[1]) <= 19 for t in ticks)
    xs, ys, texts = v.bars._hover_pts
    from PySide6.QtCore import QPointF

    assert "quick:stem_3x3_s2" in v.bars.hover.show_at(QPointF(float(xs[0]), float(ys[0]) / 2))
    assert len(v.speedup.curves) == 1
    v.grab().save("/tmp/sweep_shots/sweep_batch.png")
    assert v.export_chart(str(tmp_path / "bars.png")) and (tmp_path / "bars.png").stat().st_size > 1000
    # a batch file that does not parse: Run is off and the message says why
    bad = tmp_path / "bad.txt"
    bad.write_text("# nothing\n")
    assert not v.set_batch(str(bad))
    assert not v.run_button.isEnabled() and "no convolution lines" in v.message.text()
    v.set_batch(None)
    assert v.values1.isEnabled()


def test_shutdown_mid_sweep_returns_quickly(make_view, qtbot):
    from explorer.gui.jobs import sweep_worker

    v = make_view(budget_ms=200)
    v.set_vary("mb", "1:30:+1")
    with qtbot.waitSignal(v.result_ready, timeout=20_000):
        assert v.run()
    t0 = time.monotonic()
    assert v.shutdown(5000)
    assert time.monotonic() - t0 < 2.0
    assert not v.is_running() and sweep_worker.live_threads() == 0
    assert len(v.results()) >= 1


def test_line_charts_update_their_items_in_place(qtbot):
    """Same curves: a redraw reuses the items (setData); a new path or baseline rebuilds; hover follows the data."""
    from PySide6.QtCore import QPointF

    from explorer.core.problem.sweep_plan import SweepPoint
    from explorer.core.report.sweep_data import SweepData
    from explorer.gui.charts.line_charts import LineChart, SpeedupChart

    data = SweepData()
    data.configure([SweepPoint(i, {"ic": x}) for i, x in enumerate((8, 16, 32, 64))], "line", paths=PATHS2)

    def row(i, path, med, desc="d"):
        return {"path": path, "status": "ok", "median_ms": med, "p25_ms": med * 0.9, "p75_ms": med * 1.1,
                "gflops": 10 / med, "desc": f"{desc}{i}", "vary": f"ic={(8, 16, 32, 64)[i]}"}

    line, speed = LineChart(), SpeedupChart()
    for w in (line, speed):
        qtbot.addWidget(w)
    for i in (2, 0):  # out of order: curves are drawn sorted by x
        data.add(i, row(i, "dense", 2.0 + i))
        data.add(i, row(i, "mkldnn", 1.0 + i))
    line.redraw(data)
    speed.redraw(data)
    items = list(line._items) + list(speed._items)
    assert line.point_count("dense") == 2 and set(speed.curves) == {"mkldnn"}
    for i in (1, 3):
        data.add(i, row(i, "dense", 2.0 + i))
        data.add(i, row(i, "mkldnn", 1.0 + i))
    data.add(0, row(0, "mkldnn", 0.5, desc="replaced"))  # a replaced row keeps its place
    line.set_axes(metric="gflops", log_x=True, log_y=True)
    line.redraw(data)
    speed.redraw(data)
    assert list(line._items) + list(speed._items) == items  # the same items, new data
    assert all(line.point_count(p) == 4 for p in PATHS2)
    x, y = line.curves["mkldnn"].getOriginalDataset()
    assert list(x) == [8, 16, 32, 64] and y[0] == pytest.approx(20.0)
    x, y = speed.curves["mkldnn"].getOriginalDataset()
    assert y[0] == pytest.approx(4.0) and y[1] == pytest.approx(1.5)
    xs, ys, texts = line._hover_pts  # built now, on first use
    assert len(xs) == 8 and "replaced0" in line.hover.show_at(QPointF(float(xs[4]), float(ys[4])))
    assert "4x vs dense" in speed.hover.show_at(QPointF(*(float(a[0]) for a in speed._hover_pts[:2])))
    # a failed row drops its point; a baseline adds curves: the items are rebuilt
    data.add(3, {"path": "dense", "status": "error", "error": "boom", "desc": "d3", "vary": "ic=64"})
    data.add_baseline([row(i, "dense", 3.0) for i in range(4)], "old.csv")
    line.redraw(data)
    speed.redraw(data)
    assert line.point_count("dense") == 3 and set(line.baseline_curves) == {("old.csv", "dense")}
    assert not set(line._items) & set(items)
    assert len(line._hover_pts[0]) == 3 + 4 + 4
    assert len(speed.curves["mkldnn"].getOriginalDataset()[0]) == 3
