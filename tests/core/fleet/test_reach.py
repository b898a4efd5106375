"""Reaching a scheduler within a deadline (issue 34, #5): a server that accepts and says nothing, an address
nobody listens at, and whatever the client raises, each one sentence with the field "cluster"; a bounded call
that Stop abandons at once."""

import socket
import threading
import time

import pytest

from explorer.core.errors import InputError
from explorer.core.fleet import deadline, reach
from tests.core.fleet.fakes import silent_server  # noqa: F401 - the fixture


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nobody listens there now
    return port


def _one_sentence(text: str) -> None:
    assert text and "\n" not in text and "<" not in text and "Traceback" not in text
    assert text.rstrip().endswith(".") and "Error:" not in text


def test_a_server_that_accepts_and_says_nothing_is_refused_within_the_deadline(silent_server):
    pytest.importorskip("distributed")
    t0 = time.monotonic()
    with pytest.raises(InputError) as e:
        reach.connect_client(silent_server, timeout_s=1.0)
    took = time.monotonic() - t0
    assert e.value.field == "cluster" and took < 30  # the deadline is 1 s (+1 s grace); minutes before
    assert "accepted the connection but did not answer as a Dask scheduler within 1 s" in str(e.value)
    _one_sentence(str(e.value))


def test_stop_while_connecting_ends_the_wait_at_once(silent_server):
    pytest.importorskip("distributed")
    asked = time.monotonic() + 0.3
    with pytest.raises(deadline.Cancelled):
        reach.connect_client(silent_server, timeout_s=60.0, cancel=lambda: time.monotonic() > asked)


def test_an_address_nobody_listens_at_is_one_sentence():
    pytest.importorskip("distributed")
    address = f"tcp://127.0.0.1:{_free_port()}"
    with pytest.raises(InputError) as e:
        reach.connect_client(address, timeout_s=1.0)
    assert str(e.value).startswith(f"no Dask scheduler answered at {address!r} (connection refused)")
    _one_sentence(str(e.value))


def test_text_that_is_no_address_is_refused_before_any_connect():
    for bad in ("tcp://", "tcp://host:port", "tcp://10.0.0.5:99999", "my cluster"):
        with pytest.raises(InputError) as e:
            reach.host_port(bad)
        assert "write it as tcp://HOST:PORT" in str(e.value) and e.value.field == "cluster"
    assert reach.host_port("10.0.0.5") == ("10.0.0.5", 8786)
    assert reach.host_port("tcp://[::1]:9000") == ("::1", 9000)
    assert reach.host_port("tls://10.0.0.5:8786") is None  # not probed: the client's own protocol


@pytest.mark.parametrize("raised, words", [
    (MemoryError(), "answered, but not in Dask's protocol"),
    (OSError("in <TCP (closed) ConnectionPool.identity local=tcp://127.0.0.1:1 remote=tcp://x:2>: Stream is closed"),
     "accepted the connection and closed it"),
    (RuntimeError("a\nmultiline\nrepr <object at 0x7f>"), "could not connect"),
])
def test_whatever_the_client_raises_while_connecting_is_one_sentence(silent_server, monkeypatch, raised, words):
    distributed = pytest.importorskip("distributed")

    def client(*_a, **_k):
        raise raised

    monkeypatch.setattr(distributed, "Client", client)
    with pytest.raises(InputError) as e:
        reach.connect_client(silent_server, timeout_s=2.0)
    assert words in str(e.value) and e.value.field == "cluster"
    _one_sentence(str(e.value))


def test_a_client_error_mid_run_is_one_sentence():
    from distributed.comm.core import CommClosedError

    text = reach.failure_sentence("tcp://10.0.0.5:8786", CommClosedError("in <TCP (closed) Scheduler>: Stream is closed"))
    assert "connection to the cluster at 'tcp://10.0.0.5:8786' was lost (it closed)" in text
    assert "rows that finished are kept" in text
    _one_sentence(text)


def test_a_bounded_call_gives_its_value_its_error_or_gives_up():
    assert deadline.call_within(lambda: 42, 5.0) == 42
    with pytest.raises(KeyError):
        deadline.call_within(lambda: {}["x"], 5.0)
    release, got = threading.Event(), []
    t0 = time.monotonic()
    with pytest.raises(deadline.Deadline):
        deadline.call_within(lambda: release.wait(30) and "late", 0.2, late=got.append)
    assert time.monotonic() - t0 < 10  # it did not wait for the call
    release.set()  # the call ends after the caller gave up: its value goes to `late`
    for _ in range(200):
        if got:
            break
        time.sleep(0.01)
    assert got == ["late"]


def test_a_server_that_answers_in_another_protocol_is_one_sentence():
    """What an address behind an HTTP proxy gave: the client read "HTTP/1.1 400" as a frame size and raised a
    raw MemoryError. A fake server that answers every connection with that reply stands in for it."""
    pytest.importorskip("distributed")
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    stop = threading.Event()

    def answer():
        srv.settimeout(0.1)
        while not stop.is_set():
            try:
                c = srv.accept()[0]
            except OSError:
                continue
            try:
                c.recv(64)
                c.sendall(b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n")
            except OSError:
                pass
            c.close()

    t = threading.Thread(target=answer, daemon=True)
    t.start()
    try:
        with pytest.raises(InputError) as e:
            reach.connect_client(f"tcp://127.0.0.1:{srv.getsockname()[1]}", timeout_s=2.0)
    finally:
        stop.set()
        t.join(2)
        srv.close()
    assert e.value.field == "cluster"
    assert "MemoryError" not in str(e.value) and "HTTP" not in str(e.value)
    _one_sentence(str(e.value))
