"""Repeatability: two back-to-back runs of a 20-layer batch, and what the adaptive stop costs.

For each layer the path is measured four times, interleaved A1 F1 A2 F2: A = adaptive stop (the default:
budget, or earlier once the median's 95% CI is within 0.5%), F = fixed (the whole budget, no early stop).
Reports the share of layers whose two medians agree within 5% for each policy (calls >= 1 ms and all),
and the time each policy spent.

    python tests/benchmarks/bench_repeatability.py [--batch resnet_50] [--layers 20] [--mb 1] [--path mkldnn]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from explorer.core.measure import machine
from explorer.core.measure.harness import DEFAULT_PRECISION, Budget, measure
from explorer.core.paths.base import Tensors
from explorer.core.paths.registry import prepare
from explorer.core.problem.batch import load_batch


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", default="resnet_50")
    ap.add_argument("--layers", type=int, default=20)
    ap.add_argument("--mb", type=int, default=1)
    ap.add_argument("--path", default="mkldnn")
    ap.add_argument("--budget-ms", type=float, default=500.0)
    args = ap.parse_args(argv)
    points = [p for p in load_batch(args.batch, mb=args.mb).points if not p.skipped][: args.layers]
    print(f"# {machine.cpu_model()}, threads {torch.get_num_threads()}, torch {torch.__version__}, "
          f"{len(points)} layers of {args.batch} (mb{args.mb}), path {args.path}, budget {args.budget_ms:.0f} ms")
    print(f"{'layer':34s} {'ms':>8s} {'adaptive Δ%':>11s} {'fixed Δ%':>9s} {'adapt s':>8s} {'fixed s':>8s} {'n A/F':>11s}")
    rows = []
    for p in points:
        prep = prepare(args.path, Tensors.make(p.spec))
        adaptive = Budget(budget_ms=args.budget_ms, precision=DEFAULT_PRECISION)
        fixed = Budget(budget_ms=args.budget_ms, precision=0.0)
        with torch.no_grad(), prep.context():
            prep.fn()
            a1, f1, a2, f2 = (measure(prep.fn, b) for b in (adaptive, fixed, adaptive, fixed))
        da = abs(a1.median_ms - a2.median_ms) / min(a1.median_ms, a2.median_ms) * 100
        df = abs(f1.median_ms - f2.median_ms) / min(f1.median_ms, f2.median_ms) * 100
        ta, tf = a1.wall_s + a2.wall_s, f1.wall_s + f2.wall_s
        rows.append((a1.median_ms, da, df, ta, tf))
        name = (p.spec.name or p.spec.desc)[:34]
        print(f"{name:34s} {a1.median_ms:8.3f} {da:11.2f} {df:9.2f} {ta:8.2f} {tf:8.2f} {a1.n:5d}/{f1.n:<5d}", flush=True)
    for label, sel in (("calls >= 1 ms", [r for r in rows if r[0] >= 1.0]), ("all layers", rows)):
        if not sel:
            continue
        agree_a = 100 * sum(r[1] <= 5 for r in sel) / len(sel)
        agree_f = 100 * sum(r[2] <= 5 for r in sel) / len(sel)
        print(f"# {label} ({len(sel)}): medians within 5%: adaptive {agree_a:.0f}%, fixed {agree_f:.0f}%; "
              f"median |Δ| adaptive {statistics.median(r[1] for r in sel):.2f}%, fixed {statistics.median(r[2] for r in sel):.2f}%")
    ta, tf = sum(r[3] for r in rows), sum(r[4] for r in rows)
    print(f"# time: adaptive {ta:.1f} s, fixed {tf:.1f} s (adaptive/fixed = {ta / tf:.2f})")
    return 0


if __name__ == "__main__":
    t0 = time.time()
    rc = main()
    print(f"# wall {time.time() - t0:.0f} s")
    raise SystemExit(rc)
