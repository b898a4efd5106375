"""Listing mode over the shipped oneDNN shape files (issue 11): every line is benchdnn's problem.

Three independent checks: (1) every problem line of every shipped oneDNN file is accepted; (2) the right
pads that oneDNN's generated files encode in their names (`ph-bottom(N)`, `pw-right(N)`, `pd-back(N)`)
agree with ours, and `ops` agrees with a line-for-line transcription of benchdnn's prb_t::count_ops;
(3) a hand-verified sample, field by field.
"""

import re

import pytest

from explorer.core.problem.batch import load_batch, shipped_batches, shipped_dir
from explorer.core.problem.listing import list_batch, spec_facts, summary
from tests.core.problem.test_spec import _benchdnn_count_ops

ONEDNN = [n for n in shipped_batches() if n != "quick"]


def test_the_required_networks_ship_with_licence_and_source():
    required = {"googlenet_v1", "googlenet_v3", "mobilenet", "mobilenet_dw", "resnet_50", "resnext_101",
                "ssd_300_voc0712", "yolov2", "densnet", "efficientdet", "vgg_19", "unet", "3d_unet", "3d_i3d",
                "1d_wavenet", "dilated", "dilated_rfcn"}
    assert required <= set(ONEDNN)
    assert (shipped_dir() / "LICENSE-oneDNN").read_text().lstrip().startswith("Apache License")
    for name in ONEDNN:
        head = (shipped_dir() / f"{name}.txt").read_text().splitlines()[:5]
        assert "Apache License" in " ".join(head)
        assert f"tests/benchdnn/inputs/conv/shapes_{name}" in head[1]


@pytest.mark.parametrize("name", ONEDNN)
def test_every_line_of_a_shipped_onednn_file_is_benchdnns_problem(name):
    batch = load_batch(name, sizes=False)
    entries = list_batch(batch)
    assert summary(entries)["bad"] == 0, [e.error for e in entries if e.bad][:3]
    # a line whose options are not honoured (mem_strided's --strides=) is refused naming its word
    assert all(p.refused and p.error.startswith(f"line {p.line}: --") for p in batch.skipped), batch.refused_lines()
    for e in (e for e in entries if e.spec is not None):
        s = e.spec
        for tag, x in (("ph-bottom", "h"), ("pw-right", "w"), ("pd-back", "d")):
            m = re.search(tag + r"\((-?\d+)\)", s.name)
            if m:
                assert s.pad_r(x) == int(m.group(1)), (e.line, s.name)
        if s.od * s.oh * s.ow * s.kd * s.kh * s.kw <= 4000 or s.ops != s.exact_ops:
            assert s.ops == _benchdnn_count_ops(s), (e.line, s.descriptor())


def _entry(name, line):
    return next(e for e in list_batch(load_batch(name, sizes=False)) if e.line == line)


# (file, line number): facts worked out by hand from benchdnn's rules (see the notes)
HAND = [
    # right pad from the given oh: (8-1)*1 - 5 + 3 - 3 = 2; taps per dim 0+1+2+3+3+3+2+1 = 15 -> 2*2*16*16*15^2
    ("basic", 49, dict(ndims=4, mb=2, g=1, ic=16, oc=16, input=[5, 5], kernel=[3, 3], stride=[1, 1], pad_l=[3, 3],
                       pad_r=[2, 2], output=[8, 8], ops=230_400, exact_ops=230_400)),
    # 1-D, same per-dim count: 2*2*16*16*15
    ("basic", 28, dict(ndims=3, input=[5], kernel=[3], pad_l=[3], pad_r=[2], output=[8], ops=15_360)),
    # 3-D depthwise stride 2: taps per dim 2+3+3+3 = 11 -> 2*2*17*1*11^3; right pad 3*2 - 8 + 3 - 1 = 0
    ("basic", 77, dict(ndims=5, g=17, input=[8, 8, 8], stride=[2, 2, 2], pad_l=[1, 1, 1], pad_r=[0, 0, 0],
                       output=[4, 4, 4], ops=90_508)),
    # TensorFlow "same", stride 2: left 0, right 255*2 - 512 + 3 = 1; taps 256*3 - 1 = 767 -> 2*32*3*767^2
    ("efficientdet", 9, dict(input=[512, 512], pad_l=[0, 0], pad_r=[1, 1], output=[256, 256],
                              ops=112_951_488, exact_ops=112_951_488, torch_pad=[0, 1, 0, 1])),
    # 1x1 with padding: benchdnn's shortcut counts all 7*7 taps; exact: outputs 0..1 and 5..6 read padding
    ("deepbench_inference_server", 56, dict(mb=1, pad_l=[3, 3], pad_r=[3, 3], output=[7, 7],
                                            ops=102_760_448, exact_ops=18_874_368)),
    # dilated: sp_lower = (2 - 6)^2 = 16 < sp_upper = 4 makes the error negative: shortcut; exact 15,360
    ("dilated", 11, dict(mb=20, pad_l=[1, 1], pad_r=[1, 1], output=[2, 2], dilation=[2, 2],
                         ops=34_560, exact_ops=15_360)),
    # 1-D WaveNet: 2*32*32*84349*2, no padding
    ("1d_wavenet", 8, dict(ndims=3, mb=1, input=[84350], output=[84349], pad_l=[0], pad_r=[0], ops=345_493_504)),
    # 3-D U-Net: all taps inside, 2*3*32 * 114*130*130*27
    ("3d_unet", 9, dict(ndims=5, input=[116, 132, 132], output=[114, 130, 130], pad_l=[0, 0, 0], pad_r=[0, 0, 0],
                         ops=9_987_494_400)),
]


@pytest.mark.parametrize("name, line, facts", HAND)
def test_hand_verified_sample(name, line, facts):
    e = _entry(name, line)
    got = spec_facts(e.spec)
    for k, v in facts.items():
        assert got[k] == v, (k, got[k], v)
    assert bool(got["ops_note"]) == (got["ops"] != got["exact_ops"])


@pytest.mark.parametrize("words, shown", [
    ("--dt=bf16", "dtype bf16"),
    ("--attr-post-ops=relu", "post_ops relu"),
    ("--stag=axb --dtag=axb", "io_tag axb"),
    ("--cfg=u8s8s32", "dtype u8s8s32"),
    ("--dt=u8:s8:u8 --attr-scales=src:common:0.5", "scales src:common:0.5"),
])
def test_a_listed_problem_names_every_honoured_word(words, shown):
    """--list (run and batch) once printed a relu, bf16, axb or int8 line exactly as the plain f32 conv: the
    words were honoured when run but dropped from the listing (and from its --json)."""
    from explorer.core.problem.listing import Entry, format_entry
    from explorer.core.problem.spec import parse_descriptor

    spec = parse_descriptor(f"{words} mb1ic8ih8oc8oh8kh3ph1", sizes=False)
    text = format_entry(Entry("", None, spec))
    assert shown in text, text
    key, value = shown.split(" ", 1)
    assert spec_facts(spec)["dtype" if key == "dtype" else key] == value
    plain = format_entry(Entry("", None, parse_descriptor("mb1ic8ih8oc8oh8kh3ph1", sizes=False)))
    assert "dtype" not in plain and "post_ops" not in plain
