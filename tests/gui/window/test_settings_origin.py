"""#35: the window restores budget, theme and problem from the user's settings file, so a "fresh" window shows
an earlier session's choices. It now says where they came from, and File > Reset settings to defaults gives
the window a first launch shows."""

from __future__ import annotations


def _window(qtbot, monkeypatch, ini):
    from explorer.gui.app import create_window, make_settings

    monkeypatch.setenv("MKLDNN_EXPLORER_SETTINGS", str(ini))
    win = create_window(make_settings())
    qtbot.addWidget(win)
    return win


def test_a_restored_window_says_where_its_settings_came_from_and_resets_to_defaults(qtbot, monkeypatch, tmp_path):
    ini = tmp_path / "mine.ini"
    first = _window(qtbot, monkeypatch, tmp_path / "unused.ini")
    defaults = first.panel.options(), first.panel.spec.descriptor()
    assert "restored from" not in first.status_label.text()  # nothing to restore: nothing claimed
    first.close()

    win = _window(qtbot, monkeypatch, ini)
    win.panel.set_options(budget_ms=37, threads=1)
    from explorer.core.problem.spec import parse_descriptor

    win.panel.set_spec(parse_descriptor("mb3ic5ih9oc7oh9kh3ph1"))
    win.apply_theme("dark" if win.theme == "light" else "light")
    theme = win.theme
    win.save_settings()
    win.close()

    again = _window(qtbot, monkeypatch, ini)
    assert again.panel.options()["budget_ms"] == 37 and again.theme == theme
    status = again.status_label.text()
    assert str(ini) in status and "Reset settings to defaults" in status
    assert again.reset_settings_action.text() == "Reset settings to defaults"

    again.reset_settings_action.trigger()
    assert again.panel.options() == defaults[0]
    assert "reset to the defaults" in again.status_label.text()
    assert again.panel.spec.descriptor() == defaults[1]  # the default preset, not the last problem
    again.close()  # closing saves the window as it now is: the next launch shows the defaults too
    last = _window(qtbot, monkeypatch, ini)
    assert last.panel.options()["budget_ms"] == defaults[0]["budget_ms"]
