"""Issue 23: the window's run with --exit-when-done, stopped by SIGINT or SIGTERM, keeps its finished rows and
exits 130 with a word (it exited 0 silently); --force onto a FIFO or a device is refused as in the CLI."""

import csv
import os
import signal
import subprocess
import sys
import time

import pytest

TINY = "mb2ic16ih14oc16oh14kh3ph1"


def _env(tmp_path):
    env = dict(os.environ)
    env.update(QT_QPA_PLATFORM="offscreen", MKLDNN_EXPLORER_SETTINGS=str(tmp_path / "s.ini"),
               MKLDNN_EXPLORER_CACHE=str(tmp_path / "cache"), MKLDNN_EXPLORER_NO_DIALOGS="1")
    env.pop("MKLDNN_EXPLORER_IN_PROCESS", None)
    return env


def _rows(path):
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError:
        return []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_window_run_stopped_by_a_signal_exits_130_with_its_rows(tmp_path, sig):
    out = tmp_path / "g.csv"
    p = subprocess.Popen([sys.executable, "-m", "explorer", "gui", TINY, "--run", "--budget-ms", "400",
                          "--threads", "1", "--csv", str(out), "--exit-when-done"], env=_env(tmp_path),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while len(_rows(out)) < 1:
        assert time.monotonic() < deadline and p.poll() is None, p.stderr.read() if p.poll() is not None else ""
        time.sleep(0.1)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    rows = _rows(out)
    assert 1 <= len(rows) < 6 and all(r["status"] for r in rows)
    assert "interrupted" in err and "Traceback" not in err


def test_window_refuses_a_fifo_even_with_force(tmp_path):
    fifo = tmp_path / "shot.png"
    os.mkfifo(fifo)
    p = subprocess.run([sys.executable, "-m", "explorer", "gui", TINY, "--screenshot", str(fifo), "--force",
                        "--exit-when-done"], env=_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "FIFO" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert os.path.exists(fifo) and not os.path.isfile(fifo)
