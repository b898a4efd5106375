"""Issue 33, the results writer, on real processes: a second writer of one CSV (any command) is refused at once
with exit 2 and one sentence naming the first, whose rows all reach the file; a batch killed with -9 after
some rows, its CSV then torn by a half-written line, goes on with --resume: the torn line is dropped with a
sentence and every problem is in the file once at the end."""

import os
import signal
import subprocess
import sys
import time

from explorer.cli.common import EXIT_BAD_INPUT
from explorer.core.report.results import read_csv

FAST = ["--paths", "dense", "--threads", "1", "--no-trace"]


def _env(tmp_path):
    return {**os.environ, "MKLDNN_EXPLORER_CACHE": str(tmp_path / "cache"), "MKLDNN_EXPLORER_IN_PROCESS": "1"}


def _start(argv, tmp_path):
    return subprocess.Popen([sys.executable, "-m", "explorer", *argv], cwd=tmp_path, env=_env(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _run(argv, tmp_path, timeout=300):
    return subprocess.run([sys.executable, "-m", "explorer", *argv], cwd=tmp_path, env=_env(tmp_path),
                          capture_output=True, text=True, timeout=timeout)


def _batch(tmp_path, n):
    f = tmp_path / "b.txt"
    f.write_text("".join(f"mb1ic8ih8oc{8 * i}oh8kh3ph1\n" for i in range(1, n + 1)))
    return f


def _rows_on_disk(path) -> int:
    try:
        return max(0, path.read_text().count("\n") - 1)
    except FileNotFoundError:
        return 0


def _wait_until(cond, proc, what, timeout=240):
    deadline = time.monotonic() + timeout
    while not cond():
        assert proc.poll() is None, f"ended before {what}: {proc.communicate()[1][-600:]}"
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(0.1)


def test_a_second_writer_of_one_csv_is_refused_naming_the_first_whose_rows_all_stay(tmp_path):
    # enough rows left after the first (60 x a 100 ms budget: seconds) that it is still writing when paused,
    # however fast the machine (6 x 20 ms were all done before the pause on a quiet one)
    n = 60
    out = tmp_path / "same.csv"
    first = _start(["batch", str(_batch(tmp_path, n)), *FAST, "--budget-ms", "100", "--csv", str(out)], tmp_path)
    try:
        _wait_until(lambda: _rows_on_disk(out) >= 1, first, "the first row")
        os.kill(first.pid, signal.SIGSTOP)  # paused mid-run, still the CSV's writer: no race with the clock
        assert _rows_on_disk(out) < n, "the first writer finished before it was paused: the test proves nothing"
        others = [
            ["run", "mb1ic8ih8oc8oh8kh3ph1", *FAST, "--budget-ms", "5", "--csv", str(out), "--force"],
            ["batch", str(tmp_path / "b.txt"), *FAST, "--budget-ms", "5", "--resume", str(out)],
            ["sweep", "mb1ic8ih8oc8oh8kh3ph1", "--vary", "mb=1,2", *FAST, "--budget-ms", "5", "--csv", "same.csv"],
            ["model", "tiny", *FAST, "--budget-ms", "5", "--modes", "nchw", "--csv", str(out), "--force"],
        ]
        for argv in others:
            second = _run(argv, tmp_path)
            err = second.stderr.strip().splitlines()
            assert second.returncode == EXIT_BAD_INPUT, (argv[0], second.stderr[-600:])
            assert len(err) == 1 and "Traceback" not in second.stderr, (argv[0], err)
            assert f"pid {first.pid}" in err[0] and "batch" in err[0] and "is being written by" in err[0], err[0]
    finally:
        os.kill(first.pid, signal.SIGCONT)
        _, ferr = first.communicate(timeout=600)
    assert first.returncode == 0, ferr[-600:]
    rows = read_csv(out)
    assert sorted(r["oc"] for r in rows) == [8 * i for i in range(1, n + 1)]  # the first's rows, all, once
    assert not (tmp_path / ".same.csv.lock").exists()  # released at the end: nothing blocks the next run


def test_kill_9_mid_batch_then_a_torn_line_then_resume_runs_every_problem_once(tmp_path):
    n = 8
    out = tmp_path / "out.csv"
    batch = _batch(tmp_path, n)
    proc = _start(["batch", str(batch), *FAST, "--budget-ms", "150", "--csv", str(out)], tmp_path)
    try:
        _wait_until(lambda: _rows_on_disk(out) >= 2, proc, "two rows")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the main process and anything it started
        proc.communicate()
    kept = read_csv(out)
    assert 2 <= len(kept) < n
    whole = out.read_text()
    with open(out, "a") as f:  # a crash in the middle of writing the next row
        f.write(whole.splitlines()[1][:60])

    done = _run(["batch", str(batch), *FAST, "--budget-ms", "5", "--resume", str(out)], tmp_path)
    assert done.returncode == 0, done.stderr[-800:]
    torn = [ln for ln in done.stderr.splitlines() if "dropped a torn last line" in ln]
    assert len(torn) == 1 and "it will be run again" in torn[0] and "out.csv" in torn[0], done.stderr[-800:]
    notes: list[str] = []
    rows = read_csv(out, notes)
    assert sorted(r["oc"] for r in rows) == [8 * i for i in range(1, n + 1)]  # each problem once
    assert rows[: len(kept)] == kept  # the rows of the killed run, kept as they were
    assert not notes and out.read_text().endswith("\n")  # the resumed file is whole again
    assert not (tmp_path / ".out.csv.lock").exists()
