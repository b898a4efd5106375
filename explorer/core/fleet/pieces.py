"""A run in pieces: shards of a problem list, the problems a CSV already holds (resume), merged CSVs.

A problem's identity is what its rows say of it: (name, desc, dtype, vary) and, per row, the path; in an
--every-host run also the host. Timings never enter an identity, so pieces of one run merge to the same
set of identities as the run in one go.
"""

from __future__ import annotations

import csv
import io
import os

from explorer.core.errors import InputError
from explorer.core.files import atomic_write_text, check_writable
from explorer.core.report.results import read_csv, whole_rows_text

IDENTITY_COLUMNS = ("name", "desc", "dtype", "vary")


def parse_shard(text: str) -> tuple[int, int]:
    """'I/N' -> (I, N) with 0 <= I < N; InputError in one sentence otherwise."""
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise InputError(f"--shard takes I/N, e.g. 0/4 (every 4th problem from the first), got {text!r}.", "shard") from None
    if n < 1 or not 0 <= i < n:
        raise InputError(f"--shard I/N needs 0 <= I < N, got {text!r}.", "shard")
    return i, n


def shard(points: list, i: int, n: int) -> list:
    """Every n-th problem from the i-th (skipped lines included, so the shards together are the whole list)."""
    return points[i::n]


def _cell(v) -> str:
    return "" if v is None else str(v)


def row_identity(row: dict, with_host: bool = False) -> tuple:
    """A row's problem, path (and host): what resume and merge compare."""
    key = tuple(_cell(row.get(k)) for k in IDENTITY_COLUMNS) + (_cell(row.get("path")),)
    return key + (_cell(row.get("host")),) if with_host else key


def point_identity(point) -> tuple:
    """The (name, desc, dtype, vary) its rows will carry."""
    s = point.spec
    if s is None:  # a batch line that did not parse: its row holds the text
        import re

        name = re.search(r'n"([^"]*)"', point.text or "")
        return (name.group(1) if name else "", point.text or "", "", point.label)
    return (s.name or "", s.desc, s.dtype, point.label)


def point_done(point, paths, done: set, host: str | None = None) -> bool:
    """Every row this point would write is in `done` (identities from row_identity)."""
    tail = () if host is None else (host,)
    wanted = [""] if point.skipped else list(paths)
    return all(point_identity(point) + (p,) + tail in done for p in wanted)


def resume_rows(path: str | os.PathLike) -> tuple[list[str], list[dict]]:
    """The header and raw rows (CSV cells as text) of a CSV to go on with; read_csv checks it first."""
    read_csv(path)  # not our CSV or a bad line: one sentence naming the file and line
    reader = csv.DictReader(io.StringIO(whole_rows_text(path, [])))  # a torn last line: dropped (read_csv said so)
    rows = list(reader)
    return list(reader.fieldnames or []), rows


def merge_csvs(paths: list[str], out: str, overwrite: bool = False) -> int:
    """Join CSV pieces of one kind of run into `out`; refuse pieces whose columns differ. Returns the row count."""
    if len(paths) < 2:
        raise InputError("merge needs at least two CSVs to join.", "csv")
    check_writable(out, overwrite=overwrite)
    first_header: list[str] | None = None
    rows: list[dict] = []
    for p in paths:
        header, piece = resume_rows(p)
        if first_header is None:
            first_header = header
        elif header != first_header:
            lacks = [c for c in first_header if c not in header]
            extra = [c for c in header if c not in first_header]
            what = "; ".join(x for x in (f"lacks {', '.join(lacks)}" if lacks else "",
                                          f"adds {', '.join(extra)}" if extra else "") if x) or "orders them differently"
            raise InputError(f"{p!r} does not have the columns of {paths[0]!r} ({what}): merge only pieces of one "
                             "kind of run.", "csv")
        rows += piece
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=first_header, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    atomic_write_text(out, buf.getvalue())
    return len(rows)
