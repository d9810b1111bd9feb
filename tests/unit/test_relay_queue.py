"""The relay's queued messages (``RelayState.queue`` and ``fast_batch``, relay/state.py), fed
bytes: one message at a time (``queue``) and a whole client read at once (``batch``), in the
Python source and in the compiled extension. A whole read leaves the relay as feeding its
messages one by one does."""

from __future__ import annotations

import importlib
import random
import struct

import pytest

from pgbarrier import accel
from pgbarrier.backends.pg_relay import Upstream, frame
from pgbarrier.session.relay import SessionRelay
from pgbarrier.session.session import Session


class Implementation:
    """One build of pgbarrier.relay.state: its RelayState, queue and batch."""

    def __init__(self, module: object) -> None:
        self.module = module
        self.__name__ = module.__name__

    def batch(self, relay: SessionRelay, data: bytes, limit: int) -> int:
        return relay.state.fast_batch(relay.session, relay, relay.up, data, limit)

    def queue(self, relay: SessionRelay, code: int, frame: bytes) -> bool:
        return relay.state.queue(relay.session, code, frame)


IMPLEMENTATIONS = [Implementation(importlib.import_module("pgbarrier.relay.state"))]
# the compiled build's fast_batch takes the compiled UpstreamCore only (Upstream's base
# class as accel picked it): under PGBARRIER_PURE_PYTHON=1 the source alone runs here
if accel.COMPILED["pgbarrier.relay.state"]:
    IMPLEMENTATIONS.append(Implementation(importlib.import_module("pgbarrier.relay._state_c")))

LIMIT = 1 << 20


@pytest.fixture(params=IMPLEMENTATIONS, ids=lambda m: m.__name__.rsplit(".", 1)[1])
def q(request):
    return request.param


def cstr(s: str | bytes) -> bytes:
    return (s.encode() if isinstance(s, str) else s) + b"\0"


def parse(sql: str, name: str = "") -> bytes:
    return frame(b"P", cstr(name) + cstr(sql) + struct.pack("!h", 0))


def bind(portal: str = "", stmt: str = "", *params: bytes) -> bytes:
    body = cstr(portal) + cstr(stmt) + struct.pack("!hh", 0, len(params))
    for p in params:
        body += struct.pack("!i", len(p)) + p
    return frame(b"B", body + struct.pack("!h", 0))


def describe(kind: bytes, name: str = "") -> bytes:
    return frame(b"D", kind + cstr(name))


def close(kind: bytes, name: str = "") -> bytes:
    return frame(b"C", kind + cstr(name))


def execute(portal: str = "") -> bytes:
    return frame(b"E", cstr(portal) + struct.pack("!i", 0))


SYNC = frame(b"S")


def new_relay(q: Implementation) -> SessionRelay:
    session = Session(None, {})  # type: ignore[arg-type] - only protocol state is used
    up = Upstream(None, {"client_encoding": "UTF8"})  # type: ignore[arg-type]
    up.blocking = False
    up.state = q.module.RelayState()  # type: ignore[attr-defined]
    relay = SessionRelay(session, up)
    relay.state.verdicts[b"SELECT 1"] = (True, "SELECT 1")
    relay.state.verdicts[b"SELECT * FROM rw_catalog.rw_databases"] = (
        False, "SELECT * FROM rw_catalog.rw_databases")
    relay.state.stmts[b"up"] = "SELECT $1::int"
    return relay


def state(relay: SessionRelay) -> tuple:
    s, up, st = relay.session, relay.up, relay.state
    return (dict(st.stmts), dict(st.portals), b"".join(st.wbuf), list(st.expect),
            up.state.in_batch, sorted(s.statements), sorted(s.portals), s.skip_until_sync)


def test_a_prepared_statement_batch_is_taken_whole(q):
    relay = new_relay(q)
    data = bind("", "up", b"42") + describe(b"P") + execute() + SYNC
    assert q.batch(relay, data, LIMIT) == len(data)
    assert relay.state.wbuf == []  # the caller writes ``data`` itself
    assert [e[0] for e in relay.state.expect] == list(b"BDE")
    assert relay.state.portals == {b"": "SELECT $1::int"}
    up = relay.up
    assert up.state.open_upstream() and up.state.busy and up.state.in_batch and up.state.done == 0 and up.state.failed_at is None


def test_a_parse_of_a_relayed_text_is_taken_and_names_its_statement(q):
    relay = new_relay(q)
    data = parse("SELECT 1", "s1") + bind("p", "s1") + execute("p") + close(b"S", "s1") + SYNC
    assert q.batch(relay, data, LIMIT) == len(data)
    assert relay.state.stmts.get(b"s1") is None  # closed at the end of the batch
    assert relay.state.portals == {b"p": "SELECT 1"}


