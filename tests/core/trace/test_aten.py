"""The ATen view: one profiled call per path, its op chain, and the split of the median."""

import pytest

from explorer.core.jobs.options import RunOptions
from explorer.core.jobs.run import run
from explorer.core.paths.base import Tensors
from explorer.core.paths.registry import prepare
from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.results import CSV_COLUMNS, REQUIRED_COLUMNS
from explorer.core.trace.aten import AtenOp, chain_text, profile_call, time_split

# Big enough that PyTorch's dense conv dispatches to oneDNN here (tiny ones go to thnn_conv2d).
ONEDNN_SIZED = "mb1ic32ih28oc32oh28kh3ph1"


@pytest.fixture(scope="module")
def rows():
    res = run(parse_descriptor(ONEDNN_SIZED), RunOptions(paths=("dense", "native", "mkldnn_roundtrip"), budget_ms=10))
    return {r.path: r for r in res}


def test_dense_calls_onednn_at_both_levels(rows):
    r = rows["dense"]
    assert r.status == "ok", r.error
    assert r.aten_ops.startswith("aten::conv2d > aten::convolution > aten::_convolution > aten::mkldnn_convolution")
    assert any(p.op == "convolution" for p in r.trace)  # and oneDNN really ran it
    names = [o.name for o in r.aten]
    assert names.index("aten::conv2d") < names.index("aten::mkldnn_convolution")


def test_native_runs_pytorchs_own_kernel_and_no_primitive(rows):
    r = rows["native"]
    assert "aten::_slow_conv2d_forward" in r.aten_ops and "mkldnn" not in r.aten_ops
    assert r.trace == []
    assert r.onednn_ms == 0 and r.reorder_ms == 0 and r.other_ms == pytest.approx(r.median_ms)


def test_roundtrip_chain_has_the_conversions(rows):
    tops = rows["mkldnn_roundtrip"].aten_ops.split(" | ")
    assert tops[0] == "aten::to_mkldnn" and tops[-1].startswith("aten::to_dense")
    assert "aten::mkldnn_convolution" in tops[1]


def test_split_adds_up_to_the_median_and_is_in_the_csv(rows):
    for r in rows.values():
        assert r.onednn_ms >= 0 and r.reorder_ms >= 0 and r.other_ms >= 0
        assert r.onednn_ms + r.reorder_ms + r.other_ms == pytest.approx(r.median_ms, rel=1e-9)
        row = r.row()
        assert row["aten_ops"] == r.aten_ops and float(row["other_ms"]) == pytest.approx(r.other_ms, rel=1e-5)
    new = ("aten_ops", "compile_ms", "onednn_ms", "reorder_ms", "other_ms")
    assert all(CSV_COLUMNS.index(c) > CSV_COLUMNS.index("vary") for c in new)
    assert CSV_COLUMNS[: len(REQUIRED_COLUMNS)] == REQUIRED_COLUMNS


def test_time_split_scales_a_slow_traced_call_down():
    assert time_split(1.0, 0.2, 0.1) == pytest.approx((0.2, 0.1, 0.7))
    on, re_, rest = time_split(1.0, 1.5, 0.5)
    assert (on, re_, rest) == pytest.approx((0.75, 0.25, 0.0))
    assert time_split(None, 0.1, 0.1) is None


def test_chain_text_nests_siblings_and_skips_bookkeeping():
    ops = [AtenOp("forward", 0, 0, 10), AtenOp("aten::to_mkldnn", 1, 1, 2), AtenOp("aten::empty", 1, 3, 0.1),
           AtenOp("aten::to_dense", 1, 4, 5), AtenOp("aten::_to_dense", 2, 4.1, 4), AtenOp("aten::view", 0, 11, 1),
           AtenOp("aten::add", 0, 12, 1)]
    assert chain_text(ops) == "forward > (aten::to_mkldnn, aten::to_dense > aten::_to_dense) | aten::add"


def test_profile_call_keeps_only_the_callers_thread_and_starts_at_zero():
    t = Tensors.make(parse_descriptor("mb1ic8ih8oc8oh8kh3ph1"))
    p = prepare("dense", t)
    p.call_once()
    prof = profile_call(p.fn, p.context)
    assert prof.ops and prof.ops[0].depth == 0 and prof.ops[0].start_us == 0
    assert prof.ops[0].name == "aten::conv2d"
    assert all(o.dur_us >= 0 for o in prof.ops)


def _csv_cells(chain):
    """The run CSV of one result whose aten_ops is `chain`, read back with csv at its default field limit."""
    import csv
    import io

    from explorer.core.problem.spec import parse_descriptor
    from explorer.core.report.results import Result, rows_to_csv_text

    r = Result(spec=parse_descriptor("mb1ic4ih8oc4oh8kh3ph1"), path="dense", threads=1, aten_ops=chain)
    rows = list(csv.DictReader(io.StringIO(rows_to_csv_text([r.row()]))))
    return rows[0]


def test_a_whole_models_aten_chain_fits_a_csv_cell_read_at_the_default_limit():
    """main wrote the chain as it was: 20,000 ops made a 400 KB cell that csv refuses ('field larger than
    field limit')."""
    chain = chain_text([AtenOp(f"aten::op_{i}", 0, float(i), 1.0) for i in range(20000)])
    row = _csv_cells(chain)
    assert all(len(v.encode()) <= 32 * 1024 for v in row.values())
    cell = row["aten_ops"]
    assert cell.startswith("aten::op_0 | aten::op_1 | ") and "more bytes of ops left out" in cell


def test_repeated_top_level_ops_are_one_entry_with_their_count():
    ops = [AtenOp("aten::conv2d", 0, 0.0, 1.0)] + [AtenOp("aten::add_", 0, float(i), 1.0) for i in range(1, 3001)]
    cell = _csv_cells(chain_text(ops))["aten_ops"]
    assert cell == "aten::conv2d | aten::add_ (x3000)"
