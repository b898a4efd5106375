"""One end-to-end mode, prepared and measured: the mode's own model and forward (PreparedMode), its
output checked against the NCHW model's, its loop timed with the runner's retry rule, and the parts
its prediction stands on (the convs in model order, the stubbed remainder, the conversions)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable

from explorer.core.measure.retry import MAX_ATTEMPTS, measure_until_trusted
from explorer.core.model.inplace import convs_in_forward_ms
from explorer.core.model.inventory import Inventory
from explorer.core.model.load import ModelInput
from explorer.core.model.report import BF16_MODES, ModelOptions, ModeResult, mode_path
from explorer.core.model.sequence import build_sequence, time_sequence
from explorer.core.model.surgery import (
    Float64Reference,
    Stubbed,
    as_right_as_the_model,
    compare_outputs,
    copy_model,
    dense_output,
    flat_output_module,
    flat_tensors,
    fold_bn,
    make_mkldnn_runnable,
    output_mismatch,
    own_forward,
    quiet_stderr,
    stubbed_forward,
    where_failed,
    wrong_output,
)


@dataclass
class PreparedMode:
    fn: Callable[[], object]  # the timed forward: dense input in, the mode's output (dense) out
    model: object  # the mode's own model (a private copy: stubbing may change it)
    remainder: Callable[[], Callable[[], object] | None] | None = None  # builds the stubbed forward
    conversions: list = field(default_factory=list)  # (label, fn) of the conversions the mode forces
    conversion_ms: Callable[[], float] | None = None  # or a function measuring them together
    note: str = ""
    graph_parts: object = None  # jit_mkldnn: model_jit.GraphParts, once remainder() has cut the graph
    graph_cut_error: str = ""  # why the graph could not be cut (the eager stand-ins are used then)
    compile_ms: float | None = None  # compiled: its compile time (the first call), apart from the timed loop
    predict_why: str = ""  # why the mode has no remainder (so no prediction), when it is not the TorchScript case
    conv_path: str = ""  # the per-layer path its convs run on, when not MODE_PATH's (report.mode_path)


def as_input(x) -> ModelInput:
    """A ModelInput from what the caller has: one already, or a single tensor."""
    return x if isinstance(x, ModelInput) else ModelInput((x,))


def channels_last_or_none(inp: ModelInput, conv_dims=None):
    """The channels-last format of the model's convs (channels_last for 2-D ones, channels_last_3d for 3-D
    ones; from the input ranks when the convs are not known), or None when they are 1-D (none exists)."""
    import torch

    dims = set(conv_dims or ()) or {t.dim() - 2 for t in inp.tensors()}
    if 2 in dims:
        return torch.channels_last
    if 3 in dims:
        return torch.channels_last_3d
    return None


def channels_last_format(inp: ModelInput, conv_dims=None):
    """channels_last_or_none, for the channels_last mode: raises NotImplementedError for 1-D convs."""
    fmt = channels_last_or_none(inp, conv_dims)
    if fmt is not None:
        return fmt
    raise NotImplementedError("channels_last: the model's convolutions are 1-D, and PyTorch has no channels-last "
                              "memory format for them (torch.channels_last needs 4-D tensors): it would be the "
                              "model as it is")


def mkldnn_blockers(model, skip=()) -> list[str]:
    """Modules torch.utils.mkldnn.to_mkldnn cannot convert faithfully, one sentence each: it swaps every
    nn.Conv1d/2d/3d (subclasses too) for an MkldnnConv ScriptModule, which drops the subclass's own forward
    and cannot take its child modules ("Cannot re-assign modules in a ScriptModule with non-scripted module").
    The same holds for every other type it swaps (nn.Linear, nn.BatchNorm2d/3d, nn.PReLU): a subclass with
    child modules (timm's BatchNormAct2d, with 'drop' and 'act') fails inside torch with "tried to replace
    existing module 'drop'", which names neither the module nor its class."""
    out = []
    for name, m in model.named_modules():
        if name in skip:  # already refused with its reason (by_hand)
            continue
        what = own_forward(m) if name else ""
        if what:
            base = next(b.__name__ for b in type(m).__mro__ if b.__module__ == "torch.nn.modules.conv")
            out.append(f"{name} ({type(m).__name__}) is an nn.{base} subclass with {what}, which to_mkldnn's "
                       f"Mkldnn{base} would drop; make it a plain nn.{base} (its padding as an nn.ZeroPad{base[-2:]} "
                       f"before it) for this mode")
            continue
        held = _children_blocker(name or "the model itself", m)  # the root too: to_mkldnn swaps it alike
        if held:
            out.append(held)
    return out


def _mkldnn_swapped(m):
    """The torch type to_mkldnn swaps `m` for a ScriptModule of its own as (m's class or a base), or None."""
    from torch import nn

    swapped = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.BatchNorm2d, nn.BatchNorm3d, nn.PReLU)
    return next((b for b in swapped if isinstance(m, b)), None)


