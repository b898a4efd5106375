"""The routes to oneDNN a PyTorch user has today, beside the seed's to_mkldnn() paths.

- `jit_frozen`: a one-conv module through torch.jit.script, torch.jit.freeze and
  torch.jit.optimize_for_inference: TorchScript's own conversion to MKLDNN layouts (it inserts
  aten::to_mkldnn / prim::ConstantMKLDNNTensor / prim::mkldnn_convolution / aten::to_dense).
- `compiled`: torch.compile (inductor, CPU) with `freezing` on, as inductor's docs recommend for inference.
  Compiled once per (spec, dtype, threads) in this process; the compile time is `compile_ms`, apart from
  the per-call time.
- `mkldnn_prepacked`: what inductor's freezing pass (torch/_inductor/fx_passes/mkldnn_fusion.py,
  `_register_weight_pack_pass`) emits for an aten.convolution: the weight packed once by
  torch.ops.mkldnn._reorder_convolution_weight(w, padding, stride, dilation, groups, input_size), then per
  call torch.ops.mkldnn._convolution_pointwise(x, w_packed, b, padding, stride, dilation, groups, "none",
  [], ""), with x in channels_last as inductor's lowering requires (mkldnn_ir.py: "cpu conv always use
  channels_last for convolution when weight is prepacked").

Same rules as the six paths: set-up in `prepare_route`, only the call in `fn`; torch's refusal becomes
PathUnsupported with its one-line reason.
"""

from __future__ import annotations

import copy
import functools
import re
import time
import warnings
from collections import Counter

import torch

from explorer.core.paths.base import TORCH_DTYPES, PathUnsupported, PreparedPath, Tensors, one_line
from explorer.core.paths.post_ops import ConvWithPostOps, fused_call, ops_of

# How many compiled specs stay alive. Dynamo keeps its compiled code per code object (Conv2d.forward) and
# falls back to eager past its recompile limit (8), so the cache is emptied, with torch._dynamo.reset(),
# well before that.
COMPILED_CACHE_SIZE = 4
_compiled: dict[tuple, tuple] = {}

_JIT_WARMUP = 3  # the profiling executor specialises the graph after its first runs


def prepare_route(name: str, t: Tensors) -> PreparedPath:
    if name == "jit_frozen":
        return _jit_frozen(t)
    if name == "compiled":
        return _compiled_path(t)
    if name == "mkldnn_prepacked":
        return _mkldnn_prepacked(t)
    raise ValueError(f"unknown route {name!r}")


def _module(t: Tensors) -> torch.nn.Module:
    """The seeded f32 module in the spec's dtype (its values are the dtype-rounded ones every path uses),
    with the spec's post-ops after it as one module (freezing and inductor fuse what they can)."""
    m = copy.deepcopy(t.conv32).to(TORCH_DTYPES[t.spec.dtype]).eval()
    if t.spec.post_ops:
        m = ConvWithPostOps(m, ops_of(t.spec.post_ops)).eval()
    m.requires_grad_(False)
    return m


def _args(t: Tensors, x: torch.Tensor) -> tuple:
    """The module's call arguments: the input, and the residual when a `sum` post-op adds one."""
    return (x,) if t.residual is None else (x, t.residual.contiguous())


def _conv_lists(t: Tensors) -> tuple[list[int], list[int], list[int], int]:
    a = t.conv_args()
    return list(a["padding"]), list(a["stride"]), list(a["dilation"]), a["groups"]


# ---- jit_frozen -------------------------------------------------------------------------------------------
def graph_ops(graph) -> list[str]:
    """The node kinds of a TorchScript graph, constants and list plumbing left out, in order."""
    skip = {"prim::Constant", "prim::ListConstruct", "prim::GetAttr", "prim::TupleConstruct"}
    return [n.kind() for n in graph.nodes() if n.kind() not in skip]


