"""Is this machine ever quiet? Fixed pieces of work timed again and again, in one process, for a while.

The trust checks' targets hold "on a quiet machine". This script shows whether the machine is one: it
times the same work every ~0.4 s (each probe the fastest of 5 calls, so one late call does not count)
and reports, per kernel, how far the probes sit above the fastest seen and how long the machine stays
within 5% of it. On a quiet machine nearly every probe is within 5%. Nothing else should run meanwhile
(the load average at the start and the end is printed).

    python tests/benchmarks/bench_host_noise.py [--seconds 60]

Kernels: the tool's canary (pure Python, explorer.core.measure.interference), a 64 MiB copy at 1 thread (memory),
a 1 MiB copy repeated 20 times at 1 thread (L2), and one conv (mb8ic64ih28oc64oh28kh3ph1, dense) at 1 and
at 2 threads.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch
import torch.nn.functional as F

from explorer.core.measure.interference import canary_ns


def _best_of(fn, n: int = 5) -> int:
    best = None
    for _ in range(n):
        t = time.perf_counter_ns()
        fn()
        d = time.perf_counter_ns() - t
        best = d if best is None else min(best, d)
    return best


def _longest_run(flags) -> int:
    best = cur = 0
    for f in flags:
        cur = cur + 1 if f else 0
        best = max(best, cur)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--gap", type=float, default=0.3, help="seconds of sleep between probes")
    args = ap.parse_args(argv)
    torch.set_grad_enabled(False)
    gen = torch.Generator().manual_seed(0)
    x, w = torch.randn(8, 64, 28, 28, generator=gen), torch.randn(64, 64, 3, 3, generator=gen)
    big, big_out = torch.randn(16 * 2**20, generator=gen), torch.empty(16 * 2**20)
    small, small_out = torch.randn(256 * 1024, generator=gen), torch.empty(256 * 1024)

    def conv():
        F.conv2d(x, w, padding=1)

    def l2():
        for _ in range(20):
            small_out.copy_(small)

    kernels = {
        "canary (pure Python)": (1, lambda: canary_ns(1)),
        "copy 64 MiB, 1 thread": (1, lambda: big_out.copy_(big)),
        "copy 1 MiB x20, 1 thread": (1, l2),
        "conv, 1 thread": (1, conv),
        "conv, 2 threads": (min(2, os.cpu_count() or 1), conv),
    }
    for threads, fn in kernels.values():  # warm-up: primitives, pages
        torch.set_num_threads(threads)
        _best_of(fn, 3)
    times: dict = {k: [] for k in kernels}
    load0 = os.getloadavg()
    start = time.time()
    t_end = start + args.seconds
    while time.time() < t_end:
        for name, (threads, fn) in kernels.items():
            torch.set_num_threads(threads)
            times[name].append(_best_of(fn))
        time.sleep(args.gap)
    load1 = os.getloadavg()
    n = len(next(iter(times.values())))
    period = (time.time() - start) / max(1, n)
    print(f"# host noise: {n} probes over {time.time() - start:.0f} s (one every {period:.2f} s); "
          f"load average {load0[0]:.2f} at the start, {load1[0]:.2f} at the end; {time.strftime('%Y-%m-%d %H:%M')}")
    print("\n| kernel | fastest probe | median / fastest | p90 / fastest | slowest / fastest | probes within 5% | longest quiet stretch |")
    print("|---|---|---|---|---|---|---|")
    for name, ts in times.items():
        b = min(ts)
        rel = sorted(t / b for t in ts)
        within = [t / b <= 1.05 for t in ts]
        print(f"| {name} | {b / 1e6:.3f} ms | {statistics.median(rel):.2f} | {rel[int(0.9 * (len(rel) - 1))]:.2f} "
              f"| {rel[-1]:.2f} | {sum(within)}/{len(ts)} | {_longest_run(within) * period:.1f} s |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