def _children_blocker(name: str, m) -> str:
    """A swapped-type subclass with child modules (timm's BatchNormAct2d), in one sentence; "" for others."""
    from torch import nn

    kids = [k for k, _ in m.named_children()]
    base = _mkldnn_swapped(m)
    if not kids or base is None:
        return ""
    mk = {nn.BatchNorm2d: "MkldnnBatchNorm", nn.BatchNorm3d: "MkldnnBatchNorm",
          nn.PReLU: "MkldnnPrelu"}.get(base, f"Mkldnn{base.__name__}")  # torch.utils.mkldnn's names
    return (f"{name} ({type(m).__name__}) is an nn.{base.__name__} subclass with child module"
            f"{'s' if len(kids) > 1 else ''} {', '.join(repr(k) for k in kids)}, which to_mkldnn "
            f"replaces by its {mk} ScriptModule, one that cannot hold them; for this mode make it a plain "
            f"nn.{base.__name__} with those modules after it as modules of their own, or use "
            f"channels_last")


def mkldnn_source(model, f32_model):
    """The model torch.utils.mkldnn.to_mkldnn(..., dtype) must get: the f32 one. Its bf16/f16 converters
    round the weights themselves and keep BatchNorm's statistics and the biases in f32, as oneDNN needs; a
    model already cast to bf16 hands them bf16 ones (timm resnet50d's output was all NaN that way)."""
    return f32_model if f32_model is not None else model


def mkldnn_ready_source(model, f32_model, inp: ModelInput):
    """A copy of the model to_mkldnn gets (mkldnn_source), with what a user would convert by hand first
    (timm's norm+act blocks: by_hand), and that HandConversion (its note, its refusals)."""
    from explorer.core.model.by_hand.swapped_with_children import convert_by_hand

    src = copy_model(mkldnn_source(model, f32_model))
    f32_in = inp.map(lambda t: t.float())  # the f32 model's own input, for the check on the real activations
    return src, convert_by_hand(src, lambda: f32_in.call(src))


