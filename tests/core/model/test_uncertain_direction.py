"""An uncertain answer says it is uncertain and gives no direction its own figures contradict (issue 36,
item 3): "channels_last: ~1.12x faster end to end (predicted 1.11x slower)" read as a verdict. When measured
and predicted point opposite ways, or the measured loops' spread covers 1.0, the line says "no clear
difference" with both figures, and such a mode is never the answer."""

import re

from explorer.core.model.inventory import Inventory
from explorer.core.model.job import _ratios
from explorer.core.model.model_csv import mode_row
from explorer.core.model.report import ModelReport, ModeResult, direction_doubt, mode_line

PLANNED = ("nchw", "channels_last", "to_mkldnn")


def _report(modes):
    return ModelReport(Inventory("tiny", (1, 3, 8, 8), "f32", [], []), [], modes, 1, "", PLANNED)


def _mode(name, ms, pred, spread=0.01):
    """A finished mode as the planner leaves it: its median, quartiles `spread` either side, a prediction."""
    return ModeResult(name, samples=20, measured_ms=ms, p25_ms=ms * (1 - spread), p75_ms=ms * (1 + spread),
                      predicted_ms=pred, remainder_ms=0.0)


def _ran(*modes):
    modes = list(modes)
    _ratios(modes, [])
    return modes


def _directions(line: str) -> list[str]:
    return re.findall(r"faster|slower", line)


def test_measured_faster_predicted_slower_states_no_direction_and_shows_both_figures():
    base, cl, mk = _ran(_mode("nchw", 112.0, 100.0), _mode("channels_last", 100.0, 111.0),
                        _mode("to_mkldnn", 120.0, 125.0))
    assert cl.speedup > 1 > cl.predicted_speedup  # the figures: ~1.12x faster, predicted 1.11x slower
    line = mode_line(cl)
    assert line.startswith("channels_last: no clear difference")
    assert "measured 1.12x faster" in line and "predicted 1.11x slower" in line and "uncertain" in line
    assert "1.12x faster end to end" not in line  # the contradicted verdict itself is gone
    assert cl.uncertain and "disagree in direction" in cl.uncertain_reason
    row = mode_row(_report([]).inventory, cl)  # the model CSV carries the same doubt
    assert row["uncertain"] and "disagree in direction" in row["uncertain_reason"]


def test_a_mode_of_no_clear_direction_is_never_the_answer():
    modes = _ran(_mode("nchw", 112.0, 100.0), _mode("channels_last", 100.0, 111.0),
                 _mode("to_mkldnn", 120.0, 125.0))
    a = _report(modes).answer()
    # the only faster-measured mode is contradicted by its prediction: keep the model, say why, no "faster" verdict
    assert a.startswith("keep the model as it is: no mode is clearly faster")
    assert not a.startswith("channels_last")


def test_a_clear_mode_wins_over_a_faster_measured_unclear_one():
    modes = _ran(_mode("nchw", 120.0, 120.0), _mode("channels_last", 90.0, 130.0),
                 _mode("to_mkldnn", 100.0, 100.0))
    a = _report(modes).answer()
    assert a.startswith("to_mkldnn(model): 1.20x faster end to end (predicted 1.20x faster)")


def test_a_spread_that_covers_one_states_no_direction_even_when_prediction_agrees():
    base, cl, mk = _ran(_mode("nchw", 102.0, 103.0, spread=0.05), _mode("channels_last", 100.0, 100.0, spread=0.05),
                        _mode("to_mkldnn", 50.0, 52.0))
    assert cl.speedup_low < 1 < cl.speedup_high
    assert "either side of 1" in direction_doubt(cl)
    assert mode_line(cl).startswith("channels_last: no clear difference")
    assert _directions(mode_line(cl).split("(")[0]) == []  # the clause before the figures names no direction
    assert mk.speedup_low > 1 and direction_doubt(mk) == ""
    assert _report([base, cl, mk]).answer().startswith("to_mkldnn(model): 2.04x faster")


def test_clear_figures_keep_their_verdict():
    base, cl, mk = _ran(_mode("nchw", 150.0, 150.0), _mode("channels_last", 100.0, 110.0),
                        _mode("to_mkldnn", 200.0, 190.0))
    assert direction_doubt(cl) == direction_doubt(mk) == ""
    assert mode_line(cl).startswith("channels_last: 1.50x faster end to end (predicted 1.36x faster)")
    assert _report([base, cl, mk]).answer() == mode_line(cl)
    assert mode_line(mk).startswith("to_mkldnn(model): 1.33x slower end to end")


def test_the_closest_mode_is_the_fastest_that_ran_not_a_clear_one_far_slower():
    # seen on timm's convnext_tiny under load: "no mode is clearly faster; the closest is autocast bf16:
    # ~28.65x slower" while jit_mkldnn measured 1.9x faster (its own figures uncertain)
    base, slow, doubtful = _ran(_mode("nchw", 100.0, 100.0), _mode("channels_last", 2800.0, 2700.0),
                                _mode("to_mkldnn", 52.0, 120.0))
    assert direction_doubt(doubtful) and not direction_doubt(slow)
    line = _report([base, slow, doubtful]).answer()
    assert "no mode is clearly faster" in line
    assert "the closest is to_mkldnn(model): no clear difference" in line, line
