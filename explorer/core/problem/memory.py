"""Memory guard: estimate what a run allocates and refuse it before allocating when it would not fit."""

from __future__ import annotations

import math
from pathlib import Path

from explorer.core.errors import SpecError
from explorer.core.problem.spec import ConvSpec

SAFE_SHARE = 0.5  # never plan to use more than this share of the memory available right now


def _round_up(v: int, m: int) -> int:
    return -(-v // m) * m


def estimate_bytes(spec: ConvSpec, paths: tuple[str, ...] | list[str]) -> int:
    """Peak bytes of a run: the shared f32 and dtype copies plus the largest single path's tensors.

    MKLDNN copies are counted with channels padded to 16 (blocked formats) and the output twice (the
    dense result and a reorder buffer). Paths run one after another, so only the largest one counts.
    """
    it = spec.itemsize
    n_in, n_w, n_out = (math.prod(s) for s in (spec.input_shape, spec.weight_shape, spec.output_shape))
    shared = (n_in + n_w) * 4 + (n_in + n_w) * it + n_out * 4  # f32 masters, dtype copies, f32 reference
    sp_in, sp_out = math.prod(spec.input_shape[2:]), math.prod(spec.output_shape[2:])
    sp_k = math.prod(spec.kernel_size)
    cp_in = spec.mb * _round_up(spec.ic, 16) * sp_in
    cp_out = spec.mb * _round_up(spec.oc, 16) * sp_out
    cp_w = _round_up(spec.oc, 16) * _round_up(spec.ic // spec.g, 16) * sp_k
    per_path = (cp_in + cp_w + 2 * cp_out) * it + n_out * 4
    # PyTorch's native kernels unfold the input (im2col): ic/g*kh*kw x oh*ow per image and group.
    if "native" in paths:
        per_path = max(per_path, (n_in + n_w + 2 * n_out) * it + (spec.ic * sp_k * sp_out) * it)
    return shared + per_path


def available_bytes() -> int | None:
    """MemAvailable from /proc/meminfo (None where there is no such file)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def check_memory(spec: ConvSpec, paths, available: int | None = None) -> int:
    """Raise SpecError naming both numbers when the run would need more than SAFE_SHARE of free memory."""
    need = estimate_bytes(spec, paths)
    avail = available if available is not None else available_bytes()
    if avail is not None and need > SAFE_SHARE * avail:
        raise SpecError(
            # the limit first: "needs 20 GiB but only 21 GiB is available" read as a contradiction
            f"this convolution needs about {fmt_bytes(need)}, more than the {fmt_bytes(SAFE_SHARE * avail)} a run "
            f"may take ({int(SAFE_SHARE * 100)}% of the {fmt_bytes(avail)} available now); reduce mb or the sizes.",
            "mb",
        )
    return need


# A whole forward holds a few activations at once, each often several times its input (a CNN's stem turns 3
# channels into 64): the guard for a model input counts 16 f32 copies of the input. A rough floor, not a plan:
# it refuses `--mb 100000000` in one sentence instead of letting the allocation fail with a traceback.
MODEL_INPUT_FACTOR = 16


def check_input_memory(shape, available: int | None = None) -> int:
    """Raise SpecError when a model input of `shape` (and the forward it feeds) cannot fit in memory."""
    n = math.prod(int(d) for d in shape)
    need = n * 4 * MODEL_INPUT_FACTOR
    avail = available if available is not None else available_bytes()
    if avail is not None and need > SAFE_SHARE * avail:
        dims = "x".join(map(str, shape))
        dims = dims if len(dims) <= 40 else dims[:37] + "..."
        raise SpecError(
            f"an input of {dims} and the forward it feeds need about {fmt_bytes(need)} but only "
            f"{fmt_bytes(avail)} is available now (the limit is {int(SAFE_SHARE * 100)}%); reduce --mb or --input.",
            "mb",
        )
    return need
