"""Layout view: one tensor of one path, drawn twice, with its facts.

* Logical pane: the tensor as people think of it. Data tensors show the first image with its channels as
  H x W planes in a grid; weights show a matrix of kh x kw planes (rows = output channel, columns = input
  channel). Channels that exist only because of padding are grey "ghost" planes, outlined and marked "pad".
* Physical pane: the buffer in memory order, wrapped at the innermost contiguous run (W for nchw, C for
  nhwc, 16 for nChw16c, a 16 x 16 tile for OIhw16i16o). Every cell is coloured by the logical channel it
  holds; padding cells are grey.

Hovering a cell in either pane highlights the same element in the other and shows its offset formula.
The pixel maps come from :mod:`explorer.core.layout.picture` (numpy, no Qt); the panes are
:class:`explorer.gui.inspect.layout_pane.LayoutPane`; the facts text is :mod:`explorer.gui.inspect.layout_facts`. This module
ties them together: controls, captions, labels and outlines, hover and sizing.
"""

from __future__ import annotations

import math

from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtCore import Qt

from explorer.core.layout.picture import (
    CELL_LIMIT,
    DIM_WORDS,
    N_COLOURS,
    PHYS_LIMIT,
    HoverInfo,
    LayoutPicture,
    build_picture,
    default_colour_dim,
    dim_names,
    fmt_dims,
    make_lut,
    slices_caption,
    weight_grouped,
)
from explorer.core.layout.tags import Layout
from explorer.gui.common.widgets import ElidedLabel, FlowLayout
from explorer.gui.inspect.layout_facts import brief_html, facts_html
from explorer.gui.inspect.layout_pane import LayoutPane

__all__ = ["LayoutView"]

ROLES = ("input", "weight", "output")


