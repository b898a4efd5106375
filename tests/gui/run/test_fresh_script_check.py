"""The Run tab's "Check in a fresh script": the selected row's script runs off the GUI thread and its result
shows in the row; beyond +-10% the row says "not reproduced in a fresh script" with both figures."""

from __future__ import annotations

import re
import threading
from pathlib import Path

from PySide6.QtCore import Qt

from explorer.core.measure import interference as itf
from explorer.core.problem.spec import parse_descriptor
from explorer.core.process import verify as verify_mod
from explorer.gui.run.results_model import HEADERS

TINY = "mb1ic8ih6oc8oh6kh3ph1"


def _window_with_rows(make_window, qtbot, monkeypatch, tmp_path):
    from explorer.gui.jobs import measure

    monkeypatch.setattr(measure, "IN_CHILD", False)
    monkeypatch.setenv("MKLDNN_EXPLORER_IN_PROCESS", "1")
    # trusted rows whatever the machine's load: a noisy row's disagreement is "~ uncertain", never a verdict
    monkeypatch.setattr(itf, "judge", lambda i, min_samples: itf.Verdict("ok", ""))
    win = make_window(spec=parse_descriptor(TINY), options={"paths": ["dense", "mkldnn"], "budget_ms": 5, "trace": False},
                      csv_path=str(tmp_path / "g.csv"))
    assert not win.verify_button.isEnabled()  # no row yet
    with qtbot.waitSignal(win.run_finished, timeout=60_000):
        assert win.start_run()
    return win


def _cell(win, path, name="fresh script", role=Qt.DisplayRole):
    m = win.model
    row = [r.path for r in m.results].index(path)
    return m.data(m.index(row, HEADERS.index(name)), role)


def test_a_disagreement_shows_in_the_row(make_window, qtbot, monkeypatch, tmp_path):
    threads = []

    def run_script(path, allocator, python=None, timeout_s=0):
        threads.append(threading.current_thread() is threading.main_thread())
        row_ms = float(re.search(r"The row measured (\S+) ms", Path(path).read_text()).group(1))
        return verify_mod.ScriptFigure(row_ms * 2.0)  # twice as long on a quiet machine: not reproduced

    monkeypatch.setattr(verify_mod, "run_script", run_script)
    win = _window_with_rows(make_window, qtbot, monkeypatch, tmp_path)
    assert win.select_path("mkldnn") and win.verify_button.isEnabled()
    assert _cell(win, "mkldnn") == ""
    assert win.verify_selected()
    qtbot.waitUntil(lambda: not win.verify_worker.running, timeout=60_000)
    assert threads == [False]  # off the GUI thread
    r = {r.path: r for r in win.model.results}["mkldnn"]
    text = _cell(win, "mkldnn")
    assert text.startswith("not reproduced in a fresh script")
    assert f"{r.median_ms:.4g} ms" in text and f"{r.verify_median_ms:.4g} ms" in text and "(0.50x)" in text
    assert _cell(win, "dense") == ""  # only the selected row was checked
    assert win.selected_result() is r  # the selection stays
    assert Path(r.verify_script).parent == tmp_path / "g-verify" and "not reproduced" in win.status_label.text()


def test_a_real_fresh_script_from_the_window(make_window, qtbot, monkeypatch, tmp_path):
    win = _window_with_rows(make_window, qtbot, monkeypatch, tmp_path)
    assert win.select_path("dense")
    assert win.verify_selected()
    assert not win.verify_button.isEnabled()  # one check at a time
    qtbot.waitUntil(lambda: not win.verify_worker.running, timeout=300_000)
    r = {r.path: r for r in win.model.results}["dense"]
    assert r.verify_median_ms and r.verify_median_ms > 0
    want = f"{r.verify_median_ms:.4g} ms · {r.verify_ratio:.2f}x"
    assert _cell(win, "dense") == (want if not r.verify_note else r.verify_note)
    assert win.verify_button.isEnabled()
