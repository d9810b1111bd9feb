"""Results stream on DuckDB (issue 11, item 6): rows go out as they are produced.

The server runs in its own process (conftest's ``server``); its memory is read from
``/proc/<pid>/status``. Raw sockets speak the protocol where a test must control
when the client reads (not at all, slowly) or see the bytes as they come; asyncpg
drives a real portal with a row limit.
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time

import fcntl
import termios

import asyncpg
import psycopg
import pytest

N_ROWS = 5_000_000
BIG = f"SELECT range, range::text FROM range({N_ROWS})"
#: the old code (every DataRow built before any was written) grew by over 1 GB here
RSS_BOUND_MB = 300


# ---------------------------------------------------------------- raw protocol helpers

class Client:
    """A raw-protocol connection: start-up done, its backend key kept."""

    def __init__(self, server, database: str = "dev") -> None:
        self.sock = socket.create_connection((server.host, server.port), timeout=60)
        body = struct.pack("!i", 196608) + b"user\x00root\x00database\x00" \
            + database.encode() + b"\x00\x00"
        self.sock.sendall(struct.pack("!i", len(body) + 4) + body)
        self.reader = Reader(self.sock)
        self.key: tuple[int, int] | None = None
        for code, payload in self.reader.messages():
            if code == b"K":
                self.key = struct.unpack("!ii", payload)
            if code == b"Z":
                break

    def query(self, sql: str) -> None:
        body = sql.encode() + b"\x00"
        self.sock.sendall(b"Q" + struct.pack("!i", len(body) + 4) + body)

    def close(self) -> None:
        self.sock.close()


class Reader:
    """Backend messages from a socket, ``chunk`` bytes per recv."""

    def __init__(self, sock: socket.socket, chunk: int = 65536) -> None:
        self.sock = sock
        self.chunk = chunk
        self.buf = b""

    def messages(self):
        buf = self.buf
        pos = 0
        while True:
            while len(buf) - pos >= 5:
                (length,) = struct.unpack_from("!i", buf, pos + 1)
                end = pos + 1 + length
                if end > len(buf):
                    break
                code = buf[pos:pos + 1]
                payload = buf[pos + 5:end] if code != b"D" else b""
                pos = end
                self.buf = buf[pos:]
                yield code, payload
                buf, pos = self.buf, 0
            data = self.sock.recv(self.chunk)
            if not data:
                raise ConnectionError("server closed the connection")
            buf = buf[pos:] + data
            pos = 0
            self.buf = buf

    def until_ready(self, on_message=None) -> dict[str, object]:
        """Read up to ReadyForQuery: the DataRow count, tags, errors and the status byte."""
        out: dict[str, object] = {"rows": 0, "tags": [], "errors": []}
        rows = 0
        for code, payload in self.messages():
            if on_message is not None:
                on_message(code)
            if code == b"D":
                rows += 1
            elif code == b"C":
                out["tags"].append(payload.rstrip(b"\x00").decode())  # type: ignore[union-attr]
                out.setdefault("rows_at", []).append(rows)  # type: ignore[union-attr]
            elif code == b"E":
                fields = {chr(p[0]): p[1:].decode() for p in payload.split(b"\x00") if p}
                out["errors"].append(fields)  # type: ignore[union-attr]
                out["rows_before_error"] = rows
            elif code == b"Z":
                out["rows"] = rows
                out["status"] = payload.decode()
                return out


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _unread(sock: socket.socket) -> int:
    """Bytes waiting in the client's receive queue (sent by the server, not read)."""
    return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0" * 4))[0]


def _settled_rss(pid: int, sock: socket.socket, limit_mb: float, timeout_s: float = 90.0
                 ) -> float:
    """Poll until the server stopped: its RSS steady and the client's unread bytes
    steady (and not zero: it wrote, then the socket filled). Returns the last RSS, early
    once it passes ``limit_mb``, or when the time is up."""
    tick = threading.Event()
    deadline = time.monotonic() + timeout_s
    samples: list[tuple[float, int]] = []
    while time.monotonic() < deadline:
        rss = _rss_mb(pid)
        samples.append((rss, _unread(sock)))
        if rss > limit_mb:
            return rss
        last = samples[-5:]
        if len(last) == 5 and max(r for r, _ in last) - min(r for r, _ in last) < 2 and \
                len({u for _, u in last}) == 1 and last[0][1] > 0:
            return rss
        tick.wait(0.2)  # a polling interval, not a synchronisation
    return samples[-1][0]


