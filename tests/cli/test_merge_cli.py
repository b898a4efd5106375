"""`merge` (issue 33): pieces streamed row by row; the same piece twice, the output as a piece and inputs that
are not regular files are refused with one sentence, exit 2, nothing written. Real `python -m explorer`
processes on pieces in the tool's own CSV format."""

import os
import subprocess
import sys

from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.results import Result, rows_to_csv_text


def explorer(*args, cwd, timeout=120, stdin=subprocess.DEVNULL, input=None):
    return subprocess.run([sys.executable, "-m", "explorer", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, stdin=None if input is not None else stdin, input=input)


def _piece(path, paths, index):
    spec = parse_descriptor("mb1ic4ih6oc8kh3ph1")
    rows = [{**Result(spec=spec, path=p, threads=1, median_ms=0.5).row(), "problem_index": str(index)} for p in paths]
    path.write_text(rows_to_csv_text(rows))
    return path.name


def _refused(res, says):
    err = res.stderr.strip()
    assert res.returncode == 2 and says in err, err
    assert err.count("\n") == 0 and "Traceback" not in err, err


def test_merge_joins_pieces_in_order_and_refuses_a_piece_twice_and_the_output_as_a_piece(tmp_path):
    a = _piece(tmp_path / "a.csv", ("dense", "mkldnn"), 0)
    b = _piece(tmp_path / "b.csv", ("dense",), 1)
    res = explorer("merge", a, b, "--csv", "all.csv", cwd=tmp_path)
    assert res.returncode == 0 and "wrote 3 rows from 2 CSVs to all.csv" in res.stderr, res.stderr
    pa, pb = ((tmp_path / n).read_text() for n in (a, b))
    assert (tmp_path / "all.csv").read_text() == pa + pb.split("\n", 1)[1]
    os.link(tmp_path / a, tmp_path / "hard.csv")
    for other in (a, "./a.csv", "hard.csv"):  # the same path, another spelling, a hard link (same inode)
        _refused(explorer("merge", a, other, "--csv", "m.csv", cwd=tmp_path), "are the same file; give each piece once")
        assert not (tmp_path / "m.csv").exists()
    before = (tmp_path / a).read_text()
    _refused(explorer("merge", a, b, "--csv", a, "--force", cwd=tmp_path), "write the merge to a new file")
    assert (tmp_path / a).read_text() == before


def test_merge_refuses_inputs_that_are_not_regular_files(tmp_path):
    a = _piece(tmp_path / "a.csv", ("dense",), 0)
    os.mkfifo(tmp_path / "fifo.csv")
    (tmp_path / "folder").mkdir()
    # A FIFO would be read once (old main waited on it for a writer); a folder is not a CSV.
    _refused(explorer("merge", a, "fifo.csv", "--csv", "m.csv", cwd=tmp_path, timeout=60), "is a FIFO (a pipe)")
    _refused(explorer("merge", a, "folder", "--csv", "m.csv", cwd=tmp_path), "is a folder")
    # /dev/stdin fed a valid piece through a pipe: still not a file on disk.
    res = explorer("merge", a, "/dev/stdin", "--csv", "m.csv", cwd=tmp_path, input=(tmp_path / a).read_text())
    _refused(res, "not a regular file")
    assert not (tmp_path / "m.csv").exists()
    # A torn last line in the second piece, found while streaming: still nothing written, no temp file left.
    b = _piece(tmp_path / "b.csv", ("dense",), 1)
    with open(tmp_path / b, "a") as f:
        f.write("mb1ic4ih6oc8oh6kh3ph1,,1,1,4\n")
    _refused(explorer("merge", a, b, "--csv", "m.csv", cwd=tmp_path), "b.csv' line 3: wrong number of cells")
    assert not (tmp_path / "m.csv").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_merge_refuses_a_problem_that_two_pieces_hold(tmp_path):
    # Old main wrote both rows: the merged CSV held shard 0's problem twice, and resume, totals and compare
    # then counted it twice. A copy of a shard under another name is the common way to get there.
    a = _piece(tmp_path / "a.csv", ("dense", "mkldnn"), 0)
    b = _piece(tmp_path / "b.csv", ("dense",), 1)
    (tmp_path / "a-copy.csv").write_text((tmp_path / a).read_text())
    res = explorer("merge", a, b, "a-copy.csv", "--csv", "m.csv", cwd=tmp_path)
    _refused(res, "'a-copy.csv' line 2 is problem 0")
    assert "'a.csv' line 2 already holds" in res.stderr and "path 'dense'" in res.stderr, res.stderr
    assert not (tmp_path / "m.csv").exists() and not list(tmp_path.glob(".m.csv*"))
    # The same problem on another path is not a repeat; neither are rows of `run` (no problem list).
    c = _piece(tmp_path / "c.csv", ("native",), 0)
    assert explorer("merge", a, b, c, "--csv", "ok.csv", cwd=tmp_path).returncode == 0
    spec = parse_descriptor("mb1ic4ih6oc8kh3ph1")
    for n in ("r1.csv", "r2.csv"):
        (tmp_path / n).write_text(rows_to_csv_text([Result(spec=spec, path="dense", threads=1, median_ms=0.5).row()]))
    res = explorer("merge", "r1.csv", "r2.csv", "--csv", "runs.csv", cwd=tmp_path)
    assert res.returncode == 0 and "wrote 2 rows" in res.stderr, res.stderr
