"""How close to the machine: for ResNet-50's 3x3 layers, the best path's GFLOP/s as % of the measured peak
(fp32 and bf16), with the peak measured in the same process just before (machine.measure_peak: the best of
torch.mm 2048^3 and a oneDNN 1x1 convolution run as a 1024^3 GEMM, best call).

    python tests/benchmarks/bench_peak_fraction.py [--mb 1] [--budget-ms 300]
"""

from __future__ import annotations

import argparse
import time

from explorer.core.jobs.options import RunOptions
from explorer.core.jobs.run import run
from explorer.core.measure import machine
from explorer.core.problem.batch import load_batch

PATHS = ("dense", "channels_last", "mkldnn")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=1)
    ap.add_argument("--budget-ms", type=float, default=300.0)
    args = ap.parse_args(argv)
    peak = machine.peak(remeasure=True)
    print(f"# {machine.cpu_model()}, threads {peak.threads}: peak fp32 {peak.fp32_gflops:.0f} GFLOP/s, "
          f"bf16 {peak.bf16_gflops or 0:.0f} GFLOP/s (fp32 from {peak.source}), bandwidth {peak.bandwidth_gbs:.1f} GB/s")
    layers = [p.spec for p in load_batch("resnet_50", mb=args.mb).points
              if not p.skipped and p.spec.kh == 3 and p.spec.kw == 3]
    print(f"{'layer':32s} {'dtype':5s} {'best path':14s} {'GFLOP/s':>8s} {'% peak':>7s}")
    for dtype, pk in (("f32", peak.fp32_gflops), ("bf16", peak.bf16_gflops)):
        if not pk:
            print(f"# {dtype}: no peak (not supported here)")
            continue
        fracs = []
        for spec in layers:
            s = spec.replace(dtype=dtype)
            rows = [r for r in run(s, RunOptions(paths=PATHS, budget_ms=args.budget_ms, trace=False, check=False))
                    if r.status == "ok"]
            best = max(rows, key=lambda r: r.gflops)
            frac = 100 * best.gflops / pk
            fracs.append(frac)
            print(f"{(s.name or s.desc)[:32]:32s} {dtype:5s} {best.path:14s} {best.gflops:8.1f} {frac:6.1f}%", flush=True)
        print(f"# {dtype}: best path reaches {min(fracs):.0f}..{max(fracs):.0f}% of peak (median {sorted(fracs)[len(fracs) // 2]:.0f}%)")
    return 0


if __name__ == "__main__":
    t0 = time.time()
    rc = main()
    print(f"# wall {time.time() - t0:.0f} s")
    raise SystemExit(rc)
