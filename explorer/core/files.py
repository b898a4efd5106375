"""Files: atomic writes, output paths checked before a run starts, and text reads with one-sentence errors."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from explorer.core.errors import InputError


def read_text(path: str | os.PathLike, field: str) -> str:
    """The file's text; a missing or unreadable file raises InputError naming it (field: the option)."""
    p = Path(path)
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


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write text to path via a temp file in the same folder and os.replace (atomic on POSIX)."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        os.chmod(tmp, _file_mode(target))  # mkstemp makes 0600; keep the old file's mode, or the umask's
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
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
    if p.is_dir():
        raise InputError(f"output path {str(p)!r} is a folder; give a file name.", "csv")
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