def describe_inserted(kinds: list[str]) -> str:
    """'aten::to_mkldnn, prim::ConstantMKLDNNTensor x2, ...': the MKLDNN-related nodes, first-seen order."""
    counts = Counter(k for k in kinds if re.search(r"mkldnn|to_dense", k, re.IGNORECASE))
    if not counts:
        return "optimize_for_inference inserted no MKLDNN node (the graph runs " + ", ".join(dict.fromkeys(kinds)) + ")"
    parts = [k + (f" x{n}" if n > 1 else "") for k, n in counts.items()]
    return "optimize_for_inference inserted: " + ", ".join(parts)


def _jit_frozen(t: Tensors) -> PreparedPath:
    module = _module(t)
    x = t.x.contiguous()
    args = _args(t, x)
    t0 = time.perf_counter_ns()
    # TorchScript says it is deprecated (in favour of torch.compile, the `compiled` route): still what many
    # deployed models run, so it is measured; the warning is not the user's to act on here.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        scripted = torch.jit.script(module)
        frozen = torch.jit.freeze(scripted)
        opt = torch.jit.optimize_for_inference(frozen)
        forward = opt.forward  # the ScriptMethod: no nn.Module hook dispatch, as the other paths
        try:
            for _ in range(_JIT_WARMUP):
                forward(*args)
        except RuntimeError as exc:  # an op the frozen MKLDNN graph has no kernel for (mkldnn_gelu's tanh)
            if not t.spec.post_ops:
                raise
            raise PathUnsupported(f"{t.spec.post_ops} through jit freezing: {one_line(exc)}") from None
    compile_ms = (time.perf_counter_ns() - t0) / 1e6
    note = describe_inserted(graph_ops(opt.graph))
    if t.spec.post_ops:  # what freezing left of the post-ops is what each call runs
        note += "; the frozen graph runs: " + ", ".join(k for k in dict.fromkeys(graph_ops(opt.graph)))
    return PreparedPath("jit_frozen", functools.partial(forward, *args), input_tensor=x, weight_tensor=t.w,
                        keep=[opt], compile_ms=compile_ms, note=note)


# ---- compiled ---------------------------------------------------------------------------------------------
def compile_disabled() -> str | None:
    """One sentence when torch.compile is switched off in this process (TORCH_COMPILE_DISABLE=1 sets dynamo's
    `disable`): it then returns the module uncompiled, and a `compiled` row would time eager code."""
    import torch._dynamo.config as dynamo_config

    if getattr(dynamo_config, "disable", False):
        return ("torch.compile is disabled in this environment (TORCH_COMPILE_DISABLE=1): it would return the "
                "module uncompiled and this row would time eager code; unset it to time inductor's code")
    return None


def cxx_problem() -> str | None:
    """None when inductor finds a working C++ compiler, else inductor's own one-line reason."""
    try:
        from torch._inductor import cpp_builder

        cpp_builder.get_cpp_compiler()
    except Exception as exc:  # noqa: BLE001 - InvalidCxxCompiler, or a toolchain check that failed
        return one_line(exc)
    return None


_CALL_RE = re.compile(r"^\s+(?:\w+ = )?((?:cpp_fused_\w+|torch\.ops\.[\w.]+|extern_kernels\.\w+|aten\.[\w.]+))\(")


def compiled_calls(source: str) -> list[str]:
    """The kernels and ops inductor's generated `call` runs, in order (cpp_fused_* are its own C++ loops)."""
    body = source.split("def call(", 1)[-1].split("\ndef ", 1)[0]
    return [m[1] for line in body.splitlines() if (m := _CALL_RE.match(line))]


def _describe_compiled(calls: list[str], compile_ms: float) -> str:
    if not calls:
        return f"inductor compiled it in {compile_ms / 1e3:.1f} s"
    return f"inductor (freezing) compiled it in {compile_ms / 1e3:.1f} s; each call runs: " + ", ".join(calls)


