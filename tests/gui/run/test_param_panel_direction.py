"""Issue #32: the window's descriptor field honours a pasted --dir (a backward line is not timed forward), the
direction box sets it, and BWD_WB without a bias marks the box and refuses to run."""

import pytest

from explorer.core.problem.spec import parse_descriptor
from explorer.gui.run.param_panel import ParamPanel

DESC = "mb2ic16ih14oc16oh14kh3ph1"


@pytest.fixture
def panel(qtbot):
    p = ParamPanel()
    qtbot.addWidget(p)
    return p


@pytest.mark.parametrize("direction", ["BWD_D", "BWD_W", "BWD_WB", "FWD_I"])
def test_a_pasted_dir_is_the_spec_the_run_gets(panel, direction):
    panel.set_descriptor(f"--dir={direction} {DESC}")
    assert panel.is_valid, panel.error
    assert panel.spec == parse_descriptor(f"--dir={direction} {DESC}")
    assert panel.direction_combo.currentText() == direction


def test_the_direction_box_sets_the_direction_and_the_bias_box_says_fwd_b_or_fwd_d(panel):
    panel.set_descriptor(DESC)
    assert panel.spec.direction == "FWD_B"
    panel.bias_check.setChecked(False)
    assert panel.spec.direction == "FWD_D"
    panel.direction_combo.setCurrentText("BWD_W")
    assert panel.spec.direction == "BWD_W" and panel.spec.desc == parse_descriptor(DESC).desc


def test_bwd_wb_without_a_bias_marks_the_box_and_refuses_to_run(panel):
    panel.set_descriptor(DESC)
    panel.bias_check.setChecked(False)
    panel.direction_combo.setCurrentText("BWD_WB")
    assert not panel.is_valid and not panel.run_button.isEnabled()
    message, field = panel.error
    assert field == "direction" and "BWD_WB" in message
    assert panel.direction_combo.styleSheet() != ""
