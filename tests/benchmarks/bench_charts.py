"""Chart throughput: the time of one redraw *including the paint*, for the live timing chart and the sweep chart.

Timing chart (explorer.gui.run.timing_chart.TimingChart): 6 paths x --points samples (100k) fed through its public
API as the run worker feeds it (reset(paths), then add_samples(path, chunk) in chunks of --chunk samples).
Then, per measured redraw: new samples arrive (a chunk), redraw() runs (setData of the changed curves, range
fit), and the chart is painted (see the two paint modes below). Three cases:
  live-1      one path grows (what a live run does: only the running path changes)
  live-6      all 6 curves changed at once (worst case: a session load, a theme change)
  finish-1    set_samples() replaces one path's 100k samples (what path_finished does at the end of a path)

Sweep chart (explorer.gui.tabs.sweep_view.SweepView): a 1,000-point one-field sweep (ic=1:1000:+1) on 3 paths,
fed as the sweep worker feeds it (data.configure, then data.add(point, Result) for 3,000 synthetic finished
rows), then timed: redraw_now() (line + speedup charts rebuilt) plus the paint of the view.
Also a 40x25 two-field grid (1,000 cells, heatmap) as a second row.

Every widget is shown at --size (1280x800); the charts' own redraw timers are stopped so only the timed
redraws run. Each case is timed --redraws times (50) per paint mode; median and p95 are printed,
with the split between redraw() and the paint. Target (issue 6 item 5): <= 16 ms per redraw. No assertions.

    QT_QPA_PLATFORM=offscreen python tests/benchmarks/bench_charts.py [--redraws 50] [--points 100000] \
        [--chunk 2000] [--sweep-points 1000] [--size 1280x800] [--grab]

Each case alternates two paints per redraw: A) redraw() then app.processEvents(): Qt paints the dirty region as
the running app would (paint events are counted to prove it happened); B) the same with every chart
viewport marked dirty before the event loop runs, i.e. the whole chart painted once (what a resize, a tab
switch or an exposed window costs). --grab replaces B with widget.grab(). Offscreen is the default platform.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

PATHS6 = ("dense", "channels_last", "native", "mkldnn", "mkldnn_functional", "mkldnn_roundtrip")
PATHS3 = ("dense", "channels_last", "mkldnn")


def loadavg() -> str:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "n/a"


def summary(name: str, total, redraw, paint, paints=None, target_ms: float = 16.0) -> str:
    t, r, p = (np.asarray(v) * 1e3 for v in (total, redraw, paint))
    med, p95 = float(np.median(t)), float(np.percentile(t, 95))
    verdict = "MET" if p95 <= target_ms else ("median MET, p95 MISSED" if med <= target_ms else "MISSED")
    pc = f"  paints/redraw {paints:.1f}" if paints is not None else ""
    return (f"{name:48s} median {med:6.2f} ms  p95 {p95:6.2f} ms  max {t.max():6.2f}  "
            f"[redraw() {np.median(r):5.2f} + paint {np.median(p):5.2f} ms]{pc}  n={t.size}  -> <= {target_ms:g} ms {verdict}")


class PaintCounter:
    """Counts Paint events of every QGraphicsView viewport under a widget (proof the paint really ran)."""

    def __init__(self, widget):
        from PySide6.QtCore import QEvent, QObject
        from PySide6.QtWidgets import QGraphicsView

        counter = self

        class _F(QObject):
            def eventFilter(self, obj, ev):
                if ev.type() == QEvent.Paint:
                    counter.n += 1
                return False

        self.n = 0
        self.views = [v for v in widget.findChildren(QGraphicsView)]
        self._filter = _F()
        for v in self.views:
            v.viewport().installEventFilter(self._filter)

    def visible_views(self):
        return [v for v in self.views if v.isVisible()]


PAINT_MODES = ("event-loop paint", "whole-chart paint")


def timed(app, counter, step, redraw, n, grab_widget=None):
    """Alternating per redraw: A) redraw() + app.processEvents() -- the event loop does the queued work and
    paints the dirty region, as in the app; B) the same with every visible chart viewport marked dirty first
    (the whole chart is painted once: a resize, a tab switch or an exposed window costs this)."""
    modes = (PAINT_MODES[0], "grab()") if grab_widget is not None else PAINT_MODES
    out = {m: ([], [], [], []) for m in modes}
    warm = 2 * len(modes)
    for k in range(n * len(modes) + warm):
        mode = modes[k % len(modes)]
        step(k)
        app.processEvents()  # anything the step posted is delivered before the clock starts
        n0 = counter.n
        t1 = time.perf_counter()
        redraw()
        t2 = time.perf_counter()
        if mode == PAINT_MODES[0]:
            app.processEvents()
        elif mode == "grab()":
            grab_widget.grab()
        else:
            for v in counter.visible_views():
                v.viewport().update()  # the whole chart is dirty: one paint of all of it, plus the queued work
            app.processEvents()
        t3 = time.perf_counter()
        painted = counter.n - n0
        app.processEvents()  # untimed: leftovers (a forced repaint leaves the scene's queued update)
        if k >= warm:
            tot, red, pai, cnt = out[mode]
            tot.append(t3 - t1)
            red.append(t2 - t1)
            pai.append(t3 - t2)
            cnt.append(painted)
    return out


def report(name, res) -> list[str]:
    lines = []
    for mode, (tot, red, pai, cnt) in res.items():
        lines.append(summary(f"{name} / {mode}", tot, red, pai, float(np.mean(cnt))))
    return lines


def samples(rng, n: int, base: float) -> np.ndarray:
    """Per-call times in ms: a lognormal bulk with rare spikes, like a real path."""
    a = base * rng.lognormal(0.0, 0.05, n)
    spikes = rng.random(n) < 0.002
    a[spikes] *= rng.uniform(2, 10, spikes.sum())
    return a


# ---- timing chart ---------------------------------------------------------------------------------------------
def bench_timing(app, args, rng) -> list[str]:
    from explorer.gui.run.timing_chart import TimingChart

    chart = TimingChart()
    chart.timer.stop()  # only the timed redraws below
    chart.resize(*args.size)
    chart.show()
    app.processEvents()
    chart.reset(PATHS6)
    bases = {p: 1.0 + i * 0.7 for i, p in enumerate(PATHS6)}
    t0 = time.perf_counter()
    for p in PATHS6:  # as the worker delivers it: one path after the other, in chunks
        full = samples(rng, args.points, bases[p])
        for i in range(0, args.points, args.chunk):
            chart.add_samples(p, full[i:i + args.chunk])
        chart.redraw()
    feed_s = time.perf_counter() - t0
    app.processEvents()
    counter = PaintCounter(chart)
    out = [f"# timing chart: {len(PATHS6)} curves x {chart.point_count(PATHS6[0]):,} points "
           f"({chart.point_count():,} total) fed in {args.chunk}-sample chunks in {feed_s:.2f} s; "
           f"widget {chart.width()}x{chart.height()}"]
    grab = chart if args.grab else None
    live = PATHS6[3]
    new = max(1, args.chunk // 10)
    out += report("timing live-1 (one path grows)", timed(
        app, counter, lambda k: chart.add_samples(live, samples(rng, new, bases[live])), chart.redraw, args.redraws,
        grab))
    out += report("timing live-6 (all 6 curves changed)", timed(
        app, counter, lambda k: [chart.add_samples(p, samples(rng, new, bases[p])) for p in PATHS6], chart.redraw,
        args.redraws, grab))
    full = {p: samples(rng, args.points, bases[p]) for p in PATHS6}
    out += report("timing finish-1 (set_samples 100k)", timed(
        app, counter, lambda k: chart.set_samples(PATHS6[k % 6], full[PATHS6[k % 6]]), chart.redraw, args.redraws,
        grab))
    drawn = chart._curves[PATHS6[0]].getData()[0]
    out.append(f"# timing chart: {chart.point_count():,} points at the end; {len(drawn):,} of a curve's points "
               f"drawn after clip-to-view + peak downsampling")
    chart.close()
    return out


# ---- sweep chart ----------------------------------------------------------------------------------------------
def synthetic_results(points, paths, rng):
    from explorer.core.report.results import Result

    out = []
    speed = {"dense": 1.0, "channels_last": 0.8, "mkldnn": 0.6}
    for pt in points:
        if pt.skipped:
            continue
        s = pt.spec
        for p in paths:
            med = 0.001 * s.ic * s.oc * speed.get(p, 1.0) * rng.lognormal(0, 0.05) + 0.02
            out.append((pt.index, Result(spec=s, path=p, threads=2, status="ok", samples=50, median_ms=med,
                                         p25_ms=med * 0.97, p75_ms=med * 1.04, min_ms=med * 0.95, mean_ms=med,
                                         iqr_ms=med * 0.07, gflops=s.ops / med / 1e6 if s.ops else None,
                                         vary=pt.label, budget_ms=200.0)))
    return out


def bench_sweep(app, args, rng) -> list[str]:
    from explorer.core.jobs.options import RunOptions
    from explorer.core.problem.sweep_plan import plan_sweep
    from explorer.gui.tabs.sweep_view import SweepView

    out = []
    view = SweepView()
    view.timer.stop()  # only the timed redraws below
    view.resize(*args.size)
    view.show()
    view.set_base(args.sweep_desc)
    view.set_options(RunOptions(paths=PATHS3, budget_ms=200.0, trace=False))
    app.processEvents()

    def run_case(label, varies, mode):
        points = plan_sweep(args.sweep_desc, varies)
        rows = synthetic_results(points, PATHS3, rng)
        view.data.configure(points, mode, paths=PATHS3, geometric=False)
        view._show_mode(mode)  # what SweepView.run() does before the first row (no public setter)
        app.processEvents()
        t0 = time.perf_counter()
        for idx, r in rows:  # as SweepView._on_rows feeds them
            view.data.add(idx, r)
        feed = time.perf_counter() - t0
        counter = PaintCounter(view)
        res = timed(app, counter, lambda k: None, view.redraw_now, args.redraws, view if args.grab else None)
        main = view.main_chart()
        extra = f"line points/path {main.point_count(PATHS3[0])}" if mode == "line" else f"cells {main.filled()}"
        out.append(f"# sweep {mode}: {len(points)} points x {len(PATHS3)} paths = {len(rows)} rows "
                   f"(data.add {feed * 1e3:.0f} ms total), {extra}, view {view.width()}x{view.height()}")
        out.extend(report(label, res))
        # The split: which chart costs what (same data, 10 redraws each, no paint).
        parts = []
        charts = [("line", view.line), ("speedup", view.speedup)] if mode == "line" else [("heatmap", view.heatmap)]
        for name, ch in charts:
            ts = []
            for _ in range(10):
                a = time.perf_counter()
                ch.redraw(view.data)
                ts.append(time.perf_counter() - a)
            parts.append(f"{name}.redraw() {np.median(ts) * 1e3:.1f} ms")
        out.append("#   " + ", ".join(parts))

    n = args.sweep_points
    run_case(f"sweep line ({n} pts x 3 paths)", [f"ic=1:{n}:+1"], "line")
    nx = 40
    ny = max(1, n // nx)
    run_case(f"sweep grid ({nx}x{ny} heatmap)", [f"ic=1:{nx}:+1", f"oc=1:{ny}:+1"], "grid")
    view.shutdown(1000)
    view.close()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--redraws", type=int, default=50)
    ap.add_argument("--points", type=int, default=100_000, help="samples per timing-chart curve")
    ap.add_argument("--chunk", type=int, default=2000, help="samples per add_samples call while feeding")
    ap.add_argument("--sweep-points", type=int, default=1000)
    ap.add_argument("--sweep-desc", default="mb1ic64ih14oc64oh14kh3ph1")
    ap.add_argument("--size", default="1280x800")
    ap.add_argument("--grab", action="store_true", help="paint mode B: widget.grab() instead of a forced viewport repaint()")
    ap.add_argument("--only", choices=("timing", "sweep"), default=None)
    args = ap.parse_args(argv)
    args.size = tuple(int(v) for v in args.size.lower().split("x"))
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    tmp = tempfile.mkdtemp(prefix="bench-charts-")
    os.environ["MKLDNN_EXPLORER_SETTINGS"] = os.path.join(tmp, "settings.ini")
    os.environ["MKLDNN_EXPLORER_CACHE"] = os.path.join(tmp, "cache")
    os.environ["MKLDNN_EXPLORER_NO_DIALOGS"] = "1"

    import pyqtgraph
    import PySide6
    import torch

    from explorer.core.measure import machine
    from explorer.gui.app import make_app

    app = make_app()
    print(f"# machine: {machine.cpu_model()}, {os.cpu_count()} cores, torch {torch.__version__} "
          f"(threads {torch.get_num_threads()}), PySide6 {PySide6.__version__}, pyqtgraph {pyqtgraph.__version__}, "
          f"QPA {os.environ.get('QT_QPA_PLATFORM')}, Python {sys.version.split()[0]}, load average {loadavg()}")
    print(f"# paint: A) event-loop paint = redraw() then app.processEvents() (Qt paints the dirty region, as in the "
          f"app); B) {'widget.grab()' if args.grab else 'whole-chart paint (every chart viewport marked dirty, then the event loop)'}; "
          f"alternating A/B, {args.redraws} timed redraws each after 2 untimed; size {args.size[0]}x{args.size[1]}")
    rng = np.random.default_rng(0)
    if args.only in (None, "timing"):
        for line in bench_timing(app, args, rng):
            print(line, flush=True)
    if args.only in (None, "sweep"):
        for line in bench_sweep(app, args, rng):
            print(line, flush=True)
    print(f"# load average at the end: {loadavg()}")
    return 0


if __name__ == "__main__":
    t0 = time.time()
    rc = main()
    print(f"# wall {time.time() - t0:.0f} s")
    raise SystemExit(rc)
