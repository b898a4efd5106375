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
    from explorer.gui.colors import path_color

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
