"""The Sweep tab's Cluster field: a sweep from the window on a real Dask cluster (a scheduler and two worker
processes on 127.0.0.1), an address nobody answers at, and the field without Dask installed."""

import logging
import socket
import sys

import pytest

from explorer.core.problem.spec import parse_descriptor

TINY = "mb1ic8ih6oc8kh3ph1"


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, resources={"measure": 1},
                                  host="127.0.0.1", dashboard_address=":0",
                                  silence_logs=logging.ERROR) as c, distributed.Client(c) as client:
        client.wait_for_workers(2, timeout=180)  # a loaded machine starts a worker slowly
        yield c.scheduler_address, client.scheduler_info(n_workers=-1)["workers"]


def _sweep_view(make_window):
    from explorer.core.jobs.options import RunOptions

    win = make_window(spec=parse_descriptor(TINY))
    v = win.sweep_view
    v.set_base(TINY)
    v.set_options(RunOptions(paths=("dense",), threads=1, budget_ms=2.0, trace=False))
    v.set_vary("g", "1,2")
    assert v.point_count == 2
    return win, v


def test_a_sweep_from_the_window_runs_on_the_cluster_and_its_rows_carry_the_host(make_window, qtbot, cluster,
                                                                                 tmp_path):
    from explorer.core.report.results import Result, read_csv

    address, workers = cluster
    labels = {f"{socket.gethostname()}/{w['name']}" for w in workers.values()}
    win, v = _sweep_view(make_window)
    csv = tmp_path / "cluster.csv"
    v.set_csv_sink(csv)
    qtbot.keyClicks(v.cluster_edit, address)  # typed, as a user would: the address lives in the session
    assert v.session.sweep.cluster == address and v.cluster_edit.isEnabled()
    streamed = []
    v.result_ready.connect(streamed.append)
    with qtbot.waitSignal(v.finished, timeout=180_000) as blocker:
        assert v.run()
        assert not v.cluster_edit.isEnabled()  # no change of address mid-sweep
    assert blocker.args == [False]
    rows = v.results()
    assert len(rows) == 2 and all(isinstance(r, Result) and r.status == "ok" for r in rows)
    assert sorted(r.vary for r in rows) == ["g=1", "g=2"]
    assert {r.host for r in rows} <= labels and all(r.worker in workers for r in rows)
    assert len(streamed) == 2  # each row reached the window as its point finished
    v.redraw_now()
    assert v.line.point_count("dense") == 2  # drawn like a local sweep's rows
    assert v.session.sweep.setup["cluster"] == address and v.session.job is None
    on_disk = read_csv(csv)  # written as they came, with the host columns
    assert sorted(r["vary"] for r in on_disk) == ["g=1", "g=2"] and {r["host"] for r in on_disk} <= labels
    out = tmp_path / "export.csv"
    assert v.export_csv(out) and {r["host"] for r in read_csv(out)} <= labels
    assert "done" in v.live_label.text().lower() and v.cluster_edit.styleSheet() == ""


def test_stop_cancels_the_sweeps_tasks_on_the_cluster_and_keeps_the_finished_rows(make_window, qtbot, cluster):
    import time

    from explorer.core.jobs.options import RunOptions

    address, _workers = cluster
    win, v = _sweep_view(make_window)
    v.set_options(RunOptions(paths=("dense",), threads=1, budget_ms=100.0, trace=False))
    v.set_vary("mb", "1:24:+1")  # 24 points of 100 ms and more: far from done when Stop comes
    v.cluster_edit.setText(address)
    with qtbot.waitSignal(v.result_ready, timeout=180_000):
        assert v.run()
    with qtbot.waitSignal(v.finished, timeout=30_000) as blocker:
        v.stop()
    assert blocker.args == [True]
    n = len(v.results())
    assert 1 <= n < 24 and "stopped" in v.live_label.text().lower()
    from distributed import Client

    with Client(address) as client:  # nothing of the stopped sweep stays queued or running there
        def left():
            return client.run_on_scheduler(lambda dask_scheduler: [
                k for k in map(str, dask_scheduler.tasks) if k.startswith("mkldnn-explorer-")])

        deadline = time.monotonic() + 30
        while left() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert left() == []


