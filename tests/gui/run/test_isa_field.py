"""The ISA what-if in the window: the Run panel's ISA field, ISAs side by side in a sweep, each ISA's layout."""

import pytest

from explorer.core.measure import isa
from explorer.core.problem.spec import parse_descriptor

TINY = "mb2ic17ih5iw4oc17oh5ow4kh3kw3ph1pw1"  # 17 channels: a blocked output shows its padding
pytestmark = pytest.mark.skipif("sse41" not in isa.available(), reason="not an x86-64 CPU with SSE4.1: no ISA to cap at")


def test_names_above_this_cpu_are_listed_but_cannot_be_chosen(qtbot, monkeypatch):
    from explorer.gui.run.param_panel import ParamPanel

    monkeypatch.setattr(isa, "cpu_flags", lambda: frozenset({"sse4_1", "avx", "avx2"}))  # an AVX2 laptop
    panel = ParamPanel()
    qtbot.addWidget(panel)
    combo = panel.isa_combo
    i = combo.findData("avx512_core")
    assert "not on this CPU" in combo.itemText(i) and not combo.model().item(i).isEnabled()
    assert combo.model().item(combo.findData("avx2")).isEnabled()
    assert not panel.set_isa("avx512_core") and panel.run_options().isa is None
    assert panel.set_isa("avx2") and panel.run_options().isa == "avx2"


def test_isa_field_runs_the_chosen_cap_and_the_layout_is_that_isas(make_window, qtbot, conv_outputs):
    win = make_window(spec=parse_descriptor(TINY), options={"paths": ["mkldnn"], "budget_ms": 5})
    assert win.panel.set_isa("sse41")
    with qtbot.waitSignal(win.run_finished, timeout=400_000):
        assert win.start_run()
    (r,) = win.model.results
    assert r.status == "ok", r.error
    assert r.isa == "sse41" and r.aten_isa == "DEFAULT"  # read back in the measuring process
    # The layout the window draws is the real descriptor of this capped run's output: the format the
    # kernel wrote (the trace), not this CPU's uncapped one.
    out = r.layouts["output"].stored
    assert out.tag == r.dst_tag
    assert r.output_bytes == out.nbytes


def test_a_sweep_over_isa_shows_the_isas_side_by_side(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("MKLDNN_EXPLORER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("MKLDNN_EXPLORER_NO_DIALOGS", "1")
    from explorer.core.jobs.options import RunOptions
    from explorer.gui.jobs import sweep_worker
    from explorer.gui.tabs.sweep_view import FIELDS, SweepView

    assert "isa" in FIELDS
    top = isa.available()[-1]
    v = SweepView()
    qtbot.addWidget(v)
    v.resize(1000, 560)
    v.show()
    v.set_base(TINY)
    v.set_options(RunOptions(paths=("mkldnn",), budget_ms=5.0, trace=True))
    v.set_vary("isa", f"sse41,{top}")
    assert v.point_count == 2
    try:
        with qtbot.waitSignal(v.finished, timeout=400_000):
            assert v.run()
        v.redraw_now()
        got = [(r.vary, r.isa) for r in v.results()]
        assert got == [("isa=sse41", "sse41"), (f"isa={top}", top)]
        assert v.data.categorical_x and v.data.xs == ["sse41", top]  # the ISAs as categories on the x axis
    finally:
        assert v.shutdown(5000)
    assert sweep_worker.live_threads() == 0
