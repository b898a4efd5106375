"""A call into a network client that may never return, bounded: it runs in a helper thread, and the caller
stops waiting at a deadline or as soon as its cancel flag says so (the window's Stop).

Dask's client blocks inside its own event loop (a handshake with a server that accepts and says nothing, a
scheduler that went away mid-call) and cannot be interrupted from outside, so the caller does not wait for
it: the helper thread is a daemon, left to end on its own, and what it returns late goes to `late` (a client
made after the caller gave up is closed there, never leaked into a job that already ended).
"""

from __future__ import annotations

import threading
import time
from typing import Callable, TypeVar

T = TypeVar("T")
POLL_S = 0.05  # how often the caller looks at its cancel flag while it waits: Stop is felt within this


class Deadline(TimeoutError):
    """The call did not return within its deadline."""


class Cancelled(Exception):
    """The caller's cancel flag was set while it waited; the call was left to end on its own."""


def call_within(fn: Callable[[], T], timeout_s: float, cancel: Callable[[], bool] | None = None,
                late: Callable[[T], None] | None = None) -> T:
    """fn()'s value or exception, if it comes within `timeout_s`; else Deadline, or Cancelled once `cancel()`.
    `late(value)` gets a value that arrives after the caller gave up (e.g. to close a client)."""
    box: dict = {}
    lock = threading.Lock()
    done = threading.Event()

    def run():
        try:
            value = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the caller, whatever it is
            with lock:
                box["error"] = e
        else:
            with lock:
                box["value"] = value
                abandoned = box.get("abandoned", False)
            if abandoned and late is not None:
                try:
                    late(value)
                except Exception:  # noqa: BLE001 - nobody is left to tell
                    pass
        finally:
            done.set()

    threading.Thread(target=run, name="mkldnn-explorer-bounded-call", daemon=True).start()
    end = time.monotonic() + timeout_s
    while not done.wait(min(POLL_S, max(0.0, end - time.monotonic()))):
        why = Cancelled() if cancel is not None and cancel() else Deadline() if time.monotonic() >= end else None
        if why is not None:
            with lock:
                if "value" not in box and "error" not in box:
                    box["abandoned"] = True
                    raise why
            break  # it came in the very last moment: take it
    if "error" in box:
        raise box["error"]
    return box["value"]
