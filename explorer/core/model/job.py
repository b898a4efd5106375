"""The job: iter_model, the whole planner as a generator of events (the CLI runs it, the GUI runs it in
its measuring child), and the steps that turn its measurements into the prediction and the ratios.
The method is explained in the package docstring (explorer.core.model)."""

from __future__ import annotations

import dataclasses
import time
from typing import Callable, Iterator

from explorer.core.errors import InputError
from explorer.core.model.activations.finding import denormal_finding
from explorer.core.model.activations.kept import KeptInputs, layer_tensors
from explorer.core.model.chained import CHAINED_MODES, measure_chained
from explorer.core.model.drift import DRIFT_LIMIT, drift, pick_reference, time_reference
from explorer.core.model.inventory import Inventory, Layer, kinds_text, take_inventory
from explorer.core.model.load import load_model, make_input, parse_inputs
from explorer.core.model.modes import run_mode
from explorer.core.model.timing.ranking import ranking_stop
from explorer.core.model.report import (
    MODE_PATH,
    LayerSummary,
    ModeFinished,
    ModelFinished,
    ModelOptions,
    ModelReport,
    ModelStarted,
    ModeResult,
    ModeStarted,
    mode_path,
    summarize_layer,
)
from explorer.core.model.sequence import strided_input
from explorer.core.model.surgery import Float64Reference, copy_model, dense_output


# how jit_mkldnn's conversions are timed when the graph's twins cannot be (model.modes)
PROFILED_CONVERSIONS = "the graph's to_mkldnn/to_dense nodes (profiler)"


