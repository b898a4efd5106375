"""A run in pieces: shards of a problem list, the problems a CSV already holds (resume), merged CSVs.

A row's problem is its place in its list: the `problem_index` column (0-based in the whole batch file or
sweep grid, as --shard counts), checked against the problem's (name, desc, dtype, vary), so a descriptor
listed twice is two problems and a CSV of another list is refused. Per row, the path; in an --every-host
run also the host. Timings never enter an identity, so pieces of one run merge to the same set of
identities as the run in one go. A CSV of an older version (no problem_index) is matched by descriptor in
list order (the k-th row of a descriptor and path is its k-th line) and rewritten with the column.

merge streams: headers first (all of them, before anything is written), then row by row into a temp file
renamed over the target, so its memory does not grow with the pieces' text (an 8-byte hash per row is kept:
a problem found in two pieces, e.g. one shard merged under two names, is refused, as a run holds it once).
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import secrets
import stat
from array import array
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.core.errors import InputError
from explorer.core.files import check_writable, refuse_special, same_output
from explorer.core.report.results import CSV_COLUMNS, PROBLEM_COLUMN, STATUSES, read_csv, whole_rows_text

IDENTITY_COLUMNS = ("name", "desc", "dtype", "vary")
HEADER_COLUMNS = ("desc", "path", "dtype", "threads", "status", "median_ms")  # what read_csv requires


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


def _index_cell(v) -> str:
    """problem_index as text, whether read as a number (read_csv) or as a CSV cell ('3', '3.0')."""
    if v is None or v == "":
        return ""
    try:
        return str(int(float(v)))
    except (TypeError, ValueError, OverflowError):
        return str(v)


def row_identity(row: dict, with_host: bool = False) -> tuple:
    """A row's (problem_index, name, desc, dtype, vary, path) (and host): what resume and merge compare."""
    key = (_index_cell(row.get(PROBLEM_COLUMN)),) + tuple(_cell(row.get(k)) for k in IDENTITY_COLUMNS)
    key += (_cell(row.get("path")),)
    return key + (_cell(row.get("host")),) if with_host else key


def point_identity(point) -> tuple:
    """The (problem_index, name, desc, dtype, vary) its rows will carry."""
    return (str(point.index),) + _problem_of(point)


def _problem_of(point) -> tuple:
    s = point.spec
    if s is None:  # a batch line that did not parse: its row holds the text
        import re

        name = re.search(r'n"([^"]*)"', point.text or "")
        return (name.group(1) if name else "", point.text or "", "", point.label)
    return (s.name or "", s.desc, s.dtype, point.label)


def paths_left(point, paths, done: set, host: str | None = None) -> list[str]:
    """The paths of this point with no row in `done` yet; none when it was recorded as skipped (path '')."""
    tail = () if host is None else (host,)
    key = point_identity(point)
    if key + ("",) + tail in done:
        return []
    wanted = [""] if point.skipped else list(paths)
    return [p for p in wanted if key + (p,) + tail not in done]


def point_done(point, paths, done: set, host: str | None = None) -> bool:
    """Every row this point would write is in `done` (identities from row_identity)."""
    return not paths_left(point, paths, done, host)


# ---- resume ---------------------------------------------------------------------------------------------
@dataclass
class Resumed:
    """A CSV to go on with: its rows as text cells, each with its problem_index."""

    rows: list[dict]
    upgraded: bool  # an older CSV without problem_index: the rows got it, so the file must be rewritten


def resume_rows(path: str | os.PathLike) -> tuple[list[str], list[dict]]:
    """The header and raw rows (CSV cells as text) of a CSV to go on with; read_csv checks it first."""
    read_csv(path)  # not our CSV or a bad line: one sentence naming the file and line
    reader = csv.DictReader(io.StringIO(whole_rows_text(path, [])))  # a torn last line: dropped (read_csv said so)
    rows = list(reader)
    return list(reader.fieldnames or []), rows


def what_header_holds(header: list[str]) -> str:
    """What a results CSV of this header is, in a few words (for a refusal)."""
    from explorer.core.fleet.hosts import CLUSTER_COLUMNS

    if "kind" in header and "mode" in header:
        return "a `model` command's rows (layer, path and mode rows)"
    if tuple(header) in (CSV_COLUMNS, _older(CSV_COLUMNS)):
        return "a local run's rows (no host columns)"
    if tuple(header) in (CLUSTER_COLUMNS, _older(CLUSTER_COLUMNS)):
        return "a cluster run's rows (host columns)"
    return "columns this version does not write"


def _older(columns: tuple) -> tuple:
    """The columns of the version before problem_index."""
    return tuple(c for c in columns if c != PROBLEM_COLUMN)


