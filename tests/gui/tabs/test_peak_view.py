"""Issue 12, item 4: one machine peak per (dtype, threads), measured in the measuring process, shared by the
Run table, the summary and the Roofline; % of peak above 100 is flagged."""

import pytest
from PySide6.QtCore import Qt

from explorer.core.measure import machine
from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.results import Result

SPEC = parse_descriptor("mb1ic8ih8oc8kh3ph1")


def _row(path, gflops, threads):
    return Result(spec=SPEC, path=path, threads=threads, median_ms=1.0, p25_ms=1.0, p75_ms=1.0, gflops=gflops,
                  samples=10)


def _pct_col(win):
    return [win.model.headerData(i, Qt.Horizontal) for i in range(win.model.columnCount())].index("% peak")


@pytest.fixture
def peaks(monkeypatch):
    """A cache with a 2-thread peak only (what a 2-core machine measures by default)."""
    cache = {2: machine.Peak(100.0, None, 10.0, 2, "then", "k2")}

    def fake_peak(threads=None, remeasure=False, allow_measure=True):
        t = threads or 2
        if remeasure:
            cache[t] = machine.Peak(50.0 * t, None, 10.0, t, "now", f"k{t}")
        return cache.get(t)

    from explorer.gui.jobs import measure

    monkeypatch.setattr(measure, "IN_CHILD", False)
    monkeypatch.setattr(machine, "peak", fake_peak)
    return cache


def test_rows_are_judged_at_their_own_thread_count(make_window, peaks):
    win = make_window()
    win._on_path_finished(_row("dense", 70.0, threads=1))  # 1-thread row, only a 2-thread peak cached
    c = _pct_col(win)
    assert win.model.value(0, c) is None  # not "70%" of the 2-thread peak
    win._on_path_finished(_row("mkldnn", 70.0, threads=2))
    assert win.model.value(1, c) == pytest.approx(70.0)


def test_measure_peak_updates_every_view_and_flags_above_100(make_window, qtbot, peaks):
    win = make_window()
    win._on_path_finished(_row("dense", 70.0, threads=1))
    win._on_finished(False)
    # the Roofline's button is the window's measurement (one peak for all views)
    win.roofline_view.measure_button.click()
    qtbot.waitUntil(lambda: win.peak_worker is not None and not win.peak_worker.running, timeout=10_000)
    assert 1 in win.peaks and win.peaks[1].fp32_gflops == 50.0
    c = _pct_col(win)
    assert win.model.value(0, c) == pytest.approx(140.0)
    assert win.model.data(win.model.index(0, c)).endswith("⚠")  # above 100%: flagged, with a reason
    assert "too low" in win.model.data(win.model.index(0, c), Qt.ToolTipRole)
    assert win.roofline_view.peak is win.peaks[1]
    win.tabs.setCurrentWidget(win.roofline_view)
    assert win.roofline_view.above_roof == 1
    assert "above the roof" in win.roofline_view.note.textItem.toPlainText()
    assert "⚠" in win.summary.label("dense", win.summary._stats["dense"], None)
    # the Run menu's action does the same
    peaks.pop(1)
    win.peaks.clear()
    win.measure_peak()
    qtbot.waitUntil(lambda: not win.peak_worker.running, timeout=10_000)
    assert win.roofline_view.peak is win.peaks[1]
