"""A relaunch opens where the last window closed, within the screen, with no drift (#34): Qt's restoreGeometry
moved the window by a guessed title bar each time (25 px lower per launch without a window manager)."""

import json
import os
import subprocess
import sys

import pytest

from tests.gui.window.test_screens import SMALL, screen_platform

_RELAUNCH = r"""
import json, sys
from PySide6.QtCore import QRect
from PySide6.QtWidgets import QApplication
from explorer.gui.app import create_window, make_app, make_settings

app = make_app()
first = json.loads(sys.argv[1])
seen = []
for i in range(4):
    win = create_window(make_settings())
    if not getattr(win, "placed", False):  # as `gui` without --size: 1440x900 fitted to the screen
        win.resize_within_screen(1440, 900)
    win.show()
    if i == 0 and first:
        win.setGeometry(QRect(*first))  # where the user moved it
    for _ in range(5):
        app.processEvents()
    g, f = win.geometry(), win.frameGeometry()
    a = win.screen().availableGeometry()
    seen.append({"rect": [g.x(), g.y(), g.width(), g.height()], "frame": [f.x(), f.y(), f.width(), f.height()],
                 "avail": [a.x(), a.y(), a.width(), a.height()]})
    win.close()  # saves the settings, as quitting does
    app.processEvents()
print(json.dumps(seen))
"""


def _relaunch(tmp_path, rect):
    env = dict(os.environ, QT_QPA_PLATFORM=screen_platform(tmp_path, *SMALL), MKLDNN_EXPLORER_NO_DIALOGS="1",
               MKLDNN_EXPLORER_SETTINGS=str(tmp_path / "s.ini"), MKLDNN_EXPLORER_CACHE=str(tmp_path / "c"))
    p = subprocess.run([sys.executable, "-c", _RELAUNCH, json.dumps(rect)], env=env, capture_output=True, text=True,
                       timeout=240)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def _inside(frame, avail):
    x, y, w, h = frame
    ax, ay, aw, ah = avail
    return ax <= x and ay <= y and x + w <= ax + aw and y + h <= ay + ah


@pytest.mark.parametrize("first", [None, [30, 40, 990, 640]], ids=["as-opened", "moved-by-the-user"])
def test_relaunching_keeps_the_same_place_and_size(tmp_path, first):
    seen = _relaunch(tmp_path, first)
    rects = [s["rect"] for s in seen]
    assert rects == [rects[0]] * len(rects), rects
    assert all(_inside(s["frame"], s["avail"]) for s in seen), seen
