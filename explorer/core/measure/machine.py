"""What machine this is: versions, CPU and ISA, threads, and its measured peak (cached).

The peak is the best this machine is seen to do (fp32, and bf16 where oneDNN supports it): the best call of
two GEMMs and the fastest oneDNN 3x3 conv kernels, each measured again while another program disturbs it,
and raised by any trusted row that goes faster, so results read as % of what this CPU really does, never
over 100. Memory bandwidth is a large copy.
"""

from __future__ import annotations

import functools
import json
import os
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from explorer.core.measure.harness import Budget, measure
from explorer.core.measure.host import cache_dir, cpu_flags, cpu_model
from explorer.core.measure.retry import measure_until_trusted


@functools.lru_cache(maxsize=1)
def onednn_version() -> str:
    m = re.search(r"(?:MKL-DNN|oneDNN)\s+v?([\d.]+)", torch.__config__.show())
    return m.group(1) if m else "unknown"


def torch_isa() -> str:
    """torch's own view of the vector ISA it dispatches to (e.g. AVX512)."""
    return torch.backends.cpu.get_cpu_capability()


@functools.lru_cache(maxsize=1)
def onednn_isa() -> str:
    """oneDNN's view, from the `isa:` info line it prints when verbose is on (empty if not captured)."""
    import torch.nn.functional as F

    from explorer.core.trace.onednn import run_traced

    x, w = torch.ones(2, 16, 14, 14), torch.ones(16, 16, 3, 3)  # a shape torch sends to oneDNN
    try:
        return str(run_traced(lambda: F.conv2d(x, w)).info.get("isa", ""))
    except Exception:  # noqa: BLE001 - a fact for display only; never fail a run for it
        return ""


def onednn_isa_name() -> str:
    """oneDNN's ISA in this process by its ONEDNN_MAX_CPU_ISA name (avx2, avx512_core, ...), read back from the
    verbose info line: what a row ran with, whatever was asked for (empty if not captured)."""
    from explorer.core.measure.isa import name_of

    o = onednn_isa()
    return name_of(o) if o else ""


def bf16_supported() -> bool:
    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def fp16_supported() -> bool:
    return bool(torch.ops.mkldnn._is_mkldnn_fp16_supported())


@dataclass
class Peak:
    fp32_gflops: float
    bf16_gflops: float | None
    bandwidth_gbs: float
    threads: int
    measured_at: str
    key: str
    source: str = ""  # which kernel gave the fp32 peak (a GEMM, a conv kernel, or a rate seen in a run)
    quality: str = ""  # ok | noisy (another program disturbed every attempt) | "" (no counters here)
    quality_reason: str = ""
    bf16_source: str = ""


PEAK_ATTEMPTS = 3  # a disturbed kernel is measured again, as a row is


def _peak_key(threads: int) -> str:
    # v3: best of GEMMs and conv kernels, with the interference verdict; rates seen in runs raise it
    return f"{cpu_model()}|{threads}|torch {torch.__version__}|v3"


def _best_rate(fn, flops: float, b: Budget) -> tuple[float, object]:
    """GFLOP/s of the best call of fn, measured again while the loop is noisy; (rate, Measurement)."""
    m, _ = measure_until_trusted(lambda _attempt: measure(fn, b), PEAK_ATTEMPTS, cancellable=False)
    return flops / (m.min_ms / 1e3) / 1e9, m


def _peak_kernels(dtype: torch.dtype):
    """(name, fn, flops) of the kernels whose best rate is this machine's peak for dtype: two GEMMs (torch.mm
    is MKL for f32, which takes a slow path on some non-Intel CPUs; a 1x1 conv is a oneDNN GEMM) and the
    3x3 convs oneDNN runs fastest (a direct 3x3 kernel can beat the GEMM by a few %)."""
    import torch.nn.functional as F

    n = 2048
    a = torch.randn(n, n).to(dtype)
    yield "torch.mm 2048^3", (lambda: torch.mm(a, a)), 2 * n**3
    cl = torch.channels_last
    for name, (mb, c, hw, k) in {"oneDNN 1x1 conv (1024^3 GEMM)": (1, 1024, 32, 1),
                                 "oneDNN 3x3 conv mb1ic64ih56": (1, 64, 56, 3),
                                 "oneDNN 3x3 conv mb4ic128ih28": (4, 128, 28, 3)}.items():
        x = torch.randn(mb, c, hw, hw).to(dtype).contiguous(memory_format=cl)
        w = torch.randn(c, c, k, k).to(dtype).contiguous(memory_format=cl)
        pad = k // 2

        def conv(x=x, w=w, pad=pad):
            with torch.no_grad():
                return F.conv2d(x, w, padding=pad)

        yield name, conv, 2 * mb * c * c * k * k * hw * hw


def _peak_of(dtype: torch.dtype, b: Budget) -> tuple[float, str, list]:
    best, src, ms = 0.0, "", []
    for name, fn, flops in _peak_kernels(dtype):
        rate, m = _best_rate(fn, flops, b)
        ms.append(m)
        if rate > best:
            best, src = rate, name
    return best, src, ms


