"""Issue 23, signals and faults, on real processes: SIGINT/SIGTERM mid-batch and mid-model exit 130, kill -9
of the measuring child exits 3 (a fault, not bad input), kill -9 of the main process leaves a child that
ends quietly; in every case each finished row is on disk in a CSV that parses and the printed count is true."""

import csv
import os
import re
import select
import signal
import subprocess
import sys
import time

import pytest

from explorer.cli.common import EXIT_FAULT, EXIT_INTERRUPTED

BATCH = "".join(f"mb1ic8ih8oc{8 * i}oh8kh3ph1\n" for i in range(1, 6))
ARGS = ["--paths", "dense,mkldnn", "--threads", "1", "--budget-ms", "150", "--no-trace"]
MODEL = ["model", "tiny", "--threads", "1", "--paths", "dense,mkldnn", "--budget-ms", "20", "--no-trace",
         "--mode-budget-ms", "150"]


def _measuring_child(pid: int) -> int | None:
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            stat_ = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
            cmd = open(f"/proc/{p}/cmdline").read()
        except OSError:
            continue
        if int(stat_[1]) == pid and "spawn_main" in cmd:
            return int(p)
    return None


def _start(argv, cwd, env=None):
    e = {**os.environ, "MKLDNN_EXPLORER_CACHE": str(cwd / "cache"), **(env or {})}
    e.pop("MKLDNN_EXPLORER_IN_PROCESS", None)
    return subprocess.Popen([sys.executable, "-m", "explorer", *argv], cwd=cwd, env=e, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_sigint_default)


def _sigint_default():
    # Ctrl+C as in a terminal: a runner started in the background passes SIGINT down ignored.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for(proc, text, timeout=240) -> str:
    seen = ""
    deadline = time.monotonic() + timeout
    while text not in seen:
        assert time.monotonic() < deadline, f"never saw {text!r}: {seen[-400:]}"
        r, _, _ = select.select([proc.stderr], [], [], 1)
        if r:
            line = proc.stderr.readline()
            assert line or proc.poll() is None, f"ended before {text!r}: {seen[-400:]}"
            seen += line
    return seen


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _wrote(err: str) -> int:
    m = re.search(r"wrote (\d+) rows", err)
    assert m, err[-400:]
    return int(m.group(1))


@pytest.mark.parametrize("sig,who,code", [
    (signal.SIGINT, "main", EXIT_INTERRUPTED),
    (signal.SIGTERM, "main", EXIT_INTERRUPTED),
    (signal.SIGKILL, "child", EXIT_FAULT),
])
def test_batch_stopped_midway_keeps_every_finished_row(tmp_path, sig, who, code):
    (tmp_path / "b.txt").write_text(BATCH)
    p = _start(["batch", "b.txt", *ARGS, "--csv", "out.csv"], tmp_path)
    seen = _wait_for(p, "[3/5]")
    os.kill(p.pid if who == "main" else _measuring_child(p.pid), sig)
    _, err = p.communicate(timeout=120)
    err = seen + err
    assert p.returncode == code, err[-600:]
    rows = _rows(tmp_path / "out.csv")
    assert len(rows) == _wrote(err) >= 4  # two points of two paths had finished
    assert all(r["status"] for r in rows) and "Traceback" not in err
    if code == EXIT_FAULT:
        assert "measuring process stopped unexpectedly" in err.strip().splitlines()[-1]


@pytest.mark.parametrize("sig,who,code", [
    (signal.SIGINT, "main", EXIT_INTERRUPTED),
    (signal.SIGKILL, "child", EXIT_FAULT),
])
def test_model_stopped_in_mode_3_keeps_the_finished_modes(tmp_path, sig, who, code):
    p = _start([*MODEL, "--csv", "m.csv"], tmp_path)
    seen = _wait_for(p, "mode 3/")
    os.kill(p.pid if who == "main" else _measuring_child(p.pid), sig)
    _, err = p.communicate(timeout=120)
    err = seen + err
    assert p.returncode == code, err[-600:]
    rows = _rows(tmp_path / "m.csv")
    assert len(rows) == _wrote(err)
    assert [r["mode"] for r in rows if r["kind"] == "mode"][:2] == ["nchw", "channels_last"]
    assert any(r["kind"] == "layer_path" for r in rows) and "Traceback" not in err


def test_kill_9_of_the_main_process_leaves_a_child_that_ends_quietly(tmp_path):
    (tmp_path / "b.txt").write_text(BATCH)
    err_file = tmp_path / "err.txt"
    e = {**os.environ, "MKLDNN_EXPLORER_CACHE": str(tmp_path / "cache")}
    e.pop("MKLDNN_EXPLORER_IN_PROCESS", None)
    with open(err_file, "w") as err:
        p = subprocess.Popen([sys.executable, "-m", "explorer", "batch", "b.txt", *ARGS, "--csv", "out.csv"],
                             cwd=tmp_path, env=e, stdout=subprocess.DEVNULL, stderr=err, preexec_fn=_sigint_default)
        deadline = time.monotonic() + 240
        while "[2/5]" not in err_file.read_text():
            assert time.monotonic() < deadline and p.poll() is None
            time.sleep(0.2)
        child = _measuring_child(p.pid)
        assert child is not None
        p.kill()
        p.wait()
        deadline = time.monotonic() + 60
        while os.path.exists(f"/proc/{child}") and "Z" not in _state(child):
            assert time.monotonic() < deadline, "the orphaned measuring process did not end"
            time.sleep(0.2)
    text = err_file.read_text()
    assert "Traceback" not in text and "BrokenPipeError" not in text, text[-800:]
    assert len(_rows(tmp_path / "out.csv")) >= 2  # the first point's rows were already on disk


def _state(pid: int) -> str:
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def test_signals_are_ignored_once_the_command_has_answered(monkeypatch):
    """A Ctrl+C while the interpreter exits (the atexit shutdown of the measuring process) printed
    "Exception ignored in atexit callback ... KeyboardInterrupt": after the answer, signals are ignored."""
    from explorer import launch

    monkeypatch.setattr(launch, "run_gui", lambda args: 0)
    saved = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        assert launch.main(["run", "mb1ic8ih6oc8kh3ph1", "--list"]) == 0
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, saved[0])
        signal.signal(signal.SIGTERM, saved[1])


def test_ctrl_c_during_exit_prints_no_traceback(tmp_path):
    """The real thing: SIGINT right after the answer, while the measuring process is being shut down."""
    e = {**os.environ, "MKLDNN_EXPLORER_CACHE": str(tmp_path / "cache")}
    e.pop("MKLDNN_EXPLORER_IN_PROCESS", None)
    p = subprocess.Popen([sys.executable, "-m", "explorer", "run", "mb1ic8ih8oc8oh8kh3ph1", "--paths", "dense",
                          "--threads", "1", "--budget-ms", "20", "--no-trace"], cwd=tmp_path, env=e,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_sigint_default)
    seen = _wait_for(p, "allocator:")
    for _ in range(5):
        if p.poll() is not None:
            break
        p.send_signal(signal.SIGINT)
        time.sleep(0.05)
    _, err = p.communicate(timeout=60)
    assert "Exception ignored" not in seen + err and "Traceback" not in seen + err
    assert p.returncode in (0, EXIT_INTERRUPTED)