def iter_model(
    model: str,
    input_shape: tuple | str | None = None,
    mb: int | None = None,
    dtype: str = "f32",
    threads: int | None = None,
    run_opts=None,
    model_opts: ModelOptions | None = None,
    cancel: Callable[[], bool] | None = None,
    ctx=None,
    folder: str | None = None,
    inventory_only: bool = False,
    layer_results: dict | None = None,
) -> Iterator:
    """The whole planner as a generator of events (runs in the GUI's measuring child, see core.child):
    ModelStarted(inventory), the sweep events of the per-layer table (iter_points), then per mode
    ModeStarted / ModeFinished, and ModelFinished(report). Raises InputError before any measurement.

    The per-layer table measured elsewhere (model --cluster: its layer_points as cluster tasks): a first job
    with `inventory_only` yields ModelStarted and ends; a second gets `layer_results` (layer index -> {path:
    Result}), measures no layer and goes on from them (the mkldnn_chained rows and the modes here)."""
    import torch

    from explorer.core.jobs.events import PathFinished, PointSkipped
    from explorer.core.jobs.options import RunOptions
    from explorer.core.jobs.run import RunContext
    from explorer.core.jobs.sweep import iter_points
    from explorer.core.measure.host import validate_threads
    from explorer.core.paths.base import PATHS, TORCH_DTYPES
    from explorer.core.problem.spec import parse_dtype

    cancelled = cancel or (lambda: False)
    dtype = parse_dtype(dtype or "f32")
    mopts = (model_opts or ModelOptions()).validate()
    ropts = run_opts or RunOptions(paths=PATHS)
    if threads is not None:
        validate_threads(threads)
        ropts = dataclasses.replace(ropts, threads=threads)
    # the table's loops stop at the planner's precision (ModelOptions.precision), not run's
    ropts = dataclasses.replace(ropts, precision=mopts.precision, earliest_share=mopts.earliest_share).validate()
    if mb is not None and (not isinstance(mb, int) or isinstance(mb, bool) or mb < 1):
        raise InputError(f"--mb must be a positive whole number, got {mb!r}.", "mb")
    loaded = load_model(model, folder)
    spec = parse_inputs(input_shape)
    if loaded.expected_input is not None and isinstance(spec, list) and len(spec) == 1:
        shape = (mb,) + tuple(spec[0][1:]) if mb is not None else tuple(spec[0])
        if shape != loaded.expected_input:
            raise InputError(f"this exported program takes an input of shape {','.join(map(str, loaded.expected_input))}"
                             f" (torch.export fixed it), not {','.join(map(str, shape))}.", "input")
    old_threads = torch.get_num_threads()
    if ropts.threads:
        torch.set_num_threads(ropts.threads)
    try:
        x = make_input(spec, mb, TORCH_DTYPES[dtype], loaded.default_input, folder)
        net = loaded.module
        if dtype != "f32":
            net = copy_model(net).to(TORCH_DTYPES[dtype])
        kept = KeptInputs()  # the real inputs of the convs fed subnormals, for the finding
        inv = take_inventory(net, x, loaded.label, dtype, loaded.kind, kept)
        yield ModelStarted(inv)
        if inventory_only:
            return
        ctx = ctx or RunContext.current()
        started = time.strftime("%Y-%m-%dT%H:%M:%S")
        # ---- per layer: the batch machinery ------------------------------------------------------
        points = layer_points(inv)
        per_layer: dict[int, dict] = {i: {} for i in range(len(points))}
        current = {"i": -1}
        from explorer.core.jobs.events import PointStarted

        if layer_results is not None:
            for i in range(len(points)):
                per_layer[i] = _layer_results(inv.layers[i], layer_results.get(i) or {})
        # the paths no planned mode runs on only rank a layer's paths: timed until that rank is settled
        decide = ranking_stop({"dense"} | {MODE_PATH[m] for m in mopts.modes}) if mopts.predict else None
        for ev in (iter_points(points, ropts, cancelled, ctx, decide_for=decide,
                               tensors_for=lambda p: layer_tensors(inv.layers[p.index]))
                   if layer_results is None else ()):
            if isinstance(ev, PointStarted):
                current["i"] = ev.point.index
            elif isinstance(ev, PathFinished):
                per_layer[current["i"]][ev.result.path] = ev.result
            elif isinstance(ev, PointSkipped):
                pass
            yield ev
        summaries = [summarize_layer(lay, per_layer[i]) for i, lay in enumerate(inv.layers)]
        if mopts.predict and {"to_mkldnn", "jit_mkldnn"} & set(mopts.modes):
            for s in summaries:  # the MKLDNN modes' per-layer time: the mkldnn conv on a blocked input
                r = s.results.get("mkldnn")
                if cancelled() or s.layer.spec is None or r is None or r.status != "ok":
                    continue
                s.chained = measure_chained(s.layer.spec, ropts, ctx, cancelled)
        if cancelled():  # the rows measured so far are the report (the CSV keeps them)
            done = [s for s in summaries if s.results]
            yield ModelFinished(ModelReport(inv, done, [], torch.get_num_threads(), started, tuple(mopts.modes)), True)
            return
        # ---- end to end --------------------------------------------------------------------------
        with torch.no_grad():
            ref = x.call(net)
        ref = dense_output(ref)
        ref_f32 = _f32_reference(loaded.module, x, dtype, ref, mopts.modes)
        results: list[ModeResult] = []
        reference = _reference(summaries) if mopts.predict else None
        seq_tensors: dict = {}  # per conv site, its own tensors for the in-order conv loop, shared by the modes
        # an f32 plan's float64 truth, run only if a mode differs from the model as it is beyond f32's tolerance
        ref_f64 = Float64Reference(loaded.module, x) if dtype == "f32" else None
        after = None  # the reference's time right after the last mode
        for k, mode in enumerate(mopts.modes):
            if cancelled():
                break
            yield ModeStarted(mode, k, len(mopts.modes))
            # the last mode's "after" was taken just now, with nothing run since: it is this one's "before"
            before = after if after is not None else time_reference(reference, cancelled) if reference is not None else None
            after = None
            res = run_mode(mode, net, x, dtype, ref, mopts, cancelled, inv, seq_tensors, ref_f32,
                           loaded.module if net is not loaded.module else None, ref_f64)
            if res is None:
                break
            if reference is not None and res.status == "ok" and not cancelled():
                after = time_reference(reference, cancelled)
                d, res.host_drift_note = drift(reference, before, after)
                res.host_drift_pct = None if d is None else 100.0 * d
                res.host_drift_ref = reference.label
            _predict(res, summaries, inv)
            for (li, path), ms in (res.conv_seq.per_layer.items() if res.conv_seq is not None else ()):
                if li is not None:
                    summaries[li].in_sequence.setdefault(path, ms)
            results.append(res)
            yield ModeFinished(res)
        _ratios(results, summaries, inv)
        seq_tensors.clear()
        if not cancelled():
            denormal_finding(results, inv, kept, lambda: x.call(net), cancelled)
        kept.calls.clear()
        report = ModelReport(inv, summaries, results, torch.get_num_threads(), started, tuple(mopts.modes))
        yield ModelFinished(report, cancelled())
    finally:
        torch.set_num_threads(old_threads)


