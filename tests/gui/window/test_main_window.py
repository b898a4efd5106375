"""The window end to end in-process: run, stop, close mid-run, table, copy, exports, session, settings."""

import json
import time

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage

from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.results import CSV_COLUMNS, read_csv

TINY = "mb2ic16ih14oc16oh14kh3ph1"
FEW = ["dense", "mkldnn", "mkldnn_roundtrip"]


def _type(qtbot, widget, text):
    widget.setFocus()
    widget.selectAll()
    qtbot.keyClicks(widget, text)


def _run(win, qtbot, timeout=60_000):
    with qtbot.waitSignal(win.run_finished, timeout=timeout) as blocker:
        assert win.start_run()
    return blocker.args[0]  # cancelled?


@pytest.fixture
def first_path_quick(monkeypatch):
    """The first path times for 60 ms, every later one until stopped (no early stop on convergence)."""
    from explorer.core.jobs import run as runner
    from explorer.core.measure import harness
    from explorer.gui.jobs import measure

    monkeypatch.setattr(measure, "IN_CHILD", False)  # the patch below must reach the timing loop
    calls = []

    def budget(budget_ms, min_samples, precision, **kwargs):  # warmup, decided, earliest_share: the runner's own
        calls.append(budget_ms)
        return harness.Budget(60.0 if len(calls) == 1 else 120_000.0, min_samples, 0.0, **kwargs)

    monkeypatch.setattr(runner, "Budget", budget)
    return calls


@pytest.fixture
def ran(make_window, qtbot):
    win = make_window(spec=parse_descriptor(TINY), options={"paths": FEW, "budget_ms": 20})
    assert _run(win, qtbot) is False
    return win


def test_fill_fields_run_and_see_results(make_window, qtbot):
    win = make_window(spec=parse_descriptor(TINY))
    p = win.panel
    _type(qtbot, p.fields["oc"], "8")
    _type(qtbot, p.fields["ih"], "10")
    p.budget_spin.setValue(20)
    for path, cb in p.path_checks.items():
        if (path in FEW) != cb.isChecked():
            qtbot.mouseClick(cb, Qt.LeftButton)
    assert p.paths() == tuple(FEW)
    with qtbot.waitSignal(win.run_finished, timeout=60_000):
        qtbot.mouseClick(p.run_button, Qt.LeftButton)
        assert not p.run_button.isEnabled() and p.stop_button.isEnabled()
    assert win.model.rowCount() == 3
    rows = win.model.results
    assert [r.path for r in rows] == FEW
    assert all(r.status == "ok" and r.spec.oc == 8 and r.spec.ih == 10 and r.samples >= 5 for r in rows)
    for r in rows:
        assert win.timing.point_count(r.path) == r.samples
    assert win.timing.redraws > 0
    assert win.summary.bar_count() == 3
    assert p.run_button.isEnabled() and not p.stop_button.isEnabled()
    assert "Done in " in win.status_label.text() and " 3 paths: " in win.status_label.text()  # counts.count_text
    # The first ok row is selected at the end, which fills the layout and trace views.
    assert win.selected_result() is not None and win.selected_result().path == "dense"


def test_selecting_a_row_feeds_the_layout_and_trace_views(ran, monkeypatch):
    win = ran
    seen = {}
    if win.layout_view is not None:
        orig_l = win.layout_view.set_tensors
        monkeypatch.setattr(win.layout_view, "set_tensors",
                            lambda t, title="": (seen.__setitem__("layouts", (t, title)), orig_l(t, title)))
    if win.trace_view is not None:
        orig_t = win.trace_view.set_trace
        monkeypatch.setattr(win.trace_view, "set_trace",
                            lambda p, summary=None, title="": (seen.__setitem__("trace", (p, summary, title)),
                                                               orig_t(p, summary, title)))
    assert win.select_path("mkldnn")
    r = win.selected_result()
    assert r.path == "mkldnn"
    if win.layout_view is not None:
        tensors, title = seen["layouts"]
        assert tensors is r.layouts and set(tensors) == {"input", "weight", "output"} and "mkldnn" in title
    if win.trace_view is not None:
        prims, summary, title = seen["trace"]
        assert prims == r.trace and any(pr.op == "convolution" for pr in prims)
        assert summary.conv_count >= 1 and "mkldnn" in title


