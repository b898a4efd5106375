"""Issue 32: every path runs the post-ops; fused (mkldnn._convolution_pointwise, jit freezing) and eager give
the same output as the f32 reference with the ops applied, and what torch cannot fuse is refused, not dropped."""

import pytest
import torch
import torch.nn.functional as F

from explorer.core.paths.base import PathUnsupported, Tensors, to_dense
from explorer.core.paths.registry import prepare
from explorer.core.problem.spec import parse_descriptor

DESC = "mb1ic8ih8oc8oh8kh3ph1"
# jit_frozen and compiled take seconds each; jit is cheap enough for a few chains, compile is left to the CLI run
FAST = ("dense", "channels_last", "native", "mkldnn_roundtrip", "mkldnn_prepacked", "jit_frozen")


def _run(post_ops: str, path: str):
    t = Tensors.make(parse_descriptor(f"--attr-post-ops={post_ops} {DESC}"))
    return t, to_dense(prepare(path, t).call_once()).float()


@pytest.mark.parametrize("post_ops", ["relu", "sum+relu", "sum:0.5", "gelu_tanh", "clip:0:6", "relu:0.25+tanh"])
@pytest.mark.parametrize("path", FAST)
def test_each_path_gives_the_conv_then_its_post_ops(post_ops, path):
    try:
        t, out = _run(post_ops, path)
    except PathUnsupported as e:  # only where torch cannot fuse: sum with a scale, two eltwises, frozen tanh gelu
        assert (path, post_ops) in {("mkldnn_prepacked", "sum:0.5"), ("mkldnn_prepacked", "relu:0.25+tanh"),
                                    ("jit_frozen", "gelu_tanh")}, str(e)  # torch: mkldnn_gelu has no tanh
        return
    ref = t.reference()
    assert torch.allclose(out, ref, atol=1e-4), float((out - ref).abs().max())
    plain = Tensors.make(parse_descriptor(DESC)).reference()
    assert not torch.allclose(ref, plain, atol=1e-3)  # the ops really change the output


def test_the_reference_is_the_conv_then_the_ops_as_pytorch_writes_them():
    t = Tensors.make(parse_descriptor(f"--attr-post-ops=sum:0.5+relu {DESC}"))
    conv = F.conv2d(t.x32, t.conv32.weight, t.conv32.bias, padding=1)
    want = F.relu(conv + 0.5 * t.residual.float())
    assert torch.allclose(t.reference(), want, atol=1e-5)


@pytest.mark.parametrize("post_ops, attr", [("relu", "'relu'"), ("sum+relu", "binary 'add'"),
                                            ("gelu_erf", "'gelu', [], 'none'"), ("hardtanh:0:6", "'hardtanh'")])
def test_the_prepacked_route_fuses_the_ops_into_one_call(post_ops, attr):
    t = Tensors.make(parse_descriptor(f"--attr-post-ops={post_ops} {DESC}"))
    prep = prepare("mkldnn_prepacked", t)
    assert attr in prep.note
    assert torch.allclose(to_dense(prep.call_once()).float(), t.reference(), atol=1e-4)


def test_the_sum_does_not_change_its_residual_between_calls():
    t = Tensors.make(parse_descriptor(f"--attr-post-ops=sum+relu {DESC}"))
    before = t.residual.clone()
    for path in ("dense", "mkldnn_prepacked"):
        prep = prepare(path, t)
        first = prep.call_once().clone()
        assert torch.equal(prep.call_once(), first), path
    assert torch.equal(t.residual, before)


def test_an_eltwise_torch_cannot_fuse_is_refused_with_its_reason():
    t = Tensors.make(parse_descriptor(f"--attr-post-ops=elu:1 {DESC}"))
    with pytest.raises(PathUnsupported, match="elu"):
        prepare("mkldnn_prepacked", t)
    assert torch.allclose(prepare("dense", t).call_once(), t.reference(), atol=1e-5)  # eager runs it
