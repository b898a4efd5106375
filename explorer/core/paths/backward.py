"""The backward of one convolution (benchdnn's BWD_D, BWD_W and BWD_WB) on every path that has one.

The timed call is `torch.ops.aten.convolution_backward` alone, the op autograd's ConvolutionBackward0 calls,
on the tensors a forward would have saved (the input, the weight) and a seeded output gradient, with
benchdnn's mask: BWD_D (True, False, False), BWD_W (False, True, False), BWD_WB (False, True, True). No
forward runs inside it. Each path hands the op its own tensors, so the op dispatches as that path's training
would: dense NCHW and channels_last to oneDNN (or PyTorch's own kernels), `native` with oneDNN off,
`mkldnn_functional` with MKLDNN-layout input and gradient. What torch refuses is `unsupported` with torch's
own sentence: the to_mkldnn() module's weight is an MKLDNN tensor, which torch's backward refuses; the
prepacked op has no autograd kernel. An asymmetric-pad problem gets the input as the forward padded it
(F.pad's own backward, a slice of the gradient, is not timed).
"""

from __future__ import annotations

import contextlib
import functools
import warnings

import torch
import torch.utils.mkldnn  # noqa: F401 - not imported by `import torch`

from explorer.core.paths.base import (
    ROUTES,
    TORCH_DTYPES,
    PathUnsupported,
    PreparedPath,
    Tensors,
    native_flags,
    one_line,
    padded,
    to_dense,
)
from explorer.core.problem.conv_nd import channels_last_format

# benchdnn's direction -> convolution_backward's output_mask (grad of input, weight, bias).
OUTPUT_MASK = {"BWD_D": (True, False, False), "BWD_W": (False, True, False), "BWD_WB": (False, True, True)}
_GRAD_SEED = 1  # the output gradient's seed (the problem's own tensors use 0)

_ROUTE_WHY = {
    "jit_frozen": "torch.jit.freeze folds the weights into constants of an inference graph: the route has no "
                  "backward to time",
    "compiled": "this route is inductor's inference mode (freezing folds the weights into constants): it has no "
                "backward to time",
}


def output_mask(direction: str) -> list[bool]:
    return list(OUTPUT_MASK[direction])


def grad_output(t: Tensors) -> torch.Tensor:
    """The seeded gradient of the conv's output, rounded once to the spec's dtype (as the input is)."""
    gen = torch.Generator().manual_seed(_GRAD_SEED)
    return torch.randn(t.spec.output_shape, generator=gen).to(TORCH_DTYPES[t.spec.dtype])


def _op_args(t: Tensors) -> tuple:
    """convolution_backward's arguments after (grad_out, input, weight), the mask included."""
    s, a = t.spec, t.conv_args()
    mask = output_mask(s.direction)
    bias_sizes = [s.oc] if mask[2] else None
    return (bias_sizes, list(a["stride"]), list(a["padding"]), list(a["dilation"]), False, [0] * len(a["stride"]),
            a["groups"], mask)


def _call(go, x, w, t: Tensors):
    return functools.partial(torch.ops.aten.convolution_backward.default, go, x, w, *_op_args(t))


def prepare_backward(name: str, t: Tensors) -> PreparedPath:
    """Path `name` timing the spec's backward direction. Raises PathUnsupported with torch's reason."""
    if name in _ROUTE_WHY:
        raise PathUnsupported(_ROUTE_WHY[name])
    if name == "mkldnn_prepacked":
        raise PathUnsupported(_prepacked_reason(t))
    if name not in ("dense", "native", "channels_last", "mkldnn", "mkldnn_functional", "mkldnn_roundtrip"):
        raise ValueError(f"unknown path {name!r}")
    go, x = grad_output(t), padded(t.x, t.spec)
    if name in ("dense", "native"):
        x, w, go = x.contiguous(), t.w.contiguous(), go.contiguous()
        ctx = native_flags if name == "native" else contextlib.nullcontext
        return PreparedPath(name, _call(go, x, w, t), ctx, x, w)
    if name == "channels_last":
        fmt = channels_last_format(t.spec)
        if fmt is None:
            raise PathUnsupported("channels_last is not supported for 1-D convolutions: PyTorch has no channels-last "
                                  "memory format for 3-D tensors (torch.channels_last needs rank 4, channels_last_3d 5).")
        x, w, go = (v.contiguous(memory_format=fmt) for v in (x, t.w, go))
        return PreparedPath(name, _call(go, x, w, t), input_tensor=x, weight_tensor=w)
    if name == "mkldnn_functional":  # MKLDNN input and gradient, the dense weight, as in its forward
        xm, gom = x.to_mkldnn(), go.to_mkldnn()
        return PreparedPath(name, _call(gom, xm, t.w, t), input_tensor=xm, weight_tensor=t.w)
    # mkldnn and mkldnn_roundtrip: the to_mkldnn() module's MKLDNN weight, as their forward uses it.
    module = torch.utils.mkldnn.to_mkldnn(t.conv32, TORCH_DTYPES[t.spec.dtype])
    xm, gom = x.to_mkldnn(), go.to_mkldnn()
    try:
        _call(gom, xm, module.weight, t)()  # torch refuses an MKLDNN weight in training: its sentence
    except RuntimeError as exc:
        raise PathUnsupported(one_line(exc)) from None
    if name == "mkldnn":
        return PreparedPath(name, _call(gom, xm, module.weight, t), input_tensor=xm, weight_tensor=module.weight,
                            keep=[module])
    op_args = _op_args(t)

    def roundtrip():  # what a dense model pays: the gradient converted in, the gradients converted out
        grads = torch.ops.aten.convolution_backward.default(go.to_mkldnn(), xm, module.weight, *op_args)
        return tuple(None if g is None else to_dense(g) for g in grads)

    return PreparedPath(name, roundtrip, input_tensor=xm, weight_tensor=module.weight, keep=[module])


def _prepacked_reason(t: Tensors) -> str:
    """torch's own sentence when a backward goes through the prepacked op (it has no autograd kernel)."""
    a = t.conv_args()
    padding, stride, dilation = list(a["padding"]), list(a["stride"]), list(a["dilation"])
    x = t.x.contiguous(memory_format=torch.channels_last).requires_grad_(True)
    try:
        packed = torch.ops.mkldnn._reorder_convolution_weight(t.w, padding, stride, dilation, a["groups"],
                                                              list(x.shape))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # torch warns, then backprops through it as if it were the identity
            out = torch.ops.mkldnn._convolution_pointwise(x, packed, t.b, padding, stride, dilation, a["groups"],
                                                          "none", [], "")
            out.sum().backward()
    except (RuntimeError, UserWarning) as exc:
        return one_line(exc).split(". ")[0] + ": the prepacked route has no backward"
    return "torch.ops.mkldnn._convolution_pointwise has no backward registered here"


def reference(t: Tensors) -> tuple:
    """The gradients by PyTorch's own kernels in float32 on the same (dtype-rounded) values."""
    x32 = padded(t.x32, t.spec)
    with torch.no_grad(), native_flags():
        return torch.ops.aten.convolution_backward.default(grad_output(t).float(), x32, t.conv32.weight,
                                                           *_op_args(t))


def max_abs_err(out: tuple, ref: tuple) -> float:
    """The largest error over the gradients the mask asked for."""
    errs = [float((to_dense(g).float() - r).abs().max()) for g, r in zip(out, ref) if g is not None and r is not None]
    return max(errs) if errs else float("nan")


def grads(out: tuple) -> list[torch.Tensor]:
    """The gradients a backward call returned (the ones its mask asked for)."""
    return [g for g in out if g is not None]
