"""Bad input on the wire: 08P01 for the offending connection only; cancel by backend key.

Raw sockets speak the protocol here so the tests can send what no driver would.
"""

from __future__ import annotations

import socket
import struct

import psycopg
import pytest

from psycopg import errors as pgerr

from conftest import run_in_background


def _startup(sock: socket.socket, user: str = "root", database: str = "dev") -> bytes:
    body = struct.pack("!i", 196608) + b"user\x00" + user.encode() + b"\x00database\x00" \
        + database.encode() + b"\x00\x00"
    sock.sendall(struct.pack("!i", len(body) + 4) + body)
    return _read_until(sock, b"Z")


def _read_all(sock: socket.socket) -> bytes:
    chunks = []
    while True:
        data = sock.recv(65536)
        if not data:
            return b"".join(chunks)
        chunks.append(data)


def _read_until(sock: socket.socket, code: bytes) -> bytes:
    """Read messages until one of type ``code`` has arrived whole."""
    buf = b""
    while True:
        pos = 0
        while pos + 5 <= len(buf):
            (length,) = struct.unpack("!i", buf[pos + 1:pos + 5])
            if pos + 1 + length > len(buf):
                break
            if buf[pos:pos + 1] == code:
                return buf[:pos + 1 + length]
            pos += 1 + length
        data = sock.recv(65536)
        if not data:
            return buf
        buf += data


def _messages(data: bytes) -> list[tuple[bytes, bytes]]:
    out, pos = [], 0
    while pos + 5 <= len(data):
        (length,) = struct.unpack("!i", data[pos + 1:pos + 5])
        out.append((data[pos:pos + 1], data[pos + 5:pos + 1 + length]))
        pos += 1 + length
    return out


def _fields(payload: bytes) -> dict[str, str]:
    return {chr(p[0]): p[1:].decode() for p in payload.split(b"\x00") if p}


def _connect(server) -> socket.socket:
    sock = socket.create_connection((server.host, server.port), timeout=30)
    assert _startup(sock).endswith(b"Z\x00\x00\x00\x05I")
    return sock


@pytest.mark.parametrize("bad", [
    b"?" + struct.pack("!i", 4),                       # unknown message type
    b"Q" + struct.pack("!i", 100 * 1024 * 1024),       # longer than the maximum
    b"Q" + struct.pack("!i", 2),                       # shorter than its own length word
])
def test_malformed_message_gets_08P01_and_only_that_connection_closes(server, bad):
    with psycopg.connect(server.dsn(), autocommit=True) as bystander:
        sock = _connect(server)
        sock.sendall(bad)
        reply = _messages(_read_all(sock))
        sock.close()
        assert reply and reply[-1][0] == b"E"
        fields = _fields(reply[-1][1])
        assert fields["C"] == "08P01" and fields["S"] == "FATAL"
        assert bystander.execute("SELECT 1").fetchone() == (1,), "other sessions go on"
    with psycopg.connect(server.dsn()) as fresh:
        assert fresh.execute("SELECT 2").fetchone() == (2,), "the server goes on"


@pytest.mark.parametrize("bad", [
    b"P" + struct.pack("!i", 9) + b"nonul",            # a string without its terminator
    b"D" + struct.pack("!i", 6) + b"X\x00",            # Describe of neither S nor P
])
def test_malformed_body_is_an_error_and_the_connection_stays(server, bad):
    # PostgreSQL's answer: ERROR 08P01, then everything up to Sync is skipped
    sock = _connect(server)
    sock.sendall(bad + b"S" + struct.pack("!i", 4))
    reply = _messages(_read_until(sock, b"Z"))
    errors = [_fields(body) for code, body in reply if code == b"E"]
    assert [(e["S"], e["C"]) for e in errors] == [("ERROR", "08P01")]
    sock.sendall(b"Q" + struct.pack("!i", 13) + b"SELECT 5\x00")
    reply = _messages(_read_until(sock, b"Z"))
    sock.close()
    assert (b"D", b"\x00\x01\x00\x00\x00\x015") in reply, "the connection goes on"


def test_truncated_message_then_hang_up_leaves_the_server_serving(server):
    sock = _connect(server)
    sock.sendall(b"Q" + struct.pack("!i", 50) + b"SELECT")  # promised 46 bytes, sent 6
    sock.close()
    with psycopg.connect(server.dsn()) as fresh:
        assert fresh.execute("SELECT 3").fetchone() == (3,)


def test_cancel_request_with_the_right_key_cancels_only_that_statement(server):
    with psycopg.connect(server.dsn(), autocommit=True) as busy, \
            psycopg.connect(server.dsn(), autocommit=True) as other:
        query = run_in_background(busy, "SELECT count(*) FROM range(100000000000) a")
        done, outcome = query.done, query.outcome
        # wrong key first: must do nothing
        info = busy.info
        with socket.create_connection((server.host, server.port), timeout=30) as s:
            s.sendall(struct.pack("!iiII", 16, 80877102, info.backend_pid, 12345))
        assert not done.wait(0.2)
        query.cancel_until_done(busy)
        assert len(outcome) == 1 and isinstance(outcome[0], pgerr.QueryCanceled), outcome
        assert other.execute("SELECT 4").fetchone() == (4,)
        assert busy.execute("SELECT 5").fetchone() == (5,), "the cancelled session goes on"


def test_max_message_bytes_is_configurable():
    from conftest import start_server, stop_server

    srv = start_server("--max-message-bytes", "1024")
    try:
        with psycopg.connect(srv.dsn(), autocommit=True) as c:
            assert c.execute("SELECT %s::TEXT", ["x" * 500]).fetchone() == ("x" * 500,)
            with pytest.raises(psycopg.OperationalError) as info:
                c.execute("SELECT %s::TEXT", ["x" * 2000])
            assert "invalid message length" in str(info.value)
        with psycopg.connect(srv.dsn()) as fresh:
            assert fresh.execute("SELECT 1").fetchone() == (1,)
    finally:
        assert stop_server(srv) == 0


def test_hanging_up_mid_query_cancels_the_statement(server):
    sock = _connect(server)
    sql = b"SELECT count(*) FROM range(100000000000) a\x00"
    sock.sendall(b"Q" + struct.pack("!i", len(sql) + 4) + sql)
    sock.close()
    assert server.wait_for_log("client hung up during a statement; cancelling it"), \
        "".join(server.log[-20:])
    with psycopg.connect(server.dsn()) as fresh:
        assert fresh.execute("SELECT 6").fetchone() == (6,)
