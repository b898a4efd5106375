"""The Sweep tab's Cluster field never holds the tab hostage (issue 34, #5): an address where something
accepts and says nothing is refused on the field within the deadline; Stop ends the job in seconds (while
connecting, and while a client call hangs mid-sweep) and Run is enabled again; what the client raises mid-sweep
("Stream is closed") is one sentence on the marked field, and the rows that finished are kept."""

import threading

import pytest

from explorer.core.problem.spec import parse_descriptor
from tests.core.fleet.fakes import silent_server  # noqa: F401 - the fixture

TINY = "mb1ic8ih6oc8kh3ph1"
STOP_BOUND_MS = 8_000  # "Stop ends a job within seconds": generous for a loaded 2-core machine


def _sweep_view(make_window):
    from explorer.core.jobs.options import RunOptions

    win = make_window(spec=parse_descriptor(TINY))
    v = win.sweep_view
    v.set_base(TINY)
    v.set_options(RunOptions(paths=("dense",), threads=1, budget_ms=2.0, trace=False))
    v.set_vary("g", "1,2")
    return win, v


def _one_sentence(text: str) -> None:
    assert text and "\n" not in text and "<TCP" not in text and "Stream is closed" not in text
    assert "Error:" not in text and "Traceback" not in text


def test_a_server_that_accepts_and_says_nothing_is_refused_on_the_field(make_window, qtbot, monkeypatch,
                                                                        silent_server):  # noqa: F811
    pytest.importorskip("distributed")
    from explorer.gui.jobs import sweep_worker

    monkeypatch.setattr(sweep_worker, "CONNECT_TIMEOUT_S", 1.0)
    win, v = _sweep_view(make_window)
    v.cluster_edit.setText(silent_server)
    with qtbot.waitSignal(v.finished, timeout=30_000):  # it hung for minutes
        assert v.run()
    refusal = v.session.sweep.cluster_error
    assert "accepted the connection but did not answer as a Dask scheduler within 1 s" in refusal
    _one_sentence(refusal)
    assert "border" in v.cluster_edit.styleSheet() and v.live_label.text() == refusal
    assert v.results() == [] and v.run_button.isEnabled() and not v.is_running()


def test_stop_while_connecting_ends_the_job_and_enables_run(make_window, qtbot, monkeypatch,
                                                            silent_server):  # noqa: F811
    pytest.importorskip("distributed")
    from explorer.gui.jobs import sweep_worker

    monkeypatch.setattr(sweep_worker, "CONNECT_TIMEOUT_S", 120.0)  # the deadline is not what ends it
    win, v = _sweep_view(make_window)
    v.cluster_edit.setText(silent_server)
    assert v.run()
    qtbot.wait(300)
    assert v.is_running() and "Connecting to the cluster" in v.live_label.text()
    with qtbot.waitSignal(v.finished, timeout=STOP_BOUND_MS) as blocker:
        win.stop_run()  # Esc / Run > Stop
    assert blocker.args == [True]
    assert v.live_label.text() == "Stopped before the cluster answered; nothing ran."
    assert v.run_button.isEnabled() and win.run_action.isEnabled() and v.session.sweep.cluster_error == ""


class _Client:
    def close(self, timeout=None):
        pass


def test_stop_ends_a_sweep_whose_client_call_hangs(make_window, qtbot, monkeypatch):
    """A cluster call that never returns (a scheduler gone quiet mid-sweep) ignores the cancel flag: Stop
    still ends the job, the finished row is kept and Run is enabled again."""
    pytest.importorskip("distributed")
    from explorer.core.fleet import cluster
    from explorer.core.fleet.cluster import ClusterRows, ClusterStarted
    from explorer.core.report.results import Result

    release = threading.Event()

    def run_points(client, points, opts, cancel=None, **_):
        yield ClusterStarted({"tcp://10.0.0.7:40001": "hostB"}, len(points), 0)
        row = Result(spec=points[0].spec, path="dense", threads=1, median_ms=1.0, vary=points[0].label).row()
        yield ClusterRows(points[0], "hostB", [{**row, "host": "hostB", "worker": "tcp://10.0.0.7:40001"}], 1, 2)
        release.wait(120)  # stuck inside the client: never looks at `cancel`

    monkeypatch.setattr(cluster, "connect", lambda address, timeout_s=10.0, cancel=None: _Client())
    monkeypatch.setattr(cluster, "run_points", run_points)
    win, v = _sweep_view(make_window)
    v.cluster_edit.setText("tcp://10.0.0.5:8786")
    try:
        with qtbot.waitSignal(v.result_ready, timeout=30_000):
            assert v.run()
        with qtbot.waitSignal(v.finished, timeout=STOP_BOUND_MS) as blocker:
            v.stop()
        assert blocker.args == [True]
        assert [r.vary for r in v.results()] == ["g=1"] and "stopped" in v.live_label.text().lower()
        assert v.run_button.isEnabled() and not v.is_running()
    finally:
        release.set()


def test_a_closed_stream_mid_sweep_is_one_sentence_on_the_field(make_window, qtbot, monkeypatch, tmp_path):
    distributed = pytest.importorskip("distributed")
    from explorer.core.fleet import cluster
    from explorer.core.fleet.cluster import ClusterRows, ClusterStarted
    from explorer.core.report.results import Result, read_csv

    def run_points(client, points, opts, cancel=None, **_):
        yield ClusterStarted({"tcp://10.0.0.7:40001": "hostB"}, len(points), 0)
        row = Result(spec=points[0].spec, path="dense", threads=1, median_ms=1.0, vary=points[0].label).row()
        yield ClusterRows(points[0], "hostB", [{**row, "host": "hostB", "worker": "tcp://10.0.0.7:40001"}], 1, 2)
        raise distributed.comm.core.CommClosedError(
            "in <TCP (closed) ConnectionPool.gather local=tcp://127.0.0.1:5 remote=tcp://10.0.0.7:40001>: Stream is closed")

    monkeypatch.setattr(cluster, "connect", lambda address, timeout_s=10.0, cancel=None: _Client())
    monkeypatch.setattr(cluster, "run_points", run_points)
    win, v = _sweep_view(make_window)
    v.set_csv_sink(tmp_path / "c.csv")
    v.cluster_edit.setText("tcp://10.0.0.5:8786")
    with qtbot.waitSignal(v.finished, timeout=30_000):
        assert v.run()
    refusal = v.session.sweep.cluster_error
    assert "the connection to the cluster at 'tcp://10.0.0.5:8786' was lost (it closed)" in refusal
    _one_sentence(refusal)
    assert "border" in v.cluster_edit.styleSheet()
    assert "failed" in v.live_label.text().lower() and "done" not in v.live_label.text().lower()
    _one_sentence(v.live_label.text())
    assert [r.vary for r in v.results()] == ["g=1"] and [r["vary"] for r in read_csv(tmp_path / "c.csv")] == ["g=1"]
    assert v.run_button.isEnabled()
