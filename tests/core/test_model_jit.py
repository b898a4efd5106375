"""jit_mkldnn's prediction parts cut from its own frozen graph (explorer.core.model_jit)."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from explorer.core.model_jit import cut_graph

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
        outs = parts.convs()
        want = net(x)
    assert len(outs) == 2 and outs[0].layout == torch._mkldnn
    assert torch.allclose(outs[1].to_dense(), want, atol=1e-5)  # the second conv read the first's real output


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
