"""Screenshot of the Model tab after a real run (the measurement runs in the measuring child process).

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/benchmarks/shot_model_tab.py resnet50 /tmp/model_tab.png \
        [--input 1,3,224,224] [--threads 1] [--budget-ms 100] [--mode-budget-ms 1000] [--size WxH] [--theme dark]

With DISPLAY set (e.g. Xvfb) and no QT_QPA_PLATFORM it is a real X window.
"""

import argparse
import os
import sys
import tempfile


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("png")
    ap.add_argument("--input", default="")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--budget-ms", type=float, default=100.0)
    ap.add_argument("--mode-budget-ms", type=float, default=1000.0)
    ap.add_argument("--size", default="1440x900")
    ap.add_argument("--theme", choices=("light", "dark"), default=None)
    a = ap.parse_args()
    os.environ.setdefault("MKLDNN_EXPLORER_SETTINGS", os.path.join(tempfile.mkdtemp(), "settings.ini"))
    from PySide6.QtCore import QTimer

    from explorer.core.jobs.options import RunOptions
    from explorer.core.paths.base import PATHS
    from explorer.gui.app import create_window, make_app, make_settings
    from explorer.gui.jobs import measure

    app = make_app()
    win = create_window(make_settings())
    w, h = (int(x) for x in a.size.split("x"))
    win.resize(w, h)
    if a.theme:
        win.apply_theme(a.theme)
    win.show()
    view = win.model_view
    win.tabs.setCurrentWidget(win.model_tab)
    view.set_model(a.model)
    view.set_input(a.input)
    view.set_options(RunOptions(paths=PATHS, budget_ms=a.budget_ms, threads=a.threads, trace=False))
    view.set_mode_budget(a.mode_budget_ms)

    def done(_cancelled):
        app.processEvents()
        ok = win.save_screenshot(a.png, ask=False)
        print(view.answer.text())
        print(("saved " if ok else "could not save ") + a.png, file=sys.stderr)
        win.close()
        app.exit(0 if ok else 1)

    view.finished.connect(lambda c: QTimer.singleShot(300, lambda: done(c)))
    QTimer.singleShot(200, view.run)
    code = app.exec()
    measure.shutdown(1.0)
    return code


if __name__ == "__main__":
    sys.exit(main())
