"""Screenshots of every tab in both themes from a reopened session: a 6-path run (3 noisy), a baseline kept for
Compare, a 2x2 sweep over six paths and a model report (rows constructed, not measured: this shows the window).

    Xvfb :35 -screen 0 1024x700x24 &
    DISPLAY=:35 QT_QPA_PLATFORM=xcb .venv/bin/python tests/benchmarks/shot_every_tab.py /work/shots/me 1024

writes <folder>/<tag>-<theme>-<tab>.png (`import -window root` under X, the window's own grab offscreen).
"""

import os
import subprocess
import sys
import tempfile


def main() -> int:
    out, tag = sys.argv[1], sys.argv[2]
    os.environ.setdefault("MKLDNN_EXPLORER_SETTINGS", tempfile.mktemp(suffix=".ini"))
    os.environ["MKLDNN_EXPLORER_NO_DIALOGS"] = "1"
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from explorer.core.paths.base import PATHS
    from explorer.core.session.state import ModelDone
    from explorer.gui.app import create_window, make_app, make_settings
    from tests.core.session.test_session_state import _report
    from tests.gui.window.test_small_screen_fit import SPEC, _grid_2x2, _rows

    app = make_app()

    def settle(n=15):
        for _ in range(n):
            app.processEvents()

    first = create_window(make_settings(), spec=SPEC, restore=False)
    first.session.set_results(_rows(PATHS[:6]), SPEC)
    first.baseline_view.keep_current()
    first.sweep_view.restore_state(_grid_2x2())
    first.session.apply(ModelDone(_report()))
    session = tempfile.mktemp(suffix=".json")
    first.save_session(session, ask=False)
    first.close()
    win = create_window(make_settings(), restore=False)
    win.resize_within_screen(1440, 900)
    win.show()
    settle()
    win.open_session(session)
    settle()
    x11 = not os.environ.get("QT_QPA_PLATFORM", "").startswith("offscreen")
    for theme in ("light", "dark"):
        win.apply_theme(theme)
        for i in range(win.tabs.count()):
            win.tabs.setCurrentIndex(i)
            settle()
            if win.tabs.currentWidget() is win.tabs.widget(1):
                win.sweep_view.redraw_now()
                settle()
            path = os.path.join(out, f"{tag}-{theme}-{win.tabs.tabText(i).lower()}.png")
            if x11:
                subprocess.run(["import", "-window", "root", path], check=True)
            else:
                win.grab().save(path)
            print(path, f"{win.width()}x{win.height()}")
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
