"""The window follows one session model: a reopened 2-D sweep draws its heatmap in the path colours, one peak
object feeds every view, and a saved model report reopens with the Model tab filled."""

import numpy as np
from PySide6.QtGui import QColor

from explorer.core.problem.spec import parse_descriptor
from explorer.core.problem.sweep_plan import SweepPoint
from explorer.core.report.results import Result

BASE = parse_descriptor("mb1ic8ih8oc8kh3ph1")
# The best path of each (g, mb) cell: mostly channels_last and mkldnn, one dense (the bug's shape).
BEST = {(0, 0): "channels_last", (1, 0): "mkldnn", (0, 1): "mkldnn", (1, 1): "dense", (0, 2): "channels_last",
        (1, 2): "mkldnn"}
PATHS3 = ("dense", "channels_last", "mkldnn")


def _grid_state():
    gs, mbs = [1, 2], [1, 2, 4]
    points, items = [], []
    for j, mb in enumerate(mbs):
        for i, g in enumerate(gs):
            spec = BASE.replace(g=g, mb=mb)
            idx = len(points)
            points.append(SweepPoint(idx, {"g": g, "mb": mb}, spec))
            for p in PATHS3:
                ms = 1.0 if p == BEST[(i, j)] else 2.0 + PATHS3.index(p)
                r = Result(spec=spec, path=p, threads=1, status="ok", median_ms=ms, p25_ms=ms, p75_ms=ms,
                           gflops=spec.ops / ms / 1e6, samples=5)
                r.vary = f"g={g};mb={mb}"
                items.append((idx, r))
    setup = {"mode": "grid", "varies": "g=1,2;mb=1,2,4", "batch": "", "base": BASE.descriptor(),
             "paths": ",".join(PATHS3), "threads": 1, "budget_ms": 5, "trace": False}
    return {"setup": setup, "points": points, "items": items}


def _cell_rgb(heatmap, i, j):
    heatmap.image.render()
    q = heatmap.image.qimage
    assert q is not None
    c = QColor(q.pixel(i, j))
    return c.red(), c.green(), c.blue()


def test_a_reopened_2d_sweep_draws_each_cell_in_its_best_paths_colour(make_window, qtbot, tmp_path):
    from explorer.gui.common.colors import path_color

    win = make_window()
    win.sweep_view.restore_state(_grid_state())
    path = tmp_path / "grid.json"
    assert win.save_session(str(path), ask=False)
    win2 = make_window()
    assert win2.open_session(str(path))
    sv = win2.sweep_view
    win2.tabs.setCurrentIndex(1)  # as a user would look at it: no forced redraw, no selector toggled
    qtbot.wait(200)
    assert sv.data.mode == "grid" and sv.heatmap.filled() == 6
    for (i, j), best in BEST.items():
        want = QColor(path_color(best))
        assert _cell_rgb(sv.heatmap, i, j) == (want.red(), want.green(), want.blue()), (i, j, best)
def _peak(threads, fp32):
    from explorer.core.measure.machine import Peak

    return Peak(fp32, None, 10.0, threads, "now", "k")


def test_measuring_the_peak_updates_table_roofline_and_summary_from_one_object(make_window):
    from explorer.core.jobs.events import PathFinished

    win = make_window()
    r = Result(spec=BASE, path="dense", threads=3, status="ok", median_ms=1.0, p25_ms=1.0, p75_ms=1.0,
               gflops=50.0, samples=5)
    r.samples_ms = np.array([1.0] * 5)
    win.session.apply(PathFinished(r))
    p = _peak(3, 200.0)
    win._on_peak(p)  # what "Measure machine peak" ends with
    assert win.session.peaks.at(3) is p
    assert win.model.peaks is win.session.peaks  # the table reads the session's peaks, no copy
    assert win.model.pct_peak(win.model.results[0]) == 25.0
    assert win.roofline_view.peak is p
    assert win.summary.peak_fp32 == 200.0
    p2 = _peak(3, 100.0)
    win._on_peak(p2)
    assert win.model.pct_peak(win.model.results[0]) == 50.0 and win.roofline_view.peak is p2
    assert win.summary.peak_fp32 == 100.0


def test_a_saved_model_report_reopens_with_the_model_tab_filled(make_window, tmp_path):
    from explorer.core.session.state import ModelDone
    from tests.core.session.test_session_state import _report

    win = make_window()
    win.session.apply(ModelDone(_report()))
    assert win.model_view.report is win.session.model_report
    path = tmp_path / "m.json"
    assert win.save_session(str(path), ask=False)
    win2 = make_window()
    assert win2.open_session(str(path))
    mv = win2.model_view
    assert mv.report is not None and mv.report is win2.session.model_report
    assert mv.layers.rowCount() == 1 and mv.layers.item(0, 0).text() == "conv1"
    assert mv.modes_table.rowCount() == 1
    assert mv.export_button.isEnabled()


def test_sweep_rows_are_held_once_in_the_session(make_window):
    win = make_window()
    sv = win.sweep_view
    sv.restore_state(_grid_state())
    assert sv.session is win.session
    assert sv.data is win.session.sweep.data
    assert sv.results() == win.session.sweep.rows() and len(sv.results()) == 18
    assert not hasattr(sv, "_items") and not hasattr(sv, "_results")


def test_the_bridge_relays_every_aspect_as_a_qt_signal(qtbot):
    from explorer.core.session.state import SessionState
    from explorer.gui.common.session_bridge import SessionBridge

    s = SessionState()
    bridge = SessionBridge(s)
    seen = []
    bridge.changed.connect(lambda aspect, change: seen.append(aspect))
    with qtbot.waitSignal(bridge.baseline_changed, timeout=1000) as blocker:
        s.set_baseline("mkldnn")
    assert blocker.args == ["mkldnn"] and seen == ["baseline"]
    bridge.detach()
    s.set_baseline("dense")
    assert seen == ["baseline"]
