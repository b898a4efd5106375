"""RooflineView over the session model: one point per ok row, ceilings from the session's peak, no-peak note,
hover, CSV-row dicts, export; its "Measure peak" is the window's one measurement."""

import pytest

from explorer.core.measure.machine import Peak
from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.results import Result

PEAK = Peak(300.0, 600.0, 12.0, 2, "2025-01-01T00:00:00", "test")


def _results():
    out = []
    for ic in (8, 16, 32, 64):
        spec = parse_descriptor(f"mb1ic{ic}ih14oc32kh3ph1")
        for p, g in (("dense", 40.0), ("mkldnn", 55.0)):
            out.append(Result(spec=spec, path=p, threads=2, median_ms=spec.ops / (g * 1e9) * 1e3, gflops=g * ic / 16,
                              vary=f"ic={ic}"))
    bad = Result(spec=parse_descriptor("mb1ic8ih14oc32kh3ph1"), path="native", threads=2, status="error", error="x")
    return out + [bad]


def _csv_row(r):
    return r.row() | {"median_ms": r.median_ms, "gflops": r.gflops, "threads": 2, "mb": r.spec.mb,
                      **{k: getattr(r.spec, k) for k in ("g", "ic", "ih", "iw", "oc", "kh", "kw", "sh", "sw", "ph",
                                                         "pw", "dh", "dw")}}


@pytest.fixture
def bridge(qtbot):
    from explorer.gui.common.session_bridge import SessionBridge

    return SessionBridge()


@pytest.fixture
def view(qtbot, tmp_path, monkeypatch, bridge):
    monkeypatch.setenv("MKLDNN_EXPLORER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("MKLDNN_EXPLORER_NO_DIALOGS", "1")
    from explorer.gui.tabs.roofline_view import RooflineView

    v = RooflineView(bridge)
    qtbot.addWidget(v)
    v.resize(1000, 560)
    v.show()
    return v


def test_points_match_results_and_ceilings_drawn(view, bridge, qtbot, tmp_path):
    from explorer.core.jobs.events import PathFinished
    from explorer.core.session.state import PeakMeasured, RunStarted, SweepRows

    session = bridge.session
    assert view.session is session and view.peak is None  # a new session: nothing measured
    rs = _results()
    session.apply(RunStarted(rs[0].spec, {"paths": ["dense", "mkldnn", "native"], "threads": 2}))
    for r in rs:
        session.apply(PathFinished(r))
    qtbot.waitUntil(lambda: view.point_count() == 8, timeout=5000)  # the error row is not a point
    assert not hasattr(view, "_results")  # no copy: the rows are read from the session when drawn
    assert "No peak" in view.note.toPlainText() and view.note.isVisible()
    session.apply(PeakMeasured(PEAK))
    qtbot.waitUntil(lambda: bool(view.roof.ceilings), timeout=5000)
    assert view.peak is session.peaks.at(2) is PEAK  # the session's one Peaks object, at the rows' threads
    assert view.point_count() == 8 and not view.note.isVisible()
    assert [c.name for c in view.roof.ceilings] == ["fp32", "bf16"]
    assert set(view.point_items) == {("dense", "f32"), ("mkldnn", "f32")}
    assert "bytes moved" in view.definition.text
    p = view.roof.points[0]
    text = view.hover_text_at(p.ai, p.gflops)
    assert p.desc in text and p.path in text and "of attainable" in text
    # CSV row dicts too: the session's sweep holds them (rows of batch lines without a spec)
    session.set_results([])
    session.apply(SweepRows([(i, _csv_row(r)) for i, r in enumerate(rs) if r.status == "ok"]))
    qtbot.waitUntil(lambda: view.point_count() == 8 and all(isinstance(x, dict) for x in session.all_results()),
                    timeout=5000)
    assert not session.errors
    view.grab().save("/tmp/sweep_shots/roofline.png")
    for name in ("roof.png", "roof.svg"):
        assert view.export(str(tmp_path / name)) and (tmp_path / name).stat().st_size > 1000
    assert not view.export(str(tmp_path / "roof.jpg"))


def test_a_hidden_view_redraws_when_shown(view, bridge, qtbot):
    from explorer.core.session.state import PeakMeasured

    view.hide()
    bridge.session.set_results(_results())
    bridge.session.options["threads"] = 2
    bridge.session.apply(PeakMeasured(PEAK))
    assert view.point_count() == 0  # hidden: only marked dirty
    view.show()
    assert view.point_count() == 8 and view.roof.ceilings


def test_the_button_only_asks(view, qtbot):
    assert not hasattr(view, "measure_peak") and not hasattr(view, "reload_peak")
    with qtbot.waitSignal(view.measure_requested, timeout=1000):
        view.measure_button.click()


def test_measure_button_in_a_window_measures_once_into_the_session(make_window, qtbot, monkeypatch):
    from explorer.core.measure import machine
    from explorer.gui.jobs import measure
    from explorer.gui.window.peak import default_threads

    calls = []

    def fake_peak(threads=None, remeasure=False, allow_measure=True):
        if remeasure:
            calls.append(threads)
            return Peak(80.0, None, 8.0, threads or 2, "now", "k")
        return None  # nothing cached

    monkeypatch.setattr(measure, "IN_CHILD", False)
    monkeypatch.setattr(machine, "peak", fake_peak)
    win = make_window()
    rv = win.roofline_view
    assert rv.session is win.session and rv.peak is None
    win.tabs.setCurrentWidget(rv)
    rv.measure_button.click()
    assert not rv.measure_button.isEnabled()
    qtbot.waitUntil(lambda: win.peak_worker is not None and not win.peak_worker.running, timeout=10_000)
    qtbot.waitUntil(lambda: rv.measure_button.isEnabled(), timeout=5000)
    assert len(calls) == 1  # one measurement: the window's, not a second one of the view's
    t = win.peak_threads() or default_threads()
    assert rv.peak is win.session.peaks.at(t) and rv.peak is not None
    qtbot.waitUntil(lambda: bool(rv.roof.ceilings), timeout=5000)
    assert "80" in rv.peak_label.text()
