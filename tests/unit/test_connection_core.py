"""The relay's fast path (pgbarrier/server/core.py) driven by bytes, with a fake transport.

No event loop and no server: the client's side is a transport that records what is
written to it; the upstream is one end of a socket pair (the test plays PostgreSQL at the
other), read by :class:`pgbarrier.server.upstream_io.UpstreamIO` when the test calls its
reader callback, as the loop would. Every test runs each implementation of both
modules: the Python sources and, where the install built them, the compiled extensions.
"""

from __future__ import annotations

import importlib
import socket
import struct
from types import SimpleNamespace

import pytest

from pgbarrier import accel
from pgbarrier.backends.pg_relay import Upstream, UpstreamLost, frame
from pgbarrier.server.frames import FrameBuffer
from pgbarrier.session.relay import SessionRelay
from pgbarrier.session.session import Session
from pgbarrier.session.transaction import TxState
from tests.relay_wire import SYNC, Loop, bind, cstr, execute, upstream_reads, upstream_says


def _implementations(name: str) -> list:
    """The source and, where built and runnable beside the relay state that runs (the
    compiled core is typed against the compiled state: pgbarrier.accel.REQUIRES), the
    extension."""
    package, _, base = name.rpartition(".")
    found = [importlib.import_module(name)]
    if not all(accel.COMPILED.get(r) for r in accel.REQUIRES.get(name, ())):
        return found
    try:
        found.append(importlib.import_module(f"{package}._{base}_c"))
    except ImportError:
        pass
    return found


PAIRS = [(core, io) for core in _implementations("pgbarrier.server.core")
         for io in _implementations("pgbarrier.server.upstream_io")]


BATCH = bind(stmt="s1") + execute() + SYNC
REPLIES = (frame(b"2") + frame(b"D", struct.pack("!hi", 1, 1) + b"7")
           + frame(b"C", cstr("SELECT 1")) + frame(b"Z", b"T"))


class Transport:
    """What the fast path asks of the client's transport; ``held``: bytes it says it has
    not written yet (a direct write to the socket must not overtake them)."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.closing = False
        self.held = 0

    def write(self, data: bytes) -> None:
        self.written.append(bytes(data))
        self.held += len(data)  # a client that does not read: the transport keeps it

    def is_closing(self) -> bool:
        return self.closing

    def get_write_buffer_size(self) -> int:
        return self.held


def _name(pair: tuple) -> str:
    return f"{pair[0].__name__.rsplit('.', 1)[1]}+{pair[1].__name__.rsplit('.', 1)[1]}"


@pytest.fixture(params=PAIRS, ids=_name)
def wired(request):
    yield from _wired(request.param, direct=False)


@pytest.fixture(params=PAIRS, ids=_name)
def direct(request):
    """As ``wired``, and the fast path may write replies to the client's socket itself."""
    yield from _wired(request.param, direct=True)


def _wired(pair: tuple, direct: bool):
    core_module, io_module = pair

    class Connection(core_module.ConnectionCore):
        """The subclass's part, recorded: what the fast path hands to the usual path."""

        def __init__(self, server: object, loop: object) -> None:
            core_module.ConnectionCore.__init__(self, server, loop, FrameBuffer(1 << 20))
            self.usual: list[bytes] = []
            self.ends: list[BaseException | None] = []

        def _received(self, data: bytes) -> None:
            self.usual.append(data)

        def _end(self, error: BaseException | None = None) -> None:
            self.ends.append(error)
            self._finished = True

        def _advance(self) -> None:
            pass

        def _upstream_spoke(self) -> None:
            pass

    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    theirs.settimeout(5)
    client, client_peer = socket.socketpair()
    client.setblocking(False)
    client_peer.settimeout(5)
    server = SimpleNamespace(terminating=False, logs_statements=False, log_min_duration_ms=-1)
    loop = Loop()
    session = Session(None, {})  # type: ignore[arg-type] - only protocol state is used
    session.executor = SimpleNamespace(info=SimpleNamespace(  # type: ignore[assignment]
        idle_session_timeout_ms=0, idle_in_transaction_timeout_ms=0))
    up = Upstream(ours, {"application_name": ""})
    relay = SessionRelay(session, up)
    session.relay = relay
    conn = Connection(server, loop)
    conn.transport = Transport()
    conn.session = session
    io = io_module.UpstreamIO(loop, up)
    io.attach()
    conn.relay_fast(relay, io, client.fileno() if direct else -1)
    conn._serving = True
    yield SimpleNamespace(conn=conn, io=io, up=up, peer=theirs, loop=loop, session=session,
                          client=client, client_peer=client_peer)
    for sock in (ours, theirs, client, client_peer):
        sock.close()


def test_a_whole_relayed_batch_goes_up_as_it_came_and_its_replies_come_back(wired):
    w = wired
    w.conn.data_received(BATCH)
    assert w.conn.usual == [] and w.conn._busy and w.conn.in_batch
    assert upstream_reads(w, len(BATCH)) == BATCH
    upstream_says(w, REPLIES)
    assert b"".join(w.conn.transport.written) == REPLIES
    assert not w.conn._busy and not w.conn.in_batch and w.conn.ends == []
    assert w.session.tx is TxState.IN_BLOCK
    assert w.conn.batches == 1 and w.conn.last_batch == [BATCH]