def _f32_reference(module, x, dtype: str, ref, modes):
    """The f32 model's output, which every bf16 figure states its error against: the plan's own reference in
    an f32 plan, the f32 model on the same (bf16-rounded) input in a bf16 plan; None when nothing is bf16."""
    import torch

    from explorer.core.model.report import BF16_MODES, direction_doubt

    if dtype == "f32":
        return ref if set(BF16_MODES) & set(modes) else None
    if dtype != "bf16":
        return None
    with torch.no_grad():
        return dense_output(x.map(lambda t: t.float()).call(module))


def layer_points(inv: Inventory):
    """One SweepPoint per distinct layer (the ones that cannot be measured are skipped points)."""
    from explorer.core.problem.sweep_plan import SweepPoint

    pts = []
    for i, lay in enumerate(inv.layers):
        pts.append(SweepPoint(i, {}, lay.spec, None, lay.error, None if not lay.error else "desc", None,
                              lay.desc or lay.name))
    return pts


def _layer_results(layer: Layer, results: dict) -> dict:
    """A layer's rows measured elsewhere, checked against this job's inventory (the model was loaded again)."""
    for r in results.values():
        if r.spec != layer.spec:
            raise InputError(f"layer {layer.name} is {layer.desc} now but was measured as {r.spec.desc}: the "
                             "model's convolutions changed between its two loads (a random shape?).", "model")
    return dict(results)


def _reference(summaries):
    try:
        return pick_reference(summaries)
    except Exception:  # noqa: BLE001 - no drift check (the dense path of that layer cannot be built)
        return None


