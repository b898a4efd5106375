"""The format-tag layout model against the oneDNN formulas (FIELD_GUIDE section 3)."""

import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.errors import InputError
from explorer.core.layout.tags import DTYPE_SIZES, alias_of, layout_from_strides, layout_from_tag, parse_tag


def grid(dims):
    return np.meshgrid(*[np.arange(n) for n in dims], indexing="ij")


# ---- offsets against the guide's closed forms -------------------------------------------------------

def test_nchw_offsets_match_formula():
    N, C, H, W = 2, 3, 5, 4
    lay = layout_from_tag("abcd", (N, C, H, W))
    n, c, h, w = grid(lay.dims)
    assert np.array_equal(lay.offsets(), n * C * H * W + c * H * W + h * W + w)
    assert lay.alias == "nchw" and lay.padded_dims == lay.dims and lay.overhead_pct == 0
    assert lay.innermost_run == W


def test_nhwc_offsets_match_formula():
    N, C, H, W = 2, 3, 5, 4
    lay = layout_from_tag("acdb", (N, C, H, W))
    n, c, h, w = grid(lay.dims)
    assert np.array_equal(lay.offsets(), n * H * W * C + h * W * C + w * C + c)
    assert lay.alias == "nhwc" and lay.strides == (60, 1, 12, 3) and lay.innermost_run == C


