"""Can a figure be trusted? Three checks, each the way a user would make it (issue: numbers you can trust).

  fidelity  the CLI's medians (`mkldnn-explorer run`, a new process per run) against torch.utils.benchmark
            in a separate fresh Python process of the user's own, with the same threads and the allocator
            setting the tool prints (tuned by default); every path, alternated, several rounds.
  gui       the window's medians (`mkldnn-explorer gui DESC --run --csv --exit-when-done`, a real window
            when DISPLAY is set) against the CLI's, alternated; and the window's event-loop stall p99.
  methods   for a few specs and the F.conv2d paths (dense, channels_last, native): the CLI against t.u.b.
            and against a plain per-call perf_counter loop, both in one fresh process of the user's:
            separates the timing method from the process when the first two disagree.
  load      the CLI under a bounded background load (a busy loop at nice 19 per core, each in a session
            of its own, as a desktop's other programs are): rows off by more than 10% from the quiet
            figure that are NOT marked noisy, and whether every noisy row names its cause.

    python tests/benchmarks/bench_trust.py fidelity [--rounds 5] [--out DIR]
    python tests/benchmarks/bench_trust.py gui [--rounds 3]
    python tests/benchmarks/bench_trust.py load [--rounds 5] [--quiet DIR/fidelity.json]
    python tests/benchmarks/bench_trust.py methods --specs mb8ic64ih28oc64oh28kh3ph1 [--rounds 5]

Each prints a markdown table and writes its raw figures as JSON in --out (default bench-out/).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
PATHS = ("dense", "channels_last", "native", "mkldnn", "mkldnn_functional", "mkldnn_roundtrip")
# From ~15 us to ~100 ms per call (dense f32, 2 threads, this 2-core EPYC).
SPECS = [
    "mb1ic8ih8oc8oh8kh3ph1",
    "mb2ic16ih14oc16oh14kh3ph1",
    "mb1ic32ih28oc32oh28kh3ph1",
    "g32mb1ic32ih56oc32oh56kh3ph1",
    "mb1ic256ih56oc64oh56kh1ph0",
    "mb1ic64ih56oc64oh56kh3ph1",
    "mb1ic3ih224oc64oh112kh7sh2ph3",
    "mb8ic64ih28oc64oh28kh3ph1",
    "mb4ic128ih28oc128oh28kh3ph1",
    "mb8ic256ih14oc256oh14kh3ph1",
    "mb16ic64ih56oc64oh56kh3ph1",
    "mb16ic128ih56oc128oh56kh3ph1",
]
from explorer.core.measure.allocator import TUNED_ENV  # noqa: E402 - the variables the tool prints for your own script

# The user's own script: the statement of each path exactly as the README states it, timed by
# torch.utils.benchmark in a fresh process.
USER_SCRIPT = r'''
import json, sys
import torch, torch.nn.functional as F, torch.utils.mkldnn, torch.utils.benchmark as tb
from explorer.core.problem.spec import parse_descriptor
spec = parse_descriptor(sys.argv[1]); threads = int(sys.argv[2]); paths = sys.argv[3].split(","); t_min = float(sys.argv[4])
torch.manual_seed(0)
torch.set_grad_enabled(False)
conv = torch.nn.Conv2d(spec.ic, spec.oc, (spec.kh, spec.kw), stride=(spec.sh, spec.sw), padding=(spec.ph, spec.pw),
                       dilation=spec.torch_dilation, groups=spec.g, bias=spec.bias).eval().requires_grad_(False)
x, w, b = torch.randn(spec.input_shape), conv.weight, conv.bias
args = dict(stride=(spec.sh, spec.sw), padding=(spec.ph, spec.pw), dilation=spec.torch_dilation, groups=spec.g)
# Everything a path holds between calls is made once, here: t.u.b. runs `setup` again for every block, and a
# fresh MKLDNN module (a ScriptModule) pays its profiling runs in each block's first calls.
cl = torch.channels_last
xc, wc = x.contiguous(memory_format=cl), w.contiguous(memory_format=cl)
m = torch.utils.mkldnn.to_mkldnn(conv)
fwd = m.forward  # bound once: a ScriptModule's attribute lookup costs ~7 us a call, not part of the conv
xm = x.to_mkldnn()
g = dict(F=F, torch=torch, x=x, w=w, b=b, args=args, xc=xc, wc=wc, m=m, fwd=fwd, xm=xm)
stmts = {
    "dense": ("", "F.conv2d(x, w, b, **args)"),
    "channels_last": ("", "F.conv2d(xc, wc, b, **args)"),
    "native": ("torch.backends.mkldnn.enabled = False", "F.conv2d(x, w, b, **args)"),
    "mkldnn": ("", "fwd(xm)"),
    "mkldnn_functional": ("", "F.conv2d(xm, w, b, **args)"),
    "mkldnn_roundtrip": ("", "fwd(x.to_mkldnn()).to_dense()"),
}
out = {}
for p in paths:
    setup, stmt = stmts[p]
    t = tb.Timer(stmt=stmt, setup=setup, globals=dict(g), num_threads=threads)
    t.timeit(3)  # warm-up outside the measurement (primitive creation, the ScriptModule's first runs)
    m_ = t.blocked_autorange(min_run_time=t_min)
    out[p] = m_.median * 1e3
    torch.backends.mkldnn.enabled = True
print(json.dumps(out))
'''


# Two timing methods in one fresh process of the user's, alternated: t.u.b. and a plain loop that reads
# perf_counter around every call (the tool's method, without the tool).
METHOD_SCRIPT = r'''
import json, statistics, sys, time
import torch, torch.nn.functional as F, torch.utils.benchmark as tb
from explorer.core.problem.spec import parse_descriptor
spec = parse_descriptor(sys.argv[1]); threads = int(sys.argv[2]); paths = sys.argv[3].split(","); t_min = float(sys.argv[4])
torch.manual_seed(0); torch.set_grad_enabled(False); torch.set_num_threads(threads)
conv = torch.nn.Conv2d(spec.ic, spec.oc, (spec.kh, spec.kw), stride=(spec.sh, spec.sw), padding=(spec.ph, spec.pw),
                       dilation=spec.torch_dilation, groups=spec.g, bias=spec.bias).eval().requires_grad_(False)
x, w, b = torch.randn(spec.input_shape), conv.weight, conv.bias
args = dict(stride=(spec.sh, spec.sw), padding=(spec.ph, spec.pw), dilation=spec.torch_dilation, groups=spec.g)
xc, wc = x.contiguous(memory_format=torch.channels_last), w.contiguous(memory_format=torch.channels_last)
fns = {"dense": lambda: F.conv2d(x, w, b, **args), "native": lambda: F.conv2d(x, w, b, **args),
       "channels_last": lambda: F.conv2d(xc, wc, b, **args)}
out = {}
for p in paths:
    torch.backends.mkldnn.enabled = p != "native"
    fn = fns[p]
    for _ in range(3):
        fn()
    tub, loop = [], []
    for _ in range(3):
        tub.append(tb.Timer(stmt="fn()", globals={"fn": fn}, num_threads=threads).blocked_autorange(min_run_time=t_min).median * 1e3)
        ts, end = [], time.perf_counter() + t_min
        while time.perf_counter() < end:
            t0 = time.perf_counter_ns(); fn(); ts.append(time.perf_counter_ns() - t0)
        loop.append(statistics.median(ts) / 1e6)
    out[p] = {"tub": min(tub), "loop": min(loop)}
torch.backends.mkldnn.enabled = True
print(json.dumps(out))
'''


def methods(args) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="bench-trust-"))
    specs, paths = args.specs.split(","), [p for p in args.paths.split(",") if p]
    bad = [p for p in paths if p not in ("dense", "channels_last", "native")]
    if bad:
        raise SystemExit(f"methods: only dense, channels_last and native (plain F.conv2d), not {', '.join(bad)}")
    data = {s: {p: {"app": [], "tub": [], "loop": []} for p in paths} for s in specs}
    print(_header("timing methods: CLI, and t.u.b. against a per-call loop in one fresh process"))
    for rnd in range(args.rounds):
        for desc in specs:
            rows = app_cli(desc, args.threads, paths, args.budget_ms, tmp)
            proc = subprocess.run([PY, "-c", METHOD_SCRIPT, desc, str(args.threads), ",".join(paths), str(args.budget_ms / 1e3)],
                                  capture_output=True, text=True, env=_env(TUNED_ENV), timeout=900)
            if proc.returncode:
                raise RuntimeError(proc.stderr[-2000:])
            got = json.loads(proc.stdout.strip().splitlines()[-1])
            for p in paths:
                data[desc][p]["app"].append(_ms(rows.get(p)))
                data[desc][p]["tub"].append(got[p]["tub"])
                data[desc][p]["loop"].append(got[p]["loop"])
        print(f"round {rnd + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    _write(args.out, "methods.json", data)
    print("\n| spec | path | app ms (best round) | t.u.b. ms (best) | loop ms (best) | app / t.u.b. | loop / t.u.b. | app per-round range |")
    print("|---|---|---|---|---|---|---|---|")
    for desc in specs:
        for p in paths:
            d = data[desc][p]
            app = [v for v in d["app"] if v]
            if not app:
                continue
            a, t, lo = min(app), min(d["tub"]), min(d["loop"])
            print(f"| {desc} | {p} | {a:.4g} | {t:.4g} | {lo:.4g} | {a / t:.3f} | {lo / t:.3f} | {min(app):.4g}..{max(app):.4g} |")
    return 0


def _env(extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", *TUNED_ENV)}
    env.update(extra or {})
    env.setdefault("PYTHONPATH", str(ROOT))
    return env


def tub_fresh(desc: str, threads: int, paths, t_min: float) -> dict:
    """torch.utils.benchmark in a new process started with the tool's default allocator setting (tuned)."""
    p = subprocess.run([PY, "-c", USER_SCRIPT, desc, str(threads), ",".join(paths), str(t_min)],
                       capture_output=True, text=True, env=_env(TUNED_ENV), timeout=900)
    if p.returncode:
        raise RuntimeError(p.stderr[-2000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def _rows(path: Path) -> dict:
    with open(path, newline="") as f:
        return {r["path"]: r for r in csv.DictReader(f)}


def app_cli(desc: str, threads: int, paths, budget_ms: float, tmp: Path) -> dict:
    out = tmp / "cli.csv"
    p = subprocess.run([PY, "-m", "explorer", "run", desc, "--threads", str(threads), "--paths", ",".join(paths),
                        "--budget-ms", str(budget_ms), "--csv", str(out), "--force"],
                       capture_output=True, text=True, env=_env(), timeout=900, cwd=ROOT)
    if p.returncode:
        raise RuntimeError(p.stderr[-2000:])
    return _rows(out)


def app_gui(desc: str, threads: int, paths, budget_ms: float, tmp: Path) -> tuple[dict, str]:
    out = tmp / "gui.csv"
    env = _env()
    if not env.get("DISPLAY"):
        env["QT_QPA_PLATFORM"] = "offscreen"
    p = subprocess.run([PY, "-m", "explorer", "gui", desc, "--run", "--threads", str(threads), "--paths", ",".join(paths),
                        "--budget-ms", str(budget_ms), "--csv", str(out), "--force", "--exit-when-done"],
                       capture_output=True, text=True, env=env, timeout=900, cwd=ROOT)
    if p.returncode:
        raise RuntimeError(p.stderr[-2000:])
    stall = next((ln for ln in (p.stdout + p.stderr).splitlines() if ln.startswith("event-loop stalls")), "")
    return _rows(out), stall


def _ms(row) -> float | None:
    try:
        return float(row["median_ms"]) if row and row.get("status") == "ok" and row.get("median_ms") else None
    except ValueError:
        return None


def _header(what: str) -> str:
    info = subprocess.run([PY, "-m", "explorer", "info", "--no-peak", "--json"], capture_output=True, text=True,
                          env=_env(), cwd=ROOT)
    try:
        d = json.loads(info.stdout)
        m = f"{d['cpu']}, {d['cores']} cores, torch {d['torch_version']}, oneDNN {d['onednn_version']}, ISA {d['onednn_isa'] or d['torch_isa']}"
    except (ValueError, KeyError):
        m = "unknown machine"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"# {what}: {m}; load average {load:.2f} at start; {time.strftime('%Y-%m-%d %H:%M')}"


def fidelity(args) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="bench-trust-"))
    specs = args.specs.split(",")
    data: dict = {s: {p: {"app": [], "tub": [], "quality": []} for p in PATHS} for s in specs}
    print(_header("fidelity, app (CLI) vs torch.utils.benchmark in a fresh process"))
    for rnd in range(args.rounds):
        for desc in specs:
            order = ("app", "tub") if (rnd % 2 == 0) else ("tub", "app")
            for who in order:
                if who == "app":
                    rows = app_cli(desc, args.threads, PATHS, args.budget_ms, tmp)
                    for p in PATHS:
                        data[desc][p]["app"].append(_ms(rows.get(p)))
                        data[desc][p]["quality"].append((rows.get(p) or {}).get("quality", ""))
                else:
                    t = tub_fresh(desc, args.threads, PATHS, args.budget_ms / 1e3)
                    for p in PATHS:
                        data[desc][p]["tub"].append(t.get(p))
        print(f"round {rnd + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    _write(args.out, "fidelity.json", data)
    print(_fidelity_table(data, specs))
    return 0


def _fidelity_table(data: dict, specs) -> str:
    """Two statistics per spec and path. `best` compares each side's fastest round: host slowdowns only ever
    add time, and on a host whose speed changes for seconds at a time (this one: 1.75x) the fastest of
    several rounds is each side's quiet figure (the reasoning of timeit's docs for taking the minimum of
    repeats). `median` is the median of the per-round ratios, which that host noise scatters."""
    out = ["| spec | path | app ms (best round) | t.u.b. ms (best round) | app / t.u.b. (best) | median of per-round ratios "
           "| per-round range | noisy rows |", "|---|---|---|---|---|---|---|---|"]
    best_r, med_r = [], []
    for desc in specs:
        for p in PATHS:
            d = data[desc][p]
            apps = [a for a in d["app"] if a]
            tubs = [t for t in d["tub"] if t]
            pairs = [(a, t) for a, t in zip(d["app"], d["tub"]) if a and t]
            if not apps or not tubs or not pairs:
                out.append(f"| {desc} | {p} | - | - | - | - | - | - |")
                continue
            rs = [a / t for a, t in pairs]
            best = min(apps) / min(tubs)
            best_r.append(best)
            med_r.append(statistics.median(rs))
            out.append(f"| {desc} | {p} | {min(apps):.4g} | {min(tubs):.4g} | {best:.3f} | {med_r[-1]:.3f} "
                       f"| {min(rs):.3f}..{max(rs):.3f} | {sum(q == 'noisy' for q in d['quality'])}/{len(d['quality'])} |")
    if best_r:
        out.append(f"\nbest rounds: {sum(0.95 <= r <= 1.05 for r in best_r)} of {len(best_r)} spec/path ratios within "
                   f"0.95..1.05 (all: {min(best_r):.3f}..{max(best_r):.3f})")
        out.append(f"median of per-round ratios: {sum(0.95 <= r <= 1.05 for r in med_r)} of {len(med_r)} within "
                   f"0.95..1.05 (all: {min(med_r):.3f}..{max(med_r):.3f})")
    return "\n".join(out)


def gui(args) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="bench-trust-"))
    specs = args.specs.split(",")
    data: dict = {s: {p: {"gui": [], "cli": []} for p in PATHS} for s in specs}
    waits: dict = {"gui": [], "cli": []}  # the measuring threads' run-queue wait, % of each loop
    stalls = []
    print(_header("GUI vs CLI medians" + (" (real X window)" if os.environ.get("DISPLAY") else " (offscreen)")))
    for rnd in range(args.rounds):
        for desc in specs:
            for who in (("gui", "cli") if rnd % 2 == 0 else ("cli", "gui")):
                if who == "gui":
                    rows, stall = app_gui(desc, args.threads, PATHS, args.budget_ms, tmp)
                    stalls.append((desc, stall))
                else:
                    rows = app_cli(desc, args.threads, PATHS, args.budget_ms, tmp)
                for p in PATHS:
                    data[desc][p][who].append(_ms(rows.get(p)))
                    try:
                        waits[who].append(float((rows.get(p) or {}).get("runq_wait_pct") or "nan"))
                    except ValueError:
                        pass
        print(f"round {rnd + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    _write(args.out, "gui.json", {"data": data, "stalls": stalls, "waits": waits})
    for who in ("gui", "cli"):  # how much the window (or anything else) kept the measuring threads off a core
        w = [x for x in waits[who] if x == x]
        if w:
            print(f"run-queue wait of the measuring threads, {who} runs: median {statistics.median(w):.2f}% of the loop, "
                  f"max {max(w):.2f}% ({len(w)} loops)")
    print("\n| spec | path | GUI ms (best round) | CLI ms (best round) | GUI / CLI (best) | median of per-round ratios | per-round range |")
    print("|---|---|---|---|---|---|---|")
    ratios, best_r = [], []
    for desc in specs:
        for p in PATHS:
            d = data[desc][p]
            pairs = [(g, c) for g, c in zip(d["gui"], d["cli"]) if g and c]
            if not pairs:
                continue
            rs = [g / c for g, c in pairs]
            ratios.append(statistics.median(rs))
            best_r.append(min(g for g, _ in pairs) / min(c for _, c in pairs))
            print(f"| {desc} | {p} | {min(g for g, _ in pairs):.4g} | {min(c for _, c in pairs):.4g} | {best_r[-1]:.3f} "
                  f"| {ratios[-1]:.3f} | {min(rs):.3f}..{max(rs):.3f} |")
    if ratios:
        print(f"\nbest rounds: {sum(0.95 <= r <= 1.05 for r in best_r)} of {len(best_r)} within 5% (all: {min(best_r):.3f}..{max(best_r):.3f})")
        print(f"median of per-round ratios: {sum(0.95 <= r <= 1.05 for r in ratios)} of {len(ratios)} within 5% (all: {min(ratios):.3f}..{max(ratios):.3f})")
    p99 = []
    for _, s in stalls:
        try:
            p99.append(float(s.split("p99")[1].split("ms")[0]))
        except (IndexError, ValueError):
            pass
    if p99:
        print(f"event-loop stall p99 per GUI run: {min(p99):.1f}..{max(p99):.1f} ms (median {statistics.median(p99):.1f})")
    return 0


def _busy_loops(seconds: float) -> list:
    code = f"import os,time\nos.nice(19)\nt=time.time()+{seconds}\nwhile time.time()<t: pass\n"
    return [subprocess.Popen([PY, "-c", code], start_new_session=True) for _ in range(os.cpu_count() or 2)]


def load(args) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="bench-trust-"))
    quiet_file = Path(args.quiet)
    quiet_data = json.loads(quiet_file.read_text()) if quiet_file.exists() else {}
    specs = args.specs.split(",")
    quiet = {}
    for desc in specs:
        for p in PATHS:
            vals = [v for v in (quiet_data.get(desc, {}).get(p, {}).get("app") or []) if v]
            if vals:
                quiet[(desc, p)] = statistics.median(vals)
    missing = [d for d in specs if not any((d, p) in quiet for p in PATHS)]
    if missing:  # quiet figures first, measured the same way
        print(f"measuring the quiet figures of {len(missing)} specs first", file=sys.stderr)
        for desc in missing:
            vals = {p: [] for p in PATHS}
            for _ in range(3):
                rows = app_cli(desc, args.threads, PATHS, args.budget_ms, tmp)
                for p in PATHS:
                    if _ms(rows.get(p)):
                        vals[p].append(_ms(rows.get(p)))
            for p in PATHS:
                if vals[p]:
                    quiet[(desc, p)] = statistics.median(vals[p])
    print(_header(f"under load ({os.cpu_count()} busy loops at nice 19, each in its own session)"))
    results = []
    for rnd in range(args.rounds):
        for desc in specs:
            loops = _busy_loops(600)
            try:
                time.sleep(0.5)
                rows = app_cli(desc, args.threads, PATHS, args.budget_ms, tmp)
            finally:
                for lp in loops:
                    lp.kill()
                    lp.wait()
            for p in PATHS:
                r = rows.get(p) or {}
                ms, q = _ms(r), quiet.get((desc, p))
                if ms and q:
                    results.append({"spec": desc, "path": p, "round": rnd, "ms": ms, "quiet_ms": q, "ratio": ms / q,
                                    "quality": r.get("quality", ""), "reason": r.get("quality_reason", ""),
                                    "attempts": r.get("attempts", "")})
            time.sleep(1.0)  # let the machine settle between runs
        print(f"round {rnd + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    _write(args.out, "load.json", results)
    off_ok = [r for r in results if r["quality"] == "ok" and not 0.9 <= r["ratio"] <= 1.1]
    noisy = [r for r in results if r["quality"] == "noisy"]
    unnamed = [r for r in noisy if not r["reason"]]
    ok = [r for r in results if r["quality"] == "ok"]
    print(f"\n{len(results)} path measurements under load: {len(ok)} marked ok, {len(noisy)} marked noisy "
          f"({len(unnamed)} noisy without a cause)")
    print(f"rows off by more than 10% from their quiet figure and marked ok: {len(off_ok)}")
    if ok:
        rs = sorted(r["ratio"] for r in ok)
        print(f"ok rows' ratio to quiet: {rs[0]:.3f}..{rs[-1]:.3f} (median {statistics.median(rs):.3f})")
    if noisy:
        rs = sorted(r["ratio"] for r in noisy)
        print(f"noisy rows' ratio to quiet: {rs[0]:.3f}..{rs[-1]:.3f} (median {statistics.median(rs):.3f})")
    print("\n| spec | path | quiet ms | ok rows (ratio range) | noisy rows (ratio range) |")
    print("|---|---|---|---|---|")
    for desc in specs:
        for p in PATHS:
            rs = [r for r in results if r["spec"] == desc and r["path"] == p]
            if not rs:
                continue
            o = [r["ratio"] for r in rs if r["quality"] == "ok"]
            n = [r["ratio"] for r in rs if r["quality"] == "noisy"]
            f = lambda v: f"{len(v)} ({min(v):.2f}..{max(v):.2f})" if v else "0"  # noqa: E731
            print(f"| {desc} | {p} | {quiet[(desc, p)]:.4g} | {f(o)} | {f(n)} |")
    for r in off_ok[:20]:
        print(f"OFF AND OK: {r}")
    reasons = sorted({r["reason"].split(":")[0] for r in noisy})
    print("\ncauses named: " + "; ".join(reasons))
    return 0


def _write(out: str, name: str, data) -> None:
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text(json.dumps(data, indent=1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("fidelity", "gui", "load", "table", "methods"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--budget-ms", type=float, default=500.0)
    ap.add_argument("--specs", default=",".join(SPECS))
    ap.add_argument("--paths", default="dense,native", help="methods: which F.conv2d paths")
    ap.add_argument("--out", default="bench-out")
    ap.add_argument("--quiet", default="bench-out/fidelity.json", help="load: quiet medians from a fidelity run")
    args = ap.parse_args(argv)
    return {"fidelity": fidelity, "gui": gui, "load": load, "table": table, "methods": methods}[args.what](args)


def table(args) -> int:
    """Print the fidelity table again from a saved run (--out DIR/fidelity.json)."""
    data = json.loads((Path(args.out) / "fidelity.json").read_text())
    print(_fidelity_table(data, list(data)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
