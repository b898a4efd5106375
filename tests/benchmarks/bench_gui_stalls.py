"""GUI responsiveness while torch measures on every core: event-loop stalls of the real main window.

The main window is built as the app builds it (create_window, settings in an isolated .ini in a temp dir),
shown at 1280x800, and a sweep is started through win.sweep_view with its tab visible (so the sweep charts
really redraw and paint). A 10 ms QTimer (explorer.gui.app.StallProbe) probes the event loop: a tick's
stall is how late it fired beyond its 10 ms interval. Two variants of the same sweep, alternated ABBA over
--rounds (child, in-process, in-process, child, ...):

  child       measurements in the measuring child process (the default; explorer.gui.jobs.measure.IN_CHILD)
  in-process  measurements in a QThread of the GUI process (measure.IN_CHILD = False), sharing the GIL

For every variant: p50/p99/max stall, ticks, stalls > 50 ms, the GUI thread's own CPU seconds, and wall
time. Then, for the same sweep, how the measured medians differ between the variants: per (point, path)
ratio in-process/child within a round, median and spread, next to the same-mode round-to-round ratio
(the noise floor) -- i.e. whether GUI work in the measuring process distorts the measurement.
Finally a single Run (win.start_run) of ResNet-50 res2a_branch2b (3x3) in each mode, with the Run tab
visible (live timing chart). Targets (issue 6 item 4): p99 <= 50 ms, max <= 200 ms. No assertions.

    QT_QPA_PLATFORM=offscreen python tests/benchmarks/bench_gui_stalls.py \
        [--desc mb1ic64ih28oc64oh28kh3ph1] [--vary ic=16:256:+16] [--paths dense,channels_last,mkldnn] \
        [--budget-ms 200] [--threads 0 (= every core)] [--rounds 2] [--no-run] [--idle-s 3]

Offscreen is the default (set when QT_QPA_PLATFORM is unset); DISPLAY=:99 QT_QPA_PLATFORM=xcb with Xvfb
compares against a real X server.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time

import numpy as np

RESNET_3X3 = "mb1ic64ih56oc64oh56kh3ph1"  # ResNet-50 res2a_branch2b


def isolate() -> str:
    """Offscreen unless told otherwise; settings and the peak cache in a fresh temp dir (in main(): the
    measuring child is spawned and re-imports this module, so nothing happens at import time)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    tmp = tempfile.mkdtemp(prefix="bench-gui-stalls-")
    os.environ["MKLDNN_EXPLORER_SETTINGS"] = os.path.join(tmp, "settings.ini")
    os.environ["MKLDNN_EXPLORER_CACHE"] = os.path.join(tmp, "cache")
    os.environ["MKLDNN_EXPLORER_NO_DIALOGS"] = "1"
    return tmp


def loadavg() -> str:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "n/a"


def thread_cpu_s() -> float:
    """CPU seconds of the calling (GUI) thread only."""
    r = resource.getrusage(resource.RUSAGE_THREAD)
    return r.ru_utime + r.ru_stime


def stall_stats(lateness_ms) -> dict:
    a = np.asarray(lateness_ms, dtype=float)
    if a.size == 0:
        return {"p50": 0.0, "p99": 0.0, "max": 0.0, "n": 0, "over50": 0}
    return {"p50": float(np.percentile(a, 50)), "p99": float(np.percentile(a, 99)), "max": float(a.max()),
            "n": int(a.size), "over50": int((a > 50).sum())}


def fmt_stats(s: dict) -> str:
    return (f"stall p50 {s['p50']:5.1f} ms  p99 {s['p99']:6.1f} ms  max {s['max']:6.1f} ms  "
            f"ticks {s['n']:5d}  >50ms {s['over50']:3d}")


def spread(vals) -> str:
    a = np.asarray(vals, dtype=float)
    a = a[np.isfinite(a)]
    if a.size == 0:
        return "n/a"
    p10, p50, p90 = np.percentile(a, [10, 50, 90])
    return (f"median {p50:.3f}  p10..p90 {p10:.3f}..{p90:.3f}  min..max {a.min():.3f}..{a.max():.3f}  "
            f"(n={a.size})")