# ---------------------------------------------------------------- tests

def test_a_client_that_does_not_read_does_not_grow_the_server(server):
    pid = server.proc.pid
    client = Client(server)
    client.query("SELECT range, range::text FROM range(100000)")  # warm the code path
    client.reader.until_ready()
    before = _rss_mb(pid)
    try:
        client.query(BIG)
        after = _settled_rss(pid, client.sock, before + RSS_BOUND_MB)
        assert after - before < RSS_BOUND_MB, (before, after)
        assert 0 < _unread(client.sock) < 64 * 1024 * 1024  # it stopped at the socket
    finally:
        client.close()
    # the server goes on: the hung-up client's statement ends, other clients are served
    with psycopg.connect(server.dsn(), autocommit=True) as conn:
        assert conn.execute("SELECT 42").fetchone() == (42,)


def test_a_client_that_hangs_up_mid_stream_ends_its_session(server):
    """The server blocked on a full socket notices the hang-up (its write fails) and ends
    the session: DROP DATABASE, which waits for the sessions of a database to end, works."""
    with psycopg.connect(server.dsn(), autocommit=True) as conn:
        conn.execute("CREATE DATABASE stream_hangup")
        client = Client(server, "stream_hangup")
        client.query(BIG)
        _settled_rss(server.proc.pid, client.sock, float("inf"), timeout_s=30)
        assert _unread(client.sock) > 0  # the server wrote, and waits for the client
        client.close()
        conn.execute("DROP DATABASE stream_hangup")
    assert not [line for line in server.log if "Traceback" in line or "unexpected" in line]


def test_a_slow_reader_gets_every_row_and_the_count(server):
    pid = server.proc.pid
    client = Client(server)
    before = _rss_mb(pid)
    peak = [before]
    seen = [0]

    def sample(code: bytes) -> None:
        seen[0] += 1
        if seen[0] % 500_000 == 0:
            peak[0] = max(peak[0], _rss_mb(pid))

    try:
        client.reader.chunk = 4096
        client.query(BIG)
        out = client.reader.until_ready(sample)
    finally:
        client.close()
    assert out["errors"] == []
    assert out["rows"] == N_ROWS
    assert out["tags"] == [f"SELECT {N_ROWS}"]
    assert peak[0] - before < RSS_BOUND_MB, (before, peak[0])


def test_the_first_row_arrives_while_the_query_still_runs(server):
    """The first DataRow is read, then the statement is cancelled: it was still running
    (had every row been built first, the cancel would find nothing and the count would
    be complete)."""
    client = Client(server)
    reader = client.reader
    try:
        client.query(f"SELECT range, repeat('x', 100) FROM range({N_ROWS * 4})")
        for code, _ in reader.messages():
            if code == b"D":
                break
        assert client.key is not None
        cancel = socket.create_connection((server.host, server.port), timeout=30)
        cancel.sendall(struct.pack("!iiii", 16, 80877102, *client.key))
        assert cancel.recv(1) == b""  # the server closes it once the cancel is delivered
        cancel.close()
        out = reader.until_ready()
    finally:
        client.close()
    assert out["tags"] == []
    assert [e["C"] for e in out["errors"]] == ["57014"]
    assert out["errors"][0]["M"] == "canceling statement due to user request"
    assert 0 < out["rows"] < N_ROWS * 4


def test_an_error_in_the_middle_of_the_stream_follows_the_rows_sent(server):
    client = Client(server)
    reader = client.reader
    bad = ("SELECT (CASE WHEN range < 1000000 THEN range::text ELSE 'x' END)::int "
           "FROM range(2000000)")
    try:
        client.query(bad)
        out = reader.until_ready()
        assert [e["C"] for e in out["errors"]] == ["22P02"]
        assert out["tags"] == []
        assert 0 < out["rows_before_error"] <= 1_000_000
        assert out["status"] == "I"
        # inside a block, the error fails it, as any statement's error does
        client.query("BEGIN; " + bad)
        out = reader.until_ready()
        assert [e["C"] for e in out["errors"]] == ["22P02"]
        assert out["status"] == "E"
        client.query("SELECT 1")
        assert [e["C"] for e in reader.until_ready()["errors"]] == ["25P02"]
        client.query("ROLLBACK")
        assert reader.until_ready()["status"] == "I"
        client.query("SELECT count(*) FROM range(10)")
        out = reader.until_ready()
        assert out["tags"] == ["SELECT 1"] and out["rows"] == 1
    finally:
        client.close()


