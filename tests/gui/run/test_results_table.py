"""Issue 12, item 8: the results table shows what matters without clipping it."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics

from explorer.core.problem.spec import parse_descriptor
from explorer.core.report.results import Result

SPEC = parse_descriptor("mb1ic4ih4oc4kh1")  # tiny: about 0.0001 GFLOP per call
REASON = "Input type (MkldnnCPUBFloat16Type) and weight type (CPUBFloat16Type) should be the same"


def _ok(path, ms):
    return Result(spec=SPEC, path=path, threads=1, median_ms=ms, iqr_ms=ms / 50, gflops=SPEC.ops / (ms / 1e3) / 1e9,
                  samples=20, input_bytes=256, weight_bytes=64, output_bytes=256, conv_impl="brg:avx2",
                  reorder_count=2, src_tag="abcd", wei_tag="abcd", dst_tag="abcd")


def _col(win, name):
    return [win.proxy.headerData(c, Qt.Horizontal) for c in range(win.proxy.columnCount())].index(name)


def test_numbers_names_and_reasons_are_legible(make_window):
    win = make_window(size=(1024, 700))
    win._on_path_finished(_ok("dense", 0.05))  # the first row of a run: the columns are fitted now
    path_w = win.table.columnWidth(0)
    bold = QFont(win.table.font())
    bold.setBold(True)
    assert path_w >= QFontMetrics(bold).horizontalAdvance("mkldnn_functional") + 20  # never elides later
    win._on_path_finished(_ok("mkldnn_functional", 0.1))
    bad = Result(spec=SPEC, path="mkldnn_roundtrip", threads=1, status="unsupported", error=REASON)
    win._on_path_finished(bad)
    m = win.proxy
    g = _col(win, "GFLOP/s")
    text = m.data(m.index(0, g))
    assert text != "0.0" and float(text) > 0 and len(text.replace(".", "").lstrip("0")) >= 2  # 3 significant digits
    # every header is readable in full
    hfm = QFontMetrics(win.table.horizontalHeader().font())
    for c in range(m.columnCount()):
        name = m.headerData(c, Qt.Horizontal)
        assert win.table.columnWidth(c) >= hfm.horizontalAdvance(name) + 10, name
    # what matters comes first: speed and GFLOP/s right after the median
    assert [m.headerData(c, Qt.Horizontal) for c in range(5)] == ["path", "status", "median ms", "vs baseline", "GFLOP/s"]
    # the unsupported row says why where the numbers would be, across the row
    med = _col(win, "median ms")
    assert m.data(m.index(2, med)) == REASON
    assert win.table.columnSpan(2, med) == m.columnCount() - med
    # selecting it says why, not "No tensors to show yet"
    win.select_path("mkldnn_roundtrip")
    assert REASON in win.layout_view.placeholder.text()
    assert REASON in win.trace_view.placeholder.text()
    win.select_path("dense")
    assert "No tensors" in win.layout_view.placeholder.text() or win.layout_view.placeholder.isHidden()
    # sorting moves the span with its row
    win.table.sortByColumn(0, Qt.DescendingOrder)
    row = [m.data(m.index(r, 0)) for r in range(3)].index("mkldnn_roundtrip")
    assert win.table.columnSpan(row, med) > 1
    assert all(win.table.columnSpan(r, med) == 1 for r in range(3) if r != row)


def test_switching_theme_with_rows_keeps_the_table_whole(make_window, qtbot):
    """The theme repaints the status colours with dataChanged: a bare layoutChanged crashed the sorted proxy."""
    win = make_window()
    for p, ms in (("dense", 0.05), ("mkldnn", 0.1)):
        win._on_path_finished(_ok(p, ms))
    win.table.sortByColumn(2, Qt.DescendingOrder)
    win.select_path("mkldnn")
    for name in ("dark", "light", "dark"):
        win.apply_theme(name)
        qtbot.wait(5)
    assert [win.proxy.data(win.proxy.index(r, 0)) for r in range(2)] == ["mkldnn", "dense"]
    assert win.selected_result().path == "mkldnn"
