"""The `int8` mode: the model quantized the way PyTorch documents for x86 CPUs today (PT2E: torch.export,
torchao's X86InductorQuantizer, calibrated on the example input, converted, then torch.compile with
freezing), measured end to end, and predicted from the compiled graph's own qconv calls replayed one by one
(graph_table_ms: each distinct call, with its fused post-ops and real output dtype, timed alone, times its
count), or, when none is seen, from a synthetic per-layer table (layer_table_ms: each conv layer's plain
onednn.qconv_pointwise on onednn.qconv_prepack weights and a u8 channels_last input, times its count); plus
the compiled graph's non-qconv time. torch 2.13 has no
torch.ao.quantization.quantize_pt2e: the PT2E code lives in torchao, an optional extra."""

from __future__ import annotations

import time
import warnings

INSTALL = "pip install torchao==0.18.0 --no-deps (the project's `int8` extra)"


def _import_torchao_quietly() -> None:
    """torchao's import logs a warning for each of its CUDA-only libraries (_C_mxfp8, _C_cutlass_90a) that a CPU
    build of torch cannot load, and torch's pytree one about an Enum it registers: noise on every int8 plan,
    and nothing the CPU route uses."""
    import logging

    logs = [logging.getLogger(name) for name in ("torchao", "torch.utils._pytree")]
    levels = [log.level for log in logs]
    for log in logs:
        log.setLevel(logging.ERROR)
    try:
        import torchao  # noqa: F401
    finally:
        for log, level in zip(logs, levels):
            log.setLevel(level)


def torchao_problem() -> str:
    """Why the int8 mode cannot run here, in one sentence ("" when torchao's PT2E quantizer imports)."""
    try:
        _import_torchao_quietly()
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e  # noqa: F401
        from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import X86InductorQuantizer  # noqa: F401
    except ImportError as e:
        return (f"int8 needs torchao's PT2E quantizer, which is not installed here ({e}); install it with "
                f"{INSTALL}")
    return ""


def _relu_class():
    from torch import nn

    class CallRelu(nn.Module):
        """nn.ReLU as a call of torch.relu: export tags each call of a function apart, but every call of one
        module alike, so a ReLU module reused by a block (ResNet's self.relu) makes X86InductorQuantizer's
        conv+add+relu partition have several outputs ("Input partition has more than one output node")."""

        def forward(self, x):
            return torch_relu(x)

    return CallRelu


def torch_relu(x):
    import torch

    return torch.relu(x)


def unshare_relus(model) -> int:
    """Every nn.ReLU child of `model` (in place) swapped for a CallRelu: the same maths. Returns how many."""
    from torch import nn

    cls, n = _relu_class(), 0
    for mod in list(model.modules()):
        for name, child in list(mod.named_children()):
            if type(child) is nn.ReLU:
                setattr(mod, name, cls())
                n += 1
    return n


def quantized_model(model, inp):
    """The model through PT2E: exported, X86InductorQuantizer's default (static, per-channel s8 weights, u8
    activations), calibrated on `inp` (a ModelInput) once, converted. Not compiled yet."""
    import torch
    import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer as xiq
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from explorer.core.model.surgery import copy_model

    m = copy_model(model).eval()
    unshare_relus(m)
    exported = torch.export.export(m, tuple(inp.args), dict(inp.kwargs)).module()
    quantizer = xiq.X86InductorQuantizer()
    quantizer.set_global(xiq.get_default_x86_inductor_quantization_config())
    with warnings.catch_warnings():  # the quantizer warns per op it leaves in f32 (a maxpool after f32): not the user's
        warnings.simplefilter("ignore", UserWarning)
        prepared = prepare_pt2e(exported, quantizer)
        inp.call(prepared)  # calibration: the observers see the example input
        return convert_pt2e(prepared)


