"""The whole-model planner's core: reference nets, inventory, stubbed remainder, modes, prediction, CSV.

Tiny models and tiny budgets only: the full-size ResNet-50 runs live in tests/benchmarks/bench_model.py.
"""

import csv
import io

import numpy as np
import pytest
import torch
from torch import nn

from explorer.core.errors import InputError
from explorer.core.jobs.options import RunOptions
from explorer.core.model import chained as model_chained
from explorer.core.model import inventory as model_inventory
from explorer.core.model import job as model_job
from explorer.core.model import load as model_load
from explorer.core.model import model_csv
from explorer.core.model import modes as model_modes
from explorer.core.model import report as model_report
from explorer.core.model import surgery as model_surgery
from explorer.core.model import zoo as model_zoo


def _inv(name, shape):
    net = model_zoo.build(name)
    return model_inventory.take_inventory(net, torch.randn(shape), name)


def test_resnet50_has_53_convs_named_after_their_modules():
    inv = _inv("resnet50", (1, 3, 224, 224))
    assert inv.total == 53
    assert inv.counts_by_kind() == {"Conv2d": 53}
    assert sum(lay.count for lay in inv.layers) == 53
    assert len(inv.layers) < 53  # identical layers are counted, not listed twice
    names = [s.module for s in inv.sites]
    assert names[0] == "conv1" and "layer1.0.downsample.0" in names and "layer4.2.conv3" in names
    stem = inv.layers[0]
    assert stem.spec.desc == "mb1ic3ih224oc64oh112kh7sh2ph3" and stem.spec.name == "conv1"
    # layer3 has six blocks; blocks 1..5 share their three convs
    l3 = next(lay for lay in inv.layers if lay.name == "layer3.1.conv1")
    assert l3.modules == [f"layer3.{i}.conv1" for i in range(1, 6)]


def test_mobilenet_v2_has_52_convs_with_depthwise_ones():
    inv = _inv("mobilenet_v2", (1, 3, 224, 224))
    assert inv.total == 52
    dw = [lay for lay in inv.layers if lay.spec.g > 1]
    assert dw and all(lay.spec.g == lay.spec.ic == lay.spec.oc for lay in dw)
    assert inv.layers[0].spec.desc == "mb1ic3ih224oc32oh112kh3sh2ph1"


def test_mb_is_in_every_descriptor():
    inv = _inv("tiny", (8, 3, 32, 32))
    assert {lay.spec.mb for lay in inv.layers} == {8}
    pw = next(lay for lay in inv.layers if lay.name == "pw")
    assert pw.modules == ["pw", "res"] and pw.count == 2


