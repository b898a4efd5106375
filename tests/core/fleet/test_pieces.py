"""Shards, problem identities (resume) and merged CSV pieces: explorer.core.fleet.pieces and hosts."""

import pytest

from explorer.core.errors import InputError
from explorer.core.fleet.hosts import CLUSTER_COLUMNS, host_labels
from explorer.core.fleet.pieces import merge_csvs, parse_shard, point_done, point_identity, row_identity, shard
from explorer.core.problem.sweep_plan import SweepPoint
from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.results import CSV_COLUMNS, Result, rows_to_csv_text


def test_shards_cover_the_list_once():
    items = list(range(17))
    parts = [shard(items, i, 3) for i in range(3)]
    assert sorted(x for p in parts for x in p) == items
    assert parts[1] == [1, 4, 7, 10, 13, 16]


@pytest.mark.parametrize("text", ["2/2", "-1/2", "a/b", "1", "0/0"])
def test_bad_shards_are_one_sentence(text):
    with pytest.raises(InputError, match="--shard"):
        parse_shard(text)


def test_a_point_is_done_when_each_path_has_its_row():
    spec = parse_descriptor('mb1ic4ih6oc8kh3ph1n"l0"')
    point = SweepPoint(index=0, spec=spec, line=1)
    rows = [Result(spec=spec, path=p, threads=1, problem_index=0).row() for p in ("dense",)]
    done = {row_identity(r) for r in rows}
    assert point_identity(point) + ("dense",) in done
    assert point_done(point, ("dense",), done)
    assert not point_done(point, ("dense", "mkldnn"), done)
    with_host = {row_identity({**r, "host": "a"}, with_host=True) for r in rows}
    assert point_done(point, ("dense",), with_host, host="a") and not point_done(point, ("dense",), with_host, host="b")


def test_labels_name_the_worker_only_where_a_machine_repeats():
    labels = host_labels({"tcp://1": "x", "tcp://2": "x", "tcp://3": "y"}, {"tcp://1": 0, "tcp://2": 1, "tcp://3": 2})
    assert labels == {"tcp://1": "x/0", "tcp://2": "x/1", "tcp://3": "y"}


def _csv(path, rows, columns=CSV_COLUMNS):
    path.write_text(rows_to_csv_text(rows, columns))
    return str(path)


def test_merge_joins_pieces_and_refuses_other_columns(tmp_path):
    spec = parse_descriptor("mb1ic4ih6oc8kh3ph1")
    a = _csv(tmp_path / "a.csv", [Result(spec=spec, path="dense", threads=1).row()])
    b = _csv(tmp_path / "b.csv", [Result(spec=spec, path="mkldnn", threads=1).row()])
    out = tmp_path / "all.csv"
    assert merge_csvs([a, b], str(out)) == 2
    assert [ln.split(",")[CSV_COLUMNS.index("path")] for ln in out.read_text().splitlines()[1:]] == ["dense", "mkldnn"]
    c = _csv(tmp_path / "c.csv", [{**Result(spec=spec, path="dense", threads=1).row(), "host": "h", "worker": "w"}],
             CLUSTER_COLUMNS)
    with pytest.raises(InputError, match=r"does not have the columns of .*adds host, worker"):
        merge_csvs([a, c], str(tmp_path / "x.csv"))
    with pytest.raises(InputError, match="already exists"):
        merge_csvs([a, b], str(out))


def _points(*descs):
    return [SweepPoint(index=i, spec=parse_descriptor(d), line=i + 1) for i, d in enumerate(descs)]


def test_rows_are_matched_to_their_problem_of_the_list():
    from explorer.core.fleet.pieces import match_resumed
    from explorer.core.report.results import PROBLEM_COLUMN

    a, b = 'mb1ic4ih6oc8kh3ph1n"a"', 'mb1ic8ih6oc8kh3ph1n"b"'
    points = _points(a, a, b)
    spec = points[0].spec
    row = {k: str(v) for k, v in Result(spec=spec, path="dense", threads=1, problem_index=1).row().items()}
    got = match_resumed("r.csv", list(CSV_COLUMNS), [row], points, "batch 'x'")
    assert not got.upgraded and {row_identity(r) for r in got.rows} == {point_identity(points[1]) + ("dense",)}
    assert not point_done(points[0], ("dense",), {row_identity(r) for r in got.rows})
    # An older CSV (no problem_index): the k-th row of a descriptor and path is its k-th line.
    old = [{k: v for k, v in row.items() if k != PROBLEM_COLUMN} for _ in range(2)]
    got = match_resumed("r.csv", [c for c in CSV_COLUMNS if c != PROBLEM_COLUMN], old, points, "batch 'x'")
    assert got.upgraded and [r[PROBLEM_COLUMN] for r in got.rows] == ["0", "1"]
    with pytest.raises(InputError, match=r"line 4 is 'mb1ic4ih6oc8oh6kh3ph1' f32 named 'a', more often than batch "
                                         r"'x' lists it \(2\)"):
        match_resumed("r.csv", [c for c in CSV_COLUMNS if c != PROBLEM_COLUMN], old * 2, points[:2], "batch 'x'")
    with pytest.raises(InputError, match="problem 7, .* but batch 'x' has 3 problems"):
        match_resumed("r.csv", list(CSV_COLUMNS), [{**row, PROBLEM_COLUMN: "7"}], points, "batch 'x'")
