"""One end-to-end mode, prepared and measured: the mode's own model and forward (PreparedMode), its
output checked against the NCHW model's, its loop timed with the runner's retry rule, and the parts
its prediction stands on (the convs in model order, the stubbed remainder, the conversions)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from explorer.core.measure.retry import MAX_ATTEMPTS, measure_until_trusted
from explorer.core.model.inplace import convs_in_forward_ms
from explorer.core.model.inventory import Inventory
from explorer.core.model.report import BF16_MODES, MODE_PATH, ModelOptions, ModeResult
from explorer.core.model.sequence import build_sequence, time_sequence
from explorer.core.model.surgery import (
    compare_outputs,
    copy_model,
    dense_output,
    flat_tensors,
    fold_bn,
    make_mkldnn_runnable,
    quiet_stderr,
    stub_convs,
    where_failed,
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


def prepare_mode(mode: str, model, x, dtype) -> PreparedMode:
    import torch
    import torch.utils.mkldnn  # noqa: F401

    from explorer.core.paths.base import TORCH_DTYPES

    dt = TORCH_DTYPES[dtype]
    if mode == "nchw":
        m = copy_model(model)

        def rem():
            m2 = copy_model(model)
            n = stub_convs(m2, lambda: m2(x))
            return (lambda: m2(x)) if n else None

        return PreparedMode(lambda: m(x), m, rem)
    if mode == "channels_last":
        fmt = {4: torch.channels_last, 5: torch.channels_last_3d}.get(x.dim())
        if fmt is None:
            raise NotImplementedError(f"channels_last needs a 4-D or 5-D input, got {x.dim()}-D")
        m = copy_model(model).to(memory_format=fmt)
        xc = x.contiguous(memory_format=fmt)

        def rem():
            m2 = copy_model(model).to(memory_format=fmt)
            n = stub_convs(m2, lambda: m2(xc))
            return (lambda: m2(xc)) if n else None

        return PreparedMode(lambda: m(x.contiguous(memory_format=fmt)), m, rem,
                            [("input to channels_last", lambda: x.contiguous(memory_format=fmt))])
    if mode == "to_mkldnn":
        m = torch.utils.mkldnn.to_mkldnn(copy_model(model), dt)
        xm = x.to_mkldnn()
        with torch.no_grad():
            ym = m(xm)
        outs = [t for t in flat_tensors(ym) if t.layout == torch._mkldnn]

        def rem():
            m2 = torch.utils.mkldnn.to_mkldnn(copy_model(model), dt)
            n = stub_convs(m2, lambda: m2(xm))
            return (lambda: m2(xm)) if n else None

        convs = [("input x.to_mkldnn()", lambda: x.to_mkldnn())]
        convs += [(f"output {i} .to_dense()", (lambda t=t: t.to_dense())) for i, t in enumerate(outs)]
        return PreparedMode(lambda: dense_output(m(x.to_mkldnn())), m, rem, convs)
    if mode == "jit_mkldnn":
        with torch.no_grad():
            base = copy_model(model).eval()
            how = "script"
            try:
                scripted = torch.jit.script(base)
            except Exception:  # noqa: BLE001 - not scriptable: trace it (shapes fixed to this input)
                scripted, how = torch.jit.trace(base, x, check_trace=False), "trace"
            frozen = torch.jit.optimize_for_inference(torch.jit.freeze(scripted.eval()))
            for _ in range(3):  # the profiling executor optimises during the first calls
                frozen(x)

        pm = PreparedMode(lambda: frozen(x), frozen, None, [], lambda: _graph_conversion_ms(frozen, x),
                          note=f"torch.jit.{how}")

        def rem():
            from explorer.core.model.jit import cut_graph
            from explorer.core.paths.base import one_line

            try:  # the graph's own parts (model_jit); the eager stand-ins only when it cannot be cut
                pm.graph_parts = cut_graph(frozen, x)
                return pm.graph_parts.remainder
            except Exception as e:  # noqa: BLE001
                pm.graph_cut_error = f"{type(e).__name__}: {one_line(e)}"
            folded = fold_bn(model)
            if folded is None:
                return None
            m2 = torch.utils.mkldnn.to_mkldnn(folded, dt)
            xm = x.to_mkldnn()
            make_mkldnn_runnable(m2, lambda: m2(xm))
            n = stub_convs(m2, lambda: m2(xm))
            return (lambda: m2(xm)) if n else None

        pm.remainder = rem
        return pm
    if mode == "compiled":
        from explorer.core.model.modern.compiled import prepare_compiled

        return PreparedMode(**prepare_compiled(model, x))
    if mode == "autocast_bf16":
        from explorer.core.model.modern.compiled import prepare_autocast

        return PreparedMode(**prepare_autocast(model, x, dtype))
    raise ValueError(mode)


def _graph_conversion_ms(frozen, x, runs: int = 5) -> float:
    """The to_mkldnn/to_dense nodes the optimised graph runs, timed by the profiler (best of `runs`)."""
    import torch
    from torch.profiler import profile

    best: list[float] | None = None
    for _ in range(runs):
        with quiet_stderr(), torch.no_grad(), profile() as prof:
            frozen(x)
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
             seq_tensors: dict | None = None, ref_f32=None) -> ModeResult | None:
    """One mode measured (and predicted). `ref_f32`: the f32 model's output, for the error of a bf16 mode or
    of every mode of a bf16 plan."""
    import numpy as np
    import torch

    from explorer.core.paths.base import is_unsupported, one_line

    res = ModeResult(mode)
    try:
        with torch.no_grad():
            prep = prepare_mode(mode, net, x, dtype)
            out = prep.fn()
        res.max_abs_err, res.rel_err = compare_outputs(out, ref)
        bf16 = dtype == "bf16" or mode in BF16_MODES
        if bf16 and ref_f32 is not None:
            res.f32_max_abs_err, res.f32_rel_err = compare_outputs(out, ref_f32)
        del out
        res.compile_ms = prep.compile_ms
        res.mode_note = _modern_note(mode, prep, res, bf16 and ref_f32 is not None)
        tol = 1e-3 if dtype == "f32" and mode not in BF16_MODES else 5e-2
        if res.rel_err is not None and not res.rel_err <= tol:
            res.error = f"output differs from the NCHW model: max error {res.max_abs_err:.3g} ({res.rel_err:.2g} of its largest value)."
        rem_fn = seq = None
        if mopts.predict and not cancel():
            rem_fn = _remainder_fn(prep, res)
            if prep.graph_parts is not None:
                res.graph_convs = prep.graph_parts.n_convs
            res.graph_cut_error = prep.graph_cut_error
            if rem_fn is not None and inv is not None:
                seq = _conv_sequence(res, inv, {} if seq_tensors is None else seq_tensors, prep)
        if seq is not None:
            # the forward, its remainder and its convs in model order, interleaved round by round
            parts, minus = {"remainder": rem_fn, "forward": prep.fn}, None
            gp = prep.graph_parts
            if gp is not None:  # the graph's own parts (seq is its conv pass): each part's touches, taken off it
                parts = {"conv touches": gp.conv_touches, "remainder": rem_fn,
                         "remainder touches": gp.remainder_touches, "forward": prep.fn}
                minus = {"convs": "conv touches", "remainder": "remainder touches"}
            timing = time_sequence(seq, 2 * mopts.mode_budget_ms, mopts.min_samples, cancel, parts, minus)
            if timing is None:
                return None
            _fill_measured(res, timing.measurement, timing.parts_ms["forward"], timing.attempts)
            res.remainder_ms, res.remainder_quality = float(np.median(timing.parts_ms["remainder"])), timing.quality
            res.conv_seq, res.conv_seq_quality = timing, timing.quality
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
                if got is None:
                    return None
                res.remainder_ms, res.remainder_quality = got[0].median_ms, got[0].quality
        if mopts.predict and not cancel():
            res.convs_in_model_ms, res.convs_in_model_note = _convs_in_model(prep, mode)
            with torch.no_grad():
                res.conversion_ms, conv_q = _measure_conversions(prep, max(50.0, mopts.mode_budget_ms / 10), cancel)
            if conv_q == "noisy" and res.remainder_ms is not None:
                res.remainder_quality = "noisy"
    except Exception as exc:  # noqa: BLE001 - a mode the model cannot run is that mode's row
        res.status = "unsupported" if is_unsupported(exc) else "error"
        where = ""
        if mode == "to_mkldnn":
            try:
                import torch.utils.mkldnn

                from explorer.core.paths.base import TORCH_DTYPES

                mm = torch.utils.mkldnn.to_mkldnn(copy_model(net), TORCH_DTYPES[dtype])
                where = where_failed(mm, lambda: mm(x.to_mkldnn()))
            except Exception:  # noqa: BLE001
                where = ""
        res.error = f"{type(exc).__name__}{where}: {one_line(exc)}"
    return res


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


def _remainder_fn(prep: PreparedMode, res: ModeResult):
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
    if rem_fn is None and prep.predict_why:
        res.predict_note = prep.predict_why
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
    try:
        seq, why = build_sequence(res.mode, MODE_PATH[res.mode], inv, tensors)
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


def _modern_note(mode: str, prep: PreparedMode, res: ModeResult, bf16: bool) -> str:
    """What a today's mode, or any mode of a bf16 plan, says beside its figures ("" for the four in f32): the
    compile time kept apart, the output error against f32, and no fast bf16 where oneDNN has none."""
    from explorer.core.model.modern.bf16 import error_note, no_fast_bf16_note

    notes = [prep.note] if mode in ("compiled", "autocast_bf16") else []
    if bf16:
        notes += [error_note(res.f32_max_abs_err, res.f32_rel_err), no_fast_bf16_note()]
    return "; ".join(n for n in notes if n)
