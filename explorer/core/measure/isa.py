"""Which instruction set oneDNN (and ATen) may use in the measuring process: the `--isa` what-if.

oneDNN reads ONEDNN_MAX_CPU_ISA once, at its first ISA query, and then acts as a CPU with at most that ISA:
its kernels, and the blocked layouts they choose (aBcd8b with AVX2, aBcd16b with AVX-512, plain acdb for
bf16 on AMX). ATen's own vectorized kernels read ATEN_CPU_CAPABILITY (default, avx2, avx512) the same way.
Both are read at process start, so a setting gets a measuring process of its own. What a row ran with is
read back from oneDNN's verbose info line in that process (`isa:Intel AVX2`), never echoed from the request.

A cap can only lower the ISA: a name above this CPU's is refused, with the names it has. What it has is
read from the kernel's CPU flags (/proc/cpuinfo), using the features oneDNN's dispatcher checks for each name.
"""

from __future__ import annotations

from explorer.core.errors import InputError
from explorer.core.measure.host import cpu_flags, cpu_model

ENV_NAME = "ONEDNN_MAX_CPU_ISA"
ATEN_ENV = "ATEN_CPU_CAPABILITY"
# oneDNN's names (docs: "CPU Dispatcher Control"), lowest first; each needs the CPU flags of its own line
# and of every line it extends. avx2_vnni and avx512_core are each above avx2 but not above each other.
_NEEDS: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "sse41": (None, ("sse4_1",)),
    "avx": ("sse41", ("avx",)),
    "avx2": ("avx", ("avx2",)),
    "avx2_vnni": ("avx2", ("avx_vnni",)),
    "avx2_vnni_2": ("avx2_vnni", ("avx_vnni_int8", "avx_ne_convert")),
    "avx512_core": ("avx2", ("avx512f", "avx512bw", "avx512vl", "avx512dq")),
    "avx512_core_vnni": ("avx512_core", ("avx512_vnni",)),
    "avx512_core_bf16": ("avx512_core_vnni", ("avx512_bf16",)),
    "avx512_core_fp16": ("avx512_core_bf16", ("avx512_fp16",)),
    "avx512_core_amx": ("avx512_core_fp16", ("amx_tile", "amx_int8", "amx_bf16")),
    "avx512_core_amx_fp16": ("avx512_core_amx", ("amx_fp16",)),
}
ISAS = tuple(_NEEDS)
ALIASES = {"avx10_1_512": "avx512_core_fp16", "avx10_1_512_amx": "avx512_core_amx",
           "avx10_1_512_amx_fp16": "avx512_core_amx_fp16"}


def _flags_needed(name: str) -> set[str]:
    out: set[str] = set()
    while name is not None:
        parent, flags = _NEEDS[name]
        out.update(flags)
        name = parent
    return out


def available(flags: frozenset | None = None) -> tuple[str, ...]:
    """The names this CPU can act as (every one at or below what it has), lowest first."""
    flags = cpu_flags() if flags is None else flags
    return tuple(n for n in ISAS if _flags_needed(n) <= flags)


def validate(name: str | None, flags: frozenset | None = None) -> str | None:
    """The canonical lower-case name (None: no cap, also for `default`, oneDNN's name for it). One sentence for
    an unknown name or one above this CPU."""
    if name is None or str(name).strip().lower() in ("", "default"):
        return None
    key = str(name).strip().lower()
    key = ALIASES.get(key, key)
    if key not in _NEEDS:
        raise InputError(f"unknown ISA {name!r}; choose from default, {', '.join(ISAS)}.", "isa")
    have = available(flags)
    if key not in have:
        raise InputError(f"this CPU ({cpu_model()}) has no {key}; it can act as {', '.join(have) or 'none of them'} "
                         "(or default, no cap).", "isa")
    return key


def aten_capability(name: str) -> str:
    """ATen's matching ATEN_CPU_CAPABILITY: avx512 from avx512_core up, avx2 from avx2 up, else default."""
    above = set(ISAS[ISAS.index("avx512_core"):])
    if name in above:
        return "avx512"
    return "avx2" if name in ("avx2", "avx2_vnni", "avx2_vnni_2") else "default"


def env_for(name: str | None) -> dict[str, str | None]:
    """Environment for a measuring process capped at `name` (None: no cap, the variables inherited as they are)."""
    name = validate(name)
    if name is None:
        return {}
    return {ENV_NAME: name.upper(), ATEN_ENV: aten_capability(name)}


def name_of(info: str) -> str:
    """oneDNN's name for the ISA its verbose info line describes ("Intel AVX2" -> "avx2"); the text itself when
    it is none of the known forms (a newer release's wording)."""
    t = info.strip()
    if "AMX" in t:
        amx = t[t.index("AMX"):]
        return "avx512_core_amx_fp16" if "float16" in amx.replace("bfloat16", "") else "avx512_core_amx"
    if "AVX-512" in t or "AVX10" in t:
        if "float16" in t.replace("bfloat16", ""):
            return "avx512_core_fp16"
        if "bfloat16" in t:
            return "avx512_core_bf16"
        return "avx512_core_vnni" if "DL Boost" in t else "avx512_core"
    if "AVX2" in t:
        if "bfloat16" in t:
            return "avx2_vnni_2"
        return "avx2_vnni" if "DL Boost" in t else "avx2"
    if t == "Intel AVX":
        return "avx"
    if "SSE4.1" in t:
        return "sse41"
    return t
