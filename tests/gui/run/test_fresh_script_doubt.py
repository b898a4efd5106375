"""The Run tab's "Check in a fresh script" on a disturbed script figure (issue 34): the row said
"not reproduced (0.03x)" from one figure that was itself disturbed, with no doubt mark. It is measured again,
then the cell reads "~0.03x uncertain ...", never "not reproduced"."""

import re
from pathlib import Path

from explorer.core.process import verify as verify_mod
from tests.gui.run.test_fresh_script_check import _cell, _window_with_rows

BUSY = "other programs used 80% of the machine's CPU time while it ran"


def test_a_disturbed_script_figure_is_marked_in_the_row(make_window, qtbot, monkeypatch, tmp_path):
    runs = []

    def run_script(path, allocator, python=None, timeout_s=0):
        runs.append(path)
        row_ms = float(re.search(r"The row measured (\S+) ms", Path(path).read_text()).group(1))
        return verify_mod.ScriptFigure(row_ms * 30.0, row_ms, BUSY)  # 0.03x, on a machine busy elsewhere

    monkeypatch.setattr(verify_mod, "run_script", run_script)
    win = _window_with_rows(make_window, qtbot, monkeypatch, tmp_path)
    r = {r.path: r for r in win.model.results}["dense"]
    r.quality = "ok"  # the row itself trusted: only the script's figure is in doubt
    assert win.select_path("dense") and win.verify_selected()
    qtbot.waitUntil(lambda: not win.verify_worker.running, timeout=60_000)
    assert len(runs) == verify_mod.SCRIPT_ATTEMPTS  # measured again before any word
    text = _cell(win, "dense")
    assert text.startswith("~0.03x uncertain in a fresh script") and "not reproduced" not in text
    assert BUSY in text and "not reproduced" not in win.status_label.text()
    assert "~0.03x" in win.status_label.text()
