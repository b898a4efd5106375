"""Descriptor parsing and printing, benchdnn defaults, validation messages and the op count."""

import itertools

import pytest

from explorer.core.errors import SpecError
from explorer.core.problem.spec import ConvSpec, out_size, parse_descriptor


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
    # benchdnn: ph = ((oh-1)*sh - ih + span) / 2 in C division = (222 - 224 + 7) / 2 = 2 (left), and the
    # right pad is what oh implies: 222 - 224 + 7 - 2 = 3. (This tool used to round the left pad up to 3.)
    s = parse_descriptor("mb1ic3ih224oc64oh112kh7sh2")
    assert (s.ph, s.pw, s.pad_r("h"), s.pad_r("w"), s.oh) == (2, 2, 3, 3, 112)


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
    # benchdnn's rule: once a w-value is written, iw and kw are required (they do not copy h-values)
    ("mb2ic16ih14iw14oc16oh14ow9kh3ph1", "kw", "required"),
    ("mb2ic17ih5iw4oc17oh5ow4kh3ph1", "kw", "w-values copy h-values only when no w-value is written"),
    ("mb2ic16ih10oc16oh2kh3", "ph", "negative left padding"),
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
    ("mb2ic16id4ih14oc16kh3", "kd", "required"),
    ("mb2ic16id4ih14iw14oc16kd3kh3", "kw", "required"),
    ("mb2ic16id4ih14oc16kd3kh3", "iw", "all h- and w-values or none"),
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
    assert s.exact_ops == _brute_force_ops(s)


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
    # benchdnn refuses this line ("setting `iw` was not specified"): dw and sw make the w-dim present.
    with pytest.raises(SpecError, match="iw .* was not given"):
        parse_descriptor("mb1ic1ih4oc1kh1dw1sw2")
    s = parse_descriptor("mb1ic1ih4iw4oc1kh1kw1dw1sw2")
    assert (s.dh, s.dw, s.sh, s.sw) == (0, 1, 1, 2)


# ---- benchdnn's full model: asymmetric pads, 1-D, 3-D, its op count (issue 11) -------------------------
def _benchdnn_count_ops(s: ConvSpec) -> int:
    """prb_t::count_ops of oneDNN's tests/benchdnn/conv/conv_aux.cpp, transcribed loop for loop."""
    v = {x: (s.out(x), s.dim(x)[0], s.dim(x)[1], s.dim(x)[2], s.dim(x)[3], s.dim(x)[5]) if x in s.dims
         else (1, 1, 1, 1, 0, 0) for x in "dhw"}
    (od, id_, kd, sd, pd, dd), (oh, ih, kh, sh, ph, dh), (ow, iw, kw, sw, pw, dw) = v["d"], v["h"], v["w"]
    sp_upper = ow * oh * od
    sp_lower = (ow - (kw + (kw - 1) * dw - 1)) * (oh - (kh + (kh - 1) * dh - 1)) * (od - (kd + (kd - 1) * dd - 1))
    # C++: double(sp_upper - sp_lower) / sp_lower, a division by 0.0 giving +inf (sp_upper >= 1)
    max_sp_error = (sp_upper - sp_lower) / sp_lower if sp_lower else float("inf")
    if max_sp_error < 1e-6:
        sp_ops = sp_upper * kd * kh * kw
    else:
        sp_ops = 0
        for a in range(od):
            for b in range(oh):
                for c in range(ow):
                    for i in range(kd):
                        z = a * sd - pd + i * (dd + 1)
                        if not 0 <= z < id_:
                            continue
                        for j in range(kh):
                            y = b * sh - ph + j * (dh + 1)
                            if not 0 <= y < ih:
                                continue
                            for k in range(kw):
                                x = c * sw - pw + k * (dw + 1)
                                sp_ops += 0 <= x < iw
    return 2 * s.mb * s.oc * s.ic // s.g * sp_ops


@pytest.mark.parametrize("desc, ops, exact", [
    # the examples, figures as benchdnn prints them
    ("mb1ic2048ih7iw7_oc512_kh1kw1_sh2sw2_ph3pw3", 102_760_448, 18_874_368),
    ("mb20ic4ih8oc6oh2kh3sh3ph1dh2", 34_560, 15_360),
    ('g1ic16oc16_ih5oh8kh3ph3_n"conv_basic_2d:gemm"', 230_400, 230_400),
])
def test_benchdnn_op_count_and_exact_count(desc, ops, exact):
    s = parse_descriptor(desc)
    assert (s.ops, s.exact_ops) == (ops, exact)
    assert bool(s.ops_note()) == (ops != exact)


