"""oneDNN format-tag layout model: padding, strides and element offsets of a dense (blocked) tensor.

A tag such as ``aBcd16b`` lists the logical dims outermost to innermost in memory (``a`` is dim 0);
an uppercase letter is the outer (block index) part of a blocked dim, and the trailing ``<size><letter>``
groups are its inner blocks, outer to inner. Offsets follow oneDNN's ``memory_desc_wrapper::off_v``.

Pure numpy: this module must never import Qt (or torch).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple, Sequence

import numpy as np

from explorer.core.errors import InputError

DTYPE_SIZES = {"f32": 4, "bf16": 2, "f16": 2, "s8": 1, "u8": 1, "s32": 4}

LETTERS = "abcdefghijkl"  # oneDNN supports at most 12 dims
MAX_NDIMS = len(LETTERS)

# Classic names for the common tags. Letters mean different things for data and weights, so an alias
# table per kind (e.g. acdb is nhwc as data but ohwi as a weight).
_ALIASES = {
    "data": {
        "a": "x", "ab": "nc", "abc": "ncw", "acb": "nwc", "abcd": "nchw", "acdb": "nhwc",
        "abcde": "ncdhw", "acdeb": "ndhwc",
        "aBc8b": "nCw8c", "aBc16b": "nCw16c",
        "aBcd4b": "nChw4c", "aBcd8b": "nChw8c", "aBcd16b": "nChw16c",
        "aBcde8b": "nCdhw8c", "aBcde16b": "nCdhw16c",
        "ABcd16a16b": "NChw16n16c", "ABcd32a32b": "NChw32n32c",
    },
    "weight": {
        "a": "x", "ab": "oi", "ba": "io", "abc": "oiw", "acb": "owi",
        "abcd": "oihw", "acdb": "ohwi", "bacd": "iohw", "cdba": "hwio", "cdab": "hwoi",
        "ABcd8b8a": "OIhw8i8o", "ABcd16b16a": "OIhw16i16o", "ABcd16a16b": "OIhw16o16i",
        "ABcd4b16a4b": "OIhw4i16o4i", "ABcd8a4b": "OIhw8o4i",
        "Abcd8a": "Oihw8o", "Abcd16a": "Oihw16o", "Acdb8a": "Ohwi8o", "Acdb16a": "Ohwi16o",
        "Acdb32a": "Ohwi32o", "Acdb48a": "Ohwi48o", "Acdb64a": "Ohwi64o",
        "AcdB16a2b": "OhwI16o2i", "AcdB32a2b": "OhwI32o2i", "AcdB48a2b": "OhwI48o2i",
        "AcdB64a2b": "OhwI64o2i", "AcdB32a4b": "OhwI32o4i",
        "AB16b16a": "OI16i16o", "AB8b8a": "OI8i8o",
        "abcde": "goihw", "acdeb": "gohwi",
        "aBCde8c8b": "gOIhw8i8o", "aBCde16c16b": "gOIhw16i16o", "aBCde16b16c": "gOIhw16o16i",
        "aBcde16b": "gOihw16o", "aBdec16b": "gOhwi16o", "aBdec32b": "gOhwi32o",
        "Abcde16a": "Goihw16g", "Abcde8a": "Goihw8g",
    },
}

# Readable index names for the offset formula, per kind and rank.
_NAMES = {
    ("data", 2): "nc", ("data", 3): "ncw", ("data", 4): "nchw", ("data", 5): "ncdhw",
    ("weight", 2): "oi", ("weight", 3): "oiw", ("weight", 4): "oihw", ("weight", 5): "goihw",
}

_TAG_RE = re.compile(r"^([A-Za-l]*)((?:\d+[A-Za-z])*)$")


class TagParts(NamedTuple):
    """A parsed tag: `order` = dim indices outermost to innermost, `blocked[d]`, inner blocks outer to inner."""

    order: tuple[int, ...]
    blocked: tuple[bool, ...]
    inner_blks: tuple[int, ...]
    inner_idxs: tuple[int, ...]

    @property
    def ndims(self) -> int:
        return len(self.order)


def parse_tag(tag: str) -> TagParts:
    """Parse a oneDNN format tag; raise InputError with one sentence naming the problem."""
    if not isinstance(tag, str) or not tag.strip():
        raise InputError("the format tag is empty; expected letters such as 'abcd' or 'aBcd16b'", "tag")
    tag = tag.strip()
    bad = next((ch for ch in tag if not (ch.isdigit() or ch.lower() in LETTERS)), None)
    if bad is not None:
        raise InputError(f"tag {tag!r} contains {bad!r}, which is neither a dimension letter a-l nor a digit", "tag")
    if tag[0].isdigit():
        raise InputError(f"tag {tag!r} starts with a block size before any dimension letter", "tag")
    if tag[-1].isdigit():
        raise InputError(f"tag {tag!r} ends with a block size but no dimension letter", "tag")
    m = _TAG_RE.match(tag)
    if m is None:
        # The only way left to fail: a letter after the inner blocks without its own size.
        stray = re.search(r"\d[A-Za-z]([A-Za-z])", tag).group(1)
        raise InputError(f"tag {tag!r} has letter {stray!r} after its inner blocks without a block size", "tag")
    outer, inner = m.groups()

    ndims = len(outer)
    seen: dict[str, int] = {}
    for ch in outer:
        low = ch.lower()
        if low in seen:
            raise InputError(f"tag {tag!r} names dimension {low!r} twice in its outer part", "tag")
        seen[low] = 1
    for i in range(ndims):
        if LETTERS[i] not in seen:
            raise InputError(
                f"tag {tag!r} has {ndims} dimensions but no {LETTERS[i]!r}; "
                f"its outer part must use each of {LETTERS[0]}..{LETTERS[ndims - 1]} exactly once", "tag")

    order = tuple(LETTERS.index(ch.lower()) for ch in outer)
    blocked = [False] * ndims
    for ch in outer:
        if ch.isupper():
            blocked[LETTERS.index(ch.lower())] = True

    blks, idxs = [], []
    for size_s, ch in re.findall(r"(\d+)([A-Za-z])", inner):
        size = int(size_s)
        if ch.isupper():
            raise InputError(f"tag {tag!r} has uppercase inner block letter {ch!r}; inner blocks use lowercase", "tag")
        if ch not in LETTERS[:ndims]:
            raise InputError(f"tag {tag!r} blocks {ch!r}, which is not one of its {ndims} dimensions", "tag")
        d = LETTERS.index(ch)
        if not blocked[d]:
            raise InputError(f"tag {tag!r} blocks {ch!r} but writes it lowercase (unblocked) in the outer part", "tag")
        if size <= 0:
            raise InputError(f"tag {tag!r} has a block size of {size} for {ch!r}; block sizes must be positive", "tag")
        blks.append(size)
        idxs.append(d)
    for d in range(ndims):
        if blocked[d] and d not in idxs:
            up = LETTERS[d].upper()
            raise InputError(
                f"tag {tag!r} marks {up!r} as blocked but gives it no inner block such as '16{LETTERS[d]}'", "tag")
    return TagParts(order, tuple(blocked), tuple(blks), tuple(idxs))


def alias_of(tag: str, kind: str = "data") -> str | None:
    """The classic oneDNN name of `tag` (nchw, nChw16c, OIhw16i16o, ...) for data or weight, or None."""
    if kind not in _ALIASES:
        raise InputError(f"unknown tensor kind {kind!r}; expected 'data' or 'weight'", "kind")
    return _ALIASES[kind].get(tag)


def _check_dtype(dtype: str) -> int:
    if dtype not in DTYPE_SIZES:
        raise InputError(f"unknown dtype {dtype!r}; expected one of {', '.join(DTYPE_SIZES)}", "dtype")
    return DTYPE_SIZES[dtype]


def _check_dims(dims: Sequence[int]) -> tuple[int, ...]:
    try:
        out = tuple(int(d) for d in dims)
    except (TypeError, ValueError):
        raise InputError(f"dims must be a sequence of positive integers, got {dims!r}", "dims") from None
    if not out or len(out) > MAX_NDIMS or any(d <= 0 for d in out):
        raise InputError(f"dims must be 1 to {MAX_NDIMS} positive integers, got {list(dims)!r}", "dims")
    return out


@dataclass(frozen=True)
class Layout:
    """A dense oneDNN layout: logical dims, padded dims, outer strides (elements) and inner blocks."""

    tag: str
    dims: tuple[int, ...]
    dtype: str
    padded_dims: tuple[int, ...]
    strides: tuple[int, ...]
    inner_blks: tuple[int, ...]
    inner_idxs: tuple[int, ...]
    itemsize: int
    kind: str = "data"
    grouped: bool | None = None  # weights: leading g dim (None: guess from ndims, 5+ dims = grouped 2-D)

    # ---- sizes -------------------------------------------------------------------------------------
    @property
    def ndims(self) -> int:
        return len(self.dims)

    @property
    def nbytes(self) -> int:
        return math.prod(self.padded_dims) * self.itemsize

    @property
    def logical_nbytes(self) -> int:
        return math.prod(self.dims) * self.itemsize

    @property
    def overhead_pct(self) -> float:
        """Padding bytes as a percentage of the logical bytes."""
        return 100.0 * (self.nbytes - self.logical_nbytes) / self.logical_nbytes

    @property
    def alias(self) -> str | None:
        return alias_of(self.tag, self.kind)

    @property
    def block_elems(self) -> int:
        return math.prod(self.inner_blks)

    @property
    def innermost_run(self) -> int:
        """Elements in the innermost contiguous run: the inner block, else the innermost outer dim."""
        if self.inner_blks:
            return self.block_elems
        return self.padded_dims[self.order[-1]]

    @cached_property
    def order(self) -> tuple[int, ...]:
        """Dim indices outermost to innermost (the tag's outer letters)."""
        return parse_tag(self.tag).order

    def _dim_blocks(self, d: int) -> list[tuple[int, int]]:
        """(block size, block stride in elements) of dim d's inner blocks, outer to inner."""
        out, stride = [], 1
        for blk, idx in zip(reversed(self.inner_blks), reversed(self.inner_idxs)):
            if idx == d:
                out.append((blk, stride))
            stride *= blk
        return out[::-1]

    def dim_block(self, d: int) -> int:
        """Product of dim d's inner blocks (1 when unblocked)."""
        return math.prod(b for b, i in zip(self.inner_blks, self.inner_idxs) if i == d)

    # ---- offsets -----------------------------------------------------------------------------------
    def _dim_term(self, d: int, pos: np.ndarray) -> np.ndarray:
        """Offset contribution of index `pos` along dim d. off_v is a sum of per-dim terms, so the
        full offsets array is a broadcast sum of ndims 1-D vectors."""
        term = np.zeros_like(pos)
        for blk, bstride in reversed(self._dim_blocks(d)):  # innermost block first, as off_v does
            term += (pos % blk) * bstride
            pos = pos // blk
        return term + pos * self.strides[d]

    def offset(self, index: Sequence[int]) -> int:
        """Element offset (not bytes) of a logical index, as oneDNN's memory_desc_wrapper::off_v."""
        idx = self._check_index(index)
        return int(sum(self._dim_term(d, np.int64(i)) for d, i in enumerate(idx)))

    def offsets(self) -> np.ndarray:
        """int64 array of shape `dims`: the element offset of every logical element."""
        total = np.zeros((1,) * self.ndims, dtype=np.int64)
        for d, n in enumerate(self.dims):
            shape = [1] * self.ndims
            shape[d] = n
            total = total + self._dim_term(d, np.arange(n, dtype=np.int64)).reshape(shape)
        return total

    def elements_at(self, offsets) -> tuple[np.ndarray, np.ndarray]:
        """Invert offsets: (indices int64 [n, ndims], valid bool [n]); invalid rows (padding, out of
        range) hold -1."""
        off = np.asarray(offsets, dtype=np.int64).ravel()
        total = math.prod(self.padded_dims)
        in_range = (off >= 0) & (off < total)
        rem = np.where(in_range, off, 0)
        inner, outer = rem % self.block_elems, rem // self.block_elems
        pos = np.zeros((off.size, self.ndims), dtype=np.int64)
        # Outer dims: mixed-radix digits of `outer`, innermost dim first (strides are dense).
        for d in reversed(self.order):
            extent = self.padded_dims[d] // self.dim_block(d)
            pos[:, d] = outer % extent
            outer //= extent
        # Inner blocks: digits of `inner`, innermost block first; each refines its dim's position.
        digits = []
        for blk in reversed(self.inner_blks):
            digits.append(inner % blk)
            inner //= blk
        for blk, d, digit in zip(self.inner_blks, self.inner_idxs, reversed(digits)):
            pos[:, d] = pos[:, d] * blk + digit
        valid = in_range & np.all(pos < np.asarray(self.dims), axis=1)
        pos[~valid] = -1
        return pos, valid

    def element_at(self, offset: int) -> tuple[int, ...] | None:
        """The logical index stored at element `offset`, or None for padding / beyond the buffer."""
        pos, valid = self.elements_at(np.array([offset]))
        return tuple(int(v) for v in pos[0]) if valid[0] else None

    def _check_index(self, index: Sequence[int]) -> tuple[int, ...]:
        idx = tuple(int(i) for i in index)
        if len(idx) != self.ndims or any(not 0 <= i < n for i, n in zip(idx, self.dims)):
            raise InputError(f"index {list(idx)} is outside dims {list(self.dims)}", "index")
        return idx

    # ---- human formula -----------------------------------------------------------------------------
    def offset_formula(self, index: Sequence[int]) -> str:
        """E.g. 'n*Cp*H*W + (c/16)*H*W*16 + h*W*16 + w*16 + c%16 = 1*32*5*4 + ... = 1136'.
        '/' is integer division; 'Cp' is C padded to its block."""
        idx = self._check_index(index)
        names = _NAMES.get((self.kind, self.ndims), LETTERS[: self.ndims])
        sym = [n.upper() + ("p" if self.padded_dims[d] != self.dims[d] else "") for d, n in enumerate(names)]
        order = self.order
        sym_terms, num_terms = [], []

        for k, d in enumerate(order):
            blk = self.dim_block(d)
            if blk > 1:
                s_idx, n_idx = f"({names[d]}/{blk})", str(idx[d] // blk)
            else:
                s_idx, n_idx = names[d], str(idx[d])
            # Stride = outer extents of the later dims times the inner blocks. A later blocked dim's
            # (Cp/16) cancels against its own blocks, so it reads as Cp and its blocks drop out.
            later = order[k + 1:]
            s_fac = [sym[e] for e in later]
            n_fac = [str(self.padded_dims[e]) for e in later]
            rest = [str(b) for b, i in zip(self.inner_blks, self.inner_idxs) if i not in later]
            s_fac += rest
            n_fac += rest
            sym_terms.append("*".join([s_idx] + s_fac))
            num_terms.append("*".join([n_idx] + n_fac))

        # Inner block terms, outer to inner: digit of the dim's position times the block stride.
        bstride_after = [math.prod(self.inner_blks[j + 1:]) for j in range(len(self.inner_blks))]
        for j, (blk, d) in enumerate(zip(self.inner_blks, self.inner_idxs)):
            later = math.prod(b for b, i in zip(self.inner_blks[j + 1:], self.inner_idxs[j + 1:]) if i == d)
            base = f"({names[d]}/{later})" if later > 1 else names[d]
            digit = (idx[d] // later) % blk
            sfx = f"*{bstride_after[j]}" if bstride_after[j] > 1 else ""
            sym_terms.append(f"{base}%{blk}{sfx}")
            num_terms.append(f"{digit}{sfx}")

        return f"{' + '.join(sym_terms)} = {' + '.join(num_terms)} = {self.offset(idx)}"

    def to_dict(self) -> dict:
        return {
            "tag": self.tag, "alias": self.alias, "dims": list(self.dims), "padded_dims": list(self.padded_dims),
            "strides": list(self.strides), "inner_blks": list(self.inner_blks),
            "inner_idxs": list(self.inner_idxs), "dtype": self.dtype, "nbytes": self.nbytes,
            "logical_nbytes": self.logical_nbytes, "overhead_pct": round(self.overhead_pct, 3),
        }


def layout_from_tag(tag: str, dims: Sequence[int], dtype: str = "f32", kind: str = "data") -> Layout:
    """The dense layout oneDNN builds for `tag` (memory_desc_init_by_tag)."""
    parts = parse_tag(tag)
    dims = _check_dims(dims)
    itemsize = _check_dtype(dtype)
    if kind not in _ALIASES:
        raise InputError(f"unknown tensor kind {kind!r}; expected 'data' or 'weight'", "kind")
    if parts.ndims != len(dims):
        raise InputError(f"tag {tag.strip()!r} has {parts.ndims} dimensions but dims {list(dims)} have {len(dims)}",
                         "tag")
    dim_blk = [1] * len(dims)
    for b, d in zip(parts.inner_blks, parts.inner_idxs):
        dim_blk[d] *= b
    padded = tuple(-(-n // b) * b for n, b in zip(dims, dim_blk))
    # The whole inner block is the innermost unit; outer dims stack outward in tag order.
    strides = [0] * len(dims)
    s = math.prod(parts.inner_blks)
    for d in reversed(parts.order):
        strides[d] = s
        s *= padded[d] // dim_blk[d]
    return Layout(tag.strip(), dims, dtype, padded, tuple(strides), parts.inner_blks, parts.inner_idxs,
                  itemsize, kind)


def _plain_tag(order: Sequence[int]) -> str:
    return "".join(LETTERS[d] for d in order)


def layout_from_strides(shape: Sequence[int], strides: Sequence[int], dtype: str = "f32",
                        kind: str = "data") -> Layout:
    """Recognise a dense permutation (abcd, acdb, ...) from torch-style strides (in elements)."""
    shape = _check_dims(shape)
    try:
        strides = tuple(int(s) for s in strides)
    except (TypeError, ValueError):
        raise InputError(f"strides must be integers, got {strides!r}", "strides") from None
    if len(strides) != len(shape):
        raise InputError(f"strides {list(strides)} do not match the {len(shape)} dims of shape {list(shape)}",
                         "strides")
    n = len(shape)
    # Size-1 dims make strides ambiguous; prefer the natural tags (plain, channels-last) when they fit,
    # then fall back to ordering by descending stride.
    candidates = [tuple(range(n))]
    if n >= 3:
        candidates.append((0, *range(2, n), 1))
    candidates.append(tuple(sorted(range(n), key=lambda d: (-strides[d], d))))
    for order in candidates:
        lay = layout_from_tag(_plain_tag(order), shape, dtype, kind)
        # Only dims with more than one element have a meaningful stride.
        if all(lay.strides[d] == strides[d] for d in range(n) if shape[d] > 1):
            return lay
    raise InputError(f"strides {list(strides)} of shape {list(shape)} are not a dense permutation of the dims",
                     "strides")