class OneAndThree(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(4, 8, 3, padding=1, dilation=1, stride=2)

    def forward(self, x):
        return self.c1(x)


class Vol(nn.Module):
    def __init__(self):
        super().__init__()
        self.c3 = nn.Conv3d(2, 4, 3, padding=1)

    def forward(self, x):
        return self.c3(x)


def test_conv1d_and_conv3d_become_their_own_1d_and_3d_specs():
    """Fails on main: 1-D convs became 2-D specs (ih=1) and 3-D ones were listed but not measured."""
    inv = model_inventory.take_inventory(OneAndThree().eval(), torch.randn(2, 4, 20))
    (lay,) = inv.layers
    assert lay.kind == "Conv1d"
    s = lay.spec
    assert s.ndims == 3 and (s.iw, s.kw, s.sw, s.pw) == (20, 3, 2, 1) and s.ow == 10
    inv3 = model_inventory.take_inventory(Vol().eval(), torch.randn(1, 2, 4, 6, 6))
    (lay3,) = inv3.layers
    assert lay3.kind == "Conv3d" and not lay3.error and lay3.spec.ndims == 5 and "id4" in lay3.desc
    assert (lay3.spec.id, lay3.spec.kd, lay3.spec.od) == (4, 3, 4)


def test_torchscript_and_exported_models_get_the_same_inventory(tmp_path):
    net = model_zoo.build("tiny")
    x = torch.randn(1, 3, 32, 32)
    eager = [(s.module, s.input_shape) for s in model_inventory.take_inventory(net, x).sites]
    ts = tmp_path / "tiny.pt"
    torch.jit.script(net).save(str(ts))
    pt2 = tmp_path / "tiny.pt2"
    torch.export.save(torch.export.export(net, (x,)), str(pt2))
    for path, kind in ((ts, "torchscript"), (pt2, "export")):
        loaded = model_load.load_model(str(path))
        assert loaded.kind == kind
        inv = model_inventory.take_inventory(loaded.module, x, str(path), kind=loaded.kind)
        assert [(s.module, s.input_shape) for s in inv.sites] == eager, kind
    assert model_load.load_model(str(pt2)).expected_input == (1, 3, 32, 32)


def test_stubbed_convs_give_the_same_output_without_running_a_conv():
    net = model_zoo.build("tiny")
    x = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        ref = net(x)
    assert model_surgery.stub_convs(net, lambda: net(x)) == 4
    with torch.no_grad():
        out = net(x)
    assert torch.equal(out, ref)
    assert model_inventory._record_convs(net, x) == []  # no aten.convolution left in the forward


def test_compare_outputs_measures_the_error_against_the_reference():
    ref = torch.tensor([1.0, -4.0])
    err, rel = model_surgery.compare_outputs(torch.tensor([1.5, -4.0]), ref)
    assert err == pytest.approx(0.5) and rel == pytest.approx(0.125)
    assert model_surgery.compare_outputs(torch.tensor([1.0, -4.0]).to_mkldnn(), ref) == (0.0, 0.0)


def test_an_output_at_denormal_magnitudes_does_not_read_as_a_different_answer():
    """MobileViT with random weights outputs ~9e-40 (denormal f32, a few bits left): channels_last's rounding
    there, 6.4e-42, read as "output differs from the NCHW model: 0.0068 of its largest value"."""
    ref = torch.tensor([9.4e-40, -2e-40])
    err, rel = model_surgery.compare_outputs(ref + torch.tensor([6.4e-42, 0.0]), ref)
    assert err == pytest.approx(6.4e-42, rel=0.01) and rel < 1e-9
    _, rel = model_surgery.compare_outputs(torch.tensor([1e-30]), torch.tensor([2e-30]))  # normal range: still an error
    assert rel == pytest.approx(0.5)


@pytest.mark.parametrize("text, words", [
    ("no_such_module_xyz:make", "no module named"),
    ("json:nothing_here", "has no attribute"),
    ("json:__doc__", "not a callable"),
    ("json:dumps", "raised TypeError"),
    ("nosuchnet", "unknown model"),
    ("missing_file.pt2", "no such file"),
])
def test_bad_model_values_are_one_sentence(text, words):
    with pytest.raises(InputError) as e:
        model_load.load_model(text)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_parse_input():
    assert model_load.parse_input("1,3,224,224") == (1, 3, 224, 224)
    assert model_load.parse_input("16000") == (16000,)  # the model's input: any rank
    for bad in ("1,3,a", "0,3,4,4", "1,1,1,1,1,1,1,1,1"):
        with pytest.raises(InputError):
            model_load.parse_input(bad)


class WithReLU6(nn.Module):
    """A conv followed by ReLU6: hardtanh refuses MKLDNN tensors, so to_mkldnn(model) cannot run it."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.act = nn.ReLU6()

    def forward(self, x):
        return self.act(self.conv(x))


def _fast_run(model, shape="1,3,16,16", modes=model_report.DEFAULT_MODES):
    ropts = RunOptions(paths=("dense", "channels_last", "mkldnn"), budget_ms=5, min_samples=3, trace=False)
    mopts = model_report.ModelOptions(modes=modes, mode_budget_ms=10, min_samples=3)
    return list(model_job.iter_model(model, shape, run_opts=ropts, model_opts=mopts, threads=1))


def test_a_whole_tiny_model_run_measures_predicts_and_fills_the_csv():
    events = _fast_run("tiny", "2,3,16,16")
    assert isinstance(events[0], model_report.ModelStarted)
    report = events[-1].report
    assert isinstance(events[-1], model_report.ModelFinished) and not events[-1].cancelled
    assert [r.mode for r in report.modes] == list(model_report.DEFAULT_MODES)
    for r in report.modes:
        assert r.status == "ok", (r.mode, r.error)
        assert r.measured_ms > 0 and r.rel_err < 1e-3
        assert r.quality in ("ok", "noisy", "")
        assert r.predicted_ms == pytest.approx(r.conv_ms + r.conversion_ms + r.remainder_ms)
    nchw = report.mode("nchw")
    pw = next(s for s in report.layers if s.layer.name == "pw")
    dense_conv = sum(s.layer.count * s.results["dense"].median_ms for s in report.layers)
    assert nchw.conv_alone_ms == pytest.approx(dense_conv)  # the pw layer counts twice
    for r in report.modes:  # the prediction's convs: timed in model order, right after the mode's loop
        assert r.conv_seq is not None and r.conv_seq.passes >= 3, (r.mode, r.conv_seq_note)
        assert r.conv_ms == pytest.approx(r.conv_seq.total_ms) and ("model order" in r.predict_note or
                                                                    "graph's own" in r.predict_note)
        # measured and remainder come from the same interleaved rounds as the convs: one machine for all three
        assert r.measured_ms == pytest.approx(float(np.median(r.conv_seq.parts_ms["forward"])))
        assert r.remainder_ms == pytest.approx(float(np.median(r.conv_seq.parts_ms["remainder"])))
        assert r.samples >= 3 and r.samples_used == len(r.conv_seq.parts_ms["forward"])
    assert set(nchw.conv_seq.per_layer) == {(i, "dense") for i in range(len(report.layers))}
    jit = report.mode("jit_mkldnn")  # its parts come from its own frozen graph (model_jit), not the layers
    assert jit.graph_convs == 4 and jit.graph_cut_error == "" and set(jit.conv_seq.per_layer) == {(None, "jit graph")}
    assert "frozen graph's own 4 conv nodes" in jit.predict_note
    assert pw.best_path in ("dense", "channels_last", "mkldnn") and pw.margin >= 1
    assert report.mode("to_mkldnn").conversion_ms > 0  # input to_mkldnn + output to_dense
    rows = list(csv.DictReader(io.StringIO(model_csv.rows_to_text(model_csv.report_rows(report)))))
    kinds = [r["kind"] for r in rows]
    # 3 layers x 3 paths, and each layer's mkldnn_chained row (jit_mkldnn's per-layer time)
    assert kinds.count("layer") == 3 and kinds.count("layer_path") == 12 and kinds.count("mode") == 4
    assert sum(r["path"] == model_chained.CHAINED_PATH for r in rows) == 3
    mode_rows = {r["mode"]: r for r in rows if r["kind"] == "mode"}
    assert float(mode_rows["to_mkldnn"]["measured_ms"]) == pytest.approx(report.mode("to_mkldnn").measured_ms, rel=1e-5)
    assert mode_rows["nchw"]["quality"] == report.mode("nchw").quality
    for r in report.modes:  # the convs timed where they run, beside the table's sum
        assert r.convs_in_model_ms > 0, (r.mode, r.convs_in_model_note)
        assert float(mode_rows[r.mode]["convs_in_model_ms"]) == pytest.approx(r.convs_in_model_ms, rel=1e-5)
    assert "convs in model: jit graph" in mode_rows["jit_mkldnn"]["note"]
    for r in report.modes:  # the reference layer timed around every mode, against its table row
        assert r.host_drift_pct is not None and "reference layer" in r.host_drift_note
        assert float(mode_rows[r.mode]["host_drift_pct"]) == pytest.approx(r.host_drift_pct, rel=1e-4, abs=1e-3)
    pw_dense = next(r for r in rows if r["kind"] == "layer_path" and r["name"] == "pw" and r["path"] == "dense")
    assert float(pw_dense["in_sequence_ms"]) == pytest.approx(pw.in_sequence["dense"], rel=1e-4)
    assert float(mode_rows["nchw"]["conv_alone_ms"]) == pytest.approx(dense_conv, rel=1e-4)
    layer = next(r for r in rows if r["kind"] == "layer" and r["name"] == "pw")
    assert layer["count"] == "2" and layer["modules"] == "pw;res" and layer["desc"] == "mb2ic8ih8oc8oh8kh1ph0"
    line = report.answer()
    assert "\n" not in line and ("faster" in line or "slower" in line or "keep" in line)


def test_a_mode_the_model_cannot_run_names_the_op_and_the_module(tmp_path, monkeypatch):
    pkg = tmp_path / "relu6pkg_t"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "net.py").write_text(
        "from torch import nn\n"
        "class N(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.conv = nn.Conv2d(3, 4, 3, padding=1)\n"
        "        self.act = nn.ReLU6()\n"
        "    def forward(self, x):\n"
        "        return self.act(self.conv(x))\n"
        "def make():\n"
        "    return N()\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    events = _fast_run("relu6pkg_t.net:make", modes=("nchw", "to_mkldnn"))
    r = events[-1].report.mode("to_mkldnn")
    assert r.status in ("unsupported", "error")
    assert "hardtanh" in r.error and "act" in r.error and "\n" not in r.error
    assert "cannot run" in model_report.mode_line(r)


class MeanHead(nn.Module):
    def forward(self, x):
        return x.mean((2, 3), keepdim=True)  # refuses MKLDNN tensors


def test_the_jit_remainder_model_runs_refusing_modules_as_the_jit_would():
    import torch.utils.mkldnn

    net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU6(), nn.Conv2d(4, 4, 1), MeanHead()).eval()
    x = torch.randn(1, 3, 8, 8)
    mm = torch.utils.mkldnn.to_mkldnn(net)
    xm = x.to_mkldnn()
    with pytest.raises(NotImplementedError):
        mm(xm)
    assert model_surgery.make_mkldnn_runnable(mm, lambda: mm(xm)) == ["1", "3"]
    assert type(mm[1]).__name__ == "MkldnnEltwise" and type(mm[3]).__name__ == "DenseIsland"
    with torch.no_grad():
        out = mm(xm)
    assert out.layout == torch._mkldnn and tuple(out.shape) == (1, 4, 1, 1)
    # the hooks that found the modules left every output as it was
    assert model_surgery._failing_module(mm, lambda: mm(xm)) is None


def test_cancel_during_the_layer_table_ends_with_the_rows_measured_so_far():
    from explorer.core.jobs.events import PathFinished

    seen = {"rows": 0}

    def cancel():
        return seen["rows"] >= 2

    ropts = RunOptions(paths=("dense", "mkldnn"), budget_ms=5, min_samples=3, trace=False)
    events = []
    for ev in model_job.iter_model("tiny", "1,3,16,16", run_opts=ropts, threads=1, cancel=cancel,
                           model_opts=model_report.ModelOptions(mode_budget_ms=10, min_samples=3)):
        events.append(ev)
        if isinstance(ev, PathFinished):
            seen["rows"] += 1
    last = events[-1]
    assert isinstance(last, model_report.ModelFinished) and last.cancelled
    assert not any(isinstance(e, model_report.ModeStarted) for e in events)
    assert [s.layer.name for s in last.report.layers] == ["stem"]
    rows = model_csv.report_rows(last.report)
    assert [r["kind"] for r in rows] == ["layer", "layer_path", "layer_path"]


def test_the_jit_remainder_runs_relu6_as_the_flat_clamp_the_jit_runs_not_an_mkldnn_relu():
    import torch.utils.mkldnn
    from torch.profiler import profile

    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU6()).eval()
    x = torch.randn(1, 3, 8, 8)
    mm = torch.utils.mkldnn.to_mkldnn(net)
    xm = x.to_mkldnn()
    model_surgery.make_mkldnn_runnable(mm, lambda: mm(xm))
    y = mm[0](xm)
    with torch.no_grad(), model_surgery.quiet_stderr(), profile() as prof:
        out = mm[1](y)
    names = {e.name for e in prof.events()}
    assert out is y  # the MKLDNN tensor passes through
    assert "aten::clamp_" in names and "aten::relu_" not in names


def test_prepare_chained_gives_the_mkldnn_conv_output_from_a_blocked_input():
    from explorer.core.paths.base import Tensors, to_dense
    from explorer.core.paths.registry import prepare
    from explorer.core.problem.spec import ConvSpec

    spec = ConvSpec(mb=1, g=8, ic=8, ih=10, iw=10, oc=8, kh=3, kw=3, sh=1, sw=1, ph=1, pw=1, dh=0, dw=0,
                    bias=False, dtype="f32", name="dw").validate()
    t = Tensors.make(spec)
    chained = model_chained.prepare_chained(t)
    with torch.no_grad():
        got = to_dense(chained.fn())
        want = to_dense(prepare("mkldnn", t).fn())
    assert chained.name == model_chained.CHAINED_PATH and chained.input_tensor.layout == torch._mkldnn
    assert torch.allclose(got, want, atol=1e-5)


def _fake(path, ms):
    from explorer.core.report.results import Result

    r = Result(spec=None, path=path, threads=1)
    r.status, r.median_ms = "ok", ms
    return r


def test_mkldnn_mode_predictions_use_the_chained_time_for_every_conv_but_the_first():
    inv = _inv("tiny", (1, 3, 32, 32))  # stem, dw, pw x2 (pw;res)
    summaries = []
    for lay in inv.layers:
        s = model_report.summarize_layer(lay, {"mkldnn": _fake("mkldnn", 1.0)})
        s.chained = _fake(model_chained.CHAINED_PATH, 0.25)
        summaries.append(s)
    jit = model_report.ModeResult("jit_mkldnn", remainder_ms=0.5, conversion_ms=0.1)
    model_job._predict(jit, summaries, inv)
    assert jit.conv_ms == pytest.approx(1.0 + 3 * 0.25)  # the stem reorders the plain input: mkldnn time
    assert jit.predicted_ms == pytest.approx(1.0 + 0.75 + 0.1 + 0.5)
    to = model_report.ModeResult("to_mkldnn", remainder_ms=0.5, conversion_ms=0.1)
    model_job._predict(to, summaries, inv)
    assert to.conv_ms == pytest.approx(1.0 + 3 * 0.25)  # to_mkldnn(model) keeps blocked tensors as well
    nchw = model_report.ModeResult("nchw", remainder_ms=0.5, conversion_ms=0.0)
    model_job._predict(nchw, [model_report.summarize_layer(s.layer, {"dense": _fake("dense", 2.0)}) for s in summaries], inv)
    assert nchw.conv_ms == pytest.approx(8.0)
    assert "per-layer table" in nchw.predict_note  # no in-order loop: the table's times, said so


def test_a_prediction_takes_the_convs_in_model_order_when_they_were_timed():
    from explorer.core.model.sequence import SequenceTiming

    inv = _inv("tiny", (1, 3, 32, 32))
    summaries = [model_report.summarize_layer(lay, {"dense": _fake("dense", 2.0)}) for lay in inv.layers]
    nchw = model_report.ModeResult("nchw", remainder_ms=0.5, conversion_ms=0.0)
    nchw.conv_seq = SequenceTiming(10.0, {}, 7, "ok", "")
    model_job._predict(nchw, summaries, inv)
    assert nchw.conv_alone_ms == pytest.approx(8.0) and nchw.conv_ms == pytest.approx(10.0)
    assert nchw.predicted_ms == pytest.approx(10.5)
    assert "model order" in nchw.predict_note and "1.25x their per-layer table time" in nchw.predict_note


class _SleepBetweenConvs(nn.Module):
    """Two tiny convs around 250 ms of Python that is not a conv (a busy host can stretch the two convs to tens
    of ms, never to the sleep's length)."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Conv2d(3, 4, 3, padding=1), nn.Conv2d(4, 4, 1)

    def forward(self, x):
        import time

        y = self.a(x)
        time.sleep(0.25)
        return self.b(y)


def test_convs_in_the_forward_count_each_conv_once_and_nothing_else():
    from torch.profiler import profile

    from explorer.core.model.inplace import CONV_OPS, convs_in_forward_ms

    net, x = _SleepBetweenConvs().eval(), torch.randn(1, 3, 16, 16)
    for model, what in ((None, "profiler"), (net, "clock read")):
        ms, note = convs_in_forward_ms(lambda: net(x), model, runs=3)
        assert 0 < ms < 200 and what in note  # the sleep between them is not a conv
    assert type(net.a).__name__ == "Conv2d"  # the clocked wrappers are gone again
    from explorer.core.model.inplace import _outer_conv

    with torch.no_grad(), profile() as prof:  # one profile: the outermost ops are one per conv call
        net(x)
    events = prof.events()
    outer = [e for e in events if _outer_conv(e)]
    assert [e.name for e in outer] == ["aten::conv2d", "aten::conv2d"]
    nested = [e for e in events if e.name in CONV_OPS]
    assert len(nested) >= 3 * len(outer)  # conv2d > convolution > _convolution > ...: each level counted once would count each conv 3-4 times


def test_a_jit_graphs_convs_are_its_time_outside_the_recorded_ops():
    from explorer.core.model.inplace import GRAPH_NOTE, convs_in_forward_ms

    net, x = model_zoo.build("tiny").eval(), torch.randn(1, 3, 32, 32)
    prep = model_modes.prepare_mode("jit_mkldnn", net, x, "f32")
    ms, note = convs_in_forward_ms(prep.fn, graph=True, runs=3)
    assert ms > 0 and note == GRAPH_NOTE
    ms_eager, _ = convs_in_forward_ms(prep.fn, graph=False, runs=1)  # the graph's convs are not recorded ops
    assert ms_eager is None


def test_a_drift_of_the_reference_layer_marks_the_comparison_uncertain_and_names_it():
    from explorer.core.model.drift import drift, pick_reference

    inv = _inv("tiny", (1, 3, 32, 32))  # stem, dw, pw x2
    dense = {"stem": 1.0, "dw": 0.5, "pw": 0.8}  # pw counts twice: the largest share, 1.6
    summaries = []
    for lay in inv.layers:
        summaries.append(model_report.summarize_layer(lay, {"dense": _fake("dense", dense[lay.name]),
                                                 "channels_last": _fake("channels_last", dense[lay.name] / 2)}))
    ref = pick_reference(summaries)
    assert ref.name == "pw" and ref.table_ms == 0.8
    ref.fn()  # the real dense conv of that layer
    d, note = drift(ref, 0.8 * 1.3, None)
    assert d == pytest.approx(0.3) and "pw" in note and "0.8 ms in the per-layer table" in note

    def modes(drift_pct):
        base = model_report.ModeResult("nchw", measured_ms=10.0, predicted_ms=10.0, host_drift_pct=0.0, host_drift_note=note,
                            host_drift_ref=ref.label)
        cl = model_report.ModeResult("channels_last", measured_ms=8.0, predicted_ms=6.0, host_drift_pct=drift_pct,
                          host_drift_note=note, host_drift_ref=ref.label)
        model_job._ratios([base, cl], summaries)
        return cl

    cl = modes(30.0)
    assert cl.uncertain and "per-layer table row" in cl.uncertain_reason and "pw" in cl.uncertain_reason
    assert "+30%" in cl.uncertain_reason
    assert not modes(5.0).uncertain  # within the limit: the comparison stands


def test_a_frozen_graph_that_cannot_be_cut_falls_back_to_the_eager_stand_ins(monkeypatch):
    from explorer.core.model import jit as model_jit

    def refuse(frozen, x):
        raise ValueError("a conv node reads a prim::GetAttr, not a constant: the convs cannot run apart")

    monkeypatch.setattr(model_jit, "cut_graph", refuse)
    jit = _fast_run("tiny", "2,3,16,16", modes=("jit_mkldnn",))[-1].report.mode("jit_mkldnn")
    assert jit.status == "ok" and jit.graph_convs is None and "prim::GetAttr" in jit.graph_cut_error
    assert set(jit.conv_seq.per_layer) == {(0, "mkldnn"), (1, model_chained.CHAINED_PATH), (2, model_chained.CHAINED_PATH)}
    assert "could not be cut" in jit.predict_note and jit.predicted_ms > 0


def test_a_noisy_model_as_it_is_is_marked_in_its_line():
    quiet = model_report.ModeResult("nchw", measured_ms=25.0, predicted_ms=24.0)
    assert model_report.mode_line(quiet) == "model as it is: 25 ms per forward (predicted 24 ms)"
    loud = model_report.ModeResult("nchw", measured_ms=397.1, quality="noisy",
                        quality_reason="other programs held the cores")
    assert model_report.mode_line(loud).startswith("model as it is: ~397.1 ms per forward")
    assert "noisy: other programs held the cores" in model_report.mode_line(loud)
    loud.uncertain, loud.uncertain_reason = True, "a measured loop is noisy"
    assert model_report.mode_line(loud).endswith("(uncertain: a measured loop is noisy)")
