"""The Sweep tab's batch line against its totals (issue 34): "= 2.00x ... [19 noisy layers left out]" stood on
one layer while the totals beside it gave 1.28x. The line is a bold "= N.NNx" only over the very rows of the
totals; on fewer it says on how many trusted layers it stands and that it is not the network's verdict. And the
sweep's banner counts rows as rows, as the status bar does."""

from explorer.core.report.results import Result


def _batch_view(qtbot, mkldnn_ms, quality):
    from explorer.core.jobs.options import RunOptions
    from explorer.core.session.state import SweepRows
    from explorer.gui.tabs.sweep_view import SweepView

    v = SweepView()
    qtbot.addWidget(v)
    v.resize(1300, 700)
    v.show()
    v.set_options(RunOptions(paths=("dense", "mkldnn"), budget_ms=5.0, trace=False))
    assert v.set_batch("resnet_50")
    pts = [p for p in v.points if not p.skipped]
    v._configure(v.points, "batch", ("dense", "mkldnn"), [])
    for i, p in enumerate(pts):  # what a finished batch leaves, without timing its convolutions
        for path, ms, q in (("dense", 1.0, "ok"), ("mkldnn", mkldnn_ms(i), quality(i))):
            r = Result(spec=p.spec, path=path, threads=1, median_ms=ms, p25_ms=ms, p75_ms=ms, gflops=1.0, quality=q)
            v.session.apply(SweepRows([(p.index, r)]))
    v.redraw_now()
    return v, pts


def test_a_ratio_on_one_trusted_layer_is_not_shown_as_the_networks(qtbot):
    v, pts = _batch_view(qtbot, lambda i: 0.5 if i == 0 else 0.9, lambda i: "ok" if i == 0 else "noisy")
    s = v.batch_summary()
    m = s.totals["mkldnn"]
    assert m.common == 1 and m.uncertain == len(pts) - 1 and abs(m.speedup - 2.0) < 1e-9
    text = v.total_label.text()
    assert "<b>2.00x</b>" not in text and "= <b>" not in text  # no bold verdict on one layer
    assert f"on only 1 of {s.layers} layers (the trusted ones both ran; {len(pts) - 1} noisy left out)" in text
    assert "not the network&#x27;s verdict" in text or "not the network's verdict" in text
    assert v.shutdown(2000)


def test_a_ratio_over_the_totals_own_rows_is_the_verdict(qtbot):
    v, pts = _batch_view(qtbot, lambda i: 0.5, lambda i: "ok")
    s = v.batch_summary()
    m, d = s.totals["mkldnn"], s.totals["dense"]
    assert m.same_rows and abs(m.speedup - d.total_ms / m.total_ms) < 1e-9
    assert f"= <b>{m.speedup:.2f}x</b>" in v.total_label.text() and "verdict" not in v.total_label.text()
    assert v.shutdown(2000)


def test_the_sweep_banner_counts_rows_as_the_status_bar_does(qtbot):
    from explorer.core.report.sweep_data import count_text

    v, pts = _batch_view(qtbot, lambda i: 0.5, lambda i: "noisy" if i < 3 else "ok")
    rows = v.results()
    assert len(rows) == 2 * len(pts)  # a point (a layer) has a row per path
    banner = v.doubt.text()
    assert f"3 of {len(rows)} rows are noisy" in banner and "points" not in banner
    assert "3 noisy" in count_text(rows) and f"{len(rows)} rows" in count_text(rows)
    assert v.shutdown(2000)
