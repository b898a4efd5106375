"""The parameter panel: fields <-> descriptor sync, pasted lines, validation as you type, tooltips, presets."""

import pytest
from PySide6.QtCore import Qt

from explorer.core.paths.base import PATHS
from explorer.core.problem.spec import SPEC_FIELDS, parse_descriptor

TINY = "mb2ic16ih14oc16oh14kh3ph1"


def _type(qtbot, widget, text):
    widget.setFocus()
    widget.selectAll()
    qtbot.keyClicks(widget, text)


def test_opens_on_the_default_preset(make_window):
    import json
    from importlib import resources

    presets = json.loads(resources.files("explorer.resources").joinpath("presets.json").read_text())
    default = next(p for p in presets if p.get("default"))
    win = make_window()
    assert win.panel.spec == parse_descriptor(default["desc"])
    assert default["layer"] in win.panel.preset_combo.currentText()
    assert win.panel.run_button.isEnabled()


def test_fields_update_the_descriptor_and_back(make_window, qtbot):
    win = make_window(spec=parse_descriptor(TINY))
    p = win.panel
    _type(qtbot, p.fields["oc"], "32")
    _type(qtbot, p.fields["sh"], "2")
    assert p.spec.oc == 32 and p.spec.sh == 2 and p.spec.sw == 1
    assert p.desc_edit.text() == p.spec.descriptor()
    assert parse_descriptor(p.desc_edit.text()) == p.spec
    _type(qtbot, p.desc_edit, "g4mb1ic8ih10oc8kh3ph1")
    assert p.fields["g"].text() == "4" and p.fields["ih"].text() == "10" and p.fields["mb"].text() == "1"
    assert p.out_label.text() == "10 × 10"


def test_pasted_batch_and_verbose_lines_fill_the_form(make_window, qtbot):
    win = make_window(spec=parse_descriptor(TINY))
    p = win.panel
    _type(qtbot, p.desc_edit, "--dir=FWD_D --dt=bf16 mb1ic64ih56oc64oh56kh3ph1n\"res2a\"  # a comment")
    s = p.spec
    assert (s.ic, s.ih, s.oc, s.kh, s.ph, s.dtype, s.bias, s.name) == (64, 56, 64, 3, 1, "bf16", False, "res2a")
    assert p.dtype_combo.currentText() == "bf16" and not p.bias_check.isChecked()
    verbose = ("onednn_verbose,v1,primitive,exec,cpu,convolution,jit:avx512_core,forward_training,"
               "src:f32:ap:blocked:aBcd16b::f0 wei:f32:ap:blocked:ABcd16b16a::f0 bia:f32::blocked:a::f0 "
               "dst:f32:ap:blocked:aBcd16b::f0,attr-scratchpad:user,alg:convolution_direct,"
               "mb2_ic17oc17_ih5oh5kh3sh1dh0ph1_iw4ow4kw3sw1dw0pw1,0.0219727")
    _type(qtbot, p.desc_edit, verbose)
    s = p.spec
    assert (s.mb, s.ic, s.oc, s.ih, s.iw, s.dtype, s.bias) == (2, 17, 17, 5, 4, "f32", True)
    assert p.fields["iw"].text() == "4"


def test_invalid_value_marks_the_field_and_disables_run(make_window, qtbot):
    win = make_window(spec=parse_descriptor(TINY))
    p = win.panel
    _type(qtbot, p.fields["g"], "3")
    assert not p.run_button.isEnabled() and not win.run_action.isEnabled()
    assert "g=3 does not divide ic=16" in p.message.text()
    assert "border" in p.fields["g"].styleSheet()
    assert p.spec is None
    _type(qtbot, p.fields["g"], "4")
    assert p.run_button.isEnabled() and p.message.text() == "" and p.fields["g"].styleSheet() == ""
    _type(qtbot, p.fields["mb"], "x")
    assert "mb" in p.message.text() and "whole number" in p.message.text()
    assert not p.run_button.isEnabled()
    _type(qtbot, p.fields["mb"], "0")
    assert "positive" in p.message.text()
    _type(qtbot, p.fields["mb"], "2")
    _type(qtbot, p.fields["kh"], "40")
    assert "kh=40" in p.message.text() and "border" in p.fields["kh"].styleSheet()
    _type(qtbot, p.fields["kh"], "3")
    assert p.run_button.isEnabled()
    # A bad descriptor marks the descriptor field, one sentence.
    # (benchdnn accepts oh99 with ph1: it derives a bottom pad of 86; oh2 without ph implies a negative top pad)
    _type(qtbot, p.desc_edit, "mb2ic16ih14oc16oh2kh3")
    assert "oh=2" in p.message.text() and "border" in p.desc_edit.styleSheet()
    assert not p.run_button.isEnabled()
    # No path selected.
    _type(qtbot, p.desc_edit, TINY)
    for cb in p.path_checks.values():
        cb.setChecked(False)
    assert "no path selected" in p.message.text() and not p.run_button.isEnabled()
    qtbot.mouseClick(p.path_checks["dense"], Qt.LeftButton)
    assert p.run_button.isEnabled() and p.paths() == ("dense",)


def test_every_field_and_path_has_a_one_sentence_tooltip(make_window):
    p = make_window().panel
    for key in SPEC_FIELDS:
        if key in ("oh", "ow"):
            continue
        tip = p.fields[key].toolTip()
        assert tip and tip.endswith(".") and tip.count(". ") == 0, key
    for path in PATHS:
        assert p.path_checks[path].toolTip().endswith(".")
    for w in (p.desc_edit, p.dtype_combo, p.bias_check, p.threads_spin, p.budget_spin, p.preset_combo,
              p.name_edit, p.run_button, p.stop_button, p.trace_check):
        assert w.toolTip(), w.objectName()


def test_preset_choice_fills_the_form(make_window):
    p = make_window().panel
    idx = next(i for i in range(1, p.preset_combo.count()) if "MobileNet" in p.preset_combo.itemText(i))
    p.preset_combo.setCurrentIndex(idx)
    p.preset_combo.activated.emit(idx)
    assert p.spec.g == p.spec.ic == p.spec.oc == 32
    assert p.preset_combo.currentIndex() == idx


# The GUI side of tests/cli/test_bad_inputs.py: pasted into the descriptor field, each is refused inline.
BAD_PASTES = [
    ("mb2ic16ih14oc16kh3$", "cannot read"), ("mb2ic16ih14oc16kh3zz1", "unknown key"), ("mb2ic16oc16kh3", "ih"),
    ("mb2ic16ih14oc16oh2kh3", "oh=2"), ("mb2ic0ih14oc16kh3", "ic"), (TINY + "g3", "g=3"),
    ("mb2ic16ih4oc16kh9", "kh=9"), ("mb2ic16ih14oc16kh3sh0", "sh"), ("mb2ic16ih99999999999oc16kh3", "too large"),
    ("mb256ic256ih224oc256kh3ph1", "available"), ("mb2ic16id8ih14oc16kh3kd3", "3-D"), ("", "empty"),
]


@pytest.mark.parametrize("text, words", BAD_PASTES)
def test_bad_descriptor_pasted_is_refused_inline(make_window, qtbot, text, words):
    win = make_window(spec=parse_descriptor(TINY))
    p = win.panel
    _type(qtbot, p.desc_edit, text)
    if not text:
        qtbot.keyClick(p.desc_edit, Qt.Key_Delete)  # the selected old text goes; the field is empty
    assert words in p.message.text()
    assert len(p.message.text().splitlines()) == 1
    assert not p.run_button.isEnabled() and not win.run_action.isEnabled()
    assert not win.start_run() and not win.running  # nothing runs
