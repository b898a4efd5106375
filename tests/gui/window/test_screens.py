"""The window fits the screen: it opens within the available geometry, never grows past it (the noisy banner, a
weight shown as the kernel used it), and every tab's key columns are visible at 1024x700 without scrolling."""

import pytest
from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QApplication

from explorer.core.measure import interference as itf
from explorer.core.problem.spec import parse_descriptor

TINY = "mb2ic16ih14oc16oh14kh3ph1"
SMALL = (1024, 700)


def _noisy_run(make_window, qtbot, monkeypatch, size=SMALL, paths=("dense", "mkldnn")):
    """A real in-process run whose trust meter calls mkldnn noisy (the other paths quiet)."""
    from explorer.core.jobs import run as runner
    from explorer.gui.jobs import measure

    monkeypatch.setattr(measure, "IN_CHILD", False)
    current = {"path": None}

    def judge(i, min_samples):
        if current["path"] == "mkldnn":
            return itf.Verdict("noisy", "other programs held the cores: the measuring threads waited for a core "
                                        "47% of the loop")
        return itf.Verdict("ok", "")

    monkeypatch.setattr(itf, "judge", judge)
    real_prepare = runner.prepare

    def prepare(name, t):
        current["path"] = name
        return real_prepare(name, t)

    monkeypatch.setattr(runner, "prepare", prepare)
    win = make_window(spec=parse_descriptor(TINY), options={"paths": list(paths), "budget_ms": 5}, size=size)
    with qtbot.waitSignal(win.run_finished, timeout=60_000):
        assert win.start_run()
    return win


def _settle(qtbot):
    for _ in range(5):
        QApplication.processEvents()
        qtbot.wait(20)


def test_window_never_grows_past_1024x700_with_the_banner_and_a_kernel_weight(make_window, qtbot, monkeypatch):
    win = _noisy_run(make_window, qtbot, monkeypatch)
    _settle(qtbot)
    assert win.quality_label.isVisible()
    assert win.size().width() <= SMALL[0] and win.size().height() <= SMALL[1], win.size()
    # the weight of the mkldnn row as the kernel used it (a blocked layout: the taller view)
    assert win.select_path("mkldnn")
    lv = win.layout_view
    lv.set_role("weight")
    lv.set_kernel_mode(True)
    _settle(qtbot)
    assert lv.kernel_radio.isChecked()
    assert win.size().width() <= SMALL[0] and win.size().height() <= SMALL[1], win.size()
    # nothing inside asks for more than the screen either (Qt would grow the window to it)
    hint = win.minimumSizeHint()
    assert hint.width() <= SMALL[0] and hint.height() <= SMALL[1], hint
    # the banner wraps: its advice is in the label, not cut off by an ellipsis, and it is not one squeezed line
    assert "closing other programs" in win.quality_label.text() and win.quality_label.wordWrap()


