"""Issue #38, item 1: every field of the Run panel is a view of one spec. Typed into with the keyboard (keyClicks
then Tab), each field must change the descriptor, the preset name, the memory estimate and what Run then
measures, all to the same spec."""

import pytest
from PySide6.QtCore import Qt

from explorer.core.problem.memory import estimate_bytes, fmt_bytes
from explorer.core.problem.spec import parse_descriptor
from explorer.gui.run.param_panel import load_presets

PRESET = next(p for p in load_presets() if p.get("default"))
PRESET_TEXT = f"{PRESET['network']} — {PRESET['layer']}"
BASE = parse_descriptor(PRESET["desc"])  # mb1ic64ih56oc64oh56kh3ph1, named after the preset's layer

# (field, typed text, the spec it must give from BASE): every spin-free field of the 2-D form
EDITS = [
    ("mb", "3", dict(mb=3)),
    ("g", "4", dict(g=4)),
    ("ic", "32", dict(ic=32)),
    ("oc", "48", dict(oc=48)),
    ("ih", "30", dict(ih=30)),
    ("iw", "31", dict(iw=31)),
    ("kh", "5", dict(kh=5)),
    ("kw", "1", dict(kw=1)),
    ("sh", "2", dict(sh=2)),
    ("sw", "3", dict(sw=3)),
    ("ph", "2", dict(ph=2)),
    ("pw", "0", dict(pw=0)),
    ("dh", "1", dict(dh=1)),
    ("dw", "2", dict(dw=2)),
    ("ph_r", "0", dict(ph_r=0)),
    ("pw_r", "2", dict(pw_r=2)),
]


def _type(qtbot, widget, text):
    widget.setFocus()
    if hasattr(widget, "selectAll"):
        widget.selectAll()
    qtbot.keyClicks(widget, text)
    qtbot.keyClick(widget, Qt.Key_Tab)


def _window(make_window):
    win = make_window(spec=BASE, options={"paths": ["dense", "mkldnn"], "budget_ms": 100})
    assert win.panel.is_valid, win.panel.error
    assert win.panel.preset_combo.currentText() == PRESET_TEXT
    return win


def _expect(win, spec):
    """The descriptor, the memory estimate and a Run all say `spec`."""
    panel = win.panel
    assert panel.is_valid, panel.error
    assert panel.spec == spec
    assert panel.desc_edit.text() == spec.descriptor()
    assert parse_descriptor(panel.desc_edit.text(), dtype=spec.dtype, bias=spec.bias) == spec
    assert f"about {fmt_bytes(estimate_bytes(spec, panel.paths()))}" in panel.ops_label.text()


def _run_measures(win, monkeypatch):
    """Press Run with the measuring process replaced: the spec the job gets and the one the session holds."""
    got = {}

    def start(spec, opts, csv_path=None):
        got["spec"], got["opts"] = spec, opts
        return True

    monkeypatch.setattr(win.controller, "start", start)
    monkeypatch.setattr(type(win.controller), "running", property(lambda self: False))
    assert win.start_run()
    return got, win.session.run_spec


@pytest.mark.parametrize("field,text,change", EDITS, ids=[e[0] for e in EDITS])
def test_typing_into_a_shape_field_changes_every_view_and_the_run(make_window, qtbot, monkeypatch, field, text, change):
    win = _window(make_window)
    panel = win.panel
    _type(qtbot, panel.fields[field], text)
    assert panel.fields[field].text() == text
    want = BASE.replace(**change).normalized().validate()
    if want.replace(name="") != BASE.replace(name=""):
        # no longer the preset's shape: the preset and the name it filled in are gone (a row named after a
        # preset's layer would be another shape)
        assert panel.preset_combo.currentIndex() == 0, panel.preset_combo.currentText()
        want = want.replace(name="")
        assert panel.name_edit.text() == ""
    _expect(win, want)
    got, session_spec = _run_measures(win, monkeypatch)
    assert got["spec"] == want and session_spec == want
    assert tuple(got["opts"].paths) == ("dense", "mkldnn")


def test_dtype_bias_name_and_budget_keep_the_preset_and_reach_the_run(make_window, qtbot, monkeypatch):
    win = _window(make_window)
    panel = win.panel
    panel.dtype_combo.setFocus()
    qtbot.keyClicks(panel.dtype_combo, "bf16")  # a non-editable combo: typing selects by its text
    qtbot.keyClick(panel.dtype_combo, Qt.Key_Tab)
    assert panel.dtype_combo.currentText() == "bf16"
    panel.bias_check.setFocus()
    qtbot.keyClick(panel.bias_check, Qt.Key_Space)
    _type(qtbot, panel.name_edit, "mine")
    _type(qtbot, panel.budget_spin, "250")
    assert panel.budget_spin.value() == 250
    want = BASE.replace(dtype="bf16", bias=False, name="mine")
    _expect(win, want)
    assert panel.preset_combo.currentText() == PRESET_TEXT  # the same shape: still that preset
    got, session_spec = _run_measures(win, monkeypatch)
    assert got["spec"] == want and session_spec == want
    assert got["opts"].budget_ms == 250.0


def test_a_shape_typed_back_to_the_preset_selects_it_again_and_a_typed_name_stays(make_window, qtbot):
    win = _window(make_window)
    panel = win.panel
    _type(qtbot, panel.name_edit, "my layer")
    _type(qtbot, panel.fields["ih"], "30")
    assert panel.preset_combo.currentIndex() == 0
    assert panel.name_edit.text() == "my layer"  # the user's own name is not the preset's to clear
    _type(qtbot, panel.fields["ih"], str(BASE.ih))
    assert panel.preset_combo.currentText() == PRESET_TEXT
    _expect(win, BASE.replace(name="my layer"))


def test_spatial_dims_combo_changes_the_descriptor_and_the_preset(make_window, qtbot):
    win = _window(make_window)
    panel = win.panel
    panel.ndims_combo.setFocus()
    qtbot.keyClicks(panel.ndims_combo, "3")  # "3-D (d, h, w)"
    qtbot.keyClick(panel.ndims_combo, Qt.Key_Tab)
    assert panel.ndims() == 5
    assert panel.preset_combo.currentIndex() == 0
    _type(qtbot, panel.fields["id"], "8")
    _type(qtbot, panel.fields["kd"], "3")
    _type(qtbot, panel.fields["pd"], "1")
    spec = panel.spec
    assert spec is not None and spec.ndims == 5 and (spec.id, spec.kd, spec.pd) == (8, 3, 1)
    assert (spec.ih, spec.kh, spec.ph) == (BASE.ih, BASE.kh, BASE.ph)
    _expect(win, spec)


def test_a_height_refused_for_memory_still_shows_everywhere_and_does_not_run(make_window, qtbot, monkeypatch):
    from explorer.core.problem import memory

    win = _window(make_window)
    panel = win.panel
    big = BASE.replace(ih=100000, name="").normalized().validate()
    need = memory.estimate_bytes(big, panel.paths())
    monkeypatch.setattr(memory, "available_bytes", lambda: need)  # the limit is half of it: refused
    _type(qtbot, panel.fields["ih"], "100000")
    assert panel.desc_edit.text() == big.descriptor()
    assert panel.preset_combo.currentIndex() == 0  # not the preset's shape, even while refused
    assert fmt_bytes(need) in panel.message.text()
    # the limit is said as the limit ("but only 21 GiB is available" for a 20 GiB problem read as a contradiction)
    assert f"more than the {fmt_bytes(need * memory.SAFE_SHARE)} a run may take" in panel.message.text()
    assert not win.start_run() and win.session.run_spec is None