def prepare_mode(mode: str, model, x, dtype, conv_dims=None, f32_model=None) -> PreparedMode:
    """`x` is the model's input (a ModelInput or one tensor); `conv_dims` the spatial ranks of its convs;
    `f32_model` the model before its cast to a bf16/f16 plan's dtype (to_mkldnn converts from it)."""
    import torch
    import torch.utils.mkldnn  # noqa: F401

    from explorer.core.paths.base import TORCH_DTYPES

    dt = TORCH_DTYPES[dtype]
    inp = as_input(x)
    if mode == "nchw":
        m = copy_model(model)

        def rem():
            m2 = copy_model(model)
            return stubbed_forward(m2, lambda: inp.call(m2))

        return PreparedMode(lambda: inp.call(m), m, rem)
    if mode == "channels_last":
        fmt = channels_last_format(inp, conv_dims)
        rank = 4 if fmt is torch.channels_last else 5
        m = copy_model(model).to(memory_format=fmt)
        xc = inp.to_memory_format(fmt)

        def rem():
            m2 = copy_model(model).to(memory_format=fmt)
            return stubbed_forward(m2, lambda: xc.call(m2))

        convert = [("input to channels_last", lambda: inp.to_memory_format(fmt))] if any(t.dim() == rank for t in inp.tensors()) else []
        return PreparedMode(lambda: inp.to_memory_format(fmt).call(m), m, rem, convert)
    if mode == "to_mkldnn":
        src, hand = mkldnn_ready_source(model, f32_model, inp)
        blockers = hand.refused + mkldnn_blockers(src, skip=hand.refused_paths)
        if blockers:
            more = f" (and {len(blockers) - 1} more such modules)" if len(blockers) > 1 else ""
            raise NotImplementedError(f"to_mkldnn: {blockers[0]}{more}")
        m = torch.utils.mkldnn.to_mkldnn(copy_model(src), dt)
        xm = inp.map(lambda t: t.to_mkldnn())
        with torch.no_grad():
            ym = xm.call(m)
        outs = [t for t in flat_tensors(ym) if t.layout == torch._mkldnn]

        def rem():
            m2 = torch.utils.mkldnn.to_mkldnn(copy_model(src), dt)
            return stubbed_forward(m2, lambda: xm.call(m2))

        convs = [("input x.to_mkldnn()", lambda: inp.map(lambda t: t.to_mkldnn()))]
        convs += [(f"output {i} .to_dense()", (lambda t=t: t.to_dense())) for i, t in enumerate(outs)]
        return PreparedMode(lambda: dense_output(inp.map(lambda t: t.to_mkldnn()).call(m)), m, rem, convs,
                            note=hand.note())
    if mode == "jit_mkldnn":
        # traced as a flat tuple of the output's tensors (trace refuses dicts, ModelOutput, dataclasses), on the
        # positional inputs then the keyword ones
        targs = tuple(inp.args) + tuple(inp.kwargs.values())
        with torch.no_grad():
            base = copy_model(model).eval()
            how = "script"
            try:
                if inp.kwargs:
                    raise TypeError("keyword inputs: traced")
                scripted = torch.jit.script(base)
            except Exception:  # noqa: BLE001 - not scriptable: trace it (shapes fixed to this input)
                flat = flat_output_module(base, tuple(inp.kwargs))
                scripted, how = torch.jit.trace(flat, targs, check_trace=False), "trace"
            frozen = torch.jit.optimize_for_inference(torch.jit.freeze(scripted.eval()))
            for _ in range(3):  # the profiling executor optimises during the first calls
                frozen(*targs)

        pm = PreparedMode(lambda: frozen(*targs), frozen, None, [], lambda: _graph_conversion_ms(frozen, targs),
                          note=f"torch.jit.{how}")

        def rem():
            from explorer.core.model.jit import cut_graph
            from explorer.core.paths.base import one_line

            try:  # the graph's own parts (model_jit); the eager stand-ins only when it cannot be cut
                pm.graph_parts = cut_graph(frozen, targs)
                return pm.graph_parts.remainder
            except Exception as e:  # noqa: BLE001
                pm.graph_cut_error = f"{type(e).__name__}: {one_line(e)}"
            folded = fold_bn(mkldnn_source(model, f32_model))
            if folded is None:
                return None
            m2 = torch.utils.mkldnn.to_mkldnn(folded, dt)
            xm = inp.map(lambda t: t.to_mkldnn())
            make_mkldnn_runnable(m2, lambda: xm.call(m2))
            return stubbed_forward(m2, lambda: xm.call(m2))

        pm.remainder = rem
        return pm
    if mode == "compiled":
        from explorer.core.model.modern.compiled import prepare_compiled

        return PreparedMode(**prepare_compiled(model, inp))
    if mode == "autocast_bf16":
        from explorer.core.model.modern.compiled import prepare_autocast

        # channels_last is the mode's option, not its precondition: 1-D convs run autocast on the model as it is
        return PreparedMode(**prepare_autocast(model, inp, dtype, channels_last_or_none(inp, conv_dims)))
    if mode == "int8":
        from explorer.core.model.modern.int8 import prepare_int8

        if dtype != "f32":  # PT2E quantizes from the f32 model; its error is stated against f32
            raise NotImplementedError(f"int8: the mode quantizes the f32 model, not a {dtype} one: run the plan "
                                      "with --dtype f32")
        return PreparedMode(**prepare_int8(model, inp))
    raise ValueError(mode)


# jit_mkldnn's part in the interleaved rounds: the graph with each conversion node run twice (model.jit)
TWINS = "conversions twice"
# ... timed only where the profiler puts the conversions at this share of a forward or more: below it, the
# profiler's overstatement moves the prediction less than that, and twins would cost ResNet-50 (3 conversion
# nodes) a fifth more of its mode's time for nothing (BENCHMARKS §18)
TWINS_FROM_SHARE = 0.02


def _conversions_matter(prep: PreparedMode, res: ModeResult) -> bool:
    """Profile the conversions once (res.conversion_ms, the fallback figure) and say whether they reach
    TWINS_FROM_SHARE of one forward."""
    import torch

    with torch.no_grad():
        res.conversion_ms, _ = _measure_conversions(prep, 0.0, lambda: False)
    return res.conversion_ms is not None and res.conversion_ms >= TWINS_FROM_SHARE * forward_once_ms(prep.fn)


