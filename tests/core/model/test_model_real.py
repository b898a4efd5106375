"""The planner on models as users write them (issue 21): minimal reproductions of what third-party code does
(efficientnet_pytorch's same-padding conv subclass, weight-standardised convs, F.conv2d in a module, transformers'
ModelOutput, audio front ends taking (N, L), several inputs, Conv1d / Conv3d networks). Each failed on main.
No third-party library is needed: the models are written here, in a package in a temporary folder."""

import sys
import textwrap

import pytest
import torch

from explorer.core.jobs.options import RunOptions
from explorer.core.model import inventory as model_inventory
from explorer.core.model import job as model_job
from explorer.core.model import load as model_load
from explorer.core.model import modes as model_modes
from explorer.core.model import report as model_report

MODELS = '''
import dataclasses

import torch
import torch.nn.functional as F
from torch import nn


class SamePadConv(nn.Conv2d):
    """efficientnet_pytorch's Conv2dStaticSamePadding: an nn.Conv2d subclass with a child and its own forward."""

    def __init__(self, ci, co, k, stride=1):
        super().__init__(ci, co, k, stride, bias=False)
        self.static_padding = nn.ZeroPad2d(k // 2)

    def forward(self, x):
        return F.conv2d(self.static_padding(x), self.weight, self.bias, self.stride, 0)


class WSConv(nn.Conv2d):
    """A weight-standardised conv: the weight the conv gets is computed in forward (no parameter's pointer)."""

    def forward(self, x):
        w = self.weight
        w = (w - w.mean((1, 2, 3), keepdim=True)) / (w.std((1, 2, 3), keepdim=True) + 1e-5)
        return F.conv2d(x, w, self.bias, self.stride, self.padding)


class FnConv(nn.Module):
    """A conv written as F.conv2d inside a module of its own (not a conv module)."""

    def __init__(self, c):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(c, c, 3, 3) * 0.1)

    def forward(self, x):
        return F.conv2d(x, self.weight, padding=1)


class Eff(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = SamePadConv(3, 8, 3, 2)
        self.ws = WSConv(8, 8, 3, padding=1)
        self.fn = FnConv(8)
        self.head = nn.Conv2d(8, 4, 1)

    def forward(self, x):
        return self.head(self.fn(self.ws(self.stem(x)).relu()))


@dataclasses.dataclass
class Out:
    last_hidden_state: torch.Tensor
    pooled: tuple


class DictOut(nn.Module):
    """transformers' way: a dict/dataclass output with nested tensors."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x):
        y = self.bn(self.conv(x)).relu()
        return {"out": Out(y, (y.mean((2, 3)), y.amax((2, 3))))}


class Audio(nn.Module):
    """(N, L) raw audio; the channel is added inside."""

    def __init__(self):
        super().__init__()
        self.c1, self.c2 = nn.Conv1d(1, 8, 5, 2), nn.Conv1d(8, 8, 3, 2)

    def forward(self, wav):
        return self.c2(self.c1(wav.unsqueeze(1)).relu())


class TwoIn(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = Audio(), Audio()

    def forward(self, left, right):
        return self.a(left) + self.b(right)


class Vol(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.bn, self.c2 = nn.Conv3d(1, 4, 3, padding=1), nn.BatchNorm3d(4), nn.Conv3d(4, 4, 3, padding=1)

    def forward(self, x):
        return self.c2(self.bn(self.c1(x)).relu())


class UpNet(nn.Module):
    """monai's UNet shape: a strided Conv3d down, a ConvTranspose3d up (an _ConvNd subclass too)."""

    def __init__(self):
        super().__init__()
        self.down, self.up = nn.Conv3d(1, 4, 3, stride=2, padding=1), nn.ConvTranspose3d(4, 2, 2, stride=2)

    def forward(self, x):
        return self.up(self.down(x).relu())


class Keyword(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, pixel_values, scale=None):
        return self.conv(pixel_values) * scale


class BatchNormAct2d(nn.BatchNorm2d):
    """timm's norm + act: an nn.BatchNorm2d subclass with 'drop' and 'act' children its forward runs."""

    def __init__(self, c):
        super().__init__(c)
        self.drop, self.act = nn.Identity(), nn.ReLU()

    def forward(self, x):
        return self.act(self.drop(super().forward(x)))


class NormAct(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(3, 4, 3, padding=1), BatchNormAct2d(4)

    def forward(self, x):
        return self.bn1(self.conv1(x))


def norm_act():
    return NormAct()


def eff():
    return Eff()


def dict_out():
    return DictOut()


def audio():
    return Audio()


def two_in():
    return TwoIn()


def vol():
    return Vol()


def upnet():
    return UpNet()


def keyword():
    return Keyword()


def keyword_inputs(mb=1):
    return {"pixel_values": torch.randn(mb, 3, 8, 8), "scale": torch.full((1, 4, 1, 1), 2.0)}
'''


