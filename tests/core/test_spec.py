"""Descriptor parsing and printing, benchdnn defaults, validation messages and the op count."""

import itertools

import pytest

from explorer.core.errors import SpecError
from explorer.core.spec import ConvSpec, out_size, parse_descriptor


def test_short_form_with_name_and_groups():
    s = parse_descriptor('g32mb1ic32ih112oc32oh112kh3ph1n"name"')
    assert (s.g, s.mb, s.ic, s.ih, s.iw, s.oc, s.oh, s.ow, s.kh, s.kw) == (32, 1, 32, 112, 112, 32, 112, 112, 3, 3)
    assert (s.sh, s.sw, s.ph, s.pw, s.dh, s.dw, s.name) == (1, 1, 1, 1, 0, 0, "name")


def test_long_form():
    s = parse_descriptor('mb32_g1ic3oc32_ih224oh112kh3sh2dh0ph1_iw224ow112kw3sw2dw0pw1_n"x"')
    assert (s.mb, s.ic, s.oc, s.ih, s.oh, s.sh, s.ph, s.iw, s.ow, s.sw, s.pw, s.name) == (
        32, 3, 32, 224, 112, 2, 1, 224, 112, 2, 1, "x")


def test_benchdnn_defaults():
    s = parse_descriptor("ic16ih14oc16kh3")
    assert (s.mb, s.g, s.sh, s.sw, s.dh, s.dw, s.ph, s.pw, s.iw, s.kw) == (2, 1, 1, 1, 0, 0, 0, 0, 14, 3)
    assert s.oh == 12 and s.ow == 12


def test_padding_computed_from_given_output():
    s = parse_descriptor("mb1ic3ih224oc64oh112kh7sh2")
    assert s.ph == 3 and s.pw == 3 and s.oh == 112


def test_w_values_copy_h_values_only_when_absent():
    s = parse_descriptor("mb1ic8ih10iw20oc8kh3kw1ph1pw0")
    assert (s.ih, s.iw, s.kh, s.kw, s.ph, s.pw, s.oh, s.ow) == (10, 20, 3, 1, 1, 0, 10, 20)


def test_dilation_is_zero_based():
    s = parse_descriptor("mb1ic256ih33oc256oh33kh3ph2dh1")
    assert s.torch_dilation == (2, 2) and s.oh == 33


def test_pasted_batch_line_and_verbose_line():
    s = parse_descriptor("--dir=FWD_D --cfg=bf16bf16bf16 mb2ic16ih14oc16oh14kh3ph1  # a comment")
    assert s.dtype == "bf16" and s.bias is False and s.ic == 16
    line = ("onednn_verbose,v1,primitive,exec,cpu,convolution,jit:avx512_core,forward_training,"
            "src:f32:ap:blocked:aBcd16b::f0 wei:f32:ap:blocked:ABcd16b16a::f0 bia:f32:a:blocked:a::f0 "
            "dst:f32:ap:blocked:aBcd16b::f0,attr-scratchpad:user,alg:convolution_direct,"
            "mb2_ic17oc17_ih5oh5kh3sh1dh0ph1_iw4ow4kw3sw1dw0pw1,0.0090332")
    s = parse_descriptor(line)
    assert (s.mb, s.ic, s.oc, s.ih, s.iw, s.oh, s.ow) == (2, 17, 17, 5, 4, 5, 4)


# Lines from oneDNN's own batch files (tests/benchdnn/inputs/conv/shapes_resnet_50 and friends).
BENCHDNN_LINES = [
    'mb1ic3ih224oc64oh112kh7sh2ph3n"resnet_50:conv1"',
    'mb1ic64ih56oc256oh56kh1ph0n"resnet_50:res2a_branch1"',
    'mb1ic256ih56oc128oh28kh1sh2ph0n"resnet_50:res3a_branch2a"',
    'g32mb1ic32ih112oc32oh112kh3ph1n"mobilenet:conv2_1/dw"',
    'mb128_g32ic256oc256_ih56oh56kh3sh1dh0ph1_iw56ow56kw3sw1dw0pw1_n"resnext_101:res2a_branch2b"',
]


@pytest.mark.parametrize("line", BENCHDNN_LINES)
def test_round_trip_on_benchdnn_lines(line):
    s = parse_descriptor(line)
    assert parse_descriptor(s.descriptor()) == s
    assert parse_descriptor(s.descriptor(long=True)) == s


def test_round_trip_over_a_grid():
    for ih, kh, sh, ph, dh, iw in itertools.product((5, 8, 13), (1, 3, 4), (1, 2, 3), (0, 1, 2), (0, 1), (5, 9)):
        s = ConvSpec(mb=1, ic=4, oc=4, ih=ih, iw=iw, kh=kh, kw=kh, sh=sh, sw=sh, ph=ph, pw=ph, dh=dh, dw=dh)
        try:
            s.validate()
        except SpecError:
            continue
        assert parse_descriptor(s.descriptor()) == s, s.descriptor()
        assert parse_descriptor(s.descriptor(long=True)) == s