def _predict(res: ModeResult, summaries: list[LayerSummary], inv: Inventory) -> None:
    if res.status != "ok" or res.remainder_ms is None:
        return
    if res.mode == "int8":  # its per-layer table is its own (modern.int8: the qconv op), not a sweep path
        if res.conv_alone_ms is not None:
            res.conv_ms = res.conv_alone_ms
            res.predicted_ms = res.conv_ms + res.remainder_ms
        return
    path = mode_path(res)
    first = inv.sites[0].module if inv.sites else None
    inside = {site.module for site in inv.inside_sites()}  # not stubbed: timed inside the remainder
    conv = 0.0
    chained = 0
    for s in summaries:
        count = sum(1 for m in s.layer.modules if m not in inside)
        if not count:
            continue
        r = s.results.get(path)
        if r is None or r.status != "ok" or not r.median_ms:
            why = s.layer.error or (r.error if r is not None else f"path {path} was not measured")
            res.predict_note = f"no prediction: layer {s.layer.name} has no {path} time ({why})"
            return
        c = s.chained
        if res.mode in CHAINED_MODES and c is not None and c.status == "ok" and c.median_ms:
            # the first conv reorders the plain x.to_mkldnn() input (the mkldnn time); the rest get blocked input
            n_plain = 1 if first in s.layer.modules else 0
            conv += n_plain * r.median_ms + (count - n_plain) * c.median_ms
            chained += count - n_plain
        else:
            conv += count * r.median_ms
    res.conv_alone_ms = conv
    seq = res.conv_seq
    res.conv_ms = seq.total_ms if seq is not None else conv
    res.predicted_ms = res.conv_ms + (res.conversion_ms or 0.0) + res.remainder_ms
    if res.graph_convs is not None and seq is not None:
        other = "" if res.graph_convs == inv.total else f"; the inventory's {inv.total}: {kinds_text(inv.sites)}"
        fed = ""
        if res.graph_fed and res.graph_buffers:
            # the forward's allocator hands its few freed buffers back to the next node (jit.py says why)
            fed = (f" ({res.graph_fed} of them, in {res.graph_buffers} buffers: one per shape, dtype and layout, "
                   "as in the forward)")
        res.predict_note = (f"convs: the frozen graph's own {res.graph_convs} conv nodes (BatchNorm folded in{other}) "
                            f"in its order, each on its real input, in one graph call ({seq.passes} passes), "
                            f"{res.conv_ms / conv:.2f}x the per-layer table's mkldnn/mkldnn_chained time; "
                            f"remainder: the graph without its conv and conversion nodes, fed their outputs{fed}; "
                            "each part reads its inputs hot, as inside the graph (each conv input touched, each "
                            "fed output restored from a real one of its kind, just before its first use; the "
                            "touches and restores timed alone and taken off); "
                            f"conversions: {res.conversion_source or PROFILED_CONVERSIONS}")
        return
    stubbed = [s for s in inv.sites if s.stubbable]
    notes = [f"convs: timed in model order, each of the {_counted(inv, stubbed)} with its own tensors and the others in "
             f"between ({seq.passes} passes), {res.conv_ms / conv:.2f}x their per-layer table time"
             if seq is not None else (res.conv_seq_note or "convs: the per-layer table's times")]
    strided = [s for s in inv.sites if s.stubbable and strided_input(res.mode, s)]
    if seq is not None and strided:
        notes.append(f"{len(strided)} convs take a non-contiguous input in the model as it is (first: "
                     f"{strided[0].module}, strides {strided[0].input_strides}; a transpose or permute before it), "
                     "timed on an input with the same strides: torch copies it inside the conv")
    if res.mode == "to_mkldnn" and chained:
        notes.append(f"{chained} of {_counted(inv, stubbed)} on mkldnn_chained (the MKLDNN model passes blocked "
                     f"outputs conv to conv){_rest_on_mkldnn(len(stubbed) - chained)}")
    if res.mode == "jit_mkldnn":
        if res.graph_cut_error:
            notes.append(f"the frozen graph could not be cut into its parts ({res.graph_cut_error}), so eager "
                         "stand-ins are timed")
        notes.append(f"{chained} of {_counted(inv, stubbed)} on mkldnn_chained (blocked input, as the graph passes "
                     f"it){_rest_on_mkldnn(len(stubbed) - chained)}; remainder of the to_mkldnn model with BatchNorm "
                     "folded (ReLU6-like modules as the jit's flat in-place aten op); conversions: the graph's "
                     "to_mkldnn/to_dense nodes (profiler)")
    notes += conv_kind_notes(inv, res.mode)
    res.predict_note = "; ".join(notes)


def _counted(inv: Inventory, sites: list) -> str:
    """A part of the inventory's convs, counted as the inventory line counts them: the bare number when it is
    all of them (the reader's total), else with the kinds ('98 Conv1d' beside the inventory's '100 ...')."""
    return str(len(sites)) if len(sites) == inv.total else kinds_text(sites)


def _rest_on_mkldnn(n: int) -> str:
    return ", the rest on mkldnn" if n else ""  # none left when the first conv runs inside the remainder


def conv_kind_notes(inv: Inventory, mode: str) -> list[str]:
    """What the prediction does with convs that are not plain conv modules, one clause each: a subclass with
    its own forward is stubbed whole (its extra ops in neither part); an F.conv*d call inside another module
    cannot be stubbed, so it runs inside the remainder (measured there, not predicted)."""
    out = []
    own = [s for s in inv.sites if s.stubbable and s.own_forward]
    if own and mode != "jit_mkldnn":
        out.append(f"{len(own)} convs are {own[0].owner} modules with {own[0].own_forward} (first: {own[0].module}), "
                   "timed per layer as the conv they call and stubbed for the remainder, their padding child modules "
                   "still run there; anything else that forward does besides the conv is in neither part")
    fn = inv.functional_sites()
    if fn and mode != "jit_mkldnn":
        out.append(f"{kinds_text(fn)} call{'s' if len(fn) > 1 else ''} inside another module's forward "
                   f"(first: {fn[0].module} in a {fn[0].owner}), which cannot be stubbed: they run inside the remainder "
                   "and are measured there, not predicted from the per-layer table")
    tr = inv.transposed_sites()
    if tr and mode != "jit_mkldnn":
        out.append(f"{kinds_text(tr)} (transposed; first: {tr[0].module}): the "
                   "per-layer paths time forward convs only, so they are not stubbed; they run inside the remainder "
                   "and are measured there, not predicted from the per-layer table")
    return out


