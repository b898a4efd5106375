"""jit_mkldnn's prediction parts cut from its own frozen graph (explorer.core.model.jit)."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from explorer.core.model.jit import _capture, _conv_pass, cut_graph

warnings.filterwarnings("ignore", category=DeprecationWarning)


def _frozen(model, x):
    with torch.no_grad():
        f = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.script(model.eval())))
        for _ in range(3):
            f(x)
    return f


def test_the_conv_pass_runs_the_graphs_own_conv_nodes_on_their_real_inputs():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 8, 1))  # no op between: outputs comparable
    x = torch.randn(1, 3, 16, 16)
    frozen = _frozen(net, x)
    kinds = [n.kind() for n in frozen.graph.nodes()]
    assert kinds.count("prim::mkldnn_convolution") == 2  # what optimize_for_inference made of it
    parts = cut_graph(frozen, x)
    assert parts.n_convs == 2
    with torch.no_grad():
        assert parts.convs() == (True, True)  # each output read once (is it MKLDNN?) and freed, as in the forward
        inputs, _ = _capture(frozen, x)
        fn, n, feeds = _conv_pass(frozen, inputs, touch=True, keep=True)  # the same pass, its outputs kept
        outs = fn()
        want = net(x)
    assert n == 2 and len(outs) == 2 and outs[0].layout == torch._mkldnn
    assert torch.allclose(outs[1].to_dense(), want, atol=1e-5)  # the second conv read the first's real output
    assert torch.allclose(feeds[1].to_dense(), net[0](x), atol=1e-5)  # and touching it changed nothing


def _touch_kinds(fn_graph_text: str) -> int:
    return fn_graph_text.count("prim::MKLDNNHardTanh_") + fn_graph_text.count("aten::hardtanh_")


def test_each_part_touches_its_inputs_once_and_its_touches_alone_are_timed_apart():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 1), nn.ReLU6())
    x = torch.randn(1, 3, 16, 16)
    frozen = _frozen(net, x)
    parts = cut_graph(frozen, x)
    with torch.no_grad():
        touched = parts.conv_touches()  # one touch per conv input, each read once after it
        rem_touched = parts.remainder_touches()
        got, want = parts.remainder(), frozen(x)
    assert touched == (True, True)
    assert len(rem_touched) >= 1
    assert torch.allclose(got, want, atol=1e-5)  # the touched remainder still computes the forward's output
    with torch.no_grad():
        assert torch.allclose(parts.remainder(), want, atol=1e-5)  # and again: the touches change no input


def test_the_remainder_is_the_graph_without_convs_and_conversions_fed_their_real_outputs():
    torch.manual_seed(0)

    class Res(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Conv2d(4, 4, 3, padding=1), nn.Conv2d(4, 4, 1)
            self.act = nn.ReLU6()

        def forward(self, x):
            y = self.act(self.a(x))
            return self.b(y) + y

    net, x = Res(), torch.randn(2, 4, 8, 8)
    frozen = _frozen(net, x)
    parts = cut_graph(frozen, x)
    with torch.no_grad():
        got = parts.remainder()
        want = frozen(x)
    assert torch.allclose(got, want, atol=1e-5)
    g = frozen.graph  # the cut leaves the original graph as it was
    assert sum(n.kind() == "prim::mkldnn_convolution" for n in g.nodes()) == 2


def test_a_graph_without_convs_cannot_be_cut():
    net, x = nn.Sequential(nn.Linear(4, 4)), torch.randn(2, 4)
    with pytest.raises(ValueError, match="no conv"):
        cut_graph(_frozen(net, x), x)


def test_the_conv_pass_is_not_dead_code_where_the_graph_keeps_dense_convs():
    """optimize_for_inference leaves Conv1d as aten::conv1d on dense tensors; once the profiling executor knows
    their shapes it folds any read of their rank, and a conv nobody reads is removed (a pass read 0.09x the
    table so)."""
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv1d(4, 8, 3, padding=1), nn.ReLU(), nn.Conv1d(8, 8, 1))
    x = torch.randn(2, 4, 64)
    frozen = _frozen(net, x)
    assert sum(n.kind() == "aten::conv1d" for n in frozen.graph.nodes()) == 2
    parts = cut_graph(frozen, x)
    with torch.no_grad():
        for _ in range(4):  # past the profiling runs: the optimized graph is what runs from then on
            assert parts.convs() == (False, False)
        ran = torch.jit.last_executed_optimized_graph()
    assert sum(n.kind() == "aten::conv1d" for n in ran.nodes()) == 2


def test_an_input_whose_elements_share_memory_is_left_cold_not_refused():
    """An in-place touch of an expanded view raises ("more than one element ... refers to a single memory
    location"); such an input is read as it is, and the others are still touched."""

    class Expand(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Conv1d(4, 8, 3, padding=1), nn.Conv1d(8, 8, 1)

        def forward(self, x):
            return self.b(self.a(x.expand(3, -1, -1)).relu())

    torch.manual_seed(0)
    net, x = Expand(), torch.randn(1, 4, 32)
    frozen = _frozen(net, x)
    parts = cut_graph(frozen, x)  # runs each part once: it would raise here
    with torch.no_grad():
        assert parts.convs() == (False, False)
        assert len(parts.conv_touches()) == 1  # the second conv's input, not the expanded one
        assert torch.allclose(parts.remainder(), frozen(x), atol=1e-5)


class ChannelsLastNorm(nn.Module):
    """ConvNeXt's block between two convs: permute, LayerNorm, Linear, back; dense ops before a to_mkldnn."""

    def __init__(self, c):
        super().__init__()
        self.ln, self.fc = nn.LayerNorm(c), nn.Linear(c, c)

    def forward(self, x):
        return self.fc(self.ln(x.permute(0, 2, 3, 1))).permute(0, 3, 1, 2)


def test_the_dense_ops_before_a_conversion_stay_in_the_remainder():
    """Fails on main: the to_mkldnn after the block was fed its captured output, so the LayerNorm and Linear
    before it were dead code and the remainder lost them (ConvNeXt's jit_mkldnn predicted 0.24x its forward)."""
    from torch.profiler import profile

    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), ChannelsLastNorm(8), nn.Conv2d(8, 8, 3, padding=1))
    x = torch.randn(1, 3, 16, 16)
    frozen = _frozen(net, x)
    kinds = [n.kind() for n in frozen.graph.nodes()]
    assert "aten::to_mkldnn" in kinds and "aten::layer_norm" in kinds  # what optimize_for_inference made of it
    parts = cut_graph(frozen, x)
    with torch.no_grad(), profile() as prof:
        out = parts.remainder()
    ran = {e.name for e in prof.events()}
    assert "aten::layer_norm" in ran and ({"aten::linear", "aten::matmul", "aten::addmm", "aten::mm"} & ran)
    with torch.no_grad():
        assert torch.allclose(out, frozen(x))


