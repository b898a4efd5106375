"""benchdnn's --attr-post-ops as this tool honours it: parsed, refused by name, and written back canonically.

Syntax (oneDNN tests/benchdnn/doc/knobs_attr.md): `POST-OP[+POST-OP...]`, an eltwise `KIND[:ALPHA[:BETA]]`
and the accumulation `sum[:SCALE[:ZERO_POINT[:DATA_TYPE]]]` (dst = conv + SCALE * dst, the residual add).
Honoured: the eltwise kinds PyTorch code writes after a conv, and sum. Refused by name: binary post-ops with
a second tensor (add:f32, mul:...), prelu, the fused depthwise `dw`, and eltwise kinds not listed here.
Torch-free: the paths (explorer.core.paths.post_ops) run what this parses.
"""

from __future__ import annotations

from dataclasses import dataclass

# benchdnn kind (and the PyTorch names users also write) -> the canonical name a row shows.
ELTWISE_KINDS = {
    "relu": "relu", "gelu_erf": "gelu_erf", "gelu_tanh": "gelu_tanh", "logistic": "logistic",
    "sigmoid": "logistic", "tanh": "tanh", "swish": "swish", "silu": "swish", "clip": "clip", "hardtanh": "clip",
    "elu": "elu",
}
_NEEDS = {"clip": 2, "swish": 1}  # parameters that have no neutral default (clip's bounds, swish's alpha)
_TAKES = {"relu": 1, "elu": 1, "swish": 1, "clip": 2}  # how many of ALPHA, BETA each kind reads
_BINARY = ("add", "sub", "mul", "div", "max", "min", "eq", "ge", "gt", "le", "lt", "ne", "select")


@dataclass(frozen=True)
class PostOp:
    """One post-op: an eltwise `kind` with alpha/beta, or `sum` with its scale."""

    kind: str  # canonical: relu, gelu_erf, gelu_tanh, logistic, tanh, swish, clip, elu or sum
    alpha: float = 0.0  # relu: negative slope; elu/swish: alpha; clip: lower bound; sum: the scale
    beta: float = 0.0  # clip: upper bound

    def text(self) -> str:
        if self.kind == "sum":
            return "sum" if self.alpha == 1.0 else f"sum:{_num(self.alpha)}"
        args = [self.alpha, self.beta][: _TAKES.get(self.kind, 0)]
        while args and args[-1] == 0.0 and self.kind not in _NEEDS:
            args.pop()
        return ":".join([self.kind] + [_num(a) for a in args])


class PostOpsError(ValueError):
    """A post-op this tool does not run; str() is one sentence naming it."""


def _num(v: float) -> str:
    return str(int(v)) if v == int(v) and abs(v) < 1e15 else repr(v)


def _float(part: str, op: str) -> float:
    try:
        v = float(part)
    except ValueError:
        raise PostOpsError(f"post-op {op!r}: {part!r} is not a number") from None
    if v != v or v in (float("inf"), float("-inf")):
        raise PostOpsError(f"post-op {op!r}: {part!r} is not a finite number")
    return v


def _one(op: str) -> PostOp:
    kind, *params = op.split(":")
    kind = kind.lower()
    if kind == "sum":
        scale = _float(params[0], op) if params and params[0] != "" else 1.0
        if len(params) > 1 and params[1] not in ("", "0"):
            raise PostOpsError(f"post-op {op!r}: a sum zero point is an int8 setting; only a scale is honoured")
        if len(params) > 2 and params[2].lower() not in ("", "undef"):
            raise PostOpsError(f"post-op {op!r}: the sum's own data type is not set on PyTorch's add")
        if len(params) > 3:
            raise PostOpsError(f"post-op {op!r}: sum takes at most SCALE:ZERO_POINT:DATA_TYPE")
        return PostOp("sum", scale)
    if kind in _BINARY:
        raise PostOpsError(f"post-op {op!r}: a binary post-op with a second tensor is not timed (only `sum`, the "
                           f"residual add, is)")
    if kind == "prelu":
        raise PostOpsError(f"post-op {op!r}: prelu with a weights tensor is not timed")
    if kind == "dw":
        raise PostOpsError(f"post-op {op!r}: a fused depthwise conv is a second conv, not timed here")
    canon = ELTWISE_KINDS.get(kind.removesuffix("_dst"))
    if canon is None or kind.endswith("_dst"):
        raise PostOpsError(f"post-op {op!r}: eltwise kind {kind!r} is not one this tool runs (relu, gelu_erf, "
                           f"gelu_tanh, logistic/sigmoid, tanh, swish/silu, clip/hardtanh, elu)")
    takes = _TAKES.get(canon, 0)
    given = [p for p in params]
    if kind == "silu" and not given:
        given = ["1"]
    if len(given) > max(takes, 0) and any(p not in ("", "0") for p in given[takes:]):
        raise PostOpsError(f"post-op {op!r}: {kind} takes {takes or 'no'} parameter{'s' if takes != 1 else ''}; "
                           f"the rest would change nothing timed")
    vals = [_float(p, op) if p != "" else 0.0 for p in given[:takes]]
    if len(vals) < _NEEDS.get(canon, 0):
        need = "ALPHA:BETA (the lower and upper bound)" if canon == "clip" else "ALPHA (swish:1 is SiLU)"
        raise PostOpsError(f"post-op {op!r}: {kind} needs {need}")
    vals += [0.0] * (2 - len(vals))
    return PostOp(canon, vals[0], vals[1])


def parse_post_ops(value: str) -> tuple[PostOp, ...]:
    """The chain of a --attr-post-ops value ('' is none). Raises PostOpsError naming the op it refuses."""
    value = value.strip()
    if value == "":
        return ()
    parts = value.split("+")
    if any(p == "" for p in parts):
        raise PostOpsError(f"post-ops {value!r}: an empty post-op between `+` signs")
    return tuple(_one(p) for p in parts)


def canonical(value: str) -> str:
    """The value as a row shows it (`sum+relu`, `sum:0.5`, `clip:0:6`); '' for none."""
    return "+".join(op.text() for op in parse_post_ops(value))


def refusal(value: str) -> str:
    """'' when every post-op is honoured, else the reason (without the word itself)."""
    try:
        parse_post_ops(value)
    except PostOpsError as e:
        return str(e)
    return ""
