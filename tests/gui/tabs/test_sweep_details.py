"""Issue 12, "also seen": skipped points drawn, ticks at the swept values, dtype sweeps not drawn as lines,
the preview counts what the memory guard will refuse, ETAs from measured path times, no stale hover box."""

import pytest

from explorer.core.jobs.options import RunOptions
from explorer.core.report.results import Result


@pytest.fixture
def view(qtbot):
    from explorer.gui.tabs.sweep_view import SweepView

    v = SweepView()
    qtbot.addWidget(v)
    v.resize(1000, 560)
    v.show()
    v.set_base("mb1ic8ih8oc8kh3ph1")
    v.set_options(RunOptions(paths=("dense", "mkldnn"), budget_ms=5.0, trace=False))
    yield v
    assert v.shutdown(2000)


def _fill(v, rows):
    """rows: point index -> {path: median} or a skip reason (what the worker delivers)."""
    from explorer.core.jobs.sweep import skipped_row

    v._configure(v.points, v.mode, ("dense", "mkldnn"), v.varies())
    for p in v.points:
        got = rows.get(p.index)
        if isinstance(got, str):
            p.error = got
            row, res = skipped_row(p, 1)
            v.data.add(p.index, res if res is not None else row)
        elif got:
            for path, ms in got.items():
                v.data.add(p.index, Result(spec=p.spec, path=path, threads=1, median_ms=ms, p25_ms=ms, p75_ms=ms,
                                           vary=p.label))
    v.redraw_now()


def test_skipped_points_are_marked_and_ticks_are_the_swept_values(view):
    v = view
    v.set_vary("g", "1,2")
    _fill(v, {0: {"dense": 1.0, "mkldnn": 2.0}, 1: "refused by the memory guard"})
    assert v.line.skipped_x == [2]
    assert v.line._skip_marks[0].toolTip() == "refused by the memory guard"
    ticks = v.line.plot.getAxis("bottom")._tickLevels
    assert [t[0] for t in ticks[0]] == [1, 2]  # not 0.6, 0.8, ... around a single point


def test_a_dtype_sweep_is_points_not_a_line(view):
    v = view
    v.set_vary("dtype", "f32,bf16")
    _fill(v, {0: {"dense": 1.0, "mkldnn": 2.0}, 1: {"dense": 1.5, "mkldnn": 1.0}})
    assert v.data.categorical_x
    for chart in (v.line, v.speedup):
        for curve in chart.curves.values():
            assert curve.opts["pen"] is None and curve.opts["symbol"] == "o"


def test_preview_counts_points_the_memory_guard_will_refuse(view, monkeypatch):
    from explorer.core.problem import memory

    v = view
    v.set_vary("mb", "1,4096")
    assert "memory guard" not in v.message.text()
    need_small = memory.estimate_bytes(v.points[0].spec, ("dense", "mkldnn"))
    monkeypatch.setattr(memory, "available_bytes", lambda: int(need_small * 10))
    v.validate()
    text = v.message.text()
    assert "1 too large for the free memory" in text and "→ 2 runs" in text


def test_run_eta_uses_measured_path_times(make_window):
    win = make_window()
    # the run's job lives in the session model: each path took 1 s with a 30 ms budget (warm-up, accuracy, trace)
    win.session.begin("run", index=2, total=6, budget=0.03, path="native", path_times=[1.0, 1.0])
    win._tick_status()
    assert win.eta_label.text() == "about 4.0 s left"


def test_hover_box_goes_away_when_the_tab_is_left(make_window):
    win = make_window()
    rv = win.roofline_view
    win.tabs.setCurrentWidget(rv)
    rv.hover.item.show()
    win.tabs.setCurrentIndex(0)
    assert not rv.hover.item.isVisible()
