"""The Run table says what a row timed in its own columns: a backward direction, the post-ops and the io tag
of the line (before, only the CSV had them, and a BWD_D row read like a forward one in the window)."""

from PySide6.QtCore import Qt

from explorer.core.problem.spec import parse_descriptor
from explorer.gui.run.results_model import HEADERS

TINY = "mb2ic16ih14oc16oh14kh3ph1"


def _cells(win, column):
    m = win.model
    return [m.data(m.index(r, HEADERS.index(column)), Qt.DisplayRole) for r in range(m.rowCount())]


def _run(make_window, qtbot, spec, path="dense"):
    win = make_window(spec=spec, options={"paths": [path], "budget_ms": 5})
    with qtbot.waitSignal(win.run_finished, timeout=60_000):
        assert win.start_run()
    return win


def test_a_backward_row_says_its_direction(make_window, qtbot):
    win = _run(make_window, qtbot, parse_descriptor(TINY).replace(direction="BWD_D"))
    assert win.model.rowCount() >= 1
    assert set(_cells(win, "dir")) == {"BWD_D"}
    assert set(_cells(win, "post-ops")) == {""}


def test_a_post_ops_row_says_its_post_ops_and_tag(make_window, qtbot):
    # axb (channels-last in and out) is what the channels_last path takes; dense would refuse it by name
    win = _run(make_window, qtbot, parse_descriptor(TINY).replace(post_ops="relu", io_tag="axb"), "channels_last")
    assert win.model.rowCount() >= 1
    assert set(_cells(win, "post-ops")) == {"relu"}
    assert set(_cells(win, "io tag")) == {"axb"}
    assert set(_cells(win, "dir")) == {"FWD_B"}


def test_a_pasted_line_keeps_its_post_ops_and_tag_through_a_field_edit(make_window, qtbot):
    # before, the form rebuilt the spec from its fields alone: a pasted --attr-post-ops vanished from the
    # field and the run timed the plain conv
    win = make_window()
    panel = win.panel
    panel.set_descriptor(f"--attr-post-ops=sum+relu --stag=axb --dtag=axb {TINY}")
    assert panel.spec.post_ops == "sum+relu" and panel.spec.io_tag == "axb"
    assert "--attr-post-ops=sum+relu" in panel.desc_edit.text() and "--stag=axb" in panel.desc_edit.text()
    panel.fields["mb"].selectAll()
    qtbot.keyClicks(panel.fields["mb"], "3")  # a field edit, typed: it keeps the line's words
    assert panel.spec.mb == 3 and panel.spec.post_ops == "sum+relu" and panel.spec.io_tag == "axb"
    assert "--attr-post-ops=sum+relu" in panel.desc_edit.text()
    panel.set_descriptor(TINY)  # a line without them: the plain conv
    assert panel.spec.post_ops == "" and panel.spec.io_tag == ""
    assert "--attr" not in panel.desc_edit.text()
