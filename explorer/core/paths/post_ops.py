"""benchdnn's --attr-post-ops run on every path: after the conv as PyTorch code writes them (the eager paths),
or fused the way PyTorch fuses them today (the routes).

- Eager: `y = conv(x)`, then `F.relu(y)`, `F.gelu(y)`, ..., and for `sum:s` `y.add_(residual, alpha=s)`,
  in the path's own layout (the residual is stored channels_last or as an MKLDNN tensor beside its input).
- mkldnn_prepacked: one `torch.ops.mkldnn._convolution_pointwise` call with the unary attr inductor's
  mkldnn_fusion pass gives it ("relu", "leaky_relu", "gelu" + algorithm, "sigmoid", "tanh", "swish",
  "hardtanh"), or its `.binary` overload ("add", then one unary) for `sum` (the out-of-place overload: the
  in-place `_convolution_pointwise_.binary` would change the residual on every timed call).
- jit_frozen / compiled: the conv and its post-ops as one module; freezing / inductor fuse what they can
  (the row's note says what ran).
The residual is seeded (Tensors.residual); the reference applies the same ops in f32 on PyTorch's kernels.
"""

from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F

from explorer.core.problem.post_ops import PostOp, parse_post_ops


def ops_of(post_ops: str) -> tuple[PostOp, ...]:
    return parse_post_ops(post_ops)


def has_sum(post_ops: str) -> bool:
    return any(op.kind == "sum" for op in parse_post_ops(post_ops))


def _eltwise(op: PostOp, y: torch.Tensor) -> torch.Tensor:
    k, a, b = op.kind, op.alpha, op.beta
    if k == "relu":
        return F.relu(y) if a == 0 else F.leaky_relu(y, a)
    if k == "gelu_erf":
        return F.gelu(y)
    if k == "gelu_tanh":
        return F.gelu(y, approximate="tanh")
    if k == "logistic":
        return torch.sigmoid(y)
    if k == "tanh":
        return torch.tanh(y)
    if k == "swish":
        return F.silu(y) if a == 1 else y * torch.sigmoid(a * y)
    if k == "clip":
        return F.hardtanh(y, a, b)
    if k == "elu":
        return F.elu(y, a)
    raise ValueError(f"unknown post-op kind {k!r}")


def apply_eager(y: torch.Tensor, ops: tuple[PostOp, ...], residual: torch.Tensor | None) -> torch.Tensor:
    """The ops after the conv's output y, as PyTorch code writes them (y is the conv's fresh output)."""
    for op in ops:
        if op.kind == "sum":
            y = y.add_(residual, alpha=op.alpha)  # benchdnn's dst = conv + scale * dst: `y += residual * scale`
        else:
            y = _eltwise(op, y)
    return y


def eager_call(fn, ops: tuple[PostOp, ...], residual: torch.Tensor | None):
    """The timed call of an eager path with its post-ops after the conv."""

    def call() -> torch.Tensor:
        return apply_eager(fn(), ops, residual)

    return call


# ---- mkldnn_prepacked: one fused call ----------------------------------------------------------------------
def _unary_attr(op: PostOp) -> tuple[str, list, str]:
    """(attr, scalars, algorithm) of torch.ops.mkldnn._convolution_pointwise for one eltwise, as inductor's
    mkldnn_fusion pass writes them; elu and a swish other than SiLU go through and torch says it cannot."""
    k, a, b = op.kind, op.alpha, op.beta
    return {
        "relu": ("relu", [], "") if a == 0 else ("leaky_relu", [a], ""),
        "gelu_erf": ("gelu", [], "none"),
        "gelu_tanh": ("gelu", [], "tanh"),
        "logistic": ("sigmoid", [], ""),
        "tanh": ("tanh", [], ""),
        "swish": ("swish", [], "") if a == 1 else (f"swish (alpha {a:g})", [], ""),
        "clip": ("hardtanh", [a, b], ""),
        "elu": ("elu", [a, 1.0, 1.0], ""),
    }[k]


