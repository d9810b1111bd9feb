"""The relay driver (pgbarrier/server/relay_driver.py) driven by bytes, with a fake host.

No event loop, no server and no connection: the host records what the driver writes to
the client and what it tells it; the upstream is one end of a socket pair (the test plays
PostgreSQL at the other), read by :class:`pgbarrier.server.upstream_io.UpstreamIO` when
the test calls its reader callback, as the loop would. Each test runs with each build of
the upstream's reader (the source and, where built, the extension).
"""

from __future__ import annotations

import importlib
import socket
import struct
from types import SimpleNamespace

import pytest

from pgbarrier import accel
from pgbarrier.backends.pg_relay import SPILL_BYTES, Upstream, frame
from pgbarrier.errors import Fatal
from pgbarrier.server.relay_driver import RelayDriver
from pgbarrier.session.relay import SessionRelay
from pgbarrier.session.session import Session
from pgbarrier.session.transaction import TxState
from tests.relay_wire import (SYNC, Loop, RecordedHost, bind, cstr, execute, parse, query,
                              ready, row, upstream_reads, upstream_says)


def _readers() -> list:
    found = [importlib.import_module("pgbarrier.server.upstream_io")]
    if all(accel.COMPILED.get(r) for r in accel.REQUIRES["pgbarrier.server.upstream_io"]):
        try:
            found.append(importlib.import_module("pgbarrier.server._upstream_io_c"))
        except ImportError:
            pass
    return found


TERMINATE = frame(b"X")


class Transport:
    """The client's transport: what was written; ``closing`` once closed."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.closing = False

    def is_closing(self) -> bool:
        return self.closing


class Host(RecordedHost):
    """The connection's part (relay_driver.Host), recorded."""

    def __init__(self, loop: Loop) -> None:
        super().__init__()
        self.server = SimpleNamespace(terminating=False, logs_statements=False)
        self.loop = loop
        self.transport = Transport()
        self._write_paused = False
        #: a client that stops reading after this many bytes written (None: it reads)
        self.reads_up_to: int | None = None
        self.busy = False
        self.on_writable = None
        self.spoke = 0
        self.io = None

    def written(self) -> bytes:
        return b"".join(self.transport.written)

    def _write(self, data: bytes) -> None:
        if data:
            self.transport.written.append(data)
            if self.reads_up_to is not None and len(self.written()) >= self.reads_up_to:
                self._write_paused = True  # the transport's pause_writing

    def _batch_ended(self, out: bytes | None, idle: bool) -> None:
        super()._batch_ended(out, idle)
        if out:
            self._write(out)

    def _upstream_spoke(self) -> None:
        self.spoke += 1

    def relay_waits(self, on_writable=None) -> None:
        self.busy = True
        if on_writable is not None:
            self.on_writable = on_writable

    def relay_goes_on(self) -> None:
        self.busy = False

    def resume_writing(self) -> None:
        """As the connection's: the upstream is read again, then the waiting step goes on."""
        self._write_paused = False
        self.reads_up_to = None
        if self.io.paused:
            self.io.resume()
        then, self.on_writable = self.on_writable, None
        if then is not None:
            self._guard(then)


@pytest.fixture(params=_readers(), ids=lambda m: m.__name__.rsplit(".", 1)[1])
def w(request):
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    theirs.settimeout(5)
    loop = Loop()
    session = Session(None, {})  # type: ignore[arg-type] - only protocol state is used
    up = Upstream(ours, {"application_name": ""})
    relay = SessionRelay(session, up)
    session.relay = relay
    io = request.param.UpstreamIO(loop, up)
    io.attach()
    host = Host(loop)
    host.io = io
    yield SimpleNamespace(host=host, driver=RelayDriver(host, relay, io), io=io, up=up,
                          peer=theirs, loop=loop, session=session)
    for sock in (ours, theirs):
        sock.close()


SELECT_1 = (frame(b"T", struct.pack("!h", 1) + cstr("x")
                  + struct.pack("!ihihih", 0, 0, 23, 4, -1, 0))
            + row(b"1") + frame(b"C", cstr("SELECT 1")))


def test_a_query_waits_for_its_replies_and_the_batch_ends_at_ready(w):
    q = query("SELECT 1")
    w.driver.run([q])
    assert w.host.busy and w.host.ended == []  # waiting for the upstream
    assert upstream_reads(w, len(q)) == q
    upstream_says(w, SELECT_1 + ready(b"T"))
    assert w.host.written() == SELECT_1 + ready(b"T")
    assert not w.host.busy and w.host.ended == [(SELECT_1 + ready(b"T"), True)]
    assert w.host.advanced == 1 and w.host.ends == []
    assert w.session.tx is TxState.IN_BLOCK


