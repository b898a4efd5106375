"""The convs in model order (explorer.core.model.sequence): what the planner's prediction takes its conv time from."""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from explorer.core.model import chained as model_chained
from explorer.core.model import inventory as model_inventory
from explorer.core.model import zoo as model_zoo
from explorer.core.model.sequence import Sequence, build_sequence, site_path, time_sequence


def _inv(name="tiny", shape=(1, 3, 16, 16)):
    return model_inventory.take_inventory(model_zoo.build(name), torch.randn(shape), name)


def test_the_sequence_has_one_call_per_conv_site_in_model_order_each_with_its_own_tensors():
    inv = _inv()  # stem, dw, pw, res (res is pw's twin: one layer, two sites)
    tensors: dict = {}
    seq, why = build_sequence("nchw", "dense", inv, tensors)
    assert why == "" and len(seq.sites) == inv.total == 4
    layer_of = {m: i for i, lay in enumerate(inv.layers) for m in lay.modules}
    assert [li for li, _, _ in seq.sites] == [layer_of[s.module] for s in inv.sites]
    twins = [prep for li, _, prep in seq.sites if inv.layers[li].count == 2]
    assert len(twins) == 2
    assert twins[0].input_tensor.data_ptr() != twins[1].input_tensor.data_ptr()  # a model's twins are not one buffer
    assert twins[0].weight_tensor.data_ptr() != twins[1].weight_tensor.data_ptr()
    again, _ = build_sequence("channels_last", "channels_last", inv, tensors)  # the next mode reuses the tensors
    assert len(tensors) == 4 and [p for _, p, _ in again.sites] == ["channels_last"] * 4


def test_the_mkldnn_modes_reorder_only_their_first_conv():
    assert [site_path("jit_mkldnn", "mkldnn", k) for k in range(3)] == ["mkldnn", model_chained.CHAINED_PATH, model_chained.CHAINED_PATH]
    assert site_path("to_mkldnn", "mkldnn", 0) == "mkldnn" and site_path("nchw", "dense", 5) == "dense"
    seq, _ = build_sequence("to_mkldnn", "mkldnn", _inv(), {})
    assert seq.sites[0][2].input_tensor.layout == torch._mkldnn and seq.sites[1][2].name == model_chained.CHAINED_PATH


def test_a_conv_that_cannot_be_measured_gives_no_sequence_and_says_which():
    inv = _inv()
    inv.layers[1].spec, inv.layers[1].error = None, "transposed convolutions are not measured"
    seq, why = build_sequence("nchw", "dense", inv, {})
    assert seq is None and inv.layers[1].name in why and "transposed" in why


def test_a_sequence_that_would_not_fit_in_memory_is_refused_before_allocating():
    from explorer.core.model.sequence import sequence_bytes

    inv = _inv()
    need = sequence_bytes(inv)
    assert need > 0
    tensors: dict = {}
    seq, why = build_sequence("nchw", "dense", inv, tensors, available=need)  # needs all of it: over half
    assert seq is None and "free now" in why and tensors == {}
    seq, why = build_sequence("nchw", "dense", inv, tensors, available=4 * need)
    assert seq is not None and why == ""


def _spin(ms):
    def fn():
        end = time.perf_counter_ns() + int(ms * 1e6)
        while time.perf_counter_ns() < end:
            pass
    return SimpleNamespace(fn=fn)


def test_each_call_is_booked_to_its_own_layer_and_path():
    # site 0 and 2 are one layer (two sites), site 1 another: the slow one must come out slow
    seq = Sequence("nchw", [(0, "dense", _spin(0.2)), (1, "dense", _spin(2.0)), (0, "dense", _spin(0.2))])
    t = time_sequence(seq, budget_ms=60, min_samples=5, cancel=lambda: False)
    assert t.passes >= 5 and set(t.per_layer) == {(0, "dense"), (1, "dense")}
    assert t.per_layer[(1, "dense")] > 5 * t.per_layer[(0, "dense")]
    assert t.per_layer[(0, "dense")] >= 0.2 and t.per_layer[(1, "dense")] >= 2.0
    assert t.total_ms >= 2.4 and t.total_ms < 2 * (t.per_layer[(1, "dense")] + 2 * t.per_layer[(0, "dense")])


