"""Issue 12, items 6 and 10: batch results answer "does it help my network?", with whole layer names, a log
axis for small layers, and keys that never cover data."""

import pytest

from explorer.core.report.results import Result


def _batch_view(qtbot, noisy_paths=()):
    from explorer.core.jobs.options import RunOptions
    from explorer.gui.tabs.sweep_view import SweepView

    v = SweepView()
    qtbot.addWidget(v)
    v.resize(1300, 700)
    v.show()
    v.set_options(RunOptions(paths=("dense", "mkldnn"), budget_ms=5.0, trace=False))
    assert v.set_batch("resnet_50")
    pts = [p for p in v.points if not p.skipped]
    # what a finished batch leaves (rows as the worker delivers them), without timing 40 convolutions
    from explorer.core.session.state import SweepRows

    v._configure(v.points, "batch", ("dense", "mkldnn"), [])
    for i, p in enumerate(pts):
        for path, ms in (("dense", 1.0 + i), ("mkldnn", (1.0 + i) / 2)):
            r = Result(spec=p.spec, path=path, threads=1, median_ms=ms, p25_ms=ms, p75_ms=ms, gflops=1.0,
                       quality="noisy" if path in noisy_paths else "ok")
            v.session.apply(SweepRows([(p.index, r)]))  # the rows live in the view's session model
    v.redraw_now()
    return v, pts


@pytest.fixture
def batch_view(qtbot):
    v, pts = _batch_view(qtbot)
    yield v, pts
    assert v.shutdown(2000)


def test_whole_layer_names_under_the_bars(batch_view):
    v, pts = batch_view
    ax = v.bars.plot.getAxis("bottom")
    assert ax.rotated
    names = set(ax.rotated_names.values())
    assert "res2a_branch2b*3" in names and "res5a_branch2b*3" in names  # whole, never cut to 12 characters
    assert len(names) == len(pts)  # room for every layer at this width
    assert "resnet_50" in v.bars.plot.getAxis("bottom").labelText  # the shared prefix is in the axis label
    # the speedup bars get the same names
    assert set(v.speedup.plot.getAxis("bottom").rotated_names.values()) == names


def test_network_total_and_geomean_are_shown(batch_view):
    v, pts = batch_view
    assert v.total_label.isVisible()
    text = v.total_label.text()
    assert "Network total" in text and "*N" in text and "2.00x" in text and "geomean 2.00x" in text
    s = v.batch_summary()
    assert s.instances > s.layers == len(pts)  # *N counts weight the total


def test_log_axis_option_for_small_layers(batch_view):
    v, _ = batch_view
    v.log_y.setChecked(True)
    v.redraw_now()
    assert v.bars.log_y and v.bars.plot.ctrl.logYCheck.isChecked()


def test_keys_are_above_the_plot_not_over_the_data(batch_view):
    v, _ = batch_view
    for chart in (v.bars, v.speedup, v.line):
        assert not chart.legend.isVisible()
    assert [k[0] for k in v.bars.keys] == ["dense", "mkldnn"]
    title = v.bars.plot.titleLabel.text
    assert "dense" in title and "mkldnn" in title and "&#9632;" in title


def test_switching_back_to_fields_leaves_no_bars(batch_view):
    v, _ = batch_view
    v.set_batch(None)
    v.redraw_now()
    assert not v.total_label.isVisible()
    assert len(v.results()) > 0  # the last batch's rows stay exportable until the next run


def test_network_total_line_marks_noisy_rows_and_leaves_their_ratios_out(qtbot):
    """Issue 26 #1: the window's batch line over noisy rows carried plain ratios ("= 1.37x (geomean 1.31x)")."""
    v, pts = _batch_view(qtbot, noisy_paths=("mkldnn",))  # every mkldnn row noisy, as on a loaded host
    try:
        text = v.total_label.text()
        assert "geomean" not in text and "2.00x" not in text  # no ratio built on a noisy row
        assert "~" in text and f"({len(pts)} noisy)" in text and "no trusted ratio" in text
    finally:
        assert v.shutdown(2000)


def test_no_total_under_a_batch_its_rows_were_not_made_from(qtbot):
    """Issue 34: after a batch, choosing another batch not yet run showed the last rows' sum as that batch's."""
    v, _ = _batch_view(qtbot)
    assert v.total_label.isVisible()
    assert v.set_batch(_other(v))
    v.redraw_now()
    assert v.batch_summary() is None
    assert not v.total_label.isVisible()
    assert len(v.results()) > 0  # the rows stay exportable, only their total is not shown under another name
    assert v.shutdown(2000)


def _other(v):
    names = [v.batch_combo.itemData(i) for i in range(1, v.batch_combo.count())]
    return next(n for n in names if n and n != "resnet_50")


def test_a_refused_batch_line_is_named_before_the_run(qtbot, tmp_path):
    """Issue 32: a batch problem whose options are not honoured is counted and named in the preview (was:
    "ignored benchdnn options", and the problem timed without them)."""
    from explorer.core.jobs.options import RunOptions
    from explorer.gui.tabs.sweep_view import SweepView

    f = tmp_path / "mine.txt"
    f.write_text("--attr-post-ops=prelu\nic8ih8oc8kh1\n--reset\nic8ih8oc8kh3ph1\n")
    v = SweepView()
    qtbot.addWidget(v)
    v.set_options(RunOptions(paths=("dense",), budget_ms=5.0, trace=False))
    assert v.set_batch(str(f))
    text = v.message.text()
    assert "1 refused" in text and "line 2: --attr-post-ops=prelu (set on line 1)" in text and "ignored" not in text
    assert [p.refused for p in v.points] == [True, False]
    assert v.shutdown(2000)
