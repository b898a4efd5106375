"""The planner's `int8` mode: PT2E (torchao's X86InductorQuantizer) + torch.compile, its error against the
f32 model stated and gated by int8's tolerance, predicted from its own per-layer qconv table, and one
sentence saying how to install torchao where it is missing. Tiny models, tiny budgets."""

import sys

import pytest
import torch
from torch import nn

from explorer.core.model import modes as model_modes
from explorer.core.model import report as model_report
from explorer.core.model.inventory import take_inventory
from explorer.core.model.load import ModelInput
from explorer.core.model.modern import int8 as model_int8
from explorer.core.model.surgery import TOLERANCE


def _net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                         nn.Conv2d(32, 32, 3, padding=1, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(32, 10)).eval()


def _run(net=None, inv=True):
    net = net or _net()
    x = torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        ref = net(x)
    mopts = model_report.ModelOptions(modes=("nchw", "int8"), mode_budget_ms=20, min_samples=3).validate()
    lst = take_inventory(net, ModelInput((x,)), "tiny", "f32", "module") if inv else None
    return model_modes.run_mode("int8", net, x, "f32", ref, mopts, lambda: False, lst, None, ref)


def _fake_int8(monkeypatch, scale):
    """The int8 preparation replaced by the f32 model's forward with its output scaled: an int8 error of
    exactly `scale - 1` relative, without a compile."""
    def prepare(model, inp):
        return {"fn": lambda: inp.call(model) * scale, "model": model, "remainder": None, "note": "fake",
                "conv_path": "int8"}

    monkeypatch.setattr(model_int8, "prepare_int8", prepare)


def test_int8_is_a_mode_that_runs_only_when_asked():
    assert "int8" in model_report.MODES and "int8" not in model_report.DEFAULT_MODES
    assert model_report.ModelOptions(modes=("int8",)).validate().modes == ("nchw", "int8")


def test_without_torchao_the_mode_is_unsupported_with_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "torchao", None)  # `import torchao...` raises ImportError
    assert "pip install torchao" in model_int8.torchao_problem()
    r = _run(inv=False)
    assert r.status == "unsupported"
    assert "torchao" in r.error and "pip install torchao==0.18.0" in r.error and "Traceback" not in r.error


def test_int8_is_gated_by_its_own_tolerance_not_f32s(monkeypatch):
    # 5% off: far beyond f32's 1e-3, within int8's 1e-1, so the int8 mode is timed, its error stated
    _fake_int8(monkeypatch, 1.05)
    r = _run(inv=False)
    assert TOLERANCE["f32"] < 0.05 < TOLERANCE["int8"]
    assert r.status == "ok", r.error
    assert r.rel_err == pytest.approx(0.05, rel=1e-3)
    assert "output error against the f32 model" in r.mode_note and "5%" in r.mode_note
    # 20% off: beyond int8's tolerance, a wrong output, never timed
    _fake_int8(monkeypatch, 1.2)
    r = _run(inv=False)
    assert r.status == "wrong output" and "beyond int8's 0.1" in r.error
    assert r.measured_ms is None


def test_the_answer_names_int8_only_with_its_error_stated():
    base = model_report.ModeResult("nchw", status="ok", measured_ms=10.0)
    q = model_report.ModeResult("int8", status="ok", measured_ms=5.0, speedup=2.0)
    inv = take_inventory(_net(), ModelInput((torch.randn(1, 3, 16, 16),)), "tiny", "f32", "module")
    rep = model_report.ModelReport(inv, [], [base, q], 1, "", ("nchw", "int8"))
    assert "PT2E int8" not in rep.answer()
    q.rel_err, q.mode_note = 0.03, "output error against the f32 model: max abs 0.1, 3% of its largest value"
    assert rep.answer().startswith("PT2E int8") and "3%" in rep.answer()


def test_a_bf16_plan_refuses_int8_in_one_sentence():
    net = _net()
    x = torch.randn(1, 3, 16, 16)
    mopts = model_report.ModelOptions(modes=("int8",), mode_budget_ms=20, min_samples=3).validate()
    with torch.no_grad():
        ref = net(x)
    r = model_modes.run_mode("int8", net.to(torch.bfloat16), x.to(torch.bfloat16), "bf16", ref, mopts,
                             lambda: False, None, None, ref)
    assert r.status == "unsupported" and r.error.startswith("int8:") and "--dtype f32" in r.error


def test_a_reused_relu_module_is_quantized_as_resnet_reuses_it():
    # ResNet's blocks call one self.relu three times: X86InductorQuantizer refused that ("Input partition has
    # more than one output node") until the mode gave each call its own op
    if model_int8.torchao_problem():
        pytest.skip(model_int8.torchao_problem())

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(8, 8, 3, padding=1), nn.Conv2d(8, 8, 3, padding=1)
            self.bn1, self.bn2 = nn.BatchNorm2d(8), nn.BatchNorm2d(8)
            self.relu = nn.ReLU(inplace=True)

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            out += x
            return self.relu(out)

    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), Block()).eval()
    x = torch.randn(1, 3, 16, 16)
    q = model_int8.quantized_model(net, ModelInput((x,)))
    with torch.no_grad():
        ref, got = net(x), q(x)
    assert got.shape == ref.shape and float((got - ref).abs().max() / ref.abs().max()) < TOLERANCE["int8"]
    assert isinstance(net[2].relu, nn.ReLU)  # the user's model is untouched: the mode quantizes a copy