class LayoutView(QtWidgets.QWidget):
    """Logical and physical picture of one tensor of a path, with facts; see the module docstring."""

    hovered = QtCore.Signal(str)

    FACTS_MIN_WIDTH = 220
    WIDE = 880  # at this width and more the Details panel opens by itself
    HOVER_HINT = "Hover a cell in either pane: its logical index, its offset formula and the same element in the other pane."
    PLACEHOLDER = ("No tensors to show yet.\n\nInspect a path to see how its input, weight and output "
                   "are laid out in memory: the logical tensor on the left, the real buffer on the right.")

    def __init__(self, parent=None):
        super().__init__(parent)
        self._tensors: dict = {}
        self.setAutoFillBackground(True)  # the window colour, as the other tabs (not the tab frame's)
        self._title = ""
        self._picture: LayoutPicture | None = None
        self._layout: Layout | None = None
        self._lut = make_lut()
        self._colour_choice: dict[tuple[str, int], int] = {}
        self.last_hover: HoverInfo | None = None

        outer = QtWidgets.QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        outer.setSpacing(3)

        # -- title (its own line, elided: a long descriptor must not widen the view)
        self.title_label = ElidedLabel()
        f = self.title_label.font()
        f.setBold(True)
        self.title_label.setFont(f)
        outer.addWidget(self.title_label)

        # -- controls: they wrap onto a second line when the view is narrow
        self.controls = QtWidgets.QWidget()
        bar = FlowLayout(self.controls, 6, 3)
        bar.setContentsMargins(0, 0, 0, 0)

        def add(*widgets):
            for w in widgets:
                bar.addWidget(w)
            widgets[-1].setProperty("flowBreak", True)

        self.role_combo = QtWidgets.QComboBox()
        self.role_combo.setToolTip("Which tensor of the convolution to show")
        self.role_combo.setSizeAdjustPolicy(QtWidgets.QComboBox.AdjustToContents)
        self.stored_radio = QtWidgets.QRadioButton("stored")
        self.stored_radio.setToolTip("The layout the tensor really has in memory (from its descriptor or strides)")
        self.kernel_radio = QtWidgets.QRadioButton("as the kernel used it")
        self.kernel_radio.setToolTip("The layout the convolution kernel read or wrote, from the oneDNN trace;\n"
                                     "it differs from 'stored' when oneDNN reordered the tensor first")
        self.stored_radio.setChecked(True)
        self._mode_group = QtWidgets.QButtonGroup(self)
        self._mode_group.addButton(self.stored_radio)
        self._mode_group.addButton(self.kernel_radio)
        self.colour_combo = QtWidgets.QComboBox()
        self.colour_combo.setToolTip("Which logical index colours the cells (the colours cycle every "
                                     f"{N_COLOURS} values)")
        self.colour_combo.setSizeAdjustPolicy(QtWidgets.QComboBox.AdjustToContents)
        self.facts_button = QtWidgets.QToolButton()
        self.facts_button.setText("Details")
        self.facts_button.setCheckable(True)
        self.facts_button.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
        self.facts_button.setArrowType(Qt.RightArrow)
        self.facts_button.setToolTip("Show every fact about this layout (tag, strides, blocks, bytes, kernel) "
                                     "in a side panel.\nIt opens by itself when the view is wide enough.")
        self.facts_button.toggled.connect(self._on_facts_toggled)
        add(QtWidgets.QLabel("Tensor:"), self.role_combo, self.stored_radio, self.kernel_radio)
        add(QtWidgets.QLabel("Colour:"), self.colour_combo, self.facts_button)
        outer.addWidget(self.controls)

        self.slice_label = QtWidgets.QLabel()  # wraps: the slice it draws is worth reading in full
        self.slice_label.setWordWrap(True)
        self.slice_label.setVisible(False)
        outer.addWidget(self.slice_label)

        # -- stack: placeholder / content
        self.stack = QtWidgets.QStackedWidget()
        outer.addWidget(self.stack, 1)
        self.placeholder = QtWidgets.QLabel(self.PLACEHOLDER)
        self.placeholder.setAlignment(Qt.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setMargin(12)
        self.stack.addWidget(self.placeholder)

        content = QtWidgets.QWidget()
        cl = QtWidgets.QVBoxLayout(content)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.setSpacing(3)
        # The key facts in one wrapped block; the full table is in the Details panel.
        self.brief_label = QtWidgets.QLabel()
        self.brief_label.setTextFormat(Qt.RichText)
        self.brief_label.setWordWrap(True)
        self.brief_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        cl.addWidget(self.brief_label)
        self.splitter = QtWidgets.QSplitter(Qt.Horizontal)
        self.splitter.setChildrenCollapsible(False)
        self.pane_stack = QtWidgets.QStackedWidget()
        panes = QtWidgets.QWidget()
        pl = QtWidgets.QHBoxLayout(panes)
        pl.setContentsMargins(0, 0, 0, 0)
        pl.setSpacing(6)
        self.logical_pane = LayoutPane("Logical")
        self.physical_pane = LayoutPane("Physical")
        self._scale = 0.0  # logical pane pixels per cell, as last fitted
        # Label margins are in pixels: a resize fits them again (a narrow pane must not clip "c12" to ":12").
        self.logical_pane.vb.sigResized.connect(self._on_logical_resized)
        pl.addWidget(self.logical_pane, 1)
        pl.addWidget(self.physical_pane, 1)
        self.pane_stack.addWidget(panes)
        self.unknown_label = QtWidgets.QLabel()
        self.unknown_label.setAlignment(Qt.AlignCenter)
        self.unknown_label.setWordWrap(True)
        self.unknown_label.setMargin(12)
        self.pane_stack.addWidget(self.unknown_label)
        self.splitter.addWidget(self.pane_stack)

        self.facts_label = QtWidgets.QLabel()
        self.facts_label.setTextFormat(Qt.RichText)
        self.facts_label.setWordWrap(True)
        self.facts_label.setAlignment(Qt.AlignTop | Qt.AlignLeft)
        self.facts_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.facts_label.setContentsMargins(6, 0, 4, 0)
        self.facts_scroll = QtWidgets.QScrollArea()
        self.facts_scroll.setWidgetResizable(True)
        self.facts_scroll.setFrameShape(QtWidgets.QFrame.NoFrame)
        self.facts_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)  # the facts wrap instead
        self.facts_scroll.setWidget(self.facts_label)
        self.facts_scroll.setMinimumWidth(self.FACTS_MIN_WIDTH)
        self.splitter.addWidget(self.facts_scroll)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([620, 270])
        self.facts_scroll.setVisible(False)
        self._facts_auto = True  # open/close the panel with the width until the user chooses
        cl.addWidget(self.splitter, 1)

        self.hover_label = QtWidgets.QLabel()
        self.hover_label.setWordWrap(True)
        self.hover_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        mono = QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.FixedFont)
        self.hover_label.setFont(mono)
        self.hover_label.setAlignment(Qt.AlignTop | Qt.AlignLeft)
        # A fixed height (set on resize to fit the longest formula at this width): the panes must not move
        # under the mouse while it hovers.
        self.hover_label.setSizePolicy(QtWidgets.QSizePolicy.Ignored, QtWidgets.QSizePolicy.Fixed)
        self._fit_hover_height()
        cl.addWidget(self.hover_label)
        self.stack.addWidget(content)

        self.role_combo.currentIndexChanged.connect(self._refresh)
        self.stored_radio.toggled.connect(self._refresh)
        self.colour_combo.activated.connect(self._on_colour)
        self.logical_pane.glw.scene().sigMouseMoved.connect(self._on_logical_mouse)
        self.physical_pane.glw.scene().sigMouseMoved.connect(self._on_physical_mouse)

        self._apply_palette()
        self.set_tensors(None)

    # ---------------------------------------------------------------------------------------- public
    def set_tensors(self, tensors: dict | None, title: str = "") -> None:
        """Show the tensors of one path (role -> TensorLayout); None or {} shows the placeholder."""
        self._tensors = dict(tensors or {})
        self._title = title
        self.title_label.setText(title)
        self.title_label.setVisible(bool(title))
        prev = self.role_combo.currentText()
        self.role_combo.blockSignals(True)
        self.role_combo.clear()
        roles = [r for r in ROLES if r in self._tensors] + [r for r in self._tensors if r not in ROLES]
        self.role_combo.addItems(roles)
        if prev in roles:
            self.role_combo.setCurrentText(prev)
        elif "output" in roles:
            self.role_combo.setCurrentText("output")
        self.role_combo.blockSignals(False)
        self._refresh()

    def set_role(self, role: str) -> None:
        self.role_combo.setCurrentText(role)

    def set_kernel_mode(self, on: bool) -> None:
        (self.kernel_radio if on else self.stored_radio).setChecked(True)

    @property
    def picture(self) -> LayoutPicture | None:
        return self._picture

    @property
    def current_layout(self) -> Layout | None:
        return self._layout

    # ---------------------------------------------------------------------------------------- build
    def _current(self):
        role = self.role_combo.currentText()
        return role, self._tensors.get(role)

    def _on_colour(self, _i: int):
        if self._layout is not None:
            self._colour_choice[(self._layout.kind, self._layout.ndims)] = self.colour_combo.currentData()
        self._refresh()

    def _refresh(self, *_):
        role, tl = self._current()
        self.last_hover = None
        self.hover_label.setText(self.HOVER_HINT)
        if tl is None:
            self._picture = self._layout = None
            self.controls.setVisible(bool(self._title))
            self.slice_label.setVisible(False)
            self.stack.setCurrentWidget(self.placeholder)
            return
        self.controls.setVisible(True)
        self.stack.setCurrentIndex(1)
        has_kernel = tl.kernel is not None
        self.kernel_radio.setEnabled(has_kernel)
        self.kernel_radio.setToolTip(
            "The layout the convolution kernel read or wrote, from the oneDNN trace" if has_kernel else
            "No oneDNN convolution in this path's trace (e.g. PyTorch's own kernels), so no kernel layout")
        if self.kernel_radio.isChecked() and not has_kernel:
            self.stored_radio.blockSignals(True)
            self.stored_radio.setChecked(True)
            self.stored_radio.blockSignals(False)
        kernel_mode = self.kernel_radio.isChecked() and has_kernel
        lay = tl.kernel if kernel_mode else tl.stored
        self._layout = lay
        if lay is not None:
            self._fill_colour_combo(lay)
        self.facts_label.setText(facts_html(tl, lay, kernel_mode, self._legend_text()))
        self.brief_label.setText(brief_html(tl, lay, kernel_mode))
        self.brief_label.setToolTip(self._legend_text() if lay is not None else "")
        self._fit_hover_height()
        if lay is None:
            self._picture = None
            self.slice_label.setVisible(False)
            self.colour_combo.setEnabled(False)
            reason = tl.unknown_reason or "no layout was recorded for this tensor"
            if not reason.lower().startswith("unknown"):
                reason = f"unknown, because {reason}"
            hint = ("\n\nChoose \u201cas the kernel used it\u201d to see the layout the oneDNN trace recorded."
                    if has_kernel else "")
            self.unknown_label.setText(f"Layout {reason}.".replace("..", ".") + hint)
            self.pane_stack.setCurrentIndex(1)
            return
        self.colour_combo.setEnabled(True)
        pic = build_picture(lay, CELL_LIMIT, self.colour_combo.currentData())
        self._picture = pic
        self.pane_stack.setCurrentIndex(0)
        self._draw(pic)

    def _fill_colour_combo(self, lay: Layout):
        names = dim_names(lay)
        key = (lay.kind, lay.ndims)
        want = self._colour_choice.get(key, default_colour_dim(lay))
        self.colour_combo.blockSignals(True)
        self.colour_combo.clear()
        for d, ch in enumerate(names):
            word = DIM_WORDS.get(ch, f"dim {d}")
            self.colour_combo.addItem(f"{ch} ({word})", d)
        self.colour_combo.setCurrentIndex(min(want, lay.ndims - 1))
        self.colour_combo.blockSignals(False)

    def _draw(self, pic: LayoutPicture):
        lay = pic.layout
        names = dim_names(lay)
        self.logical_pane.set_image(pic.log_img, self._lut)
        self.physical_pane.set_image(pic.phys_img, self._lut)
        g = pic.log_grid
        if pic.log_mode == "wrap":
            rd = g["row_dim"]
            pl = "\u00d7".join(names[d].upper() for d in g["plane_dims"]) or "1"
            fixed = "image 0: " if lay.kind == "data" and lay.ndims >= 3 else ""
            self.logical_pane.caption.setText(f"Logical \u2014 {fixed}{names[rd]} as {pl} planes{slices_caption(names, g)}")
        else:
            pl = "\u00d7".join(names[d].upper() for d in g["plane_dims"]) or "1\u00d71"
            grp = "group 0: " if lay.kind == "weight" and weight_grouped(lay) else ""
            self.logical_pane.caption.setText(
                f"Logical \u2014 {grp}rows {names[g['row_dim']]}, columns {names[g['col_dim']]}, {pl} planes"
                f"{slices_caption(names, g)}")
        geo = pic.phys_geom
        tile = f"{geo['tile_h']}\u00d7{geo['tile_w']} tiles" if geo["tile_h"] > 1 else f"runs of {geo['run']}"
        scope = "image 0, " if geo["scope"].startswith("image 0") else "start of buffer, "
        self.physical_pane.caption.setText(f"Physical \u2014 {scope}{tile}")
        self.physical_pane.caption.setToolTip(
            f"The buffer in memory order, {geo['scope']}: each {tile[:-1] if tile.endswith('s') else tile} is "
            f"one innermost contiguous run of {geo['run']} elements; grey cells are padding (zeros).")
        self.logical_pane.caption.setToolTip("Grey hatched planes are padding: they exist only in memory.")

        if pic.sliced:
            self.slice_label.setText("\u26a0 Large tensor, drawing a slice only: " + "; ".join(pic.notes) + ".")
            self.slice_label.setToolTip(f"At most {CELL_LIMIT} logical and {PHYS_LIMIT} physical cells are drawn; "
                                        "offsets and formulas stay exact for every drawn cell.")
            self.slice_label.setVisible(True)
        else:
            self.slice_label.setVisible(False)
        for pane in (self.logical_pane, self.physical_pane):
            pane.highlight(None)
        self._fit_ranges(pic)
        self._draw_marks(pic)

    def _label_metrics(self) -> QtGui.QFontMetricsF:
        f = QtGui.QFont(self.font())
        f.setPointSizeF(max(7.0, self.font().pointSizeF() - 1))
        return QtGui.QFontMetricsF(f)

    def _row_label_max(self, pic: LayoutPicture) -> str:
        g, names = pic.log_grid, dim_names(pic.layout)
        if pic.log_mode == "wrap":
            step = max(1, math.ceil(g["rows"] / 24))
            return f"{names[g['row_dim']]}{(g['rows'] - 1) // step * step * g['cols']}"
        return f"{names[g['row_dim']]}{max(0, g['rows'] - 1)}"

    def _fit_ranges(self, pic: LayoutPicture) -> None:
        """Each pane's range, with room in pixels for the logical pane's row and column labels."""
        fm = self._label_metrics()
        row_px = fm.horizontalAdvance(self._row_label_max(pic)) + 14  # TextItem's own margins included
        col_px = fm.height() + 8
        matrix = pic.log_mode == "matrix"
        for pane, img in ((self.logical_pane, pic.log_img), (self.physical_pane, pic.phys_img)):
            h, w = img.shape
            left, top = 0.5, 0.5
            if pane is self.logical_pane:
                vw, vh = max(pane.vb.width(), 60.0), max(pane.vb.height(), 40.0)
                left, top = 2.0, (1.5 if matrix else 0.5)
                for _ in range(5):  # the margin changes the scale, which changes the margin: converges fast
                    scale = min(vw / ((w + left + 0.5) * 1.04), vh / ((h + top + 0.5) * 1.04))
                    left = max(0.5, row_px / scale + 0.4)
                    if matrix:
                        top = max(0.5, col_px / scale + 0.3)
                self._scale = scale
            pane.vb.setRange(QtCore.QRectF(-left, -top, w + left + 0.5, h + top + 0.5), padding=0.02)

    def _on_logical_resized(self, *_) -> None:
        pic = self._picture
        if pic is None or self.pane_stack.currentIndex() != 0:
            return
        self._fit_ranges(pic)
        self._draw_marks(pic)

    def _text_colour(self) -> QtGui.QColor:
        return self.palette().color(QtGui.QPalette.WindowText)

    def _draw_marks(self, pic: LayoutPicture):
        pane = self.logical_pane
        pane.begin_marks()
        outlines: list[QtCore.QRectF] = []
        g = pic.log_grid
        names = dim_names(pic.layout)
        dims, pad = pic.layout.dims, pic.layout.padded_dims
        ph, pw, gap = g["plane_h"], g["plane_w"], g["gap"]
        colour = self._text_colour()
        pen = QtGui.QPen(colour, 1.5, Qt.DashLine)
        pen.setCosmetic(True)

        fill = self.palette().color(QtGui.QPalette.Base)
        fill.setAlpha(215)
        size = max(7.0, self.font().pointSizeF() - 1)

        def label(text, x, y, anchor, boxed=False):
            pane.add_label(text, x, y, anchor, colour, fill if boxed else None, size)

        def outline(x0, y0, x1, y1):
            outlines.append(QtCore.QRectF(x0 - 0.25, y0 - 0.25, x1 - x0 + 0.5, y1 - y0 + 0.5))

        if pic.log_mode == "wrap":
            rd, cols, rows = g["row_dim"], g["cols"], g["rows"]
            step = max(1, math.ceil(rows / 24))
            line_px = self._label_metrics().height()
            while self._scale and step < rows and step * (ph + gap) * self._scale < line_px:
                step *= 2  # one label per line of text: never on top of each other
            for r in range(0, rows, step):
                label(f"{names[rd]}{r * cols}", -0.4, r * (ph + gap) + ph / 2, (1, 0.5))
            nreal = min(dims[rd], g["nplanes"])
            if g["nplanes"] > nreal:  # ghost planes: outline the whole ghost run, row by row
                first, last = nreal, g["nplanes"] - 1
                for r in range(first // cols, last // cols + 1):
                    c0 = first % cols if r == first // cols else 0
                    c1 = last % cols if r == last // cols else cols - 1
                    outline(c0 * (pw + gap), r * (ph + gap), c1 * (pw + gap) + pw, r * (ph + gap) + ph)
                r, c = divmod(first, cols)
                label(f"pad ({names[rd]} \u2265 {dims[rd]})", c * (pw + gap) + pw / 2, r * (ph + gap) + ph / 2,
                      (0, 0.5), boxed=True)
        else:
            rd, cd, rows, cols = g["row_dim"], g["col_dim"], g["rows"], g["cols"]
            rstep = _nice_step(rows)
            cstep = _nice_step(cols)
            fm = self._label_metrics()
            col_px = fm.horizontalAdvance(f"{names[cd]}{max(0, cols - 1)}") + 10
            while self._scale and cstep < cols and cstep * (pw + gap) * self._scale < col_px:
                cstep *= 2  # column labels never run together ("i12i16i20")
            while self._scale and rstep < rows and rstep * (ph + gap) * self._scale < fm.height():
                rstep *= 2
            for r in range(0, rows, rstep):
                label(f"{names[rd]}{r}", -0.4, r * (ph + gap) + ph / 2, (1, 0.5))
            for c in range(0, cols, cstep):
                label(f"{names[cd]}{c}", c * (pw + gap) + pw / 2, -0.3, (0.5, 1))
            H, W = pic.log_img.shape
            if rows > dims[rd]:
                y0 = dims[rd] * (ph + gap)
                outline(0, y0, W, H)
                label(f"pad ({names[rd]} \u2265 {dims[rd]})", W / 2, (y0 + H) / 2, (0.5, 0.5), boxed=True)
            if cols > dims[cd]:
                x0 = dims[cd] * (pw + gap)
                outline(x0, 0, W, min(H, dims[rd] * (ph + gap) - gap) if rows > dims[rd] else H)
                label(f"pad ({names[cd]} \u2265 {dims[cd]})", (x0 + W) / 2, min(H, dims[rd] * (ph + gap)) / 2,
                      (0.5, 0.5), boxed=True)
        pane.set_outlines(outlines, pen)
        pane.end_marks()
        del pad

    # ---------------------------------------------------------------------------------------- facts
    def _legend_text(self) -> str:
        return ("Colour = logical " + (self.colour_combo.currentText() if self.colour_combo.count() else "index")
                + f" (cycles every {N_COLOURS}); grey checks = padding (zeros). Hover a cell for its offset.")

    # ---------------------------------------------------------------------------------------- sizing
    def _on_facts_toggled(self, on: bool) -> None:
        self._facts_auto = False  # the user chose: keep it until they choose again
        self._apply_facts(on)

    def _apply_facts(self, on: bool) -> None:
        self.facts_button.setArrowType(Qt.LeftArrow if on else Qt.RightArrow)
        self.facts_scroll.setVisible(on)
        self.brief_label.setVisible(not on)
        if on:
            w = max(self.splitter.width(), 2 * self.FACTS_MIN_WIDTH)
            fw = max(self.FACTS_MIN_WIDTH, min(320, int(w * 0.3)))
            self.splitter.setSizes([w - fw, fw])

    def set_details_visible(self, on: bool) -> None:
        """Open or close the Details panel as the user would (it then stops following the width)."""
        self.facts_button.setChecked(on)
        if self.facts_scroll.isVisibleTo(self) != on:
            self._on_facts_toggled(on)

    def resizeEvent(self, ev) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(ev)
        if self._facts_auto:
            wide = self.width() >= self.WIDE
            if wide != self.facts_button.isChecked() or wide != self.facts_scroll.isVisibleTo(self):
                self.facts_button.blockSignals(True)
                self.facts_button.setChecked(wide)
                self.facts_button.blockSignals(False)
                self._apply_facts(wide)
        self._fit_hover_height()

    def _hover_samples(self) -> list[str]:
        """The longest texts a hover can show for the current layout (its height is fixed per layout)."""
        lay = self._layout
        if lay is None:
            return [self.HOVER_HINT]
        last = tuple(max(0, d - 1) for d in lay.dims)
        names = dim_names(lay)
        head = (f"{names}[{', '.join(map(str, last))}]  ({', '.join(f'{n}={v}' for n, v in zip(names, last))})"
                f"  \u2192  offset {lay.nbytes}   (outside the drawn logical slice)")
        lines = [head] + ["  = " + part for part in lay.offset_formula(last).split(" = ")[:-1]]
        pad = (f"padding (zero) at offset {lay.nbytes}: {names[0]}={last[0]} \u2265 {lay.dims[0]} exists only in "
               f"memory (padded to {fmt_dims(lay.padded_dims)}); oneDNN keeps it zero")
        return ["\n".join(lines), pad]

    def _fit_hover_height(self) -> None:
        fm = QtGui.QFontMetrics(self.hover_label.font())
        width = max(120, self.width() - 12)
        lines = 2
        for text in self._hover_samples():
            # Word wrap breaks a little earlier than the pixel count says: 12 % slack.
            n = sum(max(1, math.ceil(fm.horizontalAdvance(line) * 1.12 / width)) for line in text.split("\n"))
            lines = max(lines, n)
        h = lines * fm.lineSpacing() + 6
        if self.hover_label.height() != h or self.hover_label.minimumHeight() != h:
            self.hover_label.setFixedHeight(h)

    # ---------------------------------------------------------------------------------------- hover
    def _on_logical_mouse(self, scene_pos):
        cell = self.logical_pane.cell_at_scene(scene_pos)
        # Mouse moves inside one cell fire many events: only a new cell does any work.
        if cell is not None and not (self.last_hover and self.last_hover.logical_cell == cell):
            self.hover_logical_cell(*cell)

    def _on_physical_mouse(self, scene_pos):
        cell = self.physical_pane.cell_at_scene(scene_pos)
        if cell is not None and not (self.last_hover and self.last_hover.physical_cell == cell):
            self.hover_physical_cell(*cell)

    def hover_logical_cell(self, x: int, y: int) -> HoverInfo | None:
        """Hover the logical cell (x, y): highlight it in both panes and describe it."""
        pic = self._picture
        if pic is None:
            return None
        hit = pic.logical_at(x, y)
        if hit is None:
            return None
        off, idx, is_pad = hit
        return self._show_hover(off, None if is_pad else idx, (x, y), pic.physical_cell_of_offset(off), idx)

    def hover_physical_cell(self, x: int, y: int) -> HoverInfo | None:
        """Hover the physical cell (x, y): highlight it in both panes and describe it."""
        pic = self._picture
        if pic is None:
            return None
        off = pic.physical_offset_at(x, y)
        if off is None:
            return None
        idx = tuple(int(v) for v in pic.phys_idx[off]) if pic.phys_valid[off] else None
        return self._show_hover(off, idx, pic.logical_cell_of_offset(off), (x, y), None)

    def _show_hover(self, off, idx, lcell, pcell, padded_idx) -> HoverInfo:
        lay = self._layout
        names = dim_names(lay)
        if idx is not None:
            where = ", ".join(f"{n}={v}" for n, v in zip(names, idx))
            formula = lay.offset_formula(idx)
            text = f"{names}[{', '.join(map(str, idx))}]  ({where})  \u2192  offset {formula}"
            if lcell is None:
                text += "   (outside the drawn logical slice)"
        else:
            text = f"padding (zero) at offset {off}: no logical element; oneDNN keeps it zero"
            if padded_idx is not None:
                beyond = [f"{n}={v} \u2265 {d}" for n, v, d in zip(names, padded_idx, lay.dims) if v >= d]
                text = (f"padding (zero) at offset {off}: {', '.join(beyond)} exists only in memory "
                        f"(padded to {fmt_dims(lay.padded_dims)}); oneDNN keeps it zero")
        if pcell is None and idx is not None:
            text += "   (physical pane shows only the first part of the buffer)"
        shown = text
        if idx is not None and " = " in formula:
            # The same text on lines: element and offset, then the formula and its numbers.
            steps = formula.split(" = ")
            head, _, tail = text.partition(f"offset {formula}")
            shown = "\n".join([f"{head}offset {steps[-1]}{tail}"] + [f"  = {p}" for p in steps[:-1]])
        pic = self._picture
        self.logical_pane.highlight(lcell, pic.logical_plane_rect(lcell) if lcell else None)
        self.physical_pane.highlight(pcell, pic.physical_run_rect(pcell) if pcell else None)
        self.hover_label.setText(shown)
        info = HoverInfo(off, idx, idx is None, text, lcell, pcell)
        self.last_hover = info
        self.hovered.emit(text)
        return info

    # ---------------------------------------------------------------------------------------- palette
    def changeEvent(self, ev):
        super().changeEvent(ev)
        if ev.type() in (QtCore.QEvent.PaletteChange, QtCore.QEvent.StyleChange):
            self._apply_palette()
            if self._picture is not None:
                self._draw_marks(self._picture)

    def _apply_palette(self):
        pal = self.palette()
        bg = pal.color(QtGui.QPalette.Base)
        dark = pal.color(QtGui.QPalette.Window).lightness() < 128
        self._lut = make_lut(dark)
        for pane in (self.logical_pane, self.physical_pane):
            pane.glw.setBackground(bg)
            if pane.image.image is not None:
                pane.image.setLookupTable(self._lut)
        warn = "#ffb74d" if dark else "#a35f00"
        self.slice_label.setStyleSheet(f"color: {warn}; font-weight: bold;")


def _nice_step(n: int, max_labels: int = 8) -> int:
    for s in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024):
        if n / s <= max_labels:
            return s
    return max(1, n // max_labels)