@pytest.fixture
def zoo(tmp_path, monkeypatch, request):
    """The models above as a package in a temporary folder, the current one (a unique name per test)."""
    name = f"realzoo_{abs(hash(request.node.name)) % 10**8}"
    d = tmp_path / name
    d.mkdir()
    (d / "__init__.py").write_text("")
    (d / "m.py").write_text(textwrap.dedent(MODELS))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path)] + list(sys.path))
    yield f"{name}.m"
    for mod in [m for m in sys.modules if m.startswith(name)]:
        del sys.modules[mod]


def _run(model, shape, modes=model_report.MODES, paths=("dense", "channels_last", "mkldnn")):
    ropts = RunOptions(paths=paths, budget_ms=5, min_samples=3, trace=False)
    mopts = model_report.ModelOptions(modes=modes, mode_budget_ms=10, min_samples=3)
    events = list(model_job.iter_model(model, shape, run_opts=ropts, model_opts=mopts, threads=1))
    return events[-1].report


def test_conv_subclasses_and_functional_convs_are_found_by_what_they_are(zoo):
    """main matched exact type names: the subclasses' convs were unnamed for stubbing and 'conv#i' for the
    weight-standardised one; here every conv is named after the module running it."""
    net = model_load.load_model(f"{zoo}:eff").module
    inv = model_inventory.take_inventory(net, model_load.ModelInput((torch.randn(1, 3, 16, 16),)))
    got = [(s.module, s.owner, s.stubbable, bool(s.own_forward)) for s in inv.sites]
    assert got == [("stem", "SamePadConv", True, True), ("ws", "WSConv", True, True),
                   ("fn", "FnConv", False, False), ("head", "Conv2d", True, False)]
    assert "static_padding" in inv.sites[0].own_forward
    assert inv.sites[0].input_shape == (1, 3, 18, 18)  # the conv it calls: after its own padding


def test_a_model_of_conv_subclasses_is_predicted_and_to_mkldnn_names_the_module_it_cannot_convert(zoo):
    """main: nchw/channels_last 'no prediction: the convolutions are not modules here', and to_mkldnn failed
    inside torch with 'Cannot re-assign modules in a ScriptModule ... static_padding'."""
    rep = _run(f"{zoo}:eff", "1,3,16,16")
    for mode in ("nchw", "channels_last"):
        r = rep.mode(mode)
        assert r.status == "ok" and r.predicted_ms is not None, (mode, r.predict_note, r.error)
        assert "SamePadConv modules" in r.predict_note and "padding child modules still run" in r.predict_note
        assert "1 F.conv2d call inside another module's forward (first: fn in a FnConv)" in r.predict_note
    m = rep.mode("to_mkldnn")
    assert m.status == "unsupported" and "\n" not in m.error
    assert m.error.startswith("to_mkldnn: stem (SamePadConv) is an nn.Conv2d subclass with its own forward with "
                              "child module 'static_padding'") and "make it a plain nn.Conv2d" in m.error
    assert "Cannot re-assign" not in m.error


def test_to_mkldnn_converts_a_batchnorm_subclass_with_children_and_names_it_by_path_and_class(zoo):
    """Issue 36, main: to_mkldnn was status 'error' with torch's "tried to replace existing module 'drop'" and
    no module path (only childless modules were tried one by one), then 'leave it out of the conversion'. Now
    the norm is converted as a user would by hand (by_hand.swapped_with_children), its children kept, and the
    mode's note names what was converted by path and class."""
    rep = _run(f"{zoo}:norm_act", "1,3,8,8", modes=("nchw", "to_mkldnn"), paths=("dense",))
    assert rep.mode("nchw").status == "ok"
    m = rep.mode("to_mkldnn")
    assert m.status == "ok" and not m.error, (m.status, m.error)
    assert "converted by hand" in m.mode_note and "bn1" in m.mode_note and "BatchNormAct2d" in m.mode_note, m.mode_note
    assert "tried to replace" not in m.mode_note and "leave it out" not in m.mode_note
    assert m.rel_err is not None and m.rel_err < 1e-3