def match_resumed(path: str, header: list[str], rows: list[dict], points: list, source: str) -> Resumed:
    """Give every row of a resumed CSV its problem of `points` (the whole list, before --shard); InputError in
    one sentence when a row is not a problem of this list (a `run` CSV, another batch, other options)."""
    where = f"{path!r}"
    fix = f"--resume expects a CSV of {source} as this command builds it (the same --mb, --dtype, --no-bias)"
    if PROBLEM_COLUMN not in header:
        return Resumed(_match_by_descriptor(where, rows, points, source, fix), upgraded=True)
    for lineno, r in enumerate(rows, start=2):
        cell = _index_cell(r.get(PROBLEM_COLUMN))
        if cell == "":
            raise InputError(f"{where} holds rows of `run` (its line {lineno} has no problem_index: one problem, "
                             f"not a list); {fix}.", "resume")
        i = int(cell)
        if not 0 <= i < len(points) or _problem_of(points[i]) != _row_problem(r):
            expected = (f"problem {i} of {source} is {_says(_problem_of(points[i]))}" if 0 <= i < len(points)
                        else f"{source} has {len(points)} problems")
            raise InputError(f"{where} holds rows of another problem list: its line {lineno} is problem {i}, "
                             f"{_says(_row_problem(r))}, but {expected}; {fix}.", "resume")
    return Resumed(rows, upgraded=False)


def _row_problem(row: dict) -> tuple:
    return tuple(_cell(row.get(k)) for k in IDENTITY_COLUMNS)


def _says(problem: tuple) -> str:
    name, desc, dtype, vary = problem
    return (f"{desc!r}" + (f" {dtype}" if dtype else "") + (f" at {vary}" if vary else "")
            + (f" named {name!r}" if name else ""))


def _match_by_descriptor(where: str, rows: list[dict], points: list, source: str, fix: str) -> list[dict]:
    """An older CSV: the k-th row of a (problem, path) belongs to the k-th point of that problem."""
    lines: dict[tuple, list[int]] = {}
    for p in points:
        lines.setdefault(_problem_of(p), []).append(p.index)
    seen: dict[tuple, int] = {}
    out = []
    for lineno, r in enumerate(rows, start=2):
        prob = _row_problem(r)
        k = seen.get((prob, r.get("path") or ""), 0)
        seen[(prob, r.get("path") or "")] = k + 1
        have = lines.get(prob, [])
        if k >= len(have):
            more = f"more often than {source} lists it ({len(have)})" if have else f"which {source} does not list"
            raise InputError(f"{where} holds rows of another problem list: its line {lineno} is {_says(prob)}, "
                             f"{more}; {fix}.", "resume")
        out.append({**r, PROBLEM_COLUMN: str(have[k])})
    return out


# ---- merge ----------------------------------------------------------------------------------------------
def _piece_stat(p: str) -> os.stat_result:
    """The piece's stat; InputError unless it is a regular file (a FIFO or /dev/stdin would be read once, a
    folder or device not at all)."""
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise InputError(f"cannot open {p!r}: no such file.", "csv") from None
    except OSError as e:
        raise InputError(f"cannot open {p!r}: {e.strerror or e}.", "csv") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{p!r} is a folder, not a CSV; merge joins results CSV files.", "csv")
    if not stat.S_ISREG(st.st_mode):
        kind = ("a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else
                "a FIFO (a pipe)" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else
                "not a file")
        raise InputError(f"{p!r} is {kind}, not a regular file; merge joins results CSV files on disk.", "csv")
    return st


@contextlib.contextmanager
def _reader(p: str):
    """csv.reader over the piece; a file that is not UTF-8 text is one sentence."""
    try:
        with open(p, encoding="utf-8", newline="") as f:
            yield csv.reader(f)
    except UnicodeDecodeError:
        raise InputError(f"cannot read {p!r}: it is not a text file (UTF-8 expected).", "csv") from None
    except OSError as e:
        raise InputError(f"cannot read {p!r}: {e.strerror or e}.", "csv") from None


def _header(p: str) -> list[str]:
    with _reader(p) as rows:
        header = next(rows, [])
    missing = [c for c in HEADER_COLUMNS if c not in header]
    if missing:
        raise InputError(f"{p!r} line 1 is not an MKLDNN Explorer results header (missing {', '.join(missing)}).",
                         "csv")
    return header


