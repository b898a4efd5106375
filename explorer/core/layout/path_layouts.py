"""What one path really does in memory: the stored layout of its input, weight and output, the layouts
the convolution kernel actually used (from the oneDNN trace), and the primitives it ran.

"Stored" comes from the tensor itself (the MKLDNN memory descriptor, or the strides of a dense tensor);
"kernel" comes from the trace's convolution line, because oneDNN may reorder a stored tensor again
before the kernel runs (the MKLDNN module's prepacked weight is one such case).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import torch

from explorer.core.errors import InputError
from explorer.core.layout.descriptors import stored_nbytes, tensor_layout
from explorer.core.layout.tags import DTYPE_SIZES, Layout, layout_from_tag, parse_tag
from explorer.core.paths.base import ALL_PATHS, PreparedPath, Tensors
from explorer.core.paths.registry import prepare
from explorer.core.problem.spec import ConvSpec

ROLES = ("input", "weight", "output")
_KIND = {"input": "data", "weight": "weight", "output": "data"}
_TRACE_ARG = {"input": "src", "weight": "wei", "output": "dst"}


@dataclass
class TensorLayout:
    """One tensor of one path: its logical shape and how it is stored, and what the kernel used."""

    role: str
    shape: tuple[int, ...]
    dtype: str
    stored: Layout | None
    source: str  # "descriptor" | "strides"
    unknown_reason: str | None
    stored_bytes: int
    kernel: Layout | None = None  # the layout the convolution kernel read/wrote (from the trace)
    kernel_tag: str | None = None

    @property
    def logical_bytes(self) -> int:
        return math.prod(self.shape) * DTYPE_SIZES[self.dtype]

    @property
    def overhead_pct(self) -> float:
        return 100.0 * (self.stored_bytes - self.logical_bytes) / self.logical_bytes if self.logical_bytes else 0.0

    def to_dict(self) -> dict:
        d = {
            "role": self.role,
            "dims": list(self.shape),
            "dtype": self.dtype,
            "source": self.source,
            "logical_bytes": self.logical_bytes,
            "stored_bytes": self.stored_bytes,
            "overhead_pct": round(self.overhead_pct, 2),
            "unknown_reason": self.unknown_reason,
        }
        if self.stored is not None:
            s = self.stored.to_dict()
            d.update({k: s[k] for k in ("tag", "alias", "padded_dims", "strides", "inner_blks", "inner_idxs", "nbytes")})
        else:
            d.update({"tag": None, "alias": None, "padded_dims": None, "strides": None, "nbytes": None})
        d["kernel_tag"] = self.kernel_tag
        d["kernel_alias"] = self.kernel.alias if self.kernel is not None else None
        d["kernel_source"] = "trace" if self.kernel_tag else None
        return d


@dataclass
class PathInspection:
    path: str
    tensors: dict[str, TensorLayout]
    trace: list = field(default_factory=list)  # explorer.core.trace.onednn.Primitive, exec lines in order
    summary: object = None  # explorer.core.trace.onednn.TraceSummary

    def to_dict(self) -> dict:
        return {"path": self.path, "tensors": {r: t.to_dict() for r, t in self.tensors.items()}}


def _dtype_name(t: torch.Tensor) -> str:
    return {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16"}.get(t.dtype, str(t.dtype))


def kernel_layout(tag: str | None, shape: tuple[int, ...], dtype: str, groups: int, role: str) -> Layout | None:
    """The layout a trace tag describes for this tensor; grouped weights have a leading g in oneDNN
    (g, oc/g, ic/g, k...), and PyTorch runs a 1-D conv as a 2-D one (a unit h inserted before w)."""
    if not tag:
        return None
    dims = tuple(shape)
    try:
        extra = parse_tag(tag).ndims - len(dims)
    except InputError:
        return None
    grouped = False
    if role == "weight" and groups > 1 and extra >= 1:
        dims = (groups, dims[0] // groups) + dims[1:]
        extra -= 1
        grouped = True
    if extra == 1 and len(dims) >= 3:  # conv1d run as conv2d: ncw -> nc1w
        dims = dims[:-1] + (1,) + dims[-1:]
    try:
        lay = layout_from_tag(tag, dims, dtype, kind=_KIND[role])
    except InputError:
        return None
    return dataclasses.replace(lay, grouped=grouped) if role == "weight" else lay


def describe(role: str, t: torch.Tensor) -> TensorLayout:
    reading = tensor_layout(t, _KIND[role])
    lay = reading.layout
    if lay is not None and role == "weight":
        lay = dataclasses.replace(lay, grouped=False)  # a stored weight has the tensor's own (o, i, k...) dims
    return TensorLayout(
        role, tuple(t.shape), _dtype_name(t), lay, reading.source, reading.unknown_reason, stored_nbytes(t)
    )


def layouts_of(prep: PreparedPath, output: torch.Tensor, conv=None, groups: int = 1) -> dict[str, TensorLayout]:
    """Stored layouts of a prepared path's tensors, plus the kernel's layouts from a traced conv primitive."""
    tensors = {"input": prep.input_tensor, "weight": prep.weight_tensor, "output": output}
    out = {}
    for role, t in tensors.items():
        if t is None:
            continue
        tl = describe(role, t)
        if conv is not None:
            arg = conv.args.get(_TRACE_ARG[role])
            tl.kernel_tag = arg.tag if arg else None
            tl.kernel = kernel_layout(tl.kernel_tag, tl.shape, tl.dtype, groups, role)
        out[role] = tl
    return out


def last_conv(primitives) -> object | None:
    convs = [p for p in primitives if p.op == "convolution"]
    return convs[-1] if convs else None


def inspect_path(spec: ConvSpec, path: str, tensors: Tensors | None = None) -> PathInspection:
    """Prepare `path`, run it once for its output, once more traced, and describe its tensors."""
    from explorer.core.trace.onednn import run_traced

    if path not in ALL_PATHS:
        raise InputError(f"unknown path {path!r}; choose from {', '.join(ALL_PATHS)}.", "path")
    spec.validate()
    tensors = tensors or Tensors.make(spec)
    prep = prepare(path, tensors)
    out = prep.call_once()
    with torch.no_grad():
        tr = run_traced(prep.fn, context=prep.context())
    out = None if spec.backward else out  # a backward call returns its gradients: no conv output to describe
    return PathInspection(path, layouts_of(prep, out, last_conv(tr.primitives), spec.g), tr.primitives, tr.summary)
