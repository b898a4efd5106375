"""Issue #36 item 1: a BatchNorm2d subclass with children (timm's BatchNormAct2d, 'drop' and 'act') made
to_mkldnn refuse the whole model on main ("tried to replace existing module 'drop'", then a blocker
sentence). The to_mkldnn mode now converts it as a user would by hand (the norm as a plain BatchNorm, the
children kept after it), says so in its note, and predicts; a subclass whose forward is something else is
refused with its path, its class and that reason. Small modules mimic timm's; no timm needed."""

import pytest
import torch
from torch import nn

from explorer.core.model import modes as model_modes
from explorer.core.model import report as model_report

# timm's BatchNormAct2d in small, and a residual block that adds into the norm's output in place (timm's
# Bottleneck: x += shortcut), which must not change what the by-hand check compares
NET_SOURCE = '''
import torch
from torch import nn

class BNAct(nn.BatchNorm2d):
    def __init__(self, c):
        super().__init__(c)
        self.drop = nn.Identity()
        self.act = nn.ReLU()
    def forward(self, x):
        return self.act(self.drop(super().forward(x)))

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn1 = BNAct(8)
        self.conv2 = nn.Conv2d(8, 8, 1, bias=False)
        self.bn2 = BNAct(8)
    def forward(self, x):
        y = self.bn2(self.conv2(self.bn1(self.conv1(x))))
        y += x
        return y

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.block = Block()
    def forward(self, x):
        return self.block(self.stem(x))

def make():
    torch.manual_seed(0)
    net = Net().eval()
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):  # statistics that are not the identity, as a trained net's
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.2, 0.2)
    return net
'''


@pytest.fixture
def bnact_pkg(tmp_path, monkeypatch):
    pkg = tmp_path / "bnactpkg_t"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "net.py").write_text(NET_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    import importlib

    return importlib.import_module("bnactpkg_t.net")


def test_to_mkldnn_converts_a_batchnorm_subclass_with_children_by_hand_says_so_and_predicts(bnact_pkg):
    from explorer.core.jobs.options import RunOptions
    from explorer.core.model import job as model_job

    ropts = RunOptions(paths=("dense", "channels_last", "mkldnn"), budget_ms=5, min_samples=3, trace=False)
    mopts = model_report.ModelOptions(modes=("nchw", "to_mkldnn"), mode_budget_ms=10, min_samples=3)
    events = list(model_job.iter_model("bnactpkg_t.net:make", "1,3,16,16", run_opts=ropts, model_opts=mopts,
                                       threads=1))
    r = events[-1].report.mode("to_mkldnn")
    assert r.status == "ok", r.error  # main: unsupported, "bn1 (BNAct) is an nn.BatchNorm2d subclass ..."
    assert r.rel_err < 1e-4  # the by-hand model computes what the model does
    assert "converted by hand: 2 BNAct (e.g. block.bn1, 1 more alike)" in r.mode_note
    assert "'drop', 'act'" in r.mode_note
    assert r.predicted_ms is not None and r.predicted_ms > 0 and r.remainder_ms is not None
    assert "converted by hand: 2 BNAct" in model_report.mode_line(r)  # the line the user reads


def test_the_by_hand_model_keeps_the_children_and_the_original_model_is_untouched(bnact_pkg):
    net = bnact_pkg.make()
    x = torch.randn(2, 3, 16, 16)
    src, hand = model_modes.mkldnn_ready_source(net, None, model_modes.as_input(x))
    assert [p for p, _, _ in hand.converted] == ["block.bn1", "block.bn2"] and not hand.refused
    assert isinstance(src.block.bn1.norm, nn.BatchNorm2d) and type(src.block.bn1.norm) is nn.BatchNorm2d
    assert isinstance(src.block.bn1.act, nn.ReLU) and isinstance(src.block.bn1.drop, nn.Identity)
    assert type(net.block.bn1).__name__ == "BNAct"  # the user's model as it was
    with torch.no_grad():
        torch.testing.assert_close(src(x), net(x))
        mk = torch.utils.mkldnn.to_mkldnn(src)  # main: RuntimeError, tried to replace existing module 'drop'
        torch.testing.assert_close(mk(x.to_mkldnn()).to_dense(), net(x), rtol=1e-4, atol=1e-4)


class ActFirst(nn.BatchNorm2d):
    """A subclass whose forward is not its norm then its children: by hand as one would be a wrong model."""

    def __init__(self, c):
        super().__init__(c)
        self.act = nn.ReLU()

    def forward(self, x):
        return super().forward(self.act(x)) * 2


class Holder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = ActFirst(8)

    def forward(self, x):
        return self.bn(self.conv(x))


def test_a_subclass_whose_forward_is_not_norm_then_children_is_refused_with_path_class_and_why():
    net = Holder().eval()
    x = torch.randn(1, 3, 8, 8)
    with torch.no_grad():
        ref = net(x)
    r = model_modes.run_mode("to_mkldnn", net, x, "f32", ref,
                             model_report.ModelOptions(mode_budget_ms=5, predict=False), lambda: False)
    assert r.status == "unsupported"
    assert r.error == ("to_mkldnn: bn (ActFirst) is an nn.BatchNorm2d subclass with child modules 'act' whose "
                       "forward is not its norm followed by those children in order, so it cannot be converted "
                       "by hand as one")
