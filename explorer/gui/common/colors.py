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

# Every text colour keeps at least 4.5:1 (WCAG AA) on the backgrounds it is drawn on, in both themes (a test
# measures each pair): error, warn (the amber "noisy" text), good/bad (verdicts), muted (placeholders and
# disabled text, also on buttons), link, and white on the selection highlight.
THEMES = {
    "light": {"bg": "#ffffff", "fg": "#202124", "grid": "#d0d0d0", "muted": "#5f6368", "error": "#b3261e",
              "warn": "#9a5b00", "window": "#f3f3f3", "base": "#ffffff", "alt": "#f6f7f9", "button": "#e9e9ea",
              "highlight": "#2f6fd6", "link": "#2f63c4",
              "good": "#1e7e34", "bad": "#b3261e", "bad_bg": "#fdecea", "hover_bg": "#ffffff"},
    "dark": {"bg": "#1e1f22", "fg": "#e8eaed", "grid": "#44464b", "muted": "#a8adb3", "error": "#ff8a80",
             "warn": "#f0a640", "window": "#2b2d31", "base": "#1e1f22", "alt": "#26282c", "button": "#3a3d42",
             "highlight": "#3a6fd0", "link": "#8ab4f8",
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
    """A complete QPalette for the Fusion style; every text role keeps at least 4.5:1 on its background."""
    t = theme(name)
    pal = QPalette()
    roles = {
        QPalette.Window: t["window"], QPalette.WindowText: t["fg"], QPalette.Base: t["base"],
        QPalette.AlternateBase: t["alt"], QPalette.ToolTipBase: t["base"], QPalette.ToolTipText: t["fg"],
        QPalette.Text: t["fg"], QPalette.Button: t["button"], QPalette.ButtonText: t["fg"],
        QPalette.Highlight: t["highlight"], QPalette.HighlightedText: "#ffffff", QPalette.Link: t["link"],
        QPalette.PlaceholderText: t["muted"],
    }
    for role, color in roles.items():
        pal.setColor(role, QColor(color))
    for role in (QPalette.Text, QPalette.WindowText, QPalette.ButtonText):
        pal.setColor(QPalette.Disabled, role, QColor(t["muted"]))
    return pal


def luminance(color) -> float:
    """WCAG 2 relative luminance of a colour."""
    c = QColor(color)

    def ch(v: int) -> float:
        v = v / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * ch(c.red()) + 0.7152 * ch(c.green()) + 0.0722 * ch(c.blue())


def label_on(background) -> str:
    """Black or white, whichever reads better on `background` (a label inside a path-coloured cell)."""
    lum = luminance(background)
    return "#000000" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "#ffffff"


def theme_of(pal: QPalette | None = None) -> str:
    """The theme a palette belongs to, the application's by default ("dark" when its window is dark): for views
    that colour their own text."""
    if pal is None:
        from PySide6.QtGui import QGuiApplication

        pal = QGuiApplication.palette()
    return "dark" if pal.color(QPalette.Window).lightness() < 128 else "light"


_FOLLOWERS: list = []  # (weak reference to a widget, apply) of follow_theme


def follow_theme(widget, apply) -> None:
    """Call apply(theme name) now and on every announce_theme (the window's apply_theme), for a widget whose own
    colours (a style sheet, rich text) do not follow the palette: a style sheet's colour pins the widget's
    palette, so the application's new palette never reaches it."""
    import weakref

    _FOLLOWERS.append((weakref.ref(widget), apply))
    apply(theme_of())


def announce_theme(name: str) -> None:
    """The theme changed: every follower re-colours (a deleted widget is dropped)."""
    import shiboken6

    alive = []
    for ref, apply in _FOLLOWERS:
        w = ref()
        if w is None or not shiboken6.isValid(w):
            continue
        try:
            apply(name)
        except RuntimeError:  # its C++ side went away meanwhile
            continue
        alive.append((ref, apply))
    _FOLLOWERS[:] = alive
