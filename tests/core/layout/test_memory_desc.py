"""The real buffer proof: the layout read from oneDNN's descriptor places every element where the bytes are."""

import numpy as np
import pytest
import torch
import torch.nn as nn
from torch.utils import mkldnn as mkldnn_utils

from explorer.core.errors import InputError
from explorer.core.layout.descriptors import (
    parse_serialized_md,
    raw_buffer,
    read_mkldnn_layout,
    stored_nbytes,
    tensor_layout,
)
from explorer.core.layout.tags import layout_from_tag
from explorer.core.measure import machine
from explorer.core.paths.base import is_unsupported

pytestmark = pytest.mark.skipif(not torch.backends.mkldnn.is_available(), reason="no MKLDNN in this torch")


def bits(dense: torch.Tensor) -> np.ndarray:
    """Logical values in the raw_buffer's numpy dtype (bf16 as uint16 bit patterns)."""
    dense = dense.detach().contiguous()
    if dense.dtype == torch.bfloat16:
        return dense.view(torch.int16).numpy().view(np.uint16)
    return dense.numpy()


def assert_buffer_matches(t: torch.Tensor, kind: str = "data"):
    """Every logical element sits at the model's offset; every other cell of the buffer is zero."""
    reading = read_mkldnn_layout(t, kind)
    assert reading.layout is not None, reading.unknown_reason
    lay = reading.layout
    buf = raw_buffer(t)
    assert buf.size * lay.itemsize == stored_nbytes(t) >= lay.nbytes
    offs = lay.offsets()
    assert np.array_equal(buf[offs], bits(t.to_dense()))
    padding = np.ones(buf.size, dtype=bool)
    padding[offs.ravel()] = False
    assert padding.sum() == buf.size - offs.size
    assert not buf[padding].any()
    return lay


def mkldnn_conv(ic, oc, dtype):
    torch.manual_seed(0)
    conv = nn.Conv2d(ic, oc, 3, padding=1).eval()
    return mkldnn_utils.to_mkldnn(conv, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("oc", [17, 3, 33])
def test_conv_output_and_weight_buffers(dtype, oc, conv_outputs):
    if dtype == torch.bfloat16 and not machine.bf16_supported():
        # No bf16 in oneDNN on this CPU (it needs avx512bw/vl/dq or avx_ne_convert): torch refuses to prepack
        # the weight, so there is no bf16 blocked buffer to prove. What the product must then show is an
        # `unsupported` row with torch's one-line reason, not an `error`: check that torch's refusal is one.
        with pytest.raises(RuntimeError) as refused:
            mkldnn_conv(17, oc, dtype)
        assert "needs the cpu support" in str(refused.value) and is_unsupported(refused.value)
        return
    m = mkldnn_conv(17, oc, dtype)
    x = torch.randn(2, 17, 5, 4).to(dtype)
    with torch.no_grad():
        y = m(x.to_mkldnn())
    out = assert_buffer_matches(y, "data")
    # The descriptor's format is the one oneDNN's verbose says the conv wrote on this CPU: channel-blocked
    # (aBcd16b, aBcd8b) on most, plain abcd on an SSE4.1 gemm kernel, plain acdb for bf16 on AMX.
    wrote = conv_outputs[(oc, {torch.float32: "f32", torch.bfloat16: "bf16"}[dtype])]
    assert out.dims == (2, oc, 5, 4) and out.tag == wrote.tag, wrote
    assert out.padded_dims == (2, wrote.padded(oc), 5, 4)
    w = assert_buffer_matches(m.weight, "weight")
    assert w.dims == (oc, 17, 3, 3)


def test_guide_example_conv_output(f32_conv):
    """FIELD_GUIDE's 2x17x5x4 conv output in the format oneDNN's verbose says it wrote here: with a channel
    block b (AVX-512: aBcd16b, padded to 32, strides [640, 320, 64, 16], 5120 bytes; AVX2: aBcd8b, padded to
    24, [480, 160, 32, 8], 3840 bytes), or plain abcd (SSE4.1's gemm kernel: 2720 bytes)."""
    m = mkldnn_conv(17, 17, torch.float32)
    with torch.no_grad():
        y = m(torch.randn(2, 17, 5, 4).to_mkldnn())
    lay = read_mkldnn_layout(y).layout
    b, cp = f32_conv.block, f32_conv.padded(17)
    assert lay.tag == f32_conv.tag, f"the descriptor says {lay.tag}, oneDNN's verbose {f32_conv.tag}"
    if b:
        assert lay.alias == f"nChw{b}c"
        assert lay.padded_dims == (2, cp, 5, 4) and lay.strides == (cp * 5 * 4, 5 * 4 * b, 4 * b, b)
    else:
        assert lay.padded_dims == (2, 17, 5, 4) and lay.inner_blks == ()
    assert stored_nbytes(y) == 2 * cp * 5 * 4 * 4


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.int8, torch.uint8])
def test_to_mkldnn_of_plain_tensor_is_abcd(dtype):
    x = (torch.randn(2, 17, 5, 4) * 10).to(dtype)
    t = x.to_mkldnn()
    reading = tensor_layout(t)
    assert reading.source == "descriptor" and reading.layout.tag == "abcd"
    assert stored_nbytes(t) == x.numel() * x.element_size()
    if dtype in (torch.float32, torch.bfloat16):
        assert_buffer_matches(t)
    elif dtype == torch.float16:
        assert np.array_equal(raw_buffer(t), x.numpy().ravel())


