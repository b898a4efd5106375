"""Compare two result sets: matching on (desc, path, dtype, threads), unmatched rows, speedups A/B, verdicts."""

import math

import pytest

from explorer.core.errors import InputError
from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.compare import compare_csv, compare_rows, row_key
from explorer.core.report.results import Result, write_csv


def row(desc="d1", path="dense", dtype="f32", threads=2, median=1.0, status="ok", name=""):
    return {"desc": desc, "path": path, "dtype": dtype, "threads": threads, "median_ms": median, "status": status,
            "name": name, "gflops": None, "vary": ""}


def test_matching_ratios_and_geomean():
    a = [row(median=2.0), row(path="mkldnn", median=1.0), row(desc="d2", median=4.0), row(dtype="bf16", median=3.0)]
    b = [row(path="mkldnn", median=4.0), row(median=1.0), row(desc="d2", median=4.0), row(desc="d3")]
    c = compare_rows(a, b, "base", "new")
    assert [(m.key, m.speedup) for m in c.matched] == [
        (("d1", "dense", "f32", 2, "FWD"), 2.0), (("d1", "mkldnn", "f32", 2, "FWD"), 0.25),
        (("d2", "dense", "f32", 2, "FWD"), 1.0)]
    assert [m.verdict for m in c.matched] == ["B faster", "B slower", "no difference"]
    assert c.geomean == pytest.approx((2.0 * 0.25 * 1.0) ** (1 / 3))
    assert [r["dtype"] for r in c.only_a] == ["bf16"]
    assert [r["desc"] for r in c.only_b] == ["d3"]


def test_threads_are_part_of_the_key():
    c = compare_rows([row(threads=1)], [row(threads=2)])
    assert not c.matched and len(c.only_a) == 1 and len(c.only_b) == 1
    assert c.geomean is None


def test_duplicates_pair_in_order_and_leftovers_are_unmatched():
    a = [row(median=1.0), row(median=2.0), row(median=3.0)]
    b = [row(median=2.0), row(median=6.0)]
    c = compare_rows(a, b)
    assert [m.speedup for m in c.matched] == [0.5, 1 / 3]
    assert [r["median_ms"] for r in c.only_a] == [3.0] and not c.only_b


def test_rows_that_are_not_ok_match_without_a_ratio():
    c = compare_rows([row(status="unsupported", median=None), row(path="x", median=0.0)],
                     [row(median=1.0), row(path="x", median=1.0)])
    assert [m.speedup for m in c.matched] == [None, None]
    assert c.speedups == [] and c.geomean is None and c.matched[0].verdict == ""


def test_json_structure():
    c = compare_rows([row(median=2.0, name="n1"), row(desc="a_only")], [row(median=3.0)], "A.csv", "B.csv")
    j = c.to_json()
    assert j["a"] == "A.csv" and j["b"] == "B.csv" and j["key"] == ["desc", "path", "dtype", "threads", "direction"]
    assert j["matched"][0]["speedup"] == pytest.approx(2 / 3) and j["matched"][0]["name"] == "n1"
    assert j["geomean"] == pytest.approx(2 / 3) and "above 1: B is faster" in j["speedup"]
    assert [r["desc"] for r in j["only_a"]] == ["a_only"] and j["only_b"] == []


def test_compare_csv_files(tmp_path):
    spec = parse_descriptor("mb1ic8ih8oc8kh3ph1")
    mk = lambda path, ms, threads=1: Result(spec=spec, path=path, threads=threads, median_ms=ms)  # noqa: E731
    write_csv(tmp_path / "a.csv", [mk("dense", 2.0), mk("mkldnn", 1.0), mk("native", 5.0)])
    write_csv(tmp_path / "b.csv", [mk("dense", 1.0), mk("mkldnn", 1.0), mk("dense", 1.0, threads=2)])
    c = compare_csv(tmp_path / "a.csv", tmp_path / "b.csv")
    assert [m.speedup for m in c.matched] == [2.0, 1.0]
    assert math.isclose(c.geomean, math.sqrt(2.0))
    assert [r["path"] for r in c.only_a] == ["native"] and [r["threads"] for r in c.only_b] == [2]
    assert row_key(c.matched[0].a) == (spec.desc, "dense", "f32", 1, "FWD")
    with pytest.raises(InputError, match="no such file"):
        compare_csv(tmp_path / "a.csv", tmp_path / "missing.csv")


