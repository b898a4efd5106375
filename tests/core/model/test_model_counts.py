"""Issue #37: the plan's counts agree. ConvTasNet in small (98 Conv1d modules, an encoder running F.conv1d on
its own weight, a ConvTranspose1d decoder): main said "100 convolutions (100 Conv1d)" in the inventory, then
98 in the notes and 99 in the answer, with nothing linking them. Every line now counts with the same words."""

import re
import textwrap

from explorer.core.jobs.options import RunOptions
from explorer.core.model import job as model_job
from explorer.core.model import report as model_report

TASNET_LIKE = textwrap.dedent('''
    import torch, torch.nn as nn, torch.nn.functional as F

    class FilterBank(nn.Module):
        def __init__(self):
            super().__init__()
            self.filters = nn.Parameter(torch.randn(8, 1, 4) * 0.3)

        def forward(self, x):
            return F.conv1d(x.unsqueeze(1), self.filters, stride=2)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = FilterBank()
            self.blocks = nn.Sequential(*[nn.Conv1d(8, 8, 1) for _ in range(98)])
            self.dec = nn.ConvTranspose1d(8, 1, 4, stride=2)

        def forward(self, x):
            return self.dec(self.blocks(self.enc(x))).squeeze(1)

    def make():
        torch.manual_seed(0)
        return Net().eval()
''')
KINDS = {"Conv1d": 98, "F.conv1d": 1, "ConvTranspose1d": 1}


def _kind_counts(text: str) -> dict:
    return {k: int(n) for n, k in re.findall(r"\b(\d+) (Conv1d|F\.conv1d|ConvTranspose1d)\b", text)}


def test_the_inventory_the_notes_and_the_answer_count_the_same_convs(tmp_path):
    path = tmp_path / "tasnet_like.py"
    path.write_text(TASNET_LIKE)
    ropts = RunOptions(paths=("dense", "mkldnn"), budget_ms=3, min_samples=3, trace=False)
    mopts = model_report.ModelOptions(modes=("nchw", "jit_mkldnn"), mode_budget_ms=5, min_samples=3)
    report = list(model_job.iter_model(f"{path}:make", "1,64", run_opts=ropts, model_opts=mopts,
                                       threads=1))[-1].report
    inv = report.inventory
    assert inv.total == 100
    assert "100 convolutions (98 Conv1d, 1 F.conv1d, 1 ConvTranspose1d)" in inv.summary()
    nchw = report.mode("nchw")
    assert nchw.status == "ok", nchw.error
    # the notes: the 98 timed in model order, the F.conv1d and the ConvTranspose1d in the remainder
    assert "each of the 98 Conv1d with its own tensors" in nchw.predict_note
    assert _kind_counts(nchw.predict_note) == KINDS, nchw.predict_note
    # the answer's "N of M convs faster" names the convs it leaves out, so M and they make the inventory's 100
    jit = report.mode("jit_mkldnn")
    assert jit.status == "ok" and jit.convs_total == 99, (jit.status, jit.error, jit.convs_total)
    if jit.graph_convs is not None:  # the frozen graph's own conv nodes, beside the inventory's count
        assert "the inventory's 100: 98 Conv1d, 1 F.conv1d, 1 ConvTranspose1d" in jit.predict_note, jit.predict_note
    else:  # its eager stand-ins: the chained convs counted out of the 98 conv modules
        assert "of 98 Conv1d on mkldnn_chained" in jit.predict_note, jit.predict_note
    line = model_report.mode_line(jit)
    assert f"{jit.convs_faster} of 99 convs faster (the 1 ConvTranspose1d not timed per layer)" in line


def test_a_mode_whose_convs_run_the_dense_path_gives_no_count_of_faster_convs():
    # autocast_bf16 of a bf16 plan on a model of 1-D convs runs them dense: nothing to compare, so no count;
    # main printed "None of 4 convs faster" (seen on a small Conv1d audio front end, --dtype bf16)
    r = model_report.ModeResult("autocast_bf16", speedup=0.58, conv_path="dense", convs_faster=None, convs_total=4)
    line = model_report.mode_line(r)
    assert "None" not in line and "convs faster" not in line
