"""The planner sees the data the model feeds its convs: a conv fed subnormal inputs is named in a measured
finding (what it costs, what torch.set_flush_denormal(True) saves), and a model without any gets none."""

import textwrap

import pytest
import torch

from explorer.core.jobs.options import RunOptions
from explorer.core.model import job as model_job
from explorer.core.model import model_csv
from explorer.core.model import report as model_report
from explorer.core.model.activations.denormal import flush_is_on, flush_restored, measure_finding
from explorer.core.model.activations.kept import KeptInputs, profiled_tensors
from explorer.core.model.activations.profile import as_profile, profile_of
from explorer.core.model.inventory import take_inventory

UNDERFLOW = textwrap.dedent("""
    import torch, torch.nn as nn

    class Underflow(nn.Module):
        # the second conv is fed the first's output times 1e-39: every nonzero value of it is subnormal
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 8, 3, padding=1)
            self.tail = nn.Conv2d(8, 8, 3, padding=1)

        def forward(self, x):
            return self.tail(self.stem(x) * 1e-39)

    def make():
        torch.manual_seed(0)
        return Underflow().eval()
""")


def _plan(model: str, shape: str):
    ropts = RunOptions(paths=("dense",), budget_ms=3, min_samples=3, trace=False)
    mopts = model_report.ModelOptions(modes=("nchw",), mode_budget_ms=5, min_samples=3)
    return list(model_job.iter_model(model, shape, run_opts=ropts, model_opts=mopts, threads=1))[-1].report


def test_a_conv_fed_subnormal_inputs_is_named_in_a_measured_finding(tmp_path):
    path = tmp_path / "underflow.py"
    path.write_text(UNDERFLOW)
    report = _plan(f"{path}:make", "1,3,16,16")
    tail = next(s for s in report.inventory.sites if s.module == "tail")
    assert as_profile(tail.input_profile).subnormal_share > 0.5  # the recorded statistics, not a random input's
    assert not as_profile(report.inventory.sites[0].input_profile).subnormal
    assert len(report.findings) == 1
    line = report.findings[0]
    assert "1 conv is fed subnormal" in line and "(tail;" in line and "stem" not in line
    assert "set_flush_denormal(True) measured" in line and "whole forward" in line
    nchw = report.mode("nchw")
    # a measured figure, whatever its size: the flush-on conv time and the forward's two times are numbers
    import re

    assert re.search(r"measured \d[\d.e+-]* ms on them, whole forward \d[\d.e+-]* -> \d[\d.e+-]* ms", line), line
    row = model_csv.mode_row(report.inventory, nchw)
    assert line in row["note"]  # the CSV carries it in the nchw mode's note
    assert not flush_is_on()  # the flag is set back as it was


def test_a_model_without_subnormals_gets_no_finding():
    report = _plan("tiny", "1,3,16,16")
    assert report.findings == []
    assert all(not m.finding for m in report.modes)
    assert all(not as_profile(s.input_profile).subnormal for s in report.inventory.sites)


def test_the_profile_counts_zeros_and_subnormals():
    t = torch.tensor([0.0, 0.0, 1e-39, -2e-40, 1.0, -3.0, 0.5, 2.0])
    p = profile_of(t)
    assert p.zero_share == pytest.approx(2 / 8) and p.subnormal_share == pytest.approx(2 / 8)
    assert p.absmax == 3.0 and p.subnormal
    assert profile_of(torch.tensor([1, 2])) is None  # integer: no profile
    assert not profile_of(torch.randn(100)).subnormal


def test_same_shape_convs_are_one_layer_unless_one_is_fed_subnormals():
    class Twin(torch.nn.Module):
        def __init__(self, scale):
            super().__init__()
            self.a, self.b, self.scale = torch.nn.Conv2d(4, 4, 1), torch.nn.Conv2d(4, 4, 1), scale

        def forward(self, x):
            return self.b(self.a(x) * self.scale)

    x = torch.randn(1, 4, 8, 8)
    assert len(take_inventory(Twin(1.0).eval(), x).layers) == 1
    assert len(take_inventory(Twin(1e-39).eval(), x).layers) == 2


def test_the_kept_inputs_stay_under_their_cap_and_the_rest_are_synthesised_alike():
    class Two(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Conv2d(4, 4, 1), torch.nn.Conv2d(4, 4, 1)

        def forward(self, x):
            return self.b(self.a(x * 1e-39) * 1e-39)

    x = torch.randn(1, 4, 8, 8)
    kept = KeptInputs(cap=x.numel() * 4)  # room for one input only
    inv = take_inventory(Two().eval(), x, keep=kept)
    assert [c.synthesised for c in kept.calls] == [False, True]
    made = kept.materialised()[1].input
    want = as_profile(inv.sites[1].input_profile)
    assert made.shape == x.shape and profile_of(made).subnormal_share == pytest.approx(want.subnormal_share, abs=0.15)
    assert torch.equal(kept.calls[0].input, x * 1e-39)  # the real input itself, a copy


def test_the_in_order_pass_of_a_subnormal_conv_gets_subnormal_inputs():
    from explorer.core.paths.base import Tensors

    class One(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Conv2d(4, 4, 1)

        def forward(self, x):
            return self.a(x * 1e-39)

    inv = take_inventory(One().eval(), torch.randn(1, 4, 8, 8))
    t = profiled_tensors(Tensors.make(inv.layers[0].spec), inv.sites[0].input_profile)
    assert profile_of(t.x).subnormal


def test_the_flush_flag_is_restored_even_when_the_timing_fails():
    class Boom:
        site, synthesised = 0, False

        def run(self):
            if flush_is_on():
                raise RuntimeError("boom")

    assert not flush_is_on()
    with pytest.raises(RuntimeError):
        measure_finding([Boom()], None)
    assert not flush_is_on()
    with flush_restored():
        torch.set_flush_denormal(True)
    assert not flush_is_on()
    assert measure_finding([Boom()], None, cancelled=lambda: True) is None and not flush_is_on()


def test_the_per_layer_table_times_a_subnormal_layer_on_an_input_of_its_profile(tmp_path, monkeypatch):
    from explorer.core.model.activations import kept as kept_mod

    made = []

    def recording(layer):
        maker = kept_mod.layer_tensors(layer)
        if maker is None:
            return None

        def make(spec):
            t = maker(spec)
            made.append((layer.name, profile_of(t.x).subnormal_share))
            return t

        return make

    monkeypatch.setattr(model_job, "layer_tensors", recording)
    path = tmp_path / "underflow.py"
    path.write_text(UNDERFLOW)
    _plan(f"{path}:make", "1,3,16,16")
    assert [name for name, _ in made] == ["tail"]  # the stem, fed the random image, keeps the seeded input
    assert made[0][1] > 0.5


def test_a_saved_session_keeps_the_profiles_and_the_finding():
    import json

    from explorer.core.model.activations.profile import InputProfile
    from explorer.core.session.store import model_from_dict, model_to_dict
    from tests.core.session.test_session_state import _report

    report = _report()
    report.inventory.sites[0].input_profile = InputProfile(1e-38, 1e-39, 0.1, 0.9)
    report.modes[0].finding = "finding: 1 conv is fed subnormal (denormal) inputs (conv1; ...)"
    back = model_from_dict(json.loads(json.dumps(model_to_dict(report))), "s.json")
    assert as_profile(back.inventory.sites[0].input_profile) == InputProfile(1e-38, 1e-39, 0.1, 0.9)
    assert back.findings == [report.modes[0].finding]
