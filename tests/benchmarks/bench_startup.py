"""Start-up time: from process launch to the main window shown and painted, next to `python -c "import torch"`.

Each run launches a fresh `python <wrapper>` that calls the real command line (`mkldnn-explorer gui
--exit-when-done --size 1280x800`, explorer.cli.main) with explorer.gui.app.create_window wrapped to stamp
time.monotonic() (CLOCK_MONOTONIC: the same clock in the parent and the child) at these moments:

  python up        the wrapper's first line ran (interpreter + site start-up)
  imports done     create_window was called: run_gui has imported torch, PySide6, pyqtgraph and made the app
  window built     create_window returned (MainWindow constructed, settings restored)
  shown            the window's first Show event
  first paint      the first Paint event of any widget of the window (the first frame starts)
  painted          a QTimer.singleShot(0) queued at the first Paint ran: the first frame is done  <- the figure

Every stamp is relative to the parent's clock just before Popen (process launch). Variants, alternated
round-robin over --runs rounds (default 5): `gui` (default: the measuring child is prestarted and imports
torch while the window builds), `gui in-process` (MKLDNN_EXPLORER_IN_PROCESS=1: no child), and `import torch`
alone. Medians and minimums are printed, and the whole-process wall (exit included). Then, unless --no-
importtime, one `python -X importtime` of what run_gui imports before the window, summarised by top-level
package (where the time goes). Target (issue 6 item 6): shown and painted <= 2.5 s. No assertions.

    QT_QPA_PLATFORM=offscreen python tests/benchmarks/bench_startup.py [--runs 5] [--no-importtime]

Offscreen is the default (set when QT_QPA_PLATFORM is unset); settings and caches go to a temp dir.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

WRAPPER = r'''
# Everything under the guard: the measuring child is spawned and re-imports this file as __mp_main__,
# exactly as it re-imports the real entry points (python -m explorer, the console script), which are guarded.
import time


def stamp(name):
    print(f"STAMP {name} {time.monotonic():.6f}", flush=True)


def run():
    stamp("python up")
    import sys
    import explorer.gui.app as app

    orig = app.create_window
    state = {}

    def create_window(*a, **k):
        stamp("imports done")
        win = orig(*a, **k)
        stamp("window built")
        from PySide6.QtCore import QEvent, QObject, QTimer
        from PySide6.QtWidgets import QApplication, QWidget

        class Filter(QObject):
            def eventFilter(self, obj, ev):
                t = ev.type()
                if t == QEvent.Show and obj is win and "show" not in state:
                    state["show"] = 1
                    stamp("shown")
                elif (t == QEvent.Paint and "paint" not in state and isinstance(obj, QWidget)
                      and obj.window() is win):
                    state["paint"] = 1
                    stamp("first paint")
                    QTimer.singleShot(0, lambda: stamp("painted"))
                return False

        state["filter"] = Filter()
        QApplication.instance().installEventFilter(state["filter"])
        return win

    app.create_window = create_window
    from explorer.launch import main

    rc = main(["gui", "--exit-when-done", "--size", "1280x800"])
    stamp("exit")
    sys.exit(rc)


if __name__ == "__main__":
    run()
'''

STAMPS = ("python up", "imports done", "window built", "shown", "first paint", "painted", "exit")


def loadavg() -> str:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "n/a"


def launch(cmd, env, timeout_s: float = 120.0) -> dict:
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s)
    wall = time.monotonic() - t0
    out = {"wall": wall, "rc": p.returncode}
    for line in p.stdout.splitlines():
        if line.startswith("STAMP "):
            _, rest = line.split(" ", 1)
            name, t = rest.rsplit(" ", 1)
            out[name] = float(t) - t0
    if p.returncode != 0:
        out["err"] = (p.stderr.strip().splitlines() or [""])[-1][:200]
    return out


def importtime(env, code: str) -> list[str]:
    """`python -X importtime -c code`: self time summed by top-level package (a partition of the total), and
    the cumulative time of the modules that matter, where each is first imported."""
    p = subprocess.run([sys.executable, "-X", "importtime", "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    self_by_top: dict[str, int] = {}
    cum: dict[str, int] = {}
    for line in p.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        fields = line.split(":", 1)[1].split("|")
        if len(fields) != 3:
            continue
        self_us, cum_us, mod = int(fields[0]), int(fields[1]), fields[2].strip()
        top = mod.split(".")[0]
        self_by_top[top] = self_by_top.get(top, 0) + self_us
        cum.setdefault(mod, cum_us)
    total = sum(self_by_top.values())
    out = [f"  total {total / 1e6:.3f} s; self time by top-level package:"]
    for name, us in sorted(self_by_top.items(), key=lambda kv: -kv[1])[:10]:
        out.append(f"    {name:28s} {us / 1e6:6.3f} s  {100 * us / total:4.0f}%")
    out.append("  cumulative where first imported:")
    for mod in ("torch", "numpy", "PySide6.QtWidgets", "pyqtgraph", "explorer.core.jobs.run", "explorer.gui.window.main_window",
                "explorer.gui.tabs.sweep_view", "explorer.gui.inspect.layout_view", "explorer.gui.inspect.trace_view", "multiprocessing"):
        if mod in cum:
            out.append(f"    {mod:28s} {cum[mod] / 1e6:6.3f} s")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="rounds; each launches every variant once")
    ap.add_argument("--no-importtime", action="store_true")
    args = ap.parse_args(argv)

    tmp = tempfile.mkdtemp(prefix="bench-startup-")
    wrapper = os.path.join(tmp, "start_wrapper.py")
    with open(wrapper, "w") as f:
        f.write(WRAPPER)
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    env["MKLDNN_EXPLORER_SETTINGS"] = os.path.join(tmp, "settings.ini")
    env["MKLDNN_EXPLORER_CACHE"] = os.path.join(tmp, "cache")
    env["MKLDNN_EXPLORER_NO_DIALOGS"] = "1"
    env.pop("MKLDNN_EXPLORER_IN_PROCESS", None)
    env_inproc = dict(env, MKLDNN_EXPLORER_IN_PROCESS="1")
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for e in (env, env_inproc):
        e["PYTHONPATH"] = repo + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")

    import PySide6
    import torch

    from explorer.core.measure import machine

    print(f"# machine: {machine.cpu_model()}, {os.cpu_count()} cores, torch {torch.__version__} (threads "
          f"{torch.get_num_threads()}), PySide6 {PySide6.__version__}, QPA {env['QT_QPA_PLATFORM']}, Python "
          f"{sys.version.split()[0]}, load average {loadavg()}")
    print(f"# {args.runs} rounds, variants launched round-robin; times from launch (parent clock before Popen)")

    variants = {
        "gui (child prestarted)": ([sys.executable, wrapper], env),
        "gui in-process": ([sys.executable, wrapper], env_inproc),
        "python -c 'import torch'": ([sys.executable, "-c", "import time, torch; "
                                      "print(f'STAMP imports done {time.monotonic():.6f}')"], env),
    }
    # one untimed launch of each first: the page cache holds the shared libraries afterwards (a second
    # start-up, as a user mostly sees); the cold first start is printed too.
    res: dict[str, list[dict]] = {k: [] for k in variants}
    for name, (cmd, e) in variants.items():
        r = launch(cmd, e)
        print(f"warm-up {name:26s} {_row(r)}", flush=True)
    for i in range(args.runs):
        names = list(variants)
        names = names[i % len(names):] + names[: i % len(names)]  # rotate the order each round
        for name in names:
            cmd, e = variants[name]
            r = launch(cmd, e)
            res[name].append(r)
            print(f"run {i + 1} {name:26s} {_row(r)}", flush=True)

    print("\n== median (min) seconds from launch ==")
    print(f"{'variant':28s}" + "".join(f"{s:>17s}" for s in STAMPS[1:]) + f"{'wall':>17s}")
    for name, rs in res.items():
        cells = []
        for s in STAMPS[1:] + ("wall",):
            v = [r[s] for r in rs if s in r]
            cells.append(f"{statistics.median(v):8.2f} ({min(v):5.2f})" if v else f"{'-':>16s}")
        print(f"{name:28s}" + "".join(f"{c:>17s}" for c in cells))
    torch_med = statistics.median([r["imports done"] for r in res["python -c 'import torch'"] if "imports done" in r])
    for name in ("gui (child prestarted)", "gui in-process"):
        v = [r["painted"] for r in res[name] if "painted" in r]
        if v:
            med = statistics.median(v)
            print(f"{name}: painted median {med:.2f} s, min {min(v):.2f} s, spread {min(v):.2f}..{max(v):.2f} s "
                  f"= {med / torch_med:.1f}x `import torch` ({torch_med:.2f} s) -> target <= 2.5 s "
                  f"{'MET' if med <= 2.5 else 'MISSED'}")
    if not args.no_importtime:
        code = "import explorer.core.jobs.run, PySide6.QtWidgets, pyqtgraph, explorer.gui.window.main_window"
        print(f"\n== where the import time goes: python -X importtime -c \"{code}\" "
              f"(self time by package, cumulative by module; one run) ==")
        for line in importtime(env, code):
            print(line)
    print(f"# load average at the end: {loadavg()}")
    return 0


def _row(r: dict) -> str:
    parts = [f"{s} {r[s]:.2f}" for s in STAMPS[1:] if s in r]
    tail = f"  (rc {r['rc']}: {r.get('err', '')})" if r["rc"] != 0 else ""
    return "  ".join(parts) + f"  wall {r['wall']:.2f} s" + tail


if __name__ == "__main__":
    t0 = time.time()
    rc = main()
    print(f"# wall {time.time() - t0:.0f} s")
    raise SystemExit(rc)
