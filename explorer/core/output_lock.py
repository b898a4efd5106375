"""One writer per output file: an exclusive flock on a lock file next to it, taken before any work is done.

The lock is on a sidecar ".NAME.lock", not on the CSV itself: a resume, the model's final report and the
window's Save rewrite the CSV atomically (a new file renamed over it), and a lock on the old inode would not
guard the new one. The sidecar holds the writer's pid and command line, so a refused second writer can name it.
The kernel drops a flock when its process dies (kill -9 included), so a crash never blocks a rerun; a normal
release also removes the sidecar. Within one process a path may be held more than once (the plan reads a
resumed CSV, then its sink writes it): holds count, the last release frees the file.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shlex
import stat
import sys
import threading
import time
import weakref

from explorer.core.errors import InputError, WriteFault

WAIT_S = 0.3  # a second writer is refused at once; this only rides out another process's brief probe
MARK = "mkldnn-explorer writer"  # the first word of our lock files: any other file at that path is not ours

_held: dict[str, _Held] = {}  # realpath of the target -> this process's lock on it
_guard = threading.Lock()


def lock_path(target: str | os.PathLike) -> str:
    real = os.path.realpath(target)
    return os.path.join(os.path.dirname(real), f".{os.path.basename(real)}.lock")


def _command_line() -> str:
    try:
        with open("/proc/self/cmdline", "rb") as f:
            argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        argv = list(getattr(sys, "orig_argv", sys.argv))
    return shlex.join(argv)


class _Held:
    """The open, flocked sidecar of one target, and how many holds of this process share it."""

    def __init__(self, key: str, lock: str, fd: int):
        self.key, self.lock, self.fd, self.count = key, lock, fd, 0

    def drop(self) -> None:
        with _guard:
            self.count -= 1
            if self.count > 0:
                return
            _held.pop(self.key, None)
            try:
                os.unlink(self.lock)  # while still locked: a writer that opened it sees another inode and retries
            except OSError:
                pass
            os.close(self.fd)


class OutputLock:
    """A hold on one target; release() (or the end of a `with`, or garbage collection) gives it back."""

    def __init__(self, held: _Held):
        self._release = weakref.finalize(self, held.drop)

    def release(self) -> None:
        self._release()

    def __enter__(self) -> OutputLock:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _open_lock(lock: str, field: str) -> int:
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o644)
    except OSError as e:
        if e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO):  # the disk's fault, not the input's: exit 3
            raise WriteFault(lock, e.strerror or str(e)) from None
        raise InputError(f"cannot lock {lock!r} (one writer per file): {e.strerror or e}.", field) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InputError(f"{lock!r} is not a regular file; the tool keeps its writer's lock there: remove it.", field)
    return fd


def _holder(fd: int) -> str:
    """Who holds the lock, as its file says: 'pid 123 (python -m explorer batch ...)'."""
    try:
        text = os.pread(fd, 4096, 0).decode(errors="replace")
    except OSError:
        text = ""
    if not text.startswith(MARK):
        return "another process"
    fields = dict(line.split("=", 1) for line in text.splitlines()[1:] if "=" in line)
    cmd = fields.get("cmd", "?")
    cmd = cmd if len(cmd) <= 160 else cmd[:157] + "..."
    return f"another process (pid {fields.get('pid', '?')}: {cmd})"


def _refusal(target, fd: int, field: str) -> InputError:
    return InputError(f"{str(target)!r} is being written by {_holder(fd)}; wait for it to end or give another "
                      "file (two writers of one CSV would lose rows).", field)


def lock_output(target: str | os.PathLike, field: str = "csv") -> OutputLock:
    """Hold the exclusive writer's lock of target, or raise InputError naming the process that holds it."""
    key = os.path.realpath(target)
    with _guard:
        held = _held.get(key)
        if held is None:
            held = _take(target, key, field)
            _held[key] = held
        held.count += 1
        return OutputLock(held)


def _locked_fd(target, lock: str, field: str) -> int:
    """An fd of `lock` holding its exclusive flock, waiting up to WAIT_S; the refusal naming the holder after."""
    deadline = time.monotonic() + WAIT_S
    while True:
        fd = _open_lock(lock, field)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() < deadline:
                os.close(fd)
                time.sleep(0.02)
                continue
            err = _refusal(target, fd, field)
            os.close(fd)
            raise err from None


def _take(target, key: str, field: str) -> _Held:
    lock = lock_path(target)
    while True:
        fd = _locked_fd(target, lock, field)
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(lock, follow_symlinks=False))
        except FileNotFoundError:
            same = False
        if not same:  # its holder removed it as we opened it: take the new one
            os.close(fd)
            continue
        old = os.pread(fd, len(MARK), 0)
        if old and not old.startswith(MARK.encode()):
            os.close(fd)
            raise InputError(f"{lock!r} is not the tool's lock file (the tool keeps its writer's lock there and "
                             "never overwrites another file): move it away.", field)
        cmd = _command_line().replace("\r", " ").replace("\n", " ")  # one line in the file, and in a refusal
        text = f"{MARK}\npid={os.getpid()}\ncmd={cmd}\n".encode()
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, text, 0)
        except OSError:  # a full disk: the lock holds without its note (a refusal then says "another process")
            pass
        return _Held(key, lock, fd)


def refuse_if_locked(target: str | os.PathLike, field: str = "csv") -> None:
    """InputError naming the other process when one holds target's lock (checked before any work starts)."""
    key = os.path.realpath(target)
    lock = lock_path(target)
    with _guard:
        if key in _held or not os.path.lexists(lock):
            return
        fd = _locked_fd(target, lock, field)
        os.close(fd)  # free: a stale file of a process that died; the next writer takes it over
