"""sweep, batch and compare end to end through explorer.cli.main: exit codes, tables, CSV rows."""

import json

import pytest

from explorer.cli import main
from explorer.core.jobs import run as runner_mod
from explorer.core.report.results import read_csv

TINY = "mb1ic8ih6oc8kh3ph1"
FAST = ["--paths", "dense", "--budget-ms", "5", "--no-trace"]


def test_sweep_divisors_table_and_csv(tmp_path, capsys):
    out = tmp_path / "s.csv"
    assert main(["sweep", TINY, "--vary", "g=divisors", "--paths", "dense,mkldnn", "--budget-ms", "5",
                 "--no-trace", "--csv", str(out)]) == 0
    rows = read_csv(out)
    assert [(r["vary"], r["path"], r["status"]) for r in rows] == [
        (f"g={g}", p, "ok") for g in (1, 2, 4, 8) for p in ("dense", "mkldnn")]
    assert [r["g"] for r in rows] == [1, 1, 2, 2, 4, 4, 8, 8]
    cap = capsys.readouterr()
    table = cap.out.splitlines()
    assert table[0].split() == ["g", "path", "status", "median", "ms", "GFLOP/s", "vs", "dense"]
    # On a busy machine a row may be noisy: then its status column says so and its ratio is marked uncertain.
    rows_out = [ln for ln in table[1:] if not ln.startswith("warning:")]
    assert len(rows_out) == 8 and rows_out[0].split()[:2] == ["1", "dense"]
    assert rows_out[0].split()[2] in ("ok", "noisy") and rows_out[0].split()[-1] in ("1.00x", "~1.00x?")
    assert "[4/4] g=8" in cap.err and "left)" in cap.err and "wrote 8 rows" in cap.err


def test_two_field_grid_with_skipped_points(tmp_path, capsys):
    out = tmp_path / "grid.csv"
    assert main(["sweep", TINY, "--vary", "g=1,3", "--vary", "ih=4:8:+4", *FAST, "--csv", str(out)]) == 0
    rows = read_csv(out)
    assert [(r["vary"], r["status"]) for r in rows] == [
        ("g=1;ih=4", "ok"), ("g=1;ih=8", "ok"), ("g=3;ih=4", "skipped"), ("g=3;ih=8", "skipped")]
    assert [(r["ih"], r["oh"], r["iw"]) for r in rows[:2]] == [(4, 4, 4), (8, 8, 8)]  # oh follows ih
    assert rows[2]["error"] == "g=3 does not divide ic=8: groups must divide the input channels."
    cap = capsys.readouterr()
    assert "4 points (2 invalid, recorded as skipped)" in cap.err
    lines = cap.out.splitlines()
    assert lines[0].split()[:3] == ["g", "ih", "path"]
    assert any(ln.split()[:4] == ["3", "4", "-", "skipped"] and "does not divide" in ln for ln in lines)


