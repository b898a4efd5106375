"""The convolutions' time inside a mode's own forward, timed where they run.

The planner predicts a mode's end-to-end time from the per-layer table (each conv timed alone, again and
again) plus the non-conv remainder. When prediction and measurement disagree, the first question is
whether the convs run as fast inside the model as alone: inside, each conv meets caches the layers before
it have filled, and weights nobody touched since the last forward. This module answers it by timing the
convs where they run, so that the user sees which half of the prediction missed.

- Eager modes (nchw, channels_last, to_mkldnn): each conv module is wrapped, for a few forwards, in one that
  reads the clock around it; the sum per forward. A profiler would add several microseconds per nested
  op (conv2d > convolution > _convolution > ...), more than a small conv takes; the wrapper adds one clock
  read. A model whose convs are not modules (a TorchScript file) gets the profiler's outermost conv ops.
- The frozen TorchScript graph (jit_mkldnn) runs its MKLDNN convs as graph nodes the profiler does not
  record, so there it is the graph's time outside the ops the profiler does record: its convs with what
  the graph fused into them (BatchNorm, ReLU), plus the interpreter's own time.
"""

from __future__ import annotations

import statistics
from typing import Callable

CONV_OPS = frozenset({
    "aten::conv1d", "aten::conv2d", "aten::conv3d", "aten::convolution", "aten::_convolution",
    "aten::mkldnn_convolution", "aten::_convolution_mode", "aten::conv_transpose2d",
})
GRAPH_NOTE = ("jit graph: the time outside the ops the profiler records (the MKLDNN convs with the ops fused "
              "into them, and the interpreter)")


def _outer_conv(e) -> bool:
    if e.name not in CONV_OPS:
        return False
    p = e.cpu_parent
    while p is not None:
        if p.name in CONV_OPS:
            return False
        p = p.cpu_parent
    return True


def _graph_unrecorded_us(events) -> float | None:
    """A ScriptModule's 'forward' event minus its recorded children: the nodes the profiler does not see."""
    fwd = [e for e in events if e.name == "forward" and e.cpu_parent is None]
    if not fwd:
        return None
    total = 0.0
    for f in fwd:
        total += f.cpu_time_total - sum(c.cpu_time_total for c in f.cpu_children)
    return total


MODULE_NOTE = "the conv modules of each forward, a clock read around each"
PROFILER_NOTE = "the outermost conv ops of each forward (profiler)"


def convs_in_forward_ms(fn: Callable[[], object], model=None, graph: bool = False,
                        runs: int = 5) -> tuple[float | None, str]:
    """The median over `runs` forwards of the convs' time inside `fn()` (which runs `model`), in ms, and a
    note on what was counted. None when no conv shows (e.g. an exported program that lowers them away)."""
    if not graph and model is not None:
        got = _module_clock_ms(fn, model, runs)
        if got is not None:
            return got, MODULE_NOTE
    return _profiled_ms(fn, graph, runs)


def _module_clock_ms(fn, model, runs: int) -> float | None:
    import time

    import torch
    from torch import nn

    from explorer.core.model.surgery import conv_paths, set_submodule

    if isinstance(model, torch.jit.ScriptModule):
        return None
    paths = conv_paths(model)
    if not paths:
        return None
    spent = [0]
    clock = time.perf_counter_ns

    class ClockedConv(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *args, **kwargs):
            t = clock()
            out = self.inner(*args, **kwargs)
            spent[0] += clock() - t
            return out

    originals = {p: model.get_submodule(p) for p in paths}
    per: list[float] = []
    try:
        for p in paths:
            set_submodule(model, p, ClockedConv(originals[p]))
        with torch.no_grad():
            fn()  # untimed: the first forward through new wrapper modules
            for _ in range(runs):
                spent[0] = 0
                fn()
                per.append(spent[0] / 1e6)
    finally:
        for p in paths:
            set_submodule(model, p, originals[p])
    return statistics.median(per) if any(per) else None


def _profiled_ms(fn, graph: bool, runs: int) -> tuple[float | None, str]:
    import torch
    from torch.profiler import profile

    from explorer.core.model.surgery import quiet_stderr

    per: list[float] = []
    for _ in range(runs):
        with quiet_stderr(), torch.no_grad(), profile() as prof:
            fn()
        events = prof.events()
        if graph:
            us = _graph_unrecorded_us(events)
        else:
            convs = [e.cpu_time_total for e in events if _outer_conv(e)]
            us = float(sum(convs)) if convs else None
        if us is None:
            return None, "no conv op in the profile"
        per.append(us / 1e3)
    return statistics.median(per), (GRAPH_NOTE if graph else PROFILER_NOTE)
