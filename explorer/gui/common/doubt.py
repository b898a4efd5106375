"""One visual language for a doubtful figure in every view: the `~` before a number, the amber hatch behind a
row, a cross over a chart point (with its legend entry) and one amber banner that says why and what helps.

A figure is doubtful when another program disturbed its timing loop (quality "noisy", core.measure.interference).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QLabel, QSizePolicy

__all__ = ["BANNER_STYLE", "banner_text", "trace_doubt", "DoubtBanner", "HATCH", "MARK_NAME", "approx", "hatch_brush", "mark_pen", "is_noisy"]

MARK_NAME = "noisy (uncertain)"  # the legend entry of the crosses, in every chart
HATCH = (230, 160, 40, 70)  # the amber of the banner, as a hatch behind a doubtful row
BANNER_STYLE = ("QLabel#doubtBanner { background: rgba(230,160,40,60); border: 1px solid rgba(214,137,16,180); "
                "border-radius: 3px; padding: 3px 6px; }")


def is_noisy(r) -> bool:
    """A Result or a CSV row dict whose timing another program disturbed."""
    if r is None:
        return False
    q = r.get("quality") if isinstance(r, dict) else getattr(r, "quality", "")
    return (q or "") == "noisy"


def banner_text(rows, what: str = "rows", marked: str = "crossed") -> str:
    """The banner's sentence over `rows` (Results or CSV row dicts): how many ok rows are noisy, the worst
    cause, and what helps; '' when none is."""
    from explorer.core.measure.interference import ADVICE

    def get(r, k, default=None):
        return r.get(k, default) if isinstance(r, dict) else getattr(r, k, default)

    ok = [r for r in rows if get(r, "status") == "ok"]
    noisy = [r for r in ok if is_noisy(r)]
    if not noisy:
        return ""
    worst = max(noisy, key=lambda r: float(get(r, "runq_wait_pct") or 0.0))
    reason = get(worst, "quality_reason") or "another program disturbed the timing"
    return (f"⚠ {len(noisy)} of {len(ok)} {what} are noisy ({marked}): {reason}. Their times and every ratio "
            f"built on them are uncertain; {ADVICE}.")


TRACE_DISTURBED = 2.0  # a traced call this many times the median was disturbed (its times are no finding)


def trace_doubt(r, traced_ms: float | None) -> str:
    """Why the times of r's one traced call are uncertain ('' when they are not): r is noisy, or the traced call
    took TRACE_DISTURBED times its median or more (another program ran during that one call)."""
    if r is None:
        return ""
    median = getattr(r, "median_ms", None)
    if median and traced_ms and traced_ms >= TRACE_DISTURBED * median:
        return (f"⚠ The traced call took {traced_ms:.3g} ms, {traced_ms / median:.1f}x the median {median:.3g} ms: "
                "something disturbed that one call, so its times and shares (~) are uncertain; run again to "
                "trace a quiet call.")
    if is_noisy(r):
        return (f"⚠ This path's timing is noisy ({getattr(r, 'quality_reason', '') or 'another program disturbed it'})"
                ": the traced call's times (~) are uncertain.")
    return ""


def approx(text: str, doubtful: bool) -> str:
    """`text` with the `~` of an uncertain figure (never twice, never on an empty cell)."""
    if not doubtful or not text or text.startswith("~"):
        return text
    return "~" + text


def hatch_brush() -> QBrush:
    return QBrush(QColor(*HATCH), Qt.BDiagPattern)


def mark_color(theme_name: str) -> str:
    """The crosses are the theme's text colour: unlike any path colour (the amber was close to mkldnn's)."""
    from explorer.gui.common.colors import theme

    return theme(theme_name)["fg"]


def mark_pen(theme_name: str, width: float = 2.0):
    import pyqtgraph as pg

    return pg.mkPen(mark_color(theme_name), width=width)


class DoubtBanner(QLabel):
    """The amber line above a view's figures when some are noisy. It wraps (the advice at its end stays
    readable) and its size policy never asks the window for more than the width it has."""

    def __init__(self, parent=None):
        super().__init__("", parent)
        self.setObjectName("doubtBanner")
        self.setWordWrap(True)
        self.setStyleSheet(BANNER_STYLE)
        self.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Minimum)  # the width comes from the layout
        self.setVisible(False)

    def say(self, text: str) -> None:
        """Show `text` (hidden when empty)."""
        self.setText(text)
        self.setToolTip(text)
        self.setVisible(bool(text))

    def minimumSizeHint(self):  # noqa: N802 - Qt API
        h = super().minimumSizeHint()
        h.setWidth(40)  # a long sentence wraps instead of widening the window
        return h
