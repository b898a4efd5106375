"""LayoutView on real tensors of real paths (inspect_path runs torch; results are shared per module)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from PySide6 import QtCore, QtGui

from explorer.core.layout.path_layouts import TensorLayout, inspect_path
from explorer.core.layout.picture import CELL_LIMIT, GAP, PAD_A, PAD_B, PHYS_LIMIT
from explorer.core.layout.tags import layout_from_tag
from explorer.core.problem.spec import parse_descriptor
from explorer.gui.inspect.layout_view import LayoutView

SPEC = "mb2ic17ih5oc17oh5kh3ph1"  # 2x17x5x5 (w copies h)
SPEC_W4 = "mb2ic17ih5iw4oc17oh5ow4kh3kw3ph1pw1"  # 2x17x5x4: the FIELD_GUIDE example (5120 vs 2720 bytes on AVX-512)


def padded(n: int, block: int) -> int:
    return -(-n // block) * block


def overhead(stored: int, logical: int) -> str:
    """As the view prints it, e.g. '+88.2 %' (5120 vs 2720) or '+41.2 %' (3840 vs 2720)."""
    return f"+{100 * (stored - logical) / logical:.1f} %"


def nchwxc_offset(idx, C, H, W, b):
    """FIELD_GUIDE section 3, written out here rather than taken from the code under test."""
    n, c, h, w = idx
    return n * padded(C, b) * H * W + (c // b) * H * W * b + h * W * b + w * b + c % b


@pytest.fixture(scope="module")
def insp():
    cache = {}

    def get(spec, path):
        if (spec, path) not in cache:
            cache[spec, path] = inspect_path(parse_descriptor(spec), path)
        return cache[spec, path]

    return get


@pytest.fixture
def view(qtbot):
    w = LayoutView()
    qtbot.addWidget(w)
    w.resize(900, 520)
    w.show()
    return w


def _out(view, insp, spec=SPEC_W4, path="mkldnn", role="output", kernel=False):
    view.set_tensors(insp(spec, path).tensors, title=f"{path} {spec}")
    view.set_role(role)
    view.set_kernel_mode(kernel)
    return view.picture


def test_empty_states(view):
    for empty in (None, {}):
        view.set_tensors(empty)
        assert view.stack.currentWidget() is view.placeholder
        assert "No tensors" in view.placeholder.text()
        assert view.picture is None
        assert view.hover_physical_cell(0, 0) is None


def test_facts_mkldnn_output_padded(view, insp, f32_block):
    b = f32_block  # AVX-512: aBcd16b, 17 -> 32 channels, 5120 bytes; AVX2: aBcd8b, 17 -> 24, 3840 bytes
    cp = padded(17, b)
    pic = _out(view, insp)
    facts = view.facts_label.text()
    assert pic.layout.tag == f"aBcd{b}b"
    assert f"aBcd{b}b" in facts and f"nChw{b}c" in facts
    stored = 2 * cp * 5 * 4 * 4
    assert str(stored) in facts and "2720" in facts and overhead(stored, 2720) in facts
    assert "descriptor" in facts
    assert f"2\u00d7{cp}\u00d75\u00d74" in facts  # padded dims
    # The brief's spec without iw4 is 2x17x5x5: 6400 stored (AVX-512) vs 3400 logical.
    _out(view, insp, spec=SPEC)
    facts = view.facts_label.text()
    assert str(2 * cp * 5 * 5 * 4) in facts and "3400" in facts and f"aBcd{b}b" in facts


def test_physical_image_has_padded_size_and_marks_padding(view, insp, f32_block):
    pic = _out(view, insp)
    lay = pic.layout
    b = f32_block
    cp = padded(17, b)
    # Image 0 of nChw16c: 32 (padded) channels x 5 x 4, rows wrapped at the 16-element run
    # (nChw8c: 24 x 5 x 4, 8-element runs).
    assert pic.phys_count == cp * 5 * 4
    assert pic.phys_geom["run"] == lay.innermost_run == b
    cells = pic.phys_off >= 0
    assert cells.sum() == pic.phys_count
    assert pic.phys_img.dtype == np.uint8 and pic.phys_img.flags.c_contiguous
    pad_cells = np.isin(pic.phys_img, (PAD_A, PAD_B))
    assert pad_cells.sum() == (cp - 17) * 5 * 4
    assert not pad_cells[~cells].any() and (pic.phys_img[~cells] == GAP).all()
    # Every cell marked as padding is padding in the layout model, and no other cell is.
    offs = pic.phys_off[cells]
    _, valid = lay.elements_at(offs)
    assert np.array_equal(~valid, pad_cells[cells])
    # Logical pane: cp - 17 ghost channel planes of 5x4 (15 with 16-channel blocks, 7 with 8).
    assert pic.log_pad.sum() == (cp - 17) * 5 * 4
    assert np.isin(pic.log_img[pic.log_pad], (PAD_A, PAD_B)).all()


def test_hover_physical_maps_to_logical_and_back(view, insp):
    pic = _out(view, insp)
    lay = pic.layout
    ys, xs = np.nonzero(pic.phys_off >= 0)
    checked = 0
    for x, y in zip(xs[::7], ys[::7]):
        off = int(pic.phys_off[y, x])
        info = view.hover_physical_cell(int(x), int(y))
        assert info.offset == off and info.physical_cell == (x, y)
        if info.padding:
            assert "padding (zero)" in info.text
            continue
        assert info.index == lay.element_at(off)
        assert lay.offset(info.index) == off
        assert lay.offset_formula(info.index) in info.text
        # Back: the highlighted logical cell holds the same element, and hovering it points here.
        lx, ly = info.logical_cell
        loff, lidx, lpad = pic.logical_at(lx, ly)
        assert (loff, lidx, lpad) == (off, info.index, False)
        back = view.hover_logical_cell(lx, ly)
        assert back.physical_cell == (x, y) and back.index == info.index
        checked += 1
    assert checked > 20


def test_known_element_offsets(view, insp, f32_block):
    pic = _out(view, insp)
    lay = pic.layout
    b = f32_block
    # nChw16c: n*Cp*H*W + (c/16)*H*W*16 + h*W*16 + w*16 + c%16 -> (0, 5, 3, 1) = 0 + 0 + 192 + 16 + 5 = 213;
    # nChw8c: 0 + 0 + 96 + 8 + 5 = 109.
    want = nchwxc_offset((0, 5, 3, 1), 17, 5, 4, b)
    assert want == {16: 213, 8: 109}[b]
    cell = pic.logical_cell_of_index((0, 5, 3, 1))
    info = view.hover_logical_cell(*cell)
    assert info.offset == want == lay.offset((0, 5, 3, 1))
    assert f"(c/{b})*H*W*{b}" in info.text and f"c%{b}" in info.text
    assert info.text.endswith(f"= {want}")
    assert pic.physical_offset_at(*info.physical_cell) == want
    assert "c=5" in view.hover_label.text()


def test_hover_padding_says_so(view, insp):
    pic = _out(view, insp)
    ys, xs = np.nonzero(np.isin(pic.phys_img, (PAD_A, PAD_B)))
    info = view.hover_physical_cell(int(xs[0]), int(ys[0]))
    assert info.padding and info.index is None and "padding (zero)" in view.hover_label.text()
    # The same padding element is drawn as a ghost plane in the logical pane.
    assert info.logical_cell is not None
    ly, lx = np.nonzero(pic.log_pad)
    ghost = view.hover_logical_cell(int(lx[0]), int(ly[0]))
    assert ghost.padding and "padding (zero)" in ghost.text and "c=17" in ghost.text
    assert ghost.physical_cell is not None


def test_hover_through_scene_coordinates(view, insp, qtbot):
    pic = _out(view, insp)
    qtbot.waitExposed(view)
    lay = pic.layout
    off = lay.offset((0, 16, 2, 3))
    px, py = pic.physical_cell_of_offset(off)
    pane = view.physical_pane
    scene_pos = pane.vb.mapViewToScene(QtCore.QPointF(px + 0.5, py + 0.5))
    view._on_physical_mouse(scene_pos)
    assert view.last_hover is not None and view.last_hover.index == (0, 16, 2, 3)
    assert pane.hl_inner.isVisible() and view.logical_pane.hl_inner.isVisible()
    lx, ly = view.last_hover.logical_cell
    view._on_logical_mouse(view.logical_pane.vb.mapViewToScene(QtCore.QPointF(lx + 0.5, ly + 0.5)))
    assert view.last_hover.physical_cell == (px, py)


def test_kernel_toggle_uses_trace_layout(view, insp, f32_block):
    b = f32_block
    tensors = insp(SPEC, "mkldnn").tensors
    w = tensors["weight"]
    # Stored: the module's prepacked Ohwi<k>o (k = 32 on AVX-512, 24 on AVX2); the kernel reordered it again
    # to OIhw<b>i<b>o (ABcd16b16a / ABcd8b8a), as the trace shows.
    m = re.fullmatch(r"Acdb(\d+)a", w.stored.tag)
    assert m, w.stored.tag
    k = int(m.group(1))
    assert k % 8 == 0 and w.stored.padded_dims == (padded(17, k), 17, 3, 3)
    kernel_tag = f"ABcd{b}b{b}a"
    assert w.kernel.tag == kernel_tag
    pic = _out(view, insp, spec=SPEC, role="weight", kernel=False)
    assert pic.layout.tag == w.stored.tag and pic.phys_geom["run"] == k
    pic = _out(view, insp, spec=SPEC, role="weight", kernel=True)
    assert pic.layout.tag == kernel_tag
    # OIhw16i16o: 256-element runs drawn as 16 x 16 tiles (OIhw8i8o: 64 as 8 x 8).
    assert (pic.phys_geom["run"], pic.phys_geom["tile_h"], pic.phys_geom["tile_w"]) == (b * b, b, b)
    facts = view.facts_label.text()
    assert kernel_tag in facts and f"OIhw{b}i{b}o" in facts and "trace" in facts and w.stored.tag in facts
    cp = padded(17, b)
    assert pic.log_mode == "matrix" and pic.log_grid["rows"] == cp and pic.log_grid["cols"] == cp


def test_dense_channels_last_native(view, insp):
    pic = _out(view, insp, spec=SPEC, path="dense", role="input")
    assert pic.layout.tag == "abcd" and pic.phys_geom["run"] == 5  # W
    assert "strides" in view.facts_label.text()
    assert view.kernel_radio.isEnabled()
    pic = _out(view, insp, spec=SPEC, path="channels_last", role="input")
    assert pic.layout.tag == "acdb" and pic.phys_geom["run"] == 17  # C
    assert "nhwc" in view.facts_label.text()
    # nhwc: a physical row is one pixel's 17 channels, so the run's colours are 17 different channels.
    x0, y0 = pic.physical_cell_of_offset(0)
    row = [pic.phys_idx[pic.phys_off[y0, x0 + k]][1] for k in range(17)]
    assert row == list(range(17))
    _out(view, insp, spec=SPEC, path="native", role="output")
    assert not view.kernel_radio.isEnabled() and view.stored_radio.isChecked()
    assert "no oneDNN convolution" in view.facts_label.text()
    assert not view.slice_label.isVisibleTo(view)


def test_unknown_layout(view):
    tl = TensorLayout("output", (2, 17, 5, 5), "f32", None, "descriptor",
                      "unknown, because its dims [1] differ from the tensor shape [2, 17, 5, 5]", 6400)
    view.set_tensors({"output": tl})
    assert view.pane_stack.currentWidget() is view.unknown_label
    assert "unknown, because its dims" in view.unknown_label.text()
    assert "unknown, because" in view.facts_label.text() and "6400" in view.facts_label.text()
    assert view.picture is None


def test_big_tensor_draws_a_slice_quickly(view, insp, f32_block):
    """Quick because it is bounded: never more than CELL_LIMIT logical / PHYS_LIMIT physical cells."""
    b = f32_block
    tensors = insp("mb2ic256ih56oc64kh1", "mkldnn").tensors
    view.set_tensors(tensors, title="big")
    view.set_role("input")
    view.set_kernel_mode(True)  # aBcd16b (AVX-512) or aBcd8b (AVX2), 2x256x56x56
    pic = view.picture
    assert pic.layout.tag == f"aBcd{b}b"
    assert pic.sliced and view.slice_label.isVisibleTo(view)
    assert "slice" in view.slice_label.text() and "of 256" in view.slice_label.text()
    assert (pic.log_off >= 0).sum() <= CELL_LIMIT and pic.phys_count <= PHYS_LIMIT
    assert pic.phys_total == 2 * 256 * 56 * 56
    # Still exact: a drawn physical cell maps to the element the layout puts there
    # (offset 5461 with 16-channel blocks, 2733 with 8).
    off = nchwxc_offset((0, 5, 6, 5), 256, 56, 56, b)
    assert off < pic.phys_count
    x, y = pic.physical_cell_of_offset(off)
    info = view.hover_physical_cell(x, y)
    assert info.index == (0, 5, 6, 5) and info.logical_cell is not None


@pytest.mark.parametrize("tag", ["ABcd16b16a", "ABcd8b8a"])  # the kernel's weight with AVX-512 and with AVX2
def test_big_weight_slice(view, tag):
    lay = layout_from_tag(tag, (256, 256, 3, 3), kind="weight")
    tl = TensorLayout("weight", lay.dims, "f32", lay, "descriptor", None, lay.nbytes)
    view.set_tensors({"weight": tl})
    pic = view.picture
    assert pic.sliced and (pic.log_off >= 0).sum() <= CELL_LIMIT
    assert "o 0-" in view.slice_label.text()


def test_role_selector_and_palette(view, insp):
    view.set_tensors(insp(SPEC, "mkldnn").tensors)
    roles = [view.role_combo.itemText(i) for i in range(view.role_combo.count())]
    assert roles == ["input", "weight", "output"]
    view.set_role("input")
    assert view.picture.layout.dims == (2, 17, 5, 5)
    light_pad = view._lut[PAD_A].copy()
    pal = QtGui.QPalette()
    pal.setColor(QtGui.QPalette.Window, QtGui.QColor(40, 40, 40))
    pal.setColor(QtGui.QPalette.Base, QtGui.QColor(25, 25, 25))
    pal.setColor(QtGui.QPalette.WindowText, QtGui.QColor(230, 230, 230))
    view.setPalette(pal)
    assert not np.array_equal(view._lut[PAD_A], light_pad)
    assert view.grab().width() > 0


def test_narrow_view_fits_and_details_panel(view, insp, qtbot, f32_block):
    """At the width the main window gives it at 1280x800 nothing needs a horizontal scroll bar: the controls
    wrap, the key facts are one block above the panes and the full table is behind Details."""
    pic = _out(view, insp)
    view.resize(520, 360)
    qtbot.wait(10)
    assert view.minimumSizeHint().width() <= 520
    assert not view.facts_scroll.isVisibleTo(view) and view.brief_label.isVisibleTo(view)
    brief = view.brief_label.text()
    b = f32_block
    stored = 2 * padded(17, b) * 5 * 4 * 4  # 5120 with 16-channel blocks, 3840 with 8
    assert f"aBcd{b}b" in brief and f"nChw{b}c" in brief and overhead(stored, 2720) in brief
    # Every control is inside the view.
    for w in (view.role_combo, view.kernel_radio, view.colour_combo, view.facts_button):
        assert w.mapTo(view, w.rect().bottomRight()).x() <= view.width()
    # The hover text (element, formula, numbers on their own lines) fits the reserved height.
    cell = pic.logical_cell_of_index((0, 16, 4, 3))
    view.hover_logical_cell(*cell)
    label = view.hover_label
    assert "\n" in label.text() and label.heightForWidth(label.width()) <= label.height()
    qtbot.mouseClick(view.facts_button, QtCore.Qt.LeftButton)
    assert view.facts_scroll.isVisibleTo(view) and not view.brief_label.isVisibleTo(view)
    view.resize(1100, 520)  # the user chose: the panel stays as they left it
    qtbot.wait(10)
    assert view.facts_scroll.isVisibleTo(view)


def test_wide_view_opens_details_by_itself(qtbot, insp):
    w = LayoutView()
    qtbot.addWidget(w)
    w.resize(1100, 520)
    w.show()
    qtbot.waitExposed(w)
    w.set_tensors(insp(SPEC_W4, "mkldnn").tensors)
    assert w.facts_scroll.isVisibleTo(w) and w.facts_button.isChecked()
    w.resize(600, 400)
    qtbot.wait(10)
    assert not w.facts_scroll.isVisibleTo(w) and not w.facts_button.isChecked()
