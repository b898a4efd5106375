"""Every text reads at 4.5:1 or more (WCAG AA), measured from the palette and the theme colours in both themes
(#34: the dark theme's error text was about 2:1), and a checked-and-disabled box still draws its check."""

import pytest
from PySide6.QtGui import QColor, QPalette

from explorer.gui.common.colors import THEMES, palette

AA = 4.5


def luminance(c: QColor) -> float:
    """WCAG 2 relative luminance."""
    def ch(v):
        v /= 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
    return 0.2126 * ch(c.red()) + 0.7152 * ch(c.green()) + 0.0722 * ch(c.blue())


def contrast(a, b) -> float:
    a, b = QColor(a), QColor(b)
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def over(fg: QColor, bg: QColor) -> QColor:
    """fg (with its alpha) composed over an opaque bg."""
    a = fg.alphaF()
    return QColor(*(round(getattr(fg, c)() * a + getattr(bg, c)() * (1 - a)) for c in ("red", "green", "blue")))


# (text role, background role) pairs a Fusion widget draws text with
ROLE_PAIRS = [(QPalette.WindowText, QPalette.Window), (QPalette.Text, QPalette.Base),
              (QPalette.Text, QPalette.AlternateBase), (QPalette.ButtonText, QPalette.Button),
              (QPalette.HighlightedText, QPalette.Highlight), (QPalette.PlaceholderText, QPalette.Base),
              (QPalette.ToolTipText, QPalette.ToolTipBase), (QPalette.Link, QPalette.Base),
              (QPalette.Link, QPalette.Window)]


@pytest.mark.parametrize("name", sorted(THEMES))
def test_every_palette_role_text_reads_at_aa(name):
    pal = palette(name)
    low = []
    for group in (QPalette.Active, QPalette.Inactive, QPalette.Disabled):
        for fg, bg in ROLE_PAIRS:
            c = contrast(pal.color(group, fg), pal.color(group, bg))
            if c < AA:
                low.append((group.name, fg.name, bg.name, round(c, 2)))
    assert not low, low


@pytest.mark.parametrize("name", sorted(THEMES))
def test_theme_text_colours_read_at_aa_on_their_backgrounds(name):
    from explorer.gui.common.doubt import HATCH

    t = THEMES[name]
    panels = ("window", "base", "alt", "bg")
    pairs = [(k, b) for k in ("fg", "muted", "error", "warn", "good", "bad") for b in panels]
    pairs += [("muted", "button"), ("fg", "bad_bg"), ("fg", "button")]
    low = [(f, b, round(contrast(t[f], t[b]), 2)) for f, b in pairs if contrast(t[f], t[b]) < AA]
    # the doubt banner: window text on the amber wash over the window
    amber = QColor(*HATCH[:3], 60)
    banner = over(amber, QColor(t["window"]))
    if contrast(t["fg"], banner) < AA:
        low.append(("fg", "doubt banner", round(contrast(t["fg"], banner), 2)))
    assert not low, low


def _css_color(sheet: str) -> QColor:
    import re

    m = re.search(r"color:\s*(#[0-9a-fA-F]{6})", sheet)
    assert m, sheet
    return QColor(m.group(1))


@pytest.mark.parametrize("name", sorted(THEMES))
def test_error_messages_the_views_draw_read_at_aa(make_window, name):
    """The Run panel's and the Model tab's error lines, as drawn, after the theme is switched."""
    from PySide6.QtWidgets import QApplication

    win = make_window()
    win.apply_theme(name)
    QApplication.processEvents()  # the palette change reaches the widgets as an event
    window = THEMES[name]["window"]
    win.panel.set_descriptor("mb2ic16ih14oc16kh3ph1_xx")  # a descriptor that does not parse
    assert win.panel.message.text()
    c = _css_color(win.panel.message.styleSheet())
    assert contrast(c, window) >= AA, (name, c.name())
    mv = win.model_view
    mv.model_box.setCurrentText("no_such_module_xyz:build")
    mv.input_edit.setText("1,2,x")
    assert not mv.run()
    c = _css_color(mv.message.styleSheet())
    assert contrast(c, window) >= AA, (name, c.name())
    win.apply_theme("dark" if name == "light" else "light")  # the line follows a theme switch
    QApplication.processEvents()
    other = THEMES["dark" if name == "light" else "light"]["window"]
    assert contrast(_css_color(win.panel.message.styleSheet()), other) >= AA
    assert contrast(_css_color(mv.message.styleSheet()), other) >= AA


