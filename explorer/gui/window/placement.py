"""Where the window opens: the rectangle it had when it closed, moved and shrunk into the available geometry of
the screen it is on (its frame included), so a relaunch opens exactly where the last one closed.

Qt's saveGeometry/restoreGeometry store the frame's position and, before the window is mapped, guess a title
bar for it: without a window manager (Xvfb, a kiosk) each relaunch opened 25 px lower and the status bar left
the screen. The client rectangle (`geometry()`) and the frame margins seen last time are stored instead.
"""

from __future__ import annotations

from PySide6.QtCore import QMargins, QRect
from PySide6.QtGui import QGuiApplication


def frame_margins(win) -> QMargins:
    """The window frame around the client area (0 without a window manager, or before the window is shown)."""
    f, g = win.frameGeometry(), win.geometry()
    return QMargins(max(0, g.left() - f.left()), max(0, g.top() - f.top()),
                    max(0, f.right() - g.right()), max(0, f.bottom() - g.bottom()))


def screen_for(rect: QRect):
    """The screen holding the rectangle's centre, else the primary screen (a monitor unplugged since)."""
    return QGuiApplication.screenAt(rect.center()) or QGuiApplication.primaryScreen()


def clamp_rect(rect: QRect, avail: QRect, margins: QMargins = QMargins()) -> QRect:
    """`rect` (a client area) shrunk to fit `avail` with its frame, then moved inside it, frame included."""
    w = max(1, min(rect.width(), avail.width() - margins.left() - margins.right()))
    h = max(1, min(rect.height(), avail.height() - margins.top() - margins.bottom()))
    x = min(max(rect.x(), avail.left() + margins.left()), avail.left() + avail.width() - margins.right() - w)
    y = min(max(rect.y(), avail.top() + margins.top()), avail.top() + avail.height() - margins.bottom() - h)
    return QRect(x, y, w, h)


def place(win, rect: QRect, margins: QMargins = QMargins()) -> QRect:
    """Give `win` the client rectangle `rect`, clamped into its screen's available geometry; returns what it got."""
    screen = screen_for(rect)
    target = clamp_rect(rect, screen.availableGeometry(), margins) if screen is not None else rect
    win.setGeometry(target)
    return target
