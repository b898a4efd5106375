"""The eager modes' remainder reads its stubs' outputs hot, as the forward reads a conv's output it has just
written, and what the touches cost is taken off (explorer.core.model.surgery.Stubbed)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.utils.mkldnn
from torch import nn
from torch.profiler import profile

from explorer.core.model import modes
from explorer.core.model.report import ModelOptions
from explorer.core.model.sequence import SequenceTiming
from explorer.core.model.surgery import Stubbed, stubbed_forward, touch_in_place


def _net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.Conv2d(8, 8, 1), nn.BatchNorm2d(8)).eval()


def _ops(fn) -> list[str]:
    with torch.no_grad(), profile() as prof:
        fn()
    return [e.name for e in prof.events()]


def test_each_stub_touches_its_output_once_per_forward_and_the_output_is_unchanged():
    net, x = _net(), torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        want = net(x)
    rem = stubbed_forward(net, lambda: net(x))
    assert isinstance(rem, Stubbed) and len(rem.outs) == 2
    ops = _ops(rem)
    assert ops.count("aten::hardtanh_") == 2  # main returned the kept output cold, untouched
    assert not any(op in ("aten::conv2d", "aten::convolution") for op in ops)
    with torch.no_grad():
        assert torch.equal(rem(), want) and torch.equal(rem(), want)  # touched twice: still the same output
    assert _ops(rem.touches).count("aten::hardtanh_") == 2  # the touches alone: the same two, nothing else


def test_the_touch_keeps_every_bit_of_a_dense_tensor():
    x = torch.tensor([math.nan, math.inf, -math.inf, -0.0, 1e-40, 3.3e38, -3.39e38, 1.0])
    for dt in (torch.float32, torch.bfloat16, torch.float16):
        t = x.to(dt)
        before = t.clone()
        touch_in_place(t)
        assert torch.equal(t.view(torch.int16 if dt != torch.float32 else torch.int32),
                           before.view(torch.int16 if dt != torch.float32 else torch.int32)), dt


def test_an_mkldnn_stub_output_is_touched_and_keeps_its_values():
    net, x = _net(), torch.randn(2, 3, 16, 16)
    m = torch.utils.mkldnn.to_mkldnn(nn.Sequential(net[0], nn.ReLU(), net[3]).eval())
    xm = x.to_mkldnn()
    with torch.no_grad():
        want = m(xm).to_dense()
    rem = stubbed_forward(m, lambda: m(xm))
    assert rem is not None and all(t.is_mkldnn for t in rem.outs)
    with torch.no_grad():
        assert torch.equal(rem().to_dense(), want) and torch.equal(rem().to_dense(), want)
    assert _ops(rem.touches).count("aten::mul_") == 2


def test_an_expanded_output_is_left_cold_not_refused():
    t = torch.randn(1, 4, 1, 1).expand(2, 4, 8, 8)
    touch_in_place(t)  # an in-place op on overlapping memory would raise
    touch_in_place(torch.arange(4))  # an integer tensor is nobody's conv output: left as it is


@pytest.mark.parametrize("mode", ["nchw", "channels_last", "to_mkldnn"])
def test_the_remainder_column_is_the_stubbed_forward_less_its_touches(monkeypatch, mode):
    """Each round times the stubbed forward and its touches alone; the column is their difference, round by
    round (time_sequence's `minus`)."""
    from explorer.core.model import inventory

    net, x = _net(), torch.randn(2, 3, 16, 16)
    inv = inventory.take_inventory(net, x, "net")
    seen = {}

    def fake_time_sequence(seq, budget_ms, min_samples, cancel, parts=None, minus=None, precision=None):
        seen.update(parts=dict(parts), minus=dict(minus or {}))
        with torch.no_grad():
            parts["remainder"]()
        rounds = {"remainder": np.array([5.0, 5.2]), "remainder touches": np.array([1.0, 1.1]),
                  "forward": np.array([6.0, 6.0])}
        named = {k: v for k, v in rounds.items() if k in parts}
        for k, other in (minus or {}).items():
            named[k] = np.maximum(named[k] - named[other], 0.0)
        return SequenceTiming(1.0, {}, 2, "ok", "", named)

    monkeypatch.setattr(modes, "time_sequence", fake_time_sequence)
    monkeypatch.setattr(modes, "_fill_measured", lambda res, m, forward, attempts: None)
    with torch.no_grad():
        ref = net(x)
    res = modes.run_mode(mode, net, x, "f32", ref, ModelOptions(mode_budget_ms=5), lambda: False, inv)
    assert res.status == "ok", res.error
    assert isinstance(seen["parts"]["remainder"], Stubbed)
    assert seen["parts"]["remainder touches"] == seen["parts"]["remainder"].touches
    assert seen["minus"] == {"remainder": "remainder touches"}
    assert res.remainder_ms == pytest.approx(4.05)  # median of 5.0-1.0 and 5.2-1.1
