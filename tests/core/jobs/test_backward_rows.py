"""Issue #32, directions: a BWD_* run's rows say their direction in every place a row goes (the CSV, a session
file), carry benchdnn's op count, and their trace names the backward primitive; older files open as forward."""

import csv

import pytest

from explorer.core.jobs.options import RunOptions
from explorer.core.jobs.run import run
from explorer.core.problem.batch import parse_batch
from explorer.core.problem.spec import parse_descriptor
from explorer.core.problem.sweep_plan import plan_sweep
from explorer.core.report.results import read_csv, write_csv
from explorer.core.report.roofline import spec_from_row
from explorer.core.session.store import result_from_dict, result_to_dict, spec_from_dict, spec_to_dict

DESC = "mb2ic16ih14oc16oh14kh3ph1"


@pytest.fixture(scope="module")
def bwd_d_rows():
    return run(parse_descriptor(f"--dir=BWD_D {DESC}"), RunOptions(paths=("dense", "channels_last", "mkldnn"),
                                                                   budget_ms=10))


def test_a_bwd_d_run_gives_bwd_d_rows_whose_trace_names_backward_data(bwd_d_rows):
    dense, cl, mkldnn = bwd_d_rows
    for r in (dense, cl):
        assert r.status == "ok" and r.spec.direction == "BWD_D" and r.row()["direction"] == "BWD_D"
        convs = [p for p in r.trace if p.op == "convolution"]
        assert convs and all(p.prop == "backward_data" for p in convs), [p.raw for p in convs]
        assert "aten::convolution_backward" in r.aten_ops and "aten::conv2d" not in r.aten_ops
        # benchdnn's count_ops does not look at --dir: the forward's count, and GFLOP/s on it
        assert r.row()["ops"] == str(parse_descriptor(DESC).ops)
        assert r.gflops == pytest.approx(r.spec.ops / (r.median_ms / 1e3) / 1e9)
        assert r.max_abs_err is not None and r.max_abs_err < 1e-3
    assert mkldnn.status == "unsupported" and "MKLDNN tensor during training" in mkldnn.error


def test_the_direction_column_round_trips_and_old_csvs_open_as_forward(bwd_d_rows, tmp_path):
    out = tmp_path / "r.csv"
    write_csv(out, bwd_d_rows)
    rows = read_csv(out)
    assert [r["direction"] for r in rows] == ["BWD_D"] * 3
    assert spec_from_row(rows[0]).normalized() == bwd_d_rows[0].spec
    # a CSV written before the column: its rows are forward ones (FWD_B with a bias, FWD_D without)
    old = tmp_path / "old.csv"
    with open(out, newline="") as f:
        table = list(csv.DictReader(f))
    cols = [c for c in table[0] if c != "direction"]
    with open(old, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        w.writerows([{**table[0], "bias": "1"}, {**table[1], "bias": "0"}])
    a, b = read_csv(old)
    assert (spec_from_row(a).direction, spec_from_row(b).direction) == ("FWD_B", "FWD_D")


def test_session_files_keep_the_direction_and_old_ones_open_as_forward(bwd_d_rows):
    spec = parse_descriptor(f"--dir=BWD_WB {DESC}")
    assert spec_from_dict(spec_to_dict(spec)) == spec
    assert result_from_dict(result_to_dict(bwd_d_rows[0]), "results[0]").spec.direction == "BWD_D"
    assert spec_from_dict({"desc": DESC, "dtype": "f32", "bias": True}).direction == "FWD_B"  # no key: forward
    assert spec_from_dict({"desc": DESC, "dtype": "f32", "bias": False}).direction == "FWD_D"


def test_vary_dir_and_batch_lines_make_backward_problems():
    pts = plan_sweep(DESC, ["dir=FWD_I,BWD_D,BWD_W,BWD_WB"])
    assert [(p.spec.direction, p.spec.bias) for p in pts] == [("FWD_I", False), ("BWD_D", False), ("BWD_W", False),
                                                            ("BWD_WB", True)]  # benchdnn's bias of each --dir
    assert [p.label for p in pts] == ["dir=FWD_I", "dir=BWD_D", "dir=BWD_W", "dir=BWD_WB"]
    b = parse_batch(f"--dir=BWD_D\n{DESC}\n--dir=BWD_W,FWD_I {DESC}\n")
    assert [p.spec.direction for p in b.points] == ["BWD_D", "BWD_W", "FWD_I"]


def test_a_verbose_line_of_a_backward_primitive_is_that_direction():
    line = ("onednn_verbose,v1,primitive,exec,cpu,convolution,jit:avx2,backward_weights,src:f32:a:blocked:aBcd8b::f0 "
            "wei:f32:a:blocked:ABcd8b8a::f0 bia:f32:a:blocked:a::f0 dst:f32:a:blocked:aBcd8b::f0,attr-scratchpad:user,"
            "alg:convolution_direct,mb2_ic16oc16_ih14oh14kh3sh1dh0ph1_iw14ow14kw3sw1dw0pw1,10.5")
    assert parse_descriptor(line).direction == "BWD_WB"
    assert parse_descriptor(line.replace("backward_weights", "backward_data")).direction == "BWD_D"
