"""run --verify: every row checked in a fresh script (explorer.core.process.verify), its median and ratio beside
the row; beyond +-10% the row says "not reproduced in a fresh script" with both figures."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from explorer.cli import main
from explorer.core.measure import interference as itf
from explorer.core.process import verify as verify_mod
from explorer.core.report.results import read_csv

TINY = ["mb1ic8ih6oc8oh6kh3ph1", "--paths", "dense,mkldnn", "--budget-ms", "5", "--threads", "1", "--no-trace"]


def _row_median(script: str) -> float:
    return float(re.search(r"The row measured (\S+) ms", Path(script).read_text()).group(1))


@pytest.fixture
def fake_script(monkeypatch, tmp_path):
    """The fresh script 'measures' the row's own median, except for the paths in `slow`, where it is 3x."""
    monkeypatch.setenv("MKLDNN_EXPLORER_IN_PROCESS", "1")
    monkeypatch.setenv("MKLDNN_EXPLORER_CACHE", str(tmp_path / "cache"))
    # trusted rows whatever the machine's load: a noisy row's disagreement is "~ uncertain", never a verdict
    monkeypatch.setattr(itf, "judge", lambda i, min_samples: itf.Verdict("ok", ""))
    slow: set[str] = set()

    def run_script(path, allocator, python=None, timeout_s=0):
        assert Path(path).read_text().startswith(verify_mod.MARKER)
        factor = 3.0 if any(f"-{p}-" in Path(path).name for p in slow) else 1.0
        return verify_mod.ScriptFigure(_row_median(path) * factor)  # a quiet figure

    monkeypatch.setattr(verify_mod, "run_script", run_script)
    return slow


def test_a_disagreement_is_marked_with_both_figures(fake_script, tmp_path, capsys):
    fake_script.add("mkldnn")
    out = tmp_path / "r.csv"
    assert main(["run", *TINY, "--verify", "--csv", str(out)]) == 0
    text = capsys.readouterr()
    rows = {r["path"]: r for r in read_csv(out)}
    assert not rows["dense"]["verify_note"] and rows["dense"]["verify_ratio"] == pytest.approx(1.0, rel=1e-3)
    m = rows["mkldnn"]
    assert m["verify_ratio"] == pytest.approx(1 / 3, rel=1e-3)
    assert m["verify_note"].startswith("not reproduced in a fresh script")
    # both figures, to the note's 4 digits (the CSV keeps more: formatting its rounded value again could differ
    # in the last digit, 0.084075 -> 0.08407 where the note said 0.08408)
    said = [float(v) for v in re.findall(r"the row ([\d.e+-]+) ms, the script ([\d.e+-]+) ms", m["verify_note"])[0]]
    assert said == pytest.approx([m["median_ms"], m["verify_median_ms"]], rel=1e-3)
    assert "fresh script ms" in text.out and "row/script" in text.out
    assert re.search(r"^mkldnn .*0\.33x not reproduced in a fresh script", text.out, re.M)
    assert re.search(r"^mkldnn: not reproduced in a fresh script: the row .* ms, the script .* ms", text.out, re.M)
    assert not re.search(r"^dense .*not reproduced", text.out, re.M)
    # the scripts are kept next to the CSV for the user to rerun, and the folder is printed
    folder = tmp_path / "r-verify"
    assert sorted(p.name for p in folder.iterdir()) == [Path(rows[p]["verify_script"]).name for p in ("dense", "mkldnn")]
    assert str(folder) in text.err


def test_json_carries_the_verify_fields(fake_script, capsys):
    fake_script.add("dense")
    assert main(["run", *TINY, "--verify", "--json"]) == 0
    res = {r["path"]: r for r in json.loads(capsys.readouterr().out)["results"]}
    assert res["dense"]["verify_note"].startswith("not reproduced in a fresh script")
    assert res["mkldnn"]["verify_note"] == "" and res["mkldnn"]["verify_median_ms"] != ""
    assert Path(res["dense"]["verify_script"]).parent.name == "verify"  # no --csv: the cache folder