@pytest.mark.parametrize("desc", [
    "mb2ic16ih14oc16oh14kh3ph1", "mb1ic2048ih7oc512oh7kh1sh2ph3", "mb20ic4ih8oc6oh2kh3sh3ph1dh2",
    "ic16oc16_ih5oh8kh3ph3", "ic3oc17_iw8ow4kw3pw1sw2", "g4ic20oc20_id5od5kd3pd1", "mb1ic3ih224oc64oh112kh3sh2",
    "mb1ic16id13ih1iw1oc16od4oh1ow1kd2kh1kw1sd2sh1sw1dd5dh0dw0pd1ph0pw0", "mb7ic1ih2oc1oh1kh3ph0",
])
def test_ops_is_benchdnns_count_ops(desc):
    s = parse_descriptor(desc)
    assert s.ops == _benchdnn_count_ops(s)


def test_given_output_derives_the_right_pad():
    s = parse_descriptor('g1ic16oc16_ih5oh8kh3ph3_n"conv_basic_2d:gemm"')
    assert (s.ph, s.pad_r("h"), s.pw, s.pad_r("w"), s.oh, s.ow) == (3, 2, 3, 2, 8, 8)
    assert s.asymmetric and s.torch_padding() == ((2, 2), (1, 0, 1, 0))
    # TensorFlow "same" padding with stride 2: nothing on top, one row at the bottom
    s = parse_descriptor("mb1ic3ih224oc64oh112kh3sh2")
    assert (s.ph, s.pad_r("h")) == (0, 1) and s.torch_padding() == ((0, 0), (0, 1, 0, 1))
    # a symmetric pad whose last row is never read is still plain PyTorch padding
    s = parse_descriptor("mb1ic3ih224oc64oh112kh7sh2ph3")
    assert (s.ph, s.pad_r("h"), s.asymmetric, s.torch_padding()) == (3, 2, False, ((3, 3), (0, 0, 0, 0)))


def test_one_d_and_three_d_problems():
    s = parse_descriptor('ic3oc17_iw8ow4kw3pw1sw2_n"conv_basic_1d:1st_stride_tail"')
    assert (s.ndims, s.dims, s.input_shape, s.weight_shape, s.output_shape) == (
        3, ("w",), (2, 3, 8), (17, 3, 3), (2, 17, 4))
    assert (s.pw, s.pad_r("w")) == (1, 0)
    s = parse_descriptor("g4ic20oc20_id5od5kd3pd1")  # h and w copy d
    assert (s.ndims, s.input_shape, s.weight_shape, s.output_shape) == (5, (2, 20, 5, 5, 5), (20, 5, 3, 3, 3),
                                                                        (2, 20, 5, 5, 5))
    s = parse_descriptor("mb1ic16id13ih1iw1oc16od4oh1ow1kd2kh1kw1sd2sh1sw1dd5dh0dw0pd1ph0pw0")
    assert (s.pd, s.pad_r("d"), s.od, s.torch_dilation) == (1, -1, 4, (6, 1, 1))


@pytest.mark.parametrize("desc", [
    'g1ic16oc16_ih5oh8kh3ph3_n"conv_basic_2d:gemm"', "ic3oc17_iw8ow4kw3pw1sw2", "g4ic20oc20_id5od5kd3pd1",
    "mb1ic16id13ih1iw1oc16od4oh1ow1kd2kh1kw1sd2sh1sw1dd5dh0dw0pd1ph0pw0", "mb2ic17ih5iw4oc17oh5ow4kh3kw3ph1pw1",
    "mb1ic3ih224oc64oh112kh3sh2", "mb7ic16iw13oc16ow3kw3sw2dw3pw1",
])
def test_new_forms_round_trip(desc):
    s = parse_descriptor(desc)
    for text in (s.descriptor(), s.descriptor(long=True), s.benchdnn_descriptor()):
        assert parse_descriptor(text) == s, text


def test_benchdnn_print_form():
    assert parse_descriptor("mb2ic16ih14oc16oh14kh3ph1").benchdnn_descriptor() == "ic16ih14oc16oh14kh3ph1"
    assert parse_descriptor("g4mb1ic20id5oc20kd3pd1").benchdnn_descriptor() == "g4mb1ic20id5oc20od5kd3pd1"
    assert parse_descriptor("mb2ic17ih5iw4oc17oh5ow4kh3kw3ph1pw1").descriptor() == "mb2ic17ih5iw4oc17oh5ow4kh3kw3ph1pw1"
