"""The convs timed as the model calls them: in model order, each conv site once per pass, on its own tensors.

The per-layer table times each distinct conv alone, back to back on one input: its weights, input and
output stay in the caches from call to call, as in benchdnn. Inside a forward every other layer runs in
between and evicts them. Measured side by side in one process (BENCHMARKS §8c, bench_model_order.py, 2
threads, median of paired rounds), the sum of the table's convs was 0.71-0.92 of the same convs timed
inside the model (MobileNetV2 mb1, ResNet-50 mb1), while the same convs run once each in model order gave
0.95-1.13 of it (the frozen jit graph's own convs read 1.2-1.4x, their inputs cold: model_jit). So the
planner predicts a mode's conv time from that sequence: every conv site of the inventory, in the order the
forward calls them, each with tensors of its own (a model's repeated layers have their own weights and
inputs), on the mode's path. It is timed in rounds with the mode's forward (time_sequence), so the host's
drift between table and loop (model_drift) does not enter the prediction.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Callable

from explorer.core.model.chained import CHAINED_MODES, CHAINED_PATH, prepare_chained


@dataclass
class Sequence:
    """One mode's conv sequence: per site, the layer it belongs to, the path label and the ready call."""

    mode: str
    sites: list = field(default_factory=list)  # (layer index, path label, PreparedPath)


@dataclass
class SequenceTiming:
    """The sequence's figures: per layer (index) and path label, its median per call; the median pass;
    and each extra part of the round (the mode's forward, its stubbed remainder) as its kept samples."""

    total_ms: float  # the median of whole passes (not the sum of per_layer's medians)
    per_layer: dict  # (layer index, path label) -> median ms per call over its sites
    passes: int
    quality: str
    quality_reason: str
    parts_ms: dict = field(default_factory=dict)  # name -> np.ndarray of ms, one per kept round
    measurement: object = None  # the harness's Measurement of the whole round (its interference meter)
    attempts: int = 1
    raw_ms: dict = field(default_factory=dict)  # before `minus`: "convs" (the pass) and each part, per kept round


def site_path(mode: str, mode_path: str, site_index: int) -> str:
    """The per-layer path a conv site runs on in `mode` (whose per-layer path is `mode_path`): the MKLDNN
    modes' first conv reorders the plain input (mkldnn), the rest take a blocked input (mkldnn_chained)."""
    if mode in CHAINED_MODES:
        return "mkldnn" if site_index == 0 else CHAINED_PATH
    return mode_path


def strided_input(mode: str, site) -> bool:
    """A conv of the model as it is whose input arrives not contiguous (a transpose or permute before it): its
    sequence input keeps those strides, so the copy torch makes inside the conv is timed with it."""
    return mode == "nchw" and bool(getattr(site, "input_strides", ()))


def sequence_bytes(inv) -> int:
    """What the sequence keeps alive: per conv site its own input and weight, as f32 masters and one copy in
    the path's layout (outputs are freed call by call)."""
    import math

    by_module = {m: lay for lay in inv.layers for m in lay.modules}
    total = 0
    for site in inv.sites:
        lay = by_module.get(site.module)
        if lay is not None and lay.spec is not None:
            total += 2 * 4 * (math.prod(lay.spec.input_shape) + math.prod(lay.spec.weight_shape))
    return total


def build_sequence(mode: str, mode_path: str, inv, tensors: dict,
                   available: int | None = None) -> tuple[Sequence | None, str]:
    """(the sequence, "") or (None, why it cannot be built). `tensors` caches a Tensors per site across
    modes (index -> Tensors), made here on first use, seeded per site so no two sites share memory.
    Refused, before allocating, when every site's own tensors would take over SAFE_SHARE of free memory."""
    from explorer.core.model.activations.kept import profiled_tensors
    from explorer.core.paths.base import Tensors, one_line
    from explorer.core.paths.eager import prepare_dense_strided
    from explorer.core.paths.registry import prepare
    from explorer.core.problem.memory import SAFE_SHARE, available_bytes, fmt_bytes

    need = sequence_bytes(inv)
    avail = available if available is not None else available_bytes()
    if not tensors and avail is not None and need > SAFE_SHARE * avail:
        return None, (f"every conv's own tensors would take about {fmt_bytes(need)}, over "
                      f"{int(SAFE_SHARE * 100)}% of the {fmt_bytes(avail)} free now")
    by_module = {m: i for i, lay in enumerate(inv.layers) for m in lay.modules}
    seq = Sequence(mode)
    for k, site in enumerate(inv.sites):
        li = by_module.get(site.module)
        lay = inv.layers[li] if li is not None else None
        if lay is None or lay.spec is None:
            return None, f"conv {site.module} cannot be measured here ({lay.error if lay else 'not in the inventory'})"
        path = site_path(mode, mode_path, k)
        try:
            t = tensors.get(k)
            if t is None:
                # a conv the model feeds subnormals gets an input with their share (a random one has none)
                t = tensors[k] = profiled_tensors(Tensors.make(lay.spec, seed=k), site.input_profile)
            if path == CHAINED_PATH:
                prep = prepare_chained(t)
            elif strided_input(mode, site):
                prep = prepare_dense_strided(t, site.input_strides)
            else:
                prep = prepare(path, t)
        except Exception as e:  # noqa: BLE001 - no sequence: the prediction falls back to the table
            return None, f"conv {site.module} on {path}: {type(e).__name__}: {one_line(e)}"
        seq.sites.append((li, path, prep))
    return seq, ""