def test_the_per_layer_int8_route_computes_the_layers_problem():
    from explorer.core.problem.spec import ConvSpec

    spec = ConvSpec(mb=2, ic=16, ih=9, iw=7, oc=24, kh=3, kw=3, sh=2, sw=2, ph=1, pw=1, g=2)
    y = model_int8.layer_int8_fn(spec)()
    ref = nn.functional.conv2d(torch.zeros(2, 16, 9, 7), torch.zeros(24, 8, 3, 3), stride=2, padding=1, groups=2)
    assert y.dtype == torch.uint8 and y.shape == ref.shape


@pytest.mark.slow
def test_int8_runs_is_measured_and_predicted_from_its_per_layer_table():
    from explorer.core.paths.routes import cxx_problem

    if model_int8.torchao_problem() or cxx_problem():
        pytest.skip(model_int8.torchao_problem() or cxx_problem())
    r = _run()
    assert r.status == "ok", r.error
    assert r.compile_ms > 0 and r.measured_ms > 0
    assert r.rel_err is not None and 0 < r.rel_err < TOLERANCE["int8"]  # quantization shows, within the gate
    assert r.conv_alone_ms > 0 and r.remainder_ms >= 0
    assert r.convs_in_model_note.startswith("the compiled graph's 2 qconv calls")
    from explorer.core.model.job import _predict

    _predict(r, [], None)
    assert r.predicted_ms == pytest.approx(r.conv_alone_ms + r.remainder_ms)


def _qconv_by_overload(spec):
    """layer_int8_fn's call made the way inductor's generated code makes it: through the overload, by name."""
    import torch

    g = torch.Generator().manual_seed(0)
    qx = torch.randint(0, 256, (spec.mb, spec.ic, spec.ih, spec.iw), dtype=torch.uint8, generator=g)
    qx = qx.contiguous(memory_format=torch.channels_last)
    w = torch.randint(-127, 128, (spec.oc, spec.ic, spec.kh, spec.kw), dtype=torch.int8, generator=g)
    ws, wz = torch.full((spec.oc,), 1e-2), torch.zeros(spec.oc, dtype=torch.int64)
    packed = torch.ops.onednn.qconv_prepack(w, ws, 2e-2, 0, [1, 1], [1, 1], [1, 1], 1, list(qx.shape))
    return lambda: torch.ops.onednn.qconv_pointwise.default(qx, 2e-2, 0, packed, ws, wz, None, [1, 1], [1, 1],
                                                            [1, 1], 1, 5e-2, 0, None, "none", [], "")


def test_the_replay_table_times_each_distinct_graph_call_once_and_counts_the_repeats():
    from explorer.core.problem.spec import ConvSpec

    one = _qconv_by_overload(ConvSpec(mb=1, ic=8, ih=10, iw=10, oc=8, kh=3, kw=3, ph=1, pw=1))
    other = _qconv_by_overload(ConvSpec(mb=1, ic=8, ih=6, iw=6, oc=16, kh=3, kw=3, ph=1, pw=1))
    wrapped_before = torch.ops.onednn.qconv_pointwise.default

    def forward():
        one(), one(), other()

    calls = model_int8.graph_qconv_calls(forward)
    assert sorted(count for _, _, count in calls) == [1, 2]  # the repeated shape is one call counted twice
    assert torch.ops.onednn.qconv_pointwise.default is wrapped_before  # the op is given back
    (args, _), = [a for _, a, count in calls if count == 2]
    assert tuple(args[0].shape) == (1, 8, 10, 10) and args[0].stride() == (800, 1, 80, 8)  # its real strides
    total, n, why = model_int8.graph_table_ms(forward, budget_ms=5, min_samples=3, cancel=lambda: False)
    assert n == 3 and total > 0 and why == ""


def test_a_graph_that_calls_no_qconv_by_name_says_why_and_the_mode_falls_back():
    total, n, why = model_int8.graph_table_ms(lambda: torch.ones(2) + 1, budget_ms=5, min_samples=3,
                                              cancel=lambda: False)
    assert total is None and n == 0 and "no qconv call was seen" in why


@pytest.mark.slow
def test_the_replay_sees_the_residual_sum_inductor_fused_into_a_qconv():
    from explorer.core.paths.routes import cxx_problem

    if model_int8.torchao_problem() or cxx_problem():
        pytest.skip(model_int8.torchao_problem() or cxx_problem())

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(8, 8, 3, padding=1), nn.Conv2d(8, 8, 3, padding=1)
            self.relu1, self.relu2 = nn.ReLU(), nn.ReLU()

        def forward(self, x):
            return self.relu2(self.conv2(self.relu1(self.conv1(x))) + x)

    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), Block()).eval()
    x = torch.randn(1, 3, 16, 16)
    prep = model_int8.prepare_int8(net, ModelInput((x,)))
    calls = model_int8.graph_qconv_calls(prep["fn"])
    assert sum(count for _, _, count in calls) == 3
    ops = [str(op) for op, _, _ in calls]
    assert any("binary" in op for op in ops), ops  # conv2d + x + relu: one qconv with the sum fused in
    binary_args = [a for op, (a, _), _ in calls if "binary" in str(op)][0]
    assert "sum" in [v for v in binary_args if isinstance(v, str)]
