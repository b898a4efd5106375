"""The six eager paths of one convolution (dense, channels_last, native and the three MKLDNN ones).

Set-up that a real model pays once (module conversion, input conversion for the pure MKLDNN paths)
happens here, outside the timed call; what a model pays per call (the round trip's conversions) is inside it.
"""

from __future__ import annotations

import contextlib
import functools

import torch
import torch.nn.functional as F
import torch.utils.mkldnn  # noqa: F401 - not imported by `import torch`

from explorer.core.paths.base import PATHS, TORCH_DTYPES, PathUnsupported, PreparedPath, Tensors, native_flags, padded
from explorer.core.problem.conv_nd import channels_last_format, conv_fn, extra_pad
from explorer.core.problem.spec import ConvSpec


def _dense_call(x, w, b, spec: ConvSpec, args: dict):
    """The dense timed call: the conv, or F.pad plus the conv when the pads are asymmetric."""
    conv, extra = conv_fn(spec), extra_pad(spec)
    if extra is None:
        return functools.partial(conv, x, w, b, **args)
    return lambda: conv(F.pad(x, extra), w, b, **args)


def prepare_eager(name: str, t: Tensors) -> PreparedPath:
    """Build eager path `name` for the problem in `t`. Raises PathUnsupported (or torch's error) if it cannot."""
    if name not in PATHS:
        raise ValueError(f"unknown path {name!r}")
    args = t.conv_args()
    dt = TORCH_DTYPES[t.spec.dtype]
    if name in ("dense", "native"):
        x, w = t.x.contiguous(), t.w.contiguous()
        fn = _dense_call(x, w, t.b, t.spec, args)
        ctx = native_flags if name == "native" else contextlib.nullcontext
        return PreparedPath(name, fn, ctx, x, w)
    if name == "channels_last":
        fmt = channels_last_format(t.spec)
        if fmt is None:
            raise PathUnsupported("channels_last is not supported for 1-D convolutions: PyTorch has no channels-last "
                                  "memory format for 3-D tensors (torch.channels_last needs rank 4, channels_last_3d 5).")
        x = t.x.contiguous(memory_format=fmt)
        w = t.w.contiguous(memory_format=fmt)
        return PreparedPath(name, _dense_call(x, w, t.b, t.spec, args), input_tensor=x, weight_tensor=w)
    # MKLDNN tensors take no F.pad: an asymmetric problem converts an input padded once (the equivalent
    # of padding in the model before the MKLDNN region); the round trip pads on every call.
    if name == "mkldnn_functional":
        xm = padded(t.x, t.spec).to_mkldnn()
        return PreparedPath(name, functools.partial(conv_fn(t.spec), xm, t.w, t.b, **args), input_tensor=xm,
                            weight_tensor=t.w)
    # mkldnn and mkldnn_roundtrip share the converted module (weights reordered once, at conversion).
    module = torch.utils.mkldnn.to_mkldnn(t.conv32, dt)
    # Bound forward, not module(): skips nn.Module hook dispatch, as F.conv2d does on the dense side.
    forward = module.forward
    if name == "mkldnn":
        xm = padded(t.x, t.spec).to_mkldnn()
        return PreparedPath(name, functools.partial(forward, xm), input_tensor=xm, weight_tensor=module.weight, keep=[module])
    x = t.x.contiguous()
    extra = extra_pad(t.spec)

    def roundtrip() -> torch.Tensor:
        return forward(x.to_mkldnn()).to_dense()

    def padded_roundtrip() -> torch.Tensor:
        return forward(F.pad(x, extra).to_mkldnn()).to_dense()

    if extra is not None:
        return PreparedPath(name, padded_roundtrip, input_tensor=x, weight_tensor=module.weight, keep=[module])

    return PreparedPath(name, roundtrip, input_tensor=x, weight_tensor=module.weight, keep=[module])


def prepare_dense_strided(t: Tensors, strides: tuple) -> PreparedPath:
    """The dense path on an input laid out with `strides`, as a model can hand it over (a transposed view):
    torch copies such an input to a layout its kernel takes inside the call, and that copy is timed with it.
    (SegFormer's depthwise 3x3 on a (1, 128, 56, 56) view of strides (128, 1, 7168, 128): 2.2 ms against 0.63
    contiguous on an AVX2 EPYC; torch does not take that view as channels-last, its batch stride being 128.)"""
    x = torch.empty_strided(tuple(t.x.shape), tuple(strides), dtype=t.x.dtype)
    x.copy_(t.x)
    w = t.w.contiguous()
    return PreparedPath("dense", _dense_call(x, w, t.b, t.spec, t.conv_args()), input_tensor=x, weight_tensor=w)
