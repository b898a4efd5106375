"""`model` prints the subnormal finding under its answer and writes it in the CSV's nchw note (issue #36)."""

import csv

from explorer.cli import main
from tests.core.model.test_model_subnormal import UNDERFLOW

FAST = ["--paths", "dense", "--budget-ms", "3", "--mode-budget-ms", "5", "--no-trace", "--threads", "1",
        "--modes", "nchw"]


def test_the_model_command_prints_the_finding_under_the_answer_and_writes_it_in_the_csv(tmp_path, capsys):
    path = tmp_path / "underflow.py"
    path.write_text(UNDERFLOW)
    out_csv = tmp_path / "m.csv"
    assert main(["model", f"{path}:make", "--input", "1,3,16,16", "--csv", str(out_csv), *FAST]) == 0
    lines = capsys.readouterr().out.splitlines()
    answer = next(i for i, line in enumerate(lines) if line.startswith("answer: "))
    assert lines[answer + 1].startswith("finding: 1 conv is fed subnormal (denormal) inputs (tail;")
    rows = list(csv.DictReader(out_csv.open()))
    nchw = next(r for r in rows if r["kind"] == "mode" and r["mode"] == "nchw")
    assert lines[answer + 1] in nchw["note"]