@pytest.mark.parametrize("name", sorted(THEMES))
def test_the_noisy_status_text_in_the_run_table_reads_at_aa(make_window, name):
    from PySide6.QtCore import Qt

    from explorer.core.problem.spec import parse_descriptor
    from explorer.core.report.results import Result

    win = make_window()
    win.apply_theme(name)
    spec = parse_descriptor("mb2ic16ih14oc16oh14kh3ph1")
    win.session.set_results([Result(spec=spec, path="dense", threads=1, status="ok", median_ms=1.0, samples=5,
                                    quality="noisy", quality_reason="load")], spec)
    m = win.model
    col = [m.headerData(c, Qt.Horizontal) for c in range(m.columnCount())].index("status")
    brush = m.data(m.index(0, col), Qt.ForegroundRole)
    assert brush is not None
    assert contrast(brush.color(), THEMES[name]["base"]) >= AA
    assert contrast(brush.color(), THEMES[name]["alt"]) >= AA


@pytest.mark.parametrize("name", sorted(THEMES))
@pytest.mark.parametrize("kind", ["check", "radio"])
def test_a_checked_and_disabled_indicator_draws_its_mark(qtbot, name, kind):
    from PySide6.QtWidgets import QApplication, QCheckBox, QRadioButton, QStyle, QStyleOptionButton

    from explorer.gui.app import make_app

    app = make_app()
    old = app.palette()
    app.setPalette(palette(name))
    try:
        shots = {}
        for checked in (False, True):
            w = (QCheckBox if kind == "check" else QRadioButton)("stored")
            qtbot.addWidget(w)
            w.setChecked(checked)
            w.setEnabled(False)
            w.show()
            opt = QStyleOptionButton()
            w.initStyleOption(opt)
            el = QStyle.SE_CheckBoxIndicator if kind == "check" else QStyle.SE_RadioButtonIndicator
            rect = w.style().subElementRect(el, opt, w)
            shots[checked] = (w.grab().toImage(), rect)
        (off, rect), (on, _) = shots[False], shots[True]
        px = [(x, y) for x in range(rect.left() + 2, rect.right() - 1) for y in range(rect.top() + 2, rect.bottom() - 1)]
        changed = sum(1 for x, y in px if contrast(on.pixelColor(x, y), off.pixelColor(x, y)) >= 3.0)
        assert changed >= 0.25 * len(px), (name, kind, changed, len(px))  # checked differs from unchecked
        # and the mark inside the checked one stands out from its fill
        colours = {on.pixelColor(x, y).rgb() for x, y in px}
        best = max(contrast(QColor.fromRgb(a), QColor.fromRgb(b)) for a in colours for b in colours)
        assert best >= 3.0, (name, kind, best)
    finally:
        QApplication.instance().setPalette(old)


def test_heatmap_cell_labels_read_at_aa_on_their_paths_colour(qtbot):
    from explorer.core.paths.base import PATHS
    from explorer.gui.charts.heatmap_chart import HeatmapChart
    from explorer.gui.common.colors import path_color
    from tests.gui.window.test_small_screen_fit import _grid_2x2

    from explorer.core.report.sweep_data import SweepData

    state = _grid_2x2()
    data = SweepData()
    data.configure(state["points"], "grid", paths=tuple(PATHS[:6]))
    for idx, r in state["items"]:
        data.add(idx, r)
    hm = HeatmapChart()
    qtbot.addWidget(hm)
    hm.redraw(data)
    shown = [t for t in hm._texts if t.isVisible()]
    assert len(shown) == 4
    for t in shown:
        i, j = int(round(t.pos().x())), int(round(t.pos().y()))
        cell = path_color(PATHS[int(hm.grid[i, j])])
        assert contrast(t.color, cell) >= AA, (t.toPlainText(), cell, t.color.name())
