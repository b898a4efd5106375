"""Running what PyTorch cannot say in one call (issue 11): asymmetric pads, 1-D and 3-D, on every path."""

import pytest
import torch
import torch.nn.functional as F

from explorer.core.jobs.options import RunOptions
from explorer.core.jobs.run import run
from explorer.core.paths.base import PATHS, Tensors, native_flags, to_dense
from explorer.core.paths.registry import prepare
from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.results import CSV_COLUMNS, REQUIRED_COLUMNS

CASES = [
    'g1ic16oc16_ih5oh8kh3ph3_n"conv_basic_2d:gemm"',  # left 3, right 2
    "mb1ic8ih12oc8oh6kh3sh2",  # TensorFlow "same", stride 2: left 0, right 1
    "mb1ic4ih9iw11oc4oh5ow4kh3kw3sh2sw3ph0pw2",  # h: top 0, bottom 2; w: left 2, right -1 (a crop)
    'ic3oc17_iw8ow4kw3pw1sw2_n"conv_basic_1d:1st_stride_tail"',  # 1-D
    'g1ic16oc16_iw5ow8kw3pw3_n"conv_basic_1d:gemm"',  # 1-D, asymmetric
    'g4ic8oc8_id5od5kd3pd1',  # 3-D grouped
    'g17ic17oc17_id8od4kd3pd1sd2_n"conv_basic_3d:depthwise_stride_tail"',  # 3-D, strided, right pad 0
]


def _by_hand(t: Tensors) -> torch.Tensor:
    """Ground truth without torch_padding(): zero-fill a bigger tensor by slicing, conv with no padding."""
    s = t.spec
    x = t.x32
    for axis, dim in enumerate(s.dims, start=2):
        left, right = getattr(s, f"p{dim}"), s.pad_r(dim)
        if right < 0:  # input rows the kernel never reaches
            x = x.narrow(axis, 0, x.shape[axis] + right)
            right = 0
        shape = list(x.shape)
        shape[axis] += left + right
        big = torch.zeros(shape)
        big.narrow(axis, left, x.shape[axis]).copy_(x)
        x = big
    fn = {3: F.conv1d, 4: F.conv2d, 5: F.conv3d}[s.ndims]
    with torch.no_grad(), native_flags():
        return fn(x, t.conv32.weight, t.conv32.bias, stride=s.torch_stride, dilation=s.torch_dilation, groups=s.g)


@pytest.mark.parametrize("desc", CASES)
def test_reference_is_the_benchdnn_problem(desc):
    s = parse_descriptor(desc)
    t = Tensors.make(s)
    ref = t.reference()
    assert tuple(ref.shape) == s.output_shape
    assert torch.allclose(ref, _by_hand(t), atol=1e-5)


@pytest.mark.parametrize("desc", CASES)
def test_every_path_matches_or_says_why(desc):
    s = parse_descriptor(desc)
    t = Tensors.make(s)
    ref = _by_hand(t)
    for name in PATHS:
        if s.ndims == 3 and name == "channels_last":
            with pytest.raises(Exception, match="1-D"):
                prepare(name, t)
            continue
        out = to_dense(prepare(name, t).call_once())
        assert tuple(out.shape) == s.output_shape, name
        assert torch.allclose(out, ref, atol=1e-4), name


@pytest.mark.parametrize("desc", [CASES[0], CASES[3], CASES[6]])
def test_run_end_to_end(desc):
    s = parse_descriptor(desc)
    results = run(s, RunOptions(budget_ms=5, threads=1))
    assert [r.path for r in results] == list(PATHS)
    for r in results:
        if r.status == "unsupported":
            assert r.error and "\n" not in r.error
            assert s.ndims == 3 and r.path == "channels_last"
            continue
        assert r.status == "ok", (r.path, r.error)
        assert r.max_abs_err < 1e-4
        assert r.gflops == pytest.approx(s.ops / (r.median_ms / 1e3) / 1e9)
        row = r.row()
        assert list(row)[: len(REQUIRED_COLUMNS)] == list(REQUIRED_COLUMNS) and list(row) == list(CSV_COLUMNS)
        assert (row["ndims"], row["ph_r"], row["pw_r"], row["exact_ops"]) == (
            str(s.ndims), str(s.pad_r("h")), str(s.pad_r("w")), str(s.exact_ops))


def test_scripted_module_errors_give_the_real_reason():
    from explorer.core.paths.base import one_line

    e = RuntimeError("The following operation failed in the TorchScript interpreter.\nTraceback of TorchScript "
                     "(most recent call last):\n  File \"x.py\", line 1\n\nRuntimeError: mkldnn_convolution: bf16 path "
                     "needs the cpu support avx_ne_convert\n")
    assert one_line(e) == "mkldnn_convolution: bf16 path needs the cpu support avx_ne_convert"
    assert one_line(RuntimeError("first line\nsecond")) == "first line"