def forward_once_ms(fn: Callable[[], object], runs: int = 3) -> float:
    """The best of a few single calls: enough to weigh the conversions against (one call alone can land
    on a preemption and decide the other way)."""
    import time

    import torch

    best = float("inf")
    with torch.no_grad():
        for _ in range(runs):
            t0 = time.perf_counter()
            fn()
            best = min(best, (time.perf_counter() - t0) * 1e3)
    return best


def _graph_conversion_ms(frozen, args: tuple, runs: int = 5) -> float:
    """The to_mkldnn/to_dense nodes the optimised graph runs, timed by the profiler (best of `runs`)."""
    import torch
    from torch.profiler import profile

    best: list[float] | None = None
    for _ in range(runs):
        with quiet_stderr(), torch.no_grad(), profile() as prof:
            frozen(*args)
        t = [e.cpu_time_total / 1e3 for e in prof.events() if e.name in ("aten::to_mkldnn", "aten::to_dense")]
        best = t if best is None or len(best) != len(t) else [min(a, b) for a, b in zip(best, t)]
    return float(sum(best or []))


def _measure_conversions(prep: PreparedMode, budget_ms: float, cancel) -> tuple[float | None, str]:
    if prep.conversion_ms is not None:
        return prep.conversion_ms(), ""
    total, quality = 0.0, ""
    for _label, fn in prep.conversions:
        got = timed(fn, budget_ms, cancel)
        if got is None:
            return None, ""
        m, _ = got
        total += m.median_ms
        if m.quality == "noisy":
            quality = "noisy"
    return total, quality


def timed(fn: Callable[[], object], budget_ms: float, cancel, min_samples: int = 5, warmup: int = 1):
    """The runner's rule for one end-to-end loop (measure.retry): a noisy loop is measured again, up to
    MAX_ATTEMPTS, and the better of the attempts kept; only the first attempt warms up. Returns
    (Measurement, attempts) or None if cancelled."""
    from explorer.core.measure.harness import Budget, measure

    def measure_once(attempt: int):
        return measure(fn, Budget(budget_ms, min_samples, warmup=warmup if attempt == 1 else 0), cancel)

    return measure_until_trusted(measure_once, MAX_ATTEMPTS)


