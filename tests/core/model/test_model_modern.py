"""Today's modes in the planner: `compiled` (torch.compile, inductor, freezing) with its compile time kept
out of the timed figure, and bf16 (`autocast_bf16`, `--dtype bf16`) stating its error against the f32 model and
saying so where oneDNN has no fast bf16. Tiny models, tiny budgets; the ISA is read, or faked, never assumed."""

import os
import subprocess
import sys

import pytest
import torch
from torch import nn

from explorer.core.model import model_csv
from explorer.core.model import modes as model_modes
from explorer.core.model import report as model_report
from explorer.core.model.modern import bf16 as model_bf16
from explorer.core.model.modern import compiled as model_compiled

AVX2 = "Intel AVX2"
AMX = ("Intel AVX-512 with float16, Intel DL Boost and bfloat16 support and Intel AMX with bfloat16 and 8-bit "
       "integer support")


def _net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.Conv2d(8, 8, 3, padding=1), nn.ReLU()).eval()


def _run(mode, net=None, dtype="f32", ref_f32="same"):
    net = net or _net()
    x = torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(1)).to(
        torch.bfloat16 if dtype == "bf16" else torch.float32)
    with torch.no_grad():
        ref = net(x)
        r32 = ref if ref_f32 == "same" else ref_f32
    mopts = model_report.ModelOptions(modes=("nchw", mode), mode_budget_ms=20, min_samples=3).validate()
    return model_modes.run_mode(mode, net, x, dtype, ref, mopts, lambda: False, None, None, r32)


def test_the_new_modes_are_modes_but_not_run_unless_asked():
    assert {"compiled", "autocast_bf16"} <= set(model_report.MODES)
    assert model_report.ModelOptions().validate().modes == model_report.DEFAULT_MODES
    assert model_report.ModelOptions(modes=("compiled", "autocast_bf16")).validate().modes == (
        "nchw", "compiled", "autocast_bf16")


@pytest.mark.slow
def test_compiled_runs_and_its_compile_time_is_not_in_the_measured_figure(monkeypatch):
    from explorer.core.paths.routes import cxx_problem

    if cxx_problem():
        pytest.skip(f"inductor has no C++ compiler here: {cxx_problem()}")
    from torch._dynamo.utils import counters

    seen = {}
    real = model_compiled.prepare_compiled

    def prepare(model, x):  # what dynamo had compiled once the mode was ready, before its timed loop
        got = real(model, x)
        seen["frames"] = counters["frames"]["ok"]
        return got

    monkeypatch.setattr(model_compiled, "prepare_compiled", prepare)
    r = _run("compiled")
    assert r.status == "ok", r.error
    assert r.compile_ms and r.compile_ms > 0 and r.measured_ms > 0
    assert counters["frames"]["ok"] == seen["frames"]  # nothing was compiled inside the timed loop
    assert "not in the measured time" in r.mode_note
    assert r.predicted_ms is None and r.predict_note.startswith("measured only")
    r.speedup = 1.0  # set by the job beside the model as it is
    line = model_report.mode_line(r)
    assert "compiled in" in line and "end to end" in line


def test_autocast_bf16_states_its_output_error_against_f32():
    r = _run("autocast_bf16")
    assert r.status == "ok", r.error
    assert r.f32_max_abs_err is not None and r.f32_max_abs_err > 0  # bf16 rounding shows
    assert 0 < r.f32_rel_err < 5e-2
    assert "output error against f32 nchw: max abs" in r.mode_note
    assert r.predict_note.startswith("measured only")  # an f32 plan has no bf16 per-layer times


def test_a_bf16_plan_states_every_modes_error_against_the_f32_model():
    from explorer.core.jobs.options import RunOptions
    from explorer.core.model.job import iter_model
    from explorer.core.model.report import ModelFinished

    ropts = RunOptions(paths=("dense", "channels_last"), budget_ms=5, trace=False)
    mopts = model_report.ModelOptions(modes=("nchw", "channels_last", "autocast_bf16"), mode_budget_ms=20,
                                      min_samples=3)
    report = [e for e in iter_model("tiny", dtype="bf16", run_opts=ropts, model_opts=mopts)
              if isinstance(e, ModelFinished)][0].report
    assert [m.mode for m in report.modes] == ["nchw", "channels_last", "autocast_bf16"]
    for m in report.modes:
        assert m.status == "ok", m.error
        assert m.f32_rel_err is not None and m.f32_rel_err > 0, m.mode
        assert "output error against f32 nchw" in m.mode_note
    auto = report.mode("autocast_bf16")  # in a bf16 plan the per-layer channels_last times are bf16 convs
    assert auto.remainder_ms is not None and auto.predicted_ms is not None


