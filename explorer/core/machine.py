"""What machine this is: versions, CPU and ISA, threads, and its measured peak (cached).

The peak is what a large matmul reaches here (fp32, and bf16 where oneDNN supports it), so results can
be read as % of what this CPU really does, not of a datasheet number. Memory bandwidth is a large copy.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from explorer.core.harness import Budget, measure


@functools.lru_cache(maxsize=1)
def onednn_version() -> str:
    m = re.search(r"(?:MKL-DNN|oneDNN)\s+v?([\d.]+)", torch.__config__.show())
    return m.group(1) if m else "unknown"


@functools.lru_cache(maxsize=1)
def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def torch_isa() -> str:
    """torch's own view of the vector ISA it dispatches to (e.g. AVX512)."""
    return torch.backends.cpu.get_cpu_capability()


@functools.lru_cache(maxsize=1)
def onednn_isa() -> str:
    """oneDNN's view, from the `isa:` info line it prints when verbose is on (empty if not captured)."""
    import torch.nn.functional as F

    from explorer.core.trace import run_traced

    x, w = torch.ones(2, 16, 14, 14), torch.ones(16, 16, 3, 3)  # a shape torch sends to oneDNN
    try:
        return str(run_traced(lambda: F.conv2d(x, w)).info.get("isa", ""))
    except Exception:  # noqa: BLE001 - a fact for display only; never fail a run for it
        return ""


def isa_summary() -> str:
    """One short string for the CSV: torch's ISA, and oneDNN's when known."""
    o = onednn_isa()
    return f"{torch_isa()}; oneDNN: {o}" if o else torch_isa()


def bf16_supported() -> bool:
    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def fp16_supported() -> bool:
    return bool(torch.ops.mkldnn._is_mkldnn_fp16_supported())


def cache_dir() -> Path:
    base = os.environ.get("MKLDNN_EXPLORER_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "mkldnn-explorer"
    )
    return Path(base)


@dataclass
class Peak:
    fp32_gflops: float
    bf16_gflops: float | None
    bandwidth_gbs: float
    threads: int
    measured_at: str
    key: str
    source: str = ""  # which GEMM gave the fp32 peak


def _peak_key(threads: int) -> str:
    return f"{cpu_model()}|{threads}|torch {torch.__version__}|v2"  # v2: best of torch.mm and a oneDNN GEMM


def _gemm_gflops(dtype: torch.dtype, b: Budget) -> tuple[float, str]:
    """The faster of two large GEMMs in `dtype`: torch.mm (MKL for f32, which takes a slow path on some
    non-Intel CPUs) and a 1x1 convolution that oneDNN runs as a 1024^3 GEMM. Best call, not median: the
    peak is what the machine can reach."""
    import torch.nn.functional as F

    n = 2048
    a = torch.randn(n, n).to(dtype)
    mm = 2 * n**3 / (measure(lambda: torch.mm(a, a), b).min_ms / 1e3) / 1e9
    c = 1024
    x = torch.randn(1, c, 32, 32).to(dtype).contiguous(memory_format=torch.channels_last)
    w = torch.randn(c, c, 1, 1).to(dtype).contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        conv = 2 * c * c * 32 * 32 / (measure(lambda: F.conv2d(x, w), b).min_ms / 1e3) / 1e9
    return (mm, "torch.mm 2048^3") if mm >= conv else (conv, "oneDNN 1x1 conv (1024^3 GEMM)")


def measure_peak(threads: int | None = None, budget_ms: float = 400.0) -> Peak:
    """Measure peak GFLOP/s with large GEMMs (fp32, and bf16 where supported) and bandwidth with a 256 MiB copy."""
    threads = threads or torch.get_num_threads()
    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        b = Budget(budget_ms=budget_ms, min_samples=3, precision=0.0)
        fp32, how = _gemm_gflops(torch.float32, b)
        bf16 = _gemm_gflops(torch.bfloat16, b)[0] if bf16_supported() else None
        src = torch.ones(64 * 1024 * 1024)  # 256 MiB: well past any cache
        dst = torch.empty_like(src)
        copy_ms = measure(lambda: dst.copy_(src), b).min_ms
        bandwidth = 2 * src.numel() * 4 / (copy_ms / 1e3) / 1e9  # read + write
    finally:
        torch.set_num_threads(old)
    return Peak(fp32, bf16, bandwidth, threads, time.strftime("%Y-%m-%dT%H:%M:%S"), _peak_key(threads), how)


def peak(threads: int | None = None, remeasure: bool = False, allow_measure: bool = True) -> Peak | None:
    """The cached peak for this CPU, thread count and torch version; measured (about 3 s) when missing."""
    threads = threads or torch.get_num_threads()
    path = cache_dir() / "peak.json"
    key = _peak_key(threads)
    cache: dict = {}
    try:
        cache = json.loads(path.read_text())
    except (OSError, ValueError):
        cache = {}
    if not remeasure and isinstance(cache.get(key), dict):
        try:
            return Peak(**cache[key])
        except TypeError:
            pass
    if not allow_measure:
        return None
    p = measure_peak(threads)
    cache[key] = asdict(p)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        from explorer.core.results import atomic_write_text

        atomic_write_text(path, json.dumps(cache, indent=1))
    except OSError:
        pass  # a read-only home only costs a re-measure next time
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
    }
