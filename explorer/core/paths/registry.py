"""Every path a run accepts, by name: the six eager paths and today's routes to oneDNN."""

from __future__ import annotations

from explorer.core.paths.base import INT8_PATHS, PATHS, ROUTES, PreparedPath, Tensors
from explorer.core.paths.eager import prepare_eager
from explorer.core.paths.routes import prepare_route


def prepare(name: str, t: Tensors) -> PreparedPath:
    """Build path `name` for the problem in `t`. Raises PathUnsupported (or torch's error) if it cannot."""
    if name in INT8_PATHS:
        from explorer.core.paths.int8 import prepare_int8

        return prepare_int8(name, t)
    if t.spec.is_int8:
        from explorer.core.paths.int8 import float_path_refusal

        raise float_path_refusal(name, t.spec.dtype)
    if name in ROUTES:
        return prepare_route(name, t)
    if name not in PATHS:
        raise ValueError(f"unknown path {name!r}")
    return prepare_eager(name, t)
