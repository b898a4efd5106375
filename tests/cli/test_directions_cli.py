"""Issue #32, directions from the command line: `run --dir=BWD_*` rows (JSON, CSV) say their direction and were
timed as that backward; `sweep --vary dir=` runs each direction; a word that is no direction exits 2."""

import json

from explorer.cli import main
from explorer.core.report.results import read_csv

DESC = "mb2ic16ih14oc16oh14kh3ph1"


def test_run_bwd_w_json_rows_are_bwd_w_with_benchdnns_op_count(capsys):
    assert main(["run", f"--dir=BWD_W {DESC}", "--paths", "dense,channels_last", "--budget-ms", "10", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    assert [r["direction"] for r in rows] == ["BWD_W", "BWD_W"] and all(r["status"] == "ok" for r in rows)
    assert all("aten::convolution_backward" in r["aten_ops"] for r in rows)
    assert all(int(r["bias"]) == 0 for r in rows)  # benchdnn's BWD_W: no bias


def test_sweep_over_directions_writes_one_row_per_direction(tmp_path, capsys):
    out = tmp_path / "s.csv"
    assert main(["sweep", DESC, "--vary", "dir=FWD_I,BWD_D,BWD_WB", "--paths", "dense", "--budget-ms", "10",
                 "--csv", str(out)]) == 0
    rows = read_csv(out)
    assert [(r["direction"], r["vary"]) for r in rows] == [("FWD_I", "dir=FWD_I"), ("BWD_D", "dir=BWD_D"),
                                                           ("BWD_WB", "dir=BWD_WB")]
    assert "aten::convolution_backward" not in rows[0]["aten_ops"]
    assert all("aten::convolution_backward" in r["aten_ops"] for r in rows[1:])


def test_a_word_that_is_no_direction_exits_2_with_one_sentence(capsys):
    assert main(["sweep", DESC, "--vary", "dir=FWD_I,BACK"]) == 2  # refused before any work
    err = capsys.readouterr().err
    assert "'BACK' is not a benchdnn direction" in err and len(err.strip().splitlines()) == 1
    assert main(["run", f"--dir=BWD_WB {DESC}", "--no-bias", "--list"]) == 2
    err = capsys.readouterr().err
    assert "BWD_WB" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_list_names_a_backward_direction(capsys):
    assert main(["run", f"--dir=BWD_W {DESC}", "--list"]) == 0
    assert "BWD_W (the backward alone)" in capsys.readouterr().out
    assert main(["run", f"--dir=BWD_W {DESC}", "--list", "--json"]) == 0
    assert '"direction": "BWD_W"' in capsys.readouterr().out