def test_table_sorts_and_copies_tsv(ran, qtbot):
    win = ran
    col = [win.model.headerData(c, Qt.Horizontal) for c in range(win.model.columnCount())].index("median ms")
    win.table.sortByColumn(col, Qt.AscendingOrder)
    meds = [win.proxy.data(win.proxy.index(r, col), Qt.UserRole + 1) for r in range(win.proxy.rowCount())]
    assert meds == sorted(meds)
    win.table.selectAll()
    win.table.setFocus()
    QGuiApplication.clipboard().clear()
    qtbot.keyClick(win.table, Qt.Key_C, Qt.ControlModifier)
    text = QGuiApplication.clipboard().text()
    lines = text.strip("\n").split("\n")
    assert lines[0].split("\t")[:3] == ["path", "status", "median ms"]
    assert len(lines) == 4 and sorted(line.split("\t")[0] for line in lines[1:]) == sorted(FEW)


def test_baseline_combo_changes_speedups(ran):
    win = ran
    c = [win.model.headerData(i, Qt.Horizontal) for i in range(win.model.columnCount())].index("vs baseline")
    row = {win.model.result(i).path: i for i in range(win.model.rowCount())}
    win.summary.set_baseline("mkldnn")
    assert win.model.text(row["mkldnn"], c) == "1.00x"
    assert win.model.value(row["dense"], c) == pytest.approx(
        win.model.result(row["mkldnn"]).median_ms / win.model.result(row["dense"]).median_ms)


def test_export_csv_charts_and_screenshot(ran, tmp_path):
    win = ran
    out = tmp_path / "r.csv"
    assert win.export_csv(str(out))
    rows = read_csv(out)
    assert [r["path"] for r in rows] == FEW and all(r["status"] == "ok" for r in rows)
    assert out.read_text().splitlines()[0].split(",") == list(CSV_COLUMNS)
    for name in ("timing", "summary"):
        png, svg = tmp_path / f"{name}.png", tmp_path / f"{name}.svg"
        assert win.export_chart(name, str(png)) and win.export_chart(name, str(svg))
        assert QImage(str(png)).width() >= 1200
        assert "<svg" in svg.read_text()[:2000]
    shot = tmp_path / "w.png"
    assert win.save_screenshot(str(shot))
    img = QImage(str(shot))
    assert (img.width(), img.height()) == (1280, 800)


def test_existing_file_is_not_overwritten_without_asking(ran, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    win = ran
    out = tmp_path / "keep.csv"
    out.write_text("precious\n")
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.No)
    assert not win.export_csv(str(out))
    assert not win.save_session(str(out))
    assert out.read_text() == "precious\n"
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.Yes)
    assert win.export_csv(str(out))
    assert len(read_csv(out)) == 3


def test_session_round_trip(ran, make_window, tmp_path):
    win = ran
    win.summary.set_baseline("mkldnn")
    path = tmp_path / "s.json"
    assert win.save_session(str(path))
    data = json.loads(path.read_text())
    assert data["format"] == "mkldnn-explorer-session" and len(data["results"]) == 3
    other = make_window()
    assert other.open_session(str(path))
    assert other.panel.spec == win.panel.spec
    assert other.panel.paths() == tuple(FEW) and other.panel.budget_spin.value() == 20
    assert other.summary.baseline == "mkldnn"
    assert [r.row() for r in other.model.results] == [r.row() for r in win.model.results]
    assert other.timing.point_count() == win.timing.point_count() > 0
    assert other.summary.bar_count() == 3
    r = other.model.results[1]
    assert r.trace and any(p.op == "convolution" for p in r.trace)


@pytest.mark.parametrize("content, words", [
    ("{not json", "is not valid JSON"),
    ('{"format": "something else"}', "is not an MKLDNN Explorer session"),
    ('{"format": "mkldnn-explorer-session", "version": 1, "spec": {"desc": "mb2ic16"}}', "spec"),
    ('{"format": "mkldnn-explorer-session", "version": 1, "spec": {"desc": "%s"}, "results": [{"path": 3}]}' % TINY,
     "results[0]"),
])
def test_malformed_session_names_the_problem(make_window, tmp_path, content, words):
    win = make_window(spec=parse_descriptor(TINY))
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    assert not win.open_session(str(bad))
    assert words in win.status_label.text()
    assert win.panel.spec == parse_descriptor(TINY)  # nothing changed


