"""`mkldnn-explorer gui`: validate everything Qt-free first, then open the window.

Exit codes: 0 done, 2 bad input or no display (a screenshot folder that does not exist included), 3 the run
failed or the screenshot could not be written, 130 Ctrl+C or SIGTERM. --screenshot alone also exits when
done. With --exit-when-done the last stdout line reports how late a 10 ms QTimer probe fired during the run
(the event loop's stalls).
"""

from __future__ import annotations

import os
import sys
import time

ORG = "MKLDNN Explorer"
APP = "mkldnn-explorer"
SETTINGS_ENV = "MKLDNN_EXPLORER_SETTINGS"  # an .ini path: isolates settings (tests, scripted runs)
HEADLESS_PLATFORMS = ("offscreen", "minimal", "minimalegl", "vnc", "eglfs", "linuxfb", "vkkhrdisplay")
# The CLI's codes (explorer.cli.common): a failed run or an output that could not be written is a fault (3).
EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 3, 2, 130
_STYLE = None


def display_problem(env=None) -> str | None:
    """One sentence when no window can open here, else None (never asks Qt, so it cannot crash)."""
    env = os.environ if env is None else env
    platform = env.get("QT_QPA_PLATFORM", "").split(":")[0].strip().lower()
    if platform in HEADLESS_PLATFORMS:
        return None
    if sys.platform.startswith("linux") or "bsd" in sys.platform:
        if platform.startswith("wayland") and env.get("WAYLAND_DISPLAY"):
            return None
        if not env.get("DISPLAY") and not env.get("WAYLAND_DISPLAY"):
            return ("no display found (DISPLAY and WAYLAND_DISPLAY are unset): set QT_QPA_PLATFORM=offscreen "
                    "for a headless window, or use the command line (mkldnn-explorer run DESC).")
    return None


DEFAULT_SIZE = "1440x900"  # without --size and before any window was closed (else that window's place)


def parse_size(text: str) -> tuple[int, int]:
    from explorer.core.errors import InputError

    try:
        w, h = (int(v) for v in text.lower().replace("×", "x").split("x"))
    except ValueError:
        raise InputError(f"--size must look like 1440x900, got {text!r}.", "size") from None
    if not (320 <= w <= 10000 and 240 <= h <= 10000):
        raise InputError(f"--size {w}x{h} is outside 320x240 .. 10000x10000.", "size")
    return w, h


def _check_inputs(args):
    """Everything a bad argument can break, checked before Qt starts. Raises SpecError/InputError."""
    from explorer.core.errors import InputError
    from explorer.core.jobs.options import RunOptions, expand_paths
    from explorer.core.problem.spec import parse_dtype
    from explorer.core.report.results import check_writable

    spec = None
    dtype = parse_dtype(args.dtype) if getattr(args, "dtype", None) else None
    bias = False if getattr(args, "no_bias", False) else None
    if args.desc:
        from explorer.core.problem.spec import parse_descriptor

        spec = parse_descriptor(args.desc, dtype=dtype, bias=bias)
    paths = expand_paths(args.paths)
    opts = RunOptions(paths=paths, threads=args.threads, budget_ms=args.budget_ms, trace=not args.no_trace,
                      allocator=getattr(args, "allocator", None) or "tuned", isa=getattr(args, "isa", None)).validate()
    size = parse_size(args.size or DEFAULT_SIZE)
    varies = list(getattr(args, "vary", None) or [])
    if varies or getattr(args, "batch", None):
        from explorer.core.problem.sweep_plan import parse_varies

        if varies and args.batch:
            raise InputError("give --vary or --batch, not both.", "vary")
        if varies:
            if spec is None:
                raise InputError("--vary needs a descriptor to sweep (gui DESC --vary g=divisors).", "vary")
            parse_varies(varies)
        else:
            from explorer.core.problem.batch import load_batch

            load_batch(args.batch)
    force = getattr(args, "force", False)
    if args.csv:
        check_writable(args.csv, overwrite=force)
    if getattr(args, "timeline", None):
        check_writable(args.timeline, overwrite=force)
    if args.screenshot:
        check_writable(args.screenshot, overwrite=force)
    return spec, opts, size, dtype, bias


class StallProbe:
    """A 10 ms QTimer; each tick's lateness is how long the event loop could not run (a stall)."""

    def __init__(self, interval_ms: int = 10):
        from PySide6.QtCore import Qt, QTimer

        self.interval_s = interval_ms / 1000.0
        self.timer = QTimer()
        self.timer.setTimerType(Qt.PreciseTimer)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)
        self.lateness_ms: list[float] = []
        self._last = 0.0

    def start(self) -> None:
        self._last = time.perf_counter()
        self.timer.start()

    def stop(self) -> None:
        if self.timer.isActive():
            self._tick()  # the tick that is due now: a stall right before stop must count too
        self.timer.stop()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.lateness_ms.append(max(0.0, (now - self._last - self.interval_s) * 1000.0))
        self._last = now

    def summary(self) -> tuple[float, float, int]:
        import numpy as np

        if not self.lateness_ms:
            return 0.0, 0.0, 0
        a = np.asarray(self.lateness_ms)
        return float(np.percentile(a, 99)), float(a.max()), int(a.size)

    def line(self) -> str:
        p99, mx, n = self.summary()
        return f"event-loop stalls: p99 {p99:.1f} ms, max {mx:.1f} ms ({n} ticks)"