def test_replies_split_across_reads_are_waited_for(w):
    q = query("SELECT 1")
    w.driver.run([q])
    upstream_reads(w, len(q))
    whole = SELECT_1 + ready()
    upstream_says(w, whole[:7])
    assert w.host.busy and w.host.ended == []
    upstream_says(w, whole[7:])
    assert w.host.written() == whole and not w.host.busy and len(w.host.ended) == 1


def test_extended_messages_are_queued_until_sync_then_go_up_in_one_write(w):
    msgs = [parse("SELECT 1"), bind(), execute(), SYNC]
    w.driver.run(msgs)
    assert upstream_reads(w, len(b"".join(msgs))) == b"".join(msgs)
    replies = frame(b"1") + frame(b"2") + row(b"1") + frame(b"C", cstr("SELECT 1")) + ready()
    upstream_says(w, replies)
    assert w.host.written() == replies
    assert len(w.host.ended) == 1 and w.host.ended[0][1]  # idle: the batch ended at Sync
    assert not w.up.state.busy and w.up.state.expect == []


def test_frames_after_a_waited_on_query_go_on_once_it_is_answered(w):
    q1, q2 = query("SELECT 1"), query("SELECT 2")
    w.driver.run([q1, q2])
    assert upstream_reads(w, len(q1)) == q1
    upstream_says(w, SELECT_1 + ready())
    assert w.host.ended == []  # the second Query is sent now
    assert upstream_reads(w, len(q2)) == q2
    upstream_says(w, SELECT_1 + ready())
    assert w.host.written() == (SELECT_1 + ready()) * 2
    assert len(w.host.ended) == 1 and not w.host.busy


def test_a_client_that_does_not_read_holds_a_large_result_and_the_upstream(w):
    q = query("SELECT big")
    w.driver.run([q])
    upstream_reads(w, len(q))
    big = b"".join(row(b"x" * 1000) for _ in range(2 * SPILL_BYTES // 1000))
    replies = big + frame(b"C", cstr("SELECT 1")) + ready()
    w.host.reads_up_to = 1  # the first write fills the client's socket
    w.peer.setblocking(False)
    rest = replies

    def feed() -> None:  # PostgreSQL sends what its socket takes; the loop reads it
        nonlocal rest
        if rest:
            try:
                rest = rest[w.peer.send(rest):]
            except BlockingIOError:
                pass
        if w.io.fd in w.loop.readers:
            w.loop.readers[w.io.fd]()

    for _ in range(10_000):
        if w.host.on_writable is not None or w.host.ended:
            break
        feed()
    assert w.host.busy and w.host.ended == []
    assert w.io.paused and w.io.fd not in w.loop.readers  # nor does the relay read
    held = len(w.host.written())
    assert 0 < held < len(big)
    feed()
    assert len(w.host.written()) == held  # nothing more while the client does not read
    w.host.resume_writing()
    for _ in range(10_000):
        if w.host.ended:
            break
        if w.host.on_writable is not None:  # a later spill may fill it again
            w.host.resume_writing()
        feed()
    assert w.host.written() == replies
    assert w.host.ends == [] and not w.host.busy


def test_terminate_writes_what_came_before_it_and_ends_the_connection(w):
    w.driver.run([TERMINATE])
    assert w.host.ends == [None] and not w.host.in_batch
    assert w.host.ended == []


def test_a_failure_that_is_not_the_sessions_ends_the_connection_with_xx000(w):
    def broken(code, frame):
        raise RuntimeError("a bug")
        yield  # a generator, as steps are

    relay = w.driver.relay
    w.driver.relay = SimpleNamespace(session=relay.session, up=relay.up,
                                     relay_now=relay.relay_now, steps=broken)
    w.host._guard(w.driver.run, [query("SELECT 1")])
    assert len(w.host.ends) == 1
    err = w.host.ends[0]
    assert isinstance(err, Fatal) and err.sqlstate == "XX000"


def test_an_upstream_gone_while_a_step_waits_ends_it_with_what_it_said(w):
    q = query("SELECT 1")
    w.driver.run([q])
    upstream_reads(w, len(q))
    w.peer.sendall(SELECT_1[:5])
    w.peer.shutdown(socket.SHUT_WR)
    while w.host.ends == [] and w.io.fd in w.loop.readers:
        w.loop.readers[w.io.fd]()
    assert len(w.host.ends) == 1 and w.host.ends[0] is not None
