"""Is `--allocator default` a fresh script? The app's `default` rows against a plain torch.utils.benchmark
script, written as a user would write it, in a fresh process with glibc as it comes (issue 22, part 3).

Per round and spec, alternating which side goes first: the plain script (median of blocked_autorange, then
minor page faults per call over 200 calls by getrusage), and `mkldnn-explorer run DESC --paths dense
--allocator default` (its median_ms and faults_per_call). Prints both sides per round, then per spec the
best-round ratio app/plain, the median of per-round ratios with their spread, and the faults per call.

    python tests/benchmarks/bench_default_allocator.py [--rounds 8] [--app-python PY] [--out bench-out]

--app-python runs the app from another checkout's interpreter (e.g. /work/main/.venv/bin/python, for the
figure before a change); the plain script always runs with this interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
SPECS = ("mb4ic64ih28oc64oh28kh3ph1", "mb8ic64ih28oc64oh28kh3ph1")

# What a user writes: no explorer import, the conv of the spec, F.conv2d, torch.utils.benchmark.
PLAIN_SCRIPT = r'''
import json, resource, sys
import torch, torch.nn.functional as F
import torch.utils.benchmark as tb

mb, threads, t_min = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
torch.set_grad_enabled(False)
conv = torch.nn.Conv2d(64, 64, 3, padding=1).eval()
x, w, b = torch.randn(mb, 64, 28, 28), conv.weight, conv.bias
t = tb.Timer("F.conv2d(x, w, b, padding=1)", globals=dict(F=F, x=x, w=w, b=b), num_threads=threads)
m = t.blocked_autorange(min_run_time=t_min)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(200):
    F.conv2d(x, w, b, padding=1)
after = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
print(json.dumps({"median_ms": m.median * 1e3, "faults_per_call": (after - before) / 200}))
'''


def _env() -> dict:
    """glibc as it comes: none of the tool's allocator variables, no preload."""
    drop = ("LD_PRELOAD", "MALLOC_MMAP_THRESHOLD_", "MALLOC_MMAP_MAX_", "MALLOC_TRIM_THRESHOLD_",
            "MKLDNN_EXPLORER_ALLOCATOR", "MKLDNN_EXPLORER_IN_PROCESS")
    return {k: v for k, v in os.environ.items() if k not in drop}


def plain(desc: str, threads: int, t_min: float) -> dict:
    mb = int(desc.removeprefix("mb").split("ic")[0])
    p = subprocess.run([PY, "-c", PLAIN_SCRIPT, str(mb), str(threads), str(t_min)], capture_output=True, text=True,
                       env=_env(), timeout=600)
    if p.returncode:
        raise RuntimeError(p.stderr[-2000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def app(desc: str, threads: int, budget_ms: float, app_python: str) -> dict:
    p = subprocess.run([app_python, "-m", "explorer", "run", desc, "--paths", "dense", "--allocator", "default",
                        "--threads", str(threads), "--budget-ms", str(budget_ms), "--json"],
                       capture_output=True, text=True, env=_env(), timeout=600, cwd="/")  # its own checkout's explorer
    if p.returncode:
        raise RuntimeError(p.stderr[-2000:])
    r = json.loads(p.stdout)["results"][0]
    return {"median_ms": float(r["median_ms"]), "faults_per_call": float(r["faults_per_call"] or 0),
            "quality": r.get("quality", "")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--budget-ms", type=float, default=500.0, help="the app's budget; the script's min_run_time")
    ap.add_argument("--specs", default=",".join(SPECS))
    ap.add_argument("--app-python", default=PY)
    ap.add_argument("--out", default="bench-out")
    args = ap.parse_args(argv)
    specs = args.specs.split(",")
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} load average {os.getloadavg()[0]:.2f}; app: {args.app_python}; "
          f"{args.rounds} rounds, {args.threads} threads, budget {args.budget_ms:.0f} ms", flush=True)
    data = {s: {"app": [], "plain": []} for s in specs}
    for rnd in range(args.rounds):
        for desc in specs:
            order = ("app", "plain") if rnd % 2 == 0 else ("plain", "app")
            got = {}
            for who in order:
                got[who] = app(desc, args.threads, args.budget_ms, args.app_python) if who == "app" else \
                    plain(desc, args.threads, args.budget_ms / 1e3)
                data[desc][who].append(got[who])
            print(f"round {rnd + 1} {desc}: app {got['app']['median_ms']:.4g} ms ({got['app']['faults_per_call']:.1f} "
                  f"faults/call, {got['app']['quality'] or '-'}), plain {got['plain']['median_ms']:.4g} ms "
                  f"({got['plain']['faults_per_call']:.1f} faults/call), ratio "
                  f"{got['app']['median_ms'] / got['plain']['median_ms']:.3f}  load {os.getloadavg()[0]:.2f}", flush=True)
    print("\n| spec | app best ms | plain best ms | best ratio | median of per-round ratios (min..max) | "
          "app faults/call (median) | plain faults/call (median) |")
    print("|---|---|---|---|---|---|---|")
    for desc in specs:
        a = [r["median_ms"] for r in data[desc]["app"]]
        p = [r["median_ms"] for r in data[desc]["plain"]]
        ratios = [x / y for x, y in zip(a, p)]
        fa = statistics.median(r["faults_per_call"] for r in data[desc]["app"])
        fp = statistics.median(r["faults_per_call"] for r in data[desc]["plain"])
        print(f"| {desc} | {min(a):.4g} | {min(p):.4g} | **{min(a) / min(p):.3f}** | {statistics.median(ratios):.3f} "
              f"({min(ratios):.3f}..{max(ratios):.3f}) | {fa:.1f} | {fp:.1f} |")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "default_allocator.json").write_text(json.dumps(data, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
