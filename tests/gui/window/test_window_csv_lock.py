"""Issue 33, one writer per CSV, the window's side: a run of the window on a CSV another process writes is
refused in one sentence naming it (nothing measured, the file untouched); while the window writes its CSV, a
command on the same file is refused naming the window's process."""

import os
import subprocess
import sys

from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.results import read_csv

TINY = "mb1ic8ih8oc8oh8kh3ph1"


def test_a_window_run_on_a_csv_another_process_writes_is_refused_naming_it(make_window, qtbot, tmp_path):
    out = tmp_path / "shared.csv"
    out.write_text("theirs\n")
    code = ("import sys; from explorer.core.output_lock import lock_output; "
            f"l = lock_output({str(out)!r}); print('held', flush=True); sys.stdin.read()")
    holder = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        win = make_window(spec=parse_descriptor(TINY), options={"paths": ["dense"], "budget_ms": 5},
                          csv_path=str(out))
        with qtbot.waitSignal(win.run_failed, timeout=60_000) as failed:
            assert win.start_run()
        message = failed.args[0]
        assert f"is being written by another process (pid {holder.pid}" in message
        assert message in win.status_label.text() and not win.model.results
        assert out.read_text() == "theirs\n"
    finally:
        holder.stdin.close()
        holder.wait()


def test_a_command_on_the_csv_the_window_writes_is_refused_naming_the_window(make_window, qtbot, tmp_path):
    out = tmp_path / "win.csv"
    win = make_window(spec=parse_descriptor(TINY), options={"paths": ["dense", "mkldnn"], "budget_ms": 4000},
                      csv_path=str(out))
    win.start_run()
    qtbot.waitUntil(lambda: len(win.model.results) == 1, timeout=120_000)  # the window's first row is on disk
    env = {**os.environ, "MKLDNN_EXPLORER_IN_PROCESS": "1", "MKLDNN_EXPLORER_CACHE": str(tmp_path / "cache")}
    other = subprocess.run([sys.executable, "-m", "explorer", "run", TINY, "--paths", "dense", "--budget-ms", "5",
                            "--csv", str(out), "--force"], capture_output=True, text=True, env=env, timeout=300)
    assert win.running, "the window's run ended before the command was tried: make it longer"
    err = other.stderr.strip().splitlines()
    assert other.returncode == 2 and len(err) == 1, other.stderr[-600:]
    assert f"pid {os.getpid()}" in err[0] and "is being written by" in err[0]
    win.stop_run()
    qtbot.waitUntil(lambda: not win.running, timeout=60_000)
    assert [r["path"] for r in read_csv(out)][:1] == ["dense"]  # the window's row, not the command's
