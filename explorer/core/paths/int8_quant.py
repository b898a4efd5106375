"""The quantization of the seeded problem for the int8 paths: scales and zero points (the line's, the rest
calibrated by min/max as PT2E's observers do), quantize/dequantize in PyTorch's affine scheme.

Kept apart from explorer.core.paths.int8 so the seeded problem (paths/base.py Tensors) can be made int8 without
importing the paths that use it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from explorer.core.problem.int8_config import Int8Config, int8_config

_QRANGE = {"u8": (0, 255), "s8": (-128, 127)}


@dataclass(frozen=True)
class QuantParams:
    """The numbers one quantized conv runs with (PyTorch's affine scheme: real = (q - zp) * scale)."""

    src_dt: str
    dst_dt: str
    src_scale: float
    src_zp: int
    wei_scales: torch.Tensor  # one per output channel (a common scale repeated)
    dst_scale: float  # 1.0 for an f32 dst (oneDNN's rule for a float output)
    dst_zp: int


def _calibrated(t: torch.Tensor, dt: str) -> tuple[float, int]:
    """min/max scale and zero point that make t fit dt (PT2E's MinMaxObserver: u8 asymmetric, s8 symmetric)."""
    lo_q, hi_q = _QRANGE[dt]
    if dt == "s8":
        return max(float(t.abs().max()), 1e-8) / 127.0, 0
    lo, hi = min(float(t.min()), 0.0), max(float(t.max()), 0.0)
    scale = max(hi - lo, 1e-8) / (hi_q - lo_q)
    return scale, int(min(hi_q, max(lo_q, round(lo_q - lo / scale))))


def quant_params(cfg: Int8Config, x32: torch.Tensor, w32: torch.Tensor, y32: torch.Tensor | None) -> QuantParams:
    """The line's scales and zero points, the rest calibrated on x32, w32 and the f32 output y32."""
    src_scale, src_zp = _calibrated(x32, cfg.src) if cfg.scale("src") is None else (cfg.scale("src"), 0)
    src_zp = cfg.zero_point("src", src_zp)
    oc = w32.shape[0]
    if cfg.scale("wei") is None:  # per_oc (benchdnn's mask 1 for weights) or absent: one scale per output channel
        wei = w32.reshape(oc, -1).abs().amax(dim=1).clamp_min(1e-8) / 127.0
    else:
        wei = torch.full((oc,), float(cfg.scale("wei")))
    if cfg.dst in _QRANGE:
        dst_scale, dst_zp = _calibrated(y32, cfg.dst) if cfg.scale("dst") is None else (cfg.scale("dst"), 0)
        dst_zp = cfg.zero_point("dst", dst_zp)
    else:
        dst_scale, dst_zp = 1.0, 0
    return QuantParams(cfg.src, cfg.dst, float(src_scale), int(src_zp), wei.float(), float(dst_scale), int(dst_zp))


def quantize(t: torch.Tensor, scale, zp, dt: str, axis_scales: bool = False) -> torch.Tensor:
    """t as integers of dt (round to nearest, saturate); scale is a float or, with axis_scales, one per dim 0."""
    lo, hi = _QRANGE[dt]
    s = scale.reshape(-1, *([1] * (t.dim() - 1))) if axis_scales else scale
    q = torch.clamp(torch.round(t / s) + zp, lo, hi)
    return q.to(torch.uint8 if dt == "u8" else torch.int8)


def dequantize(q: torch.Tensor, scale, zp, axis_scales: bool = False) -> torch.Tensor:
    s = scale.reshape(-1, *([1] * (q.dim() - 1))) if axis_scales else scale
    return (q.float() - zp) * s


def dequantize_output(out: torch.Tensor, p: QuantParams) -> torch.Tensor:
    """The conv's output in real numbers (a float dst is already real)."""
    if out.is_quantized:
        return out.dequantize()
    return out.float() if out.is_floating_point() else (out.float() - p.dst_zp) * p.dst_scale


def int8_tensors(t):
    """The seeded problem `t` (a Tensors) made int8: its scales and zero points fixed (the line's, the rest
    calibrated), and x32/x and the weights replaced by their dequantized values, so the f32 reference
    (Tensors.reference) is the f32 conv on the dequantized inputs and weights."""
    spec = t.spec
    cfg = int8_config(spec.dtype, spec.scales, spec.zero_points)
    w32 = t.conv32.weight.detach()
    with torch.no_grad():
        y32 = t.reference()
    p = quant_params(cfg, t.x32, w32, y32)
    x_dq = dequantize(quantize(t.x32, p.src_scale, p.src_zp, p.src_dt), p.src_scale, p.src_zp)
    w_dq = dequantize(quantize(w32, p.wei_scales, 0, "s8", axis_scales=True), p.wei_scales, 0, axis_scales=True)
    with torch.no_grad():
        t.conv32.weight.copy_(w_dq)
    t.x32, t.x, t.w, t.quant = x_dq, x_dq, w_dq, p
    return t