def measure_peak(threads: int | None = None, budget_ms: float = 400.0) -> Peak:
    """Measure peak GFLOP/s (fp32, and bf16 where supported) as the best of GEMM and conv kernels, and bandwidth
    with a 256 MiB copy; every kernel measured again while another program disturbs it."""
    threads = threads or torch.get_num_threads()
    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        b = Budget(budget_ms=budget_ms, min_samples=3, precision=0.0)
        fp32, how, ms = _peak_of(torch.float32, b)
        bf16, bf16_how = None, ""
        if bf16_supported():
            bf16, bf16_how, ms16 = _peak_of(torch.bfloat16, b)
            ms += ms16
        src = torch.ones(64 * 1024 * 1024)  # 256 MiB: well past any cache
        dst = torch.empty_like(src)
        copy_ms = _best_rate(lambda: dst.copy_(src), 1.0, b)[1].min_ms
        bandwidth = 2 * src.numel() * 4 / (copy_ms / 1e3) / 1e9  # read + write
    finally:
        torch.set_num_threads(old)
    noisy = [m for m in ms if m.quality == "noisy"]
    quality = "noisy" if noisy else ("ok" if any(m.quality == "ok" for m in ms) else "")
    return Peak(fp32, bf16, bandwidth, threads, time.strftime("%Y-%m-%dT%H:%M:%S"), _peak_key(threads), how, quality,
                noisy[0].quality_reason if noisy else "", bf16_how)


def _read_cache(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_cache(path: Path, cache: dict) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        from explorer.core.files import atomic_write_text

        atomic_write_text(path, json.dumps(cache, indent=1))
    except OSError:
        pass  # a read-only home only costs a re-measure next time


def peak(threads: int | None = None, remeasure: bool = False, allow_measure: bool = True) -> Peak | None:
    """The cached peak for this CPU, thread count and torch version; measured (a few seconds) when missing,
    and measured again when the cached one was noisy. A new measurement never lowers a rate this machine
    was already seen to reach (a quiet peak, or a run's trusted row)."""
    threads = threads or torch.get_num_threads()
    path = cache_dir() / "peak.json"
    key = _peak_key(threads)
    cache = _read_cache(path)
    old = None
    if isinstance(cache.get(key), dict):
        try:
            old = Peak(**cache[key])
        except TypeError:
            old = None
    if old is not None and not remeasure and (old.quality != "noisy" or not allow_measure):
        return old
    if not allow_measure:
        return None
    p = measure_peak(threads)
    if old is not None:
        if old.fp32_gflops > p.fp32_gflops:
            p.fp32_gflops, p.source = old.fp32_gflops, old.source
        if old.bf16_gflops and (p.bf16_gflops or 0) < old.bf16_gflops:
            p.bf16_gflops, p.bf16_source = old.bf16_gflops, old.bf16_source
        p.bandwidth_gbs = max(p.bandwidth_gbs, old.bandwidth_gbs)
    cache[key] = asdict(p)
    _write_cache(path, cache)
    return p


def note_rate(dtype: str, threads: int, gflops: float, source: str) -> Peak | None:
    """A trusted row reached `gflops`: raise the cached peak to it if it is higher (a peak is the best the
    machine is seen to do). Returns the peak now in force, or None when none is cached yet."""
    path = cache_dir() / "peak.json"
    key = _peak_key(threads)
    cache = _read_cache(path)
    try:
        p = Peak(**cache[key])
    except (KeyError, TypeError):
        return None
    field_name = "bf16_gflops" if dtype == "bf16" else "fp32_gflops"
    cur = getattr(p, field_name)
    if cur is not None and gflops > cur:
        setattr(p, field_name, gflops)
        if dtype == "bf16":
            p.bf16_source = f"seen in a run: {source}"
        else:
            p.source = f"seen in a run: {source}"
        cache[key] = asdict(p)
        _write_cache(path, cache)
    return p


def iter_peak(threads: int | None = None, remeasure: bool = True, cancel=None):
    """peak() as a one-event job for the measuring process (the GUI never measures in its own process)."""
    yield peak(threads=threads, remeasure=remeasure)


def info(measure_peak_now: bool = True, remeasure: bool = False) -> dict:
    p = peak(remeasure=remeasure, allow_measure=measure_peak_now)
    return {
        "torch_version": torch.__version__,
        "onednn_version": onednn_version(),
        "cpu": cpu_model(),
        "torch_isa": torch_isa(),
        "onednn_isa": onednn_isa(),
        "avx512": "avx512f" in cpu_flags(),
        "amx": "amx_tile" in cpu_flags(),
        "bf16_supported": bf16_supported(),
        "fp16_supported": fp16_supported(),
        "threads": torch.get_num_threads(),
        "cores": os.cpu_count(),
        "mkldnn_available": torch.backends.mkldnn.is_available(),
        "peak_fp32_gflops": p.fp32_gflops if p else None,
        "peak_bf16_gflops": p.bf16_gflops if p else None,
        "bandwidth_gbs": p.bandwidth_gbs if p else None,
        "peak_source": p.source if p else None,
        "peak_measured_at": p.measured_at if p else None,
        "peak_quality": (p.quality + (f" ({p.quality_reason})" if p.quality_reason else "")) if p else None,
    }