# The fewest rounds before the sequence's own stop is asked (each round is a whole forward and more, so a
# check per round costs nothing beside it; fewer than this and a lucky streak could end the loop)
CHECK_FROM_ROUNDS = 8
# The part a prediction adds to the conv pass, and the measurement it is checked against
PREDICTED_PART, MEASURED_PART = "remainder", "forward"


def time_sequence(seq: Sequence, budget_ms: float, min_samples: int, cancel: Callable[[], bool],
                  parts: dict | None = None, minus: dict | None = None,
                  precision: float | None = None) -> SequenceTiming | None:
    """Rounds under the harness (its interference verdict; a noisy loop measured again, as the runner does):
    each round is one pass over the sequence, each conv clocked, then each of `parts` (name -> callable:
    the mode's stubbed remainder, its forward) clocked once. Interleaved so, the parts of a prediction and
    the measurement it is checked against see the same machine, whatever the host does minute to minute
    (BENCHMARKS §0e); a forward timed this way read 0.97-1.02x its back-to-back median (§8c). `minus` maps a
    part (or "convs", the pass) to the part timed in the same round that is taken off it, round by round (the
    jit graph's touches, model_jit); the pass must then be one site. `precision`: the loop stops as
    "decided" once the two figures a mode's answer compares are known that well (median_rel_ci of their
    per-round values): the prediction's timed part (the pass plus PREDICTED_PART, each less what `minus` takes
    off it) and MEASURED_PART. Asked every round from CHECK_FROM_ROUNDS on; a noisy loop goes on to the budget,
    and the round's total alone never ends it (a 0.5% total hid a remainder known to 5%). None if cancelled."""
    import time

    import numpy as np
    import torch

    from explorer.core.measure.harness import Budget, measure, median_rel_ci
    from explorer.core.measure.retry import MAX_ATTEMPTS, measure_until_trusted

    clock = time.perf_counter_ns
    calls = [prep.fn for _, _, prep in seq.sites] + list((parts or {}).values())
    rec: list[list[int]] = []

    def one_round() -> None:
        row = []
        for fn in calls:
            t0 = clock()
            fn()
            row.append(clock() - t0)
        rec.append(row)

    tried: list = []  # (Measurement, its rounds) of each attempt: the kept loop's rounds are read below

    n_sites = len(seq.sites)
    column = {name: n_sites + i for i, name in enumerate(parts or {})}
    taken_off = minus or {}

    def known(_clean) -> bool:
        """The prediction's timed part and the measurement each have a median within `precision`, round by
        round as the prediction sums them (a small part's wider spread counts by its share of the sum)."""
        got = np.asarray(rec, dtype=np.float64)

        def less(name: str, values: np.ndarray) -> np.ndarray:
            other = taken_off.get(name)
            return values - got[:, column[other]] if other in column else values

        predicted = less("convs", got[:, :n_sites].sum(axis=1))
        if PREDICTED_PART in column:
            predicted = predicted + less(PREDICTED_PART, got[:, column[PREDICTED_PART]])
        cols = [predicted] + ([got[:, column[MEASURED_PART]]] if MEASURED_PART in column else [])
        return all(median_rel_ci(c) < precision for c in cols)

    def measure_once(_attempt):
        nonlocal rec
        rec = []
        if precision is None:
            b = Budget(budget_ms, min_samples, warmup=0)
        else:
            # precision 0: only `known` ends the rounds early, never the harness's rule on the round's total
            b = Budget(budget_ms, min_samples, precision=0.0, warmup=0, decided=known, check_from=CHECK_FROM_ROUNDS,
                       check_step=1)
        m = measure(one_round, b, cancel)
        tried.append((m, rec))
        return m

    with torch.no_grad():
        one_round()  # untimed: builds every primitive, touches every buffer once
        got = measure_until_trusted(measure_once, MAX_ATTEMPTS)
    if got is None:
        return None
    best, attempt = got
    best_rec = next(r for m, r in tried if m is best)
    rounds = np.asarray(best_rec[: best.n], dtype=np.int64)[best.kept] / 1e6  # the rounds behind its statistics
    named = {name: rounds[:, n_sites + i] for i, name in enumerate(parts or {})}
    raw = {"convs": rounds[:, :n_sites].sum(axis=1), **named}
    minus = minus or {}
    if "convs" in minus:
        if n_sites != 1:
            raise ValueError("only a one-site pass can have a part taken off it")
        rounds[:, 0] = np.maximum(rounds[:, 0] - named[minus["convs"]], 0.0)
    # a round whose part alone read faster than what is taken off it (noise on a tiny part) counts as 0
    named.update({name: np.maximum(named[name] - named[other], 0.0) for name, other in minus.items() if name != "convs"})
    # the pass's figure is the median of whole passes, as the forward's is of whole forwards: each conv's
    # time is skewed (an occasional slow call), so the sum of per-conv medians leaves that out, 1.5-2 ms of
    # MobileNetV2 mb1's 52 convs (pred/meas 0.91-0.95 with the sum, 0.95-1.01 with the pass; BENCHMARKS §20)
    pass_ms = float(np.median(rounds[:, :n_sites].sum(axis=1)))
    pooled: dict = {}
    for (li, path, _), col in zip(seq.sites, rounds[:, :n_sites].T):
        pooled.setdefault((li, path), []).extend(col.tolist())
    per_layer = {key: statistics.median(v) for key, v in pooled.items()}
    return SequenceTiming(pass_ms, per_layer, int(len(rounds)), best.quality, best.quality_reason,
                          named, best, attempt, raw)
