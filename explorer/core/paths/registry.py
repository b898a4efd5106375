"""Every path a run accepts, by name: the six eager paths and today's routes to oneDNN."""

from __future__ import annotations

import dataclasses

import torch

from explorer.core.paths.backward import prepare_backward
from explorer.core.paths.base import (
    INT8_PATHS,
    PATHS,
    ROUTES,
    TAG_PATHS,
    PathUnsupported,
    PreparedPath,
    Tensors,
    one_line,
)
from explorer.core.paths.eager import prepare_eager
from explorer.core.paths.post_ops import eager_call, ops_of
from explorer.core.paths.routes import prepare_route


def prepare(name: str, t: Tensors) -> PreparedPath:
    """Build path `name` for the problem in `t`. Raises PathUnsupported (or torch's error) if it cannot.
    A backward direction (BWD_D, BWD_W, BWD_WB) times that path's backward instead of its forward."""
    if name in INT8_PATHS:
        from explorer.core.paths.int8 import prepare_int8

        return prepare_int8(name, t)
    if t.spec.is_int8:
        from explorer.core.paths.int8 import float_path_refusal

        raise float_path_refusal(name, t.spec.dtype)
    tag = t.spec.io_tag
    if tag and name in ALL_NAMES and name not in TAG_PATHS[tag]:  # the line asked for a layout this path cannot take
        word = "channels_last" if tag == "axb" else "plain NCHW"
        raise PathUnsupported(f"--stag/--dtag={tag}: {name} takes no {word} input; only "
                              f"{', '.join(TAG_PATHS[tag])} do, so it is not timed")
    if t.spec.backward:
        return prepare_backward(name, t)
    if name in ROUTES:
        return prepare_route(name, t)  # the routes fuse the post-ops themselves
    if name not in PATHS:
        raise ValueError(f"unknown path {name!r}")
    prep = prepare_eager(name, t)
    return _with_post_ops(prep, t) if t.spec.post_ops else prep


ALL_NAMES = PATHS + ROUTES


def _with_post_ops(prep: PreparedPath, t: Tensors) -> PreparedPath:
    """The eager path with its post-ops after the conv, in the layout its output has (an MKLDNN output
    adds an MKLDNN residual, a channels_last one a channels_last residual)."""
    ops = ops_of(t.spec.post_ops)
    with torch.no_grad(), prep.context():
        y = prep.fn()
        residual = t.residual
        if residual is not None:
            residual = residual.to_mkldnn() if y.layout == torch._mkldnn else residual.contiguous(
                memory_format=torch.channels_last if y.dim() == 4 and y.is_contiguous(
                    memory_format=torch.channels_last) and not y.is_contiguous() else torch.contiguous_format)
        fn = eager_call(prep.fn, ops, residual)
        try:
            fn()  # an op torch has no kernel for in this layout (gelu on an MKLDNN tensor) says so here
        except (RuntimeError, NotImplementedError) as exc:
            raise PathUnsupported(f"{t.spec.post_ops} after the conv: {one_line(exc)}") from None
    note = (prep.note + "; " if prep.note else "") + f"then {t.spec.post_ops} as PyTorch ops (not fused)"
    return dataclasses.replace(prep, fn=fn, keep=list(prep.keep) + [residual], note=note)
