"""Every path a run accepts, by name: the six eager paths and today's routes to oneDNN."""

from __future__ import annotations

from explorer.core.paths.backward import prepare_backward
from explorer.core.paths.base import PATHS, ROUTES, PreparedPath, Tensors
from explorer.core.paths.eager import prepare_eager
from explorer.core.paths.routes import prepare_route


def prepare(name: str, t: Tensors) -> PreparedPath:
    """Build path `name` for the problem in `t`. Raises PathUnsupported (or torch's error) if it cannot.
    A backward direction (BWD_D, BWD_W, BWD_WB) times that path's backward instead of its forward."""
    if t.spec.backward:
        return prepare_backward(name, t)
    if name in ROUTES:
        return prepare_route(name, t)
    if name not in PATHS:
        raise ValueError(f"unknown path {name!r}")
    return prepare_eager(name, t)