@pytest.mark.parametrize("data", [
    SYNC,  # a lone Sync: the full path answers it
    bind("", "up") + execute(),  # no Sync yet
    bind("", "up") + execute() + SYNC + SYNC,  # two batches in one read
    bind("", "up") + frame(b"H") + SYNC,  # a Flush inside
    (bind("", "up") + execute() + SYNC)[:-2],  # a partial message
    bind("", "up") + frame(b"E")[:1] + b"\0\0\0\2" + SYNC,  # a length below 4
    frame(b"Q", cstr("SELECT 1")) + SYNC,  # a Query with more behind it
    frame(b"X"),  # Terminate
])
def test_other_reads_are_declined_and_change_nothing(q, data):
    relay = new_relay(q)
    before = state(relay)
    assert q.batch(relay, data, LIMIT) == -1
    assert state(relay) == before
    assert not relay.up.state.busy


def test_a_message_longer_than_the_limit_is_declined_for_the_framer_to_refuse(q):
    relay = new_relay(q)
    data = bind("", "up", b"x" * 100) + SYNC
    assert q.batch(relay, data, 50) == -1


def test_the_first_message_the_steps_must_take_ends_the_batch_there(q):
    relay = new_relay(q)
    head = parse("SELECT 1", "a") + bind("pa", "a")
    data = head + parse("SELECT * FROM rw_catalog.rw_databases", "b") + execute("pa") + SYNC
    assert q.batch(relay, data, LIMIT) == len(head)
    assert b"".join(relay.state.wbuf) == head  # queued for the steps' Sync
    assert [e[0] for e in relay.state.expect] == list(b"PB")
    assert relay.up.state.in_batch and not relay.up.state.busy


def test_a_relay_mid_batch_or_skipping_declines(q):
    relay = new_relay(q)
    relay.session.skip_until_sync = True
    assert q.batch(relay, bind("", "up") + SYNC, LIMIT) == -1
    relay = new_relay(q)
    relay.up.state.sent()
    assert q.batch(relay, bind("", "up") + SYNC, LIMIT) == -1


def test_a_name_the_full_path_holds_is_not_queued(q):
    relay = new_relay(q)
    relay.session.statements["mine"] = object()
    relay.session.portals["cur"] = object()
    assert not q.queue(relay, ord("B"), bind("", "mine"))
    assert not q.queue(relay, ord("E"), execute("cur"))
    assert not q.queue(relay, ord("D"), describe(b"S", "mine"))
    assert not q.queue(relay, ord("P"), parse("SELECT 1", "mine"))  # 42P05 is the session's
    assert relay.state.expect == [] and not relay.up.state.in_batch
    assert q.queue(relay, ord("B"), bind("cur", "up"))  # replaces the session's portal
    assert "cur" not in relay.session.portals


def test_malformed_messages_are_left_to_the_decoder(q):
    relay = new_relay(q)
    for code, bad in [(ord("B"), frame(b"B", b"no-nul")), (ord("E"), frame(b"E", b"x")),
                      (ord("D"), frame(b"D", b"X" + cstr("n"))), (ord("C"), frame(b"C", b"S")),
                      (ord("D"), frame(b"D", b"Sa\0b\0")), (ord("P"), frame(b"P", b"n\0q"))]:
        assert not q.queue(relay, code, bad), bad
    assert relay.state.expect == []


def test_after_an_error_messages_up_to_sync_are_skipped_not_queued(q):
    relay = new_relay(q)
    relay.session.skip_until_sync = True
    assert q.queue(relay, ord("B"), bind("p", "up"))
    assert relay.state.wbuf == [] and relay.state.expect == [] and relay.state.portals == {}
    assert relay.up.state.in_batch


# ---------------------------------------------------------------- one read = one by one

_NAMES = ["", "up", "s1", "mine", "cur"]
_TEXTS = ["SELECT 1", "SELECT * FROM rw_catalog.rw_databases", "SELECT 2"]


def _random_message(rng: random.Random) -> bytes:
    kind = rng.choice("PBDECS")
    name = rng.choice(_NAMES)
    if kind == "P":
        return parse(rng.choice(_TEXTS), name)
    if kind == "B":
        return bind(rng.choice(_NAMES), name, *[b"1"] * rng.randint(0, 2))
    if kind == "D":
        return describe(rng.choice([b"S", b"P"]), name)
    if kind == "C":
        return close(rng.choice([b"S", b"P"]), name)
    if kind == "E":
        return execute(name)
    return SYNC


def _random_relay(rng: random.Random, q: Implementation) -> SessionRelay:
    relay = new_relay(q)
    for name in rng.sample(_NAMES, 2):
        relay.state.stmts[name.encode()] = "SELECT 1"
    for name in rng.sample(_NAMES, 2):
        relay.state.portals[name.encode()] = "SELECT 1"
    if rng.random() < 0.3:
        relay.session.statements["mine"] = object()
    if rng.random() < 0.3:
        relay.session.portals["cur"] = object()
    return relay