def test_stop_mid_run_keeps_finished_rows(make_window, qtbot, first_path_quick):
    win = make_window(spec=parse_descriptor(TINY), options={"paths": FEW})
    win.start_run()
    qtbot.waitUntil(lambda: win.timing.point_count("mkldnn") > 20, timeout=30_000)
    t0 = time.monotonic()
    with qtbot.waitSignal(win.run_finished, timeout=10_000) as blocker:
        qtbot.keyClick(win, Qt.Key_Escape)
    assert time.monotonic() - t0 < 2.0  # within one call, plus signal delivery
    assert blocker.args == [True]
    assert [r.path for r in win.model.results] == ["dense"] and win.model.results[0].status == "ok"
    assert "Stopped" in win.status_label.text()
    assert win.panel.run_button.isEnabled() and not win.running


def test_close_mid_run_stops_cleanly_and_keeps_rows(make_window, qtbot, tmp_path, first_path_quick):
    from explorer.gui.jobs import worker

    csv_path = tmp_path / "mid.csv"
    win = make_window(spec=parse_descriptor(TINY), options={"paths": ["dense", "mkldnn"]}, csv_path=str(csv_path))
    win.start_run()
    qtbot.waitUntil(lambda: win.timing.point_count("mkldnn") > 20, timeout=30_000)
    t0 = time.monotonic()
    win.close()
    assert time.monotonic() - t0 < 5.0
    assert not win.running and worker.live_threads() == 0
    assert [r.path for r in win.model.results] == ["dense"]
    assert [r["path"] for r in read_csv(csv_path)] == ["dense"]


def test_close_during_a_long_call_in_the_measuring_process_exits_fast(make_window, qtbot, tmp_path):
    """The default design: the run lives in a child process, so a close never waits for a long call."""
    from explorer.gui.jobs import measure, worker

    assert measure.IN_CHILD
    csv_path = tmp_path / "long.csv"
    # a heavy layer (0.3 s a call here, more under load): the close lands inside one of native's calls
    win = make_window(spec=parse_descriptor("mb8ic256ih56oc256oh56kh3ph1"),
                      options={"paths": ["dense", "native"], "budget_ms": 300}, csv_path=str(csv_path))
    win.start_run()
    # the first row's time is the host's (a noisy loop is measured again): not what this test checks
    qtbot.waitUntil(lambda: len(win.model.results) == 1, timeout=240_000)
    qtbot.wait(300)
    assert win.running
    t0 = time.monotonic()
    win.close()
    # the close waits at most its grace for the child to stop by itself, then kills it: never the call
    assert time.monotonic() - t0 < worker.STOP_GRACE_MS / 1000 + 1.0
    assert not win.running and worker.live_threads() == 0
    assert [r["path"] for r in read_csv(csv_path)] == ["dense"]  # the finished row is kept


def test_settings_remember_spec_options_and_theme(make_window, qtbot):
    win = make_window(spec=parse_descriptor(TINY))
    _type(qtbot, win.panel.fields["oc"], "24")
    win.panel.set_options(paths=["dense", "native"], threads=1, budget_ms=123)
    win.dark_action.setChecked(True)
    win.close()
    again = make_window()
    assert again.panel.spec.oc == 24
    assert again.panel.paths() == ("dense", "native")
    assert again.panel.threads_spin.value() == 1 and again.panel.budget_spin.value() == 123
    assert again.theme == "dark"
    again.apply_theme("light")


