"""One conv input's statistics, as the model really feeds it (recorded in the inventory's forward pass)."""

from __future__ import annotations

from typing import NamedTuple

# a conv whose input holds at least this share of subnormals is timed apart from a same-shape conv that holds
# none, and is named in the finding: x86 cores take a microcode assist per denormal operand (tens of cycles),
# so even a few percent of them slow a conv measurably, while 1e-4 of them is lost in the noise
SUBNORMAL_SHARE_MIN = 1e-3


class InputProfile(NamedTuple):
    """abs-max, std, and the shares of exact zeros (ReLU sparsity) and of subnormals (0 < |x| < finfo.tiny).
    A tuple, so it is hashable and a session file keeps it as a plain list (as_profile reads it back)."""

    absmax: float = 0.0
    std: float = 0.0
    zero_share: float = 0.0
    subnormal_share: float = 0.0

    @property
    def subnormal(self) -> bool:
        return self.subnormal_share >= SUBNORMAL_SHARE_MIN

    def timing_key(self) -> tuple:
        """What of the profile changes a conv's time, so what makes two same-shape layers differ: only whether
        its input is fed subnormals (scale and zeros do not change a dense f32 conv's time on oneDNN)."""
        return ("subnormal",) if self.subnormal else ()

    def text(self) -> str:
        return (f"abs-max {self.absmax:.3g}, std {self.std:.3g}, {100 * self.zero_share:.1f}% zeros, "
                f"{100 * self.subnormal_share:.1f}% subnormal")


def profile_of(t) -> InputProfile | None:
    """The profile of one dense floating tensor; None for anything else (mkldnn, integer, meta)."""
    import torch

    if not isinstance(t, torch.Tensor) or t.layout != torch.strided or not t.is_floating_point() or t.numel() == 0:
        return None
    if t.device.type == "meta":
        return None
    a = t.detach().abs().float()
    n = a.numel()
    tiny = torch.finfo(t.dtype).tiny
    zeros = int((a == 0).sum())
    sub = int(((a < tiny) & (a > 0)).sum())
    std = float(t.detach().float().std()) if n > 1 else 0.0
    return InputProfile(float(a.max()), std, zeros / n, sub / n)


def as_profile(v) -> InputProfile | None:
    """A site's or layer's input_profile field (an InputProfile, a tuple read back from a session, or ())."""
    if isinstance(v, InputProfile):
        return v
    try:
        return InputProfile(*(float(x) for x in v)) if v and len(v) == 4 else None
    except (TypeError, ValueError):
        return None
