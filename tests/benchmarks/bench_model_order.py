"""What the planner's prediction stands on, paired in one process: the convs alone, in model order, inside.

For one reference network and mode, in rounds (the host is never quiet, BENCHMARKS §0e, so every figure is
compared with the one taken beside it, not with one taken minutes apart):
  in model     the convs timed inside the mode's own forward (model_inplace, the `convs in model` column)
  alone        each distinct conv on the mode's per-layer path, back to back (the per-layer table's way)
               times its count
  in order     every conv site once, in model order, each with its own tensors (model_sequence: the
               prediction's conv time)
  fwd b2b      the mode's forward, back to back (what a user's own loop sees)
  fwd rounds   the same forward timed in the planner's rounds: after an in-order pass and the remainder
  predicted    in order + remainder (+ the mode's conversions, not counted here) against fwd rounds
  graph parts  jit_mkldnn only: the frozen graph's own conv nodes in one call + the graph without them
               (model_jit), against fwd rounds: cold (each part fed captured tensors) and hot (each conv
               input touched, each fed output restored in one buffer per kind, just before its first use,
               the touches and restores alone taken off: what the planner predicts jit_mkldnn from)
Prints the median and quartiles of each paired ratio. With --onednn-split, it also runs 3 forwards and 3
in-order passes under oneDNN verbose (explorer.core.trace.onednn) and splits each into oneDNN's own exec time per
primitive kind and what is left outside oneDNN (the host's per-call work: Python, dispatch, set-up). Run it with the allocator setting the tool measures in:

    MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=1000000000 \\
        python tests/benchmarks/bench_model_order.py mobilenet_v2 [--mb 1] [--mode nchw] [--rounds 20]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np
import torch

from explorer.core.model import chained as model_chained
from explorer.core.model import inventory as model_inventory
from explorer.core.model import modes as model_modes
from explorer.core.model import report as model_report
from explorer.core.model import zoo as model_zoo
from explorer.core.model.inplace import convs_in_forward_ms
from explorer.core.model.sequence import build_sequence
from explorer.core.paths.base import Tensors
from explorer.core.paths.registry import prepare

warnings.simplefilter("ignore", DeprecationWarning)


def _ms(fn) -> float:
    t0 = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - t0) / 1e6


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("net")
    ap.add_argument("--mb", type=int, default=1)
    ap.add_argument("--mode", default="nchw", choices=model_report.MODES)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--onednn-split", action="store_true")
    ap.add_argument("--hw", type=int, default=224, help="input height and width")
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    torch.set_grad_enabled(False)
    net = model_zoo.build(a.net).eval()
    x = torch.randn(a.mb, 3, a.hw, a.hw, generator=torch.Generator().manual_seed(0))
    inv = model_inventory.take_inventory(net, x, a.net)
    prep = model_modes.prepare_mode(a.mode, net, x, "f32")
    rem = prep.remainder()
    seq, why = build_sequence(a.mode, model_report.MODE_PATH[a.mode], inv, {})
    if seq is None:
        raise SystemExit(why)
    in_order = [p.fn for _, _, p in seq.sites]
    # alone: one prepared call per distinct (layer, path) of the sequence, with its count
    counts: dict = {}
    for li, path, _ in seq.sites:
        counts[(li, path)] = counts.get((li, path), 0) + 1
    alone = []
    for (li, path), n in counts.items():
        t = Tensors.make(inv.layers[li].spec)
        p = model_chained.prepare_chained(t) if path == model_chained.CHAINED_PATH else prepare(path, t)
        alone.append((p.fn, n))

    def one_pass():
        for fn in in_order:
            fn()

    def alone_sum() -> float:
        return sum(n * statistics.median(_ms(fn) for _ in range(6)) for fn, n in alone)

    graph = None
    if a.mode == "jit_mkldnn":
        from explorer.core.model.jit import cut_graph

        graph, cold = cut_graph(prep.model, x), cut_graph(prep.model, x, touch=False)
    gcalls = {}
    if graph:
        gcalls = {"graph convs": graph.convs, "conv touches": graph.conv_touches, "graph remainder": graph.remainder,
                  "remainder touches": graph.remainder_touches, "cold convs": cold.convs,
                  "cold remainder": cold.remainder}
    for fn in (prep.fn, rem, one_pass) + tuple(gcalls.values()):
        fn()
        fn()
    cols = {k: [] for k in ("in model", "alone", "in order", "fwd b2b", "fwd rounds", "remainder")}
    cols.update({k: [] for k in gcalls})
    for _ in range(a.rounds):
        cols["in model"].append(convs_in_forward_ms(prep.fn, prep.model, graph=(a.mode == "jit_mkldnn"), runs=3)[0])
        cols["alone"].append(alone_sum())
        cols["fwd b2b"].append(statistics.median(_ms(prep.fn) for _ in range(3)))
        o, r, f = [], [], []
        g = {k: [] for k in gcalls}
        for _ in range(3):
            o.append(_ms(one_pass))
            r.append(_ms(rem))
            for k, fn in gcalls.items():
                g[k].append(_ms(fn))
            f.append(_ms(prep.fn))
        for k, v in g.items():
            cols[k].append(statistics.median(v))
        cols["in order"].append(statistics.median(o))
        cols["remainder"].append(statistics.median(r))
        cols["fwd rounds"].append(statistics.median(f))
    c = {k: np.asarray(v) for k, v in cols.items()}
    print(f"# {a.net} mb{a.mb} {a.mode}, {a.threads} threads, {a.rounds} paired rounds; {time.strftime('%Y-%m-%d %H:%M')}")
    print("  medians ms: " + ", ".join(f"{k} {np.median(v):.4g}" for k, v in c.items()))
    for name, q in (("alone / in model", c["alone"] / c["in model"]),
                    ("in order / in model", c["in order"] / c["in model"]),
                    ("fwd rounds / fwd b2b", c["fwd rounds"] / c["fwd b2b"]),
                    ("(in order + remainder) / fwd rounds", (c["in order"] + c["remainder"]) / c["fwd rounds"]),
                    *((("(cold convs + cold remainder) / fwd rounds",
                        (c["cold convs"] + c["cold remainder"]) / c["fwd rounds"]),
                       ("hot parts (touches taken off) / fwd rounds",
                        (c["graph convs"] - c["conv touches"] + c["graph remainder"] - c["remainder touches"])
                        / c["fwd rounds"])) if graph else ())):
        lo, mid, hi = np.percentile(q, [25, 50, 75])
        print(f"  {name:38s} {mid:.3f}  (quartiles {lo:.3f}..{hi:.3f})")
    if a.onednn_split:
        _onednn_split(("forward", prep.fn), ("in order", one_pass))
    return 0


def _onednn_split(*calls) -> None:
    """Per call: wall ms (untraced median of 5), oneDNN exec ms by primitive kind (traced, median of 3)."""
    from explorer.core.trace.onednn import run_traced

    for name, fn in calls:
        wall = statistics.median(_ms(fn) for _ in range(5))
        kinds: dict = {}
        for _ in range(3):
            per: dict = {}
            for prim in run_traced(fn).primitives:
                per[prim.op] = per.get(prim.op, 0.0) + prim.time_ms
            for k, v in per.items():
                kinds.setdefault(k, []).append(v)
        inside = {k: statistics.median(v) for k, v in kinds.items()}
        total = sum(inside.values())
        parts = ", ".join(f"{k} {v:.3g}" for k, v in sorted(inside.items(), key=lambda kv: -kv[1]))
        print(f"  oneDNN split, {name}: wall {wall:.4g} ms; inside oneDNN {total:.4g} ms ({parts}); "
              f"outside {wall - total:.4g} ms")


if __name__ == "__main__":
    raise SystemExit(main())
