"""Trust in the window: noisy rows marked (table, bar, the line above the charts, ratios, sweep charts) and the allocator field."""

from PySide6.QtCore import Qt

from explorer.core.measure import interference as itf
from explorer.core.problem.spec import parse_descriptor
from explorer.gui.run.results_model import HEADERS

TINY = "mb2ic16ih14oc16oh14kh3ph1"


def _run_with_noisy(make_window, qtbot, monkeypatch, noisy_paths):
    """A real in-process run in which the meter's verdict says `noisy` for the given paths."""
    from explorer.core.jobs import run as runner
    from explorer.gui.jobs import measure

    monkeypatch.setattr(measure, "IN_CHILD", False)
    current = {"path": None}
    def judge(i, min_samples):
        if current["path"] in noisy_paths:
            return itf.Verdict("noisy", "other programs held the cores: the measuring threads waited for a core "
                                        "47% of the loop")
        return itf.Verdict("ok", "")  # the others quiet, whatever this machine is doing now

    monkeypatch.setattr(itf, "judge", judge)
    real_prepare = runner.prepare

    def prepare(name, t):
        current["path"] = name
        return real_prepare(name, t)

    monkeypatch.setattr(runner, "prepare", prepare)
    win = make_window(spec=parse_descriptor(TINY), options={"paths": ["dense", "mkldnn"], "budget_ms": 5})
    with qtbot.waitSignal(win.run_finished, timeout=30_000):
        assert win.start_run()
    return win


def test_noisy_row_bar_and_line_above_the_charts(make_window, qtbot, monkeypatch):
    win = _run_with_noisy(make_window, qtbot, monkeypatch, {"mkldnn"})
    rows = {r.path: r for r in win.model.results}
    assert rows["mkldnn"].quality == "noisy" and rows["mkldnn"].attempts == 3  # measured again, stayed noisy
    assert rows["dense"].quality != "noisy"
    # the table: status says noisy, the times carry ~, the ratio is uncertain, the row is hatched
    m = win.model
    r = [r.path for r in m.results].index("mkldnn")
    cell = lambda name, role=Qt.DisplayRole: m.data(m.index(r, HEADERS.index(name)), role)  # noqa: E731
    assert cell("status") == "noisy"
    assert cell("median ms").startswith("~")
    assert cell("vs baseline").startswith("~") and cell("vs baseline").endswith("?")
    assert cell("path", Qt.BackgroundRole).style() == Qt.BDiagPattern
    assert "47% of the loop" in cell("median ms", Qt.ToolTipRole)
    d = [r.path for r in m.results].index("dense")
    assert m.data(m.index(d, HEADERS.index("path")), Qt.BackgroundRole) is None
    # the summary bar is hatched and its label says noisy with an uncertain ratio
    s = win.summary._stats["mkldnn"]
    assert s.noisy and "noisy" in win.summary.label("mkldnn", s, win.summary._stats["dense"].median)
    assert "?" in win.summary.label("mkldnn", s, win.summary._stats["dense"].median)
    brushes = win.summary._bars.opts["brushes"]
    styles = {p: b.style() for p, b in zip(sorted(win.summary._stats, key=list(win.summary._stats).index), brushes)}
    assert Qt.BDiagPattern in styles.values() and Qt.SolidPattern in styles.values()
    # one line above the charts: how many, why, what helps
    assert win.quality_label.isVisible()
    text = win.quality_label.text()
    assert "1 of 2 paths are noisy" in text and "47% of the loop" in text and "closing other programs" in text


def test_quiet_run_shows_no_quality_line(make_window, qtbot, monkeypatch):
    win = _run_with_noisy(make_window, qtbot, monkeypatch, set())
    assert all(r.quality == "ok" for r in win.model.results) and not win.quality_label.isVisible()


def test_sweep_charts_mark_noisy_points_and_uncertain_ratios(qtbot):
    """The noisy point gets a cross on the sweep chart, its speedup a cross and an uncertain hover text."""
    from explorer.core.problem.sweep_plan import SweepPoint
    from explorer.core.report.sweep_data import SweepData
    from explorer.gui.charts.line_charts import LineChart, SpeedupChart

    data = SweepData()
    data.configure([SweepPoint(i, {"g": g}) for i, g in enumerate((1, 2))], "line", paths=("dense", "mkldnn"))

    def row(i, path, ms, quality="ok"):
        return {"path": path, "status": "ok", "median_ms": ms, "p25_ms": ms, "p75_ms": ms, "gflops": 1.0 / ms,
                "desc": f"d{i}", "vary": f"g={(1, 2)[i]}", "quality": quality}

    for i, path, ms, q in ((0, "dense", 1.0, "ok"), (0, "mkldnn", 0.5, "ok"), (1, "dense", 1.0, "ok"),
                           (1, "mkldnn", 0.25, "noisy")):
        data.add(i, row(i, path, ms, q))
    line, speed = LineChart(), SpeedupChart()
    for w in (line, speed):
        qtbot.addWidget(w)
        w.redraw(data)
    x, y = line.noisy_marks.getOriginalDataset()
    assert list(x) == [2.0] and list(y) == [0.25]
    sx, sy = speed.noisy_marks.getOriginalDataset()
    assert list(sx) == [2.0] and list(sy) == [4.0]
    speed._build_hover() if hasattr(speed, "_build_hover") else None
    texts = speed._hover_build()[2] if callable(getattr(speed, "_hover_build", None)) else []
    assert any("uncertain: noisy" in t and "4x" in t for t in texts)
    assert not any("uncertain" in t and "2x" in t for t in texts)


def test_allocator_field_runs_the_chosen_setting(make_window, qtbot):
    win = make_window(spec=parse_descriptor(TINY), options={"paths": ["dense"], "budget_ms": 5})
    combo = win.panel.allocator_combo
    combo.setCurrentIndex(combo.findData("default"))
    assert win.panel.run_options().allocator == "default"
    with qtbot.waitSignal(win.run_finished, timeout=60_000):
        assert win.start_run()
    assert [r.allocator for r in win.model.results] == ["default"]  # what the measuring process ran with


def test_an_allocator_that_is_not_installed_cannot_be_chosen(qtbot, monkeypatch):
    from explorer.core.measure import allocator
    from explorer.gui.run.param_panel import ParamPanel

    monkeypatch.setattr(allocator, "find_library", lambda name: None)
    panel = ParamPanel()
    qtbot.addWidget(panel)
    combo = panel.allocator_combo
    i = combo.findData("jemalloc")
    assert "not installed" in combo.itemText(i) and not combo.model().item(i).isEnabled()
    panel.set_options(allocator="jemalloc")
    assert panel.run_options().allocator == "tuned"