def test_the_parts_of_a_round_are_clocked_with_the_convs_and_kept_apart():
    seq = Sequence("nchw", [(0, "dense", _spin(0.1))])
    t = time_sequence(seq, budget_ms=40, min_samples=5, cancel=lambda: False,
                      parts={"remainder": _spin(0.3).fn, "forward": _spin(1.5).fn})
    assert set(t.parts_ms) == {"remainder", "forward"} and len(t.parts_ms["forward"]) == t.passes >= 5
    assert t.parts_ms["forward"].min() >= 1.5 and 0.3 <= float(t.parts_ms["remainder"].min()) < 1.5
    assert t.total_ms < 1.0  # the parts are not convs
    assert t.measurement.n >= t.passes  # the harness's loop, whose verdict the mode's row carries


def test_what_is_taken_off_a_part_is_taken_off_round_by_round():
    seq = Sequence("jit_mkldnn", [(None, "jit graph", _spin(2.0))])
    parts = {"conv touches": _spin(0.3).fn, "remainder": _spin(3.0).fn, "remainder touches": _spin(0.3).fn,
             "forward": _spin(1.0).fn}
    t = time_sequence(seq, budget_ms=80, min_samples=5, cancel=lambda: False, parts=parts,
                      minus={"convs": "conv touches", "remainder": "remainder touches"})
    raw = t.raw_ms
    want_rem = np.maximum(raw["remainder"] - raw["remainder touches"], 0)
    assert np.array_equal(t.parts_ms["remainder"], want_rem)  # paired: each round's own touches
    assert t.total_ms == pytest.approx(float(np.median(np.maximum(raw["convs"] - raw["conv touches"], 0))))
    assert t.per_layer[(None, "jit graph")] == pytest.approx(t.total_ms)
    assert np.array_equal(t.parts_ms["forward"], raw["forward"])  # a part with nothing taken off is as clocked
    assert float(np.median(t.parts_ms["remainder"])) < float(np.median(raw["remainder"]))
    with pytest.raises(ValueError, match="one-site"):
        time_sequence(Sequence("nchw", [(0, "dense", _spin(0.1)), (1, "dense", _spin(0.1))]), budget_ms=10,
                      min_samples=3, cancel=lambda: False, parts={"t": _spin(0.1).fn}, minus={"convs": "t"})


def test_a_cancelled_sequence_gives_nothing():
    seq = Sequence("nchw", [(0, "dense", _spin(0.1))])
    assert time_sequence(seq, budget_ms=1000, min_samples=5, cancel=lambda: True) is None


class _TokenMixer(torch.nn.Module):
    """SegFormer's Mix-FFN in little: tokens (N, HW, C) through a Linear, then a depthwise conv on the
    transpose(1, 2).view(...) of them, a non-contiguous input torch copies inside the conv."""

    def __init__(self, c=8, hw=8):
        super().__init__()
        self.hw = hw
        self.fc = torch.nn.Linear(c, c)
        self.dw = torch.nn.Conv2d(c, c, 3, padding=1, groups=c)

    def forward(self, tokens):
        n, _, c = tokens.shape
        h = self.fc(tokens).transpose(1, 2).view(n, c, self.hw, self.hw)
        return self.dw(h).flatten(2).transpose(1, 2)


def test_a_conv_fed_a_transposed_view_is_timed_on_an_input_with_the_same_strides():
    """main timed it on a contiguous input: SegFormer mb1's convs read 11.5 ms in the sequence against 21 ms
    inside the forward (pred/meas 0.75-0.80); with the real strides 18.0 against 17.1 (0.93)."""
    net = _TokenMixer().eval()
    x = torch.randn(1, 64, 8)
    with torch.no_grad():
        real = net.fc(x).transpose(1, 2).view(1, 8, 8, 8)
    inv = model_inventory.take_inventory(net, x, "mixer")
    (site,) = inv.sites
    assert site.input_strides == real.stride() and not real.is_contiguous()
    seq, why = build_sequence("nchw", "dense", inv, {})
    assert why == ""
    prep = seq.sites[0][2]
    assert prep.input_tensor.stride() == real.stride()  # what the model hands the conv, not a contiguous copy
    with torch.no_grad():
        assert prep.fn().shape == (1, 8, 8, 8)
    other, _ = build_sequence("channels_last", "channels_last", inv, {})  # a converted model: its own layout
    assert other.sites[0][2].input_tensor.is_contiguous(memory_format=torch.channels_last)
    flat = model_inventory.take_inventory(model_zoo.build("tiny"), torch.randn(1, 3, 16, 16), "tiny")
    assert all(s.input_strides == () for s in flat.sites)  # contiguous inputs record nothing


