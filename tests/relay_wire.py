"""Client messages and a stand-in event loop for the relay's unit tests.

Used by ``tests/unit/test_relay_steps.py``, ``test_connection_core.py`` and
``test_relay_driver.py``: the frontend messages they feed the relay (PostgreSQL's wire
format, built with :func:`pgbarrier.backends.pg_relay.frame`) and :class:`Loop`, which
records the socket callbacks :class:`pgbarrier.server.upstream_io.UpstreamIO` asks the
event loop to watch, so a test calls them as epoll would.
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