def _compile_key(t: Tensors) -> tuple:
    s = t.spec
    return (tuple(s.input_shape), tuple(s.weight_shape), tuple(sorted(t.conv_args().items())), s.dtype, s.bias,
            torch.get_num_threads(), s.post_ops)


def _compiled_path(t: Tensors) -> PreparedPath:
    problem = compile_disabled()
    if problem:
        raise PathUnsupported(problem)
    problem = cxx_problem()
    if problem:
        raise PathUnsupported(f"torch.compile needs a C++ compiler: {problem}")
    x = t.x.contiguous()
    args = _args(t, x)
    key = _compile_key(t)
    hit = _compiled.get(key)
    if hit is None:
        import torch._dynamo as dynamo  # an alias: `import torch.x` here would make `torch` a local name
        import torch._inductor.config as inductor_config
        from torch._inductor.utils import run_and_get_code

        if len(_compiled) >= COMPILED_CACHE_SIZE:
            _compiled.clear()
            dynamo.reset()
        module = _module(t)
        compiled = torch.compile(module, backend="inductor", dynamic=False)

        # freezing: weights become constants and the conv's weight is prepacked (inductor's inference mode);
        # cpp.enable_kernel_profile: inductor's own C++ loops show up in the profiler's ATen view.
        with torch.no_grad(), inductor_config.patch({"freezing": True, "cpp.enable_kernel_profile": True}):
            t0 = time.perf_counter_ns()
            _, sources = run_and_get_code(compiled, *args)
            compile_ms = (time.perf_counter_ns() - t0) / 1e6
        if not sources:  # dynamo stood aside (disabled, or it fell back to eager): nothing compiled to time
            raise PathUnsupported("torch.compile produced no code for this module (dynamo ran it eager), so "
                                  "there is no compiled call to time")
        calls = compiled_calls("\n".join(sources))
        hit = (compiled, compile_ms, _describe_compiled(calls, compile_ms), module)
        _compiled[key] = hit
    compiled, compile_ms, note, module = hit
    with torch.no_grad():
        compiled(*args)  # a guard miss would recompile here, not in the timed loop
    return PreparedPath("compiled", functools.partial(compiled, *args), input_tensor=x, weight_tensor=t.w,
                        keep=[compiled, module], compile_ms=compile_ms, note=note)


# ---- mkldnn_prepacked -------------------------------------------------------------------------------------
def _mkldnn_prepacked(t: Tensors) -> PreparedPath:
    padding, stride, dilation, groups = _conv_lists(t)
    x = t.x.contiguous(memory_format=torch.channels_last)
    t0 = time.perf_counter_ns()
    try:
        packed = torch.ops.mkldnn._reorder_convolution_weight(t.w, padding, stride, dilation, groups, list(x.shape))
    except RuntimeError as exc:  # e.g. bf16/f16 where the CPU lacks the ISA: torch's reason
        raise PathUnsupported(one_line(exc)) from None
    compile_ms = (time.perf_counter_ns() - t0) / 1e6
    residual = t.residual.contiguous(memory_format=torch.channels_last) if t.residual is not None else None
    try:
        fn, attr = fused_call(x, packed, t.b, (padding, stride, dilation, groups), ops_of(t.spec.post_ops), residual)
        if t.spec.post_ops:
            with torch.no_grad():
                fn()  # torch's refusal of a fusion ("Fusion behavior undefined", alpha not 1) is its reason
    except (ValueError, RuntimeError) as exc:
        raise PathUnsupported(f"{t.spec.post_ops} fused: {one_line(exc)}") from None
    note = (f"weight packed once by torch.ops.mkldnn._reorder_convolution_weight(w, {padding}, {stride}, "
            f"{dilation}, {groups}, input_size={list(x.shape)}); per call torch.ops.mkldnn._convolution_pointwise"
            f"(x channels_last, w_packed, b, ..., {attr})")
    return PreparedPath("mkldnn_prepacked", fn, input_tensor=x, weight_tensor=packed, keep=[packed, residual],
                        compile_ms=compile_ms, note=note)
