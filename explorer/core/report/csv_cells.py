"""Cells every CSV reader can read: no cell over CELL_LIMIT bytes (Python's csv module refuses a field over
128 KiB by default; a whole model's ATen chain, or the module paths of a layer a model repeats a thousand
times, ran past it). Text over the limit is cut at a separator and says how much was left out."""

from __future__ import annotations

from explorer.core.trace.aten import CELL_LIMIT

_SEPARATORS = (";", " | ", "; ", ", ", " > ", " ")
_TAIL = 80  # room for the "... (N more ...)" words


def _cut(text: str, limit: int, seps=_SEPARATORS) -> str:
    keep = text.encode()[: limit - _TAIL].decode(errors="ignore")
    cut = max(keep.rfind(s) for s in seps)
    return keep[:cut] if cut > 0 else keep


def fit_cell(text: str, limit: int = CELL_LIMIT) -> str:
    """`text` as it is when it fits in `limit` bytes, else cut there, saying how many bytes were left out."""
    size = len(text.encode())
    if size <= limit:
        return text
    keep = _cut(text, limit)
    return f"{keep} ... ({size - len(keep.encode())} more bytes left out)"


def list_cell(items: list[str], what: str, sep: str = ";", limit: int = CELL_LIMIT) -> str:
    """Items joined by `sep`; over `limit` bytes, the first ones and how many `what` were left out."""
    text = sep.join(items)
    if len(text.encode()) <= limit:
        return text
    keep = _cut(text, limit, (sep,)).split(sep)
    return f"{sep.join(keep)}{sep}... ({len(items) - len(keep)} more {what})"


def fit_row(row: dict) -> dict:
    """A CSV row with every text cell fitted (fit_cell); other values as they are."""
    return {k: fit_cell(v) if isinstance(v, str) else v for k, v in row.items()}
