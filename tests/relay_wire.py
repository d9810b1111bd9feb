"""Client messages and a stand-in event loop for the relay's unit tests.

Used by ``tests/unit/test_relay_steps.py``, ``test_connection_core.py``,
``test_relay_driver.py`` and ``test_worker_driver.py``: the frontend messages they feed
the relay (PostgreSQL's wire format, built with
:func:`pgbarrier.backends.pg_relay.frame`); :class:`Loop`, which records the socket
callbacks :class:`pgbarrier.server.upstream_io.UpstreamIO` asks the event loop to watch,
so a test calls them as epoll would; the test's end of the upstream socket pair
(:func:`upstream_reads`, :func:`upstream_says`); and :class:`RecordedHost`, the part of a
connection its batch drivers share, recorded.
"""

from __future__ import annotations

import struct

from pgbarrier.backends.pg_relay import frame


def cstr(s: str) -> bytes:
    return s.encode() + b"\0"


def query(sql: str) -> bytes:
    return frame(b"Q", cstr(sql))


def parse(sql: str, name: str = "") -> bytes:
    return frame(b"P", cstr(name) + cstr(sql) + struct.pack("!h", 0))


def bind(portal: str = "", stmt: str = "") -> bytes:
    return frame(b"B", cstr(portal) + cstr(stmt) + struct.pack("!hhh", 0, 0, 0))


def execute(portal: str = "") -> bytes:
    return frame(b"E", cstr(portal) + struct.pack("!i", 0))


SYNC = frame(b"S")


def row(value: bytes) -> bytes:
    """A DataRow of one column holding ``value``."""
    return frame(b"D", struct.pack("!hi", 1, len(value)) + value)


def ready(status: bytes = b"I") -> bytes:
    return frame(b"Z", status)


def upstream_reads(w, n: int) -> bytes:
    """``n`` bytes the relay wrote upstream, read at the test's end of the socket pair
    (``w.peer``)."""
    got = b""
    while len(got) < n:
        got += w.peer.recv(n - len(got))
    return got


def upstream_says(w, data: bytes) -> None:
    """The upstream (the test, at ``w.peer``) sends ``data``; the loop's reader callback
    of ``w.io`` then runs, as epoll would call it."""
    w.peer.sendall(data)
    w.loop.readers[w.io.fd]()


class Loop:
    """What UpstreamIO asks of the event loop: the reader and writer callbacks it would
    watch (a test calls them); nothing here is timed."""

    def __init__(self) -> None:
        self.readers: dict[int, object] = {}
        self.writers: dict[int, object] = {}

    def add_reader(self, fd: int, cb: object) -> None:
        self.readers[fd] = cb

    def remove_reader(self, fd: int) -> None:
        self.readers.pop(fd, None)

    def add_writer(self, fd: int, cb: object) -> None:
        self.writers[fd] = cb

    def remove_writer(self, fd: int) -> None:
        self.writers.pop(fd, None)

    def call_later(self, *args: object) -> None:
        raise AssertionError("nothing here is timed")


class RecordedHost:
    """What a batch driver (``server.relay_driver``, ``server.worker_driver``) hands back
    to its connection, recorded: the batches ended, the connection's ends, the next batch
    asked for; a callback's exception ends the connection, as ``Connection._guard`` does."""

    def __init__(self) -> None:
        self.in_batch = True
        self.ended: list[tuple[bytes | None, bool]] = []
        self.ends: list[BaseException | None] = []
        self.advanced = 0

    def _end(self, error: BaseException | None = None) -> None:
        self.ends.append(error)

    def _guard(self, fn, *args) -> None:
        try:
            fn(*args)
        except BaseException as exc:  # noqa: BLE001 - as the connection's
            self._end(exc)

    def _advance(self) -> None:
        self.advanced += 1

    def _batch_ended(self, out: bytes | None, idle: bool) -> None:
        self.in_batch = False
        self.ended.append((out, idle))