def _conversions_run(fn) -> int:
    from torch.profiler import profile

    with torch.no_grad(), profile() as prof:
        fn()
    return sum(1 for e in prof.events() if e.name in ("aten::to_dense", "aten::to_mkldnn"))


def test_the_conversions_are_timed_as_what_a_twin_of_each_adds_to_the_forward():
    # a dense op between two MKLDNN convs: the frozen graph converts out of and back into the blocked layout
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.Hardswish(), nn.Conv2d(8, 8, 1), nn.Sigmoid())
    x = torch.randn(1, 3, 16, 16)
    frozen = _frozen(net, x)
    in_forward = _conversions_run(lambda: frozen(x))
    assert in_forward >= 2
    parts = cut_graph(frozen, x)
    assert parts.conversions_twice is not None and parts.n_conversions == in_forward
    with torch.no_grad():
        got = parts.conversions_twice()
        want = frozen(x)
    assert torch.allclose(got[0], want, atol=1e-6)  # the forward's own output, the twins' read beside it
    assert len(got) == 1 + in_forward
    # each twin really runs: the executor's CSE would merge a twin spelled as its original
    assert _conversions_run(parts.conversions_twice) == 2 * in_forward


def test_a_graph_without_conversions_has_no_twins():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 1))
    x = torch.randn(1, 3, 16, 16)
    frozen = _frozen(net, x)
    parts = cut_graph(frozen, x)
    n = _conversions_run(lambda: frozen(x))
    assert parts.n_conversions == n and (parts.conversions_twice is None) == (n == 0)
