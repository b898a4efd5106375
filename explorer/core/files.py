"""Files: the one output layer every file the tool writes goes through, and text reads with one-sentence errors.

Output rules (README "Output files"):
- The tool writes only its own regular files. A path that exists and is not a regular file (a device such as
  /dev/full, a FIFO, a socket, a folder) is refused, --force or not. A symbolic link is refused too (the tool
  never replaces a link by a file, nor writes through it to a target it did not name): give the target's path.
- Every whole write is atomic: a temp file beside the target, flushed and fsynced, then renamed over it. A row
  file (RowsFile: the CSVs) is written that way once, when it is new or resumed; then each finished row is
  appended and fsynced (constant cost per row), and a failed append is cut off again, so the target on disk is
  always a complete file holding every row finished so far; `on_disk` counts the rows really there.
- One writer per file: a CSV is locked (explorer.core.output_lock) before any work; a second writer is refused.
- A write that fails (a full disk) raises WriteFault: which file, why, how many rows are safe in it; the full
  content goes to a recovery copy in the cache folder (recover()), or on stdout when that fails too.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path

from explorer.core.errors import InputError, WriteFault


def refuse_unreadable_kind(path: str | os.PathLike, field: str) -> None:
    """InputError when path (links followed) is a FIFO, device or socket: reading one waits for a writer that
    may never come, or never ends (/dev/zero); a missing path or a folder is left to the reader's own sentence."""
    p = Path(path)
    try:
        st = os.stat(p)
    except OSError:
        return
    if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
        return
    kind = ("a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else
            "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a file")
    raise InputError(f"cannot read {str(p)!r}: it is {kind}, not a regular file; save its content to a file and "
                     "give that.", field)


def read_text(path: str | os.PathLike, field: str) -> str:
    """The file's text; a missing or unreadable file raises InputError naming it (field: the option)."""
    p = Path(path)
    refuse_unreadable_kind(p, field)
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"cannot open {str(p)!r}: no such file.", field) from None
    except IsADirectoryError:
        raise InputError(f"cannot open {str(p)!r}: it is a folder, not a file.", field) from None
    except UnicodeDecodeError:
        raise InputError(f"cannot read {str(p)!r}: it is not a text file (UTF-8 expected).", field) from None
    except OSError as e:
        raise InputError(f"cannot read {str(p)!r}: {e.strerror or e}.", field) from None


