"""The window's inputs, in one place: spin boxes and combo boxes that the mouse wheel does not edit unless the
user focused them (issue #38: scrolling the Parameters panel turned the budget from 100 ms to 1 ms), and save
dialogs that add the extension their filter names when the user typed none (a session saved as `sess1` was
written without `.json`, and the Open dialog, filtered to *.json, did not list it)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractSpinBox, QComboBox, QFileDialog, QMessageBox, QWidget

__all__ = ["WheelGuard", "ask_save_path", "guard_wheel", "with_filter_suffix"]

_GUARDED = (QAbstractSpinBox, QComboBox)


class WheelGuard(QObject):
    """An event filter for value widgets: an unfocused one ignores the wheel, which Qt then passes to its
    parent (the scroll area around the panel scrolls instead)."""

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Wheel and isinstance(obj, _GUARDED) and not obj.hasFocus():
            event.ignore()
            return True
        return False


def guard_wheel(root: QWidget) -> WheelGuard:
    """Every spin box and combo box under root (root included) takes focus by click or tab only and ignores
    the wheel unless focused. Safe to call again after building more widgets: each is guarded once."""
    guard = root.findChild(WheelGuard, "wheelGuard", Qt.FindDirectChildrenOnly)
    if guard is None:
        guard = WheelGuard(root)
        guard.setObjectName("wheelGuard")
    widgets = [root] if isinstance(root, _GUARDED) else []
    for cls in _GUARDED:
        widgets += root.findChildren(cls)
    for w in widgets:
        if w.property("wheelGuarded"):
            continue
        w.setFocusPolicy(Qt.StrongFocus)
        w.installEventFilter(guard)
        w.setProperty("wheelGuarded", True)
    return guard


def _patterns(name_filter: str) -> list[str]:
    """'PNG image (*.png *.PNG)' -> ['*.png', '*.PNG']."""
    m = re.search(r"\(([^)]*)\)", name_filter or "")
    return m.group(1).split() if m else []


def with_filter_suffix(path: str, selected_filter: str, filters: str) -> str:
    """path with the extension of the chosen filter (else the first one) when it has no extension of its own;
    a filter of '*' alone (All files) adds none."""
    if not path or Path(path).suffix:
        return path
    chosen = selected_filter or (filters.split(";;")[0] if filters else "")
    for pattern in _patterns(chosen):
        if pattern.startswith("*.") and len(pattern) > 2 and "*" not in pattern[2:]:
            return path + pattern[1:]
    return path


def ask_save_path(parent, caption: str, start: str, filters: str) -> str:
    """QFileDialog.getSaveFileName with the filter's extension added when the user typed none; '' when
    cancelled. Qt's dialog asked before replacing the name as typed, so a file that only the added extension
    names is asked about here."""
    path, selected = QFileDialog.getSaveFileName(parent, caption, start, filters)
    full = with_filter_suffix(path, selected, filters)
    if full != path and os.path.exists(full):
        answer = QMessageBox.question(parent, "Replace file?", f"{full} already exists. Replace it?",
                                      QMessageBox.Yes | QMessageBox.No, QMessageBox.No)
        if answer != QMessageBox.Yes:
            return ""
    return full
