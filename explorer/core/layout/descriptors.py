"""The real memory layout of a tensor: oneDNN's serialized memory descriptor for MKLDNN tensors, strides
for strided ones.

The serialized descriptor is a private copy of oneDNN's memory_desc_t (byte offsets below were checked on
torch 2.13 / oneDNN 3.x). It may change between releases, so every field is validated and any doubt gives
"unknown, because ..." instead of a guess. Never call .stride() on an MKLDNN tensor: it is meaningless.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field

import numpy as np
import torch

from explorer.core.errors import InputError
from explorer.core.layout.tags import LETTERS, MAX_NDIMS, Layout, layout_from_strides, layout_from_tag

# memory_desc_t byte offsets (FIELD_GUIDE section 2).
_OFF_NDIMS, _OFF_DIMS, _OFF_DTYPE, _OFF_PADDED = 4, 8, 104, 112
_OFF_FORMAT_KIND, _OFF_STRIDES, _OFF_NBLKS, _OFF_BLKS, _OFF_IDXS = 312, 320, 416, 424, 520
_MIN_BLOB = _OFF_IDXS + 8 * MAX_NDIMS
_FORMAT_KIND_BLOCKED = 2

# dnnl_data_type_t codes (f16=1, bf16=2, f32=3 checked by converting tensors on the target machine).
_DNNL_DTYPES = {1: "f16", 2: "bf16", 3: "f32", 4: "s32", 5: "s8", 6: "u8"}
TORCH_DTYPES = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16",
                torch.int8: "s8", torch.uint8: "u8", torch.int32: "s32"}
# Raw-buffer numpy views: numpy has no bfloat16, so bf16 comes back as its uint16 bit patterns.
_NP_DTYPES = {"f32": np.float32, "bf16": np.uint16, "f16": np.float16, "s8": np.int8, "u8": np.uint8,
              "s32": np.int32}


@dataclass
class LayoutReading:
    """What we could learn about a tensor's layout. layout is None when unknown (see unknown_reason)."""

    layout: Layout | None
    source: str  # "descriptor" (MKLDNN memory_desc) or "strides" (strided tensor)
    unknown_reason: str | None = None
    raw: dict = field(default_factory=dict)


def _is_mkldnn(t: torch.Tensor) -> bool:
    return t.layout == torch._mkldnn


def _unknown(source: str, why: str, raw: dict) -> LayoutReading:
    return LayoutReading(None, source, f"unknown, because {why}", raw)