@pytest.mark.parametrize("isa, slow", [(AVX2, True), (AMX, False), ("Intel AVX-512 with Intel DL Boost and "
                                                                    "bfloat16 support", False), ("", True)])
def test_the_no_fast_bf16_note_follows_what_onednn_runs(monkeypatch, isa, slow):
    monkeypatch.setattr(model_bf16, "onednn_isa", lambda: isa)
    r = _run("autocast_bf16")
    assert r.status == "ok", r.error
    has_note = "bf16 speed not a finding" in r.mode_note or "no fast bf16 on this CPU" in r.mode_note
    assert has_note == slow
    if slow and isa:
        assert isa in r.mode_note
    r.speedup = 1.0  # set by the job beside the model as it is
    assert ("no fast bf16" in model_report.mode_line(r)) == (slow and bool(isa))


def test_under_an_avx2_cap_onednn_itself_says_bf16_is_not_fast():
    code = ("import torch; from torch import nn; from explorer.core.model.modern.bf16 import no_fast_bf16_note, "
            "onednn_isa; print(onednn_isa()); print(no_fast_bf16_note())")
    env = dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    isa, note = out.stdout.strip().splitlines()[-2:]
    assert "AVX2" in isa and "no fast bf16 on this CPU" in note and isa in note


def _answer(modes):
    return model_report.ModelReport(inventory=None, layers=[], modes=modes).answer()


def test_the_answer_names_a_new_mode_when_it_is_the_fastest():
    R = model_report.ModeResult
    base = R("nchw", measured_ms=10.0, speedup=1.0)
    cl = R("channels_last", measured_ms=8.0, speedup=1.25)
    comp = R("compiled", measured_ms=5.0, speedup=2.0, compile_ms=30_000.0,
             mode_note="torch.compile (inductor, freezing on) compiled in 30.0 s, not in the measured time")
    assert _answer([base, cl, comp]).startswith("torch.compile (freezing): 2.00x faster")
    auto = R("autocast_bf16", measured_ms=4.0, speedup=2.5, mode_note=model_bf16.no_fast_bf16_note(AVX2))
    got = _answer([base, cl, comp, auto])
    assert got.startswith("autocast bf16 (channels_last): 2.50x faster") and "no fast bf16 on this CPU" in got


def test_the_model_csv_has_the_compile_time_and_the_f32_error():
    from explorer.core.model.inventory import take_inventory

    inv = take_inventory(_net(), torch.randn(1, 3, 16, 16), "net")
    R = model_report.ModeResult
    rows = model_csv.report_rows(model_report.ModelReport(inv, [], [
        R("nchw", measured_ms=1.0), R("compiled", measured_ms=0.5, compile_ms=1234.5),
        R("autocast_bf16", measured_ms=0.7, f32_max_abs_err=0.01, f32_rel_err=0.002, mode_note="err note")]))
    by = {r["mode"]: r for r in rows}
    assert {"f32_max_abs_err", "f32_rel_err", "compile_ms"} <= set(model_csv.model_columns())
    assert float(by["compiled"]["compile_ms"]) == 1234.5 and by["compiled"]["path"] == "compiled"
    assert float(by["autocast_bf16"]["f32_rel_err"]) == 0.002 and by["autocast_bf16"]["note"].startswith("err note")
    assert by["nchw"]["compile_ms"] == "" and by["nchw"]["f32_rel_err"] == ""


