"""The Model tab on a mode whose measured and predicted speedups point opposite ways (issue 36 item 3): the
answer is not that mode, and its speedup cells say there is no clear difference."""

from explorer.core.model.inventory import Inventory
from explorer.core.model.job import _ratios
from explorer.core.model.report import ModelReport, ModeResult, ModelStarted, ModeFinished
from explorer.core.session.state import ModelDone


def _mode(name, ms, pred):
    return ModeResult(name, samples=20, measured_ms=ms, p25_ms=ms * 0.99, p75_ms=ms * 1.01, predicted_ms=pred,
                      remainder_ms=0.0)


def test_the_model_tab_gives_no_direction_where_the_figures_disagree(make_window, qtbot):
    win = make_window()
    view = win.model_view
    modes = [_mode("nchw", 112.0, 100.0), _mode("channels_last", 100.0, 111.0)]
    _ratios(modes, [])
    inv = Inventory("tiny", (1, 3, 8, 8), "f32", [], [])
    rep = ModelReport(inv, [], modes, 1, "", ("nchw", "channels_last"))
    view.session.apply(ModelStarted(inv))
    for m in modes:
        view.session.apply(ModeFinished(m))
    view.session.apply(ModelDone(rep))
    text = view.answer.text()
    assert text.startswith("keep the model as it is: no mode is clearly faster")
    assert "channels_last: no clear difference" in text and "1.12x faster end to end" not in text
    t = view.modes_table
    head = [t.horizontalHeaderItem(c).text() for c in range(t.columnCount())]
    row = next(r for r in range(t.rowCount()) if t.item(r, 0).text() == "channels_last")
    for name in ("speedup", "predicted speedup"):
        assert "no clear difference" in t.item(row, head.index(name)).toolTip()
