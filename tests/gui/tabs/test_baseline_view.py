"""BaselineView: CSV baselines overlaid dashed on the sweep charts, comparison table ratios, bad files."""

import math

import pytest

from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.results import Result, write_csv

DESC = "mb1ic8ih8oc8kh3ph1"


def _results(scale=1.0, mbs=(1, 2, 4), paths=("dense", "mkldnn"), isa=""):
    out = []
    for mb in mbs:
        spec = parse_descriptor(DESC).replace(mb=mb)
        for i, p in enumerate(paths):
            med = (0.1 + 0.05 * i) * mb * scale
            out.append(Result(spec=spec, path=p, threads=2, samples=10, median_ms=med, p25_ms=med * 0.9,
                              p75_ms=med * 1.1, iqr_ms=med * 0.2, gflops=spec.ops / (med / 1e3) / 1e9,
                              vary=f"mb={mb}", isa=isa))
    return out


@pytest.fixture
def views(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("MKLDNN_EXPLORER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("MKLDNN_EXPLORER_NO_DIALOGS", "1")
    from explorer.gui.tabs.baseline_view import BaselineView
    from explorer.gui.tabs.sweep_view import SweepView

    sv, bv = SweepView(), BaselineView()
    for w in (sv, bv):
        qtbot.addWidget(w)
    sv.resize(1000, 560)
    bv.attach(sv)
    yield sv, bv
    assert sv.shutdown(2000)


def test_baseline_overlay_and_comparison_ratios(views, tmp_path):
    sv, bv = views
    a = tmp_path / "other_machine.csv"
    write_csv(a, _results(scale=1.0, isa="avx2"))
    assert bv.open_csv(a)
    sv.redraw_now()
    assert set(sv.line.baseline_curves) == {("other_machine.csv", "dense"), ("other_machine.csv", "mkldnn")}
    from PySide6.QtCore import Qt

    assert all(c.opts["pen"].style() == Qt.DashLine for c in sv.line.baseline_curves.values())
    # current rows: twice as fast, plus one row the baseline does not have
    cur = _results(scale=0.5, isa="avx512_core") + _results(scale=0.5, mbs=(8,), paths=("dense",))
    bv.set_current(cur)
    c = bv.comparison
    from explorer.core.report.compare import row_key

    assert len(c.matched) == 6, ([row_key(r) for r in c.only_a][:2], [row_key(r) for r in c.only_b][:2])
    assert len(c.only_b) == 1 and not c.only_a
    assert math.isclose(c.geomean, 2.0, rel_tol=1e-3)  # speedup A/B: B twice as fast
    assert c.verdict == "B faster"
    m = bv.model
    assert m.rowCount() == 7 and m.kinds() == {"matched": 6, "only B": 1}
    assert all(math.isclose(m.ratio(i), 2.0, rel_tol=1e-3) for i in range(6))
    assert m.data(m.index(0, 8)) == "2.000x" and m.data(m.index(0, 9)) == "B faster"
    from explorer.gui.tabs.baseline_view import COLUMNS

    a_isa, b_isa = COLUMNS.index("A isa"), COLUMNS.index("B isa")  # the ISA each side ran with, side by side
    assert m.data(m.index(0, a_isa)) == "avx2" and m.data(m.index(0, b_isa)) == "avx512_core"
    assert "2.000x" in bv.summary.text() and "1 only in B" in bv.summary.text()
    # a second baseline compared against the first
    bv.add_rows(_results(scale=2.0), "slow")
    bv.set_pair("other_machine.csv", "slow")
    assert math.isclose(bv.comparison.geomean, 0.5, rel_tol=1e-3)
    assert bv.comparison.verdict == "B slower"
    bv.clear()
    sv.redraw_now()
    assert not sv.line.baseline_curves and bv.comparison is None


def test_bad_csv_is_reported_and_nothing_is_lost(views, tmp_path):
    sv, bv = views
    good = tmp_path / "good.csv"
    write_csv(good, _results())
    assert bv.open_csv(good)
    bad = tmp_path / "bad.csv"
    lines = good.read_text().splitlines()
    bad.write_text("\n".join(lines[:2] + [lines[2][:40]]) + "\n")
    assert not bv.open_csv(bad)
    assert "line 3" in bv.last_error
    assert list(bv.baselines) == ["good.csv"] and bv.a_combo.count() == 1
    assert "line 3" in bv.summary.text()


def test_batch_baseline_draws_dashed_outlines(views, tmp_path):
    sv, bv = views
    vary_mbs = (1, 2)
    rows = _results(mbs=vary_mbs)
    for r in rows:
        r.vary = ""
    bv.add_rows(rows, "batch run")
    sv.redraw_now()
    assert sv.data.mode == "batch" and len(sv.data.layers) == len(vary_mbs)
    assert sv.stack.currentWidget() is sv.bars
    assert sum(len(v) for v in sv.data.baselines[0].series.values()) == 4


def test_a_csv_of_several_hosts_opens_as_one_baseline_per_host(views, tmp_path):
    from explorer.core.fleet.hosts import CLUSTER_COLUMNS
    from explorer.core.report.results import rows_to_csv_text

    sv, bv = views
    rows = [{**r.row(), "host": host, "worker": f"tcp://{host}:1"}
            for host, scale in (("fast", 0.5), ("slow", 1.0)) for r in _results(scale=scale)]
    path = tmp_path / "fleet.csv"
    path.write_text(rows_to_csv_text(rows, CLUSTER_COLUMNS))
    assert bv.open_csv(path)
    assert [bv.a_combo.itemText(i) for i in range(bv.a_combo.count())] == ["fleet.csv @ fast", "fleet.csv @ slow"]
    c = bv.comparison
    assert (c.a_label, c.b_label) == ("fleet.csv @ fast", "fleet.csv @ slow") and len(c.matched) == 6
    assert math.isclose(c.geomean, 0.5, rel_tol=1e-3)  # A (fast) / B (slow): B is half as fast