def run_mode(mode: str, net, x, dtype: str, ref, mopts: ModelOptions, cancel, inv=None,
             seq_tensors: dict | None = None, ref_f32=None, f32_net=None,
             ref_f64: Float64Reference | None = None) -> ModeResult | None:
    """One mode measured (and predicted). `ref_f32`: the f32 model's output, for the error of a bf16 mode or
    of every mode of a bf16 plan; `f32_net`: the f32 model a bf16/f16 plan's `net` was cast from; `ref_f64`:
    the f32 model in float64, asked only when an f32 mode differs from the NCHW model beyond f32's tolerance."""
    import numpy as np
    import torch

    res = ModeResult(mode)
    try:
        with torch.no_grad():
            dims = {len(site.input_shape) - 2 for site in inv.sites} if inv is not None else None
            prep = prepare_mode(mode, net, x, dtype, dims, f32_net)
            out = prep.fn()
        res.max_abs_err, res.rel_err = compare_outputs(out, ref)
        mismatch = output_mismatch(out, ref)
        bf16 = dtype == "bf16" or mode in BF16_MODES
        if bf16 and ref_f32 is not None:
            res.f32_max_abs_err, res.f32_rel_err = compare_outputs(out, ref_f32)
        gate = "int8" if mode == "int8" else "bf16" if mode in BF16_MODES else dtype
        wrong = mismatch or wrong_output(res.max_abs_err, res.rel_err, gate)
        acquitted = as_right_as_the_model(out, ref, ref_f64, gate) if wrong and not mismatch else ""
        del out
        res.compile_ms, res.conv_path = prep.compile_ms, prep.conv_path
        res.mode_note = "; ".join(n for n in (_modern_note(mode, prep, res, bf16 and ref_f32 is not None),
                                              acquitted) if n)
        wrong = "" if acquitted else wrong
        if wrong:  # never timed, so never a speedup nor the answer
            res.status, res.error = "wrong output", wrong
            return res
        rem_fn = seq = None
        if mopts.predict and not cancel():
            rem_fn = _remainder_fn(prep, res, inv)
            if prep.graph_parts is not None:
                res.graph_convs = prep.graph_parts.n_convs
                res.graph_fed, res.graph_buffers = prep.graph_parts.n_fed, prep.graph_parts.n_buffers
            res.graph_cut_error = prep.graph_cut_error
            if rem_fn is not None and inv is not None:
                seq = _conv_sequence(res, inv, {} if seq_tensors is None else seq_tensors, prep)
        if seq is not None:
            # the forward, its remainder and its convs in model order, interleaved round by round
            parts, minus = {"remainder": rem_fn, "forward": prep.fn}, None
            if isinstance(rem_fn, Stubbed):  # its stubs' outputs read hot: the touches alone, taken off it
                parts = {"remainder": rem_fn, "remainder touches": rem_fn.touches, "forward": prep.fn}
                minus = {"remainder": "remainder touches"}
            gp = prep.graph_parts
            if gp is not None:  # the graph's own parts (seq is its conv pass): each part's touches, taken off it
                parts = {"conv touches": gp.conv_touches, "remainder": rem_fn,
                         "remainder touches": gp.remainder_touches, "forward": prep.fn}
                minus = {"convs": "conv touches", "remainder": "remainder touches"}
                if gp.conversions_twice is not None and _conversions_matter(prep, res):
                    parts[TWINS] = gp.conversions_twice  # the conversions: what their twins add to the forward
                    minus[TWINS] = "forward"
            timing = time_sequence(seq, 2 * mopts.mode_budget_ms, mopts.min_samples, cancel, parts, minus,
                                   mopts.precision)
            if timing is None:
                return None
            _fill_measured(res, timing.measurement, timing.parts_ms["forward"], timing.attempts)
            res.remainder_ms, res.remainder_quality = float(np.median(timing.parts_ms["remainder"])), timing.quality
            res.conv_seq, res.conv_seq_quality = timing, timing.quality
            if TWINS in timing.parts_ms:
                res.conversion_ms = float(np.median(timing.parts_ms[TWINS]))
                res.conversion_source = f"what a twin of each of its {gp.n_conversions} to_mkldnn/to_dense nodes adds to the forward"
        else:
            with torch.no_grad():
                got = timed(prep.fn, mopts.mode_budget_ms, cancel, mopts.min_samples)
            if got is None:
                return None
            m, attempts = got
            _fill_measured(res, m, None, attempts)
            if rem_fn is not None:
                with torch.no_grad():
                    got = timed(rem_fn, mopts.mode_budget_ms, cancel, mopts.min_samples)
                    touched = (timed(rem_fn.touches, mopts.mode_budget_ms / 10, cancel, mopts.min_samples)
                               if got is not None and isinstance(rem_fn, Stubbed) else None)
                if got is None or (isinstance(rem_fn, Stubbed) and touched is None):
                    return None
                touches_ms = touched[0].median_ms if touched is not None else 0.0
                res.remainder_ms, res.remainder_quality = max(got[0].median_ms - touches_ms, 0.0), got[0].quality
        if mode == "int8" and mopts.predict and not cancel():
            _int8_parts(res, prep, inv, mopts, cancel)
        elif mopts.predict and not cancel():
            res.convs_in_model_ms, res.convs_in_model_note = _convs_in_model(prep, mode)
            if res.conversion_ms is None:  # neither timed in the rounds above nor profiled before them
                with torch.no_grad():
                    res.conversion_ms, conv_q = _measure_conversions(prep, max(50.0, mopts.mode_budget_ms / 10), cancel)
                if conv_q == "noisy" and res.remainder_ms is not None:
                    res.remainder_quality = "noisy"
    except Exception as exc:  # noqa: BLE001 - a mode the model cannot run is that mode's row
        res.status = failure_status(exc)
        res.error = explain_failure(mode, net, as_input(x), dtype, exc, f32_net)
    return res


# One status word per kind of mode failure (main chose by the message's wording, so an op refusing MKLDNN
# tensors was `unsupported` for a slice and `error` for cat, pad or interpolate).
_OWN_CODE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep  # explorer/
# what a bug in Python code raises; torch's C++ refusals reach the calling line as RuntimeError or
# NotImplementedError, so those are a refusal even when that line is the tool's
_CRASH_TYPES = (AttributeError, NameError, TypeError, KeyError, IndexError, ValueError, ZeroDivisionError,
                AssertionError, UnboundLocalError, RecursionError)


