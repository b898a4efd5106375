"""Focus comes back to the main window when one of its dialogs closes (issue #38: with no window manager, as
under Xvfb, nobody activated the window again after a file dialog or a message box, so Ctrl+Q and every other
shortcut did nothing until the window was clicked).

Qt says a dialog closed with focusChanged(its focus widget, None). A window manager re-activates the window
itself; then a window has focus again before our check runs, and nothing is done. Focus that leaves for another
application (the dialog still open, or the main window itself losing focus) is never taken back."""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QWidget

__all__ = ["FocusReturn"]


class FocusReturn(QObject):
    """When the focus leaves a dialog of `window` (any top-level widget whose parents lead to it) for no widget,
    and the dialog is gone, `window` is raised and activated (its last focused widget takes the focus again)."""

    def __init__(self, window: QWidget):
        super().__init__(window)
        self._window = window
        self.returns = 0  # how often focus was given back (tests read it)
        QApplication.instance().focusChanged.connect(self._changed)

    def _dialog_of_window(self, w: QWidget | None) -> QWidget | None:
        """The top-level widget holding w when it is a dialog over our window (else None)."""
        if w is None or not shiboken6.isValid(w):
            return None
        top = w.window()
        if top is self._window:
            return None
        p = top.parentWidget()
        while p is not None:
            if p is self._window:
                return top
            p = p.parentWidget()
        return None

    def _changed(self, old, new) -> None:
        if new is not None:
            return
        dialog = self._dialog_of_window(old)
        if dialog is not None:
            QTimer.singleShot(0, lambda d=dialog: self._give_back(d))

    def _give_back(self, dialog: QWidget) -> None:
        win = self._window
        if shiboken6.isValid(dialog) and dialog.isVisible():
            return  # the dialog is still open: the focus went to another application
        if not shiboken6.isValid(win) or not win.isVisible() or win.isMinimized():
            return
        if QApplication.activeModalWidget() is not None or QGuiApplication.focusWindow() is not None:
            return  # another dialog opened (Replace file?), or a window manager already chose
        win.raise_()
        win.activateWindow()
        self.returns += 1
