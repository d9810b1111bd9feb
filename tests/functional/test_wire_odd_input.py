"""Odd input on the wire gets PostgreSQL's own answers (issue 11, item 7).

Every case sends the same raw bytes to pgbarrier on DuckDB, pgbarrier on an upstream
PostgreSQL, and the real PostgreSQL itself, and checks all three answer alike: the same
message types in the same order, the same SQLSTATEs and messages. The expected answers
are written down too, so a change in any one of them fails.
"""

from __future__ import annotations

import socket
import struct
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import psycopg
import pytest

from conftest import require_postgres, start_server, stop_server

TIMEOUT_S = 20


@dataclass
class Target:
    host: str
    port: int
    database: str
    user: str = "postgres"


@pytest.fixture(scope="module")
def duckdb_target() -> Iterator[Target]:
    srv = start_server("--barrier-interval-ms", "1000")
    yield Target(srv.host, srv.port, "dev")
    assert stop_server(srv) == 0


@pytest.fixture(scope="module")
def upstream_target() -> Iterator[Target]:
    dsn = require_postgres()
    database = f"pgb_odd_{uuid.uuid4().hex[:8]}"
    srv = start_server("--database", database, "--upstream", dsn.rsplit("/", 1)[0] + "/")
    try:
        yield Target(srv.host, srv.port, database)
    finally:
        code = stop_server(srv)
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    assert code == 0


@pytest.fixture(params=["duckdb", "upstream", "postgres"])
def target(request) -> Target:
    if request.param == "postgres":
        require_postgres()
        return Target("127.0.0.1", 5432, "postgres")
    return request.getfixturevalue(f"{request.param}_target")


# --------------------------------------------------------------------------- protocol bytes


def msg(code: bytes, body: bytes = b"") -> bytes:
    return code + struct.pack("!i", len(body) + 4) + body


def startup_packet(params: dict[bytes, bytes], protocol: int = 196608) -> bytes:
    body = struct.pack("!i", protocol) + b"".join(k + b"\0" + v + b"\0" for k, v in params.items())
    body += b"\0"
    return struct.pack("!i", len(body) + 4) + body


def parse(sql: bytes, name: bytes = b"") -> bytes:
    return msg(b"P", name + b"\0" + sql + b"\0" + struct.pack("!h", 0))


def bind(portal: bytes = b"", stmt: bytes = b"", pfmts=(), params=(), rfmts=()) -> bytes:
    body = portal + b"\0" + stmt + b"\0" + struct.pack("!h", len(pfmts))
    body += b"".join(struct.pack("!h", f) for f in pfmts)
    body += struct.pack("!h", len(params)) + b"".join(struct.pack("!i", len(p)) + p for p in params)
    body += struct.pack("!h", len(rfmts)) + b"".join(struct.pack("!h", f) for f in rfmts)
    return msg(b"B", body)


def execute(portal: bytes = b"", rows: int = 0) -> bytes:
    return msg(b"E", portal + b"\0" + struct.pack("!i", rows))


SYNC = msg(b"S")
ROWS3 = parse(b"SELECT x FROM (VALUES (1), (2), (3)) AS t(x)")


def query(sql: bytes) -> bytes:
    return msg(b"Q", sql + b"\0")


def read_messages(sock: socket.socket, until: bytes = b"Z",
                  count: int = 1) -> list[tuple[bytes, bytes]]:
    """Messages up to and including the ``count``-th of type ``until`` (or until the peer
    closes). Call it once per batch sent: bytes read past that message are dropped."""
    buf, out = b"", []
    while True:
        while len(buf) >= 5:
            (length,) = struct.unpack("!i", buf[1:5])
            if len(buf) < 1 + length:
                break
            out.append((buf[:1], buf[5:1 + length]))
            buf = buf[1 + length:]
            if out[-1][0] == until:
                count -= 1
                if not count:
                    return out
        data = sock.recv(65536)
        if not data:
            out.append((b"<closed>", b""))
            return out
        buf += data


def fields(body: bytes) -> dict[str, str]:
    return {chr(p[0]): p[1:].decode() for p in body.split(b"\0") if p}


def summary(messages: list[tuple[bytes, bytes]]) -> list[tuple[str, ...]]:
    """What must agree across servers: types, and for errors severity, SQLSTATE, message;
    ParameterStatus and BackendKeyData are left out (their values are each server's)."""
    out: list[tuple[str, ...]] = []
    for code, body in messages:
        if code in (b"S", b"K"):
            continue
        if code == b"E":
            f = fields(body)
            out.append(("E", f["S"], f["C"], f["M"]))
        elif code in (b"D", b"C", b"Z", b"v"):
            out.append((code.decode(), body.decode("latin-1")))
        else:
            out.append((code.decode("latin-1"),))
    return out


