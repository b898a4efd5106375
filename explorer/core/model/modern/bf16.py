"""Is bf16 fast here? oneDNN's own answer, not the CPU's flags: the ISA it prints in its verbose `isa:` line
is what it dispatches to (ONEDNN_MAX_CPU_ISA=AVX2 on an AVX-512 bf16 CPU makes it an AVX2 CPU). Only an ISA
with bf16 dot products (avx512_core_bf16, "... bfloat16 support", or AMX) runs bf16 convs faster than f32;
elsewhere oneDNN or ATen convert to f32 and back, and a bf16 figure is a slow number, not a finding."""

from __future__ import annotations

from explorer.core.measure import machine


def onednn_isa() -> str:
    """oneDNN's ISA line (tests replace this function to play another CPU)."""
    return machine.onednn_isa()


def fast_bf16(isa: str | None = None) -> bool | None:
    """True when oneDNN's ISA has bf16 dot products (avx512_bf16 or AMX), False when it has not, None when
    oneDNN did not say which ISA it runs."""
    isa = onednn_isa() if isa is None else isa
    if not isa:
        return None
    low = isa.lower()
    return "bfloat16" in low or "bf16" in low or "amx" in low


def no_fast_bf16_note(isa: str | None = None) -> str:
    """The note a bf16 mode carries where its time is not a finding ("" where oneDNN has fast bf16)."""
    isa = onednn_isa() if isa is None else isa
    fast = fast_bf16(isa)
    if fast:
        return ""
    if fast is None:
        return "bf16 speed not a finding: oneDNN did not report its ISA, so whether this CPU has fast bf16 is unknown"
    return (f"no fast bf16 on this CPU: oneDNN runs {isa} (no avx512_bf16, no AMX), so bf16 is converted to f32 "
            "and back; this time is not what bf16 gains on a CPU that has it")


def error_note(max_abs: float | None, rel: float | None) -> str:
    """'output error against f32 nchw: max abs 1.2e-02, 0.31% of its largest value'."""
    if max_abs is None or rel is None:
        return "output error against f32 nchw: not comparable (the outputs differ in structure)"
    return f"output error against f32 nchw: max abs {max_abs:.2g}, {100 * rel:.2g}% of its largest value"
