"""int8 vs bf16 vs f32 on a few ResNet-50 convs (mb1), each on the route PyTorch runs it in inference today:
f32 and bf16 as F.conv2d on channels_last tensors, int8 as the op PT2E's x86 lowering calls
(onednn.qconv_pointwise on a u8 channels_last input and onednn.qconv_prepack'ed s8 weights, as the planner's
int8 mode times its layers: explorer.core.model.modern.int8.layer_int8_fn). The three are alternated round by
round (a busy host slows all three alike), and each round's figure is the median of `--calls` calls.

    nice .venv/bin/python tests/benchmarks/bench_int8_bf16_f32.py [--rounds 7] [--calls 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time

import torch
import torch.nn.functional as F

from explorer.core.measure import machine
from explorer.core.model.modern.int8 import layer_int8_fn
from explorer.core.problem.spec import parse_problem

# ResNet-50's stem, a 3x3 of each stage's first block, and the widest 1x1 (oneDNN's benchdnn names)
LAYERS = {
    "conv1 (7x7 stem)": "mb1ic3ih224oc64oh112kh7sh2ph3",
    "layer1.0.conv2 (3x3)": "mb1ic64ih56oc64oh56kh3ph1",
    "layer2.0.conv2 (3x3 s2)": "mb1ic128ih56oc128oh28kh3sh2ph1",
    "layer3.0.conv2 (3x3 s2)": "mb1ic256ih28oc256oh14kh3sh2ph1",
    "layer4.0.conv3 (1x1)": "mb1ic512ih7oc2048oh7kh1ph0",
}


def float_fn(spec, dtype):
    x = torch.randn(spec.mb, spec.ic, spec.ih, spec.iw, dtype=dtype).contiguous(memory_format=torch.channels_last)
    w = torch.randn(spec.oc, spec.ic // spec.g, spec.kh, spec.kw, dtype=dtype).contiguous(
        memory_format=torch.channels_last)
    return lambda: F.conv2d(x, w, None, (spec.sh, spec.sw), (spec.ph, spec.pw), (spec.dh + 1, spec.dw + 1), spec.g)


def median_ms(fn, calls: int) -> float:
    t = []
    for _ in range(calls):
        t0 = time.perf_counter_ns()
        fn()
        t.append((time.perf_counter_ns() - t0) / 1e6)
    return statistics.median(t)


def main() -> None:
    ap = argparse.ArgumentParser(allow_abbrev=False)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=10)
    a = ap.parse_args()
    cpu = next((ln.split(":", 1)[1].strip() for ln in subprocess.run(["lscpu"], capture_output=True, text=True)
                .stdout.splitlines() if ln.startswith("Model name")), "?")
    print(f"CPU: {cpu}; oneDNN ISA: {machine.onednn_isa() or '?'}; torch {torch.__version__}; "
          f"threads {torch.get_num_threads()}; ONEDNN_MAX_CPU_ISA={os.environ.get('ONEDNN_MAX_CPU_ISA', '')}")
    print("load before:", os.getloadavg())
    with torch.no_grad():
        print(f"{'layer':26} {'f32 ms':>8} {'bf16 ms':>8} {'int8 ms':>8} {'bf16/f32':>8} {'int8/f32':>8}")
        for name, desc in LAYERS.items():
            spec = parse_problem(desc)
            fns = {"f32": float_fn(spec, torch.float32), "bf16": float_fn(spec, torch.bfloat16),
                   "int8": layer_int8_fn(spec)}
            for f in fns.values():  # warm: oneDNN builds each primitive on its first call
                f()
            got = {k: [] for k in fns}
            for _ in range(a.rounds):  # alternated: each round times all three
                for k, f in fns.items():
                    got[k].append(median_ms(f, a.calls))
            m = {k: statistics.median(v) for k, v in got.items()}
            print(f"{name:26} {m['f32']:8.3f} {m['bf16']:8.3f} {m['int8']:8.3f} {m['bf16'] / m['f32']:8.2f} "
                  f"{m['int8'] / m['f32']:8.2f}")
    print("load after:", os.getloadavg())


if __name__ == "__main__":
    main()
