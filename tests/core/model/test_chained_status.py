"""Issue #37: a per-layer mkldnn_chained row's status comes from the kind of failure, not its message text.

Main matched the text: oneDNN's own refusal ("could not create a primitive descriptor ...", a RuntimeError
from torch's C++) was `error` because none of its words were on the list, and a Python crash in the tool
whose text happened to say "not supported" was `unsupported`."""

import pytest
import torch

from explorer.core.jobs.options import RunOptions
from explorer.core.jobs.run import RunContext
from explorer.core.model import chained
from explorer.core.paths.base import PathUnsupported
from explorer.core.problem.spec import ConvSpec

ONEDNN_REFUSAL = "could not create a primitive descriptor for a convolution forward propagation primitive"


def _row(monkeypatch, exc):
    def fail(_tensors):
        raise exc

    monkeypatch.setattr(chained, "prepare_chained", fail)
    spec = ConvSpec(mb=1, ic=4, ih=6, iw=6, oc=4, kh=3, kw=3)
    ropts = RunOptions(paths=("mkldnn",), budget_ms=3, min_samples=3, trace=False)
    return chained.measure_chained(spec, ropts, RunContext.current(), lambda: False)


@pytest.mark.parametrize(("exc", "status"), [
    (RuntimeError(ONEDNN_REFUSAL), "unsupported"),          # torch's C++ refusal, whatever its words
    (NotImplementedError("mkldnn_convolution"), "unsupported"),
    (PathUnsupported("blocked input"), "unsupported"),
    (TypeError("this layout is not supported"), "error"),   # a crash in Python code, its text notwithstanding
    (AttributeError("'NoneType' object has no attribute 'shape'"), "error"),
    (torch.OutOfMemoryError("DefaultCPUAllocator: not enough memory"), "error"),
])
def test_status_follows_the_kind_of_failure(monkeypatch, exc, status):
    res = _row(monkeypatch, exc)
    assert res.path == chained.CHAINED_PATH
    assert (res.status, res.error) == (status, str(exc))