def test_dark_and_light_palettes_are_legible(make_window):
    from PySide6.QtGui import QPalette

    from explorer.gui.common.colors import PATH_COLORS, THEMES, palette

    def lum(c):
        def ch(v):
            v /= 255
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
        return 0.2126 * ch(c.red()) + 0.7152 * ch(c.green()) + 0.0722 * ch(c.blue())

    def contrast(a, b):
        la, lb = sorted((lum(a), lum(b)), reverse=True)
        return (la + 0.05) / (lb + 0.05)

    from PySide6.QtGui import QColor

    for name in ("light", "dark"):
        pal = palette(name)
        assert contrast(pal.color(QPalette.Text), pal.color(QPalette.Base)) >= 7
        assert contrast(pal.color(QPalette.WindowText), pal.color(QPalette.Window)) >= 7
        for path, color in PATH_COLORS.items():
            assert contrast(QColor(color), QColor(THEMES[name]["bg"])) >= 2.5, (name, path)
    win = make_window()
    from PySide6.QtWidgets import QApplication

    win.apply_theme("dark")
    assert QApplication.palette().color(QPalette.Window).lightness() < 100
    assert win.timing.plot_widget.backgroundBrush().color().lightness() < 100
    win.apply_theme("light")


def test_shortcuts(make_window):
    win = make_window()
    keys = {a.text().replace("&", ""): a.shortcut().toString() for a in win.actions()}
    assert keys["Run"] == "Ctrl+R" and keys["Stop"] == "Esc" and keys["Export CSV…"] == "Ctrl+E"
    assert keys["Open session…"] == "Ctrl+O" and keys["Save session…"] == "Ctrl+S"


def test_measure_peak_runs_off_the_gui_thread_and_fills_pct_peak(ran, qtbot, monkeypatch):
    import threading

    from explorer.core.measure import machine

    win = ran
    seen = {}

    def fake_peak(threads=None, remeasure=False, allow_measure=True):
        seen["thread"] = threading.current_thread() is threading.main_thread()
        seen["remeasure"] = remeasure
        return machine.Peak(1000.0, 2000.0, 10.0, threads or 2, "now", "key")

    from explorer.gui.jobs import measure

    monkeypatch.setattr(measure, "IN_CHILD", False)  # the fake must run where the job runs
    monkeypatch.setattr(machine, "peak", fake_peak)
    win.measure_peak()
    qtbot.waitUntil(lambda: win.peak_worker is not None and not win.peak_worker.running, timeout=10_000)
    assert seen == {"thread": False, "remeasure": True}
    c = [win.model.headerData(i, Qt.Horizontal) for i in range(win.model.columnCount())].index("% peak")
    r = win.model.result(0)
    assert win.model.value(0, c) == pytest.approx(100 * r.gflops / 1000.0)
    assert "peak" in win.status_label.text().lower() and win.panel.run_button.isEnabled()


def test_sweep_tab_follows_the_panel_and_blocks_concurrent_runs(make_window, qtbot):
    win = make_window(spec=parse_descriptor(TINY), options={"paths": FEW, "budget_ms": 20})
    if win.sweep_view is None:
        pytest.skip("no sweep view installed")
    assert win.tabs.tabText(1) == "Sweep"
    assert win.sweep_view.base == win.panel.spec
    _type(qtbot, win.panel.fields["oc"], "8")
    assert win.sweep_view.base.oc == 8 and tuple(win.sweep_view.opts.paths) == tuple(FEW)
    win._sweep_running(True)  # noqa: SLF001 - as the sweep view's started signal does
    assert not win.start_run() and not win.panel.run_button.isEnabled()
    win._sweep_running(False)  # noqa: SLF001
    assert win.panel.run_button.isEnabled()


def test_roofline_and_compare_tabs_cover_the_run(ran, qtbot, tmp_path):
    win = ran
    ok = [r for r in win.model.results if r.status == "ok"]
    win.tabs.setCurrentWidget(win.roofline_view)
    assert win.roofline_view.point_count() == len(ok) == len(FEW)
    png = tmp_path / "roof.png"
    assert win.export_view("roofline", str(png)) and png.stat().st_size > 1000
    # This run's own CSV as the baseline: every row matches itself, speedup 1.
    base = tmp_path / "base.csv"
    assert win.export_csv(str(base), ask=False)
    assert win.open_baseline(str(base))
    assert win.tabs.currentWidget() is win.baseline_view
    qtbot.waitUntil(lambda: win.baseline_view.comparison is not None
                    and len(win.baseline_view.comparison.matched) == len(FEW), timeout=5_000)
    assert all(abs(m.speedup - 1.0) < 1e-9 for m in win.baseline_view.comparison.matched)


