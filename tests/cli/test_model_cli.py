"""`mkldnn-explorer model`: a user's module from a temporary folder, bad MODEL values, the CSV."""

import sys
import textwrap

import pytest

from explorer.cli import main

FAST = ["--paths", "dense,mkldnn", "--budget-ms", "5", "--mode-budget-ms", "10", "--no-trace", "--threads", "1"]

NET = """
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        x = self.conv2(self.conv1(x).relu()).relu()
        return self.head(nn.functional.adaptive_avg_pool2d(x, 1).flatten(1))

def make():
    return Net()

class MeanNet(Net):
    def forward(self, x):
        x = self.conv2(self.conv1(x).relu()).relu()
        return self.head(x.mean((2, 3)))  # mean refuses MKLDNN tensors

def make_mean():
    return MeanNet()

class NoConv(nn.Module):
    def forward(self, x):
        return x * 2

def no_conv():
    return NoConv()

def not_a_module():
    return 42

class Boom(Net):
    def forward(self, x):
        raise ValueError("the user's forward failed on purpose")

def boom():
    return Boom()

number = 7
"""


@pytest.fixture
def pkg(tmp_path, monkeypatch, request):
    """A small user package in a temporary folder, made the current folder (a unique name per test)."""
    name = f"mypkg_{request.node.name.split('[')[0][-20:]}_{abs(hash(request.node.name)) % 10**6}"
    d = tmp_path / name
    d.mkdir()
    (d / "__init__.py").write_text("")
    (d / "net.py").write_text(textwrap.dedent(NET))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    if "" in sys.path:
        sys.path.remove("")
    yield name
    for mod in [m for m in sys.modules if m.startswith(name)]:
        del sys.modules[mod]


def test_a_user_module_from_the_current_folder_runs(pkg, capsys, tmp_path):
    import pandas as pd

    out_csv = tmp_path / "m.csv"
    code = main(["model", f"{pkg}.net:make", "--input", "1,3,32,32", "--csv", str(out_csv), *FAST])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "2 convolutions (2 Conv2d), 2 distinct" in out.err
    assert "answer: " in out.out and "nchw" in out.out and "jit_mkldnn" in out.out
    df = pd.read_csv(out_csv)
    assert sorted(df["kind"].unique()) == ["layer", "layer_path", "mode"]
    modes = df[df.kind == "mode"].set_index("mode")
    assert list(modes.index) == ["nchw", "channels_last", "to_mkldnn", "jit_mkldnn"]
    assert (modes["measured_ms"] > 0).all() and set(modes["status"]) == {"ok"}
    assert {"predicted_ms", "speedup", "quality", "quality_reason", "runq_wait_pct", "error"} <= set(df.columns)
    layers = df[df.kind == "layer"]
    assert list(layers["modules"]) == ["conv1", "conv2"]
    assert list(layers["desc"]) == ["mb1ic3ih32oc8oh32kh3ph1", "mb1ic8ih32oc8oh32kh3ph1"]
    lp = df[df.kind == "layer_path"]
    assert len(lp) == 6  # 2 layers x 2 paths, and each layer's mkldnn_chained row (jit_mkldnn's per-layer time)
    assert (lp["path"] == "mkldnn_chained").sum() == 2
    assert "mkldnn_chained ms" in out.out  # the layer table shows it beside the paths


def test_a_mode_the_model_cannot_run_is_a_row_with_the_op_named(pkg, capsys, tmp_path):
    import pandas as pd

    out_csv = tmp_path / "m.csv"
    code = main(["model", f"{pkg}.net:make_mean", "--input", "1,3,16,16", "--modes", "nchw,to_mkldnn",
                 "--csv", str(out_csv), *FAST])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "USDT" not in out.err  # the profiler's C++ start/stop lines are kept off the terminal
    row = pd.read_csv(out_csv).set_index("mode").loc["to_mkldnn"]
    assert row["status"] == "unsupported" and "aten.mean.dim" in row["error"]
    assert "to_mkldnn(model): cannot run" in out.out


