"""Issue 12, item 7: the layout view's labels fit in any pane size: row labels (c12, c16) are never clipped,
column labels never run together, the "Large tensor" note wraps instead of being cut."""

import pytest

from explorer.core.layout.path_layouts import inspect_path
from explorer.core.problem.spec import parse_descriptor
from explorer.gui.inspect.layout_view import LayoutView

_CACHE: dict = {}


def _tensors(spec):
    if spec not in _CACHE:
        _CACHE[spec] = inspect_path(parse_descriptor(spec), "dense").tensors
    return _CACHE[spec]


def _labels(view):
    pane = view.logical_pane
    return [t for t in pane.labels[: pane._labels_used] if t.isVisible()]


@pytest.mark.parametrize("spec, size, last", [
    ("mb2ic20ih7oc20oh7kh3ph1", (900, 520), "c16"), ("mb2ic20ih7oc20oh7kh3ph1", (330, 260), "c16"),
    ("mb1ic256ih14oc256oh14kh1ph0", (260, 200), "c"),  # a small pane: "c240" was cut to "240" or ":40"
])
def test_row_labels_are_inside_the_pane(qtbot, spec, size, last):
    view = LayoutView()
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    view.set_tensors(_tensors(spec), "dense")
    view.set_role("output")
    qtbot.wait(20)
    vb = view.logical_pane.vb
    area = vb.sceneBoundingRect()
    labels = _labels(view)
    assert any(t.textItem.toPlainText().startswith(last) for t in labels)
    for t in labels:
        r = t.sceneBoundingRect()
        assert r.left() >= area.left() - 1, (t.textItem.toPlainText(), r, area)  # "c12", not ":12"


def test_column_labels_do_not_run_together(qtbot):
    view = LayoutView()
    qtbot.addWidget(view)
    view.resize(360, 300)
    view.show()
    w = inspect_path(parse_descriptor("mb2ic24ih5oc24oh5kh3ph1"), "dense").tensors
    view.set_tensors(w, "dense")
    view.set_role("weight")  # a matrix picture: rows o, columns i
    qtbot.wait(20)
    if view.picture is None or view.picture.log_mode != "matrix":
        pytest.skip("this weight is not drawn as a matrix here")
    tops = sorted((t.sceneBoundingRect() for t in _labels(view)
                   if t.textItem.toPlainText().startswith("i")), key=lambda r: r.left())
    assert len(tops) >= 2
    for a, b in zip(tops, tops[1:]):
        assert a.right() <= b.left() + 1  # "i12i16i20" ran together


def test_the_slice_note_wraps():
    from explorer.gui.inspect.layout_view import LayoutView as LV

    view = LV()
    assert view.slice_label.wordWrap()
