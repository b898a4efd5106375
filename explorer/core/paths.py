"""The six execution paths of one convolution, prepared once and called many times by the harness.

Every path computes the same convolution on the same (seeded) input and weights. Set-up that a real model
pays once (module conversion, input conversion for the pure MKLDNN paths) happens in `prepare`, outside
the timed call; what a model pays per call (the round trip's conversions) is inside it.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
import warnings
from dataclasses import dataclass, field
from typing import Callable, ContextManager

import torch
import torch.nn.functional as F
import torch.utils.mkldnn  # noqa: F401 - not imported by `import torch`

from explorer.core.conv_nd import channels_last_format, conv_fn, extra_pad, module_class
from explorer.core.spec import ConvSpec

PATHS = ("dense", "channels_last", "native", "mkldnn", "mkldnn_functional", "mkldnn_roundtrip")
MKLDNN_PATHS = ("mkldnn", "mkldnn_functional", "mkldnn_roundtrip")
# The routes to oneDNN a PyTorch user has today (explorer/core/routes.py). Not in the default set: torch.compile
# takes seconds per spec. ALL_PATHS is every name a run accepts.
ROUTES = ("jit_frozen", "compiled", "mkldnn_prepacked")
ALL_PATHS = PATHS + ROUTES

PATH_HELP = {
    "dense": "F.conv2d on contiguous NCHW tensors with default dispatch (on x86 this usually calls oneDNN inside).",
    "channels_last": "F.conv2d with input and weight in torch.channels_last (NHWC) memory format.",
    "native": "F.conv2d with oneDNN switched off: PyTorch's own kernels, the true non-oneDNN baseline.",
    "mkldnn": "A module converted once by torch.utils.mkldnn.to_mkldnn on an input converted once: the conv alone.",
    "mkldnn_functional": "F.conv2d on an input converted once to MKLDNN, with the dense weight.",
    "mkldnn_roundtrip": "Per call: x.to_mkldnn(), the MKLDNN conv, .to_dense(): what a dense model pays for one op.",
    "jit_frozen": "A one-conv module through torch.jit.freeze + torch.jit.optimize_for_inference (TorchScript's MKLDNN conversion).",
    "compiled": "torch.compile (inductor, CPU) with freezing on: compiled once, the compiled call timed.",
    "mkldnn_prepacked": "torch.ops.mkldnn._convolution_pointwise on a weight packed once for the real input shape, as inductor calls it.",
}

TORCH_DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}

# torch's messages for a path it cannot run with these settings (as opposed to a failure).
_UNSUPPORTED = re.compile(
    r"should be the same|not implemented|not supported|unsupported|doesn't support|does not support|"
    r"needs the cpu support|only supports|is not available|expected .* type",
    re.IGNORECASE,
)


class PathUnsupported(Exception):
    """torch refuses this path for this spec; str() is torch's own one-line reason."""


def one_line(exc: BaseException) -> str:
    """torch's reason on one line: the first non-empty line of the message."""
    text = str(exc).strip() or type(exc).__name__
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if lines and lines[0].startswith("The following operation failed in the TorchScript interpreter"):
        return lines[-1].removeprefix("RuntimeError: ")  # MkldnnConv1d is scripted: its real reason comes last
    return lines[0] if lines else text


def is_unsupported(exc: BaseException) -> bool:
    return isinstance(exc, (NotImplementedError, PathUnsupported)) or bool(_UNSUPPORTED.search(str(exc)))


# This build prints a TF32 UserWarning on every torch.backends.mkldnn.flags() entry and exit.
warnings.filterwarnings("ignore", message=r".*TF32 acceleration on top of oneDNN.*")


def native_flags() -> ContextManager:
    """oneDNN off: convolutions fall back to PyTorch's own kernels."""
    return torch.backends.mkldnn.flags(enabled=False)


