"""Issue #37: a bf16 plan's to_mkldnn mode converts the f32 model with torch.utils.mkldnn.to_mkldnn(model,
torch.bfloat16), never the model already cast to bf16: that hands MkldnnBatchNorm bf16 statistics and the
convs bf16 biases, where oneDNN needs f32 ones (timm resnet50d's output was all NaN that way on main)."""

import copy

import pytest
import torch
import torch.utils.mkldnn
from torch import nn

from explorer.core.jobs.options import RunOptions
from explorer.core.model import job as model_job
from explorer.core.model import modes as model_modes
from explorer.core.model import report as model_report


def _param_dtypes(m) -> set:
    return {p.dtype for p in m.parameters()} | {b.dtype for b in m.buffers() if b.is_floating_point()}


def test_a_bf16_plan_converts_the_f32_model_with_dtype_bf16(monkeypatch):
    # what to_mkldnn receives, whether or not this CPU can hold MKLDNN bf16 weights (an AVX2 one cannot: the
    # real conversion then refuses, which leaves the call made the thing to check)
    calls = []
    real = torch.utils.mkldnn.to_mkldnn

    def spy(module, dtype=torch.float):
        calls.append((_param_dtypes(module), dtype))
        return real(module, dtype)

    monkeypatch.setattr(torch.utils.mkldnn, "to_mkldnn", spy)
    ropts = RunOptions(paths=("dense",), budget_ms=5, min_samples=3, trace=False)
    mopts = model_report.ModelOptions(modes=("nchw", "to_mkldnn"), mode_budget_ms=10, min_samples=3)
    report = list(model_job.iter_model("tiny", "1,3,16,16", dtype="bf16", run_opts=ropts, model_opts=mopts,
                                       threads=1))[-1].report
    assert calls, "the to_mkldnn mode never converted the model"
    assert all(dt == torch.bfloat16 for _, dt in calls)
    assert all(dts == {torch.float32} for dts, _ in calls), calls  # the f32 model, never its bf16 cast
    assert report.mode("to_mkldnn").status in ("ok", "unsupported")


def _bf16_mkldnn_works() -> bool:
    try:
        torch.utils.mkldnn.to_mkldnn(nn.Conv2d(3, 8, 3).eval(), torch.bfloat16)
        return True
    except RuntimeError:
        return False


@pytest.mark.skipif(not _bf16_mkldnn_works(), reason="this CPU has no MKLDNN bf16 weights (AVX-512/AVX-NE-CONVERT)")
def test_the_bf16_to_mkldnn_mode_computes_what_the_f32_model_does():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                        nn.Conv2d(16, 8, 3, padding=1), nn.BatchNorm2d(8)).eval()
    with torch.no_grad():
        for bn in (net[1], net[4]):
            bn.running_mean.uniform_(-1, 1)
            bn.running_var.uniform_(0.5, 2.0)
    x = torch.randn(1, 3, 16, 16)
    ref = net(x)
    xb = x.to(torch.bfloat16)
    prep = model_modes.prepare_mode("to_mkldnn", copy.deepcopy(net).to(torch.bfloat16), xb, "bf16", f32_model=net)
    with torch.no_grad():
        out = prep.fn().float()
    assert torch.isfinite(out).all()
    assert (out - ref).abs().max() / ref.abs().max() < 5e-2  # bf16's tolerance (surgery.TOLERANCE)