_BUILT_IN_MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "zoo.py")  # a model's code, not the tool's


def raised_in_tool(exc: BaseException) -> bool:
    """The innermost frame of the exception's traceback is in the explorer package (its built-in models aside)."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    where = os.path.abspath(frames[-1].filename) if frames else ""
    return where.startswith(_OWN_CODE) and where != _BUILT_IN_MODELS


def failure_status(exc: BaseException) -> str:
    """`unsupported`: torch's converter, tracer, compiler or an op refused the model, or the model's own code
    failed run the mode's way (the mode cannot take it), or the tool refused on torch's behalf
    (NotImplementedError, PathUnsupported); `error`: a Python crash (_CRASH_TYPES) in the tool's own code."""
    from explorer.core.paths.base import is_unsupported

    if is_unsupported(exc):
        return "unsupported"
    return "error" if raised_in_tool(exc) and isinstance(exc, _CRASH_TYPES) else "unsupported"


MKLDNN_CONVERTS = "nn.Conv1d/2d/3d, nn.Linear, nn.BatchNorm2d/3d and nn.PReLU"


def _conversion_failure(net, dtype: str, exc: BaseException, msg: str) -> str:
    """to_mkldnn(model) raised while converting: the first module whose own conversion fails (path and class),
    and what is true about it. to_mkldnn has no way to skip a module, so the hint never says to leave one out."""
    import copy

    import torch
    import torch.utils.mkldnn

    from explorer.core.model.modern.bf16 import onednn_isa
    from explorer.core.paths.base import TORCH_DTYPES

    where, held = "", ""
    for name, m in net.named_modules():
        # a leaf, or a type to_mkldnn swaps (its children re-attached to the swap: where timm's norm+act fails)
        if list(m.children()) and _mkldnn_swapped(m) is None:
            continue
        try:
            torch.utils.mkldnn.to_mkldnn(copy.deepcopy(m), TORCH_DTYPES[dtype])
        except Exception:  # noqa: BLE001 - this one is it
            label = name or "the model itself"
            where, held = f" (converting {label}, {type(m).__name__})", _children_blocker(label, m)
            break
    if dtype == "bf16" and "bf16" in msg:
        # torch's bf16 weight reorder refuses CPUs without AVX-512 BW/VL/DQ or AVX-NE-CONVERT (an AVX2-only CPU)
        hint = (f"; this CPU cannot hold MKLDNN bf16 weights (oneDNN runs {onednn_isa() or 'an unknown ISA'}): run "
                "the bf16 plan on a CPU with AVX-512 or AVX-NE-CONVERT, or this mode with --dtype f32")
    elif held:
        hint = f"; {held}"
    else:
        hint = (f"; torch.utils.mkldnn.to_mkldnn converts every {MKLDNN_CONVERTS} in the model and cannot skip "
                "one: make that module one it converts, or use channels_last or jit_mkldnn")
    return f"{type(exc).__name__}{where}: {msg}{hint}"


def explain_failure(mode: str, net, inp: ModelInput, dtype: str, exc: BaseException, f32_net=None) -> str:
    """A mode that cannot run, in one line: the error, the op and the module (path and class) it happened
    in, and the one thing a user could change."""
    import re

    import torch

    from explorer.core.paths.base import TORCH_DTYPES, one_line

    msg = one_line(exc)
    # torch's dispatcher message runs to a paragraph listing every backend: its first clause is the fact
    got = re.match(r"Could not run '([\w:.]+)' with arguments from the '(\w+)' backend", msg)
    if got:
        msg = f"{got.group(1)} has no kernel for {got.group(2)} tensors"
    if isinstance(exc, NotImplementedError) and msg.startswith(f"{mode}:"):
        return msg  # already the sentence (mkldnn_blockers, channels_last_format)
    where, hint = "", ""
    try:
        if mode == "to_mkldnn":
            import torch.utils.mkldnn

            src, _ = mkldnn_ready_source(net, f32_net, inp)  # the model the mode converted, by-hand parts too
            try:
                mm = torch.utils.mkldnn.to_mkldnn(copy_model(src), TORCH_DTYPES[dtype])
            except Exception:  # noqa: BLE001 - the conversion itself failed, before any forward
                return _conversion_failure(src, dtype, exc, msg)
            where = where_failed(mm, lambda: inp.map(lambda t: t.to_mkldnn()).call(mm))
            if where and " in " not in where:  # outside every submodule: in the model's own forward
                where = f"{where[:-1]} in the model's own forward, {type(net).__name__})"
            hint = (f"; to_mkldnn converts only {MKLDNN_CONVERTS} and feeds every other module MKLDNN tensors: give "
                    "that module dense tensors (.to_dense() before it, .to_mkldnn() after) or use channels_last or "
                    "jit_mkldnn")
        elif mode == "jit_mkldnn":
            targs = tuple(inp.args) + tuple(inp.kwargs.values())
            base = copy_model(net).eval()
            flat = flat_output_module(base, tuple(inp.kwargs))
            where = where_failed(base, lambda: torch.jit.trace(flat, targs, check_trace=False))
            hint = ("; torch.jit.trace runs the forward once with fixed shapes and types: make that module's forward "
                    "traceable (tensors in and out, no data-dependent Python)") if where else ""
        else:
            m = copy_model(net)
            where = where_failed(m, lambda: inp.call(m))
    except Exception:  # noqa: BLE001 - the error alone, then
        where = ""
    return f"{type(exc).__name__}{where}: {msg}{hint}"


