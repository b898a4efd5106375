"""One colour per path, the same in every chart and the table, and the light and dark palettes.

The path colours are mid-lightness (seaborn "deep"), so each keeps at least 3:1 contrast on both the
light (#ffffff) and the dark (#1e1f22) chart background.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette

from explorer.core.paths.base import ALL_PATHS as PATHS

PATH_COLORS = {
    "dense": "#4C72B0",  # blue
    "channels_last": "#55A868",  # green
    "native": "#8C8C8C",  # grey: the non-oneDNN baseline
    "mkldnn": "#DD8452",  # orange
    "mkldnn_functional": "#8172B3",  # purple
    "mkldnn_roundtrip": "#C44E52",  # red
    "jit_frozen": "#937860",  # brown
    "compiled": "#C26AAE",  # pink
    "mkldnn_prepacked": "#3F9FB8",  # teal
}
_FALLBACK = ("#937860", "#DA8BC3", "#CCB974", "#64B5CD")

THEMES = {
    "light": {"bg": "#ffffff", "fg": "#202124", "grid": "#d0d0d0", "muted": "#5f6368", "error": "#b3261e",
              "window": "#f3f3f3", "base": "#ffffff", "alt": "#f6f7f9", "button": "#e9e9ea", "highlight": "#2f6fd6",
              "good": "#1e7e34", "bad": "#b3261e", "bad_bg": "#fdecea", "hover_bg": "#ffffff"},
    "dark": {"bg": "#1e1f22", "fg": "#e8eaed", "grid": "#44464b", "muted": "#a0a4aa", "error": "#ff8a80",
             "window": "#2b2d31", "base": "#1e1f22", "alt": "#26282c", "button": "#3a3d42", "highlight": "#4c8bf5",
             "good": "#81c995", "bad": "#f28b82", "bad_bg": "#4a2624", "hover_bg": "#2b2d31"},
}


def path_color(path: str) -> str:
    if path in PATH_COLORS:
        return PATH_COLORS[path]
    return _FALLBACK[hash(path) % len(_FALLBACK)]


def qcolor(path: str, alpha: int = 255) -> QColor:
    c = QColor(path_color(path))
    c.setAlpha(alpha)
    return c


def ordered(paths) -> list[str]:
    """Paths in the canonical order, the six then the routes (unknown names last)."""
    rank = {p: i for i, p in enumerate(PATHS)}
    return sorted(paths, key=lambda p: rank.get(p, len(rank)))


def theme(name: str) -> dict:
    return THEMES.get(name, THEMES["light"])


def palette(name: str) -> QPalette:
    """A complete QPalette for the Fusion style; both themes keep text contrast above 7:1."""
    t = theme(name)
    pal = QPalette()
    roles = {
        QPalette.Window: t["window"], QPalette.WindowText: t["fg"], QPalette.Base: t["base"],
        QPalette.AlternateBase: t["alt"], QPalette.ToolTipBase: t["base"], QPalette.ToolTipText: t["fg"],
        QPalette.Text: t["fg"], QPalette.Button: t["button"], QPalette.ButtonText: t["fg"],
        QPalette.Highlight: t["highlight"], QPalette.HighlightedText: "#ffffff", QPalette.Link: t["highlight"],
        QPalette.PlaceholderText: t["muted"],
    }
    for role, color in roles.items():
        pal.setColor(role, QColor(color))
    for role in (QPalette.Text, QPalette.WindowText, QPalette.ButtonText):
        pal.setColor(QPalette.Disabled, role, QColor(t["muted"]))
    return pal