def make_settings():
    from PySide6.QtCore import QSettings

    path = os.environ.get(SETTINGS_ENV)
    if path:
        return QSettings(path, QSettings.IniFormat)
    return QSettings(QSettings.IniFormat, QSettings.UserScope, ORG, APP)


def make_app(argv=None):
    """The QApplication with Fusion style, the app icon and names (reused if one exists)."""
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        app = QApplication(argv if argv is not None else [sys.argv[0]])
    app.setOrganizationName(ORG)
    app.setApplicationName(APP)
    app.setApplicationDisplayName("MKLDNN Explorer")
    from explorer.gui.common.style import AppStyle

    if not isinstance(app.style(), AppStyle):
        global _STYLE
        _STYLE = AppStyle()  # Fusion, with indicators visible in both themes (kept alive here, not only by Qt)
        app.setStyle(_STYLE)
    try:
        from importlib import resources

        icon = resources.files("explorer.resources").joinpath("icons/app.svg")
        with resources.as_file(icon) as p:
            app.setWindowIcon(QIcon(str(p)))
    except (OSError, ModuleNotFoundError):
        pass
    return app


def system_theme(app) -> str:
    from PySide6.QtGui import QPalette

    return "dark" if app.palette().color(QPalette.Window).lightness() < 128 else "light"


def select_tab(win, name: str) -> bool:
    """Show the tab titled `name` (run, sweep, roofline, compare, model; any case). False when the window
    has no such tab (e.g. the Model tab when its view is not installed)."""
    for i in range(win.tabs.count()):
        if win.tabs.tabText(i).strip().lower() == name.strip().lower():
            win.tabs.setCurrentIndex(i)
            return True
    return False


def create_window(settings=None, spec=None, options: dict | None = None, csv_path=None, restore=True):
    """The main window on `spec` (else the last spec in QSettings, else the default preset)."""
    from explorer.gui.window.main_window import MainWindow

    app = make_app()
    win = MainWindow(settings=settings, csv_path=csv_path)
    win.apply_theme(system_theme(app))
    restored = win.restore_settings(restore_spec=spec is None) if restore else False
    if spec is not None:
        win.panel.set_spec(spec)
    elif not restored:
        win.panel.select_default_preset()
    if options:
        win.panel.set_options(**options)
    return win


def _close_on_signals(win) -> None:
    """SIGTERM and Ctrl+C close the window as the close button does: the run stops, finished rows stay.

    Python runs signal handlers only when it gets control, so a light timer hands it control while the Qt
    event loop (C++) waits."""
    import signal

    from PySide6.QtCore import QTimer

    def handler(signum, frame):
        win.setProperty("stopped_by_signal", signum)  # run_gui: exit 130 with a word, as the CLI does
        QTimer.singleShot(0, win.close)

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    tick = QTimer(win)
    tick.setInterval(200)
    tick.timeout.connect(lambda: None)
    tick.start()


