"""int8 problems (issue 32): --cfg=u8s8u8 and friends are timed on PyTorch's oneDNN int8 routes, with the error
against f32 and the kernel read back; float paths say why they do not run int8; mixed float types stay refused."""

import csv

import pytest
import torch

from explorer.core.errors import SpecError
from explorer.core.jobs.options import RunOptions
from explorer.core.jobs.run import run
from explorer.core.paths.base import INT8_PATHS, Tensors
from explorer.core.paths.int8 import prepare_int8, time_qconv
from explorer.core.paths.int8_quant import dequantize_output
from explorer.core.problem.batch import parse_batch
from explorer.core.problem.int8_config import int8_config
from explorer.core.problem.spec import option_refusal, parse_descriptor
from explorer.core.report.results import read_csv, write_csv
from explorer.core.session.store import spec_from_dict, spec_to_dict

DESC = "mb1ic16ih10oc16oh10kh3ph1"
SCALES = "src:common:0.25+wei:per_oc+dst:common:2"


@pytest.mark.parametrize("line,dtype", [("--cfg=u8s8u8", "u8s8u8"), ("--cfg=u8s8s32", "u8s8s32"),
                                        ("--dt=u8:s8:u8", "u8s8u8"), ("--dt=u8:s8:f32", "u8s8f32")])
def test_int8_words_are_honoured_as_the_dtype_column(line, dtype):
    assert option_refusal(line.split()[0]) == ""
    assert parse_descriptor(f"{line} {DESC}").dtype == dtype


def test_scales_and_zero_points_are_kept_and_bad_ones_refused_by_name():
    spec = parse_descriptor(f"--cfg=u8s8u8 --attr-scales={SCALES} --attr-zero-points=src:common:3 {DESC}")
    assert (spec.scales, spec.zero_points) == (SCALES, "src:common:3")
    for word in ("--attr-scales=src:per_dim_1", "--attr-zero-points=wei:common:1", "--attr-scales=src:common:-1"):
        assert word.split("=")[0] in option_refusal(word)
    with pytest.raises(SpecError, match="int8"):  # scales on a float conv would be dropped: refused
        parse_descriptor(f"--attr-scales=src:common:0.5 {DESC}")
    with pytest.raises(SpecError, match="f32:bf16:bf16"):
        parse_descriptor(f"--dt=f32:bf16:bf16 {DESC}")


def test_the_line_scales_are_the_ones_run():
    spec = parse_descriptor(f"--cfg=u8s8u8 --attr-scales={SCALES} --attr-zero-points=src:common:3 {DESC}")
    q = Tensors.make(spec).quant
    assert (q.src_scale, q.src_zp, q.dst_scale, q.dst_zp) == (0.25, 3, 2.0, 0)
    assert q.wei_scales.numel() == spec.oc and len(set(q.wei_scales.tolist())) > 1  # per_oc: one per channel


def test_int8_rows_on_the_prepacked_route_state_the_error_and_the_kernel():
    spec = parse_descriptor(f"--cfg=u8s8u8 --attr-scales=src:common:0.05 {DESC}")
    rows = {r.path: r for r in run(spec, RunOptions(paths=("dense", "channels_last"), budget_ms=10))}
    assert set(rows) == {"dense", "channels_last", *INT8_PATHS}
    for p in ("dense", "channels_last"):
        assert rows[p].status == "unsupported" and "qconv_prepacked" in rows[p].error
    r = rows["qconv_prepacked"]
    assert r.status == "ok" and r.median_ms > 0, r.error
    assert r.conv_impl, "the oneDNN verbose convolution line names the kernel"  # named; which depends on the CPU
    # the error stated is the dequantized output against the f32 conv on the dequantized inputs and weights
    t = Tensors.make(spec)
    ref = t.reference()
    out = dequantize_output(prepare_int8("qconv_prepacked", t).call_once(), t.quant)
    want = float((out - ref).abs().max())
    assert r.max_abs_err == pytest.approx(want) and r.rel_err == pytest.approx(want / float(ref.abs().max()))
    assert 0 < r.rel_err < 1


def test_a_float_dst_has_no_dst_rounding():
    """u8s8f32 with a zero src zero point: only the inputs were rounded, and the reference has the same rounded
    inputs, so the row's error is float summation order alone: far below the u8 dst's rounding step."""
    spec = parse_descriptor(f"--cfg=u8s8f32 --attr-zero-points=src:common:0 {DESC}")
    u8 = parse_descriptor(f"--cfg=u8s8u8 --attr-zero-points=src:common:0 {DESC}")
    f32_row = {r.path: r for r in run(spec, RunOptions(paths=("dense",), budget_ms=5, trace=False))}["qconv_prepacked"]
    u8_row = {r.path: r for r in run(u8, RunOptions(paths=("dense",), budget_ms=5, trace=False))}["qconv_prepacked"]
    assert f32_row.max_abs_err < Tensors.make(u8).quant.dst_scale / 100 < u8_row.max_abs_err


def test_float_problem_on_an_int8_path_is_unsupported():
    rows = run(parse_descriptor(DESC), RunOptions(paths=("qconv_prepacked",), budget_ms=5))
    assert rows[0].status == "unsupported" and "int8" in rows[0].error


def test_int8_columns_round_trip_csv_batch_and_session(tmp_path):
    spec = parse_descriptor(f"--cfg=u8s8u8 --attr-scales={SCALES} {DESC}")
    rows = run(spec, RunOptions(paths=("qconv_prepacked",), budget_ms=5, trace=False))
    write_csv(tmp_path / "r.csv", rows)
    back = read_csv(tmp_path / "r.csv")
    assert (back[0]["dtype"], back[0]["scales"]) == ("u8s8u8", SCALES) and float(back[0]["rel_err"]) > 0
    assert spec_from_dict(spec_to_dict(spec)) == spec
    b = parse_batch(f"--cfg=u8s8u8 --attr-scales={SCALES}\n{DESC}\n--reset\n{DESC}\n")
    assert [(p.spec.dtype, p.spec.scales) for p in b.points] == [("u8s8u8", SCALES), ("f32", "")]


def test_time_qconv_is_reusable_for_other_shapes():
    x, w = torch.randn(1, 8, 9, 9), torch.randn(8, 8, 1, 1) * 0.1
    ms, out = time_qconv(x, w, None, int8_config("u8s8u8"), (1, 1), (0, 0), (1, 1), 1, repeats=3)
    assert ms > 0 and out.shape == (1, 8, 9, 9)
    assert float((out - torch.nn.functional.conv2d(x, w)).abs().max()) < float(out.abs().max())