def test_statement_timeout_stops_a_stream_the_client_is_slow_to_read(server):
    client = Client(server)
    reader = client.reader
    try:
        client.query("SET statement_timeout = '200ms'")
        reader.until_ready()
        client.query(BIG)
        reader.chunk = 4096
        out = reader.until_ready()
        assert out["tags"] == []
        assert [(e["C"], e["M"]) for e in out["errors"]] == [
            ("57014", "canceling statement due to statement timeout")]
        assert 0 < out["rows"] < N_ROWS
        client.query("RESET statement_timeout; SELECT 7")
        assert reader.until_ready()["tags"][-1] == "SELECT 1"
    finally:
        client.close()


def test_a_second_statement_while_a_portal_is_suspended(server):
    """asyncpg's cursor is a portal fetched with Execute's row limit; other statements
    run on the same connection between its fetches, and the portal resumes."""
    import asyncio

    async def go() -> None:
        conn = await asyncpg.connect(host=server.host, port=server.port, user="root",
                                     database="dev")
        try:
            await conn.execute("CREATE TABLE IF NOT EXISTS stream_t (i int)")
            async with conn.transaction():
                cur = await conn.cursor("SELECT range AS i FROM range(100000)")
                first = await cur.fetch(10)
                assert [r["i"] for r in first] == list(range(10))
                assert await conn.fetchval("SELECT 42") == 42
                await conn.execute("INSERT INTO stream_t VALUES (1), (2)")
                middle = await cur.fetch(5)
                assert [r["i"] for r in middle] == list(range(10, 15))
                other = await conn.cursor("SELECT range AS i FROM range(1000, 2000)")
                assert [r["i"] for r in await other.fetch(3)] == [1000, 1001, 1002]
                rest = await cur.fetch(200000)
                assert [r["i"] for r in rest] == list(range(15, 100000))
                assert [r["i"] for r in await other.fetch(2000)] == list(range(1003, 2000))
            assert await conn.fetchval("SELECT count(*) FROM stream_t") == 2
        finally:
            await conn.execute("DROP TABLE IF EXISTS stream_t")
            await conn.close()

    asyncio.run(go())


def test_dml_returning_streams_with_its_count(server):
    with psycopg.connect(server.dsn(), autocommit=True) as conn:
        conn.execute("CREATE OR REPLACE TABLE stream_r (i int)")
        cur = conn.execute("INSERT INTO stream_r SELECT range FROM range(5000) RETURNING i")
        assert sorted(r[0] for r in cur.fetchall()) == list(range(5000))
        assert cur.statusmessage == "INSERT 0 5000"
        cur = conn.execute("DELETE FROM stream_r WHERE i < 10 RETURNING i")
        assert len(cur.fetchall()) == 10 and cur.statusmessage == "DELETE 10"
        conn.execute("DROP TABLE stream_r")


def _msg(code: bytes, body: bytes) -> bytes:
    return code + struct.pack("!i", len(body) + 4) + body


def _execute(portal: bytes, max_rows: int) -> bytes:
    return _msg(b"E", portal + b"\x00" + struct.pack("!i", max_rows))


def test_a_cancel_while_a_portal_is_suspended_is_not_for_its_next_execute(server):
    """PostgreSQL ignores a CancelRequest when nothing runs; the suspended portal's next
    Execute sends the rest of its rows."""
    client = Client(server)
    reader = client.reader
    sync = _msg(b"S", b"")
    try:
        client.sock.sendall(
            _msg(b"Q", b"BEGIN\x00")
            + _msg(b"P", b"s\x00SELECT range FROM range(100000)\x00" + struct.pack("!h", 0))
            + _msg(b"B", b"p\x00s\x00" + struct.pack("!hhh", 0, 0, 0))
            + _execute(b"p", 10) + sync)
        assert reader.until_ready()["status"] == "T"
        first = reader.until_ready()
        assert first["rows"] == 10 and first["tags"] == [] and first["errors"] == []
        assert client.key is not None
        cancel = socket.create_connection((server.host, server.port), timeout=30)
        cancel.sendall(struct.pack("!iiii", 16, 80877102, *client.key))
        assert cancel.recv(1) == b""  # delivered: the server closed the cancel connection
        cancel.close()
        client.sock.sendall(_execute(b"p", 0) + sync)
        rest = reader.until_ready()
        assert rest["errors"] == []
        assert rest["rows"] == 100000 - 10 and rest["tags"] == ["SELECT 100000"]
        client.query("COMMIT")
        assert reader.until_ready()["status"] == "I"
    finally:
        client.close()


