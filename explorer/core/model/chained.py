"""The chained MKLDNN variant: the mkldnn path on an input already in the blocked layout.

to_mkldnn(model) and jit_mkldnn's frozen graph pass each conv's blocked output on to the next conv (BN,
ReLU, adds and pools keep the layout), so only the first conv of such a model reorders a plain input, as
the per-layer table's mkldnn path does on every call. This is the per-layer time of every other conv there.
"""

from __future__ import annotations

CHAINED_PATH = "mkldnn_chained"
CHAINED_MODES = ("to_mkldnn", "jit_mkldnn")  # modes whose tensors stay MKLDNN from conv to conv
CHAINED_HELP = ("the mkldnn path on an input already in the blocked layout an MKLDNN conv writes (nChw8c on AVX2): "
                "to_mkldnn(model) and jit_mkldnn's graph pass each conv's blocked output on (BN, ReLU, adds and "
                "pools keep the layout), so only the first conv reorders its plain input, as the mkldnn path does "
                "on every call")


def prepare_chained(t):
    """The mkldnn path's module on a blocked input: x (padded as the mkldnn path pads it) through a 1x1
    identity MKLDNN conv, whose output is in the layout oneDNN's convs write. Same values, no reorder left."""
    import torch
    import torch.utils.mkldnn
    from torch import nn

    from explorer.core.paths.base import TORCH_DTYPES, PreparedPath, padded

    dt = TORCH_DTYPES[t.spec.dtype]
    module = torch.utils.mkldnn.to_mkldnn(t.conv32, dt)
    xp = padded(t.x, t.spec)
    nd, ic = xp.dim() - 2, xp.shape[1]
    ident = getattr(nn, f"Conv{nd}d")(ic, ic, 1, bias=False).eval()
    with torch.no_grad():
        ident.weight.copy_(torch.eye(ic).reshape(ic, ic, *([1] * nd)))
        ident = torch.utils.mkldnn.to_mkldnn(ident, dt)
        xb = ident(xp.to_mkldnn())
    return PreparedPath(CHAINED_PATH, lambda: module.forward(xb), input_tensor=xb, weight_tensor=module.weight,
                        keep=[module], note="input: a 1x1 identity MKLDNN conv's output (blocked)")


def chained_failure_status(exc: BaseException) -> str:
    """The row's status from the kind of failure, never from its message: torch's C++ refusals (a primitive
    oneDNN cannot create, a reorder this CPU cannot do) reach Python as RuntimeError or NotImplementedError,
    the tool's own refusals as PathUnsupported: `unsupported`. Running out of memory, or anything else (a
    Python crash such as TypeError or AttributeError, whatever its text says): `error`."""
    import torch

    from explorer.core.paths.base import PathUnsupported

    if isinstance(exc, torch.OutOfMemoryError):  # a RuntimeError too, but the machine's limit, not torch's refusal
        return "error"
    return "unsupported" if isinstance(exc, (RuntimeError, NotImplementedError, PathUnsupported)) else "error"


def measure_chained(spec, ropts, ctx, cancel):
    """One per-layer row of the chained variant, timed as the runner times a path (budget, retries while
    noisy). Returns a Result (status error/unsupported when it cannot run), or None if cancelled."""
    import torch

    from explorer.core.jobs.run import base_result, fill_stats
    from explorer.core.measure.harness import Budget, measure
    from explorer.core.measure.retry import MAX_ATTEMPTS, measure_until_trusted
    from explorer.core.paths.base import Tensors, one_line

    res = base_result(spec, CHAINED_PATH, torch.get_num_threads(), ctx, ropts, "")
    try:
        prep = prepare_chained(Tensors.make(spec))
        res.route_note = prep.note
        with torch.no_grad():
            prep.fn()  # untimed warm-up: builds the primitive

        def measure_once(_attempt):
            with torch.no_grad():
                return measure(prep.fn, Budget(ropts.budget_ms, ropts.min_samples, ropts.precision, warmup=0,
                                                    earliest_share=ropts.earliest_share), cancel)

        got = measure_until_trusted(measure_once, MAX_ATTEMPTS)
        if got is None:
            return None
        m, res.attempts = got
        fill_stats(res, m, spec, ctx)
    except Exception as exc:  # noqa: BLE001 - this row's failure: the prediction falls back to mkldnn
        res.status = chained_failure_status(exc)
        res.error = one_line(exc)
    return res