def prepare_int8(model, inp) -> dict:
    """The fields of a modes.PreparedMode for `int8`: the quantized model compiled (inductor, freezing on, so
    its convs become qconv ops on prepacked weights), compiled here by its first call, never in the timed loop."""
    import torch
    import torch._dynamo as dynamo
    import torch._inductor.config as inductor_config

    from explorer.core.model.surgery import dense_output
    from explorer.core.paths.base import PathUnsupported
    from explorer.core.paths.routes import compile_disabled, cxx_problem

    problem = torchao_problem() or compile_disabled()
    if problem:
        raise PathUnsupported(problem)
    problem = cxx_problem()
    if problem:
        raise PathUnsupported(f"int8 runs through torch.compile, which needs a C++ compiler: {problem}")
    dynamo.reset()
    q = quantized_model(model, inp)
    compiled = torch.compile(q, backend="inductor", dynamic=False)
    with torch.no_grad(), inductor_config.patch({"freezing": True}):
        t0 = time.perf_counter_ns()
        inp.call(compiled)
        compile_ms = (time.perf_counter_ns() - t0) / 1e6
        inp.call(compiled)
    note = (f"PT2E int8 (X86InductorQuantizer, calibrated on the example input) compiled with inductor "
            f"(freezing on) in {compile_ms / 1e3:.1f} s, not in the measured time")
    return {"fn": lambda: dense_output(inp.call(compiled)), "model": q, "remainder": None, "compile_ms": compile_ms,
            "note": note, "conv_path": "int8"}


QCONV_OPS = ("onednn::qconv_pointwise", "onednn::qconv2d_pointwise", "onednn::qconv3d_pointwise")


def graph_split_ms(fn, runs: int = 5) -> tuple[float, float, int]:
    """(the forward's non-qconv time, its qconv ops' time, how many qconv calls) read by the profiler, best of
    `runs`: the remainder the per-layer table is added to (inductor's fused kernels are not modules, so no conv
    can be stubbed out of the compiled graph)."""
    import torch
    from torch.profiler import profile

    from explorer.core.model.surgery import quiet_stderr

    best = None
    for _ in range(runs):
        with quiet_stderr(), torch.no_grad(), profile() as prof:
            t0 = time.perf_counter_ns()
            fn()
            total = (time.perf_counter_ns() - t0) / 1e6
        q = [e.cpu_time_total / 1e3 for e in prof.events() if e.name in QCONV_OPS]
        got = (max(0.0, total - sum(q)), sum(q), len(q))
        best = got if best is None or got[0] + got[1] < best[0] + best[1] else best
    return best


