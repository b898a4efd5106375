"""Issue 32: `run --attr-post-ops=...` times the conv with its post-ops: the fused route and the eager path side
by side, the post_ops column in the CSV and --json, and a post-op it cannot run refused (exit 2, one sentence)."""

import csv
import json

from explorer.cli import main

DESC = "mb1ic8ih8oc8oh8kh3ph1"


def test_sum_relu_rows_show_the_fused_route_beside_the_eager_path(tmp_path, capsys):
    out = tmp_path / "rows.csv"
    argv = ["run", f"--attr-post-ops=sum+relu {DESC}", "--paths", "dense,mkldnn_prepacked", "--budget-ms", "5",
            "--csv", str(out)]
    assert main(argv) == 0
    cap = capsys.readouterr()
    assert "post_ops=sum+relu" in cap.err
    table = cap.out + cap.err
    assert "sum+relu (fused in one call)" in table and "sum+relu (eager, after the conv)" in table
    rows = list(csv.DictReader(out.open()))
    assert [(r["path"], r["post_ops"], r["status"]) for r in rows] == [
        ("dense", "sum+relu", "ok"), ("mkldnn_prepacked", "sum+relu", "ok")]
    assert all(float(r["max_abs_err"]) < 1e-4 for r in rows)  # against the f32 reference with the ops applied


def test_json_rows_carry_the_post_ops(capsys):
    assert main(["run", f"--attr-post-ops=gelu_erf {DESC}", "--paths", "dense", "--budget-ms", "5", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    assert [r["post_ops"] for r in rows] == ["gelu_erf"]


def test_a_binary_post_op_is_refused_not_dropped(capsys):
    assert main(["run", f"--attr-post-ops=sum+mul:f32 {DESC}", "--paths", "dense"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--attr-post-ops=sum+mul:f32" in err and "binary" in err and len(err.splitlines()) == 1
