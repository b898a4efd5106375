"""jit_mkldnn's prediction parts cut from its own frozen graph (explorer.core.model.jit)."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from explorer.core.model import jit as model_jit
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
        assert parts.remainder().shape == frozen(x).shape


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
        assert out.shape == frozen(x).shape


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


class AddInPlace(nn.Module):
    """A conv whose output the next op changes in place (as RepViT's residual adds and SE's sigmoid_ do)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 6, 3, padding=1)  # optimize_for_inference keeps Conv1d dense: aten::conv1d

    def forward(self, x):
        y = self.conv(x)
        y += 1.0
        return y.relu()


def test_the_remainder_reads_the_same_values_call_after_call():
    """Fails on main: the remainder was fed the captured outputs themselves, so an in-place op on one changed
    what the next call read (RepViT's adds grew its fed tensors 15-167x over 30 calls)."""
    torch.manual_seed(0)
    net, x = AddInPlace(), torch.randn(2, 4, 32)
    frozen = _frozen(net, x)
    assert "aten::add_" in [n.kind() for n in frozen.graph.nodes()]  # what the graph made of it
    parts = cut_graph(frozen, x)
    with torch.no_grad():
        want = frozen(x)
        got = [parts.remainder().clone() for _ in range(4)]
    for out in got:  # its one conv output is its own kind: the real one, restored before each call reads it
        assert torch.equal(out, want)


def _ops(fn) -> list:
    from torch.profiler import profile

    with torch.no_grad(), profile(record_shapes=True) as prof:
        fn()
    skip = {"aten::conv1d", "aten::copy_", "aten::empty", "aten::empty_like", "aten::to", "aten::_to_copy",
            "aten::empty_strided", "aten::convolution", "aten::_convolution", "aten::mkldnn_convolution"}
    top = [e for e in prof.events() if e.cpu_parent is not None and e.cpu_parent.cpu_parent is None]
    return [(e.name, [tuple(s) for s in e.input_shapes]) for e in top if e.name not in skip]


def test_the_remainder_is_fed_one_buffer_per_kind_of_output_and_runs_the_forwards_ops():
    """Fails on main, where the remainder was fed every captured output apart: RepViT mb8's 158, 227 MiB, each
    read in turn, pushed its own buffers out of the caches and its adds read 1.1-4x their time in the forward
    (the graph's allocator hands it back a few buffers). Same-kind outputs now share one buffer, and the
    remainder still runs the forward's ops on the forward's shapes."""
    torch.manual_seed(0)
    blocks = [nn.Sequential(nn.Conv1d(8, 8, 1), nn.ReLU()) for _ in range(4)]
    net = nn.Sequential(nn.Conv1d(3, 8, 3, padding=1), nn.ReLU(), *blocks, nn.Conv1d(8, 16, 1), nn.Tanh())
    x = torch.randn(2, 3, 40)
    frozen = _frozen(net, x)
    parts = cut_graph(frozen, x)
    assert parts.n_fed == 6  # each conv's output, read by its activation
    assert parts.n_buffers == 2  # (2, 8, 40) five times and (2, 16, 40) once
    with torch.no_grad():
        for _ in range(3):  # past the profiling runs
            parts.remainder()
            frozen(x)
        got = parts.remainder()
    assert got.shape == (2, 16, 40)
    assert _ops(parts.remainder) == _ops(lambda: frozen(x))
    assert len(parts.remainder_touches()) == 6  # a restore per fed value, timed alone


def test_outputs_share_a_buffer_only_with_their_own_shape_dtype_and_layout():
    torch.manual_seed(0)
    a = torch.randn(2, 8, 4, 4)
    same = torch.randn(2, 8, 4, 4)
    channels_last = torch.randn(2, 8, 4, 4).contiguous(memory_format=torch.channels_last)
    gapped = torch.randn(2, 8, 4, 8)[..., ::2]  # strides with gaps: kept, not made contiguous
    half = torch.randn(2, 8, 4, 4).to(torch.bfloat16)
    expanded = torch.randn(1, 8, 4, 4).expand(2, -1, -1, -1)
    blocked = torch.randn(2, 8, 4, 4).to_mkldnn()
    pairs = model_jit._shared_buffers([a, same, channels_last, gapped, half, expanded, blocked, blocked.clone()])
    assert pairs[0] is pairs[1]  # one kind: one buffer, holding the first one's values
    assert torch.equal(pairs[0][0], a) and torch.equal(pairs[0][1], a) and pairs[0][0] is not a
    assert len({id(p) for p in pairs if p is not None}) == 5
    assert pairs[2][0].stride() == channels_last.stride() and pairs[3][0].stride() == gapped.stride()
    assert pairs[3] is not pairs[0] and pairs[4] is not pairs[0]
    assert torch.equal(pairs[3][0], gapped) and pairs[4][0].dtype == torch.bfloat16
    assert pairs[5] is None  # its elements share memory: fed as it is, left cold
    assert pairs[6] is pairs[7] and pairs[6][0].is_mkldnn
    assert torch.equal(pairs[6][1].to_dense(), blocked.to_dense())


class IndexAddAcross(nn.Module):
    """Two same-kind outputs, one added into the other by index_add_, which refuses a source in its own buffer."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(3, 8, 1)

    def forward(self, x):
        return self.a(x).index_add_(0, torch.tensor([0]), self.b(x))


def test_a_graph_refusing_two_inputs_in_one_buffer_gets_a_buffer_per_output():
    torch.manual_seed(0)
    net, x = IndexAddAcross(), torch.randn(1, 3, 8, 8)
    frozen = _frozen(net, x)
    parts = cut_graph(frozen, x)  # shared, the remainder's index_add_ raised: cut again, unshared
    assert parts.n_fed == 2 and parts.n_buffers == 2
    with torch.no_grad():
        want = frozen(x)
        for _ in range(3):
            assert torch.equal(parts.remainder(), want)  # its own outputs, restored before each call reads them