@dataclass
class Tensors:
    """The seeded problem shared by every path: f32 master copies and their spec-dtype versions."""

    spec: ConvSpec
    x32: torch.Tensor
    conv32: torch.nn.Conv2d
    x: torch.Tensor
    w: torch.Tensor
    b: torch.Tensor | None

    @classmethod
    def make(cls, spec: ConvSpec, seed: int = 0) -> Tensors:
        gen = torch.Generator().manual_seed(seed)
        dt = TORCH_DTYPES[spec.dtype]
        conv = module_class(spec)(  # Conv1d/2d/3d; asymmetric pads: the symmetric part here, F.pad the rest
            spec.ic, spec.oc, spec.kernel_size, stride=spec.torch_stride, padding=spec.torch_padding()[0],
            dilation=spec.torch_dilation, groups=spec.g, bias=spec.bias,
        )
        with torch.no_grad():
            bound = 1.0 / max(1, (spec.ic // spec.g) * math.prod(spec.kernel_size)) ** 0.5
            conv.weight.uniform_(-bound, bound, generator=gen)
            if conv.bias is not None:
                conv.bias.uniform_(-bound, bound, generator=gen)
        conv.requires_grad_(False).eval()
        x32 = torch.randn(spec.input_shape, generator=gen)
        # Round once to the spec's dtype so every path (and the f32 reference) sees identical values.
        x = x32.to(dt)
        w = conv.weight.detach().to(dt)
        b = conv.bias.detach().to(dt) if conv.bias is not None else None
        with torch.no_grad():
            conv.weight.copy_(w.float())
            if conv.bias is not None:
                conv.bias.copy_(b.float())
        return cls(spec, x.float(), conv, x, w, b)

    def conv_args(self) -> dict:
        s = self.spec
        return dict(stride=s.torch_stride, padding=s.torch_padding()[0], dilation=s.torch_dilation, groups=s.g)

    def reference(self) -> torch.Tensor:
        """PyTorch's own kernels in float32 on the same (dtype-rounded) values: the accuracy reference."""
        with torch.no_grad(), native_flags():
            return conv_fn(self.spec)(_padded(self.x32, self.spec), self.conv32.weight, self.conv32.bias,
                                      **self.conv_args())


def _padded(x: torch.Tensor, spec: ConvSpec) -> torch.Tensor:
    """x with the asymmetric rest of the pads applied (x itself when the conv's padding suffices)."""
    extra = extra_pad(spec)
    return x if extra is None else F.pad(x, extra)


def _dense_call(x, w, b, spec: ConvSpec, args: dict):
    """The dense timed call: the conv, or F.pad plus the conv when the pads are asymmetric."""
    conv, extra = conv_fn(spec), extra_pad(spec)
    if extra is None:
        return functools.partial(conv, x, w, b, **args)
    return lambda: conv(F.pad(x, extra), w, b, **args)


@dataclass
class PreparedPath:
    """A ready-to-time path. `fn()` is the timed call; `context()` is entered once around the whole loop."""

    name: str
    fn: Callable[[], torch.Tensor]
    context: Callable[[], ContextManager] = contextlib.nullcontext
    input_tensor: torch.Tensor | None = None  # as this path holds its input between calls
    weight_tensor: torch.Tensor | None = None  # as this path holds its weight
    keep: list = field(default_factory=list)  # objects that must outlive fn (modules)
    compile_ms: float | None = None  # one-off conversion/compile time (routes), outside the timed call
    note: str = ""  # what the route inserted or called (routes), shown with the trace

    def call_once(self) -> torch.Tensor:
        with torch.no_grad(), self.context():
            return self.fn()


def prepare(name: str, t: Tensors) -> PreparedPath:
    """Build path `name` for the problem in `t`. Raises PathUnsupported (or torch's error) if it cannot."""
    if name in ROUTES:
        from explorer.core.routes import prepare_route

        return prepare_route(name, t)
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
        xm = _padded(t.x, t.spec).to_mkldnn()
        return PreparedPath(name, functools.partial(conv_fn(t.spec), xm, t.w, t.b, **args), input_tensor=xm,
                            weight_tensor=t.w)
    # mkldnn and mkldnn_roundtrip share the converted module (weights reordered once, at conversion).
    module = torch.utils.mkldnn.to_mkldnn(t.conv32, dt)
    # Bound forward, not module(): skips nn.Module hook dispatch, as F.conv2d does on the dense side.
    forward = module.forward
    if name == "mkldnn":
        xm = _padded(t.x, t.spec).to_mkldnn()
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


def to_dense(out: torch.Tensor) -> torch.Tensor:
    return out.to_dense() if out.layout == torch._mkldnn else out