@pytest.mark.parametrize("desc, field, words", [
    ("mb2ic16ih14oc16oh14kh3ph1g3", "g", "does not divide ic"),
    ("mb2ic18ih14oc16oh14kh3ph1g3", "g", "does not divide oc"),
    ("mb2ic16ih14oc16oh13kh3ph1", "oh", "does not match"),
    ("mb2ic16ih14iw14oc16oh14ow9kh3ph1", "ow", "does not match"),
    ("mb2ic16ih3oc16kh9", "kh", "more than the padded input"),
    ("mb2ic16ih5oc16kh3dh3", "kh", "dilation"),
    ("mb0ic16ih14oc16kh3", "mb", "positive"),
    ("mb2ic16ih14oc16kh3sh0", "sh", "positive"),
    ("mb2ic16ih14oc16kh3zz4", "zz", "unknown key"),
    ("mb2ic16ih14oc16kh3mb4", "mb", "twice"),
    ("mb2oc16ih14kh3", "ic", "required"),
    ("mb2ic16oc16kh3", "ih", "required"),
    ("mb2ic16ih14oc16", "kh", "required"),
    ("mb2ic16ih99999999oc16kh3", "ih", "too large"),
    ("mb2ic16id4ih14oc16kh3", "id", "3-D"),
    ("mb2ic16ih14oc16kh3$", "desc", "cannot read"),
    ("", "desc", "empty"),
    ("mb2ic-16ih14oc16kh3", "ic", "negative"),
])
def test_validation_names_the_field(desc, field, words):
    with pytest.raises(SpecError) as e:
        parse_descriptor(desc)
    assert e.value.field == field
    msg = str(e.value)
    assert words in msg and msg.endswith(".") and "\n" not in msg


def test_huge_tensor_refused_before_allocating():
    with pytest.raises(SpecError, match="too large to allocate"):
        parse_descriptor("mb100000ic4096ih4096oc16kh3")


def _brute_force_ops(s: ConvSpec) -> int:
    taps = 0
    for oy in range(s.oh):
        for ox in range(s.ow):
            for ky in range(s.kh):
                for kx in range(s.kw):
                    iy = oy * s.sh - s.ph + ky * (s.dh + 1)
                    ix = ox * s.sw - s.pw + kx * (s.dw + 1)
                    taps += 0 <= iy < s.ih and 0 <= ix < s.iw
    return 2 * s.mb * s.oc * (s.ic // s.g) * taps


def test_op_count_without_padding_is_the_textbook_formula():
    s = parse_descriptor("mb2ic16ih14oc32kh3")  # no padding: every tap counts
    assert s.ops == 2 * 2 * 32 * 16 * 12 * 12 * 9


def test_op_count_by_hand_with_padding():
    # 3x3 input, 3x3 kernel, pad 1: per dim the 3 outputs see 2, 3, 2 taps -> 7*7 = 49 taps.
    s = parse_descriptor("mb1ic1ih3oc1kh3ph1")
    assert s.ops == 2 * 49


@pytest.mark.parametrize("desc", [
    "mb2ic16ih14oc16oh14kh3ph1", "mb1ic3ih23oc8kh7sh2ph3", "mb1ic8ih17iw12oc8kh3kw5ph2pw1dh1dw2",
    "g4mb1ic8ih10oc8kh3sh3ph1", "mb1ic2ih6oc2kh2ph1sh2dh2",
])
def test_op_count_matches_brute_force(desc):
    s = parse_descriptor(desc)
    assert s.ops == _brute_force_ops(s)


def test_out_size_matches_torch():
    import torch

    x = torch.zeros(1, 1, 17, 17)
    for k, st, p, d in itertools.product((1, 3, 5), (1, 2, 3), (0, 1, 2), (0, 1)):
        if (k - 1) * (d + 1) + 1 > 17 + 2 * p:
            continue
        y = torch.nn.functional.conv2d(x, torch.zeros(1, 1, k, k), stride=st, padding=p, dilation=d + 1)
        assert y.shape[-1] == out_size(17, k, st, p, d)


def test_one_d_form_has_unit_height():
    s = parse_descriptor("ic16iw30oc16kw3")
    assert (s.ih, s.kh, s.oh, s.iw, s.kw, s.ow) == (1, 1, 1, 30, 3, 28)
    assert parse_descriptor(s.descriptor()) == s


def test_h_values_never_copy_w_values():
    s = parse_descriptor("mb1ic1ih4oc1kh1dw1sw2")
    assert (s.dh, s.dw, s.sh, s.sw) == (0, 1, 1, 2)
