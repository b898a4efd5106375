"""Issue #32, directions: a BWD_* problem times the conv's backward alone, on every path that has one.

What was called is checked, never the time: oneDNN's verbose names the backward primitives, the profiler's
ATen view shows aten::convolution_backward and no forward op, the mask gives only the gradients asked for."""

import pytest
import torch

from explorer.core.paths import backward as bwd
from explorer.core.paths.base import PathUnsupported, Tensors, one_line
from explorer.core.paths.registry import prepare
from explorer.core.problem.spec import parse_descriptor
from explorer.core.trace.aten import profile_call
from explorer.core.trace.onednn import run_traced

DESC = "mb2ic16ih14oc16oh14kh3ph1"  # large enough that PyTorch hands the dense conv to oneDNN
PROPS = {"BWD_D": "backward_data", "BWD_W": "backward_weights", "BWD_WB": "backward_weights"}


def _prep(direction: str, path: str):
    spec = parse_descriptor(f"--dir={direction} {DESC}")
    t = Tensors.make(spec)
    return spec, t, prepare(path, t)


@pytest.mark.parametrize("path", ["dense", "channels_last", "mkldnn_functional"])
@pytest.mark.parametrize("direction", ["BWD_D", "BWD_W", "BWD_WB"])
def test_the_timed_call_is_the_backward_primitive_of_its_direction(direction, path):
    spec, t, prep = _prep(direction, path)
    assert spec.direction == direction and spec.bias == (direction == "BWD_WB")
    with torch.no_grad():
        tr = run_traced(prep.fn, context=prep.context())
    convs = [p for p in tr.primitives if p.op == "convolution"]
    assert convs and {p.prop for p in convs} == {PROPS[direction]}, [p.raw for p in convs]  # no forward_* conv
    if direction != "BWD_D":  # BWD_WB asks oneDNN for the bias gradient too, BWD_W does not
        assert (convs[-1].bia is not None) == (direction == "BWD_WB"), convs[-1].raw


@pytest.mark.parametrize("path", ["dense", "channels_last", "native"])
def test_the_aten_ops_are_the_backward_alone(path):
    _, _, prep = _prep("BWD_W", path)
    prof = profile_call(prep.fn, prep.context)
    names = [op.name for op in prof.ops]
    assert "aten::convolution_backward" in names, names
    assert not {"aten::convolution", "aten::conv2d", "aten::_convolution"} & set(names), names


@pytest.mark.parametrize("direction, shapes", [
    ("BWD_D", [(2, 16, 14, 14), None, None]),
    ("BWD_W", [None, (16, 16, 3, 3), None]),
    ("BWD_WB", [None, (16, 16, 3, 3), (16,)]),
])
def test_the_mask_gives_only_the_gradients_of_the_direction_and_they_are_right(direction, shapes):
    for path in ("dense", "channels_last", "native", "mkldnn_functional"):
        _, t, prep = _prep(direction, path)
        out = prep.call_once()
        assert [None if g is None else tuple(g.shape) for g in out] == shapes, path
        assert bwd.max_abs_err(out, bwd.reference(t)) < 1e-3, path


def test_the_reference_is_autograds_own_gradient():
    """The reference the rows are checked against is what autograd gives through F.conv2d."""
    spec, t, _ = _prep("BWD_WB", "dense")
    x = t.x32.clone().requires_grad_(True)
    w = t.conv32.weight.detach().clone().requires_grad_(True)
    b = t.conv32.bias.detach().clone().requires_grad_(True)
    y = torch.nn.functional.conv2d(x, w, b, padding=1)
    y.backward(bwd.grad_output(t).float())
    ref = bwd.reference(t)
    assert ref[0] is None and torch.allclose(ref[1], w.grad, atol=1e-4) and torch.allclose(ref[2], b.grad, atol=1e-4)


@pytest.mark.parametrize("path", ["mkldnn", "mkldnn_roundtrip"])
def test_the_to_mkldnn_module_has_no_backward_and_torch_says_why(path):
    _, t, _ = _prep("BWD_D", "dense")
    with pytest.raises(PathUnsupported) as e:
        prepare(path, t)
    module = torch.utils.mkldnn.to_mkldnn(t.conv32)
    with pytest.raises(RuntimeError) as torch_own:  # what torch itself says for that weight
        torch.ops.aten.convolution_backward(bwd.grad_output(t).to_mkldnn(), t.x.to_mkldnn(), module.weight, None,
                                            [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, False, False])
    assert str(e.value) == one_line(torch_own.value)


@pytest.mark.parametrize("path", ["mkldnn_prepacked", "jit_frozen", "compiled"])
def test_the_inference_routes_are_unsupported_by_name(path):
    _, t, _ = _prep("BWD_W", "dense")
    with pytest.raises(PathUnsupported) as e:
        prepare(path, t)
    assert "backward" in str(e.value)
