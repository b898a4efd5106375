"""Issue #37: every CSV the tool writes opens anywhere. run, sweep, batch, model and merge each write one
(tiny budgets, in process), and each is read back with Python's csv module at its default field limit and
with pandas.read_csv: the writer's columns, the rows it said it wrote, no cell over 32 KiB. main wrote a
model CSV whose `modules` cell (every module path of a layer repeated 1,400 times) broke csv.DictReader,
as a 169,795-character aten_ops cell had before it was collapsed."""

import contextlib
import csv
import re
import textwrap

import pytest

from explorer.cli import main
from explorer.core.model.model_csv import model_columns
from explorer.core.report.results import CSV_COLUMNS
from explorer.core.trace.aten import CELL_LIMIT

CSV_DEFAULT_LIMIT = 131072  # csv.field_size_limit() in a fresh interpreter
FAST = ["--budget-ms", "5", "--threads", "1"]

# 1,400 identical 1x1 convs under long module paths: one layer whose `modules` cell lists all 1,400
LONG_NAMES = textwrap.dedent('''
    import torch, torch.nn as nn

    class Many(nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = nn.ModuleDict({f"block_{i:04d}_" + "x" * 90: nn.Conv2d(1, 1, 1) for i in range(1400)})

        def forward(self, x):
            for conv in self.convs.values():
                x = conv(x)
            return x

    def make():
        return Many().eval()
''')


@pytest.fixture(autouse=True)
def _in_process(monkeypatch, tmp_path):
    monkeypatch.setenv("MKLDNN_EXPLORER_IN_PROCESS", "1")
    monkeypatch.setenv("MKLDNN_EXPLORER_CACHE", str(tmp_path / "cache"))


@contextlib.contextmanager
def _default_field_limit():
    old = csv.field_size_limit(CSV_DEFAULT_LIMIT)  # as a reader who never raised it has it
    try:
        yield
    finally:
        csv.field_size_limit(old)


def _wrote(err: str) -> int:
    got = re.findall(r"wrote (\d+) rows?\b", err)
    assert got, err[-500:]
    return int(got[-1])


def _check_readable(path, columns, rows: int) -> None:
    import pandas as pd

    with _default_field_limit(), open(path, newline="") as f:
        reader = csv.DictReader(f)
        got = list(reader)
        assert tuple(reader.fieldnames) == tuple(columns)
    assert len(got) == rows
    assert all(None not in r and None not in r.values() for r in got)  # no row longer or shorter than the header
    longest = max((len(v.encode()) for r in got for v in r.values()), default=0)
    assert longest <= CELL_LIMIT, f"a cell of {longest} bytes"
    df = pd.read_csv(path, low_memory=False)
    assert df.shape == (rows, len(columns)) and list(df.columns) == list(columns)


def test_every_csv_the_tool_writes_reads_back_with_csv_and_pandas(tmp_path, capsys):
    made = {}

    def write(name, argv, columns):
        out = tmp_path / f"{name}.csv"
        code = main([*argv, "--csv", str(out)])
        err = capsys.readouterr().err
        assert code == 0, err[-800:]
        made[name] = (out, columns, _wrote(err))

    # a grouped conv on the native path, traced: ATen's per-group chain is the long aten_ops cell
    write("run", ["run", "mb1g32ic32ih6oc32kh3ph1", "--paths", "dense,native", *FAST], CSV_COLUMNS)
    write("run2", ["run", "mb1ic8ih6oc8kh3ph1", "--paths", "dense", "--no-trace", *FAST], CSV_COLUMNS)
    write("sweep", ["sweep", "mb1ic8ih6oc8kh3ph1", "--vary", "mb=1,2", "--paths", "dense", "--no-trace", *FAST],
          CSV_COLUMNS)
    batch = tmp_path / "two.txt"
    batch.write_text("mb1ic8ih6oc8kh3ph1n\"first\"\nmb1ic4ih5oc4kh1n\"second\"\n")
    write("batch", ["batch", str(batch), "--paths", "dense", "--no-trace", *FAST], CSV_COLUMNS)
    model = tmp_path / "longnames.py"
    model.write_text(LONG_NAMES)
    write("model", ["model", f"{model}:make", "--input", "1,1,1,1", "--modes", "nchw", "--paths", "dense",
                    "--no-trace", "--mode-budget-ms", "5", *FAST], model_columns())
    write("merge", ["merge", str(made["run"][0]), str(made["run2"][0])], CSV_COLUMNS)
    assert made["merge"][2] == made["run"][2] + made["run2"][2]
    for name, (path, columns, rows) in made.items():
        assert rows > 0, name
        _check_readable(path, columns, rows)