def _fill_measured(res: ModeResult, m, forward_ms, attempts: int) -> None:
    """The mode's measured figures: of its own loop (forward_ms None), or of the forwards of the interleaved
    rounds (forward_ms: one per kept round), with the interference columns of the loop they came from."""
    import numpy as np

    from explorer.core.jobs.run import fill_quality

    if forward_ms is None:
        res.samples, res.measured_ms, res.iqr_ms = m.n, m.median_ms, m.iqr_ms
        res.min_ms, res.mean_ms, res.p25_ms, res.p75_ms = m.min_ms, m.mean_ms, m.p25_ms, m.p75_ms
    else:
        p25, p50, p75 = (float(v) for v in np.percentile(forward_ms, [25, 50, 75]))
        res.samples, res.measured_ms, res.iqr_ms = m.n, p50, p75 - p25
        res.min_ms, res.mean_ms, res.p25_ms, res.p75_ms = float(forward_ms.min()), float(forward_ms.mean()), p25, p75
    res.stop_reason, res.attempts = m.stop_reason, attempts
    fill_quality(res, m)


def _remainder_fn(prep: PreparedMode, res: ModeResult, inv: Inventory | None = None):
    """The mode's forward with every conv stubbed (built and run once), or None with res.predict_note saying why."""
    import torch

    from explorer.core.paths.base import one_line

    try:
        with torch.no_grad(), quiet_stderr():
            rem_fn = prep.remainder() if prep.remainder is not None else None
            if rem_fn is not None:
                rem_fn()
    except Exception as e:  # noqa: BLE001 - no prediction for this mode; its measurement stands
        res.predict_note = f"no prediction: the stubbed model for the remainder cannot run ({type(e).__name__}: {one_line(e)})"
        return None
    fn = inv.inside_sites() if inv is not None else []
    if rem_fn is None and prep.predict_why:
        res.predict_note = prep.predict_why
    elif rem_fn is None and fn and len(fn) == inv.total:
        site = fn[0]
        res.predict_note = (f"no prediction: every conv is transposed (first: {site.module}, a {site.owner}) or "
                            "inside another module's forward; the per-layer paths time forward convs only, so "
                            "nothing is left to predict from") if any(s.transposed for s in fn) else (
                            f"no prediction: every conv is an F.conv{len(site.input_shape) - 2}d call inside another "
                            f"module's forward (first: {site.module} in a {site.owner}), not a conv module, so none "
                            "can be stubbed and the non-conv remainder cannot be measured apart; an nn.Conv module "
                            "there would be")
    elif rem_fn is None:
        res.predict_note = ("the convolutions are not modules here (TorchScript, an exported graph or an untraceable "
                            "model): the non-conv remainder cannot be measured")
    return rem_fn