def parse_serialized_md(blob, shape, dtype: str, kind: str = "data") -> LayoutReading:
    """Interpret a serialized memory_desc_t for a tensor of `shape` and `dtype`; never raises on a bad blob."""
    b = bytes(np.asarray(blob, dtype=np.uint8).ravel())
    raw: dict = {"blob_len": len(b)}
    if len(b) < _MIN_BLOB:
        return _unknown("descriptor", f"the serialized descriptor is {len(b)} bytes, fewer than {_MIN_BLOB}", raw)

    def i32(off):
        return int(np.frombuffer(b, np.int32, 1, off)[0])

    def i64s(off, n):
        return [int(v) for v in np.frombuffer(b, np.int64, n, off)]

    ndims = i32(_OFF_NDIMS)
    raw["ndims"] = ndims
    if not 1 <= ndims <= MAX_NDIMS:
        return _unknown("descriptor", f"the descriptor reports {ndims} dims", raw)
    nblks = i32(_OFF_NBLKS)
    raw.update(dims=i64s(_OFF_DIMS, ndims), data_type=i32(_OFF_DTYPE), padded_dims=i64s(_OFF_PADDED, ndims),
               format_kind=i32(_OFF_FORMAT_KIND), strides=i64s(_OFF_STRIDES, ndims), inner_nblks=nblks)
    if not 0 <= nblks <= MAX_NDIMS:
        return _unknown("descriptor", f"the descriptor reports {nblks} inner blocks", raw)
    raw.update(inner_blks=i64s(_OFF_BLKS, nblks), inner_idxs=i64s(_OFF_IDXS, nblks))

    shape = [int(s) for s in shape]
    if raw["dims"] != shape:
        return _unknown("descriptor", f"its dims {raw['dims']} differ from the tensor shape {shape}", raw)
    if _DNNL_DTYPES.get(raw["data_type"]) != dtype:
        return _unknown("descriptor", f"its data type code {raw['data_type']} does not match {dtype}", raw)
    if raw["format_kind"] != _FORMAT_KIND_BLOCKED:
        return _unknown("descriptor", f"its format kind is {raw['format_kind']}, not blocked (2)", raw)
    if any(p < d for p, d in zip(raw["padded_dims"], shape)):
        return _unknown("descriptor", f"its padded dims {raw['padded_dims']} are smaller than {shape}", raw)
    if any(s <= 0 for s in raw["strides"]):
        return _unknown("descriptor", f"its strides {raw['strides']} are not all positive", raw)
    if any(k <= 0 for k in raw["inner_blks"]) or any(not 0 <= i < ndims for i in raw["inner_idxs"]):
        return _unknown("descriptor", f"its inner blocks {raw['inner_blks']} on dims {raw['inner_idxs']} "
                                      "are out of range", raw)

    # Tag: outer dims by descending stride (ties keep logical order), uppercase when blocked, then blocks.
    order = sorted(range(ndims), key=lambda d: (-raw["strides"][d], d))
    blocked = set(raw["inner_idxs"])
    tag = "".join(LETTERS[d].upper() if d in blocked else LETTERS[d] for d in order)
    tag += "".join(f"{k}{LETTERS[i]}" for k, i in zip(raw["inner_blks"], raw["inner_idxs"]))
    raw["derived_tag"] = tag
    try:
        lay = layout_from_tag(tag, shape, dtype, kind)
    except InputError as e:
        return _unknown("descriptor", f"the derived tag {tag!r} is not valid ({e})", raw)
    if list(lay.padded_dims) != raw["padded_dims"]:
        return _unknown("descriptor", f"tag {tag!r} pads to {list(lay.padded_dims)}, "
                                      f"not the descriptor's {raw['padded_dims']}", raw)
    # A dim with a single outer position never moves the offset, so its stride is free; compare the rest.
    moving = [d for d in range(ndims) if lay.padded_dims[d] // lay.dim_block(d) > 1]
    if any(lay.strides[d] != raw["strides"][d] for d in moving):
        return _unknown("descriptor", f"tag {tag!r} gives strides {list(lay.strides)}, "
                                      f"not the descriptor's {raw['strides']} (not a dense layout)", raw)
    return LayoutReading(lay, "descriptor", None, raw)


def read_mkldnn_layout(t: torch.Tensor, kind: str = "data") -> LayoutReading:
    """The layout oneDNN really uses for MKLDNN tensor `t`, read from its memory descriptor."""
    if not _is_mkldnn(t):
        raise InputError(f"the tensor is not an MKLDNN tensor (layout {t.layout}); use tensor_layout()", "tensor")
    dtype = TORCH_DTYPES.get(t.dtype)
    if dtype is None:
        return _unknown("descriptor", f"dtype {t.dtype} has no oneDNN layout model here", {})
    try:
        blob = torch.ops.mkldnn._get_mkldnn_serialized_md(t).numpy()
    except (AttributeError, RuntimeError) as e:  # private op: may vanish or change in a future torch
        return _unknown("descriptor", f"this torch cannot serialize the descriptor ({type(e).__name__})", {})
    reading = parse_serialized_md(blob, tuple(t.shape), dtype, kind)
    if reading.layout is not None:
        stored = stored_nbytes(t)
        reading.raw["stored_nbytes"] = stored
        if stored < reading.layout.nbytes:
            return _unknown("descriptor", f"the buffer holds {stored} bytes, fewer than the layout's "
                                          f"{reading.layout.nbytes}", reading.raw)
    return reading


def tensor_layout(t: torch.Tensor, kind: str = "data") -> LayoutReading:
    """Layout of any CPU tensor: the descriptor for MKLDNN, the strides for a strided tensor."""
    if _is_mkldnn(t):
        return read_mkldnn_layout(t, kind)
    raw = {"shape": list(t.shape)}
    if t.layout != torch.strided:
        return _unknown("strides", f"layout {t.layout} has no strides", raw)
    raw["strides"] = list(t.stride())
    dtype = TORCH_DTYPES.get(t.dtype)
    if dtype is None:
        return _unknown("strides", f"dtype {t.dtype} has no oneDNN layout model here", raw)
    try:
        return LayoutReading(layout_from_strides(t.shape, t.stride(), dtype, kind), "strides", None, raw)
    except InputError as e:
        return _unknown("strides", str(e), raw)


def stored_nbytes(t: torch.Tensor) -> int:
    """Bytes really held by the tensor, padding included."""
    if _is_mkldnn(t):
        return int(torch.ops.mkldnn._nbytes(t))
    return int(t.untyped_storage().nbytes())


def raw_buffer(t: torch.Tensor) -> np.ndarray:
    """A copy of an MKLDNN tensor's whole buffer (padding included), 1-D, as numpy of its dtype.

    bf16 comes back as uint16 bit patterns (numpy has no bfloat16), f16 as float16. It is a copy, not a
    view, so it stays valid after `t` is freed.
    """
    if not _is_mkldnn(t):
        raise InputError(f"the tensor is not an MKLDNN tensor (layout {t.layout})", "tensor")
    dtype = TORCH_DTYPES.get(t.dtype)
    if dtype is None:
        raise InputError(f"dtype {t.dtype} is not supported for raw buffer reads", "tensor")
    nbytes = stored_nbytes(t)
    buf = (ctypes.c_uint8 * nbytes).from_address(int(torch.ops.mkldnn.data_ptr(t)))
    itemsize = np.dtype(_NP_DTYPES[dtype]).itemsize
    return np.ctypeslib.as_array(buf)[: nbytes - nbytes % itemsize].view(_NP_DTYPES[dtype]).copy()
