"""RooflineView: one point per ok result, ceilings from the peak, no-peak note, hover, export, peak thread."""

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


@pytest.fixture
def view(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("MKLDNN_EXPLORER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("MKLDNN_EXPLORER_NO_DIALOGS", "1")
    from explorer.gui.tabs.roofline_view import RooflineView

    v = RooflineView()
    qtbot.addWidget(v)
    v.resize(1000, 560)
    v.show()
    yield v
    assert v.shutdown(10_000)
    from explorer.gui.jobs import worker

    assert getattr(worker, "live_threads", lambda: 0)() == 0


def test_points_match_results_and_ceilings_drawn(view, tmp_path):
    rs = _results()
    assert view.peak is None  # isolated cache: nothing measured
    view.set_results(rs)
    assert view.point_count() == 8  # the error row is not a point
    assert "No peak" in view.note.toPlainText() and view.note.isVisible()
    view.set_peak(PEAK)
    assert view.point_count() == 8 and not view.note.isVisible()
    assert [c.name for c in view.roof.ceilings] == ["fp32", "bf16"]
    assert set(view.point_items) == {("dense", "f32"), ("mkldnn", "f32")}
    assert "bytes moved" in view.definition.text
    p = view.roof.points[0]
    text = view.hover_text_at(p.ai, p.gflops)
    assert p.desc in text and p.path in text and "of attainable" in text
    view.set_results([r.row() | {"median_ms": r.median_ms, "gflops": r.gflops, "threads": 2, "mb": r.spec.mb,
                                  **{k: getattr(r.spec, k) for k in ("g", "ic", "ih", "iw", "oc", "kh", "kw", "sh",
                                                                      "sw", "ph", "pw", "dh", "dw")}}
                      for r in rs if r.status == "ok"])
    assert view.point_count() == 8  # CSV row dicts too
    view.grab().save("/tmp/sweep_shots/roofline.png")
    for name in ("roof.png", "roof.svg"):
        assert view.export(str(tmp_path / name)) and (tmp_path / name).stat().st_size > 1000
    assert not view.export(str(tmp_path / "roof.jpg"))


def test_measure_peak_runs_off_the_gui_thread(view, qtbot, monkeypatch):
    import threading

    from explorer.core.measure import machine

    seen = {}

    def fake_peak(*a, **kw):
        seen["thread"] = threading.current_thread() is not threading.main_thread()
        seen["remeasure"] = kw.get("remeasure")
        return PEAK

    monkeypatch.setattr(machine, "peak", fake_peak)
    view.set_results(_results())
    with qtbot.waitSignal(view.peak_measured, timeout=10_000):
        assert view.measure_peak()
        assert not view.measure_button.isEnabled()
    assert seen == {"thread": True, "remeasure": True}
    assert view.peak is PEAK and view.roof.ceilings
    qtbot.waitUntil(lambda: view.measure_button.isEnabled(), timeout=5000)