def test_a_whole_read_leaves_the_relay_as_its_messages_one_by_one_do():
    rng = random.Random(13)
    for case in range(3000):
        seed = rng.random()
        messages = [_random_message(rng) for _ in range(rng.randint(1, 6))]
        data = b"".join(messages)
        outcomes = []
        for q in IMPLEMENTATIONS:
            relay = _random_relay(random.Random(seed), q)
            whole = _random_relay(random.Random(seed), q)
            taken = q.batch(whole, data, LIMIT)
            one = _random_relay(random.Random(seed), q)
            if taken < 0:
                assert state(whole) == state(relay), (case, messages)
                outcomes.append((taken, state(whole)))
                continue
            queued = 0
            for i, msg in enumerate(messages):
                if msg == SYNC and i == len(messages) - 1:
                    queued = len(data)  # every message before the final Sync queued
                    break
                if not q.queue(one, msg[0], msg):
                    break
                queued += len(msg)
            if taken == len(data):
                one.state.wbuf.clear()  # batch leaves the bytes to its caller
            assert taken == queued, (case, messages)
            assert state(whole) == state(one), (case, messages)
            outcomes.append((taken, state(whole)))
        assert all(o == outcomes[0] for o in outcomes), (case, messages)


#: pieces of statement texts: route's words in every case, words that only contain them,
#: ordinary SQL, non-ASCII text
_TEXT_PIECES = ["SELECT", "select", "aid", " ", " = ", "1", ";", "'x'", "FROM t", "offset",
                "Set", "set", "RESET", "show", "ShOw", "alter", "ALTER DATABASE d PAUSE",
                "create", "Drop", "flush", "FLUSH", "refresh", "copy", "stdin", "COPY t FROM STDIN",
                "rw_catalog", "RW_CATALOG.rw_databases", "insert", "update", "-- c\n", "/* s */",
                "é", "\u00dfet", "\u0131", "\u017fet", "SEt", "s\u0435t"]


def _random_text(rng: random.Random) -> str:
    return "".join(rng.choice(_TEXT_PIECES) for _ in range(rng.randint(1, 8)))


@pytest.mark.parametrize("encoding", ["UTF8", "LATIN1"])
def test_a_text_is_relayed_from_its_bytes_only_as_route_decides(q, encoding):
    """A Query's and a Parse's text that is not remembered yet: read from its bytes (ASCII
    without route's words: relayed at once) or decided by route. A Query is taken exactly
    when route says relayable; a Parse only when route says relayable_parse, and always
    when its text is ASCII without route's words (the steps decide the rest)."""
    from pgbarrier.sql.route import MAY_BE_OURS_ASCII, route

    rng = random.Random(27)
    for case in range(2000):
        text = _random_text(rng)
        raw = text.encode("utf-8" if encoding == "UTF8" else "latin-1", "replace")
        sql = raw.decode("utf-8" if encoding == "UTF8" else "latin-1")
        verdict = route(sql)
        plain = raw.isascii() and not any(w in raw.upper() for w in MAY_BE_OURS_ASCII)
        relay = new_relay(q)
        relay.up.params["client_encoding"] = encoding
        query = frame(b"Q", cstr(raw))
        taken = q.batch(relay, query, LIMIT)
        assert (taken == len(query)) == verdict.relayable, (case, text)
        relay = new_relay(q)
        relay.up.params["client_encoding"] = encoding
        data = frame(b"P", cstr(b"") + cstr(raw) + struct.pack("!h", 0)) + bind() + execute() \
            + SYNC
        taken = q.batch(relay, data, LIMIT)
        assert taken in (0, len(data)), (case, text)
        if taken:
            assert verdict.relayable_parse, (case, text)
            assert relay.state.portals == {b"": sql}, (case, text)
        if plain:
            assert verdict.relayable_parse and taken == len(data), (case, text)


def test_the_upstreams_phase_moves_only_by_its_transitions(q):
    """``RelayState.phase`` is the upstream's batch, one :class:`Phase` at a time:
    PostgreSQL's own states of a backend in the extended protocol."""
    from pgbarrier.relay.state import Phase

    state = q.module.RelayState()
    assert state.phase == Phase.IDLE and not state.open_upstream() and not state.skipping()
    state.sent(synced=True)  # a message with its own Sync leaves nothing open
    assert state.phase == Phase.IDLE
    state.sent()
    assert state.phase == Phase.OPEN and state.open_upstream() and not state.skipping()
    state.failed()
    assert state.phase == Phase.SKIPPING and state.open_upstream() and state.skipping()
    state.sent(synced=True)  # skipping lasts until its ReadyForQuery
    assert state.phase == Phase.SKIPPING
    state.ready(ord("E"))
    assert state.phase == Phase.IDLE and state.status == ord("E")
    state.batch_sent()
    assert state.phase == Phase.OPEN and state.in_batch
    state.ready(ord("I"))
    assert Phase(state.phase) is Phase.IDLE