def test_an_address_nobody_answers_at_is_marked_and_nothing_runs(make_window, qtbot, monkeypatch):
    pytest.importorskip("distributed")
    from explorer.gui.jobs import sweep_worker

    monkeypatch.setattr(sweep_worker, "CONNECT_TIMEOUT_S", 1.0)
    win, v = _sweep_view(make_window)
    v.cluster_edit.setText("tcp://127.0.0.1:1")
    with qtbot.waitSignal(v.finished, timeout=30_000):
        assert v.run()
    refusal = v.session.sweep.cluster_error
    assert refusal.startswith("no Dask scheduler answered at 'tcp://127.0.0.1:1'") and "\n" not in refusal
    assert "border" in v.cluster_edit.styleSheet()  # the usual invalid-field mark
    assert v.message.text() == refusal[0].upper() + refusal[1:] and v.live_label.text() == refusal
    # refused before anything began: no sweep in the session, no rows, and Run may try again
    assert v.results() == [] and v.session.sweep.points == [] and v.session.job is None
    assert v.run_button.isEnabled()
    v.cluster_edit.setText("")  # this machine again: the mark and the sentence go
    assert v.cluster_edit.styleSheet() == "" and v.session.sweep.cluster_error == ""
    assert v.message.text().startswith("2 points")


def test_a_point_whose_task_failed_for_good_is_said_and_has_no_rows(make_window, qtbot, monkeypatch, tmp_path):
    """What reaches the window when the cluster gives up on a point (a stand-in for the cluster: no timing)."""
    pytest.importorskip("distributed")  # without it the field is disabled (the last test)
    from explorer.core.fleet import cluster
    from explorer.core.fleet.cluster import ClusterMissing, ClusterRows, ClusterStarted
    from explorer.core.report.results import Result, read_csv

    class Client:
        def close(self):
            pass

    def run_points(client, points, opts, cancel=None, **_):
        yield ClusterStarted({"tcp://10.0.0.7:40001": "hostB"}, len(points), 0)
        row = Result(spec=points[0].spec, path="dense", threads=1, median_ms=1.0, vary=points[0].label).row()
        yield ClusterRows(points[0], "hostB", [{**row, "host": "hostB", "worker": "tcp://10.0.0.7:40001"}], 1, 2)
        yield ClusterMissing(points[1], "", "KilledWorker: its worker died twice", 2, 2)

    monkeypatch.setattr(cluster, "connect", lambda address, timeout_s=10.0, cancel=None: Client())
    monkeypatch.setattr(cluster, "run_points", run_points)
    win, v = _sweep_view(make_window)
    v.set_csv_sink(tmp_path / "c.csv")
    v.cluster_edit.setText("tcp://10.0.0.5:8786")
    with qtbot.waitSignal(v.finished, timeout=30_000):
        assert v.run()
    (r,) = v.results()
    assert (r.vary, r.host, r.median_ms) == ("g=1", "hostB", 1.0)
    assert v.session.sweep.missing == [(1, "KilledWorker: its worker died twice")]
    assert "1 point went missing on the cluster (KilledWorker: its worker died twice)" in v.live_label.text()
    assert [row["vary"] for row in read_csv(tmp_path / "c.csv")] == ["g=1"]


def test_without_dask_the_field_is_disabled_and_says_how_to_install_it(qtbot, monkeypatch):
    from explorer.gui.tabs.sweep_view import SweepView

    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` fails as if not installed
    v = SweepView()
    qtbot.addWidget(v)
    v.set_base(TINY)
    assert not v.cluster_edit.isEnabled()
    assert 'pip install "dask[distributed]"' in v.cluster_edit.toolTip()
    v.session.set_cluster("tcp://10.0.0.5:8786")  # the field follows the session, but a sweep stays here
    assert v.cluster_edit.text() == "tcp://10.0.0.5:8786" and not v.cluster_edit.isEnabled()
    assert v.shutdown(2000)