def test_the_functional_conv_runs_inside_the_remainder_and_is_not_counted_twice(zoo):
    rep = _run(f"{zoo}:eff", "1,3,16,16", modes=("nchw",), paths=("dense",))
    r = rep.mode("nchw")
    by_name = {s.layer.name: s for s in rep.layers}
    table = sum(s.layer.count * s.results["dense"].median_ms for n, s in by_name.items() if n != "fn")
    assert r.conv_alone_ms == pytest.approx(table)  # fn's layer is left to the remainder


def test_dict_and_dataclass_outputs_run_in_every_mode_including_the_trace(zoo):
    """main: jit_mkldnn failed 'Encountering a dict at the output of the tracer'."""
    rep = _run(f"{zoo}:dict_out", "1,3,8,8", modes=("nchw", "channels_last", "jit_mkldnn"))
    for mode in ("nchw", "channels_last", "jit_mkldnn"):
        r = rep.mode(mode)
        assert r.status == "ok" and not r.error, (mode, r.error)
        assert r.rel_err is not None and r.rel_err < 1e-3


def test_compare_outputs_checks_every_tensor_leaf_of_a_nested_output():
    from explorer.core.model.surgery import compare_outputs, flat_tensors

    a = torch.ones(2)
    ref = {"x": (a, [a * 2]), "y": a * 3}
    assert len(flat_tensors(ref)) == 3
    bad = {"x": (a, [a * 2]), "y": a * 3 + 1}
    assert compare_outputs((a, a * 2, a * 3), ref) == (0.0, 0.0)
    assert compare_outputs(bad, ref)[0] == pytest.approx(1.0)


def test_an_audio_model_taking_n_l_runs_its_own_forward_and_its_1d_convs_are_predicted(zoo):
    """main refused it: '--input 1,64 has 2 dimensions, but the model's first convolution takes a 3-D input'."""
    rep = _run(f"{zoo}:audio", "1,64", paths=("dense", "channels_last", "mkldnn"))
    assert [s.layer.spec.ndims for s in rep.layers] == [3, 3]
    r = rep.mode("nchw")
    assert r.status == "ok" and r.predicted_ms is not None, r.predict_note
    cl = rep.mode("channels_last")  # no channels-last format for 1-D: said, not a wrong number
    assert cl.status == "unsupported" and "1-D" in cl.error
    tm = rep.mode("to_mkldnn")  # unsqueeze on an MKLDNN tensor: the op, the module and what to change
    assert tm.status in ("unsupported", "error") and "to_mkldnn converts only" in tm.error
    assert "at aten.unsqueeze.default in the model's own forward, Audio" in tm.error
    assert rep.mode("jit_mkldnn").status == "ok"


def test_several_inputs_are_the_forwards_positional_inputs(zoo):
    rep = _run(f"{zoo}:two_in", ["1,64", "1,64"], modes=("nchw", "jit_mkldnn"), paths=("dense", "mkldnn"))
    assert rep.inventory.input_label == "1x64 + 1x64" and rep.inventory.total == 4
    assert all(rep.mode(m).status == "ok" for m in ("nchw", "jit_mkldnn"))
    assert rep.mode("nchw").predicted_ms is not None


def test_an_input_factory_can_give_keyword_inputs_and_takes_the_minibatch(zoo):
    ropts = RunOptions(paths=("dense",), budget_ms=5, min_samples=3, trace=False)
    mopts = model_report.ModelOptions(modes=("nchw", "jit_mkldnn"), mode_budget_ms=10, min_samples=3)
    events = list(model_job.iter_model(f"{zoo}:keyword", f"{zoo}:keyword_inputs", mb=2, run_opts=ropts,
                                       model_opts=mopts, threads=1))
    rep = events[-1].report
    assert rep.inventory.sites[0].input_shape == (2, 3, 8, 8)
    assert rep.mode("jit_mkldnn").status == "ok", rep.mode("jit_mkldnn").error