@pytest.mark.parametrize("model, extra, words", [
    ("{pkg}.nothere:make", [], "no module named"),
    ("{pkg}.net:missing", [], "has no attribute"),
    ("{pkg}.net:number", [], "not a callable"),
    ("{pkg}.net:not_a_module", [], "not a torch.nn.Module"),
    ("{pkg}.net:no_conv", [], "has no convolution"),
    ("{pkg}.net:make", ["--input", "1,3,32"], "raised inside forward"),  # the model's own error, not a rank check
    ("{pkg}.net:make", ["--input", "1,3,x,2"], "--input"),
    ("{pkg}.net:boom", [], "raised inside forward: ValueError: the user's forward failed on purpose"),
    ("nosuchnet", [], "unknown model"),
    ("tiny", ["--modes", "nchw,fast"], "unknown mode"),
])
def test_bad_model_values_exit_2_with_one_sentence(pkg, capsys, model, extra, words):
    code = main(["model", model.format(pkg=pkg), "--input", "1,3,16,16", *extra, *FAST]
                if "--input" not in extra else ["model", model.format(pkg=pkg), *extra, *FAST])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and words in err[0], err
    assert "Traceback" not in err[0]


def test_an_existing_csv_is_not_overwritten(tmp_path, capsys):
    f = tmp_path / "m.csv"
    f.write_text("keep")
    assert main(["model", "tiny", "--csv", str(f), *FAST]) == 2
    assert f.read_text() == "keep"


def test_a_prediction_on_a_noisy_loop_is_marked_in_the_modes_table():
    from explorer.cli.model import format_modes
    from explorer.core.model.report import ModeResult

    class Report:
        modes = [ModeResult("nchw", measured_ms=10.0, predicted_ms=9.0, conv_ms=7.0, remainder_ms=2.0, quality="ok",
                            conv_seq_quality="ok", remainder_quality="ok"),
                 ModeResult("channels_last", measured_ms=10.0, predicted_ms=3.4, conv_ms=1.4, remainder_ms=2.0,
                            quality="ok", conv_seq_quality="ok", remainder_quality="noisy")]

    lines = format_modes(Report()).splitlines()
    assert lines[0].split()[:7] == ["mode", "status", "measured", "ms", "predicted", "ms", "pred/meas"]
    clean, noisy = lines[1].split(), lines[2].split()  # mode, status, measured, predicted, pred/meas, ...
    assert clean[3:5] == ["9", "0.90"] and noisy[3:5] == ["~3.4", "~0.34"], lines[:3]


def test_a_model_file_given_by_its_path_runs_with_its_own_imports(tmp_path, monkeypatch, capsys):
    """main said "no module named '/.../models'" for `models.py:make`: a path is what a user has at hand."""
    d = tmp_path / "elsewhere"
    d.mkdir()
    stem = f"usermodels_{abs(hash(str(tmp_path))) % 10**6}"
    (d / f"{stem}_blocks.py").write_text("from torch import nn\n\ndef block(a, b):\n    return nn.Conv2d(a, b, 3, padding=1)\n")
    (d / f"{stem}.py").write_text(textwrap.dedent(f"""
        from torch import nn
        from {stem}_blocks import block  # a neighbour of the file, not of the current folder

        def make():
            return nn.Sequential(block(3, 8), nn.ReLU(), block(8, 8))
    """))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    try:
        code = main(["model", f"elsewhere/{stem}.py:make", "--input", "1,3,16,16", "--modes", "nchw", *FAST])
        out = capsys.readouterr()
        assert code == 0, out.err
        assert "2 convolutions (2 Conv2d)" in out.err and "answer: " in out.out
    finally:
        for m in (stem, f"{stem}_blocks"):
            sys.modules.pop(m, None)


@pytest.mark.parametrize("body, words", [
    (None, "no such file"),
    ("import sys\nsys.exit(3)\n", "called sys.exit(3); guard its script part with if __name__ == '__main__':"),
    ("raise ImportError('needs timm')\n", "failed: ImportError: needs timm"),
])
def test_a_bad_model_file_exits_2_with_one_sentence(tmp_path, monkeypatch, capsys, body, words):
    stem = f"badmodels_{abs(hash(str(tmp_path))) % 10**6}"
    if body is not None:
        (tmp_path / f"{stem}.py").write_text(body)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    try:
        code = main(["model", f"{stem}.py:make", "--input", "1,3,16,16", *FAST])
    finally:
        sys.modules.pop(stem, None)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and words in err[0], err
