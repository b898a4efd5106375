"""A mode that differs from the model as it is beyond f32's tolerance is judged against the model's float64
output, and against the model's own sensitivity to one-ulp moves of its weights, before it is called wrong:
some models amplify f32 rounding through their layers (timm's efficientnetv2_rw_s with random weights: the
model as it is 3.4% off its float64 output, channels_last 1.7%, and both were "wrong output" against each
other; in another run jit_mkldnn was 3.4 times the model's float64 distance off it). A wrong kernel stays wrong."""

import torch
from torch import nn

from explorer.core.model.load import ModelInput
from explorer.core.model.surgery import TOLERANCE, Float64Reference, as_right_as_the_model, wrong_output


class _Truth:
    def __init__(self, out):
        self.out, self.why = out, ""

    def output(self):
        return self.out

    def moved_outputs(self):
        return []  # these cases test the float64 rule alone


def _case(model_off, mode_off, seed=0):
    g = torch.Generator().manual_seed(seed)
    truth = torch.randn(1000, generator=g, dtype=torch.float64)
    noise = torch.randn(1000, generator=g, dtype=torch.float64)
    ref = (truth + model_off * truth.abs().max() * noise / noise.abs().max()).float()
    out = (truth - mode_off * truth.abs().max() * noise / noise.abs().max()).float()
    return out, ref, _Truth(truth)


def test_a_mode_as_close_to_float64_as_the_model_is_right_and_says_why():
    out, ref, truth = _case(model_off=0.03, mode_off=0.02)
    rel = float((out - ref).abs().max() / ref.abs().max())
    assert wrong_output(1.0, rel, "f32")  # against the model as it is alone it would be wrong
    why = as_right_as_the_model(out, ref, truth, "f32")
    assert "off its float64 output" in why and "as right as the model as it is" in why


def test_a_wrong_kernel_stays_wrong_even_in_a_model_that_amplifies_rounding():
    out, ref, truth = _case(model_off=0.03, mode_off=0.5)
    assert as_right_as_the_model(out, ref, truth, "f32") == ""
    assert as_right_as_the_model(-ref, ref, truth, "f32") == ""


def test_a_model_that_is_right_at_f32_keeps_the_f32_gate():
    out, ref, truth = _case(model_off=TOLERANCE["f32"] / 10, mode_off=0.27)
    assert as_right_as_the_model(out, ref, truth, "f32") == ""


def test_only_an_f32_gate_is_reopened():
    out, ref, truth = _case(model_off=0.03, mode_off=0.02)
    assert as_right_as_the_model(out, ref, truth, "bf16") == ""
    assert as_right_as_the_model(out, ref, None, "f32") == ""


def test_the_float64_reference_runs_a_copy_of_the_model_once():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 4, 1)).eval()
    x = torch.randn(1, 3, 8, 8)
    f64 = Float64Reference(net, ModelInput((x,)))
    got = f64.output()
    assert got.dtype == torch.float64 and f64.output() is got
    assert next(net.parameters()).dtype == torch.float32  # the user's model untouched
    with torch.no_grad():
        assert torch.allclose(got, net.double()(x.double()))


def test_a_model_that_cannot_run_in_float64_says_why_and_keeps_the_gate():
    class F32Only(nn.Module):
        def forward(self, x):
            if x.dtype != torch.float32:
                raise TypeError("this model runs in float32 only")
            return x

    f64 = Float64Reference(F32Only(), ModelInput((torch.ones(2),)))
    assert f64.output() is None and "float32 only" in f64.why
    out, ref, _ = _case(model_off=0.03, mode_off=0.02)
    assert as_right_as_the_model(out, ref, f64, "f32") == ""


class _Chaotic(nn.Module):
    """A model whose output swings with the last bit of its weights, as a deep net with random weights can:
    sin of a large multiple of a linear layer's output."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = nn.Linear(64, 256)

    def forward(self, x):
        return torch.sin(3e5 * self.lin(x))


class _NoFloat64(Float64Reference):
    def output(self):  # as for a model with an op that has no float64 kernel: the sensitivity rule alone
        return None


def _chaotic_case():
    net = _Chaotic().eval()
    x = torch.randn(4, 64, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        ref = net(x)
    ref64 = _NoFloat64(net, ModelInput((x,)))
    moved = max(float((m - ref).abs().max() / ref.abs().max()) for m in ref64.moved_outputs())
    return net, x, ref, ref64, moved


def test_a_mode_within_the_models_own_one_ulp_sensitivity_is_right_and_says_why():
    net, x, ref, ref64, moved = _chaotic_case()
    assert moved > 10 * TOLERANCE["f32"]  # one ulp on the weights moves this model's output by far more than 1e-3
    with torch.no_grad():
        lin = nn.Linear(64, 256)
        lin.load_state_dict(net.lin.state_dict())
        w = lin.weight.detach().clone()
        lin.weight.copy_(w * (1 + torch.finfo(torch.float32).eps))  # the same maths, rounded another way
        out = torch.sin(3e5 * lin(x))
    rel = float((out - ref).abs().max() / ref.abs().max())
    assert wrong_output(1.0, rel, "f32")  # against the model as it is alone: wrong (main said so)
    why = as_right_as_the_model(out, ref, ref64, "f32")
    assert "one f32 ulp" in why and f"{moved:.2g}" in why


def test_a_wrong_output_stays_wrong_in_a_model_sensitive_to_its_last_bits():
    _, _, ref, ref64, moved = _chaotic_case()
    assert as_right_as_the_model(ref + 3 * moved * ref.abs().max(), ref, ref64, "f32") == ""
    assert moved < 0.5  # so an output of zeros (off by 1.0 of the largest value) is beyond twice it
    assert as_right_as_the_model(torch.zeros_like(ref), ref, ref64, "f32") == ""
    assert as_right_as_the_model(-ref, ref, ref64, "f32") == ""


def test_a_well_conditioned_model_keeps_the_f32_gate():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 4, 1)).eval()
    x = torch.randn(1, 3, 8, 8)
    with torch.no_grad():
        ref = net(x)
    ref64 = _NoFloat64(net, ModelInput((x,)))
    out = ref + 2e-3 * ref.abs().max()
    assert as_right_as_the_model(out, ref, ref64, "f32") == ""  # its moves are ~1e-7: no reopening
    assert net[0].weight.dtype == torch.float32 and torch.equal(net(x), ref)  # the user's model untouched