def test_a_bf16_to_mkldnn_a_cpu_cannot_convert_names_the_module_and_what_to_change(monkeypatch):
    """main printed torch's bare "bf16 path needs the cpu support ..." with no module and no way out. On an
    AVX2-only CPU this is the real failure; elsewhere torch's refusal is played by its weight reorder."""
    import torch.utils.mkldnn

    try:
        torch.utils.mkldnn.to_mkldnn(nn.Conv2d(3, 4, 3), torch.bfloat16)
    except RuntimeError:
        pass  # this CPU refuses bf16 MKLDNN weights itself
    else:
        def refuse(*args, **kwargs):
            raise RuntimeError("mkldnn_reorder_conv2d_weight: bf16 path needs the cpu support avx_ne_convert or "
                               "avx512bw, avx512vl and avx512dq")

        monkeypatch.setattr(torch._C._nn, "mkldnn_reorder_conv2d_weight", refuse)
        monkeypatch.setattr(model_bf16, "onednn_isa", lambda: AVX2)
    r = _run("to_mkldnn", _net().to(torch.bfloat16), dtype="bf16")
    assert r.status != "ok"
    assert "(converting 0, Conv2d)" in r.error, r.error
    assert "run the bf16 plan on a CPU with AVX-512 or AVX-NE-CONVERT, or this mode with --dtype f32" in r.error


def _net_1d():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv1d(1, 8, 16, stride=8), nn.ReLU(), nn.Conv1d(8, 8, 3, padding=1)).eval()


def test_autocast_bf16_runs_a_model_of_1d_convs_as_it_is():
    # issue #37 (asteroid's ConvTasNet, input 1,16000): channels_last is the mode's option, not its precondition
    net = _net_1d()
    x = torch.randn(1, 1, 400, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        ref = net(x)
    mopts = model_report.ModelOptions(modes=("nchw", "channels_last", "autocast_bf16"), mode_budget_ms=20,
                                      min_samples=3).validate()
    r = model_modes.run_mode("autocast_bf16", net, x, "f32", ref, mopts, lambda: False, None, None, ref)
    assert r.status == "ok", r.error
    assert not r.error
    assert "on the model as it is" in r.mode_note and "channels_last model" not in r.mode_note
    assert r.conv_path == "dense" and model_report.mode_path(r) == "dense"
    assert model_report.mode_label(r) == "autocast bf16 (model as it is)"
    assert r.f32_rel_err is not None and 0 < r.f32_rel_err < 5e-2  # it did compute in bf16
    cl = model_modes.run_mode("channels_last", net, x, "f32", ref, mopts, lambda: False, None, None, ref)
    assert cl.status != "ok" and "1-D" in cl.error  # the channels_last mode itself still says why not


def test_autocast_bf16_keeps_channels_last_for_2d_convs():
    r = _run("autocast_bf16")
    assert r.status == "ok", r.error
    assert "on the channels_last model" in r.mode_note
    assert r.conv_path == "" and model_report.mode_path(r) == "channels_last"
    assert model_report.mode_label(r) == "autocast bf16 (channels_last)"


def test_a_bf16_plan_predicts_autocast_on_1d_convs_from_their_dense_times(tmp_path):
    from explorer.core.jobs.options import RunOptions
    from explorer.core.model.job import iter_model
    from explorer.core.model.report import ModelFinished

    (tmp_path / "one_d.py").write_text(
        "from torch import nn\n\n\ndef make():\n"
        "    return nn.Sequential(nn.Conv1d(1, 8, 16, stride=8), nn.ReLU(), nn.Conv1d(8, 8, 3, padding=1))\n")
    ropts = RunOptions(paths=("dense", "channels_last"), budget_ms=5, min_samples=3, trace=False)
    mopts = model_report.ModelOptions(modes=("nchw", "autocast_bf16"), mode_budget_ms=20, min_samples=3)
    report = [e for e in iter_model(f"{tmp_path / 'one_d.py'}:make", "1,1,400", dtype="bf16", run_opts=ropts,
                                    model_opts=mopts, threads=1) if isinstance(e, ModelFinished)][0].report
    auto = report.mode("autocast_bf16")
    assert auto.status == "ok", auto.error
    assert auto.remainder_ms is not None and auto.predicted_ms is not None, auto.predict_note
    assert "autocast bf16 (model as it is)" in model_report.mode_line(auto)