def layer_int8_fn(spec):
    """One conv layer's int8 route alone: onednn.qconv_pointwise on a u8 channels_last input and
    onednn.qconv_prepack'ed per-channel s8 weights, u8 out, as PT2E's lowering calls it (2-D convs only)."""
    import torch

    if spec.ndims != 4 or (spec.ph_r not in (None, spec.ph)) or (spec.pw_r not in (None, spec.pw)):
        raise NotImplementedError(f"{spec.desc}: the per-layer int8 table times 2-D convs with symmetric padding")
    g = torch.Generator().manual_seed(0)
    qx = torch.randint(0, 256, (spec.mb, spec.ic, spec.ih, spec.iw), dtype=torch.uint8, generator=g)
    qx = qx.contiguous(memory_format=torch.channels_last)
    w = torch.randint(-127, 128, (spec.oc, spec.ic // spec.g, spec.kh, spec.kw), dtype=torch.int8, generator=g)
    ws, wz = torch.full((spec.oc,), 1e-2), torch.zeros(spec.oc, dtype=torch.int64)
    stride, pad, dil = [spec.sh, spec.sw], [spec.ph, spec.pw], [spec.dh + 1, spec.dw + 1]  # benchdnn's d is torch's - 1
    packed = torch.ops.onednn.qconv_prepack(w, ws, 2e-2, 0, stride, pad, dil, spec.g, list(qx.shape))
    bias = torch.zeros(spec.oc) if spec.bias else None
    return lambda: torch.ops.onednn.qconv_pointwise(qx, 2e-2, 0, packed, ws, wz, bias, stride, pad, dil, spec.g,
                                                    5e-2, 0, None, "none", [], "")


# The overloads PT2E's lowering calls for a conv (torch._inductor.mkldnn_ir: the `tensor` forms in today's
# graphs, the scalar-scale forms in older ones). The generated code looks each up by name at every call
# (torch.ops.onednn.qconv_pointwise.tensor), so wrapping one on its packet sees every call the graph makes.
GRAPH_QCONV_OVERLOADS = (("qconv_pointwise", "tensor"), ("qconv_pointwise", "default"),
                         ("qconv2d_pointwise", "binary_tensor"), ("qconv2d_pointwise", "binary"))


def _copied(a):
    import torch

    # the graph reuses its activation buffers: a replay needs its own, with the same strides; the prepacked
    # weights (MKLDNN tensors) and the other frozen constants are never written, so they are the graph's own
    if isinstance(a, torch.Tensor) and a.layout == torch.strided:
        return torch.empty_strided(a.shape, a.stride(), dtype=a.dtype).copy_(a)
    return a


def _call_key(op, args) -> tuple:
    import torch

    def part(a):  # what the op's time depends on: shapes, strides, dtypes, post-ops; not the values or scales
        if isinstance(a, float):
            return "float"
        if not isinstance(a, torch.Tensor):
            return repr(a)
        return tuple(a.shape), a.stride() if a.layout == torch.strided else None, str(a.dtype)

    return (str(op),) + tuple(part(a) for a in args)


def graph_qconv_calls(fn) -> list[tuple]:
    """Each distinct qconv call one forward of the compiled graph makes, as (op, its real arguments copied,
    how many calls have that signature), in graph order: the conv with the post-ops the graph fused into it
    (relu, the residual sum), its real scales and output dtype (u8, or f32 where the next op needs f32)."""
    import torch

    seen: dict = {}
    packets = []
    for name, overload in GRAPH_QCONV_OVERLOADS:
        packet = getattr(torch.ops.onednn, name, None)
        op = getattr(packet, overload, None) if packet is not None else None
        if op is None:
            continue

        def record(*args, _op=op, **kwargs):
            key = _call_key(_op, args) + tuple(sorted((k, repr(v)) for k, v in kwargs.items()))
            if key in seen:
                seen[key][2] += 1
            else:
                seen[key] = [_op, ([_copied(a) for a in args], dict(kwargs)), 1]
            return _op(*args, **kwargs)

        packets.append((packet, overload, op))
        setattr(packet, overload, record)
    try:
        with torch.no_grad():
            fn()
    finally:
        for packet, overload, op in packets:
            setattr(packet, overload, op)
    return [tuple(v) for v in seen.values()]


def graph_table_ms(fn, budget_ms: float, min_samples: int, cancel) -> tuple[float | None, int, str]:
    """(the graph's qconv calls replayed alone, each distinct call's median times its count; how many calls;
    why not) -- the per-layer int8 table on the very calls the compiled graph makes."""
    from explorer.core.measure.harness import Budget, measure

    calls = graph_qconv_calls(fn)
    if not calls:
        return None, 0, "no qconv call was seen in the compiled graph (its code does not call the ops by name)"
    total, n = 0.0, 0
    for op, (args, kwargs), count in calls:
        if cancel():
            return None, n, "stopped"
        m = measure(lambda op=op, args=args, kwargs=kwargs: op(*args, **kwargs), Budget(budget_ms, min_samples),
                    cancel)
        total += count * m.median_ms
        n += count
    return total, n, ""


def layer_table_ms(inv, budget_ms: float, min_samples: int, cancel) -> tuple[float | None, str]:
    """The per-layer int8 table summed over the model: each distinct layer's qconv median times its count.
    (None, why) when a layer cannot be timed that way."""
    from explorer.core.measure.harness import Budget, measure

    total = 0.0
    for lay in inv.layers:
        if cancel():
            return None, "stopped"
        if lay.spec is None:
            return None, f"layer {lay.name} has no int8 time ({lay.error})"
        try:
            fn = layer_int8_fn(lay.spec)
            m = measure(fn, Budget(budget_ms, min_samples), cancel)
        except Exception as e:  # noqa: BLE001 - no prediction; the measured figure stands
            from explorer.core.paths.base import one_line

            return None, f"layer {lay.name} has no int8 time ({type(e).__name__}: {one_line(e)})"
        total += lay.count * m.median_ms
    return total, ""