def test_replies_are_passed_on_as_they_arrive_and_the_batch_ends_at_ready(wired):
    w = wired
    w.conn.data_received(BATCH)
    upstream_reads(w, len(BATCH))
    upstream_says(w, REPLIES[:9])  # BindComplete and part of the DataRow
    assert b"".join(w.conn.transport.written) == REPLIES[:5]
    assert w.conn._busy
    upstream_says(w, REPLIES[9:])
    assert b"".join(w.conn.transport.written) == REPLIES
    assert not w.conn._busy


def test_a_read_that_is_not_a_whole_batch_takes_the_usual_path_with_nothing_changed(wired):
    w = wired
    w.conn.data_received(BATCH[:-1])  # the Sync is cut short
    assert w.conn.usual == [BATCH[:-1]]
    assert not w.conn._busy and not w.conn.in_batch and w.conn.batches == 0
    w.peer.setblocking(False)
    with pytest.raises(BlockingIOError):
        w.peer.recv(100)  # nothing went upstream


def test_a_client_that_does_not_read_holds_the_upstream_until_it_does(wired):
    w = wired
    w.conn.data_received(BATCH)
    upstream_reads(w, len(BATCH))
    w.conn._write_paused = True  # the transport's pause_writing
    upstream_says(w, REPLIES[:9])
    assert w.io.paused and w.io.fd not in w.loop.readers
    assert w.conn._on_writable is not None
    w.peer.sendall(REPLIES[9:])
    w.conn._write_paused = False
    then, w.conn._on_writable = w.conn._on_writable, None
    then()  # resume_writing: the relay watches the upstream again...
    assert w.conn._busy and w.io.fd in w.loop.readers
    w.loop.readers[w.io.fd]()  # ...and passes the rest on when it is read
    assert b"".join(w.conn.transport.written) == REPLIES
    assert not w.conn._busy and not w.io.paused


def test_an_upstream_gone_mid_batch_ends_the_connection_with_what_it_said(wired):
    w = wired
    w.conn.data_received(BATCH)
    upstream_reads(w, len(BATCH))
    w.peer.sendall(REPLIES[:5])
    w.peer.shutdown(socket.SHUT_WR)
    w.loop.readers[w.io.fd]()
    assert b"".join(w.conn.transport.written) == REPLIES[:5]
    if w.conn.ends == []:  # the first read took the bytes; the next finds the end
        w.loop.readers[w.io.fd]()
    assert len(w.conn.ends) == 1 and isinstance(w.conn.ends[0], UpstreamLost)
    assert not w.up.state.busy


def test_a_write_the_upstream_does_not_take_at_once_is_finished_when_it_is_writable(wired):
    w = wired
    w.up.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    big = bind(stmt="s" * 200_000) + execute() + SYNC  # more than the socket buffer takes
    w.conn.data_received(big)
    assert w.conn._busy
    assert w.io.fd in w.loop.writers  # the rest waits for the socket
    got = b""
    while len(got) < len(big):
        got += w.peer.recv(65536)
        if w.io.fd in w.loop.writers:
            w.loop.writers[w.io.fd]()
    assert got == big
    upstream_says(w, REPLIES)
    assert b"".join(w.conn.transport.written) == REPLIES
    assert not w.conn._busy


def _client_reads(w, n: int) -> bytes:
    got = b""
    w.client_peer.setblocking(False)
    try:
        while len(got) < n:
            got += w.client_peer.recv(n - len(got))
    except BlockingIOError:
        pass
    return got


def test_replies_go_straight_to_the_client_socket_when_the_transport_holds_nothing(direct):
    w = direct
    w.conn.data_received(BATCH)
    upstream_reads(w, len(BATCH))
    upstream_says(w, REPLIES)
    assert _client_reads(w, len(REPLIES)) == REPLIES
    assert w.conn.transport.written == []
    assert not w.conn._busy


def test_replies_wait_behind_what_the_transport_has_not_written(direct):
    w = direct
    w.conn.transport.held = 10  # it still holds an earlier write: nothing may overtake it
    w.conn.data_received(BATCH)
    upstream_reads(w, len(BATCH))
    upstream_says(w, REPLIES)
    assert b"".join(w.conn.transport.written) == REPLIES
    assert _client_reads(w, 1) == b""


def test_what_the_client_socket_does_not_take_goes_to_the_transport_in_order(direct):
    w = direct
    w.client.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    rows = b"".join(frame(b"D", struct.pack("!hi", 1, 1000) + bytes([65 + i % 26]) * 1000)
                    for i in range(400))
    replies = frame(b"2") + rows + frame(b"C", cstr("SELECT 400")) + frame(b"Z", b"I")
    w.conn.data_received(BATCH)
    upstream_reads(w, len(BATCH))
    w.peer.setblocking(False)
    rest = replies
    while w.conn._busy:
        if rest:
            try:
                rest = rest[w.peer.send(rest):]
            except BlockingIOError:
                pass
        w.loop.readers[w.io.fd]()
    direct_part = _client_reads(w, len(replies))
    assert 0 < len(direct_part) < len(replies)
    assert direct_part + b"".join(w.conn.transport.written) == replies
