"""`run --paths ...routes`: a row per path with aten_ops, its trace columns and the median split."""

import csv

from explorer.cli import main

TINY = "mb1ic8ih8oc8oh8kh3ph1"


def test_run_with_routes_writes_aten_ops_and_split(tmp_path, capsys):
    out = tmp_path / "r.csv"
    paths = ["dense", "mkldnn", "jit_frozen", "mkldnn_prepacked"]
    assert main(["run", TINY, "--paths", ",".join(paths), "--budget-ms", "5", "--csv", str(out)]) == 0
    table = capsys.readouterr().out
    assert "oneDNN/reorder/rest ms" in table.splitlines()[0]
    rows = list(csv.DictReader(out.open()))
    assert [r["path"] for r in rows] == paths
    for r in rows:
        assert r["status"] == "ok", r["error"]
        assert r["aten_ops"], r["path"]
        parts = [float(r[c]) for c in ("onednn_ms", "reorder_ms", "other_ms")]
        assert abs(sum(parts) - float(r["median_ms"])) <= 1e-5 * float(r["median_ms"]) + 1e-9
    by = {r["path"]: r for r in rows}
    assert by["mkldnn_prepacked"]["reorder_count"] == "0"
    # Whether oneDNN reorders on the mkldnn path depends on the CPU (an AVX2 kernel wants other weight blocks
    # than the module was converted to; an AVX-512 one does not): the count and the time must agree.
    n = int(by["mkldnn"]["reorder_count"])
    assert (n > 0) == (float(by["mkldnn"]["reorder_ms"]) > 0)
    assert by["jit_frozen"]["compile_ms"] and "prim::mkldnn_convolution" in by["jit_frozen"]["route_note"]
    assert by["mkldnn_prepacked"]["aten_ops"] == "mkldnn::_convolution_pointwise"
