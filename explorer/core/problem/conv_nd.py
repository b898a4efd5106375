"""1-D, 2-D and 3-D convolutions in PyTorch, and the F.pad that benchdnn's asymmetric pads need.

PyTorch's conv padding is symmetric per dim. A benchdnn problem whose right pad differs from its left
one (a given output size, TensorFlow-style "same" padding with stride 2) is what a PyTorch model writes
as F.pad (nn.ZeroPad2d) before the conv: `ConvSpec.torch_padding()` splits the pads into the conv's own
symmetric part and the F.pad rest (negative values crop input rows the kernel never reads).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from explorer.core.problem.spec import ConvSpec

MODULES = {3: torch.nn.Conv1d, 4: torch.nn.Conv2d, 5: torch.nn.Conv3d}
FUNCTIONS = {3: F.conv1d, 4: F.conv2d, 5: F.conv3d}
CHANNELS_LAST = {4: torch.channels_last, 5: torch.channels_last_3d}
FN_NAME = {3: "F.conv1d", 4: "F.conv2d", 5: "F.conv3d"}


def module_class(spec: ConvSpec):
    return MODULES[spec.ndims]


def conv_fn(spec: ConvSpec):
    return FUNCTIONS[spec.ndims]


def channels_last_format(spec: ConvSpec):
    """torch.channels_last (2-D) or channels_last_3d (3-D); None for 1-D, which has no such format."""
    return CHANNELS_LAST.get(spec.ndims)


def extra_pad(spec: ConvSpec) -> tuple[int, ...] | None:
    """The F.pad argument this problem needs before the conv, or None when the conv's padding suffices."""
    conv_pad, extra = spec.torch_padding()
    return extra if any(extra) else None


def pad_note(spec: ConvSpec) -> str:
    """One sentence on how the asymmetric pads are run ('' for symmetric problems)."""
    extra = extra_pad(spec)
    if extra is None:
        return ""
    return (f"asymmetric pads: dense paths time F.pad(x, {list(extra)}) plus the conv (padding "
            f"{list(spec.torch_padding()[0])}); MKLDNN paths convert an input padded once (mkldnn_roundtrip: "
            f"pads on every call).")