def _jitter(ms, spread):
    """A call whose time varies by up to `spread` of `ms` from call to call (a noisy part)."""
    rng = np.random.default_rng(0)

    def fn():
        end = time.perf_counter_ns() + int(ms * (1 + spread * rng.random()) * 1e6)
        while time.perf_counter_ns() < end:
            pass
    return fn


def test_a_sequence_whose_parts_are_known_stops_decided_and_a_noisy_one_runs_to_its_budget():
    # The planner's modes: rounds stop once the pass and the parts a prediction is made of (remainder,
    # forward) have a median known to `precision`; main ran every mode's rounds to twice its budget.
    seq = Sequence("nchw", [(0, "dense", _spin(0.3))])
    # a forward a little noisy (+-15%): the whole round's median never reaches the harness's own 0.5%
    steady = {"remainder": _spin(0.3).fn, "forward": _jitter(0.6, 0.3)}
    t = time_sequence(seq, budget_ms=1500, min_samples=5, cancel=lambda: False, parts=steady, precision=0.02)
    assert t.measurement.stop_reason == "decided"
    assert t.measurement.wall_s < 1.0 and t.passes >= 8  # from CHECK_FROM_ROUNDS on, a fifth of the budget
    # the forward's median all over the place: the loop goes on (the round sum alone would have stopped it)
    noisy = {"remainder": _spin(0.3).fn, "forward": _jitter(0.3, 3.0)}
    t = time_sequence(seq, budget_ms=400, min_samples=5, cancel=lambda: False, parts=noisy, precision=0.005)
    assert t.measurement.stop_reason == "budget"
    # without a precision the rounds run to the budget as before (other callers)
    t = time_sequence(seq, budget_ms=300, min_samples=5, cancel=lambda: False, parts=steady)
    assert t.measurement.stop_reason in ("budget", "converged")


def test_a_small_noisy_remainder_weighs_by_its_share_of_the_prediction():
    # The rounds stop on the two figures an answer compares, the prediction (pass + remainder) and the
    # forward. A remainder of a tenth of the prediction that swings +-100% moves the prediction by a few
    # percent at most, and the sum is known to 2% in ~16 rounds; main asked the remainder alone for 2% and
    # never got it, so the round's total (0.5%, the harness's own rule) ended the loop as "converged" instead.
    seq = Sequence("nchw", [(0, "dense", _spin(0.3))])
    parts = {"remainder": _jitter(0.03, 1.0), "forward": _spin(0.6).fn}
    t = time_sequence(seq, budget_ms=1500, min_samples=5, cancel=lambda: False, parts=parts, precision=0.02)
    assert t.measurement.stop_reason == "decided"


def test_a_steady_round_total_does_not_end_the_rounds_while_the_prediction_is_unknown():
    # A remainder of two thirds of the prediction swinging +-100% beside a long steady forward: the round's
    # total reaches the harness's 0.5% while the prediction is still far from 2%. main stopped there
    # ("converged", 40-odd rounds); the rounds now run to the budget, the prediction not yet known.
    seq = Sequence("nchw", [(0, "dense", _spin(0.1))])
    parts = {"remainder": _jitter(0.2, 1.0), "forward": _spin(6.0).fn}
    t = time_sequence(seq, budget_ms=600, min_samples=5, cancel=lambda: False, parts=parts, precision=0.02)
    assert t.measurement.stop_reason == "budget"


def _skewed(ms, slow_share, seed):
    """A conv whose call takes `ms`, and twice that in `slow_share` of the calls (an occasional slow call)."""
    rng = np.random.default_rng(seed)

    def fn():
        end = time.perf_counter_ns() + int(ms * (2 if rng.random() < slow_share else 1) * 1e6)
        while time.perf_counter_ns() < end:
            pass
    return SimpleNamespace(fn=fn)


def test_the_pass_is_the_median_of_whole_passes_as_the_forward_is_of_whole_forwards():
    # Ten convs of 0.1 ms, each twice as slow in 30% of its calls: each one's median is 0.1 ms, so main's sum
    # of medians said 1.0 ms, while a pass, as the forward runs it, typically takes 1.3 (three slow calls).
    # MobileNetV2 mb1 on main: 52 convs summed 13.3-14.1 ms against passes of 15.2-15.7 ms (BENCHMARKS §20).
    seq = Sequence("nchw", [(k, "dense", _skewed(0.1, 0.3, k)) for k in range(10)])
    t = time_sequence(seq, budget_ms=400, min_samples=5, cancel=lambda: False)
    assert all(ms == pytest.approx(0.1, rel=0.3) for ms in t.per_layer.values())
    assert t.total_ms == pytest.approx(1.3, rel=0.1)
