"""The upstream relay as a protocol object: client frames and upstream bytes in, requests out.

No socket: each client message gives a generator of steps; the test plays the event loop,
answering NEED_BYTES with upstream bytes it chose, and reads what the relay queued for the
upstream (``pending_writes``) and for the client (the session's outbox).
"""

from __future__ import annotations

import struct

import pytest

from pgbarrier.backends.pg_relay import Upstream, UpstreamLost, frame
from pgbarrier.relay.effects import NEED_BYTES, RunLocal, Spill
from pgbarrier.session.relay import SessionRelay
from pgbarrier.session.session import Session
from pgbarrier.session.transaction import TxState
from tests.relay_wire import SYNC, bind, cstr, execute, parse, query, ready, row


PARSE_OK, BIND_OK = frame(b"1"), frame(b"2")


def complete(tag: str) -> bytes:
    return frame(b"C", cstr(tag))


def error(sqlstate: str, text: str) -> bytes:
    return frame(b"E", b"SERROR\0C" + sqlstate.encode() + b"\0M" + text.encode() + b"\0\0")


def param(name: str, value: str) -> bytes:
    return frame(b"S", cstr(name) + cstr(value))


class Loop:
    """Plays the event loop for one relay: answers NEED_BYTES from a script of replies."""

    def __init__(self) -> None:
        self.session = Session(None, {})  # type: ignore[arg-type] - only protocol state is used
        self.up = Upstream(None, {"application_name": ""})  # type: ignore[arg-type]
        self.up.blocking = False
        self.relay = SessionRelay(self.session, self.up)
        self.sent: list[bytes] = []
        self.requests: list[object] = []

    def feed(self, client_frame: bytes, *replies: bytes, local: object = None) -> object:
        steps = self.relay.feed(client_frame[0], client_frame)
        script = list(replies)
        answer = None
        try:
            request = steps.send(None)
            while True:
                self.requests.append(request)
                if request is NEED_BYTES:
                    if self.up.pending_writes:
                        self.sent.append(self.up.take_writes())
                    self.up.received(script.pop(0) if script else b"")
                    request = steps.send(None)
                elif isinstance(request, Spill):
                    request.chunks.clear()
                    request = steps.send(None)
                else:
                    assert isinstance(request, RunLocal)
                    request = steps.send(local)
        except StopIteration as stop:
            answer = stop.value
        assert not script, "replies left unread"
        if self.up.pending_writes:
            self.sent.append(self.up.take_writes())
        return answer

    def client_got(self) -> bytes:
        return self.session.out.take()


def test_a_simple_query_goes_up_as_its_bytes_and_its_replies_come_back_as_theirs():
    loop = Loop()
    replies = row(b"1") + complete("SELECT 1") + ready(b"I")
    assert loop.feed(query("SELECT 1"), replies[:7], replies[7:]) is True  # split mid-message
    assert loop.sent == [query("SELECT 1")]
    assert loop.client_got() == replies
    assert loop.session.tx is TxState.IDLE


def test_extended_messages_wait_for_sync_and_go_up_in_one_write():
    loop = Loop()
    for msg in (parse("INSERT INTO t VALUES (1)"), bind(), execute()):
        assert loop.feed(msg) is False
    assert loop.sent == [] and loop.requests == []
    replies = PARSE_OK + BIND_OK + complete("INSERT 0 1") + ready(b"T")
    assert loop.feed(SYNC, replies) is True
    assert loop.sent == [parse("INSERT INTO t VALUES (1)") + bind() + execute() + SYNC]
    assert loop.client_got() == replies
    assert loop.session.tx is TxState.IN_BLOCK


def test_an_upstream_error_forgets_what_the_failed_parse_would_have_created():
    loop = Loop()
    loop.feed(parse("SELEC 1", "s1"))
    loop.feed(bind("", "s1"))
    replies = error("42601", 'syntax error at or near "SELEC"') + ready(b"I")
    loop.feed(SYNC, replies)
    assert loop.client_got() == replies
    assert b"s1" not in loop.relay.state.stmts
    # the name is nobody's now: a Bind of it is the upstream's to refuse (26000)
    before = len(loop.requests)
    loop.feed(bind("", "s1"))
    assert loop.requests[before:] == [], "queued for the upstream, not the session's path"
    replies = error("26000", 'prepared statement "s1" does not exist') + ready(b"I")
    assert loop.feed(SYNC, replies) is True
    assert loop.sent[-1] == bind("", "s1") + SYNC
    assert loop.client_got() == replies
    assert not any(isinstance(r, RunLocal) for r in loop.requests)


