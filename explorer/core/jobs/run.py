"""Run one spec over the selected paths: a generator of events shared by the CLI and the GUI worker.

Per path: prepare (conversions a model pays once), one call whose output is checked against the f32
reference, one traced call (oneDNN verbose, outside the timed loop), then the timed loop (under the `default` allocator the timed loop comes first: see fresh_script_order). A loop that
another program disturbed (explorer.core.measure.interference) is measured again, up to MAX_ATTEMPTS in all;
if it stays disturbed the row is kept with quality `noisy` and the reason, never passed off as a finding. A path torch
refuses becomes an `unsupported` row with torch's reason; any other exception an `error` row; the run
goes on. Cancel is cooperative: checked after every timed call, so Stop takes effect within one call.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

import torch

from explorer.core.jobs.events import PathFinished, PathRetry, PathStarted, Samples
from explorer.core.jobs.options import RunOptions
from explorer.core.measure import machine
from explorer.core.measure.allocator import current as current_allocator
from explorer.core.measure.harness import Budget, Progress, measure_iter
from explorer.core.measure.retry import MAX_ATTEMPTS, better, iter_until_trusted  # noqa: F401 - better re-exported (runner.better)
from explorer.core.paths import backward as bwd
from explorer.core.paths.base import Tensors, is_unsupported, one_line, to_dense
from explorer.core.paths.registry import prepare
from explorer.core.problem.memory import check_memory
from explorer.core.problem.spec import ConvSpec
from explorer.core.report.results import Result


@dataclass
class RunContext:
    """Facts recorded on every row, read once per run."""

    torch_version: str = field(default_factory=lambda: torch.__version__)
    onednn_version: str = field(default_factory=machine.onednn_version)
    isa: str = field(default_factory=machine.onednn_isa_name)  # read back from oneDNN in this process
    aten_isa: str = field(default_factory=machine.torch_isa)
    cpu: str = field(default_factory=machine.cpu_model)
    peak_fp32: float | None = None
    peak_bf16: float | None = None
    allocator: str = field(default_factory=current_allocator)  # what this process really runs with

    @classmethod
    def current(cls) -> RunContext:
        ctx = cls()
        p = machine.peak(allow_measure=False)  # a cached peak only: never measure inside a run
        if p:
            ctx.peak_fp32, ctx.peak_bf16 = p.fp32_gflops, p.bf16_gflops
        return ctx


def base_result(spec: ConvSpec, path: str, threads: int, ctx: RunContext, opts: RunOptions, vary: str) -> Result:
    return Result(
        spec=spec, path=path, threads=threads, budget_ms=opts.budget_ms, torch_version=ctx.torch_version,
        onednn_version=ctx.onednn_version, cpu=ctx.cpu, started_at=time.strftime("%Y-%m-%dT%H:%M:%S"), vary=vary,
        # of this process, whatever the caller's context says: read back from oneDNN, ATen and glibc here
        isa=machine.onednn_isa_name(), aten_isa=machine.torch_isa(), allocator=current_allocator(),
    )


def iter_run(
    spec: ConvSpec,
    opts: RunOptions | None = None,
    cancel: Callable[[], bool] | None = None,
    ctx: RunContext | None = None,
    vary: str = "",
    decide_for: Callable | None = None,
    make_tensors: Callable | None = None,
) -> Iterator[PathStarted | Samples | PathFinished]:
    """Yield events while running `spec` over `opts.paths`. Raises SpecError/InputError before any work.
    `decide_for(path, finished)`, given this spec's Results so far, may return an early stop for that path's
    loop (Budget.decided), or None for the full budget.
    `make_tensors(spec)` replaces the seeded random tensors (the planner: an input with the model's statistics)."""
    opts = (opts or RunOptions()).validate()
    spec.validate()
    if spec.is_int8:  # an int8 line asks for the int8 routes; the float paths asked stay as unsupported rows
        from explorer.core.paths.base import INT8_PATHS

        opts = dataclasses.replace(opts, paths=tuple(opts.paths) + tuple(p for p in INT8_PATHS if p not in opts.paths))
    check_memory(spec, opts.paths)
    ctx = ctx or RunContext.current()
    cancelled = cancel or (lambda: False)
    old_threads = torch.get_num_threads()
    if opts.threads:
        torch.set_num_threads(opts.threads)
    try:
        threads = torch.get_num_threads()
        try:
            tensors = make_tensors(spec) if make_tensors is not None else Tensors.make(spec)
        except (RuntimeError, MemoryError) as exc:  # allocation failed: every path's row says so
            for path in opts.paths:
                res = base_result(spec, path, threads, ctx, opts, vary)
                res.status, res.error = "error", one_line(exc)
                yield PathFinished(res)
            return
        reference = None
        finished: list[Result] = []
        for i, path in enumerate(opts.paths):
            if cancelled():
                return
            yield PathStarted(spec, path, i, len(opts.paths))
            res = base_result(spec, path, threads, ctx, opts, vary)
            try:
                prep = prepare(path, tensors)
                res.compile_ms, res.route_note = prep.compile_ms, prep.note
                time_first = fresh_script_order(opts)
                if time_first:
                    prep.call_once()  # the warm-up a user's Timer makes; its output freed as theirs is
                else:
                    reference = _inspect(res, prep, tensors, reference, opts, cancelled)
                if cancelled():
                    return  # checked between every slow step, so Stop never waits for more than one call
                budget = Budget(opts.budget_ms, opts.min_samples, opts.precision, warmup=0,
                                earliest_share=opts.earliest_share,
                                decided=decide_for(path, list(finished)) if decide_for else None)

                def measure_once(_attempt, prep=prep, path=path):
                    with torch.no_grad(), prep.context():
                        gen = measure_iter(prep.fn, budget, cancelled, opts.progress_interval_s)
                        while True:
                            try:
                                p: Progress = next(gen)
                            except StopIteration as stop:
                                return stop.value
                            yield Samples(spec, path, p.new_samples_ns / 1e6, p.n, p.elapsed_s, p.budget_s)

                got = yield from iter_until_trusted(
                    measure_once, MAX_ATTEMPTS,
                    on_retry=lambda attempt, kept, path=path: PathRetry(spec, path, attempt, kept.quality_reason))
                if got is None:
                    return  # a half-measured path is not a result; every finished row was already yielded
                m, res.attempts = got
                fill_stats(res, m, spec, ctx)
                if time_first and not cancelled():
                    reference = _inspect(res, prep, tensors, reference, opts, cancelled)
                _split_median(res)
            except Exception as exc:  # noqa: BLE001 - any failure of one path is that path's row
                res.status = "unsupported" if is_unsupported(exc) else "error"
                res.error = one_line(exc)
            finally:
                prep = None  # release this path's tensors before the next one allocates
            finished.append(res)
            yield PathFinished(res)
    finally:
        torch.set_num_threads(old_threads)


def run(spec: ConvSpec, opts: RunOptions | None = None, cancel=None, ctx=None, on_event=None) -> list[Result]:
    """iter_run, collected: the finished results (on_event sees every event)."""
    results = []
    for ev in iter_run(spec, opts, cancel, ctx):
        if on_event:
            on_event(ev)
        if isinstance(ev, PathFinished):
            results.append(ev.result)
    return results


def fresh_script_order(opts: RunOptions) -> bool:
    """`default` stands for a user's fresh script, so its loop is timed before the accuracy check, the trace
    and the profile: the f32 reference (PyTorch's own kernels, a large im2col buffer) raised glibc's dynamic
    mmap/trim thresholds, and dense mb4ic64ih28oc64oh28kh3ph1 then took 0 page faults a call against 556
    in a plain script (BENCHMARKS.md, the honest `default`)."""
    from explorer.core.measure.allocator import fresh_per_run

    return fresh_per_run(opts.allocator)


def _inspect(res: Result, prep, tensors: Tensors, reference, opts: RunOptions, cancelled):
    """One untimed call: its output checked against the f32 reference and its stored bytes, then the traced
    and the profiled call. Returns the reference (computed once per run)."""
    out = prep.call_once()  # the untimed warm-up: builds oneDNN primitives, gives the output
    if cancelled():
        return reference
    backward = tensors.spec.backward  # out is then the tuple of gradients the direction asked for
    if opts.check:
        if reference is None:
            reference = bwd.reference(tensors) if backward else tensors.reference()
        if backward:
            res.max_abs_err = bwd.max_abs_err(out, reference)
        else:
            if tensors.quant is not None:  # int8: the dequantized output against the f32 conv on the dequantized inputs
                from explorer.core.paths.int8_quant import dequantize_output

                real = dequantize_output(out, tensors.quant)
            else:
                real = to_dense(out).float()
            diff = float((real - reference).abs().max())
            res.max_abs_err = diff
            res.rel_err = diff / max(float(reference.abs().max()), 1e-30)
    res.input_bytes, res.weight_bytes = _stored_bytes(prep.input_tensor), _stored_bytes(prep.weight_tensor)
    res.output_bytes = sum(_stored_bytes(g) for g in bwd.grads(out)) if backward else _stored_bytes(out)
    if opts.trace and not cancelled():
        _add_trace(res, prep, None if backward else out, tensors.spec.g)
    if opts.trace and not cancelled():
        _add_aten(res, prep)
    return reference


def _stored_bytes(t) -> int | None:
    if t is None:
        return None
    if t.layout == torch._mkldnn:
        return int(torch.ops.mkldnn._nbytes(t))
    return int(t.untyped_storage().nbytes())


def fill_quality(res: Result, m) -> None:
    """The interference meter's columns of one measured loop."""
    i = m.interference
    res.quality, res.quality_reason = m.quality, m.quality_reason
    res.samples_used = m.n_stats
    if i is not None:
        res.runq_wait_pct, res.faults_per_call = i.runq_wait_pct, i.faults_per_call
        res.ctx_switches_per_call, res.cpu_pct, res.steal_pct = i.ctx_switches_per_call, i.cpu_pct, i.steal_pct
        res.loadavg, res.other_cpu_pct, res.slowdown_pct = i.loadavg, i.other_cpu_pct, i.slowdown_pct


def fill_stats(res: Result, m, spec: ConvSpec, ctx: RunContext) -> None:
    res.samples = m.n
    res.median_ms, res.iqr_ms, res.min_ms, res.mean_ms = m.median_ms, m.iqr_ms, m.min_ms, m.mean_ms
    res.p25_ms, res.p75_ms = m.p25_ms, m.p75_ms
    res.stop_reason = m.stop_reason
    res.samples_ms = m.samples_ms
    fill_quality(res, m)
    res.sample_starts_ns, res.sample_waits_ns = m.starts_ns, m.waits_ns
    res.gflops = spec.ops / (res.median_ms / 1e3) / 1e9 if res.median_ms > 0 else None
    # The peak of this row's thread count (a 2-thread peak would read a 1-thread row wrongly), cached only.
    p = machine.peak(threads=res.threads, allow_measure=False)
    peak = (p.bf16_gflops if spec.dtype == "bf16" and p.bf16_gflops else p.fp32_gflops) if p is not None else None
    if peak and res.gflops and res.gflops > peak and res.quality != "noisy":
        # faster than the cached peak: that rate is what this machine reaches, so the peak becomes it
        p = machine.note_rate(spec.dtype, res.threads, res.gflops, f"{res.path} {spec.descriptor()}")
        peak = (p.bf16_gflops if spec.dtype == "bf16" else p.fp32_gflops) if p is not None else peak
    if peak and res.gflops:
        res.pct_peak = 100.0 * res.gflops / peak


def _add_trace(res: Result, prep, out, groups: int) -> None:
    """One traced call outside the timed loop: which kernel ran, in which formats, with how many reorders."""
    from explorer.core.layout.path_layouts import last_conv, layouts_of
    from explorer.core.trace.onednn import run_traced

    with torch.no_grad():
        t0 = time.perf_counter_ns()
        tr = run_traced(prep.fn, context=prep.context())
        res.trace_window_ns = (t0, time.perf_counter_ns())
    s = tr.summary
    res.conv_impl = s.conv_impl or ""
    res.src_tag, res.wei_tag, res.dst_tag = s.src_tag or "", s.wei_tag or "", s.dst_tag or ""
    res.reorder_count = s.reorder_count
    res.trace_conv_ms, res.trace_reorder_ms = s.conv_time_ms, s.reorder_time_ms
    res.onednn_ms, res.reorder_ms = s.conv_time_ms + s.other_time_ms, s.reorder_time_ms  # split by _split_median
    res.trace = tr.primitives
    res.layouts = layouts_of(prep, out, last_conv(tr.primitives), groups)


def _add_aten(res: Result, prep) -> None:
    """One profiled call outside the timed loop: the chain of ATen ops the path dispatched to."""
    import threading

    from explorer.core.trace.aten import chain_text, profile_call

    if threading.current_thread() is not threading.main_thread():
        # torch.profiler started from a worker thread of a Qt process crashed it (segfault while the GUI
        # thread collected garbage); the measuring processes profile in their main thread.
        return

    prof = profile_call(prep.fn, prep.context)
    res.aten = prof.ops
    res.aten_ops = chain_text(prof.ops)
    res.aten_window_ns = (prof.start_ns, prof.wall_ns)


def _split_median(res: Result) -> None:
    """The median as oneDNN compute + reorders + the rest, from the traced call's primitive times."""
    from explorer.core.trace.aten import time_split

    if res.onednn_ms is None:
        return
    split = time_split(res.median_ms, res.onednn_ms, res.reorder_ms or 0.0)
    if split is not None:
        res.onednn_ms, res.reorder_ms, res.other_ms = split
