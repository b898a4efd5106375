"""The planner's side of the subnormal finding: measured once after the modes, kept on the mode of the model as
it is (its `finding`, so the CSV's note, the session file, the CLI and the Model tab all carry it)."""

from __future__ import annotations

from typing import Callable

from explorer.core.model.activations.denormal import measure_finding
from explorer.core.model.activations.profile import as_profile


def denormal_finding(results: list, inv, kept, forward: Callable | None, cancelled: Callable[[], bool]) -> str:
    """Time the kept calls (and the whole forward) with and without flush-denormal and put the finding's line
    on the nchw result (else the first one); "" and nothing set when no conv is fed subnormals."""
    if not kept.calls or not results:
        return ""
    target = next((r for r in results if r.mode == "nchw"), results[0])
    modules = {i: s.module for i, s in enumerate(inv.sites)}
    shares = {i: (as_profile(s.input_profile) or (0, 0, 0, 0.0))[3] for i, s in enumerate(inv.sites)}
    calls = kept.materialised()
    nchw_ok = target.mode == "nchw" and target.status == "ok"
    found = measure_finding(calls, forward if nchw_ok else None, cancelled, modules, shares)
    if found is None:
        return ""
    target.finding = found.text()
    return target.finding