def test_a_name_the_session_holds_stays_the_sessions():
    """A statement the full path made (pgbarrier's own) is Bound, Described and Closed
    there; a name the session does not hold goes upstream (SQL PREPARE, a cursor)."""
    loop = Loop()
    loop.session.statements["mine"] = object()  # what the full path keeps for it
    loop.feed(bind("", "mine"), local=None)
    assert isinstance(loop.requests[-1], RunLocal)
    before = len(loop.requests)
    loop.feed(bind("", "upstream_prepared"))
    assert loop.requests[before:] == []


def test_a_control_statement_is_a_request_for_the_full_path_not_a_relay():
    loop = Loop()
    assert loop.feed(query("ALTER DATABASE dev PAUSE")) is True
    (request,) = loop.requests
    assert isinstance(request, RunLocal) and request.fn == loop.session.handle
    assert loop.sent == []


def test_a_full_path_message_first_drains_the_relayed_ones_before_it():
    loop = Loop()
    loop.feed(parse("SELECT 1", "a"))
    # rw_catalog is pgbarrier's: its Parse takes the full path, after "a" has its reply
    loop.feed(parse("SELECT * FROM rw_catalog.rw_databases", "b"), PARSE_OK)
    assert loop.sent == [parse("SELECT 1", "a") + frame(b"H")]
    assert loop.requests[0] is NEED_BYTES and isinstance(loop.requests[1], RunLocal)
    assert loop.client_got() == PARSE_OK


def test_parameter_status_from_upstream_updates_what_the_client_was_told():
    loop = Loop()
    replies = param("application_name", "psql") + complete("SET") + ready(b"I")
    loop.feed(query("SET application_name = 'psql'"), replies)
    assert loop.session.reported["application_name"] == "psql"
    assert loop.up.params["application_name"] == "psql"


def test_a_query_inside_an_unfinished_batch_ends_it_without_a_second_ready():
    loop = Loop()
    loop.feed(parse("SELECT 1"))
    loop.feed(bind())
    loop.feed(execute())
    batch = PARSE_OK + BIND_OK + row(b"1") + complete("SELECT 1")
    final = complete("SELECT 1") + ready(b"I")
    loop.feed(query("SELECT 2"), batch + ready(b"I"), row(b"2") + final)
    assert loop.sent[0].endswith(SYNC) and loop.sent[1] == query("SELECT 2")
    assert loop.client_got() == batch + row(b"2") + final  # one ReadyForQuery


def test_a_large_reply_is_spilled_to_the_client_mid_reply():
    loop = Loop()
    big = row(b"x" * 100_000)
    loop.feed(query("SELECT repeat('x', 100000) FROM generate_series(1, 4)"),
              big, big, big, big + complete("SELECT 4") + ready(b"I"))
    assert any(isinstance(r, Spill) for r in loop.requests)


def test_a_lost_upstream_is_fatal_08006():
    loop = Loop()
    with pytest.raises(UpstreamLost) as info:
        loop.feed(query("SELECT 1"), row(b"1"))  # then the socket closes (b"")
    assert info.value.sqlstate == "08006"


def notice(text: str) -> bytes:
    return frame(b"N", b"SNOTICE\0C00000\0M" + text.encode() + b"\0\0")


def test_copy_from_stdin_passes_what_the_upstream_says_with_its_start_and_then_the_data():
    """A BEFORE STATEMENT trigger's notice follows CopyInResponse: it reaches the client
    with it (a direct client reads both together), then the data goes up as it came."""
    loop = Loop()
    copy_in = frame(b"G", struct.pack("!bh", 0, 1) + struct.pack("!h", 0))
    started = copy_in + notice("before statement") + param("application_name", "x")
    assert loop.feed(query("COPY t FROM STDIN"), started) is True
    assert loop.client_got() == started
    assert loop.relay.state.copy_drain is not None
    data = frame(b"d", b"1\n")
    assert loop.feed(data) is False
    done = frame(b"c")
    replies = notice("after statement") + complete("COPY 1") + ready(b"I")
    assert loop.feed(done, replies) is True
    assert loop.sent[-1] == data + done
    assert loop.client_got() == replies
    assert loop.relay.state.copy_drain is None