def screen_platform(tmp_path, width, height) -> str:
    """QT_QPA_PLATFORM for an offscreen screen of width x height (Qt's offscreen plugin reads a JSON config)."""
    import json

    cfg = tmp_path / f"screen-{width}x{height}.json"
    cfg.write_text(json.dumps({"screens": [{"name": "test", "x": 0, "y": 0, "width": width, "height": height,
                                            "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    return f"offscreen:configfile={cfg}"


def test_gui_opens_within_a_1024x700_screen(tmp_path):
    """A plain `gui` (default --size 1440x900) on a 1024x700 screen opens at most 1024x700, status bar included."""
    import os
    import re
    import subprocess
    import sys

    env = dict(os.environ, QT_QPA_PLATFORM=screen_platform(tmp_path, *SMALL), MKLDNN_EXPLORER_NO_DIALOGS="1",
               MKLDNN_EXPLORER_SETTINGS=str(tmp_path / "s.ini"), MKLDNN_EXPLORER_CACHE=str(tmp_path / "cache"))
    png = tmp_path / "w.png"
    p = subprocess.run([sys.executable, "-m", "explorer", "gui", TINY, "--exit-when-done", "--screenshot", str(png)],
                       env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    m = re.search(r"saved the window \((\d+)x(\d+)\)", p.stderr)
    assert m, p.stderr
    assert int(m.group(1)) <= SMALL[0] and int(m.group(2)) <= SMALL[1], m.group(0)


def _visible_columns(table, names):
    """The named columns that lie fully inside the table's viewport (no sideways scrolling)."""
    model = table.model()
    header = [str(model.headerData(c, Qt.Horizontal)) for c in range(model.columnCount())]
    vw = table.viewport().width()
    out = {}
    for n in names:
        c = header.index(n)
        x = table.columnViewportPosition(c)
        out[n] = (not table.isColumnHidden(c) and x >= 0 and x + table.columnWidth(c) <= vw + 1)
    return out


@pytest.mark.parametrize("size", [SMALL, (1440, 900)])
def test_run_table_key_columns_visible(make_window, qtbot, monkeypatch, size):
    win = _noisy_run(make_window, qtbot, monkeypatch, size=size, paths=("dense", "channels_last", "mkldnn"))
    _settle(qtbot)
    seen = _visible_columns(win.table, ("path", "status", "median ms", "vs baseline", "GFLOP/s"))
    assert all(seen.values()), seen
    assert win.table.horizontalScrollBar().value() == 0


def test_sweep_heatmap_controls_fit_at_1024(make_window, qtbot):
    win = make_window(spec=parse_descriptor("mb1ic32ih6oc32oh6kh3ph1"), size=SMALL,
                      options={"paths": ["dense", "mkldnn"], "budget_ms": 5, "trace": False})
    win.tabs.setCurrentIndex(1)
    sv = win.sweep_view
    sv.set_vary("g", "1,2,4,8,16,32", "mb", "1,2")  # a 2-D sweep: the heatmap and its combos
    with qtbot.waitSignal(sv.finished, timeout=120_000):
        assert sv.run()
    sv.redraw_now()
    _settle(qtbot)
    assert sv.stack.currentWidget() is sv.heatmap
    area = win.tabs.currentWidget()
    assert area.horizontalScrollBar().maximum() == 0, "the Sweep tab scrolls sideways at 1024"
    for w in (sv.export_button, sv.heat_combo, sv.heat_path, sv.metric_combo):
        assert w.isVisible() and w.width() >= w.sizeHint().width(), (w, w.width(), w.sizeHint().width())
        right = w.mapTo(sv, w.rect().topRight()).x()
        assert right <= area.viewport().width(), (w, right)


def test_compare_key_columns_visible_at_1024(make_window, qtbot, tmp_path):
    from explorer.core.report.results import write_rows

    win = make_window(spec=parse_descriptor(TINY), size=SMALL)
    bv = win.baseline_view
    rows = [_row(p, 1.0 + i) for i, p in enumerate(("dense", "channels_last", "mkldnn"))]
    a = tmp_path / "a.csv"
    write_rows(a, rows)
    bv.open_csv(a)
    bv.set_current([_row(r.path, r.median_ms / 2) for r in rows])
    win.tabs.setCurrentWidget(bv)
    _settle(qtbot)
    seen = _visible_columns(bv.table, ("A median ms", "B median ms", "speedup", "verdict"))
    assert all(seen.values()), seen


@pytest.fixture
def big_font():
    """A desktop's larger UI font (headers must fit whatever the font)."""
    from PySide6.QtGui import QFont

    app = QApplication.instance()
    old = app.font()
    app.setFont(QFont(old.family(), 13))
    yield
    app.setFont(old)


def test_model_table_headers_not_clipped(make_window, qtbot, big_font):
    from PySide6.QtGui import QFontMetrics

    win = make_window(spec=parse_descriptor(TINY), size=SMALL)
    mv = win.model_view
    win.tabs.setCurrentWidget(win.model_tab)
    _settle(qtbot)
    table = mv.modes_table
    head = table.horizontalHeader()
    fm = QFontMetrics(head.font())
    model = table.model()
    for c in range(model.columnCount()):
        name = str(model.headerData(c, Qt.Horizontal))
        if name == "predicted speedup":
            assert head.sectionSize(c) >= fm.horizontalAdvance(name) + 8, (name, head.sectionSize(c))
            x = table.columnViewportPosition(c)
            assert 0 <= x and x + head.sectionSize(c) <= table.viewport().width() + 1, name
            break
    else:
        raise AssertionError("no predicted speedup column")


def _row(path, median, quality="ok"):
    from explorer.core.report.results import Result

    return Result(spec=parse_descriptor(TINY), path=path, threads=1, samples=10, median_ms=median,
                  p25_ms=median * 0.99, p75_ms=median * 1.01, iqr_ms=median * 0.02, quality=quality)


def test_fit_size_shrinks_to_the_screen():
    from explorer.gui.window.main_window import fit_size

    screen = QApplication.primaryScreen()
    avail = screen.availableGeometry().size()
    assert fit_size(avail.width() + 1, avail.height() + 1, screen) == avail
    assert fit_size(400, 300, screen) == QSize(400, 300)


def test_roofline_shrinks_with_the_window_and_keeps_its_legend_in_view(make_window, qtbot):
    """A window opened at 1440 and shrunk to 1024 with the Roofline showing, no peak cached (a new user's case):
    the chart and its legend column must follow the view, not keep the 1440-wide layout with the legend cut off."""
    from explorer.core.report.results import Result

    spec = parse_descriptor("mb1ic64ih56oc64oh56kh3ph1")
    win = make_window(spec=spec, size=(1440, 900))
    rv = win.roofline_view
    win.tabs.setCurrentWidget(rv)
    win.resize(1440, 900)  # as `gui` on a big screen opens (make_window fits the test's screen)
    _settle(qtbot)
    assert win.width() == 1440
    rows = [Result(spec=spec, path=p, threads=1, median_ms=m, gflops=spec.ops / m / 1e6, status="ok")
            for p, m in (("dense", 2.5), ("channels_last", 2.4), ("mkldnn", 2.5), ("native", 4.1))]
    win.resize(*SMALL)  # the shrink comes first, the results after it, as with `gui --size 1024x700 --run`
    _settle(qtbot)
    win.session.set_results(rows, spec)
    rv.redraw()
    _settle(qtbot)
    view_w = rv.layout_widget.width()
    assert rv.layout_widget.ci.geometry().width() <= view_w + 1, "the chart kept its wider layout"
    right = rv.legend.mapRectToScene(rv.legend.boundingRect()).right()
    assert right <= view_w + 1, f"the legend ends at {right:.0f} px in a {view_w} px view"
