"""A cluster that loses its only worker, and a cluster run that is refused: real `dask scheduler` and
`dask worker` processes on 127.0.0.1, the CLI as a user runs it (a subprocess).

Every test reads exit codes, the CSV and stderr; timings are never asserted (60 s is the issue's bound on
noticing a dead cluster, far above what the code needs).
"""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from explorer.core.report.results import read_csv

pytest.importorskip("distributed")

FAST = ["--paths", "dense", "--threads", "1", "--no-trace"]
DASK = str(Path(sys.executable).with_name("dask"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(args: list[str], log: Path) -> subprocess.Popen:
    f = open(log, "w")  # noqa: SIM115 - the process writes it until the test ends
    return subprocess.Popen(args, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)


def _stop(p: subprocess.Popen) -> None:
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGKILL)  # its own session: the worker's measuring process goes too
    p.wait(30)


@pytest.fixture
def scheduler(tmp_path):
    if not os.path.exists(DASK):
        pytest.skip("the `dask` command is not installed next to this Python")
    port = _free_port()
    p = _start([DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--dashboard-address", ":0",
                "--no-show"], tmp_path / "scheduler.log")
    address = f"tcp://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            break
        except OSError:
            time.sleep(0.3)
    else:
        _stop(p)
        pytest.fail("the dask scheduler did not start within 2 minutes")
    yield address
    _stop(p)


def _worker(address: str, tmp_path: Path, resources: bool = True) -> subprocess.Popen:
    """One worker without a nanny (nothing restarts it), one thread, the `measure` resource (or none)."""
    extra = ["--resources", "measure=1"] if resources else []
    return _start([DASK, "worker", address, "--no-nanny", "--nthreads", "1", "--dashboard-address", ":0", *extra],
                  tmp_path / "worker.log")


def _wait_workers(address: str, n: int) -> None:
    from distributed import Client

    with Client(address, timeout=60) as c:
        c.wait_for_workers(n, timeout=180)  # a loaded machine starts a worker slowly


def _cli(args: list[str], **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "explorer", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def _batch(tmp_path: Path, n: int) -> str:
    path = tmp_path / "b.txt"
    path.write_text("".join(f'mb1ic{4 + i}ih6oc8oh6kh3ph1n"l{i}"\n' for i in range(n)))
    return str(path)


def test_the_only_worker_killed_mid_run_exits_3_keeps_rows_and_says_how_to_resume(scheduler, tmp_path):
    worker = _worker(scheduler, tmp_path)
    try:
        _wait_workers(scheduler, 1)
        batch, out = _batch(tmp_path, 12), tmp_path / "lost.csv"
        # 300 ms a problem: the kill lands after a few rows and long before the twelfth
        run = _cli(["batch", batch, "--cluster", scheduler, *FAST, "--budget-ms", "300", "--csv", str(out)])
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and run.poll() is None:
            if out.exists() and len(out.read_text().splitlines()) >= 3:  # two rows finished
                break
            time.sleep(0.05)
        assert run.poll() is None, "the run ended before its only worker could be killed"
        os.killpg(worker.pid, signal.SIGKILL)  # kill -9 the worker and its measuring process
        killed = time.monotonic()
        try:
            _, err = run.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            run.kill()
            _, err = run.communicate()
            pytest.fail(f"the run had not ended 60 s after its only worker was killed; stderr: {err[-2000:]}")
        assert time.monotonic() - killed < 60
    finally:
        _stop(worker)
    assert run.returncode == 3, err
    assert "Traceback" not in err
    rows = read_csv(out)
    assert 2 <= len(rows) < 12 and all(r["status"] == "ok" and r["host"] for r in rows)
    assert "no worker with the `measure` resource" in err
    resume = [ln for ln in err.splitlines() if "--resume" in ln][-1]
    # The printed command finishes the run: the same batch, the CSV given to --resume, no --csv.
    cmd = resume.split("`")[1].split()
    assert cmd[:3] == ["mkldnn-explorer", "batch", batch] and cmd[cmd.index("--resume") + 1] == str(out)
    assert "--csv" not in cmd and "--cluster" in cmd


@pytest.mark.parametrize("resources", [False, True], ids=["worker-without-measure", "no-worker"])
def test_a_refused_cluster_run_leaves_no_csv_and_the_rerun_needs_no_force(scheduler, tmp_path, resources):
    worker = _worker(scheduler, tmp_path, resources=False) if not resources else None
    try:
        if worker is not None:
            _wait_workers(scheduler, 1)
        batch, out = _batch(tmp_path, 2), tmp_path / "refused.csv"
        run = _cli(["batch", batch, "--cluster", scheduler, *FAST, "--budget-ms", "2", "--csv", str(out)])
        _, err = run.communicate(timeout=300)
        assert run.returncode == 2 and "Traceback" not in err, err
        assert "`measure` resource" in err.strip().splitlines()[-1]  # one sentence after the plan's line
        assert not out.exists()  # nothing written: the rerun is the same command, no --force
        if worker is not None:
            _stop(worker)
        worker = _worker(scheduler, tmp_path)
        _wait_workers(scheduler, 1)
        run = _cli(["batch", batch, "--cluster", scheduler, *FAST, "--budget-ms", "2", "--csv", str(out)])
        _, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
        assert len(read_csv(out)) == 2
    finally:
        if worker is not None:
            _stop(worker)