class Bench:
    def __init__(self, args):
        import explorer.core.jobs.run  # noqa: F401 - torch loads before the window, as run_gui does
        from explorer.gui.app import create_window, make_app, make_settings
        from explorer.gui.jobs import measure

        self.args = args
        self.measure = measure
        if args.child_nice is not None:
            measure.NICE = args.child_nice
        self.app = make_app()
        self.win = create_window(make_settings())
        self.win.resize(1280, 800)
        self.win.show()
        self.app.processEvents()

    # ---- helpers -----------------------------------------------------------------------------------------
    def wait_signal(self, signal, timeout_s: float) -> bool:
        from PySide6.QtCore import QEventLoop, QTimer

        loop = QEventLoop()
        got = {"ok": False}

        def done(*_):
            got["ok"] = True
            loop.quit()

        signal.connect(done)
        guard = QTimer()
        guard.setSingleShot(True)
        guard.timeout.connect(loop.quit)
        guard.start(int(timeout_s * 1000))
        loop.exec()
        guard.stop()
        signal.disconnect(done)
        return got["ok"]

    def opts(self, paths, budget_ms):
        from explorer.core.jobs.options import RunOptions

        return RunOptions(paths=tuple(paths), threads=self.args.threads, budget_ms=budget_ms,
                          trace=not self.args.no_trace)

    def idle(self, seconds: float) -> dict:
        from PySide6.QtCore import QTimer

        from explorer.gui.app import StallProbe

        probe = StallProbe(10)
        probe.start()
        t = QTimer()
        t.setSingleShot(True)
        from PySide6.QtCore import QEventLoop

        loop = QEventLoop()
        t.timeout.connect(loop.quit)
        t.start(int(seconds * 1000))
        loop.exec()
        probe.stop()
        return stall_stats(probe.lateness_ms)

    # ---- one sweep ---------------------------------------------------------------------------------------
    def sweep(self, in_child: bool, desc: str, vary: str, paths, budget_ms: float, timeout_s: float = 900.0):
        from explorer.gui.app import StallProbe

        self.measure.IN_CHILD = in_child
        sv = self.win.sweep_view
        self.win.tabs.setCurrentIndex(1)  # the Sweep tab: its charts redraw and paint while it runs
        sv.set_base(desc)
        sv.set_options(self.opts(paths, budget_ms))
        field, values = vary.split("=", 1)
        sv.set_vary(field.strip(), values.strip())
        self.app.processEvents()
        line_redraws0 = sv.line.redraws
        probe = StallProbe(10)
        cpu0, t0 = thread_cpu_s(), time.perf_counter()
        probe.start()
        if not sv.run():
            raise SystemExit(f"the sweep did not start: {sv.error or sv.message.text()}")
        finished = self.wait_signal(sv.finished, timeout_s)
        probe.stop()
        wall, cpu = time.perf_counter() - t0, thread_cpu_s() - cpu0
        if not finished:
            sv.stop()
            self.wait_signal(sv.finished, 30)
        medians = {}
        errors = 0
        for r in sv.results():
            if getattr(r, "status", None) == "ok" and r.median_ms:
                medians[(r.vary, r.path)] = r.median_ms
            else:
                errors += 1
        return {"stats": stall_stats(probe.lateness_ms), "lat": list(probe.lateness_ms), "wall": wall,
                "gui_cpu": cpu, "medians": medians, "errors": errors, "redraws": sv.line.redraws - line_redraws0, "finished": finished}

    # ---- one run -----------------------------------------------------------------------------------------
    def run(self, in_child: bool, desc: str, paths, budget_ms: float, timeout_s: float = 600.0):
        from explorer.core.problem.spec import parse_descriptor
        from explorer.gui.app import StallProbe

        self.measure.IN_CHILD = in_child
        self.win.tabs.setCurrentIndex(0)  # the Run tab: the live timing chart and summary paint
        self.win.panel.set_spec(parse_descriptor(desc))
        self.win.panel.set_options(paths=list(paths), threads=self.args.threads or 0, budget_ms=budget_ms,
                                   trace=not self.args.no_trace)
        self.app.processEvents()
        redraws0 = self.win.timing.redraws
        probe = StallProbe(10)
        cpu0, t0 = thread_cpu_s(), time.perf_counter()
        probe.start()
        if not self.win.start_run():
            raise SystemExit(f"the run did not start: {self.win.status_label.text()}")
        finished = self.wait_signal(self.win.run_finished, timeout_s)
        probe.stop()
        wall, cpu = time.perf_counter() - t0, thread_cpu_s() - cpu0
        medians = {r.path: r.median_ms for r in self.win.model.results if r.status == "ok"}
        return {"stats": stall_stats(probe.lateness_ms), "wall": wall, "gui_cpu": cpu, "medians": medians,
                "redraws": self.win.timing.redraws - redraws0, "finished": finished,
                "error": self.win.last_error}

    def close(self):
        self.win.close()
        self.app.processEvents()
        self.measure.shutdown(1.0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--desc", default="mb1ic64ih28oc64oh28kh3ph1")
    ap.add_argument("--vary", default="ic=16:256:+16", help="one field, as typed in the Sweep tab")
    ap.add_argument("--paths", default="dense,channels_last,mkldnn")
    ap.add_argument("--budget-ms", type=float, default=200.0)
    ap.add_argument("--threads", type=int, default=0, help="torch threads per measurement; 0 = every core")
    ap.add_argument("--rounds", type=int, default=2, help="rounds; each runs both variants (ABBA order)")
    ap.add_argument("--no-trace", action="store_true", help="skip the traced call per path")
    ap.add_argument("--no-run", action="store_true", help="skip the single Run variant")
    ap.add_argument("--run-desc", default=RESNET_3X3)
    ap.add_argument("--run-paths", default="all")
    ap.add_argument("--run-budget-ms", type=float, default=500.0)
    ap.add_argument("--idle-s", type=float, default=3.0, help="probe the idle window first (0: skip)")
    ap.add_argument("--child-nice", type=int, default=None,
                    help="niceness of the measuring child (default: the app's, explorer.gui.jobs.measure.NICE)")
    args = ap.parse_args(argv)
    args.threads = args.threads or os.cpu_count()
    tmp = isolate()
    paths = [p.strip() for p in args.paths.split(",") if p.strip()]

    import pyqtgraph
    import PySide6
    import torch

    from explorer.core.measure import machine
    from explorer.core.paths.base import PATHS

    run_paths = list(PATHS) if args.run_paths == "all" else [p.strip() for p in args.run_paths.split(",")]
    print(f"# machine: {machine.cpu_model()}, {os.cpu_count()} cores, torch {torch.__version__} "
          f"(threads per measurement {args.threads}), PySide6 {PySide6.__version__}, pyqtgraph "
          f"{pyqtgraph.__version__}, QPA {os.environ.get('QT_QPA_PLATFORM')}, Python {sys.version.split()[0]}, "
          f"load average {loadavg()} (other processes share these cores)")
    print(f"# sweep: {args.desc} --vary {args.vary}, paths {','.join(paths)}, budget {args.budget_ms:g} ms, "
          f"trace {'off' if args.no_trace else 'on'}; {args.rounds} rounds x 2 variants (ABBA)")

    b = Bench(args)
    print(f"# measuring child niceness: {b.measure.NICE}")
    # Warm-up (untimed): start the child, and load oneDNN / JIT the kernels in both processes.
    t0 = time.perf_counter()
    b.measure.child().start()
    field = args.vary.split("=", 1)[0]
    for in_child in (True, False):
        b.sweep(in_child, args.desc, f"{field}={_first_value(args)}", paths, 5.0)
    print(f"# warm-up (child start + one tiny point per variant): {time.perf_counter() - t0:.1f} s", flush=True)

    if args.idle_s > 0:
        b.win.tabs.setCurrentIndex(1)
        print(f"idle window ({args.idle_s:g} s, nothing running):  {fmt_stats(b.idle(args.idle_s))}", flush=True)

    runs = {"child": [], "in-process": []}
    for r in range(args.rounds):
        order = ("child", "in-process") if r % 2 == 0 else ("in-process", "child")
        for mode in order:
            res = b.sweep(mode == "child", args.desc, args.vary, paths, args.budget_ms)
            runs[mode].append(res)
            print(f"sweep round {r + 1} {mode:10s}  {fmt_stats(res['stats'])}  wall {res['wall']:5.1f} s  "
                  f"GUI-thread CPU {res['gui_cpu']:5.2f} s  chart redraws {res['redraws']:3d}  "
                  f"rows ok {len(res['medians'])} err {res['errors']}"
                  + ("" if res["finished"] else "  (TIMED OUT)"), flush=True)

    print("\n== sweep: stalls per variant (all ticks of all rounds pooled; per-round p99/max spread) ==")
    for mode, rs in runs.items():
        pooled = stall_stats(np.concatenate([x["lat"] for x in rs]))
        allp = [x["stats"] for x in rs]
        p99s = [s["p99"] for s in allp]
        mxs = [s["max"] for s in allp]
        p50s = [s["p50"] for s in allp]
        print(f"{mode:10s}  pooled: {fmt_stats(pooled)}")
        print(f"{'':10s}  per round: p50 {statistics.median(p50s):5.1f} ms  p99 median {statistics.median(p99s):6.1f} ms "
              f"(rounds {', '.join(f'{v:.1f}' for v in p99s)})  max {max(mxs):6.1f} ms "
              f"(rounds {', '.join(f'{v:.1f}' for v in mxs)})  ticks {sum(s['n'] for s in allp)}  "
              f"GUI CPU {statistics.median([x['gui_cpu'] for x in rs]):.2f} s  "
              f"wall {statistics.median([x['wall'] for x in rs]):.1f} s  -> target p99<=50 "
              f"{'MET' if max(p99s) <= 50 else 'MISSED'}, max<=200 {'MET' if max(mxs) <= 200 else 'MISSED'}")
    c99 = statistics.median([x["stats"]["p99"] for x in runs["child"]])
    i99 = statistics.median([x["stats"]["p99"] for x in runs["in-process"]])
    if c99 > 0:
        print(f"p99 ratio in-process/child: {i99 / c99:.2f}x")

    print("\n== sweep: measured medians, in-process / child (per point and path, paired by round) ==")
    cross, same_child, same_inproc = [], [], []
    per_path: dict[str, list] = {}
    for r in range(args.rounds):
        c, i = runs["child"][r]["medians"], runs["in-process"][r]["medians"]
        for k in c.keys() & i.keys():
            cross.append(i[k] / c[k])
            per_path.setdefault(k[1], []).append(i[k] / c[k])
    for r in range(1, args.rounds):
        for mode, out in (("child", same_child), ("in-process", same_inproc)):
            a, bb = runs[mode][r]["medians"], runs[mode][r - 1]["medians"]
            out += [a[k] / bb[k] for k in a.keys() & bb.keys()]
    print(f"in-process/child, all points:      {spread(cross)}")
    for p, v in per_path.items():
        print(f"  {p:16s}                   {spread(v)}")
    if same_child:
        print(f"noise floor child round r/r-1:     {spread(same_child)}")
        print(f"noise floor in-proc round r/r-1:   {spread(same_inproc)}")
    print("(1.000 = same; a ratio > 1 means in-process measured slower. Compare its spread with the noise floor.)")

    if not args.no_run:
        print(f"\n== single Run via win.start_run: {args.run_desc} (ResNet-50 3x3), paths {','.join(run_paths)}, "
              f"budget {args.run_budget_ms:g} ms ==")
        rr = {}
        for mode in ("child", "in-process"):
            res = b.run(mode == "child", args.run_desc, run_paths, args.run_budget_ms)
            rr[mode] = res
            print(f"run {mode:10s}  {fmt_stats(res['stats'])}  wall {res['wall']:5.1f} s  GUI-thread CPU "
                  f"{res['gui_cpu']:5.2f} s  timing redraws {res['redraws']:3d}"
                  + (f"  error: {res['error']}" if res["error"] else "")
                  + ("" if res["finished"] else "  (TIMED OUT)"), flush=True)
        c, i = rr["child"]["medians"], rr["in-process"]["medians"]
        for p in run_paths:
            if p in c and p in i:
                print(f"  {p:18s} child {c[p]:8.3f} ms  in-process {i[p]:8.3f} ms  ratio {i[p] / c[p]:.3f}")
    b.close()
    print(f"# load average at the end: {loadavg()}; settings/cache in {tmp}")
    return 0


def _first_value(args) -> str:
    from explorer.core.problem.sweep_plan import parse_vary

    v = parse_vary(args.vary)
    return str(v.values[0])


if __name__ == "__main__":
    t0 = time.time()
    rc = main()
    print(f"# wall {time.time() - t0:.0f} s")
    raise SystemExit(rc)
