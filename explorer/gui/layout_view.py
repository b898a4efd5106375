"""Layout view: one tensor of one path, drawn twice.

* Logical pane: the tensor as people think of it. Data tensors show the first image with its channels as
  H x W planes in a grid; weights show a matrix of kh x kw planes (rows = output channel, columns = input
  channel). Channels that exist only because of padding are grey "ghost" planes, outlined and marked "pad".
* Physical pane: the buffer in memory order, wrapped at the innermost contiguous run (W for nchw, C for
  nhwc, 16 for nChw16c, a 16 x 16 tile for OIhw16i16o). Every cell is coloured by the logical channel it
  holds; padding cells are grey.

Hovering a cell in either pane highlights the same element in the other and shows its offset formula.
Everything is built with numpy from :class:`explorer.core.layout.tags.Layout` (no per-element Python loop) and
drawn as two uint8 ImageItems with a fixed lookup table; big tensors are sliced to ``CELL_LIMIT`` cells.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtCore import Qt

from explorer.core.layout.tags import Layout
from explorer.gui.widgets import ElidedLabel, FlowLayout

__all__ = ["LayoutView", "LayoutPicture", "HoverInfo", "build_picture", "CELL_LIMIT", "PHYS_LIMIT"]

CELL_LIMIT = 65536  # at most this many logical cells are drawn
PHYS_LIMIT = 16384  # at most this many buffer elements in the physical pane (about 2.5 px per cell at 900 px)
ROLES = ("input", "weight", "output")

# Fixed qualitative palette (Kelly's colours without white, black and grey, plus cyan); greys mean padding.
_QUALITATIVE = [
    "#0067A5", "#F38400", "#008856", "#BE0032", "#875692", "#F3C300", "#17BECF", "#E68FAC", "#8DB600",
    "#882D17", "#A1CAF1", "#604E97", "#F99379", "#DCD300", "#B3446C", "#654522", "#E25822", "#2B3D26",
    "#C2B280", "#F6A600",
]
N_COLOURS = len(_QUALITATIVE)
GAP, PAD_A, PAD_B = 255, 254, 253  # LUT slots: transparent gap, two greys for hatched padding
_TARGET_ASPECT = 0.9  # width / height the grids aim for (panes are roughly square)

_DIM_NAMES = {
    ("data", 1): "c", ("data", 2): "nc", ("data", 3): "ncw", ("data", 4): "nchw", ("data", 5): "ncdhw",
    ("weight", 1): "o", ("weight", 2): "oi", ("weight", 3): "oiw", ("weight", 4): "oihw",
    ("weight", 5): "goihw", ("weight", 6): "goidhw",
}
_DIM_WORDS = {"n": "image", "c": "channel", "h": "row", "w": "column", "d": "depth", "o": "output channel",
              "i": "input channel", "g": "group"}
_SOURCE_TEXT = {
    "descriptor": "descriptor (the MKLDNN tensor's oneDNN memory desc)",
    "strides": "strides (of the dense tensor)",
    "trace": "trace (the convolution's oneDNN verbose line)",
}


_SPATIAL = {0: "", 1: "w", 2: "hw", 3: "dhw"}


def weight_grouped(layout: Layout) -> bool:
    """A weight with a leading g dim: as the layout says, else guessed (5+ dims: a grouped 2-D weight)."""
    g = getattr(layout, "grouped", None)
    return g if g is not None else layout.ndims >= 5


def dim_names(layout: Layout) -> str:
    if layout.kind == "weight" and layout.ndims >= 3:
        lead = "g" if weight_grouped(layout) else ""
        sp = layout.ndims - 2 - len(lead)
        if sp in _SPATIAL:
            return lead + "oi" + _SPATIAL[sp]
    return _DIM_NAMES.get((layout.kind, layout.ndims), "abcdefghijkl"[: layout.ndims])


def make_lut(dark: bool = False) -> np.ndarray:
    """256 x 4 uint8 RGBA lookup table: channel colours cycle in 0..N_COLOURS-1, greys for padding."""
    lut = np.zeros((256, 4), dtype=np.uint8)
    for i in range(GAP):
        c = QtGui.QColor(_QUALITATIVE[i % N_COLOURS])
        lut[i] = (c.red(), c.green(), c.blue(), 255)
    lut[PAD_A] = (82, 82, 82, 255) if dark else (150, 150, 150, 255)
    lut[PAD_B] = (112, 112, 112, 255) if dark else (190, 190, 190, 255)
    lut[GAP] = (0, 0, 0, 0)
    return lut


# ------------------------------------------------------------------------------------------------ model
@dataclass
class LayoutPicture:
    """Pixel maps of both panes for one layout. Image arrays are row-major (row = y, column = x)."""

    layout: Layout
    colour_dim: int
    # logical pane
    log_img: np.ndarray  # uint8 (H, W)
    log_off: np.ndarray  # int64 (H, W): buffer offset of the cell, -1 in gaps
    log_idx: np.ndarray  # int64 (H, W, ndims): logical (possibly padded) index, -1 in gaps
    log_pad: np.ndarray  # bool (H, W): cell is a padding (ghost) element
    log_mode: str  # "wrap" (data: channels in a grid) or "matrix" (weights: o x i)
    log_grid: dict  # geometry: plane_h, plane_w, gap, cols, rows, nplanes, grid dims...
    # physical pane
    phys_img: np.ndarray  # uint8 (H, W)
    phys_off: np.ndarray  # int64 (H, W): buffer offset, -1 in gaps and beyond the drawn prefix
    phys_count: int  # buffer elements drawn: offsets 0 .. phys_count-1
    phys_total: int  # elements in the whole (padded) buffer
    phys_idx: np.ndarray  # int64 (phys_count, ndims): element at each drawn offset, -1 for padding
    phys_valid: np.ndarray  # bool (phys_count,)
    phys_geom: dict  # run, tile_h, tile_w, gap_x, gap_y, per_row
    notes: list[str]  # human notes on what is drawn (slices)
    sliced: bool

    # -- lookups ------------------------------------------------------------------------------------
    def __post_init__(self):
        ys, xs = np.nonzero(self.log_off >= 0)
        offs = self.log_off[ys, xs]
        order = np.argsort(offs, kind="stable")
        self._log_sorted = offs[order]
        self._log_xy = np.stack([xs[order], ys[order]], axis=1)
        self._phys_pix = np.full((self.phys_count, 2), -1, dtype=np.int64)
        pys, pxs = np.nonzero(self.phys_off >= 0)
        self._phys_pix[self.phys_off[pys, pxs]] = np.stack([pxs, pys], axis=1)

    def logical_cell_of_offset(self, offset: int) -> tuple[int, int] | None:
        """(x, y) of the logical-pane cell holding buffer `offset`, or None when it is not drawn."""
        i = int(np.searchsorted(self._log_sorted, offset))
        if i < len(self._log_sorted) and self._log_sorted[i] == offset:
            x, y = self._log_xy[i]
            return int(x), int(y)
        return None

    def physical_cell_of_offset(self, offset: int) -> tuple[int, int] | None:
        """(x, y) of the physical-pane cell of buffer `offset`, or None beyond the drawn prefix."""
        if 0 <= offset < self.phys_count:
            x, y = self._phys_pix[offset]
            if x >= 0:
                return int(x), int(y)
        return None

    def logical_plane_rect(self, cell: tuple[int, int]) -> tuple[int, int, int, int]:
        """(x, y, w, h) of the plane holding logical cell `cell`."""
        g = self.log_grid
        sx, sy = g["plane_w"] + g["gap"], g["plane_h"] + g["gap"]
        return (cell[0] // sx) * sx, (cell[1] // sy) * sy, g["plane_w"], g["plane_h"]

    def physical_run_rect(self, cell: tuple[int, int]) -> tuple[int, int, int, int]:
        """(x, y, w, h) of the contiguous run (row or tile) holding physical cell `cell`."""
        g = self.phys_geom
        sx, sy = g["tile_w"] + g["gap_x"], g["tile_h"] + g["gap_y"]
        return (cell[0] // sx) * sx, (cell[1] // sy) * sy, g["tile_w"], g["tile_h"]

    def logical_cell_of_index(self, index) -> tuple[int, int] | None:
        return self.logical_cell_of_offset(self.layout.offset(index))

    def physical_offset_at(self, x: int, y: int) -> int | None:
        h, w = self.phys_off.shape
        if 0 <= x < w and 0 <= y < h and self.phys_off[y, x] >= 0:
            return int(self.phys_off[y, x])
        return None

    def logical_at(self, x: int, y: int) -> tuple[int, tuple[int, ...], bool] | None:
        """(offset, index, is_padding) of the logical cell at (x, y), or None in a gap / outside."""
        h, w = self.log_off.shape
        if 0 <= x < w and 0 <= y < h and self.log_off[y, x] >= 0:
            return int(self.log_off[y, x]), tuple(int(v) for v in self.log_idx[y, x]), bool(self.log_pad[y, x])
        return None


def _slices(names: str, grid: dict) -> str:
    """Caption tail for 3-D planes: each plane stacks its D slices of HxW vertically."""
    pd = grid.get("plane_dims") or []
    if len(pd) < 3:
        return ""
    a, b, c = (names[d].upper() for d in pd[-3:])
    return f" ({a} slices of {b}\u00d7{c}, stacked)"


def _checker(shape) -> np.ndarray:
    y, x = np.indices(shape)
    return np.where(((x + y) % 2) == 0, PAD_A, PAD_B).astype(np.uint8)


def _logical(lay: Layout, limit: int, colour_dim: int):
    nd, dims, pad = lay.ndims, lay.dims, lay.padded_dims
    notes: list[str] = []
    if lay.kind == "weight" and nd >= 2:
        lead = 1 if (nd >= 3 and weight_grouped(lay)) else 0
        rd, cd = lead, lead + 1
        plane_dims = list(range(lead + 2, nd))
        mode = "matrix"
        fixed = list(range(lead))
    elif nd == 2:
        rd, cd, plane_dims, mode, fixed = 0, 1, [], "matrix", []
    elif nd == 1:
        rd, cd, plane_dims, mode, fixed = 0, None, [], "wrap", []
    else:
        rd, cd, plane_dims, mode, fixed = 1, None, list(range(2, nd)), "wrap", [0]
    names = dim_names(lay)

    ph = math.prod(dims[d] for d in plane_dims[:-1]) if len(plane_dims) > 1 else 1
    pw = dims[plane_dims[-1]] if plane_dims else 1
    if pw > limit:
        pw = limit
        notes.append(f"{names[plane_dims[-1]].upper()} cropped to {pw}")
    if ph * pw > limit:
        ph = max(1, limit // pw)
        notes.append(f"plane rows cropped to {ph}")
    gap = 1 if ph * pw > 1 else 0
    planes_max = max(1, limit // (ph * pw))

    if mode == "wrap":
        n_log = min(dims[rd], planes_max)
        ghosts = min(pad[rd] - dims[rd], planes_max - n_log) if n_log == dims[rd] else 0
        nplanes = n_log + ghosts
        if n_log < dims[rd]:
            notes.append(f"{names[rd]} 0-{n_log - 1} of {dims[rd]}")
        est = math.sqrt(nplanes * (ph + gap) / (pw + gap) * _TARGET_ASPECT)
        blk = lay.dim_block(rd)
        if blk > 1 and nplanes >= 4:
            # Power of two that divides the block, so each block starts a fresh grid row.
            cands = [2 ** k for k in range(0, int(math.log2(blk)) + 1) if blk % (2 ** k) == 0]
            cols = min(cands, key=lambda c: abs(math.log(c / max(est, 1e-9))))
        else:
            cols = max(1, round(est))
        cols = max(1, min(cols, nplanes))
        rows = -(-nplanes // cols)
    else:
        nr, nc = pad[rd], pad[cd]
        if nr * nc > planes_max:
            nc = min(dims[cd], max(1, math.isqrt(planes_max)))
            if nc > 16:
                nc -= nc % 16
            nr = min(dims[rd], max(1, planes_max // nc))
            if nr > 16:
                nr -= nr % 16
            if nr < dims[rd]:
                notes.append(f"{names[rd]} 0-{nr - 1} of {dims[rd]}")
            if nc < dims[cd]:
                notes.append(f"{names[cd]} 0-{nc - 1} of {dims[cd]}")
        rows, cols, nplanes = nr, nc, nr * nc
    del fixed  # fixed dims (image n, group g) are drawn at index 0; the captions say so

    H = rows * (ph + gap) - gap
    W = cols * (pw + gap) - gap
    y, x = np.indices((H, W), dtype=np.int64)
    pr, iy = np.divmod(y, ph + gap)
    pc, ix = np.divmod(x, pw + gap)
    gaps = (iy >= ph) | (ix >= pw)
    idx = np.zeros((H, W, nd), dtype=np.int64)
    if mode == "wrap":
        p = pr * cols + pc
        gaps |= p >= nplanes
        idx[..., rd] = p
    else:
        idx[..., rd] = pr
        idx[..., cd] = pc
    if plane_dims:
        idx[..., plane_dims[-1]] = ix
        rem = iy.copy()
        for d in reversed(plane_dims[:-1]):
            idx[..., d] = rem % dims[d]
            rem //= dims[d]
    idx[gaps] = -1

    ok = ~gaps
    sel = idx[ok]
    box = tuple(int(sel[:, d].max()) + 1 if sel.size else 1 for d in range(nd))
    # Layout offsets are a sum of per-dim terms, so a layout with the drawn box as its dims gives the
    # offsets of that box of the original buffer (ghost positions beyond dims included).
    box_off = dataclasses.replace(lay, dims=box).offsets()
    off = np.full((H, W), -1, dtype=np.int64)
    off[ok] = box_off[tuple(sel.T)]
    padm = ok & np.any(idx >= np.asarray(dims), axis=2)

    img = np.full((H, W), GAP, dtype=np.uint8)
    img[ok] = (idx[..., colour_dim][ok] % N_COLOURS).astype(np.uint8)
    img[padm] = _checker((H, W))[padm]

    grid = dict(plane_h=ph, plane_w=pw, gap=gap, rows=rows, cols=cols, nplanes=nplanes, row_dim=rd,
                col_dim=cd, plane_dims=plane_dims)
    return img, off, idx, padm, mode, grid, notes


def _physical(lay: Layout, limit: int, colour_dim: int):
    nd, pad = lay.ndims, lay.padded_dims
    total = math.prod(pad)
    notes: list[str] = []
    names = dim_names(lay)
    run = lay.innermost_run
    if lay.kind == "data" and nd >= 3 and lay.order[0] == 0 and pad[0] > 1:
        count = total // pad[0]
        scope = f"image 0 ({count} of {total} elements)"
    else:
        count = total
        scope = f"all {total} elements"
    if count > limit:
        count = limit - limit % run if limit >= run else limit
        scope = f"the first {count} of {total} elements"
        notes.append(f"physical: first {count} of {total} buffer elements")

    if len(lay.inner_blks) >= 2:
        tw = lay.inner_blks[-1]
        th = run // tw
    elif run <= 64:
        th, tw = 1, run
    else:
        divs = [d for d in range(64, 15, -1) if run % d == 0]
        tw = divs[0] if divs else 64
        th = -(-run // tw)
    gx = 1 if tw >= 3 else 0
    gy = 1 if th > 1 else 0
    ntiles = -(-count // run)
    est = math.sqrt(ntiles * (th + gy) / (tw + gx) * _TARGET_ASPECT)
    per_row = max(1, round(est))
    # Snap to the extent of the next-outer memory dim when close: a grid row then is one of its units.
    nxt = lay.order[-1] if lay.inner_blks else (lay.order[-2] if nd >= 2 else None)
    if nxt is not None:
        ext = pad[nxt] // lay.dim_block(nxt)
        if 0.67 * per_row <= ext <= 1.5 * per_row:
            per_row = ext
    per_row = max(1, min(per_row, ntiles))
    rows = -(-ntiles // per_row)
    H = rows * (th + gy) - gy
    W = per_row * (tw + gx) - gx

    y, x = np.indices((H, W), dtype=np.int64)
    tr, iy = np.divmod(y, th + gy)
    tc, ix = np.divmod(x, tw + gx)
    r = iy * tw + ix
    off = (tr * per_row + tc) * run + r
    gaps = (iy >= th) | (ix >= tw) | (r >= run) | (off >= count)
    off[gaps] = -1

    pidx, valid = lay.elements_at(np.arange(count, dtype=np.int64))
    colour = np.where(valid, pidx[:, colour_dim] % N_COLOURS, 0).astype(np.uint8)
    img = np.full((H, W), GAP, dtype=np.uint8)
    ok = ~gaps
    o = off[ok]
    chk = _checker((H, W))[ok]
    img[ok] = np.where(valid[o], colour[o], chk)
    geom = dict(run=run, tile_h=th, tile_w=tw, gap_x=gx, gap_y=gy, per_row=per_row, rows=rows, scope=scope)
    del names
    return img, off, count, total, pidx, valid, geom, notes


def build_picture(lay: Layout, limit: int = CELL_LIMIT, colour_dim: int | None = None,
                  phys_limit: int = PHYS_LIMIT) -> LayoutPicture:
    """Both panes' pixel maps for `lay`: at most `limit` logical and `phys_limit` physical cells
    (vectorised: no per-element loop)."""
    if colour_dim is None:
        colour_dim = default_colour_dim(lay)
    limg, loff, lidx, lpad, mode, grid, lnotes = _logical(lay, limit, colour_dim)
    pimg, poff, count, total, pidx, valid, geom, pnotes = _physical(lay, phys_limit, colour_dim)
    notes = ["logical: " + ", ".join(lnotes)] if lnotes else []
    notes += pnotes
    sliced = bool(notes)
    return LayoutPicture(lay, colour_dim, limg, loff, lidx, lpad, mode, grid, pimg, poff, count, total, pidx,
                         valid, geom, notes, sliced)


def default_colour_dim(lay: Layout) -> int:
    names = dim_names(lay)
    want = "o" if lay.kind == "weight" else "c"
    return names.index(want) if want in names else (1 if lay.ndims > 1 else 0)


# ------------------------------------------------------------------------------------------------ hover
@dataclass
class HoverInfo:
    offset: int
    index: tuple[int, ...] | None  # logical index, None for padding
    padding: bool
    text: str
    logical_cell: tuple[int, int] | None
    physical_cell: tuple[int, int] | None


def _fmt_dims(dims) -> str:
    return "\u00d7".join(str(d) for d in dims)


def _human_bytes(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    for unit in ("KiB", "MiB", "GiB"):
        n /= 1024.0
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}"
    return f"{n} B"


# ------------------------------------------------------------------------------------------------ widget
class _Pane(QtWidgets.QWidget):
    """A caption plus a pyqtgraph ViewBox (no axes) holding one ImageItem and two highlight rectangles."""

    def __init__(self, caption: str, parent=None):
        super().__init__(parent)
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.caption = QtWidgets.QLabel(caption)
        self.caption.setWordWrap(True)
        f = self.caption.font()
        f.setBold(True)
        self.caption.setFont(f)
        lay.addWidget(self.caption)
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.setMinimumSize(120, 100)
        self.glw.ci.setContentsMargins(2, 2, 2, 2)
        self.vb = self.glw.addViewBox(lockAspect=True, invertY=True, enableMenu=True)
        self.vb.setMouseEnabled(x=True, y=True)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.vb.addItem(self.image)
        # Labels and dashed outlines are pooled and reused, never removed: on PySide6 6.12 with Python 3.11,
        # QGraphicsScene.removeItem drops a reference to None on every call, which aborts the process
        # after enough redraws ("none_dealloc: deallocating None").
        self.labels: list[pg.TextItem] = []
        self._labels_used = 0
        self.outline = QtWidgets.QGraphicsPathItem()
        self.outline.setBrush(Qt.NoBrush)
        self.outline.setZValue(50)
        self.vb.addItem(self.outline, ignoreBounds=True)
        self.hl_outer = QtWidgets.QGraphicsRectItem(0, 0, 1, 1)
        self.hl_inner = QtWidgets.QGraphicsRectItem(0, 0, 1, 1)
        for item, colour, width in ((self.hl_outer, "#000000", 4.0), (self.hl_inner, "#ffffff", 2.0)):
            pen = QtGui.QPen(QtGui.QColor(colour), width)
            pen.setCosmetic(True)
            item.setPen(pen)
            item.setBrush(Qt.NoBrush)
            item.setZValue(100 + width)
            item.setVisible(False)
            self.vb.addItem(item, ignoreBounds=True)
        self.hl_group = QtWidgets.QGraphicsRectItem(0, 0, 1, 1)
        gpen = QtGui.QPen(QtGui.QColor("#ff2bd6"), 2.0)
        gpen.setCosmetic(True)
        self.hl_group.setPen(gpen)
        self.hl_group.setBrush(Qt.NoBrush)
        self.hl_group.setZValue(99)
        self.hl_group.setVisible(False)
        self.vb.addItem(self.hl_group, ignoreBounds=True)
        lay.addWidget(self.glw, 1)

    def set_image(self, img: np.ndarray, lut: np.ndarray):
        self.image.setImage(np.ascontiguousarray(img), lut=lut, levels=(0, 255), autoLevels=False,
                            axisOrder="row-major")
        self.image.setRect(QtCore.QRectF(0, 0, img.shape[1], img.shape[0]))

    def begin_marks(self):
        self._labels_used = 0
        self.outline.setPath(QtGui.QPainterPath())

    def add_label(self, text, x, y, anchor, colour, fill=None, point_size=None):
        if self._labels_used == len(self.labels):
            t = pg.TextItem("")
            t.setZValue(60)
            self.vb.addItem(t, ignoreBounds=True)
            self.labels.append(t)
        t = self.labels[self._labels_used]
        self._labels_used += 1
        t.setColor(colour)
        t.setText(text)
        t.fill = pg.mkBrush(fill) if fill is not None else pg.mkBrush(None)
        if point_size is not None:
            f = t.textItem.font()
            f.setPointSizeF(point_size)
            t.setFont(f)
        t.setAnchor(anchor)
        t.setPos(x, y)
        t.setVisible(True)
        t.update()

    def set_outlines(self, rects, pen):
        path = QtGui.QPainterPath()
        for r in rects:
            path.addRect(r)
        self.outline.setPen(pen)
        self.outline.setPath(path)

    def end_marks(self):
        for t in self.labels[self._labels_used:]:
            t.setVisible(False)

    def highlight(self, cell: tuple[int, int] | None, group=None):
        """Mark `cell` (x, y) with a high-contrast square and `group` (x, y, w, h) with a thin outline."""
        if group is None or cell is None:
            self.hl_group.setVisible(False)
        else:
            x, y, w, h = group
            self.hl_group.setRect(QtCore.QRectF(x - 0.15, y - 0.15, w + 0.3, h + 0.3))
            self.hl_group.setVisible(True)
        for item in (self.hl_outer, self.hl_inner):
            if cell is None:
                item.setVisible(False)
            else:
                item.setRect(QtCore.QRectF(cell[0], cell[1], 1, 1))
                item.setVisible(True)

    def cell_at_scene(self, scene_pos) -> tuple[int, int] | None:
        if not self.vb.sceneBoundingRect().contains(scene_pos):
            return None
        p = self.vb.mapSceneToView(scene_pos)
        return int(math.floor(p.x())), int(math.floor(p.y()))


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
        self.logical_pane = _Pane("Logical")
        self.physical_pane = _Pane("Physical")
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
        self.facts_label.setText(self._facts_html(tl, lay, kernel_mode))
        self.brief_label.setText(self._brief_html(tl, lay, kernel_mode))
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
            word = _DIM_WORDS.get(ch, f"dim {d}")
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
            self.logical_pane.caption.setText(f"Logical \u2014 {fixed}{names[rd]} as {pl} planes{_slices(names, g)}")
        else:
            pl = "\u00d7".join(names[d].upper() for d in g["plane_dims"]) or "1\u00d71"
            grp = "group 0: " if lay.kind == "weight" and weight_grouped(lay) else ""
            self.logical_pane.caption.setText(
                f"Logical \u2014 {grp}rows {names[g['row_dim']]}, columns {names[g['col_dim']]}, {pl} planes"
                f"{_slices(names, g)}")
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
    def _facts_html(self, tl, lay: Layout | None, kernel_mode: bool) -> str:
        rows: list[tuple[str, str]] = []
        rows.append(("Tensor", f"{tl.role} \u00b7 {_fmt_dims(tl.shape)} {tl.dtype}"))
        rows.append(("Showing", "as the convolution kernel used it" if kernel_mode else "as stored"))
        if lay is not None:
            alias = lay.alias
            rows.append(("Tag", f"<b>{lay.tag}</b>" + (f" = {alias}" if alias else "")))
            rows.append(("Dims", _fmt_dims(lay.dims)))
            padded = _fmt_dims(lay.padded_dims)
            if lay.padded_dims != lay.dims:
                padded = f"<b>{padded}</b>"
            rows.append(("Padded dims", padded))
            rows.append(("Strides", ", ".join(str(s) for s in lay.strides) + " (outer, elements)"))
            if lay.inner_blks:
                names = dim_names(lay)
                rows.append(("Inner blocks", " ".join(f"{b}{names[d]}" for b, d in zip(lay.inner_blks,
                                                                                     lay.inner_idxs))))
            rows.append(("Contiguous run", f"{lay.innermost_run} elements"))
        if kernel_mode and lay is not None:
            stored_b, logical_b = lay.nbytes, lay.logical_nbytes
            src = "trace"
        else:
            stored_b, logical_b = tl.stored_bytes, tl.logical_bytes
            src = tl.source
        over = 100.0 * (stored_b - logical_b) / logical_b if logical_b else 0.0
        rows.append(("Stored bytes", f"<b>{stored_b}</b>" + (f" ({_human_bytes(stored_b)})" if stored_b >= 1024
                                                               else "")))
        rows.append(("Logical bytes", f"{logical_b}" + (f" ({_human_bytes(logical_b)})" if logical_b >= 1024
                                                        else "")))
        ov = f"{over:+.1f} %"
        rows.append(("Overhead", f"<b>{ov}</b> padding" if over > 0 else ov))
        rows.append(("From", _SOURCE_TEXT.get(src, src)))
        if lay is None:
            reason = tl.unknown_reason or "no layout was recorded for this tensor"
            if not reason.lower().startswith("unknown"):
                reason = f"unknown, because {reason}"
            rows.append(("Layout", f"<i>{reason}</i>"))
        # Stored vs kernel comparison.
        if tl.kernel is not None:
            if tl.stored is not None and tl.kernel.tag == tl.stored.tag:
                rows.append(("Kernel", f"used it as stored ({tl.kernel.tag}): no reorder needed"))
            elif kernel_mode:
                st = tl.stored.tag if tl.stored is not None else "unknown"
                rows.append(("Kernel", f"stored as {st}; oneDNN reordered it to {tl.kernel.tag} for the kernel"))
            else:
                rows.append(("Kernel", f"used {tl.kernel.tag}"
                             + (f" = {tl.kernel.alias}" if tl.kernel.alias else "")
                             + ": a reorder ran before or after the convolution"))
        else:
            rows.append(("Kernel", "no oneDNN convolution in the trace"))
        legend = self._legend_text()
        body = "".join(f"<tr><td style='padding-right:6px; white-space:nowrap'><b>{k}</b></td><td>{v}</td></tr>"
                       for k, v in rows)
        table = f"<table cellspacing='0' cellpadding='1'>{body}</table>"
        return table if lay is None else table + f"<p style='margin-top:6px'><small>{legend}</small></p>"

    def _legend_text(self) -> str:
        return ("Colour = logical " + (self.colour_combo.currentText() if self.colour_combo.count() else "index")
                + f" (cycles every {N_COLOURS}); grey checks = padding (zeros). Hover a cell for its offset.")

    def _brief_html(self, tl, lay: Layout | None, kernel_mode: bool) -> str:
        """The facts that matter most, in one wrapped line above the panes (the Details panel has them all)."""
        parts = []
        if lay is not None:
            parts.append(f"<b>{lay.tag}</b>" + (f" = {lay.alias}" if lay.alias else ""))
            parts.append(f"{_fmt_dims(lay.dims)} {tl.dtype}")
            if lay.padded_dims != lay.dims:
                parts.append(f"padded to <b>{_fmt_dims(lay.padded_dims)}</b>")
            parts.append(f"runs of {lay.innermost_run}")
            stored_b, logical_b = (lay.nbytes, lay.logical_nbytes) if kernel_mode else (tl.stored_bytes,
                                                                                        tl.logical_bytes)
        else:
            parts.append(f"{tl.role} \u00b7 {_fmt_dims(tl.shape)} {tl.dtype} \u00b7 <i>layout unknown</i>")
            stored_b, logical_b = tl.stored_bytes, tl.logical_bytes
        over = 100.0 * (stored_b - logical_b) / logical_b if logical_b else 0.0
        parts.append(f"stored {_human_bytes(stored_b)}" + (f" (<b>{over:+.1f} %</b> padding)" if over > 0 else ""))
        if tl.kernel is None:
            parts.append("no oneDNN kernel")
        elif tl.stored is not None and tl.kernel.tag == tl.stored.tag:
            parts.append("the kernel used it as stored")
        elif kernel_mode:
            parts.append(f"reordered from {tl.stored.tag if tl.stored is not None else 'unknown'} for the kernel")
        else:
            parts.append(f"the kernel used <b>{tl.kernel.tag}</b> (a reorder)")
        return " \u00b7 ".join(parts)

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
               f"memory (padded to {_fmt_dims(lay.padded_dims)}); oneDNN keeps it zero")
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
                        f"(padded to {_fmt_dims(lay.padded_dims)}); oneDNN keeps it zero")
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
