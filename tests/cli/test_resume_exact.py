"""--resume exact (issue 33): a problem is its place in its list, counts and totals cover the CSV's rows, and
a CSV of another command or list is refused before anything is written. Real `python -m explorer` processes
with tiny budgets; which rows exist is asserted, never a timing."""

import json
import subprocess
import sys

import pytest

from explorer.core.model.model_csv import model_columns
from explorer.core.report.results import read_csv, rows_to_csv_text

FAST = ["--paths", "dense", "--budget-ms", "5", "--threads", "1", "--no-trace"]
A = 'mb1ic4ih6oc8kh3ph1n"a"'
B = 'mb1ic8ih6oc8kh3ph1n"b"'


def explorer(*args, cwd, timeout=600):
    return subprocess.run([sys.executable, "-m", "explorer", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def _problems(path):
    return sorted((r.get("problem_index"), r["name"], r["path"]) for r in read_csv(path))


@pytest.fixture
def twice(tmp_path):
    """A batch that lists one descriptor twice (lines 1 and 2), then another."""
    (tmp_path / "b.txt").write_text(f"{A}\n{A}\n{B}\n")
    return tmp_path


def test_a_descriptor_listed_twice_is_two_problems_and_the_total_covers_every_row(twice):
    # Shard 1/2 holds line 2 only: the first `a` is still to run (old main dropped it as "already there").
    done = explorer("batch", "b.txt", *FAST, "--shard", "1/2", "--csv", "r.csv", cwd=twice)
    assert done.returncode == 0, done.stderr
    before = (twice / "r.csv").read_text()
    go_on = explorer("batch", "b.txt", *FAST, "--resume", "r.csv", cwd=twice)
    assert go_on.returncode == 0, go_on.stderr
    assert "resuming r.csv: 1 row, 1 problem already there, 2 to run" in go_on.stderr
    assert (twice / "r.csv").read_text().startswith(before)
    assert _problems(twice / "r.csv") == [(0, "a", "dense"), (1, "a", "dense"), (2, "b", "dense")]
    # The network total is over the CSV's three layers, not only the two measured now.
    assert "network total, each layer x its *N count (3 layers, 3 in the net)" in go_on.stdout
    assert "every row of r.csv: 1 from before, 2 measured now" in go_on.stdout
    # Nothing left: --json still totals every row.
    again = explorer("batch", "b.txt", *FAST, "--resume", "r.csv", "--json", cwd=twice)
    assert again.returncode == 0, again.stderr
    total = json.loads(again.stdout)["network_total"]
    assert total["layers"] == 3 and [p["layers"] for p in total["paths"]] == [3]
    assert _problems(twice / "r.csv") == [(0, "a", "dense"), (1, "a", "dense"), (2, "b", "dense")]


def test_a_problem_partly_there_runs_only_its_missing_paths(twice):
    two = ["--paths", "dense,mkldnn", *FAST[2:]]
    full = explorer("batch", "b.txt", *two, "--shard", "0/2", "--csv", "r.csv", cwd=twice)
    assert full.returncode == 0, full.stderr
    lines = (twice / "r.csv").read_text().splitlines(keepends=True)
    (twice / "r.csv").write_text("".join(lines[:-1]))  # problem 2 lost its mkldnn row (stopped there)
    go_on = explorer("batch", "b.txt", *two, "--resume", "r.csv", cwd=twice)
    assert go_on.returncode == 0, go_on.stderr
    assert "3 rows, 1 problem already there, 2 to run (1 partly there: only their missing paths run)" in go_on.stderr
    got = _problems(twice / "r.csv")
    assert got == sorted({(i, n, p) for i, n in ((0, "a"), (1, "a"), (2, "b")) for p in ("dense", "mkldnn")})


def test_a_csv_of_another_command_or_list_is_refused_and_left_as_it_was(twice):
    (twice / "c.txt").write_text(f"{A}\n{B}\n")
    assert explorer("run", A, *FAST, "--csv", "run.csv", cwd=twice).returncode == 0
    assert explorer("batch", "c.txt", *FAST, "--csv", "other.csv", cwd=twice).returncode == 0
    (twice / "model.csv").write_text(rows_to_csv_text(
        [{"kind": "mode", "model": "m", "mode": "eager", "path": "eager", "status": "ok", "dtype": "f32",
          "threads": "1", "median_ms": "1.5"}], model_columns()))
    cases = {"run.csv": "holds rows of `run`", "model.csv": "holds a `model` command's rows",
             "other.csv": "holds rows of another problem list: its line 3 is problem 1, 'mb1ic8ih6oc8oh6kh3ph1' f32 "
                          "named 'b', but problem 1 of batch 'b.txt' is 'mb1ic4ih6oc8oh6kh3ph1' f32 named 'a'"}
    for name, says in cases.items():
        text = (twice / name).read_text()
        res = explorer("batch", "b.txt", *FAST, "--resume", name, cwd=twice)
        assert res.returncode == 2, (name, res.stderr)
        err = res.stderr.strip()
        assert says in err and err.count("\n") == 0 and "Traceback" not in err, err
        assert (twice / name).read_text() == text  # nothing appended


def test_an_older_csv_without_problem_index_goes_on_in_list_order(twice):
    # The rows of line 1 as the version before problem_index wrote them (the column left out).
    assert explorer("batch", "b.txt", *FAST, "--csv", "new.csv", cwd=twice).returncode == 0
    rows = read_csv(twice / "new.csv")
    old_cols = [c for c in rows_to_csv_text([]).strip().split(",") if c != "problem_index"]
    (twice / "old.csv").write_text(rows_to_csv_text([rows[0]], old_cols))
    res = explorer("batch", "b.txt", *FAST, "--resume", "old.csv", cwd=twice)
    assert res.returncode == 0, res.stderr
    assert "1 row, 1 problem already there, 2 to run" in res.stderr and "older version" in res.stderr
    assert _problems(twice / "old.csv") == [(0, "a", "dense"), (1, "a", "dense"), (2, "b", "dense")]