def test_nchw16c_guide_example():
    lay = layout_from_tag("aBcd16b", (2, 17, 5, 4))
    assert lay.padded_dims == (2, 32, 5, 4)
    assert lay.strides == (640, 320, 64, 16)
    assert lay.inner_blks == (16,) and lay.inner_idxs == (1,)
    assert lay.offset((1, 16, 2, 3)) == 1136
    assert lay.nbytes == 5120 and lay.logical_nbytes == 2720
    assert lay.overhead_pct == pytest.approx(100 * (5120 - 2720) / 2720)
    assert lay.alias == "nChw16c" and lay.block_elems == 16 and lay.innermost_run == 16
    N, C, H, W, Cp = 2, 17, 5, 4, 32
    n, c, h, w = grid(lay.dims)
    assert np.array_equal(lay.offsets(), n * Cp * H * W + (c // 16) * H * W * 16 + h * W * 16 + w * 16 + c % 16)


def test_offset_formula_text():
    lay = layout_from_tag("aBcd16b", (2, 17, 5, 4))
    assert lay.offset_formula((1, 16, 2, 3)) == (
        "n*Cp*H*W + (c/16)*H*W*16 + h*W*16 + w*16 + c%16 = 1*32*5*4 + 1*5*4*16 + 2*4*16 + 3*16 + 0 = 1136")
    assert layout_from_tag("abcd", (2, 3, 4, 5)).offset_formula((1, 2, 3, 4)) == (
        "n*C*H*W + c*H*W + h*W + w = 1*3*4*5 + 2*4*5 + 3*5 + 4 = 119")


@pytest.mark.parametrize("tag,dims,kind", [
    ("ABcd16b16a", (17, 33, 3, 3), "weight"), ("aBCde16c16b", (2, 17, 33, 3, 2), "weight"),
    ("ABcd4b16a4b", (17, 33, 3, 3), "weight"), ("AcdB32a2b", (17, 17, 3, 3), "weight"),
    ("aBdec16b", (2, 17, 3, 3, 3), "weight"), ("ABcd8a4b", (9, 5, 2, 3), "data"), ("a", (7,), "data"),
])
def test_offset_formula_value_matches_offset(tag, dims, kind):
    lay = layout_from_tag(tag, dims, kind=kind)
    offs = lay.offsets()
    for idx in [tuple(n - 1 for n in dims), tuple(n // 2 for n in dims)]:
        text = lay.offset_formula(idx)
        symbolic, numeric, total = text.split(" = ")
        assert int(total) == lay.offset(idx) == offs[idx]
        assert eval(numeric) == int(total)  # the numbers filled in really add up


def test_OIhw16i16o_offsets():
    O, I, H, W = 17, 33, 3, 3
    lay = layout_from_tag("ABcd16b16a", (O, I, H, W), kind="weight")
    Op, Ip = 32, 48
    assert lay.padded_dims == (Op, Ip, H, W) and lay.alias == "OIhw16i16o" and lay.innermost_run == 256
    o, i, h, w = grid(lay.dims)
    want = ((o // 16) * (Ip // 16) * H * W * 256 + (i // 16) * H * W * 256 + h * W * 256 + w * 256
            + (i % 16) * 16 + o % 16)
    assert np.array_equal(lay.offsets(), want)


def test_gOIhw16i16o_offsets():
    G, O, I, H, W = 2, 17, 33, 3, 2
    lay = layout_from_tag("aBCde16c16b", (G, O, I, H, W), kind="weight")
    Op, Ip = 32, 48
    assert lay.alias == "gOIhw16i16o"
    g, o, i, h, w = grid(lay.dims)
    want = (g * Op * Ip * H * W + (o // 16) * (Ip // 16) * H * W * 256 + (i // 16) * H * W * 256
            + h * W * 256 + w * 256 + (i % 16) * 16 + o % 16)
    assert np.array_equal(lay.offsets(), want)


def test_two_blocks_on_one_dim_follows_off_v():
    # OIhw4i16o4i: i is split into an outer and an inner 4-block around the 16o block.
    lay = layout_from_tag("ABcd4b16a4b", (17, 33, 3, 3), kind="weight")
    o, i, h, w = grid(lay.dims)
    want = ((o // 16) * 3 * 9 * 256 + (i // 16) * 9 * 256 + h * 3 * 256 + w * 256
            + ((i // 4) % 4) * 64 + (o % 16) * 4 + i % 4)
    assert np.array_equal(lay.offsets(), want)


# ---- inverse and padding ---------------------------------------------------------------------------

@pytest.mark.parametrize("tag,dims", [
    ("abcd", (2, 3, 5, 4)), ("acdb", (2, 3, 5, 4)), ("aBcd16b", (2, 17, 5, 4)), ("aBcd8b", (1, 3, 2, 2)),
    ("ABcd16b16a", (17, 33, 3, 3)), ("aBCde16c16b", (2, 17, 33, 3, 2)), ("Acdb32a", (17, 17, 3, 3)),
    ("AcdB32a2b", (17, 17, 3, 3)), ("ABcd4b16a4b", (17, 33, 3, 3)), ("AB16b16a", (20, 3)), ("a", (5,)),
])
def test_round_trip_and_padding_count(tag, dims):
    lay = layout_from_tag(tag, dims)
    offs = lay.offsets()
    total = lay.nbytes // lay.itemsize
    assert offs.min() >= 0 and offs.max() < total
    assert np.unique(offs).size == offs.size  # no two elements share a cell
    idx, valid = lay.elements_at(offs.ravel())
    assert valid.all()
    assert np.array_equal(idx, np.stack([g.ravel() for g in grid(dims)], axis=1))
    _, valid_all = lay.elements_at(np.arange(total))
    assert (~valid_all).sum() == total - math.prod(dims)  # padding cells
    idx_out, valid_out = lay.elements_at(np.array([-1, total, total + 5]))
    assert not valid_out.any() and (idx_out == -1).all()


def test_element_at():
    lay = layout_from_tag("aBcd16b", (2, 17, 5, 4))
    assert lay.element_at(1136) == (1, 16, 2, 3)
    assert lay.element_at(1137) is None  # c = 17 is padding
    assert lay.element_at(5120 // 4) is None and lay.element_at(-1) is None


def test_large_offsets_is_fast():
    lay = layout_from_tag("aBcd16b", (2, 64, 56, 56))
    t0 = time.perf_counter()
    offs = lay.offsets()
    idx, valid = lay.elements_at(offs)
    assert time.perf_counter() - t0 < 1.0
    assert offs.shape == (2, 64, 56, 56) and offs.dtype == np.int64 and valid.all()


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_random_tags_are_bijective(data):
    nd = data.draw(st.integers(1, 5))
    dims = data.draw(st.lists(st.integers(1, 7), min_size=nd, max_size=nd))
    order = data.draw(st.permutations(range(nd)))
    blocks = data.draw(st.lists(st.tuples(st.integers(0, nd - 1), st.sampled_from([2, 3, 4])), max_size=3))
    blocked = {d for d, _ in blocks}
    tag = "".join("abcde"[d].upper() if d in blocked else "abcde"[d] for d in order)
    tag += "".join(f"{b}{'abcde'[d]}" for d, b in blocks)
    lay = layout_from_tag(tag, dims)
    assert parse_tag(tag).ndims == nd
    offs = lay.offsets()
    assert np.unique(offs).size == offs.size and offs.max() < math.prod(lay.padded_dims)
    idx, valid = lay.elements_at(offs)
    assert valid.all() and np.array_equal(idx, np.stack([g.ravel() for g in grid(dims)], axis=1))
    i = tuple(n - 1 for n in dims)
    assert eval(lay.offset_formula(i).split(" = ")[1]) == lay.offset(i)


# ---- tag grammar ----------------------------------------------------------------------------------

@pytest.mark.parametrize("tag,needle", [
    ("", "empty"), ("aBcd16", "ends with a block size"), ("16aBcd", "starts with a block size"),
    ("ab?d", "'?'"), ("abcm", "'m'"), ("abca", "twice"), ("abd", "no 'c'"), ("aBcd", "no inner block"),
    ("abcd16b", "lowercase"), ("aBcd16B", "uppercase inner block"), ("aBcd16e", "not one of its 4"),
    ("aBcd0b", "block size of 0"), ("aB16bcd", "without a block size"), ("abcdefghijklm", "'m'"),
])
def test_malformed_tags(tag, needle):
    with pytest.raises(InputError) as err:
        parse_tag(tag)
    msg = str(err.value)
    assert needle in msg and ". " not in msg.rstrip(".")  # one sentence naming the problem
    with pytest.raises(InputError):
        layout_from_tag(tag, (2, 3, 4, 5))


def test_rank_dims_and_dtype_errors():
    with pytest.raises(InputError, match="4 dimensions"):
        layout_from_tag("abcd", (2, 3, 4))
    with pytest.raises(InputError, match="positive"):
        layout_from_tag("abc", (2, 0, 4))
    with pytest.raises(InputError, match="dtype"):
        layout_from_tag("abc", (2, 3, 4), "f64")
    with pytest.raises(InputError, match="outside"):
        layout_from_tag("abc", (2, 3, 4)).offset((0, 3, 0))


def test_dtypes_and_to_dict():
    assert DTYPE_SIZES == {"f32": 4, "bf16": 2, "f16": 2, "s8": 1, "u8": 1, "s32": 4}
    lay = layout_from_tag("aBcd16b", (2, 17, 5, 4), "bf16")
    assert lay.itemsize == 2 and lay.nbytes == 2560
    d = lay.to_dict()
    assert set(d) == {"tag", "alias", "dims", "padded_dims", "strides", "inner_blks", "inner_idxs", "dtype",
                      "nbytes", "logical_nbytes", "overhead_pct"}
    assert d["padded_dims"] == [2, 32, 5, 4] and d["alias"] == "nChw16c" and d["dtype"] == "bf16"


def test_aliases():
    assert alias_of("acdb", "weight") == "ohwi" and alias_of("acdb") == "nhwc"
    assert alias_of("ABcd16b16a", "weight") == "OIhw16i16o"
    assert alias_of("Acdb16a", "weight") == "Ohwi16o" and alias_of("Acdb32a", "weight") == "Ohwi32o"
    assert alias_of("aBCde16c16b", "weight") == "gOIhw16i16o" and alias_of("abcde", "weight") == "goihw"
    assert alias_of("aBcd8b") == "nChw8c" and alias_of("Abcd16a", "weight") == "Oihw16o"
    assert alias_of("ABcd8b8a", "weight") == "OIhw8i8o" and alias_of("aBCde8c8b", "weight") == "gOIhw8i8o"
    assert alias_of("aBdec16b") is None
    assert layout_from_tag("acdb", (1, 2, 3, 4), kind="weight").alias == "ohwi"


# ---- strided tensors ------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,strides,tag", [
    ((2, 3, 5, 4), (60, 20, 4, 1), "abcd"), ((2, 3, 5, 4), (60, 1, 12, 3), "acdb"),
    ((2, 3, 1, 1), (3, 1, 3, 3), "abcd"),  # 1x1 spatial: same bytes, plain preferred ((2, 1, 5, 4), (20, 20, 4, 1), "abcd"),
    ((4, 5), (1, 4), "ba"), ((2, 3, 4), (12, 1, 3), "acb"), ((3, 4, 5), (1, 15, 3), "bca"),
])
def test_layout_from_strides(shape, strides, tag):
    lay = layout_from_strides(shape, strides, "f32")
    assert lay.tag == tag
    assert all(a == b for a, b, n in zip(lay.strides, strides, shape) if n > 1)


@pytest.mark.parametrize("shape,strides", [((2, 3), (6, 2)), ((2, 3), (3, 3)), ((2, 3), (1, 1)), ((2, 3), (3,))])
def test_layout_from_strides_rejects_non_dense(shape, strides):
    with pytest.raises(InputError):
        layout_from_strides(shape, strides, "f32")
