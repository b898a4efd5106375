"""The --isa what-if: which names this CPU can act as, the environment of a capped process, and the read-back."""

import pytest

from explorer.core.errors import InputError
from explorer.core.measure import isa
from explorer.core.measure.host import cpu_flags

AVX2_FLAGS = frozenset({"sse4_1", "avx", "avx2", "fma"})
ZEN4_FLAGS = AVX2_FLAGS | {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni", "avx512_bf16"}
SPR_FLAGS = ZEN4_FLAGS | {"avx512_fp16", "amx_tile", "amx_int8", "amx_bf16", "avx_vnni"}


def test_available_follows_the_cpu_flags():
    assert isa.available(AVX2_FLAGS) == ("sse41", "avx", "avx2")
    assert isa.available(ZEN4_FLAGS)[-1] == "avx512_core_bf16" and "avx2_vnni" not in isa.available(ZEN4_FLAGS)
    spr = isa.available(SPR_FLAGS)
    assert "avx512_core_amx" in spr and "avx2_vnni" in spr and "avx512_core_amx_fp16" not in spr
    assert isa.available(frozenset()) == ()


def test_names_above_the_cpu_are_refused_with_what_it_has():
    with pytest.raises(InputError) as e:
        isa.validate("avx512_core_amx", ZEN4_FLAGS)
    msg = str(e.value)
    assert e.value.field == "isa" and msg.count(".") == 1 and "\n" not in msg
    assert "avx512_core_amx" in msg and "sse41, avx, avx2, avx512_core, avx512_core_vnni, avx512_core_bf16" in msg
    with pytest.raises(InputError, match="unknown ISA 'avx9'"):
        isa.validate("avx9", SPR_FLAGS)


def test_validate_normalises_names_and_aliases():
    assert isa.validate("AVX2", AVX2_FLAGS) == "avx2"
    assert isa.validate("avx10_1_512_amx", SPR_FLAGS) == "avx512_core_amx"
    assert isa.validate(None) is None and isa.validate("default") is None and isa.validate("") is None


def test_every_x86_64_cpu_can_act_as_sse41():
    if "sse4_1" not in cpu_flags():
        pytest.skip("not an x86-64 CPU with SSE4.1")
    assert isa.validate("sse41") == "sse41"


def test_env_caps_onednn_and_aten_together():
    assert isa.env_for(None) == {}
    assert isa.env_for("sse41") == {"ONEDNN_MAX_CPU_ISA": "SSE41", "ATEN_CPU_CAPABILITY": "default"}
    assert isa.aten_capability("avx2") == "avx2" and isa.aten_capability("avx") == "default"
    assert isa.aten_capability("avx512_core_bf16") == "avx512" and isa.aten_capability("avx512_core_amx") == "avx512"


@pytest.mark.parametrize("info,name", [
    # oneDNN's own wording of its verbose `isa:` info line (src/cpu/x64/cpu_isa_traits.cpp)
    ("Intel SSE4.1", "sse41"),
    ("Intel AVX", "avx"),
    ("Intel AVX2", "avx2"),
    ("Intel AVX2 with Intel DL Boost", "avx2_vnni"),
    ("Intel AVX2 with Intel DL Boost, float16 and bfloat16 support (preview support)", "avx2_vnni_2"),
    ("Intel AVX-512 with AVX512BW, AVX512VL, and AVX512DQ extensions", "avx512_core"),
    ("Intel AVX-512 with Intel DL Boost", "avx512_core_vnni"),
    ("Intel AVX-512 with Intel DL Boost and bfloat16 support", "avx512_core_bf16"),
    ("Intel AVX-512 with float16, Intel DL Boost and bfloat16 support ", "avx512_core_fp16"),
    ("Intel AVX-512 with float16, Intel DL Boost and bfloat16 support and Intel AMX with bfloat16 and 8-bit "
     "integer support", "avx512_core_amx"),
    ("Intel AVX-512 with float16, Intel DL Boost and bfloat16 support and Intel AMX with bfloat16, float16 and "
     "8-bit integer support (preview support)", "avx512_core_amx_fp16"),
    ("Intel 64", "Intel 64"),  # unknown wording: the text itself, never a guess
])
def test_name_of_oneDNN_info_line(info, name):
    assert isa.name_of(info) == name