def _check_pieces(paths: list[str], out: str) -> list[str]:
    """Every piece a regular file, none given twice, none the output; the header they share."""
    stats = [_piece_stat(p) for p in paths]
    for i, (p, st) in enumerate(zip(paths, stats)):
        for q, st2 in zip(paths[:i], stats[:i]):
            if (st.st_dev, st.st_ino) == (st2.st_dev, st2.st_ino) or os.path.realpath(p) == os.path.realpath(q):
                raise InputError(f"{q!r} and {p!r} are the same file; give each piece once.", "csv")
    for p in paths:
        if same_output(p, out):
            raise InputError(f"--csv {out!r} is the piece {p!r}; write the merge to a new file.", "csv")
    headers = [_header(p) for p in paths]  # the first line of each: nothing is written before all agree
    first = headers[0]
    for p, header in zip(paths[1:], headers[1:]):
        if header != first:
            lacks = [c for c in first if c not in header]
            extra = [c for c in header if c not in first]
            what = "; ".join(x for x in (f"lacks {', '.join(lacks)}" if lacks else "",
                                          f"adds {', '.join(extra)}" if extra else "") if x) or "orders them differently"
            raise InputError(f"{p!r} does not have the columns of {paths[0]!r} ({what}): merge only pieces of one "
                             "kind of run.", "csv")
    return first


def _open_temp(target: Path):
    """A new temp file beside target (the umask's mode, or the old file's), opened for text."""
    tmp = target.parent / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    with contextlib.suppress(OSError):
        os.chmod(tmp, target.stat().st_mode & 0o777)
    return tmp, os.fdopen(fd, "w", encoding="utf-8", newline="")


def _identity_of_cells(header: list[str]):
    """cells -> the row's identity (as row_identity), or None when the CSV has no problem list (a `run` CSV)."""
    if PROBLEM_COLUMN not in header:
        return None
    at = {c: header.index(c) for c in header}
    cols = [at[PROBLEM_COLUMN]] + [at.get(k) for k in IDENTITY_COLUMNS + ("path", "host")]

    def identity(cells: list[str]) -> tuple | None:
        if cells[cols[0]] == "":
            return None
        return (_index_cell(cells[cols[0]]),) + tuple("" if i is None else cells[i] for i in cols[1:])

    return identity


def _repeated(paths: list[str], identity, hashes) -> tuple[str, int, tuple, tuple[str, int]] | None:
    """(piece, line, identity, (piece, line) of its first row) of the first row whose identity an earlier row
    has; None when none does. `hashes` are every row's identity hash: only rows whose hash repeats are looked
    at again, so a million rows cost 8 MB here."""
    h = np.sort(np.frombuffer(hashes, dtype=np.int64)) if len(hashes) else np.zeros(0, np.int64)
    twice = set(h[1:][h[1:] == h[:-1]].tolist())
    if not twice:
        return None
    first: dict[tuple, tuple[str, int]] = {}
    for p in paths:
        with _reader(p) as rows:
            next(rows, None)
            for cells in rows:
                key = identity(cells)
                if key is None or hash(key) not in twice:
                    continue
                if key in first:
                    return p, rows.line_num, key, first[key]
                first[key] = (p, rows.line_num)
    return None  # equal hashes of different identities


def _twice(p: str, lineno: int, key: tuple, first: tuple[str, int]) -> InputError:
    index, name, desc, dtype, vary, path, host = key
    what = f"problem {index} ({_says((name, desc, dtype, vary))}) on path {path!r}" + (f" of host {host}" if host else "")
    where = "that piece's" if first[0] == p else f"{first[0]!r}"
    return InputError(f"{p!r} line {lineno} is {what}, which {where} line {first[1]} already holds: pieces of one run "
                      "hold each problem once (to set two runs of one list side by side, use `compare`); nothing was "
                      "written.", "csv")


def merge_csvs(paths: list[str], out: str, overwrite: bool = False) -> int:
    """Join CSV pieces of one kind of run into `out`, row by row; refuse pieces whose columns differ, a piece
    given twice and one that is not a regular file. `out` appears only complete. Returns the row count."""
    if len(paths) < 2:
        raise InputError("merge needs at least two CSVs to join.", "csv")
    check_writable(out, overwrite=overwrite)
    header = _check_pieces(paths, out)
    status = header.index("status")
    identity = _identity_of_cells(header)
    hashes = array("q")  # each row's identity hash, checked for repeats before the merge is renamed into place
    target = Path(out)
    tmp, f = _open_temp(target)
    count = 0
    try:
        with f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(header)
            for p in paths:
                with _reader(p) as rows:
                    next(rows, None)
                    for cells in rows:
                        lineno = rows.line_num
                        if len(cells) != len(header):
                            raise InputError(f"{p!r} line {lineno}: wrong number of cells (truncated or foreign "
                                             "file); nothing was written.", "csv")
                        if cells[status] not in STATUSES:
                            raise InputError(f"{p!r} line {lineno}: status {cells[status][:40]!r} is not one of "
                                             f"{', '.join(STATUSES)}; nothing was written.", "csv")
                        key = identity(cells) if identity else None
                        if key is not None:
                            hashes.append(hash(key))
                        w.writerow(cells)
                        count += 1
            f.flush()
            os.fsync(f.fileno())
        repeat = _repeated(paths, identity, hashes) if identity else None
        if repeat:
            raise _twice(*repeat)
        refuse_special(target)  # it may have become a link or a device while we wrote
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return count