def connect(t: Target) -> socket.socket:
    sock = socket.create_connection((t.host, t.port), timeout=TIMEOUT_S)
    sock.sendall(startup_packet({b"user": t.user.encode(), b"database": t.database.encode()}))
    assert read_messages(sock)[-1] == (b"Z", b"I")
    return sock


def exchange(t: Target, data: bytes, until: bytes = b"Z") -> list[tuple[str, ...]]:
    with connect(t) as sock:
        sock.sendall(data)
        return summary(read_messages(sock, until))


def E(sqlstate: str, message: str, severity: str = "ERROR") -> tuple[str, ...]:
    return ("E", severity, sqlstate, message)


Z_IDLE = ("Z", "I")
ROWS = [("D", "\x00\x01\x00\x00\x00\x011"), ("D", "\x00\x01\x00\x00\x00\x012"),
        ("D", "\x00\x01\x00\x00\x00\x013"), ("C", "SELECT 3\x00")]

CASES = {
    "invalid UTF-8 in a Query": (
        query(b"SELECT 'a\xc3\x28'") + query(b"SELECT 1 AS x"),
        [E("22021", 'invalid byte sequence for encoding "UTF8": 0xc3 0x28'), Z_IDLE]),
    "invalid UTF-8 in a Parse": (
        parse(b"SELECT '\xff'") + SYNC,
        [E("22021", 'invalid byte sequence for encoding "UTF8": 0xff'), Z_IDLE]),
    "invalid UTF-8 in a block aborts it": (
        query(b"BEGIN") + query(b"SELECT '\xe2\x82'"),
        [("C", "BEGIN\x00"), ("Z", "T")]),
    "Bind with too many parameters": (
        parse(b"SELECT $1::int") + bind(params=(b"1", b"2")) + execute() + SYNC,
        [("1",), E("08P01", 'bind message supplies 2 parameters, but prepared statement "" '
                            "requires 1"), Z_IDLE]),
    "Bind with a parameter format code 2": (
        parse(b"SELECT $1::int") + bind(pfmts=(2,), params=(b"1",)) + execute() + SYNC,
        [("1",), E("22023", "unsupported format code: 2"), Z_IDLE]),
    "Bind with a result format code 2": (
        ROWS3 + bind(rfmts=(2,)) + execute() + SYNC,
        [("1",), ("2",), E("22023", "unsupported format code: 2"), Z_IDLE]),
    "Bind with more parameter formats than parameters": (
        parse(b"SELECT $1::int") + bind(pfmts=(0, 0, 0), params=(b"1",)) + execute() + SYNC,
        [("1",), E("08P01", "bind message has 3 parameter formats but 1 parameters"), Z_IDLE]),
    "Execute with a negative row count": (
        ROWS3 + bind() + execute(rows=-5) + SYNC,
        [("1",), ("2",), *ROWS, Z_IDLE]),
    "Copy messages outside COPY": (
        msg(b"d", b"abc") + msg(b"c") + msg(b"f", b"x\0") + ROWS3 + msg(b"d", b"x") + bind()
        + execute() + SYNC,
        [("1",), ("2",), *ROWS, Z_IDLE]),
    "re-binding an open named portal": (
        ROWS3 + bind(portal=b"p") + execute(b"p", 1) + bind(portal=b"p") + SYNC,
        [("1",), ("2",), ROWS[0], ("s",), E("42P03", 'cursor "p" already exists'), Z_IDLE]),
    "a Bind cut short is an ERROR, not FATAL": (
        parse(b"SELECT 1") + msg(b"B", b"\0\0" + struct.pack("!h", 1)) + SYNC,
        [("1",), E("08P01", "insufficient data left in message"), Z_IDLE]),
    "a Bind with bytes past its end": (
        ROWS3 + msg(b"B", b"\0\0" + struct.pack("!hhh", 0, 0, 0) + b"zz") + SYNC,
        [("1",), E("08P01", "invalid message format"), Z_IDLE]),
    "an Execute cut short": (
        ROWS3 + bind() + msg(b"E", b"\0\0") + SYNC,
        [("1",), ("2",), E("08P01", "insufficient data left in message"), Z_IDLE]),
    "a Parse whose string never ends": (
        msg(b"P", b"abc") + SYNC,
        [E("08P01", "invalid string in message"), Z_IDLE]),
    "a Close of an unknown kind": (
        msg(b"C", b"Q\0") + SYNC,
        [E("08P01", "invalid CLOSE message subtype 81"), Z_IDLE]),
    "a Describe of an unknown kind": (
        msg(b"D", b"X\0") + SYNC,
        [E("08P01", "invalid DESCRIBE message subtype 88"), Z_IDLE]),
    "a FunctionCall of a function that does not exist": (
        msg(b"F", struct.pack("!ihhh", 1, 0, 0, 0)),
        [E("42883", "function with OID 1 does not exist"), Z_IDLE]),
    "a FunctionCall cut short": (
        msg(b"F", b"\0"),
        [E("08P01", "insufficient data left in message"), Z_IDLE]),
    "a Bind of an unnamed statement that does not exist": (
        msg(b"B", b"\0\0" + struct.pack("!hhh", 0, 0, 0)) + SYNC,
        [E("26000", "unnamed prepared statement does not exist"), Z_IDLE]),
    "re-binding the unnamed portal": (
        ROWS3 + bind() + execute(b"", 1) + bind() + execute() + SYNC,
        [("1",), ("2",), ROWS[0], ("s",), ("2",), *ROWS, Z_IDLE]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_odd_message_gets_postgresqls_answer(target, case):
    data, expected = CASES[case]
    assert exchange(target, data) == expected


def test_malformed_messages_leave_the_connection_usable(target):
    with connect(target) as sock:
        sock.sendall(msg(b"B", b"\0") + SYNC)
        assert summary(read_messages(sock))[-1] == Z_IDLE
        sock.sendall(msg(b"F", b"\0"))
        assert summary(read_messages(sock))[-1] == Z_IDLE
        sock.sendall(query(b"SELECT 41 + 1"))
        got = summary(read_messages(sock))
        assert ("D", "\x00\x01\x00\x00\x00\x0242") in got and got[-1] == Z_IDLE


def test_invalid_utf8_leaves_the_connection_usable(target):
    with connect(target) as sock:
        sock.sendall(query(b"SELECT '\xff'"))
        assert summary(read_messages(sock))[0][2] == "22021"
        sock.sendall(query(b"SELECT 41 + 1"))
        got = summary(read_messages(sock))
        assert ("D", "\x00\x01\x00\x00\x00\x0242") in got and got[-1] == Z_IDLE


def test_failed_block_after_invalid_utf8(target):
    with connect(target) as sock:
        sock.sendall(query(b"BEGIN") + query(b"SELECT '\xff'"))
        assert summary(read_messages(sock, count=2))[-1] == ("Z", "E")
        sock.sendall(query(b"ROLLBACK"))
        assert summary(read_messages(sock))[-2:] == [("C", "ROLLBACK\x00"), Z_IDLE]


def test_named_portal_ends_with_its_transaction(target):
    # outside a block the Sync ends the implicit transaction and its portals
    data = ROWS3 + bind(portal=b"p") + execute(b"p", 1) + SYNC + bind(portal=b"p") + execute(b"p") \
        + SYNC
    with connect(target) as sock:
        sock.sendall(data)
        got = summary(read_messages(sock, count=2))
    assert got == [("1",), ("2",), ROWS[0], ("s",), Z_IDLE, ("2",), *ROWS, Z_IDLE]


def test_unknown_message_type_is_fatal_and_closes(target):
    assert exchange(target, msg(b"?")) == [
        E("08P01", "invalid frontend message type 63", "FATAL"), ("<closed>",)]


# --------------------------------------------------------------------------- start-up


def startup_answer(t: Target, extra: dict[bytes, bytes], protocol: int = 196608):
    params = {b"user": t.user.encode(), b"database": t.database.encode(), **extra}
    with socket.create_connection((t.host, t.port), timeout=TIMEOUT_S) as sock:
        sock.sendall(startup_packet(params, protocol))
        return summary(read_messages(sock))


def test_protocol_3_2_with_options_is_negotiated_down(target):
    got = startup_answer(target, {b"_pq_.foo": b"1"}, protocol=(3 << 16) | 2)
    nego = struct.pack("!ii", 3 << 16, 1) + b"_pq_.foo\0"
    assert got[0] == ("v", nego.decode("latin-1"))
    assert got[1] == ("R",) and got[-1] == Z_IDLE


def test_protocol_3_1_is_negotiated_down(target):
    got = startup_answer(target, {}, protocol=(3 << 16) | 1)
    assert got[0] == ("v", struct.pack("!ii", 3 << 16, 0).decode("latin-1"))
    assert got[-1] == Z_IDLE


def test_protocol_4_is_refused(target):
    assert startup_answer(target, {}, protocol=4 << 16) == [
        E("0A000", "unsupported frontend protocol 4.0: server supports 3.0 to 3.0", "FATAL"),
        ("<closed>",)]


def test_unknown_startup_parameter_is_fatal_42704(target):
    assert startup_answer(target, {b"no_such_setting": b"1"}) == [
        ("R",), E("42704", 'unrecognized configuration parameter "no_such_setting"', "FATAL"),
        ("<closed>",)]


@pytest.mark.parametrize("name", [b"DateStyle", b"search_path", b"work_mem", b"myext.option"])
def test_known_or_custom_startup_parameters_are_accepted(target, name):
    value = b"ISO, MDY" if name == b"DateStyle" else b"public" if name == b"search_path" \
        else b"4MB" if name == b"work_mem" else b"1"
    assert startup_answer(target, {name: value})[-1] == Z_IDLE
