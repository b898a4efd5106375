"""Fidelity: the harness median against torch.utils.benchmark's blocked_autorange, side by side.

Same callable (the prepared path's fn, inside the same context), same threads, one process, alternating
the two timers over several rounds so drift and neighbours hit both alike. Prints, per spec and path,
the median of the per-round ratios harness/torch and their spread (min..max).

    python tests/benchmarks/bench_fidelity.py [--rounds 5] [--paths dense,mkldnn] [--budget-ms 500]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch
import torch.utils.benchmark as tb

from explorer.core.measure import machine
from explorer.core.measure.harness import Budget, measure
from explorer.core.paths.base import Tensors
from explorer.core.paths.registry import prepare
from explorer.core.problem.spec import parse_descriptor

# From ~20 µs to ~100 ms per call on a 2-core AVX-512 machine (dense f32).
SPECS = [
    "mb1ic16ih14oc16oh14kh3ph1",
    "mb2ic32ih28oc32oh28kh3ph1",
    "mb1ic64ih56oc64oh56kh3ph1",
    "mb1ic128ih56oc128oh56kh3ph1",
    "mb4ic128ih56oc128oh56kh3ph1",
    "mb8ic256ih56oc256oh56kh3ph1",
]


def torch_median_ms(fn, threads: int, min_run_time: float) -> float:
    t = tb.Timer(stmt="fn()", globals={"fn": fn}, num_threads=threads)
    return t.blocked_autorange(min_run_time=min_run_time).median * 1e3


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--paths", default="dense,mkldnn")
    ap.add_argument("--budget-ms", type=float, default=500.0, help="harness budget per measurement")
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--specs", default=",".join(SPECS))
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(f"# torch {torch.__version__}, oneDNN {machine.onednn_version()}, {machine.cpu_model()}, "
          f"threads {args.threads}, rounds {args.rounds}, harness budget {args.budget_ms:.0f} ms, "
          f"blocked_autorange(min_run_time={args.budget_ms / 1e3:.2f})")
    print(f"{'spec':34s} {'path':8s} {'harness ms':>11s} {'torch ms':>10s} {'ratio':>7s} {'spread':>15s}")
    worst = 0.0
    for desc in args.specs.split(","):
        spec = parse_descriptor(desc)
        tensors = Tensors.make(spec)
        for path in args.paths.split(","):
            prep = prepare(path, tensors)
            ratios, hs, ts = [], [], []
            with torch.no_grad(), prep.context():
                prep.fn()
                for r in range(args.rounds):
                    # alternate which timer goes first, so neither always gets the warmer cache
                    order = ("h", "t") if r % 2 == 0 else ("t", "h")
                    got = {}
                    for who in order:
                        if who == "h":
                            got["h"] = measure(prep.fn, Budget(budget_ms=args.budget_ms)).median_ms
                        else:
                            got["t"] = torch_median_ms(prep.fn, args.threads, args.budget_ms / 1e3)
                    hs.append(got["h"])
                    ts.append(got["t"])
                    ratios.append(got["h"] / got["t"])
            ratio = statistics.median(ratios)
            worst = max(worst, abs(ratio - 1))
            print(f"{desc:34s} {path:8s} {statistics.median(hs):11.4f} {statistics.median(ts):10.4f} "
                  f"{ratio:7.3f} {min(ratios):7.3f}..{max(ratios):.3f}", flush=True)
    print(f"# worst |ratio - 1| = {worst:.3f}  (target: every ratio within 0.95..1.05)")
    return 0


if __name__ == "__main__":
    t0 = time.time()
    rc = main()
    print(f"# wall {time.time() - t0:.0f} s", file=sys.stderr)
    raise SystemExit(rc)
