"""The descriptor and the fields are views of one spec, also while the memory guard refuses it (issue 38, item 1)."""

from PySide6.QtCore import Qt

from explorer.core.problem import memory
from explorer.core.problem.spec import parse_descriptor
from explorer.gui.run.param_panel import INVALID_STYLE, ParamPanel

BASE = "mb1ic64ih56oc64oh56kh3ph1"


def _type(qtbot, edit, text):
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key_Tab)


def test_typed_height_refused_for_memory_shows_in_descriptor_and_outlines_that_field(qtbot, monkeypatch):
    panel = ParamPanel()
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    panel.set_descriptor(BASE)
    assert panel.is_valid, panel.error
    big = parse_descriptor(BASE).replace(ih=100000).normalized().validate()
    # memory such that ih10000 fits and ih100000 does not: the refusal comes from the typed value only
    avail = memory.estimate_bytes(big, panel.paths())
    monkeypatch.setattr(memory, "available_bytes", lambda: avail)

    _type(qtbot, panel.fields["ih"], "100000")

    field = panel.fields["ih"].text()
    assert field == "100000"
    assert parse_descriptor(panel.desc_edit.text()).ih == int(field)
    assert panel.desc_edit.text() == big.descriptor()
    assert not panel.is_valid and panel.spec is None  # no run with a stale spec
    assert panel.error[1] == "ih"
    assert panel.fields["ih"].styleSheet() == INVALID_STYLE
    assert panel.fields["mb"].styleSheet() == ""

    _type(qtbot, panel.fields["ih"], "28")  # back within memory: the run uses what both views show
    assert panel.is_valid, panel.error
    assert panel.spec == parse_descriptor(panel.desc_edit.text(), dtype=panel.spec.dtype, bias=panel.spec.bias)
    assert panel.spec.ih == int(panel.fields["ih"].text()) == 28


def test_memory_refusal_from_a_pasted_descriptor_still_outlines_the_core_field(qtbot, monkeypatch):
    panel = ParamPanel()
    qtbot.addWidget(panel)
    monkeypatch.setattr(memory, "available_bytes", lambda: 1)
    panel.set_descriptor(BASE)
    assert not panel.is_valid and panel.error[1] == "mb"
    assert panel.desc_edit.text() == BASE  # the user's own text stays