def test_a_portal_parked_by_another_statement_fails_at_its_own_execute(server):
    """Another statement reads a suspended portal's rest into memory first; when that rest
    fails, the other statement still runs, and the portal's next Execute sends the rows
    DuckDB gave before the failure, then the error (one Sync: PostgreSQL's order)."""
    client = Client(server)
    reader = client.reader
    bad = (b"SELECT (CASE WHEN range < 300000 THEN range::text ELSE 'x' END)::int AS v "
           b"FROM range(500000)")
    seen: list[bytes] = []
    try:
        client.sock.sendall(
            _msg(b"P", b"s\x00" + bad + b"\x00" + struct.pack("!h", 0))
            + _msg(b"B", b"p\x00s\x00" + struct.pack("!hhh", 0, 0, 0))
            + _execute(b"p", 10)
            + _msg(b"P", b"\x00SELECT 42\x00" + struct.pack("!h", 0))
            + _msg(b"B", b"\x00\x00" + struct.pack("!hhh", 0, 0, 0))
            + _execute(b"", 0)
            + _execute(b"p", 0) + _msg(b"S", b""))
        out = reader.until_ready(lambda code: seen.append(code) if code != b"D" else None)
        assert seen == [b"1", b"2", b"s", b"1", b"2", b"C", b"E", b"Z"], seen
        assert out["tags"] == ["SELECT 1"] and out["rows_at"] == [11]
        assert [e["C"] for e in out["errors"]] == ["22P02"]
        assert 11 < out["rows_before_error"] <= 300000 + 1
        assert out["status"] == "I"
    finally:
        client.close()


def test_a_portal_read_ahead_fails_at_the_execute_that_reaches_the_bad_row(server):
    """An Execute with a row limit reads the next rows ahead once its own are written
    (``BatchStream.read_ahead``): an error met there is not this Execute's (it sends its
    rows and PortalSuspended) but the Execute's whose rows reach it, as in PostgreSQL.
    Every Execute before the error sends exactly its limit; the error comes after the rows
    DuckDB gave before it, then the portal is gone."""
    client = Client(server)
    reader = client.reader
    sync = _msg(b"S", b"")
    bad = (b"SELECT (CASE WHEN range < 250000 THEN range::text ELSE 'x' END)::int AS v "
           b"FROM range(400000)")
    limit = 7000
    try:
        client.sock.sendall(
            _msg(b"Q", b"BEGIN\x00")
            + _msg(b"P", b"s\x00" + bad + b"\x00" + struct.pack("!h", 0))
            + _msg(b"B", b"p\x00s\x00" + struct.pack("!hhh", 0, 0, 0)) + sync)
        assert reader.until_ready()["status"] == "T"
        assert reader.until_ready()["errors"] == []
        sent = 0
        for _ in range(400000 // limit + 2):
            seen: list[bytes] = []
            client.sock.sendall(_execute(b"p", limit) + sync)
            out = reader.until_ready(lambda code: seen.append(code) if code != b"D" else None)
            if out["errors"]:
                assert [e["C"] for e in out["errors"]] == ["22P02"]
                assert seen == [b"E", b"Z"] and out["status"] == "E"
                # DuckDB gives whole vectors of 2,048 rows before its error, and no sum of
                # them below 250,000 is a multiple of 7,000: an Execute that failed did
                # not have all its rows (a failure of the read ahead would show here)
                assert out["rows_before_error"] < limit
                sent += out["rows_before_error"]
                break
            assert seen == [b"s", b"Z"] and out["rows"] == limit, (seen, out["rows"])
            sent += limit
        else:
            raise AssertionError("the portal never failed")
        assert 0 < sent <= 250000
        client.query("ROLLBACK")
        assert reader.until_ready()["status"] == "I"
    finally:
        client.close()
