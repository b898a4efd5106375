"""The picture of one tensor layout, both panes as pixel maps: what the layout view draws, without Qt.

* Logical: the tensor as people think of it. Data tensors show the first image with its channels as H x W
  planes in a grid; weights a matrix of kh x kw planes (rows = output channel, columns = input channel).
  Channels that exist only because of padding are "ghost" planes, marked as padding.
* Physical: the buffer in memory order, wrapped at the innermost contiguous run (W for nchw, C for nhwc,
  16 for nChw16c, a 16 x 16 tile for OIhw16i16o). Every cell holds the colour slot of its logical index.

Built with numpy from :class:`explorer.core.layout.tags.Layout` (no per-element Python loop), as uint8 images
indexing a fixed lookup table; big tensors are sliced to ``CELL_LIMIT`` cells. Kept apart from the widget so
the geometry and the offset lookups can be tested, and reused, without a display.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from explorer.core.layout.tags import Layout

__all__ = ["LayoutPicture", "HoverInfo", "build_picture", "CELL_LIMIT", "PHYS_LIMIT", "GAP", "PAD_A", "PAD_B",
           "N_COLOURS", "DIM_WORDS", "dim_names", "weight_grouped", "default_colour_dim", "make_lut",
           "slices_caption", "fmt_dims", "human_bytes"]

CELL_LIMIT = 65536  # at most this many logical cells are drawn
PHYS_LIMIT = 16384  # at most this many buffer elements in the physical pane (about 2.5 px per cell at 900 px)

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
DIM_WORDS = {"n": "image", "c": "channel", "h": "row", "w": "column", "d": "depth", "o": "output channel",
             "i": "input channel", "g": "group"}  # what each dim letter means, for people

_SPATIAL = {0: "", 1: "w", 2: "hw", 3: "dhw"}


def weight_grouped(layout: Layout) -> bool:
    """A weight with a leading g dim: as the layout says, else guessed (5+ dims: a grouped 2-D weight)."""
    g = getattr(layout, "grouped", None)
    return g if g is not None else layout.ndims >= 5


def dim_names(layout: Layout) -> str:
    """One letter per dim, as oneDNN's tags spell them (nchw, goihw, ...): captions and hovers use them."""
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
        rgb = _QUALITATIVE[i % N_COLOURS]
        lut[i] = (int(rgb[1:3], 16), int(rgb[3:5], 16), int(rgb[5:7], 16), 255)
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


def slices_caption(names: str, grid: dict) -> str:
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
    """The dim the colours follow unless the user picks one: channels (c) for data, output channels (o) for weights."""
    names = dim_names(lay)
    want = "o" if lay.kind == "weight" else "c"
    return names.index(want) if want in names else (1 if lay.ndims > 1 else 0)


# ------------------------------------------------------------------------------------------------ hover
@dataclass
class HoverInfo:
    """What a hover over one cell found: the view returns it, and tests read it."""

    offset: int
    index: tuple[int, ...] | None  # logical index, None for padding
    padding: bool
    text: str
    logical_cell: tuple[int, int] | None
    physical_cell: tuple[int, int] | None


def fmt_dims(dims) -> str:
    """Dims as people write them: 2×32×5×4."""
    return "\u00d7".join(str(d) for d in dims)


def human_bytes(n: int) -> str:
    """A byte count in B, KiB, MiB or GiB, one decimal."""
    if n < 1024:
        return f"{n} B"
    for unit in ("KiB", "MiB", "GiB"):
        n /= 1024.0
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}"
    return f"{n} B"
