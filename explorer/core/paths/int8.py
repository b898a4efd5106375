"""int8 convolutions on PyTorch's oneDNN int8 routes, and the quantization of the seeded problem.

Three paths: `qconv_prepacked` is what PT2E's X86InductorQuantizer lowers a conv to (torch.ops.onednn.
qconv_pointwise on weights packed once by onednn.qconv_prepack); `quantized_x86` and `quantized_onednn` are the
eager torch.ao.nn.quantized conv on those quantized engines. Scales and zero points come from the line
(--attr-scales/--attr-zero-points, benchdnn's syntax); what the line leaves out is calibrated on the seeded
data by min/max as PT2E's observers do (u8 src asymmetric, weights symmetric per output channel).
"""

from __future__ import annotations

import contextlib
import functools
import torch

from explorer.core.paths.base import INT8_PATHS, PathUnsupported, PreparedPath
from explorer.core.paths.int8_quant import QuantParams, dequantize_output, quant_params, quantize
from explorer.core.problem.int8_config import Int8Config, int8_config


def _out_dtype(dst: str):
    return {"u8": None, "s8": torch.int8, "f32": torch.float32}.get(dst, "none")


def qconv_call(xq: torch.Tensor, wq: torch.Tensor, bias: torch.Tensor | None, p: QuantParams, stride, padding,
               dilation, groups: int):
    """The prepacked int8 conv, ready to time: packs wq once for xq's shape (as inductor does at freezing) and
    returns the call. Reusable for any shapes: xq u8 (NCHW or channels_last), wq s8, bias f32."""
    if p.src_dt != "u8":
        raise PathUnsupported("onednn.qconv_pointwise takes only a u8 src (torch: 'Input tensor should have uint8 "
                              "(unsigned char) or fp8 data type').")
    out_dt = _out_dtype(p.dst_dt)
    if out_dt == "none":
        raise PathUnsupported(f"onednn.qconv_pointwise has no {p.dst_dt} output: it gives u8, s8, f32 or bf16.")
    if xq.dim() != 4:
        raise PathUnsupported("onednn.qconv_pointwise is timed here for 2-D convolutions only.")
    wzp = torch.zeros(wq.shape[0], dtype=torch.long)
    packed = torch.ops.onednn.qconv_prepack(wq, p.wei_scales, p.src_scale, p.src_zp, list(stride), list(padding),
                                            list(dilation), groups, list(xq.shape))
    xcl = xq.contiguous(memory_format=torch.channels_last)  # inductor hands the op channels-last activations
    op = torch.ops.onednn.qconv_pointwise.default
    call = functools.partial(op, xcl, p.src_scale, p.src_zp, packed, p.wei_scales, wzp, bias, list(stride),
                             list(padding), list(dilation), groups, p.dst_scale, p.dst_zp, out_dt, "none", [], "")
    return call, xcl, packed


def time_qconv(x32: torch.Tensor, w32: torch.Tensor, b32: torch.Tensor | None, cfg: Int8Config, stride, padding,
               dilation, groups: int, repeats: int = 20) -> tuple[float, torch.Tensor]:
    """Prepare and time one prepacked int8 conv on float inputs (quantized here, calibrated as quant_params
    says): (median ms of `repeats` calls after one warm-up, the dequantized output). For the planner's int8 mode."""
    import statistics
    import time

    y32 = torch.nn.functional.conv2d(x32, w32, b32, stride, padding, dilation, groups)
    p = quant_params(cfg, x32, w32, y32)
    xq = quantize(x32, p.src_scale, p.src_zp, p.src_dt)
    wq = quantize(w32, p.wei_scales, 0, "s8", axis_scales=True)
    call, _, _ = qconv_call(xq, wq, b32, p, stride, padding, dilation, groups)
    with torch.no_grad():
        out = call()
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter_ns()
            call()
            times.append((time.perf_counter_ns() - t0) / 1e6)
    return statistics.median(times), dequantize_output(out, p)


@contextlib.contextmanager
def _engine(name: str):
    old = torch.backends.quantized.engine
    torch.backends.quantized.engine = name
    try:
        yield
    finally:
        torch.backends.quantized.engine = old


def float_path_refusal(name: str, dtype: str) -> PathUnsupported:
    """Why a float path does not run an int8 problem (torch's own words for the u8 src / s8 weights pair)."""
    return PathUnsupported(f"{name} is a float conv path: F.conv2d takes no u8 src with s8 weights (torch: 'expected "
                           f"scalar type Byte but found Char') and no scales or zero points; {dtype} is timed on "
                           f"{', '.join(INT8_PATHS)}.")


def prepare_int8(name: str, t) -> PreparedPath:
    """Build int8 path `name` for the (int8) problem in `t` (a Tensors whose x32 and conv32 weight already hold
    the dequantized values, t.quant the QuantParams). Raises PathUnsupported with torch's or oneDNN's reason."""
    spec = t.spec
    cfg = int8_config(spec.dtype, spec.scales, spec.zero_points)
    if cfg is None:
        raise PathUnsupported(f"{name} is an int8 route; this problem is {spec.dtype} (give --cfg=u8s8u8 or "
                              f"--dt=u8:s8:u8).")
    if spec.ndims != 4 or spec.asymmetric:
        raise PathUnsupported(f"{name} is timed here for 2-D convolutions with symmetric padding only.")
    p: QuantParams = t.quant
    xq = quantize(t.x32, p.src_scale, p.src_zp, p.src_dt)
    wq = quantize(t.conv32.weight.detach(), p.wei_scales, 0, "s8", axis_scales=True)
    b = t.conv32.bias.detach() if t.conv32.bias is not None else None
    args = t.conv_args()
    if name == "qconv_prepacked":
        call, xcl, packed = qconv_call(xq, wq, b, p, args["stride"], args["padding"], args["dilation"], args["groups"])
        return PreparedPath(name, call, input_tensor=xcl, weight_tensor=packed, keep=[p],
                            note="onednn.qconv_prepack once, onednn.qconv_pointwise per call")
    engine = name.removeprefix("quantized_")
    if engine not in torch.backends.quantized.supported_engines:
        raise PathUnsupported(f"the {engine!r} quantized engine is not in this torch build "
                              f"({', '.join(torch.backends.quantized.supported_engines)}).")
    if p.src_dt != "u8" or p.dst_dt != "u8":
        raise PathUnsupported(f"torch.ao.nn.quantized.Conv2d runs quint8 in and quint8 out only, not "
                              f"{p.src_dt} src / {p.dst_dt} dst.")
    import torch.ao.nn.quantized as nnq

    with _engine(engine):
        m = nnq.Conv2d(spec.ic, spec.oc, spec.kernel_size, stride=args["stride"], padding=args["padding"],
                       dilation=args["dilation"], groups=spec.g, bias=b is not None)
        wzp = torch.zeros(spec.oc, dtype=torch.long)
        qw = torch._make_per_channel_quantized_tensor(wq, p.wei_scales.double(), wzp, 0)
        m.set_weight_bias(qw, b)
        m.scale, m.zero_point = p.dst_scale, p.dst_zp
        qx = torch._make_per_tensor_quantized_tensor(xq, p.src_scale, p.src_zp)
        fn = functools.partial(m.forward, qx)
    return PreparedPath(name, fn, context=functools.partial(_engine, engine), input_tensor=qx,
                        keep=[m, p], note=f"torch.backends.quantized.engine = {engine!r}")