def test_timing_legend_labels_follow_the_theme(qtbot):
    import numpy as np
    from PySide6.QtGui import QColor

    from explorer.gui.common.colors import theme
    from explorer.gui.run.timing_chart import TimingChart

    chart = TimingChart()
    qtbot.addWidget(chart)
    chart.add_samples("dense", np.ones(5))
    chart.redraw()
    for name in ("dark", "light"):
        chart.set_theme(name)
        html = chart.legend.items[0][1].item.toHtml().lower()
        assert QColor(theme(name)["fg"]).name() in html  # a label drawn in the old colour is invisible


def test_unexpected_worker_failure_is_shown_with_details(make_window, qtbot, monkeypatch):
    from explorer.core.jobs import run as runner
    from explorer.gui.jobs import measure

    monkeypatch.setattr(measure, "IN_CHILD", False)
    monkeypatch.delenv("MKLDNN_EXPLORER_NO_DIALOGS", raising=False)

    def broken(*a, **k):
        raise RuntimeError("simulated fault inside the measuring code")
        yield  # a generator, as iter_run is

    monkeypatch.setattr(runner, "iter_run", broken)
    win = make_window(spec=parse_descriptor(TINY), options={"paths": FEW, "budget_ms": 5})
    with qtbot.waitSignal(win.run_finished, timeout=10_000):
        assert win.start_run()
    assert "simulated fault" in win.last_error and "simulated fault" in win.status_label.text()
    box = win.failure_box
    assert box.isVisible() and "Traceback" in box.detailedText() and "simulated fault" in box.detailedText()
    box.close()
    assert win.panel.run_button.isEnabled() and not win.running  # the app is still usable


def test_the_window_does_not_animate_its_docks(make_window):
    """With animated docks a relayout goes through QPropertyAnimations (seen under Xvfb inside the
    measuring child's bursts); without, it happens at once, at the burst boundary."""
    win = make_window()
    assert not win.isAnimated()


def test_a_small_window_keeps_its_charts_legible_when_the_layouts_fill_in(make_window, qtbot):
    """At 1024x700, once a row is selected the layout view's minimum size pushed the charts down to ~110 px
    (seen under Xvfb: the summary's six labels overlapped); the charts keep their minimum height."""
    win = make_window(spec=parse_descriptor(TINY), options={"paths": FEW, "budget_ms": 20}, size=(1024, 700))
    assert _run(win, qtbot) is False
    assert win.select_path(FEW[0])
    qtbot.wait(200)
    assert win.chart_split.height() >= win.CHARTS_MIN_H
    assert win.height() <= 700 and win.main_split.sizes()[1] > 250  # the table and layouts get the rest


@pytest.mark.parametrize("tab", ["sweep_view", "model_view"])
def test_esc_stops_a_running_sweep_or_model_plan(make_window, tab):
    """#34: Run > Stop (Esc) was disabled while a Sweep or Model tab job ran, so Esc could not stop it."""
    from PySide6.QtGui import QKeySequence

    win = make_window(spec=parse_descriptor(TINY))
    view = getattr(win, tab)
    stopped = []
    running = [True]
    view.is_running = lambda: running[0]
    view.stop = lambda: stopped.append(True)
    assert win.stop_action.shortcut() == QKeySequence("Esc") and not win.stop_action.isEnabled()
    view.started.emit()  # the job began: the window hears it as it does a real one
    assert win.stop_action.isEnabled()
    win.stop_action.trigger()
    assert stopped == [True] and "Stopping" in win.status_label.text()
    running[0] = False
    view.finished.emit(True)
    assert not win.stop_action.isEnabled()


def test_a_session_whose_sweep_point_varies_nothing_is_refused_in_the_status_line(make_window, tmp_path):
    """Fails on main: the file parsed, then restoring its line sweep raised IndexError out of Open session."""
    from tests.core.session.test_session_fuzz import _full_session

    d = _full_session(tmp_path)
    d["sweep"]["points"][0]["values"] = {}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    win = make_window(spec=parse_descriptor(TINY))
    assert not win.open_session(str(bad))
    assert "sweep.points[0] must vary its one varied field (g)" in win.status_label.text()
    assert win.panel.spec == parse_descriptor(TINY)  # nothing changed