def refuse_special(path: str | os.PathLike, field: str = "csv") -> None:
    """InputError unless path is missing or a regular file (never a link, device, FIFO, socket or folder)."""
    p = Path(path)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return
    except OSError as e:
        raise InputError(f"cannot write {str(p)!r}: {e.strerror or e}.", field) from None
    if stat.S_ISLNK(st.st_mode):
        raise InputError(f"{str(p)!r} is a symbolic link; give the path of the file it points to "
                         f"({os.path.realpath(p)!r}): links are never replaced nor written through.", field)
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"output path {str(p)!r} is a folder; give a file name.", field)
    if not stat.S_ISREG(st.st_mode):
        kind = ("a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else
                "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a file")
        raise InputError(f"{str(p)!r} is {kind}, not a regular file; the tool writes only its own regular files "
                         "(--force or not).", field)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write text to path via a temp file in the same folder, fsync and os.replace (atomic on POSIX).
    Refuses a path that is not a regular file (InputError); a failed write (OSError) leaves the target as it was."""
    target = Path(path)
    refuse_special(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        os.chmod(tmp, _file_mode(target))  # mkstemp makes 0600; keep the old file's mode, or the umask's
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        refuse_special(target)  # again: it may have become a link or a device while we wrote
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _read_umask() -> int:
    umask = os.umask(0)  # the only portable read sets it; done once, at import, before any thread starts
    os.umask(umask)
    return umask


_UMASK = _read_umask()


def _file_mode(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o777
    except OSError:
        return 0o666 & ~_UMASK


def check_writable(path: str | os.PathLike, overwrite: bool = True) -> Path:
    """Refuse an output path before any work starts: missing folder, a directory, not writable, or existing."""
    p = Path(path)
    if not str(path).strip():
        raise InputError("an output path is empty; give a file name.", "csv")
    refuse_special(p)
    from explorer.core.output_lock import refuse_if_locked

    refuse_if_locked(p)  # another process writing it: named, before the checks below say "exists"
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"cannot write {str(p)!r}: folder {str(parent)!r} does not exist.", "csv")
    if not os.access(parent, os.W_OK):
        raise InputError(f"cannot write {str(p)!r}: folder {str(parent)!r} is not writable.", "csv")
    if p.exists() and not overwrite:
        raise InputError(f"{str(p)!r} already exists; pass --force to overwrite it.", "csv")
    if p.exists() and not os.access(p, os.W_OK):
        raise InputError(f"cannot write {str(p)!r}: the file is read-only.", "csv")
    return p


def same_output(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether two output paths name one file (also through '..', './' or a hard link)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_distinct(outputs: dict[str, str | None]) -> None:
    """Refuse two outputs on one path (--timeline t.json --csv t.json): one would destroy the other."""
    given = [(opt, p) for opt, p in outputs.items() if p]
    for i, (o1, p1) in enumerate(given):
        for o2, p2 in given[i + 1:]:
            if same_output(p1, p2):
                raise InputError(f"{o1} and {o2} both name {str(p1)!r}; give each output its own file.",
                                 o2.lstrip("-"))


def recovery_dir() -> Path:
    """Where a copy of results goes when their file cannot be written (the cache folder, as the peak's)."""
    base = os.environ.get("MKLDNN_EXPLORER_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "mkldnn-explorer")
    return Path(base) / "recovered"


def recover(fault: WriteFault) -> str | None:
    """Save the fault's full content to a new file in recovery_dir(); its path, or None when that fails too."""
    import time

    if not fault.text:
        return None
    try:
        d = recovery_dir()
        d.mkdir(parents=True, exist_ok=True)
        name = Path(fault.path).name or "output"
        dest = d / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{name}"
        atomic_write_text(dest, fault.text)
    except (OSError, InputError):
        return None
    fault.recovered = str(dest)
    fault.args = (fault.sentence(),)
    return str(dest)


def write_output(path: str | os.PathLike, text: str, rows: int | None = None, kind: str = "rows") -> None:
    """atomic_write_text for a finished output (a JSON, a timeline, a session): a failed write is a WriteFault."""
    try:
        atomic_write_text(path, text)
    except OSError as e:
        raise WriteFault(str(path), e.strerror or str(e), 0 if rows is not None else None, rows, text, kind) from None


class RowsFile:
    """A row file (a CSV), held under its writer's lock (explorer.core.output_lock) from construction to close().
    It is started once, atomically: the header and the rows it goes on with (a resume), or a whole replace().
    After that each finished row is one append (write, fsync), so a row costs the same at row 1 and at row
    1,000,000. `on_disk` is how many rows are really in it; a write that fails raises WriteFault (rows safe =
    on_disk, text = the file's good content and the row, for the recovery copy) after cutting off what it wrote
    of the row, so every earlier row stays intact."""

    def __init__(self, path: str | os.PathLike | None, header: str, lines: list[str] = ()):
        from explorer.core.output_lock import lock_output

        self.path = Path(path) if path else None
        self.header = header
        self.base = list(lines)  # the rows it starts with (a resume), until start() writes them
        self.count = len(self.base)  # every row given, on disk or not
        # A resumed file on disk already holds its rows: a failed start leaves it as it was.
        self.on_disk = len(self.base) if self.base and self.path is not None and self.path.exists() else 0
        self.started = False
        self.lock = lock_output(self.path) if self.path is not None else None

    def add(self, line: str) -> None:
        self.count += 1
        if self.path is None:
            return
        if not self.started:
            self.base.append(line)
            self.start()
            return
        try:
            append_text(self.path, line)
        except OSError as e:
            raise WriteFault(str(self.path), e.strerror or str(e), self.on_disk, self.count,
                             self._recovery_text(line)) from None
        self.on_disk += 1

    def start(self) -> None:
        """The one full write: header and the rows it starts with, atomically (a new or resumed file)."""
        text = self.header + "".join(self.base)
        try:
            atomic_write_text(self.path, text)
        except OSError as e:
            raise WriteFault(str(self.path), e.strerror or str(e), self.on_disk, self.count, text) from None
        self.on_disk, self.base, self.started = self.count, [], True

    def replace(self, lines: list[str]) -> None:
        """Every row anew (the model's final report): one atomic rewrite, appends after it."""
        self.base, self.count = list(lines), len(lines)
        if self.path is None:
            return
        self.on_disk = min(self.on_disk, self.count)
        self.start()

    def flush(self) -> None:
        """Put the header (and the rows it starts with) on disk if not yet there; rows are on disk as added."""
        if self.path is not None and not self.started:
            self.start()

    def close(self) -> None:
        """Give the writer's lock back (also done when the process ends, however it ends)."""
        if self.lock is not None:
            self.lock.release()

    def _recovery_text(self, line: str) -> str:
        try:
            with open(self.path, encoding="utf-8", newline="") as f:
                return f.read() + line
        except (OSError, UnicodeDecodeError):
            return self.header + line


def append_text(path: str | os.PathLike, text: str) -> None:
    """Append text to an existing regular file and fsync it; on failure (a full disk, EIO, an interrupt) cut the
    file back to its size before, so no part of the text is left (the earlier rows stay a complete CSV), and
    raise it again."""
    data = memoryview(text.encode("utf-8"))
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "it is no longer a regular file")
        try:
            while data:
                n = os.write(fd, data)
                if n <= 0:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                data = data[n:]
            os.fsync(fd)
        except BaseException:  # also Ctrl+C mid-row: the file keeps exactly the rows counted on disk
            with contextlib.suppress(OSError):
                os.ftruncate(fd, st.st_size)
            raise
    finally:
        os.close(fd)


def commit_file(tmp: str | os.PathLike, path: str | os.PathLike) -> None:
    """Put a finished temp file (an image Qt wrote) onto an output path, by the same rules as every write:
    fsynced, renamed, and never over a link, device, FIFO or folder (InputError; the temp file is removed)."""
    try:
        refuse_special(path)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