def run_gui(args) -> int:
    if args.screenshot:
        args.exit_when_done = True  # a screenshot is taken when done; a window left open after it never wrote one
    problem = display_problem()
    if problem:
        print(f"mkldnn-explorer gui: {problem}", file=sys.stderr)
        return EXIT_BAD_INPUT
    spec, opts, (width, height), dtype, bias = _check_inputs(args)  # SpecError/InputError: the CLI prints them
    try:
        import pyqtgraph  # noqa: F401
        import PySide6  # noqa: F401
    except ImportError as e:
        print(f"mkldnn-explorer gui: the desktop app needs PySide6 and pyqtgraph ({e}).", file=sys.stderr)
        return EXIT_BAD_INPUT
    from PySide6.QtCore import QTimer

    import explorer.core.jobs.run  # noqa: F401 - load torch before the event loop runs, not inside it
    from explorer.gui.jobs import measure

    measure.prestart()  # the measuring process imports torch while the window builds
    app = make_app()
    settings = make_settings()
    options = {"paths": list(opts.paths), "threads": opts.threads or 0, "budget_ms": opts.budget_ms,
               "trace": opts.trace, "allocator": opts.allocator, "isa": opts.isa}
    # With --run the command line defines the whole run (defaults included), so a scripted run is
    # reproducible; otherwise only options given explicitly override the remembered ones.
    if args.run:
        explicit = options
    else:
        explicit = {k: v for k, v in options.items()
                    if not (k == "paths" and args.paths.strip() == "all") and not (k == "threads" and not args.threads)
                    and not (k == "budget_ms" and args.budget_ms == 500.0) and not (k == "trace" and not args.no_trace)
                    and not (k == "allocator" and getattr(args, "allocator", "tuned") == "tuned")
                    and not (k == "isa" and not getattr(args, "isa", None))}
    sweeping = bool(getattr(args, "vary", None) or getattr(args, "batch", None))
    win = create_window(settings, spec=spec, options=explicit or None, csv_path=None if sweeping else args.csv)
    if getattr(args, "theme", None):
        win.apply_theme(args.theme)
    sv = win.sweep_view
    if sweeping and sv is not None:
        sv.set_csv_sink(args.csv)
        if args.batch:
            sv.set_batch(args.batch)
        else:
            vs = [v.partition("=") for v in args.vary]
            sv.set_vary(vs[0][0].strip(), vs[0][2].strip(), vs[1][0].strip() if len(vs) > 1 else None,
                        vs[1][2].strip() if len(vs) > 1 else "")
    tab = getattr(args, "tab", None) or ("sweep" if sweeping else None)
    if tab and not select_tab(win, tab):
        print(f"the {tab.title()} tab is not in this window (its view is not installed); showing "
              f"{win.tabs.tabText(win.tabs.currentIndex())}", file=sys.stderr)
    if spec is None and (dtype or bias is not None):
        cur = win.panel.spec
        if cur is not None:
            win.panel.set_spec(cur.replace(dtype=dtype or cur.dtype, bias=cur.bias if bias is None else bias))
    if args.size or not getattr(win, "placed", False):  # else where the last window closed (window.placement)
        win.resize_within_screen(width, height)  # never past the screen, whatever --size asks
    win.show()

    probe = StallProbe()
    state = {"code": EXIT_OK, "done": False}

    def finish():
        if state["done"]:
            return
        state["done"] = True
        probe.stop()
        if args.screenshot:
            app.processEvents()
            win.timing.redraw()
            if sv is not None:
                sv.redraw_now()
            app.processEvents()
            if not win.save_screenshot(args.screenshot, ask=False):
                state["code"] = EXIT_FAILED
        if getattr(args, "timeline", None) and not win.export_timeline(args.timeline, ask=False):
            state["code"] = EXIT_FAILED
        if sweeping and sv is not None:
            rows = sv.results()
            if args.json:
                import json

                print(json.dumps({"results": [r.row() if hasattr(r, "row") else r for r in rows]}, indent=1))
            else:
                from explorer.core.report.counts import count_text

                print(f"sweep: {count_text(rows)}")
                if sv.data.mode == "batch":
                    from explorer.core.problem.batch import batch_summary

                    print("\n".join(batch_summary(rows, sv.baseline_combo.currentText()).lines()))
        elif args.json:
            import json

            print(json.dumps({"results": [r.row() for r in win.model.results]}, indent=1))
        else:
            from explorer.core.measure.interference import warning_line

            for r in win.model.results:
                noisy = r.status == "ok" and r.quality == "noisy"
                med = f"{'~' if noisy else ''}{r.median_ms:.4g} ms" if r.median_ms is not None else r.error[:80]
                print(f"{r.path:18s} {'noisy' if noisy else r.status:11s} {med}")
            warn = warning_line(win.model.results)
            if warn:
                print(warn)
        if args.csv:
            n = len(sv.results()) if (sweeping and sv is not None) else win.model.rowCount()
            print(f"wrote {n} rows to {args.csv}", file=sys.stderr)
        if args.screenshot:
            print(f"saved the window ({win.width()}x{win.height()}) to {args.screenshot}", file=sys.stderr)
        print(probe.line(), flush=True)
        win.close()
        app.exit(state["code"])

    def on_run_finished(cancelled: bool):
        probe.stop()
        if args.exit_when_done:
            if win.last_error:
                print(f"mkldnn-explorer gui: the run failed: {win.last_error}", file=sys.stderr)
                state["code"] = EXIT_FAILED
            QTimer.singleShot(250, finish)  # let the 30 Hz redraw and the views catch up before the screenshot

    win.run_finished.connect(on_run_finished)
    if sweeping and sv is not None:
        sv.finished.connect(on_run_finished)

    def start():
        probe.start()
        if sweeping and sv is not None:
            if not sv.run():
                print(f"mkldnn-explorer gui: cannot start the sweep: {sv.error or sv._last_status}", file=sys.stderr)
                state["code"] = EXIT_BAD_INPUT
                if args.exit_when_done:
                    finish()
            return
        if not win.start_run():
            msg = win.panel.error[0] if win.panel.error else win.status_label.text()
            print(f"mkldnn-explorer gui: cannot start the run: {msg}", file=sys.stderr)
            state["code"] = EXIT_BAD_INPUT
            if args.exit_when_done:
                finish()

    _close_on_signals(win)
    if args.run:
        QTimer.singleShot(200, start)
    elif args.exit_when_done:
        QTimer.singleShot(0, probe.start)
        QTimer.singleShot(500, finish)
    code = app.exec()
    measure.shutdown(1.0)  # asked to quit, killed if still busy: every finished row is already saved
    if win.property("stopped_by_signal"):
        n = win.model.rowCount() if not sweeping or sv is None else len(sv.results())
        where = f" ({n} in {args.csv})" if args.csv else ""
        print(f"interrupted: every finished row was kept{where}.", file=sys.stderr)
        return EXIT_INTERRUPTED
    return state["code"] if state["done"] else code