def test_sweep_dtype_threads_and_json(capsys):
    assert main(["sweep", TINY, "--vary", "dtype=f32,bf16", "--vary", "threads=1", *FAST, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    assert [(r["vary"], r["dtype"], r["threads"]) for r in rows] == [
        ("dtype=f32;threads=1", "f32", "1"), ("dtype=bf16;threads=1", "bf16", "1")]


@pytest.mark.parametrize("argv, words", [
    (["sweep", TINY], "needs --vary"),
    (["sweep", TINY, "--vary", "gg=1"], "cannot vary 'gg'"),
    (["sweep", TINY, "--vary", "mb=8:1"], "backwards"),
    (["sweep", TINY, "--vary", "mb=1:8:x1"], "never grows"),
    (["sweep", TINY, "--vary", "mb=1:8:+0"], "zero"),
    (["sweep", TINY, "--vary", "mb="], "empty"),
    (["sweep", TINY, "--vary", "mb=one"], "not a whole number"),
    (["sweep", TINY, "--vary", "mb=1:20000"], "limit"),
    (["sweep", TINY, "--vary", "g=1", "--vary", "g=2"], "twice"),
    (["sweep", TINY + "g3", "--vary", "mb=1"], "does not divide"),
    (["sweep", TINY, "--vary", "mb=1", "--paths", "bogus"], "unknown path"),
    (["sweep", TINY, "--vary", "mb=1", "--csv", "/nonexistent/dir/x.csv"], "does not exist"),
    (["batch", "no_such_batch"], "no shipped batch"),
    (["batch", "quick", "--mb", "0"], "positive whole number"),
    (["compare", "/nonexistent/a.csv", "/nonexistent/b.csv"], "no such file"),
])
def test_bad_input_exits_2_with_one_line(argv, words, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err


def test_existing_csv_needs_force(tmp_path, capsys):
    out = tmp_path / "x.csv"
    out.write_text("keep me")
    assert main(["sweep", TINY, "--vary", "mb=1", *FAST, "--csv", str(out)]) == 2
    assert out.read_text() == "keep me"
    assert main(["sweep", TINY, "--vary", "mb=1", *FAST, "--csv", str(out), "--force"]) == 0
    assert len(read_csv(out)) == 1


def test_ctrl_c_keeps_every_finished_row(tmp_path, monkeypatch, capsys):
    real = runner_mod.iter_run
    calls = []

    def interrupting(spec, *a, **k):
        calls.append(spec)
        if len(calls) == 3:
            raise KeyboardInterrupt
        yield from real(spec, *a, **k)

    monkeypatch.setattr(runner_mod, "iter_run", interrupting)
    monkeypatch.setenv("MKLDNN_EXPLORER_IN_PROCESS", "1")  # the patched core runs in this process
    out = tmp_path / "part.csv"
    assert main(["sweep", TINY, "--vary", "mb=1:5", *FAST, "--csv", str(out)]) == 130
    assert [r["vary"] for r in read_csv(out)] == ["mb=1", "mb=2"]
    cap = capsys.readouterr()
    assert "interrupted" in cap.err and "wrote 2 rows" in cap.err
    table = [ln for ln in cap.out.splitlines() if not ln.startswith("warning:")]  # a busy machine adds one
    assert len(table) == 3  # the table of finished rows is still printed


def test_batch_file_accounts_for_every_line(tmp_path, capsys):
    f = tmp_path / "b.txt"
    f.write_text('# mine\n--dir=FWD_D\nmb1ic8ih6oc8kh3ph1n"one"  # c\nbogus42\n'
                 '--stag=acdb\ng2ic8ih6oc8kh1n"two"\n--reset\nic8ih6oc8oh5kh3ph1\n')
    out = tmp_path / "b.csv"
    # bad and refused lines are bad input: exit 2 naming file and line, after every honoured line ran and was kept
    assert main(["batch", str(f), "--mb", "1", *FAST, "--csv", str(out)]) == 2
    rows = read_csv(out)
    assert [(r["name"], r["status"]) for r in rows] == [("one", "ok"), (None, "skipped"), ("two", "refused"),
                                                        (None, "ok")]
    assert rows[1]["desc"] == "bogus42" and rows[1]["error"].startswith("line 4: ")
    # the refused problem is a row naming the word and the line that set it; nothing of it was timed
    assert rows[2]["error"].startswith("line 6: --stag=acdb (set on line 5): ") and not rows[2]["median_ms"]
    # benchdnn takes oh=5 and derives the bottom pad 0 (this line used to be refused)
    assert rows[3]["oh"] == 5 and rows[3]["ph"] == 1 and rows[3]["bias"] == 1
    assert rows[0]["mb"] == 1 and rows[0]["bias"] == 0
    cap = capsys.readouterr()
    err = cap.err.splitlines()
    assert f"{f} line 4: " in err[-1] and err[-2].startswith(f"mkldnn-explorer batch: {f} line 6: --stag=acdb")
    assert "4 problems (1 skipped: they did not parse or cannot run; 1 refused" in cap.err
    # listed before any work and again in the closing lines
    listed = [i for i, ln in enumerate(err) if ln.startswith(f"  refused 1 problem ({f}:6): --stag=acdb")]
    first_run = next(i for i, ln in enumerate(err) if ln.startswith("[1/"))
    assert len(listed) == 2 and listed[0] < first_run < listed[1]
    assert "two" in cap.out and "line 4" not in cap.out.splitlines()[0]


def test_shipped_batch_by_bare_name(capsys):
    assert main(["batch", "quick", "--mb", "1", *FAST, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    assert len(rows) == 7 and all(r["status"] == "ok" and r["name"].startswith("quick:") for r in rows)


def test_compare_table_and_json(tmp_path, capsys):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    assert main(["sweep", TINY, "--vary", "mb=1,2", *FAST, "--csv", str(a)]) == 0
    assert main(["sweep", TINY, "--vary", "mb=2,3", *FAST, "--csv", str(b)]) == 0
    capsys.readouterr()
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert main(["compare", str(a), str(b), "--json"]) == 0
    j = json.loads(capsys.readouterr().out)
    assert len(j["matched"]) == 1 and j["matched"][0]["desc"] == "mb2ic8ih6oc8oh6kh3ph1"
    if j["matched"][0]["verdict"] == "uncertain":  # this machine was busy: the pair is shown, never counted
        assert j["geomean"] is None and "1 matched rows, 0 trusted" in out and "noisy row" in out
    else:
        assert "1 matched rows, 1 trusted" in out and "geometric mean speedup A/B = " in out
        assert j["geomean"] == pytest.approx(j["matched"][0]["speedup"])
    assert "only in A" in out and "only in B" in out and "mb1ic8" in out and "mb3ic8" in out
    assert len(j["only_a"]) == 1 and len(j["only_b"]) == 1


def test_compare_refuses_a_foreign_csv(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("x,y\n1,2\n")
    assert main(["compare", str(bad), str(bad)]) == 2
    assert "not an MKLDNN Explorer results header" in capsys.readouterr().err


def test_batch_list_runs_nothing_and_gives_benchdnns_problem(tmp_path, capsys):
    f = tmp_path / "l.txt"
    f.write_text('# x\ng1ic16oc16_ih5oh8kh3ph3_n"gemm"\n--mb=1\nmb1ic2048ih7iw7_oc512_kh1kw1_sh2sw2_ph3pw3\n'
                 'ic3oc17_iw8ow4kw3pw1sw2\nzz\n--stag=aBx16b\nic8ih8oc8kh1\n')
    assert main(["batch", str(f), "--list"]) == 2  # a bad line: exit 2, file and line named
    cap = capsys.readouterr()
    lines = cap.out.splitlines()
    assert lines[0].startswith("line 2  mb2ic16ih5oc16oh8kh3ph3") and "pad 3x3 right 2x2  out 8x8  ops 230,400" in lines[0]
    assert lines[1].startswith("line 4  mb1ic2048ih7oc512oh7kh1sh2ph3") and "ops 102,760,448 (exact 18,874,368" in lines[1]
    assert lines[2].startswith("line 5  mb1ic3iw8oc17ow4kw3sw2pw1  1-D") and "pad 1 right 0  out 4" in lines[2]
    assert lines[3].startswith("line 6  refused: ")
    assert lines[4].startswith("line 8  refused: --stag=aBx16b (set on line 7): ")
    assert f"{f} line 6: " in cap.err and f"{f} line 8: --stag=aBx16b" in cap.err
    assert main(["batch", str(f), "--list", "--json"]) == 2
    d = json.loads(capsys.readouterr().out)
    assert d["summary"] == {"problems": 5, "accepted": 3, "refused": 2, "bad": 1, "ops_differ": 1}
    p = d["problems"][0]
    assert (p["line"], p["pad_l"], p["pad_r"], p["output"], p["ops"], p["exact_ops"]) == (2, [3, 3], [2, 2], [8, 8],
                                                                                            230400, 230400)
    assert main(["run", "g4ic8oc8_id5od5kd3pd1", "--list", "--json"]) == 0
    p = json.loads(capsys.readouterr().out)
    assert (p["ndims"], p["dims"], p["output"], p["benchdnn"]) == (5, "dhw", [5, 5, 5], "g4ic8id5oc8od5kd3pd1")