def test_a_3d_network_is_measured_per_layer_and_predicted(zoo):
    """main: every layer 'a 3-D convolution: not measured yet', so no prediction in any mode."""
    rep = _run(f"{zoo}:vol", "1,1,6,6,6", modes=("nchw", "channels_last", "to_mkldnn"))
    for s in rep.layers:
        assert s.layer.spec.ndims == 5 and s.results["dense"].status == "ok"
    for mode in ("nchw", "channels_last", "to_mkldnn"):
        r = rep.mode(mode)
        assert r.status == "ok" and r.predicted_ms is not None, (mode, r.predict_note, r.error)


def test_a_transposed_conv_runs_inside_the_remainder_and_the_model_is_still_predicted(zoo):
    """main: 'no prediction: layer up has no dense time (a transposed convolution: not measured ...)' in
    every mode of monai's UNet: the transposed conv was counted as a conv to predict but no path times it."""
    rep = _run(f"{zoo}:upnet", "1,1,8,8,8", modes=("nchw", "channels_last"), paths=("dense", "channels_last"))
    for mode in ("nchw", "channels_last"):
        r = rep.mode(mode)
        assert r.status == "ok" and r.predicted_ms is not None, (mode, r.predict_note)
        assert "1 ConvTranspose3d (transposed; first: up)" in r.predict_note
        down = next(s for s in rep.layers if s.layer.name == "down").results[model_report.mode_path(r)]
        assert r.conv_alone_ms == pytest.approx(down.median_ms)  # the transposed one is in the remainder only
    assert [s.module for s in rep.inventory.transposed_sites()] == ["up"]


def test_input_values_are_refused_in_one_sentence(zoo):
    from explorer.core.errors import InputError

    for spec, words in ((["1,3,8,8", f"{zoo}:keyword_inputs"], "give it alone"),):
        with pytest.raises(InputError, match=words):
            model_load.parse_inputs(spec)
    with pytest.raises(InputError, match="called with the minibatch"):
        model_load.make_input(f"{zoo}:keyword", 2, torch.float32)  # a model class factory takes no mb


def test_channels_last_follows_the_convs_not_the_input_rank():
    inp = model_load.ModelInput((torch.randn(1, 64),))
    assert model_modes.channels_last_format(inp, {2}) is torch.channels_last
    assert model_modes.channels_last_format(inp, {3}) is torch.channels_last_3d
    with pytest.raises(NotImplementedError, match="1-D"):
        model_modes.channels_last_format(inp, {1})


def test_a_module_to_mkldnn_cannot_feed_is_named_with_the_op_in_one_short_clause():
    """main printed torch's dispatcher paragraph (every backend listed) with no word on what to change."""
    from torch import nn

    class LayerNormCF(nn.Module):  # ConvNeXt's channels-first LayerNorm: permutes, which MKLDNN tensors refuse
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(4)

        def forward(self, x):
            return self.ln(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)

    net = nn.Sequential(nn.Conv2d(3, 4, 3), LayerNormCF()).eval()
    x = torch.randn(1, 3, 8, 8)
    r = model_modes.run_mode("to_mkldnn", net, x, "f32", net(x), model_report.ModelOptions(mode_budget_ms=10),
                             lambda: False)
    assert r.status == "unsupported"
    assert "in 1, LayerNormCF" in r.error and "has no kernel for MkldnnCPU tensors" in r.error
    assert "to_mkldnn converts only nn.Conv1d/2d/3d" in r.error and "available for these backends" not in r.error


def test_a_same_padding_convs_stub_still_runs_its_padding_child(zoo):
    """The padding is not the conv: stubbed out with it, the remainder would miss its time."""
    from explorer.core.model.surgery import stub_convs

    net = model_load.load_model(f"{zoo}:eff").module
    x = torch.randn(1, 3, 16, 16)
    seen = []
    net.stem.static_padding.register_forward_hook(lambda m, a, o: seen.append(tuple(o.shape)))
    assert stub_convs(net, lambda: net(x)) == 3  # stem, ws, head; fn is F.conv2d in a plain module
    seen.clear()
    with torch.no_grad():
        net(x)
    assert seen == [(1, 3, 18, 18)]
