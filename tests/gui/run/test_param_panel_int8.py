"""An int8 line pasted in the descriptor field is the int8 problem run (issue 32): dtype and scales kept, not f32."""

from PySide6.QtCore import Qt

from explorer.gui.run.param_panel import ParamPanel

LINE = "--cfg=u8s8u8 --attr-scales=src:common:0.25+wei:per_oc mb1ic16ih14oc16oh14kh3ph1"


def _type(qtbot, edit, text):
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key_Tab)


def test_pasted_int8_line_keeps_its_dtype_and_scales(qtbot):
    panel = ParamPanel()
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    _type(qtbot, panel.desc_edit, LINE)
    assert panel.is_valid, panel.error
    assert (panel.spec.dtype, panel.spec.scales) == ("u8s8u8", "src:common:0.25+wei:per_oc")
    assert panel.dtype_combo.currentText() == "u8s8u8"
    _type(qtbot, panel.fields["ih"], "12")  # editing a field keeps the int8 config
    assert (panel.spec.ih, panel.spec.dtype, panel.spec.scales) == (12, "u8s8u8", "src:common:0.25+wei:per_oc")

