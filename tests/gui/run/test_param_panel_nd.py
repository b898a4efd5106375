"""The parameter panel keeps 1-D, 3-D and asymmetric-pad problems intact (issue 11)."""

import pytest

from explorer.core.problem.spec import parse_descriptor
from explorer.gui.run.param_panel import ParamPanel


@pytest.fixture
def panel(qtbot):
    p = ParamPanel()
    qtbot.addWidget(p)
    return p


@pytest.mark.parametrize("desc", [
    'g1ic16oc16_ih5oh8kh3ph3_n"gemm"', "ic3oc17_iw8ow4kw3pw1sw2", "g4ic8oc8_id5od5kd3pd1",
    "mb1ic16id13ih1iw1oc16od4oh1ow1kd2kh1kw1sd2sh1sw1dd5dh0dw0pd1ph0pw0",
])
def test_pasted_descriptor_round_trips_through_the_fields(panel, desc):
    panel.set_descriptor(desc)
    want = parse_descriptor(desc)
    assert panel.is_valid, panel.error
    assert panel.spec == want
    assert panel.ndims_combo.currentData() == want.ndims
    assert panel.fields["id"].isEnabled() == (want.ndims == 5)
    assert panel.fields["ih"].isEnabled() == (want.ndims >= 4)
    assert panel.desc_edit.text() == want.descriptor()


def test_editing_a_right_pad_makes_an_asymmetric_problem(panel, qtbot):
    panel.set_descriptor("mb1ic8ih12oc8oh12kh3ph1")
    assert panel.fields["ph_r"].text() == ""
    panel.fields["ph_r"].setText("0")
    panel.fields["ph_r"].textEdited.emit("0")
    s = panel.spec
    assert (s.ph, s.pad_r("h"), s.oh, s.ow) == (1, 0, 11, 12)
    assert "oh11" in panel.desc_edit.text() and "asymmetric" in panel.out_label.text()
    panel.fields["ph_r"].setText("x")
    panel.fields["ph_r"].textEdited.emit("x")
    assert not panel.is_valid and not panel.run_button.isEnabled()
    assert "ph_r" in panel.message.text()


def test_switching_to_3d_enables_depth_and_validates(panel):
    panel.set_descriptor("mb1ic8ih12oc8oh12kh3ph1")
    panel.ndims_combo.setCurrentIndex(panel.ndims_combo.findData(5))
    assert panel.fields["kd"].isEnabled() and panel.is_valid
    assert panel.spec.ndims == 5 and panel.spec.input_shape == (1, 8, 1, 12, 12)
    panel.fields["kd"].setText("3")
    panel.fields["kd"].textEdited.emit("3")
    assert not panel.is_valid  # kd=3 spans more than id=1: refused with the field marked
    assert panel.error[1] == "kd" and panel.fields["kd"].styleSheet()


def test_layout_view_draws_3d_tensors_as_slices(qtbot):
    from explorer.core.layout.path_layouts import inspect_path
    from explorer.core.layout.picture import build_picture, dim_names
    from explorer.gui.inspect.layout_view import LayoutView

    s = parse_descriptor("mb1ic3id4ih5iw6oc8od4oh5ow6kd3kh3kw3pd1ph1pw1")
    ins = inspect_path(s, "dense")
    out = ins.tensors["output"].stored
    pic = build_picture(out)
    assert dim_names(out) == "ncdhw" and pic.log_grid["plane_dims"] == [2, 3, 4]
    assert (pic.log_grid["plane_h"], pic.log_grid["plane_w"]) == (4 * 5, 6)  # D slices of HxW per channel
    # every element of image 0 is drawn exactly once, at its own offset
    offs = pic.log_off[pic.log_off >= 0]
    assert sorted(offs.tolist()) == list(range(8 * 4 * 5 * 6))
    w = ins.tensors["weight"].stored
    assert dim_names(w) == "oidhw" and build_picture(w).log_grid["row_dim"] == 0  # not mistaken for g, o, i, h, w
    view = LayoutView()
    qtbot.addWidget(view)
    view.set_tensors({r: t for r, t in ins.tensors.items()}, "3-D")
    view.set_role("output")
    assert "D slices of H\u00d7W" in view.logical_pane.caption.text()
