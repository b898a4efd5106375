"""Why a model's convs take longer inside it than alone: each conv timed in the model and then alone, four ways.

For every conv module of a reference network (eager, NCHW or channels_last), in one process:
  in model  a clock read around the module during whole forwards (the planner's `convs in model ms`);
  alone     F.conv2d on the very input the model gave that layer, again and again (the per-layer table's way);
  cold w    alone, but rotating through copies of the weights (64 MiB in all), so they come from memory,
            as they do in a forward where the other layers evicted them (benchdnn's --cold-cache=wei idea);
  fresh in  alone, but the input rewritten by a parallel ATen copy before each call, as the op before it would;
  flushed   alone, after a 64 MiB copy and a read of input and weights before each call.
Each is the best of --rounds rounds (the host is noisy, BENCHMARKS §0e). Run it with the allocator setting
the tool measures in, or the model's first-touch page faults dominate:

    MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=1000000000 \\
        python tests/benchmarks/bench_model_layers.py mobilenet_v2 [--mb 1] [--channels-last] [--threads 2]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F
from torch import nn

from explorer.core.model.surgery import conv_paths, set_submodule
from explorer.core.model.zoo import build

WAYS = ("in model", "alone", "cold w", "fresh in", "flushed")


def _alone(m, x, way: str, big, big_out, n: int = 12) -> float:
    ws = [m.weight]
    if way == "cold w":
        k = max(2, min(200, int(64 * 2**20 / (m.weight.numel() * m.weight.element_size()))))
        ws = [m.weight.clone(memory_format=torch.preserve_format) for _ in range(k)]
    src = x.clone() if way == "fresh in" else None
    ts = []
    for i in range(n + 2):
        w = ws[i % len(ws)]
        if src is not None:
            x.copy_(src)
        if way == "flushed":
            big_out.copy_(big)
            x.sum()
            w.sum()
        t = time.perf_counter_ns()
        F.conv2d(x, w, m.bias, m.stride, m.padding, m.dilation, m.groups)
        ts.append(time.perf_counter_ns() - t)
    return statistics.median(ts[2:]) / 1e6


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("net")
    ap.add_argument("--mb", type=int, default=1)
    ap.add_argument("--channels-last", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--top", type=int, default=8, help="layers to list, largest in-model excess first")
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    torch.set_grad_enabled(False)
    net = build(a.net).eval()
    x = torch.randn(a.mb, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    if a.channels_last:
        net, x = net.to(memory_format=torch.channels_last), x.contiguous(memory_format=torch.channels_last)
    paths = conv_paths(net)
    spent: dict = {p: [] for p in paths}
    inputs: dict = {}

    class Clocked(nn.Module):
        def __init__(self, name, inner):
            super().__init__()
            self.name, self.inner = name, inner

        def forward(self, t):
            inputs[self.name] = t
            t0 = time.perf_counter_ns()
            out = self.inner(t)
            spent[self.name].append(time.perf_counter_ns() - t0)
            return out

    convs = {p: net.get_submodule(p) for p in paths}
    for p in paths:
        set_submodule(net, p, Clocked(p, convs[p]))
    big = torch.randn(16 * 2**20)
    big_out = torch.empty_like(big)
    for _ in range(3):
        net(x)
    res = {p: {w: [] for w in WAYS} for p in paths}
    for _ in range(a.rounds):
        for p in paths:
            spent[p].clear()
        for _ in range(8):
            net(x)
        for p in paths:
            res[p]["in model"].append(statistics.median(spent[p]) / 1e6)
            for way in WAYS[1:]:
                res[p][way].append(_alone(convs[p], inputs[p], way, big, big_out))
    best = {p: {w: min(v) for w, v in d.items()} for p, d in res.items()}
    layout = "channels_last" if a.channels_last else "nchw"
    print(f"# {a.net} mb{a.mb} {layout}, {a.threads} threads, best of {a.rounds} rounds; {time.strftime('%Y-%m-%d %H:%M')}")
    print("\n| " + " | ".join(("convs", *(f"{w} ms" for w in WAYS))) + " |")
    print("|---" * (len(WAYS) + 1) + "|")
    print(f"| all {len(paths)} | " + " | ".join(f"{sum(best[p][w] for p in paths):.2f}" for w in WAYS) + " |")
    worst = sorted(paths, key=lambda p: best[p]["in model"] - best[p]["alone"], reverse=True)[: a.top]
    for p in worst:
        m = convs[p]
        label = f"{p} (g{m.groups} {m.in_channels}->{m.out_channels} {m.kernel_size[0]}x{m.kernel_size[1]})"
        print(f"| {label} | " + " | ".join(f"{best[p][w]:.3f}" for w in WAYS) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