def test_without_verify_nothing_is_checked(fake_script, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(verify_mod, "run_script", lambda *a, **k: pytest.fail("no --verify, no fresh script"))
    out = tmp_path / "r.csv"
    assert main(["run", *TINY, "--csv", str(out)]) == 0
    assert "fresh script" not in capsys.readouterr().out
    assert all(r["verify_median_ms"] is None and not r["verify_note"] for r in read_csv(out))


def test_a_file_that_is_not_its_own_is_never_replaced(fake_script, tmp_path, capsys):
    folder = tmp_path / "r-verify"
    folder.mkdir()
    mine = folder / "verify-mb1ic8ih6oc8oh6kh3ph1-dense-f32-t1.py"
    mine.write_text("print('my own script')\n")
    out = tmp_path / "r.csv"
    assert main(["run", *TINY, "--verify", "--csv", str(out)]) == 2
    assert mine.read_text() == "print('my own script')\n"
    err = capsys.readouterr().err.strip().splitlines()
    assert "is not a script this tool wrote" in err[-1] and "Traceback" not in "\n".join(err)
    assert len(read_csv(out)) == 2  # the measured rows were kept


def test_one_real_fresh_script(tmp_path, capsys):
    """The real thing: the child measures, then the written script runs in a new Python process."""
    out = tmp_path / "real.csv"
    assert main(["run", "mb1ic4ih5oc4oh5kh3ph1", "--paths", "dense", "--budget-ms", "20", "--threads", "1",
                 "--verify", "--csv", str(out)]) == 0
    (row,) = read_csv(out)
    assert row["verify_median_ms"] > 0
    assert row["verify_ratio"] == pytest.approx(row["median_ms"] / row["verify_median_ms"], rel=1e-3)
    script = Path(row["verify_script"])
    assert script.is_file() and script.parent == tmp_path / "real-verify"
    text = script.read_text()
    assert "import explorer" not in text and "MALLOC_MMAP_THRESHOLD_=33554432" in text  # the printed variables
    assert (not row["verify_note"]) == (0.9 <= row["verify_ratio"] <= 1.1)
    assert "fresh script ms" in capsys.readouterr().out


def test_a_relative_csv_is_checked_in_a_real_subprocess(tmp_path):
    """#33: a relative --csv once doubled the scripts' folder (rel-verify/rel-verify/...py), so nothing was
    checked and the run still exited 0. Run from a tmp cwd, as a user would."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, MKLDNN_EXPLORER_CACHE=str(tmp_path / "cache"))
    p = subprocess.run([sys.executable, "-m", "explorer", "run", "mb1ic4ih5oc4oh5kh3ph1", "--paths", "dense",
                        "--budget-ms", "20", "--threads", "1", "--no-trace", "--verify", "--csv", "rel.csv"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    (row,) = read_csv(tmp_path / "rel.csv")
    assert "gave no figure" not in (row["verify_note"] or "")  # an empty note reads back as None
    assert row["verify_median_ms"] > 0
    script = Path(row["verify_script"])
    assert script.is_absolute() and script.is_file() and script.parent == tmp_path / "rel-verify"


def test_a_file_where_the_scripts_folder_should_be_is_one_sentence(fake_script, tmp_path, capsys):
    (tmp_path / "r-verify").write_text("in the way\n")
    code = main(["run", *TINY, "--verify", "--csv", str(tmp_path / "r.csv")])
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err and "r-verify" in err
    assert (tmp_path / "r-verify").read_text() == "in the way\n"


@pytest.mark.parametrize("with_csv", [False, True])
def test_a_scripts_folder_that_cannot_be_written_is_refused_before_any_work(fake_script, monkeypatch, tmp_path,
                                                                           capsys, with_csv):
    """A read-only cache folder (no --csv) was found only after every path was measured (and --json lost the
    rows), and its sentence said to choose another --csv folder although no --csv was given. Now the folder
    is checked first and the sentence names what moves it. A file where a folder should be stands in for a
    read-only folder here: root writes through chmod."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x\n")
    if with_csv:
        args = ["--csv", str(blocker / "r.csv")]  # the CSV's own check refuses first: its folder is a file
    else:
        monkeypatch.setenv("MKLDNN_EXPLORER_CACHE", str(blocker / "cache"))
        args = ["--json"]
    code = main(["run", *TINY, "--verify", *args])
    out, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in err
    assert "fresh script:" not in err and "[1/" not in err and out == ""  # nothing measured
    assert len(err.strip().splitlines()) == 1
    if not with_csv:
        assert "MKLDNN_EXPLORER_CACHE" in err and "--csv" in err and str(blocker) in err


def test_a_read_only_cache_folder_is_refused_before_any_work(fake_script, monkeypatch, tmp_path, capsys):
    """The same with the folder's access refused (what a read-only mount says); checked through os.access,
    as root passes chmod."""
    import os

    cache = tmp_path / "ro-cache"
    cache.mkdir()
    monkeypatch.setenv("MKLDNN_EXPLORER_CACHE", str(cache))
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **k: False if str(p) == str(cache) else real(p, mode, **k))
    real_open = os.open

    def ro_open(p, flags, *a, **k):
        if str(p).startswith(str(cache)) and flags & os.O_CREAT:
            raise OSError(30, "Read-only file system")
        return real_open(p, flags, *a, **k)

    monkeypatch.setattr(os, "open", ro_open)
    code = main(["run", *TINY, "--verify"])
    err = capsys.readouterr().err
    assert code == 2 and "Read-only file system" in err and "MKLDNN_EXPLORER_CACHE" in err
    assert "fresh script:" not in err and "[1/" not in err
