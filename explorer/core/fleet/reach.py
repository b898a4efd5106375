"""Reaching a Dask scheduler within a deadline, and every way of failing to, in one sentence.

The window's Cluster field and `--cluster` both connect here. A plain TCP connect comes first (a few seconds
at most): an address nobody listens at, or one that cannot be routed to, is told apart at once from one where
something answers that is not a scheduler, whose handshake Dask's client would otherwise wait on for minutes.
The client itself is then made under the same deadline (explorer.core.fleet.deadline), and Stop is felt
within a poll. What the client raises (its CommClosedError's "<TCP (closed) ...> Stream is closed", a
MemoryError from an address it could not reach) is never shown raw: `failure_sentence` names what happened.
"""

from __future__ import annotations

import socket
from typing import Callable

from explorer.core.errors import ExplorerError, Fault, InputError
from explorer.core.fleet.deadline import Cancelled, Deadline, call_within

DEFAULT_PORT = 8786  # `dask scheduler`'s port
CONNECT_DEADLINE_S = 5.0  # how long connecting to a cluster may take, TCP probe and handshake each
CLOSE_DEADLINE_S = 3.0  # how long closing a client (and cancelling its tasks) may hold a job that ends
IMPORT_DEADLINE_S = 120.0  # importing distributed (once per process): slow under load, never a network wait


class ClusterLost(Fault):
    """The cluster failed mid-run (a closed stream, a scheduler gone): not the user's input, so the CLI exits
    3; the window marks the Cluster field with it (`field`), and the rows that finished are kept."""

    field = "cluster"


def lost(address: str, e: BaseException) -> ClusterLost:
    """A client error mid-run as ClusterLost, in one sentence."""
    return ClusterLost(failure_sentence(address, e))


def lost_as_fault(events, address: str):
    """The cluster's events, a client error among them raised as ClusterLost (one sentence, exit 3)."""
    try:
        yield from events
    except ExplorerError:
        raise
    except Exception as e:  # noqa: BLE001 - "Stream is closed" and the like, in words
        raise lost(address, e) from None


def host_port(address: str) -> tuple[str, int] | None:
    """('10.0.0.5', 8786) of 'tcp://10.0.0.5:8786' or '10.0.0.5'; None for another protocol (not probed);
    InputError in one sentence for text that is no address."""
    text = address.strip()
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    if scheme != "tcp":
        return None  # tls://, ucx://, inproc://: the client's own business
    host, colon, port = rest.rstrip("/").rpartition(":") if rest.count(":") == 1 or rest.startswith("[") else ("", "", "")
    if not colon:
        host, port = rest.rstrip("/"), str(DEFAULT_PORT)
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536 or any(c.isspace() for c in host):
        raise InputError(f"{address!r} is not a scheduler's address; write it as tcp://HOST:PORT, e.g. "
                         f"tcp://10.0.0.5:{DEFAULT_PORT}.", "cluster")
    return host, int(port)


def probe(address: str, timeout_s: float = CONNECT_DEADLINE_S, cancel: Callable[[], bool] | None = None) -> None:
    """A TCP connect to the scheduler's port within the deadline; InputError (field "cluster") when refused,
    unroutable or silent. Raises Cancelled when the caller's Stop came first."""
    where = host_port(address)
    if where is None:
        return

    def connect():
        socket.create_connection(where, timeout=timeout_s).close()

    try:
        call_within(connect, timeout_s + 0.5, cancel)
    except (Deadline, socket.timeout, TimeoutError):
        raise InputError(f"no Dask scheduler answered at {address!r} within {timeout_s:g} s (nothing accepted a "
                         "connection: a host that is down or an address that cannot be reached); check the address "
                         "or start one with `dask scheduler`.", "cluster") from None
    except OSError as e:
        raise InputError(f"no Dask scheduler answered at {address!r} ({_os_words(e)}); start one with "
                         "`dask scheduler`, or check the address.", "cluster") from None


def connect_client(address: str, timeout_s: float = CONNECT_DEADLINE_S, cancel: Callable[[], bool] | None = None):
    """A distributed.Client of the scheduler at `address`, made within `timeout_s` after a TCP probe; every
    failure is one sentence (InputError, field "cluster"); Cancelled when Stop came first."""
    # importing distributed takes seconds on a loaded machine: apart from the deadline, but Stop is felt in it
    Client = call_within(_client_class, IMPORT_DEADLINE_S, cancel)
    probe(address, timeout_s, cancel)
    try:
        return call_within(lambda: Client(address, timeout=timeout_s), timeout_s, cancel,
                           late=lambda c: c.close(timeout=CLOSE_DEADLINE_S))
    except (Cancelled, InputError):
        raise
    except (Deadline, TimeoutError):
        raise InputError(f"something at {address!r} accepted the connection but did not answer as a Dask scheduler "
                         f"within {timeout_s:g} s; check the address (a scheduler listens on port {DEFAULT_PORT} "
                         "unless told otherwise).", "cluster") from None
    except Exception as e:  # noqa: BLE001 - whatever the client raises, the field says it in words
        raise InputError(failure_sentence(address, e, connecting=True), "cluster") from None


def _client_class():
    from distributed import Client

    return Client


def close_client(client, cancel_work: Callable[[], None] | None = None) -> None:
    """Cancel what is left on the cluster, then close the client, within CLOSE_DEADLINE_S in all; a scheduler
    that stopped answering does not hold the job: it is left to time out on its own."""
    def close():
        try:
            if cancel_work is not None:
                cancel_work()
        finally:
            client.close(timeout=CLOSE_DEADLINE_S)

    try:
        call_within(close, CLOSE_DEADLINE_S + 0.5)
    except Exception:  # noqa: BLE001 - the job is ending; a scheduler gone mid-close changes nothing
        pass


def failure_sentence(address: str, e: BaseException, connecting: bool = False) -> str:
    """One sentence for a client error: what happened in words, never the error's repr."""
    name = type(e).__name__
    closed = name in ("CommClosedError", "StreamClosedError") or "Stream is closed" in str(e)
    if connecting:
        if closed:
            return (f"something at {address!r} accepted the connection and closed it: not a Dask scheduler, or one "
                    "of another version; check the address.")
        if isinstance(e, MemoryError):  # it read a reply of another protocol (an HTTP proxy's 400) as a frame size
            return (f"something at {address!r} answered, but not in Dask's protocol (a web server or a proxy in "
                    "between?); check the address, and that the scheduler is reachable from this machine.")
        return f"the Dask client could not connect to {address!r} ({name}); check the address or start `dask scheduler`."
    if closed or isinstance(e, OSError):
        return (f"the connection to the cluster at {address!r} was lost ({'it closed' if closed else _os_words(e)}); "
                "the rows that finished are kept: check the scheduler and run again.")
    if isinstance(e, (Deadline, TimeoutError)):
        return (f"the cluster at {address!r} stopped answering; the rows that finished are kept: check the "
                "scheduler and run again.")
    return (f"the cluster at {address!r} failed ({name}); the rows that finished are kept: check the scheduler "
            "and run again.")


def _os_words(e: OSError) -> str:
    """'connection refused' rather than '[Errno 111] Connection refused'."""
    words = (e.strerror or "").strip() or type(e).__name__
    return words[0].lower() + words[1:]