def fused_call(x, packed, b, conv_lists: tuple, ops: tuple[PostOp, ...], residual):
    """(call, text) for the prepacked route: one _convolution_pointwise op with the chain fused. Raises
    ValueError with one sentence when the chain is not one such call."""
    padding, stride, dilation, groups = conv_lists
    pw = torch.ops.mkldnn._convolution_pointwise
    if not ops:
        return (lambda: pw.default(x, packed, b, padding, stride, dilation, groups, "none", [], ""),
                "'none', [], ''")
    if ops[0].kind != "sum":
        if len(ops) > 1:
            raise ValueError("mkldnn._convolution_pointwise fuses one eltwise (or a sum then one eltwise); "
                             f"{'+'.join(o.text() for o in ops)} is not one call")
        attr, scalars, alg = _unary_attr(ops[0])
        return (lambda: pw.default(x, packed, b, padding, stride, dilation, groups, attr, scalars, alg),
                f"{attr!r}, {scalars}, {alg!r}")
    if len(ops) > 2 or (len(ops) == 2 and ops[1].kind == "sum"):
        raise ValueError("mkldnn._convolution_pointwise.binary fuses a sum then at most one eltwise; "
                         f"{'+'.join(o.text() for o in ops)} is not one call")
    unary = _unary_attr(ops[1]) if len(ops) == 2 else (None, [None], None)
    attr, scalars, alg = unary
    scale = ops[0].alpha
    return (lambda: pw.binary(x, residual, packed, b, padding, stride, dilation, groups, "add", scale, attr, scalars,
                              alg or None),
            f"binary 'add' (alpha {scale:g}) then {attr!r}, {scalars}")


# ---- jit_frozen / compiled: one module ---------------------------------------------------------------------
class _Eltwise(torch.nn.Module):
    """One eltwise post-op as the nn module PyTorch code would use (scriptable, one signature for all)."""

    def __init__(self, mod: torch.nn.Module):
        super().__init__()
        self.mod = mod

    def forward(self, y: torch.Tensor, r: Optional[torch.Tensor]) -> torch.Tensor:
        return self.mod(y)


class _Swish(torch.nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, y: torch.Tensor) -> torch.Tensor:
        return y * torch.sigmoid(self.alpha * y)


class _Sum(torch.nn.Module):
    """benchdnn's sum: the residual add after the conv (`y + r`, `y + r * scale`)."""

    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, y: torch.Tensor, r: Optional[torch.Tensor]) -> torch.Tensor:
        assert r is not None
        if self.scale == 1.0:
            return y + r
        return y + r * self.scale


def _module_of(op: PostOp) -> torch.nn.Module:
    k, a, b = op.kind, op.alpha, op.beta
    if k == "sum":
        return _Sum(a)
    mod = {
        "relu": lambda: torch.nn.ReLU() if a == 0 else torch.nn.LeakyReLU(a),
        "gelu_erf": lambda: torch.nn.GELU(),
        "gelu_tanh": lambda: torch.nn.GELU(approximate="tanh"),
        "logistic": lambda: torch.nn.Sigmoid(),
        "tanh": lambda: torch.nn.Tanh(),
        "swish": lambda: torch.nn.SiLU() if a == 1 else _Swish(a),
        "clip": lambda: torch.nn.Hardtanh(a, b),
        "elu": lambda: torch.nn.ELU(a),
    }[k]()
    return _Eltwise(mod)


class ConvWithPostOps(torch.nn.Module):
    """A conv module then its post-ops: what a model's conv + activation (+ residual add) block is."""

    def __init__(self, conv: torch.nn.Module, ops: tuple[PostOp, ...]):
        super().__init__()
        self.conv = conv
        self.ops = torch.nn.ModuleList([_module_of(op) for op in ops])

    def forward(self, x: torch.Tensor, r: Optional[torch.Tensor] = None) -> torch.Tensor:
        y = self.conv(x)
        for op in self.ops:
            y = op(y, r)
        return y