def _conv_sequence(res: ModeResult, inv: Inventory, tensors: dict, prep: PreparedMode | None = None):
    """The mode's convs in model order (model_sequence), or None with res.conv_seq_note saying why. For
    jit_mkldnn with its graph cut (model_jit), the graph's own conv nodes: one site, one call, no layer."""
    from types import SimpleNamespace

    from explorer.core.model.sequence import Sequence
    from explorer.core.paths.base import one_line

    parts = prep.graph_parts if prep is not None else None
    if parts is not None:
        return Sequence(res.mode, [(None, "jit graph", SimpleNamespace(fn=parts.convs))])
    if inv.inside_sites():  # those run inside the remainder: the sequence times the stubbed ones only
        import dataclasses

        inv = dataclasses.replace(inv, sites=[site for site in inv.sites if site.stubbable])
    try:
        seq, why = build_sequence(res.mode, mode_path(res), inv, tensors)
    except Exception as e:  # noqa: BLE001 - the prediction falls back to the per-layer table
        seq, why = None, f"{type(e).__name__}: {one_line(e)}"
    if seq is None:
        res.conv_seq_note = f"convs not timed in model order: {why}"
    return seq


def _convs_in_model(prep: PreparedMode, mode: str) -> tuple[float | None, str]:
    if mode == "compiled":  # clocking its conv modules would make dynamo recompile the model around the clocks
        return None, "not read: the compiled code runs inductor's kernels, not the model's conv modules"
    try:
        return convs_in_forward_ms(prep.fn, prep.model, graph=(mode == "jit_mkldnn"))
    except Exception as e:  # noqa: BLE001 - a diagnostic column: its failure leaves the mode's figures as they are
        from explorer.core.paths.base import one_line

        return None, f"not read: {type(e).__name__}: {one_line(e)}"


def _int8_parts(res: ModeResult, prep: PreparedMode, inv, mopts: ModelOptions, cancel) -> None:
    """The int8 mode's prediction parts: the compiled graph's qconv calls replayed one by one, or the synthetic
    per-layer qconv table when none is seen (conv_alone_ms), and the compiled graph's non-qconv time
    (remainder_ms); job._predict adds them."""
    from explorer.core.model.modern.int8 import graph_split_ms, graph_table_ms, layer_table_ms

    if inv is None:
        res.predict_note = "no prediction: the model's convs were not listed"
        return
    import torch

    budget_ms = max(100.0, mopts.mode_budget_ms / 10)
    with torch.no_grad():
        # the graph's own qconv calls replayed one by one: each with the post-ops inductor fused into it (relu,
        # the residual sum) and its real output dtype; the synthetic table (a plain u8 qconv per layer) is
        # the fallback, and on ResNet-50 it read 0.84-0.93 of the measured time (BENCHMARKS section 17)
        table_ms, replayed, why = graph_table_ms(prep.fn, budget_ms, mopts.min_samples, cancel)
        if table_ms is None and why != "stopped":
            graph_why = why
            table_ms, why = layer_table_ms(inv, budget_ms, mopts.min_samples, cancel)
            source = (f"the per-layer int8 table ({graph_why}; each "
                      "layer's onednn.qconv_pointwise on a u8 channels_last input and prepacked s8 weights, "
                      "times its count)")
        else:
            source = (f"the compiled graph's {replayed} qconv calls replayed one by one on copies of their real "
                      "inputs (the post-ops fused into each, its output dtype; calls of one shape timed once)")
        rem_ms, in_graph_ms, calls = graph_split_ms(prep.fn)
    if table_ms is None:
        res.predict_note = f"no prediction: {why}"
        return
    res.conv_alone_ms, res.remainder_ms, res.convs_in_model_ms = table_ms, rem_ms, in_graph_ms
    res.predict_note = (f"convs: {source}; remainder: the compiled graph's time outside its {calls} qconv calls "
                        "(profiler, best of 5), as inductor's fused kernels cannot be stubbed")
    res.convs_in_model_note = f"the compiled graph's {calls} qconv calls (profiler)"


def _modern_note(mode: str, prep: PreparedMode, res: ModeResult, bf16: bool) -> str:
    """What a today's mode, or any mode of a bf16 plan, says beside its figures ("" for the four in f32): the
    compile time kept apart, the output error against f32, and no fast bf16 where oneDNN has none."""
    from explorer.core.model.modern.bf16 import error_note, no_fast_bf16_note

    # to_mkldnn's note says what was converted by hand; int8's error against the f32 model is part of its answer
    notes = [prep.note] if mode in ("compiled", "autocast_bf16", "int8", "to_mkldnn") else []
    if mode == "int8":
        notes.append(error_note(res.max_abs_err, res.rel_err).replace("against f32 nchw", "against the f32 model"))
    if bf16:
        notes += [error_note(res.f32_max_abs_err, res.f32_rel_err), no_fast_bf16_note()]
    return "; ".join(n for n in notes if n)
