"""`batch --cluster` shares the window's deadline (issue 34, #5): a server that accepts and says nothing is one
sentence and exit 2 within the deadline; a stream closed mid-run is one sentence and exit 3 (a fault), the
finished rows kept in the CSV."""

import pytest

from explorer.cli import main
from explorer.core.report.results import read_csv
from tests.core.fleet.fakes import silent_server  # noqa: F401 - the fixture

distributed = pytest.importorskip("distributed")

FAST = ["--paths", "dense", "--budget-ms", "2", "--threads", "1", "--no-trace"]


@pytest.fixture
def batch2(tmp_path):
    path = tmp_path / "b2.txt"
    path.write_text('mb1ic4ih6oc8oh6kh3ph1n"l0"\nmb1ic5ih6oc8oh6kh3ph1n"l1"\n')
    return str(path)


def _one_line(err: str) -> str:
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    text = lines[-1]
    assert "Traceback" not in err and "<TCP" not in err and "Stream is closed" not in err
    return text


def test_a_silent_server_is_one_sentence_and_exit_2(batch2, monkeypatch, capsys, silent_server):  # noqa: F811
    from explorer.core.fleet import reach

    monkeypatch.setattr(reach, "CONNECT_DEADLINE_S", 1.0)
    assert main(["batch", batch2, *FAST, "--cluster", silent_server]) == 2
    text = _one_line(capsys.readouterr().err)
    assert "accepted the connection but did not answer as a Dask scheduler within 1 s" in text


def test_a_stream_closed_mid_run_is_one_sentence_and_exit_3(batch2, monkeypatch, capsys, tmp_path):
    from explorer.core.fleet import cluster
    from explorer.core.fleet.cluster import ClusterRows, ClusterStarted
    from explorer.core.report.results import Result

    class Client:
        def close(self, timeout=None):
            pass

    def run_points(client, points, opts, every_host=False, done=None, **_):
        yield ClusterStarted({"tcp://10.0.0.7:40001": "hostB"}, len(points), 0)
        row = Result(spec=points[0].spec, path="dense", threads=1, median_ms=1.0).row()
        yield ClusterRows(points[0], "hostB", [{**row, "host": "hostB", "worker": "tcp://10.0.0.7:40001"}], 1, 2)
        raise distributed.comm.core.CommClosedError("in <TCP (closed) ConnectionPool.gather local=x remote=y>: "
                                                    "Stream is closed")

    monkeypatch.setattr(cluster, "connect", lambda address, timeout_s=None, cancel=None: Client())
    monkeypatch.setattr(cluster, "run_points", run_points)
    out = tmp_path / "c.csv"
    assert main(["batch", batch2, *FAST, "--cluster", "tcp://10.0.0.5:8786", "--csv", str(out)]) == 3
    err = capsys.readouterr().err
    assert "the connection to the cluster at 'tcp://10.0.0.5:8786' was lost (it closed)" in err
    _one_line(err)
    assert [r["name"] for r in read_csv(out)] == ["l0"]  # the finished row is kept