def test_low_rank_mkldnn_tensors():
    assert tensor_layout(torch.randn(3, 5).to_mkldnn()).layout.tag == "ab"
    assert tensor_layout(torch.randn(7).to_mkldnn()).layout.tag == "a"


@pytest.mark.parametrize("fmt,tag", [(torch.contiguous_format, "abcd"), (torch.channels_last, "acdb")])
def test_strided_tensors(fmt, tag):
    x = torch.randn(2, 3, 5, 4).contiguous(memory_format=fmt)
    reading = tensor_layout(x)
    assert reading.source == "strides" and reading.layout.tag == tag
    assert reading.layout.strides == x.stride()
    assert stored_nbytes(x) == x.numel() * 4


def test_strided_offsets_match_torch():
    x = torch.arange(2 * 3 * 5 * 4, dtype=torch.float32).reshape(2, 3, 5, 4)
    x = x.contiguous(memory_format=torch.channels_last)
    lay = tensor_layout(x).layout
    flat = torch.as_strided(x, (x.numel(),), (1,)).numpy()
    assert np.array_equal(flat[lay.offsets()], x.numpy())


def test_non_dense_strided_is_unknown_not_an_error():
    reading = tensor_layout(torch.randn(4, 6)[:, ::2])
    assert reading.layout is None and reading.unknown_reason.startswith("unknown, because")
    assert tensor_layout(torch.randn(2, 3, dtype=torch.float64)).layout is None


def test_api_misuse_raises_input_error():
    with pytest.raises(InputError):
        read_mkldnn_layout(torch.randn(2, 3))
    with pytest.raises(InputError):
        raw_buffer(torch.randn(2, 3))


# ---- a damaged or changed descriptor never gives a wrong answer ----------------------------------

@pytest.fixture(scope="module")
def blob():
    m = mkldnn_conv(17, 17, torch.float32)
    with torch.no_grad():
        y = m(torch.randn(2, 17, 5, 4).to_mkldnn())
    return torch.ops.mkldnn._get_mkldnn_serialized_md(y).numpy().copy()


def poke(blob, offset, value, dtype):
    b = blob.copy()
    b[offset:offset + np.dtype(dtype).itemsize] = np.array([value], dtype=dtype).view(np.uint8)
    return b


def test_blob_parses(blob, f32_conv):
    reading = parse_serialized_md(blob, (2, 17, 5, 4), "f32")
    assert reading.layout is not None and reading.raw["derived_tag"] == reading.layout.tag == f32_conv.tag
    b = f32_conv.block
    assert reading.raw["inner_blks"] == ([b] if b else []) and reading.raw["inner_idxs"] == ([1] if b else [])


NEEDS_BLOCK = pytest.mark.needs_inner_block  # damages an inner block entry: only where the output has one


def other_block(blob):
    """An inner block for the channels that pads 17 to a size other than the blob's own padded C (its
    real block is this CPU's: 16 on AVX-512, 8 on AVX2), so the damage below is a real inconsistency."""
    padded_c = int(np.frombuffer(blob[112 + 8:112 + 16].tobytes(), np.int64)[0])
    return next(k for k in (8, 16, 4) if -(-17 // k) * k != padded_c)


@pytest.mark.parametrize("damage,why", [
    (lambda b: b[:300], "fewer than"),
    (lambda b: poke(b, 4, 0, np.int32), "0 dims"),
    (lambda b: poke(b, 4, 13, np.int32), "13 dims"),
    (lambda b: poke(b, 16, 18, np.int64), "differ from the tensor shape"),
    (lambda b: poke(b, 104, 2, np.int32), "data type"),
    (lambda b: poke(b, 120, 16, np.int64), "smaller than"),
    (lambda b: poke(b, 312, 3, np.int32), "format kind"),
    (lambda b: poke(b, 328, -320, np.int64), "not all positive"),
    (lambda b: poke(b, 328, 999, np.int64), "not a dense layout"),
    (lambda b: poke(b, 416, 40, np.int32), "inner blocks"),
    pytest.param(lambda b: poke(b, 424, 0, np.int64), "out of range", marks=NEEDS_BLOCK),
    pytest.param(lambda b: poke(b, 520, 7, np.int64), "out of range", marks=NEEDS_BLOCK),
    pytest.param(lambda b: poke(b, 424, other_block(b), np.int64), "pads to", marks=NEEDS_BLOCK),
])
def test_damaged_blob_is_unknown(blob, damage, why, request):
    if request.node.get_closest_marker("needs_inner_block") and not int(np.frombuffer(blob[416:420].tobytes(), np.int32)[0]):
        pytest.skip("oneDNN wrote this CPU's conv output plain (no inner block): no block entry to damage")
    reading = parse_serialized_md(damage(blob), (2, 17, 5, 4), "f32")
    assert reading.layout is None and reading.source == "descriptor"
    assert reading.unknown_reason.startswith("unknown, because") and why in reading.unknown_reason


def test_model_reproduces_descriptor_for_weight():
    m = mkldnn_conv(17, 17, torch.float32)
    reading = read_mkldnn_layout(m.weight, "weight")
    lay = reading.layout
    assert list(lay.strides) == reading.raw["strides"] and list(lay.padded_dims) == reading.raw["padded_dims"]
    assert layout_from_tag(lay.tag, lay.dims, "f32", "weight") == lay
