"""Roofline numbers on hand-computed values."""

import pytest

from explorer.core.measure.machine import Peak
from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.results import Result
from explorer.core.report.roofline import (
    AI_DEFINITION,
    BYTES_DEFINITION,
    Ceiling,
    arithmetic_intensity,
    attainable,
    bytes_moved,
    ceiling_for,
    ceilings_from_peak,
    roofline,
    spec_from_row,
)

PEAK = Peak(fp32_gflops=100.0, bf16_gflops=400.0, bandwidth_gbs=10.0, threads=2, measured_at="now", key="k")


def test_bytes_and_intensity_by_hand():
    # 1x1 conv, mb1 ic16 8x8 -> oc16: ops = 2*1*16*16*64 = 32768
    s = parse_descriptor("mb1ic16ih8oc16kh1ph0")
    assert s.ops == 32768
    # input 16*64 + weight 16*16 + output 16*64 = 2304 elements, 4 bytes each
    assert bytes_moved(s) == 2304 * 4
    assert arithmetic_intensity(s) == pytest.approx(32768 / 9216)
    s16 = s.replace(dtype="bf16")
    assert bytes_moved(s16) == 2304 * 2 and arithmetic_intensity(s16) == pytest.approx(32768 / 4608)
    # grouped 3x3 with padding: taps inside the input only, weight ic/g
    g = parse_descriptor("g2mb1ic4ih3oc4kh3ph1")
    assert g.ops == 2 * 1 * 4 * 2 * (7 * 7)  # 7 taps per dim inside a 3-wide input
    assert bytes_moved(g) == (4 * 9 + 4 * 2 * 9 + 4 * 9) * 4
    assert "input + weight + output" in BYTES_DEFINITION and "op count" in AI_DEFINITION


def test_attainable_and_ceilings():
    assert attainable(2.0, 100.0, 10.0) == 20.0
    assert attainable(50.0, 100.0, 10.0) == 100.0
    c = Ceiling("fp32", 100.0, 10.0)
    assert c.ridge_ai == 10.0
    assert c.line(1.0, 100.0) == ([1.0, 10.0, 100.0], [10.0, 100.0, 100.0])
    assert c.line(20.0, 40.0) == ([20.0, 40.0], [100.0, 100.0])
    cs = ceilings_from_peak(PEAK)
    assert [c.name for c in cs] == ["fp32", "bf16"]
    assert ceiling_for("bf16", cs).peak_gflops == 400.0
    assert ceiling_for("f16", cs).name == "fp32" and ceiling_for("f32", cs).name == "fp32"
    no_bf16 = ceilings_from_peak(Peak(100.0, None, 10.0, 1, "", ""))
    assert [c.name for c in no_bf16] == ["fp32"] and ceiling_for("bf16", no_bf16).name == "fp32"


def test_roofline_points_from_results_and_rows():
    s = parse_descriptor("mb1ic16ih8oc16kh1ph0")  # AI = 3.5556 -> attainable fp32 35.56
    ok = Result(spec=s, path="dense", threads=2, median_ms=0.01, gflops=20.0, vary="mb=1")
    bad = Result(spec=s, path="native", threads=2, status="error")
    bf = Result(spec=s.replace(dtype="bf16"), path="mkldnn", threads=2, gflops=50.0)
    row = dict(ok.row(), gflops=10.0, threads=2, mb=1, g=1, ic=16, ih=8, iw=8, oc=16, kh=1, kw=1, sh=1, sw=1,
               ph=0, pw=0, dh=0, dw=0, bias=1)
    r = roofline([ok, bad, bf, row, {"status": "skipped"}], peak=PEAK)
    assert len(r.points) == 3
    p0, p1, p2 = r.points
    assert p0.ai == pytest.approx(32768 / 9216) and p0.attainable == pytest.approx(10 * 32768 / 9216)
    assert p0.efficiency == pytest.approx(20.0 / p0.attainable) and p0.bound == "memory"
    assert (p0.path, p0.vary, p0.ceiling, p0.ops, p0.bytes) == ("dense", "mb=1", "fp32", 32768, 9216)
    assert p1.ceiling == "bf16" and p1.ai == pytest.approx(32768 / 4608)
    assert p1.attainable == pytest.approx(10 * 32768 / 4608)
    assert p2.gflops == 10.0 and p2.ai == pytest.approx(p0.ai) and p2.threads == 2
    lo, hi = r.ai_range()
    assert lo == pytest.approx(p0.ai / 2) and hi == pytest.approx(40.0 * 2)  # bf16 ridge 400/10
    lines = r.lines()
    assert set(lines) == {"fp32", "bf16"}
    xs, ys = lines["fp32"]
    assert xs[1] == 10.0 and ys[-1] == 100.0
    assert "bytes moved" in r.definition


def test_compute_bound_point_and_spec_from_row():
    s = parse_descriptor("mb8ic256ih14oc256kh3ph1")
    ai = arithmetic_intensity(s)
    assert ai > 10  # right of the fp32 ridge at 10 FLOP/byte
    r = roofline([Result(spec=s, path="dense", threads=1, gflops=80.0)], peak=PEAK)
    assert r.points[0].attainable == 100.0 and r.points[0].bound == "compute"
    back = spec_from_row(Result(spec=s, path="dense", threads=1).row() | {
        k: getattr(s, k) for k in ("mb", "g", "ic", "ih", "iw", "oc", "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw")})
    assert back.desc == s.desc and back.ops == s.ops


def test_each_path_is_placed_at_the_bytes_it_really_moves():
    """Issue 12, item 5: with bytes_mode="path", padding and reorders move a path's point left."""
    from explorer.core.report.roofline import TRAFFIC_DEFINITION, path_bytes, reorder_bytes
    from explorer.core.trace.onednn import MemArg, Primitive

    s = parse_descriptor("mb2ic17ih5oc17oh5kh3ph1")

    def reorder(dims, src, dst):
        return Primitive("exec", "reorder", "cpu", "jit:uni", "undef",
                         {"src": MemArg("f32", tag=src), "dst": MemArg("f32", tag=dst)}, problem=dims)

    logical = bytes_moved(s)
    plain = Result(spec=s, path="native", threads=1, gflops=10.0, input_bytes=3400, weight_bytes=10404,
                   output_bytes=3400)
    dense = Result(spec=s, path="dense", threads=1, gflops=10.0, input_bytes=3400, weight_bytes=10404,
                   output_bytes=3400, trace=[reorder("2x17x5x5", "abcd", "aBcd8b"),
                                             reorder("17x17x3x3", "abcd", "ABcd8b8a"),
                                             reorder("2x17x5x5", "aBcd8b", "abcd")])
    assert path_bytes(plain, s) == logical  # stored as logical, no reorder
    moved, n = reorder_bytes(dense.trace)
    # input 3400 read + 2x24x5x5x4 = 4800 written, weight 10404 + 24x24x3x3x4 = 20736, output back 4800 + 3400
    assert n == 3 and moved == (3400 + 4800) + (10404 + 20736) + (4800 + 3400)
    r = roofline([plain, dense], peak=PEAK, bytes_mode="path")
    ai = {p.path: p.ai for p in r.points}
    assert ai["dense"] < ai["native"] and ai["native"] == pytest.approx(s.ops / logical)
    assert len({p.ai for p in roofline([plain, dense], peak=PEAK).points}) == 1  # logical: one AI for all
    assert "as the path stores them" in TRAFFIC_DEFINITION and "reorder" in TRAFFIC_DEFINITION