def _ratios(results: list[ModeResult], summaries: list[LayerSummary], inv: Inventory | None = None) -> None:
    """Each mode's speedups, its convs faster than dense in the per-layer table (and, with `inv`, the kinds of
    the convs that table has no row for), and whether a figure behind them is uncertain."""
    base = next((r for r in results if r.mode == "nchw"), None)
    from explorer.core.model.report import BF16_MODES, direction_doubt

    f32_table = any(s.layer.spec is not None and s.layer.spec.dtype != "bf16" for s in summaries)
    for r in results:
        path = mode_path(r)
        if r.mode in BF16_MODES and f32_table:  # its convs are bf16: an f32 per-layer table says nothing of them
            path = None
        faster = total = 0
        slower = []
        noisy_rows = 0
        compared: set = set()
        for s in summaries:
            d, p = s.results.get("dense"), s.results.get(path) if path else None
            if d is None or p is None or d.status != "ok" or p.status != "ok":
                continue
            total += s.layer.count
            compared.update(s.layer.modules)
            noisy_rows += d.noisy or p.noisy
            if p.median_ms < d.median_ms:
                faster += s.layer.count
            elif path != "dense":
                slower.append((p.median_ms - d.median_ms) * s.layer.count)
                slower[-1] = (slower[-1], _layer_label(s.layer, s is summaries[0]))
        r.convs_faster, r.convs_total = (faster, total) if path != "dense" else (None, total)
        if inv is not None and total:  # the inventory's other convs, named so "N of M" adds up to its total
            r.convs_not_compared = kinds_text([site for site in inv.sites if site.module not in compared])
        r.slower_layers = [lab for _, lab in sorted(slower, reverse=True)]
        reasons = []
        if base is not None and r.status == "ok" and base.status == "ok" and r.measured_ms:
            r.speedup = base.measured_ms / r.measured_ms
            if r is not base and all((base.p25_ms, base.p75_ms, r.p25_ms, r.p75_ms)):
                r.speedup_low, r.speedup_high = base.p25_ms / r.p75_ms, base.p75_ms / r.p25_ms
            if r.noisy or base.noisy:
                reasons.append("a measured loop is noisy")
            if r.predicted_ms and base.predicted_ms:
                r.predicted_speedup = base.predicted_ms / r.predicted_ms
                if "noisy" in (r.remainder_quality, base.remainder_quality):
                    reasons.append("a remainder loop is noisy")
                if "noisy" in (r.conv_seq_quality, base.conv_seq_quality):
                    reasons.append("a loop of the convs in model order is noisy")
        if noisy_rows:
            reasons.append(f"{noisy_rows} per-layer rows are noisy")
        drifted = [(m, "" if m is r else " around the model as it is") for m in ((r,) if base is r else (r, base))
                   if m is not None and m.host_drift_pct is not None and abs(m.host_drift_pct) > 100 * DRIFT_LIMIT]
        if drifted:
            how = " and ".join(f"{m.host_drift_pct:+.0f}%{where or (' here' if len(drifted) > 1 else '')}"
                               for m, where in drifted)
            reasons.append(f"{drifted[0][0].host_drift_ref} ran {how}, against its per-layer table "
                           "row (the machine's speed or the process's memory state changed)")
        if r.speedup:  # computed last: it reads the predicted speedup and the spread set above
            doubt = direction_doubt(r)
            if doubt:
                reasons.insert(0, doubt)
        r.uncertain = bool(reasons)
        r.uncertain_reason = "; ".join(reasons)


def _layer_label(layer: Layer, first: bool = False) -> str:
    s = layer.spec
    k = "?" if s is None else {3: f"{s.kw}", 5: f"{s.kd}x{s.kh}x{s.kw}"}.get(s.ndims, f"{s.kh}x{s.kw}")
    what = f"{layer.name} ({k}{', dw' if s is not None and s.g > 1 and s.g == s.ic else ''}"
    what += f", x{layer.count})" if layer.count > 1 else ")"
    if s is not None and first:
        what = f"the {k} stem ({layer.name})"
    return what