def test_a_noisy_row_makes_its_speedup_uncertain_and_keeps_it_out_of_the_geomean():
    def qrow(path, ms, q="ok"):
        return {"desc": "d", "path": path, "dtype": "f32", "threads": 1, "status": "ok", "median_ms": ms, "quality": q}

    a = [qrow("dense", 1.0), qrow("mkldnn", 1.0)]
    b = [qrow("dense", 0.5), qrow("mkldnn", 100.0, "noisy")]
    c = compare_rows(a, b)
    assert [m.uncertain for m in c.matched] == [False, True]
    assert c.speedups == [2.0] and c.geomean == 2.0 and c.uncertain == 1
    assert c.to_json()["matched"][1]["verdict"] == "uncertain"


def test_inside_the_noise_is_no_difference():
    """The issue's case: a 0.4% difference is not "B slower"; a difference inside the rows' IQR neither."""
    c = compare_rows([row(median=1.0)], [row(median=1.004)])
    assert c.matched[0].verdict == "no difference" and c.verdict == "no difference"
    a, b = row(median=1.0), row(median=1.05)
    a["iqr_ms"], b["iqr_ms"] = 0.1, 0.1  # 10% spread: a 5% difference is inside it
    assert compare_rows([a], [b]).matched[0].verdict == "no difference"
    a["iqr_ms"], b["iqr_ms"] = 0.01, 0.01  # 1% spread: 5% is a real difference
    assert compare_rows([a], [b]).matched[0].verdict == "B slower"
    b["quality"] = "noisy"
    assert compare_rows([a], [b]).matched[0].verdict == "uncertain"


def test_an_isa_what_if_compares_the_same_shapes_as_two_cpus(tmp_path, capsys):
    """Two CSVs of the same problems run with --isa avx2 and --isa avx512_core: paired as usual, each side's
    ISA (the isa column, read back from oneDNN) shown beside it."""
    from explorer.cli import main

    spec = parse_descriptor("mb2ic16ih14oc16oh14kh3ph1")
    paths = {}
    for side, isa, ms in (("a", "avx2", 2.0), ("b", "avx512_core", 1.0)):
        paths[side] = tmp_path / f"{side}.csv"
        write_csv(paths[side], [Result(spec=spec, path="mkldnn", threads=1, median_ms=ms, isa=isa)])
    c = compare_csv(paths["a"], paths["b"])
    assert c.isas() == (["avx2"], ["avx512_core"]) and c.matched[0].speedup == 2.0
    j = c.to_json()["matched"][0]
    assert (j["a_isa"], j["b_isa"]) == ("avx2", "avx512_core")
    assert main(["compare", str(paths["a"]), str(paths["b"])]) == 0
    assert "isa: A avx2; B avx512_core" in capsys.readouterr().out


def test_a_backward_row_is_never_matched_with_a_forward_one():
    """Issue 32: BWD_D and the forward of one descriptor are two problems; a CSV without the column is forward."""
    fwd = {"desc": "mb2ic16ih14oc16kh3ph1", "path": "dense", "dtype": "f32", "threads": 1, "status": "ok",
           "median_ms": 1.0}
    old = {k: v for k, v in fwd.items()}  # no direction column: written before it
    c = compare_rows([{**fwd, "direction": "BWD_D"}, {**fwd, "direction": "FWD_I"}], [old])
    assert [m.a["direction"] for m in c.matched] == ["FWD_I"] and [r["direction"] for r in c.only_a] == ["BWD_D"]
