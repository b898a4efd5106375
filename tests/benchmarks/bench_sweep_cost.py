"""Sweep cost: wall time of a 60-point sweep at the default budget against benchdnn's timing policy.

benchdnn runs each problem until 3000 ms have passed and at least 5 runs (one untimed warm-up first).
Here the same 60 points run under both policies through the same harness, and the precision each reached
is reported as the median's 95% CI half-width (relative), so the two are compared at what they deliver.

    python tests/benchmarks/bench_sweep_cost.py [--path mkldnn] [--benchdnn-points 12]

benchdnn's policy costs >= 3 s a point, so by default it is run on every 5th point (12 of 60) and its
total is extrapolated to 60 points (said in the output).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from explorer.core.measure import machine
from explorer.core.measure.harness import Budget, measure
from explorer.core.paths.base import Tensors
from explorer.core.paths.registry import prepare
from explorer.core.problem.sweep_plan import plan_sweep


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--desc", default="mb1ic64ih28oc64oh28kh3ph1")
    ap.add_argument("--vary", default="ic=8:480:+8", help="60 points by default")
    ap.add_argument("--path", default="mkldnn")
    ap.add_argument("--benchdnn-points", type=int, default=12)
    args = ap.parse_args(argv)
    points = [p for p in plan_sweep(args.desc, [args.vary]) if not p.skipped]
    print(f"# {machine.cpu_model()}, threads {torch.get_num_threads()}, {len(points)} points: {args.desc} --vary {args.vary}, path {args.path}")
    ours = Budget()  # the default: 500 ms, stop early at a 0.5% CI
    benchdnn = Budget(budget_ms=3000, min_samples=5, precision=0.0)
    every = max(1, len(points) // args.benchdnn_points)
    t_ours = 0.0
    t_b = 0.0
    ci_ours, ci_b = [], []
    nb = 0
    for i, p in enumerate(points):
        prep = prepare(args.path, Tensors.make(p.spec))
        with torch.no_grad(), prep.context():
            prep.fn()
            m = measure(prep.fn, ours)
            t_ours += m.wall_s
            ci_ours.append(m.rel_ci)
            if i % every == 0 and nb < args.benchdnn_points:
                mb = measure(prep.fn, benchdnn)
                t_b += mb.wall_s
                ci_b.append(mb.rel_ci)
                nb += 1
                print(f"{p.label:12s} ours {m.median_ms:8.3f} ms ±{100 * m.rel_ci:.2f}% in {m.wall_s:5.2f} s ({m.stop_reason}); "
                      f"benchdnn policy {mb.median_ms:8.3f} ms ±{100 * mb.rel_ci:.2f}% in {mb.wall_s:5.2f} s", flush=True)
    t_b60 = t_b / nb * len(points)
    print(f"# ours: {t_ours:.1f} s for {len(points)} points (timed loops only), median CI ±{100 * statistics.median(ci_ours):.2f}%")
    print(f"# benchdnn policy: {t_b:.1f} s for {nb} points -> {t_b60:.0f} s for {len(points)} (extrapolated), "
          f"median CI ±{100 * statistics.median(ci_b):.2f}%")
    print(f"# ratio benchdnn/ours = {t_b60 / t_ours:.1f}x")
    return 0


if __name__ == "__main__":
    t0 = time.time()
    rc = main()
    print(f"# wall {time.time() - t0:.0f} s")
    raise SystemExit(rc)
