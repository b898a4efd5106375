"""The shared types of every path: the names, the seeded problem (Tensors), a prepared path, and how
torch's refusals are told apart from failures.

Every path computes the same convolution on the same (seeded) input and weights; a path is prepared once
(explorer.core.paths.registry.prepare) and its `fn` called many times by the harness.
"""

from __future__ import annotations

import contextlib
import math
import re
import warnings
from dataclasses import dataclass, field
from typing import Callable, ContextManager

import torch
import torch.nn.functional as F
import torch.utils.mkldnn  # noqa: F401 - not imported by `import torch`

from explorer.core.paths.post_ops import apply_eager, has_sum, ops_of
from explorer.core.problem.conv_nd import conv_fn, extra_pad, module_class
from explorer.core.problem.spec import ConvSpec

PATHS = ("dense", "channels_last", "native", "mkldnn", "mkldnn_functional", "mkldnn_roundtrip")
MKLDNN_PATHS = ("mkldnn", "mkldnn_functional", "mkldnn_roundtrip")
# The routes to oneDNN a PyTorch user has today (explorer/core/paths/routes.py). Not in the default set: torch.compile
# takes seconds per spec. ALL_PATHS is every name a run accepts.
ROUTES = ("jit_frozen", "compiled", "mkldnn_prepacked")
# int8 problems (--cfg=u8s8u8) run on PyTorch's oneDNN int8 routes (explorer/core/paths/int8.py).
INT8_PATHS = ("qconv_prepacked", "quantized_x86", "quantized_onednn")
ALL_PATHS = PATHS + ROUTES + INT8_PATHS
# The paths whose timed call takes (and gives) the activations in the layout a --stag/--dtag asks for:
# axb = channels_last (NHWC), abx = plain NCHW. The MKLDNN paths' input is converted to MKLDNN once, so neither.
TAG_PATHS = {"axb": ("channels_last", "mkldnn_prepacked"),
             "abx": ("dense", "native", "mkldnn_roundtrip", "jit_frozen", "compiled")}

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
    "qconv_prepacked": "int8: torch.ops.onednn.qconv_pointwise on weights packed once by onednn.qconv_prepack, as PT2E's X86InductorQuantizer lowers a conv.",
    "quantized_x86": "int8: torch.ao.nn.quantized.Conv2d on the 'x86' quantized engine.",
    "quantized_onednn": "int8: torch.ao.nn.quantized.Conv2d on the 'onednn' quantized engine.",
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
    residual: torch.Tensor | None = None  # the seeded dst a `sum` post-op adds (output shape, spec dtype)
    quant: object = None  # int8 problems: the int8 paths' QuantParams (explorer.core.paths.int8_quant)

    @classmethod
    def make(cls, spec: ConvSpec, seed: int = 0) -> Tensors:
        gen = torch.Generator().manual_seed(seed)
        dt = TORCH_DTYPES.get(spec.dtype, torch.float32)  # int8: f32 masters, quantized by the int8 paths
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
        if spec.is_int8:
            from explorer.core.paths.int8_quant import int8_tensors

            return int8_tensors(cls(spec, x.float(), conv, x, w, b))
        # Drawn after x and the weights, so a problem's values are the same with or without post-ops.
        residual = torch.randn(spec.output_shape, generator=gen).to(dt) if has_sum(spec.post_ops) else None
        return cls(spec, x.float(), conv, x, w, b, residual)

    def conv_args(self) -> dict:
        s = self.spec
        return dict(stride=s.torch_stride, padding=s.torch_padding()[0], dilation=s.torch_dilation, groups=s.g)

    def reference(self) -> torch.Tensor:
        """PyTorch's own kernels in float32 on the same (dtype-rounded) values: the accuracy reference."""
        with torch.no_grad(), native_flags():
            out = conv_fn(self.spec)(padded(self.x32, self.spec), self.conv32.weight, self.conv32.bias,
                                     **self.conv_args())
            residual = self.residual.float() if self.residual is not None else None
            return apply_eager(out, ops_of(self.spec.post_ops), residual)


def padded(x: torch.Tensor, spec: ConvSpec) -> torch.Tensor:
    """x with the asymmetric rest of the pads applied (x itself when the conv's padding suffices)."""
    extra = extra_pad(spec)
    return x if extra is None else F.pad(x, extra)


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


def to_dense(out: torch.Tensor) -> torch.Tensor:
    return out.to_dense() if out.layout == torch._mkldnn else out
