"""#33: a settings file or a session file with a number out of range or not finite (budget_ms=1e308, inf,
threads=99999999999) once crashed the window at every start, or threw on open. Now a settings number is
reset to its default with a status line, and a session file is refused with one sentence."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# What a hand-edited file may hold for a number: any integer, any float (huge, inf, nan), and some text.
NUMBERS = st.one_of(
    st.integers(min_value=-(10 ** 30), max_value=10 ** 30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["inf", "-inf", "nan", "1e308", "99999999999", "1e400", "abc", "", "12.5"]),
)
FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _ini_text(v) -> str:
    return v if isinstance(v, str) else repr(v)


@FUZZ
@given(threads=NUMBERS, budget=NUMBERS)
def test_any_number_in_the_settings_file_starts_the_window(tmp_path, monkeypatch, qtbot, threads, budget):
    import os

    from explorer.gui.app import create_window, make_settings
    from explorer.gui.window.main_window import SETTINGS_VERSION

    ini = tmp_path / "strange.ini"
    ini.write_text(f"[General]\nversion={SETTINGS_VERSION}\nthreads={_ini_text(threads)}\n"
                   f"budget_ms={_ini_text(budget)}\n")
    monkeypatch.setenv("MKLDNN_EXPLORER_SETTINGS", str(ini))
    win = create_window(make_settings())
    qtbot.addWidget(win)
    try:
        cores = os.cpu_count() or 1
        t, b = win.panel.threads_spin.value(), win.panel.budget_spin.value()
        assert 0 <= t <= cores and 1 <= b <= 600_000
        try:
            t_in = float(_ini_text(threads))
            t_fine = t_in == t
        except ValueError:
            t_fine = False
        try:
            b_in = float(_ini_text(budget))
            b_fine = 1 <= b_in <= 600_000 and b == round(b_in)
        except ValueError:
            b_fine = False
        if not (t_fine and b_fine):  # a value that was not taken as it stands is said so in the status line
            assert "reset to" in win.status_label.text()
    finally:
        win.settings = None  # do not write the fuzzed file back
        win.close()


def _session(options: dict) -> str:
    return json.dumps({"format": "mkldnn-explorer-session", "version": 1,
                       "spec": {"desc": "mb1ic8ih6oc8oh6kh3ph1", "dtype": "f32", "bias": True},
                       "options": options, "results": []})


@FUZZ
@given(field=st.sampled_from(["threads", "budget_ms"]), value=NUMBERS)
def test_any_number_in_a_session_file_opens_or_is_one_sentence(qtbot, tmp_path, field, value):
    from explorer.core.errors import InputError
    from explorer.core.session.store import load_session

    text = _session({"paths": ["dense"]}).replace('"paths"', f'"{field}": {_ini_text(value)}, "paths"')
    p = tmp_path / "s.json"
    p.write_text(text)
    try:
        load_session(p)
    except InputError as e:
        assert "\n" not in str(e) and str(e).endswith(".")
        return
    from explorer.gui.app import create_window

    win = create_window(None, restore=False)
    qtbot.addWidget(win)
    try:
        assert win.open_session(str(p))
        assert not win.session.errors
    finally:
        win.close()


def test_a_session_with_large_or_negative_figures_opens_and_every_tab_draws(qtbot, tmp_path):
    """A session's figures as large as the file rule allows (2**53) or a negative GFLOP/s (a hand edit) once
    crashed a tab as it was shown (the roofline placed a NaN point: a segfault). Now each tab draws them or
    leaves the point out; what the file rule refuses is covered in tests/core/session/test_session_numbers.py."""
    from explorer.gui.app import create_window
    from tests.core.session.test_session_numbers import MAX_FILE_NUMBER, PLACES, _saved, _set

    for value in (float(MAX_FILE_NUMBER), -5.0):
        data = _saved(tmp_path)
        for _what, keys in PLACES:
            if keys[-1] in ("gflops", "speedup", "margin") or (value > 0 and keys[-1] not in ("threads", "samples")):
                data = _set(data, keys, value)
        p = tmp_path / "s.json"
        p.write_text(json.dumps(data))
        win = create_window(None, restore=False)
        qtbot.addWidget(win)
        win.show()  # a tab draws when it is shown
        try:
            assert win.open_session(str(p)), win.status_label.text()
            for k in range(win.tabs.count()):
                win.tabs.setCurrentIndex(k)
                qtbot.wait(20)
            assert not win.session.errors
        finally:
            win.close()
