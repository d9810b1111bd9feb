"""The relay of an upstream PostgreSQL (session/relay.py): real clients, a real server.

A pgbarrier server process on port 0 in front of the PostgreSQL on 127.0.0.1:5432 (a
fresh upstream database, dropped afterwards; skipped when PostgreSQL is unreachable,
failing under CI=true). Pinned: extended-protocol batches that mix relayed statements
with pgbarrier's own (catalog views, settings, control statements), with replies in
order and one implicit transaction up to Sync whichever path ran a statement; named
statements on both paths; an error in a relayed pipeline followed by a control
statement; PAUSE/RESUME between relayed queries; COPY both ways (and COPY FROM STDIN
through the extended protocol refused with 0A000); transaction status; cancel, statement
timeout and client hang-up of a relayed statement; a malformed relayed message; and the
libpq path kept for upstreams that cannot be relayed. No sleeps: waits are on events,
log lines or upstream locks, each bounded.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import asyncpg
import psycopg
import pytest
from psycopg import errors as pgerr
from psycopg.pq import TransactionStatus

from conftest import ServerProcess, require_postgres, run_in_background, start_server, stop_server


@dataclass
class Relay:
    server: ServerProcess
    database: str
    upstream_dsn: str

    def connect(self, **kw) -> psycopg.Connection:
        kw.setdefault("autocommit", True)
        return psycopg.connect(self.server.dsn(self.database), **kw)

    async def aconnect(self) -> asyncpg.Connection:
        return await asyncpg.connect(host=self.server.host, port=self.server.port, user="root",
                                     database=self.database, ssl=False)

    def direct(self) -> psycopg.Connection:
        """A connection to the upstream database itself, bypassing pgbarrier."""
        base = self.upstream_dsn.rsplit("/", 1)[0]
        return psycopg.connect(f"{base}/{self.database}", autocommit=True)


def _drop_upstream(dsn: str, database: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


@pytest.fixture(scope="module")
def relay() -> Iterator[Relay]:
    dsn = require_postgres()
    database = f"pgb_relay_{uuid.uuid4().hex[:10]}"
    srv = start_server("--database", database, "--barrier-interval-ms", "100",
                       "--upstream", dsn.rsplit("/", 1)[0] + "/")
    try:
        yield Relay(srv, database, dsn)
    finally:
        code = stop_server(srv)
        _drop_upstream(dsn, database)
    assert code == 0, "server did not exit cleanly:\n" + "".join(srv.log)


def _table(relay: Relay, prefix: str, ddl: str = "(id int PRIMARY KEY)") -> str:
    name = f"{prefix}_{uuid.uuid4().hex[:6]}"
    with relay.connect() as c:
        c.execute(f"CREATE TABLE {name} {ddl}")
    return name


# --------------------------------------------------------------------------- mixed batches


def test_pipeline_mixing_relayed_and_own_statements_answers_in_order(relay):
    t = _table(relay, "mix")
    with relay.connect() as c:
        with c.pipeline():
            ins = c.execute(f"INSERT INTO {t} VALUES (1), (2) RETURNING id")
            cat = c.execute("SELECT name, paused FROM rw_catalog.rw_databases WHERE name = %s",
                            [relay.database])
            cnt = c.execute(f"SELECT count(*) FROM {t}")
            own = c.execute("SHOW batch_refresh_when_paused")
            # fetching inside the pipeline sends Flush and waits: replies so far must come
            assert ins.fetchall() == [(1,), (2,)]
            assert cat.fetchone() == (relay.database, False)
            assert cnt.fetchone() == (2,)
            assert own.fetchone() == ("error",)
            c.execute("SET batch_refresh_when_paused = 'wait'")
            back = c.execute("SHOW batch_refresh_when_paused")
        assert back.fetchone() == ("wait",)
        assert c.execute(f"SELECT count(*) FROM {t}").fetchone() == (2,)


def test_error_in_a_relayed_pipeline_rolls_it_back_then_a_control_statement_runs(relay):
    t = _table(relay, "perr")
    with relay.connect() as c:
        with pytest.raises(pgerr.UniqueViolation):
            with c.pipeline():
                c.execute(f"INSERT INTO {t} VALUES (10)")
                c.execute(f"INSERT INTO {t} VALUES (11)")
                c.execute(f"INSERT INTO {t} VALUES (10)")
                c.execute(f"INSERT INTO {t} VALUES (12)")
        # one implicit transaction up to Sync, as on PostgreSQL: nothing stays
        assert c.info.transaction_status == TransactionStatus.IDLE
        assert c.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)
        c.execute(f"ALTER DATABASE {relay.database} PAUSE")
        try:
            paused = c.execute("SELECT paused FROM rw_catalog.rw_databases WHERE name = %s",
                               [relay.database]).fetchone()
            assert paused == (True,)
        finally:
            c.execute(f"ALTER DATABASE {relay.database} RESUME")


def test_error_of_an_own_statement_rolls_back_the_relayed_part_of_its_batch(relay):
    t = _table(relay, "pown")
    with relay.connect() as c:
        with pytest.raises(pgerr.InvalidParameterValue):
            with c.pipeline():
                c.execute(f"INSERT INTO {t} VALUES (1)")
                c.execute(f"CREATE MATERIALIZED VIEW {t}_bad WITH (refresh.interval.sec = 0) "
                          f"AS SELECT id FROM {t}")
                c.execute(f"INSERT INTO {t} VALUES (2)")
        assert c.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)


def test_transaction_status_follows_the_upstream(relay):
    t = _table(relay, "txs")
    with relay.connect(autocommit=False) as c:
        c.execute(f"INSERT INTO {t} VALUES (1)")
        assert c.info.transaction_status == TransactionStatus.INTRANS
        with pytest.raises(pgerr.UniqueViolation):
            c.execute(f"INSERT INTO {t} VALUES (1)")
        assert c.info.transaction_status == TransactionStatus.INERROR
        c.rollback()
        assert c.info.transaction_status == TransactionStatus.IDLE
        # a control statement refused inside a block leaves the block failed on both sides
        c.execute(f"INSERT INTO {t} VALUES (2)")
        with pytest.raises(pgerr.ActiveSqlTransaction):
            c.execute("FLUSH")
        assert c.info.transaction_status == TransactionStatus.INERROR
        with pytest.raises(pgerr.InFailedSqlTransaction):
            c.execute("SELECT 1")
        c.rollback()
        assert c.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)


# --------------------------------------------------------------------------- named statements


def test_named_prepared_statements_on_both_paths(relay):
    t = _table(relay, "named")
    with relay.connect() as c:
        for i in range(8):  # psycopg prepares server-side from the 5th execution
            c.execute(f"INSERT INTO {t} VALUES (%s)", [i], prepare=True)
            row = c.execute("SELECT name FROM rw_catalog.rw_databases WHERE name = %s",
                            [relay.database], prepare=True).fetchone()
            assert row == (relay.database,)
        assert c.execute(f"SELECT count(*) FROM {t}", prepare=True).fetchone() == (8,)

    async def go() -> None:
        conn = await relay.aconnect()
        try:
            plus = await conn.prepare("SELECT $1::int + 1")
            cat = await conn.prepare("SELECT paused FROM rw_catalog.rw_databases WHERE name = $1")
            for i in range(3):
                assert await plus.fetchval(i) == i + 1
                assert await cat.fetchval(relay.database) is False
            assert await conn.fetchval(f"SELECT count(*) FROM {t} WHERE id < $1", 4) == 4
            await conn.execute("FLUSH")
            assert await plus.fetchval(41) == 42
        finally:
            await conn.close()

    asyncio.run(go())


# --------------------------------------------------------------------------- control plane


def test_pause_between_relayed_queries_in_psql(relay):
    db = relay.database
    t = f"pp_{uuid.uuid4().hex[:6]}"
    script = f"""
CREATE TABLE {t} (id int);
INSERT INTO {t} VALUES (1), (2);
ALTER DATABASE {db} PAUSE;
SELECT count(*) FROM {t};
CREATE MATERIALIZED VIEW {t}_bv WITH (refresh.interval.sec = 5) AS SELECT id FROM {t};
SELECT paused FROM rw_catalog.rw_databases WHERE name = '{db}';
ALTER DATABASE {db} RESUME;
CREATE MATERIALIZED VIEW {t}_bv WITH (refresh.interval.sec = 5) AS SELECT id FROM {t};
SELECT count(*) FROM {t}_bv;
"""
    out = relay.server.psql("-At", "-v", "ON_ERROR_STOP=0", database=db, input=script)
    assert out.stdout.split() == ["CREATE", "TABLE", "INSERT", "0", "2", "ALTER", "DATABASE",
                                  "2", "t", "ALTER", "DATABASE", "CREATE", "MATERIALIZED",
                                  "VIEW", "2"], out.stderr
    assert "cannot create batch refresh job while database barrier is paused" in out.stderr


def test_large_objects_through_psql_use_the_fast_path(relay, tmp_path):
    """psql's \\lo_import / \\lo_export call the lo_* functions with FunctionCall
    (libpq's fast path): the relay passes it upstream like a Query."""
    src, out = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("large object through pgbarrier\n")
    imported = relay.server.psql("-At", "-c", f"\\lo_import {src}", database=relay.database)
    assert imported.returncode == 0, imported.stderr
    oid = imported.stdout.split()[-1]
    exported = relay.server.psql("-At", "-c", f"\\lo_export {oid} {out}",
                                 database=relay.database)
    assert exported.returncode == 0, exported.stderr
    assert out.read_text() == src.read_text()
    with relay.connect() as c:
        c.execute(f"SELECT lo_unlink({int(oid)})")


# --------------------------------------------------------------------------- COPY


def test_copy_in_and_out_through_psql_psycopg_and_asyncpg(relay):
    t = _table(relay, "cp", "(id int, name text)")
    out = relay.server.psql("-v", "ON_ERROR_STOP=1", "-c", f"\\copy {t} FROM STDIN",
                            database=relay.database, input="1\tone\n2\ttwo\n")
    assert out.returncode == 0, out.stderr
    with relay.connect() as c:
        with c.cursor().copy(f"COPY {t} FROM STDIN") as copy:
            for i in range(3, 1003):
                copy.write_row((i, f"n{i}"))
        with c.cursor().copy(f"COPY (SELECT id FROM {t} ORDER BY id) TO STDOUT") as copy:
            ids = [int(bytes(row).decode()) for row in copy]
        assert ids == list(range(1, 1003))
        assert c.execute("SELECT 7").fetchone() == (7,)

    async def go() -> None:
        conn = await relay.aconnect()
        try:
            await conn.copy_records_to_table(t, records=[(5000, "a"), (5001, "b")])
            assert await conn.fetchval(f"SELECT count(*) FROM {t}") == 1004
            # COPY FROM STDIN through the extended protocol: refused cleanly
            with pytest.raises(asyncpg.exceptions.FeatureNotSupportedError):
                await conn.fetch(f"COPY {t} FROM STDIN")
            assert await conn.fetchval("SELECT 8") == 8
        finally:
            await conn.close()

    asyncio.run(go())
    out = relay.server.psql("-At", "-c", f"COPY (SELECT count(*) FROM {t}) TO STDOUT",
                            database=relay.database)
    assert out.stdout.strip() == "1004", out.stderr


# --------------------------------------------------------------------------- cancel, timeout, hang-up


def test_cancel_request_cancels_a_relayed_statement(relay):
    with relay.connect() as c:
        bg = run_in_background(c, "SELECT pg_sleep(60)")
        bg.cancel_until_done(c)
        assert isinstance(bg.outcome[0], pgerr.QueryCanceled), bg.outcome
        assert c.info.transaction_status == TransactionStatus.IDLE
        assert c.execute("SELECT 5").fetchone() == (5,)


def test_statement_timeout_applies_to_relayed_statements(relay):
    with relay.connect() as c:
        c.execute("SET statement_timeout = '200ms'")
        assert c.execute("SHOW statement_timeout").fetchone() == ("200ms",)
        with pytest.raises(pgerr.QueryCanceled, match="statement timeout"):
            c.execute("SELECT pg_sleep(30)")
        with pytest.raises(pgerr.QueryCanceled, match="statement timeout"):
            c.execute("SELECT pg_sleep(%s)", [30])
        c.execute("RESET statement_timeout")
        assert c.execute("SELECT 3").fetchone() == (3,)


def _frame(code: bytes, body: bytes) -> bytes:
    return code + struct.pack("!i", len(body) + 4) + body


def _raw_session(relay: Relay) -> socket.socket:
    sock = socket.create_connection((relay.server.host, relay.server.port), timeout=30)
    body = struct.pack("!i", 196608) + b"user\0root\0database\0" + relay.database.encode() + b"\0\0"
    sock.sendall(struct.pack("!i", len(body) + 4) + body)
    _read_until(sock, b"Z")
    return sock


def _read_until(sock: socket.socket, code: bytes) -> list[tuple[bytes, bytes]]:
    """Messages until one of type ``code`` (inclusive), or until the server closes."""
    buf, out = b"", []
    while True:
        while len(buf) >= 5 and len(buf) >= 1 + struct.unpack("!i", buf[1:5])[0]:
            end = 1 + struct.unpack("!i", buf[1:5])[0]
            out.append((buf[:1], buf[5:end]))
            if buf[:1] == code:
                return out
            buf = buf[end:]
        data = sock.recv(65536)
        if not data:
            return out
        buf += data


def test_client_hang_up_cancels_a_relayed_statement(relay):
    key = uuid.uuid4().int & 0x7FFFFFFF
    sock = _raw_session(relay)
    sock.sendall(_frame(b"Q", f"SELECT pg_advisory_lock({key}), pg_sleep(60)\0".encode()))
    sock.close()
    # the watcher speaks once the statement has run for a second (it holds the lock by then)
    assert relay.server.wait_for_log("client hung up during a statement; cancelling it")
    with relay.direct() as direct:
        direct.execute("SET lock_timeout = '20s'")
        # pg_sleep(60) would hold the lock for a minute; the cancel ends the statement, the
        # connection closes and the lock is free
        direct.execute(f"SELECT pg_advisory_lock({key})")
        direct.execute(f"SELECT pg_advisory_unlock({key})")


def test_malformed_relayed_message_is_an_error_of_that_connection_only(relay):
    sock = _raw_session(relay)
    # a named statement that lives upstream, then a Bind to it whose body is cut short
    sock.sendall(_frame(b"P", b"s1\0SELECT $1::int\0\0\0") + _frame(b"B", b"\0s1\0\0\x01")
                 + _frame(b"S", b""))
    msgs = _read_until(sock, b"Z")
    errors = [body for code, body in msgs if code == b"E"]
    assert errors and b"C08P01" in errors[0].split(b"\0")
    sock.close()
    with relay.connect() as c:
        assert c.execute("SELECT 4").fetchone() == (4,)


class _Replies:
    """Reads messages from a raw socket, keeping what arrived beyond the last one asked."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""

    def until(self, code: bytes) -> list[tuple[bytes, bytes]]:
        out = []
        while True:
            while len(self.buf) >= 5 and len(self.buf) >= 1 + struct.unpack("!i", self.buf[1:5])[0]:
                end = 1 + struct.unpack("!i", self.buf[1:5])[0]
                msg = (self.buf[:1], self.buf[5:end])
                self.buf = self.buf[end:]
                out.append(msg)
                if msg[0] == code:
                    return out
            data = self.sock.recv(65536)
            if not data:
                return out
            self.buf += data


def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.parametrize("behind", [b"", _frame(b"Q", b"SELECT 1\0")],
                         ids=["the-read-alone", "a-query-behind-it"])
def test_a_client_that_does_not_read_a_relayed_result_holds_the_upstream_not_memory(
        relay, behind):
    """The relay passes replies on as they arrive and stops reading the upstream while the
    client does not read: the upstream backend waits on its socket (ClientWrite) and the
    server holds a bounded amount. Read after, every row arrives: also when the reply came
    whole while the client was not reading (the steps once waited for more bytes then,
    forever). A Query alone takes the fast path, one with a second behind it the steps."""
    rows = 200_000
    marker = f"nread_{uuid.uuid4().hex[:8]}"
    sock = _raw_session(relay)
    before = _rss_kb(relay.server.proc.pid)
    sock.sendall(_frame(b"Q", f"SELECT repeat('x', 1000) AS {marker} "
                              f"FROM generate_series(1, {rows})\0".encode()) + behind)
    with relay.direct() as direct:
        for _ in range(600):  # bounded: 30 s of 50 ms polls, each a round trip upstream
            waiting = direct.execute(
                "SELECT wait_event FROM pg_stat_activity WHERE query LIKE %s AND pid <> "
                "pg_backend_pid()", [f"%{marker}%"]).fetchone()
            if waiting and waiting[0] == "ClientWrite":
                break
            direct.execute("SELECT pg_sleep(0.05)")
        else:
            raise AssertionError("the upstream never waited for the relay to read")
    grown_mb = (_rss_kb(relay.server.proc.pid) - before) / 1024
    assert grown_mb < 64, f"the server held {grown_mb:.0f} MB of a reply nobody read"
    replies = _Replies(sock)
    msgs = replies.until(b"Z")
    assert sum(1 for code, _ in msgs if code == b"D") == rows
    assert msgs[-2][0] == b"C" and msgs[-2][1] == f"SELECT {rows}\0".encode()
    if behind:
        assert [c for c, _ in replies.until(b"Z")] == [b"T", b"D", b"C", b"Z"]
    sock.close()


def test_a_second_query_sent_while_the_first_runs_is_answered_after_it(relay):
    sock = _raw_session(relay)
    replies = _Replies(sock)
    sock.sendall(_frame(b"Q", b"SELECT pg_sleep(0.2), 1 AS first\0"))
    sock.sendall(_frame(b"Q", b"SELECT 2 AS second\0"))
    sock.sendall(_frame(b"P", b"\0SELECT $1::int + 1\0\0\0") + _frame(b"B", b"\0\0\0\0\0\x01\0\0\0\x012\0\0")
                 + _frame(b"E", b"\0\0\0\0\0") + _frame(b"S", b""))
    first = replies.until(b"Z")
    second = replies.until(b"Z")
    third = replies.until(b"Z")
    assert [c for c, _ in first] == [b"T", b"D", b"C", b"Z"] and b"first" in first[0][1]
    assert [c for c, _ in second] == [b"T", b"D", b"C", b"Z"] and second[1][1].endswith(b"2")
    assert [c for c, _ in third] == [b"1", b"2", b"D", b"C", b"Z"] and third[2][1].endswith(b"3")
    sock.close()


# --------------------------------------------------------------------------- cursors


def test_named_cursors_and_sql_prepare_are_the_upstreams(relay):
    """psycopg's named cursor DECLAREs a cursor, then Describes and FETCHes its portal by
    name; SQL PREPARE makes a statement a protocol Bind can use. Names the relay never saw
    are the upstream's, and an unknown one is PostgreSQL's own error."""
    with relay.connect(autocommit=False) as c:
        with c.cursor("big") as cur:
            cur.itersize = 7
            cur.execute("SELECT g, g * 2 FROM generate_series(1, 50) g")
            assert cur.description[0].name == "g"
            rows = list(cur)
        assert len(rows) == 50 and rows[-1] == (50, 100)
        c.commit()
        c.execute("DECLARE k CURSOR WITH HOLD FOR SELECT 1 AS one UNION ALL SELECT 2")
        c.commit()
        assert c.execute("FETCH 1 FROM k").fetchall() == [(1,)]
        assert c.execute("FETCH ALL FROM k").fetchall() == [(2,)]
        c.execute("CLOSE k")
        c.commit()
    with relay.connect() as c:
        with pytest.raises(pgerr.InvalidCursorName):
            c.execute("FETCH 1 FROM no_such_cursor")
    sock = _raw_session(relay)
    sock.sendall(_frame(b"Q", b"PREPARE twice(int) AS SELECT $1 * 2\0"))
    _read_until(sock, b"Z")
    # Bind to the SQL-level statement, Describe and Execute its portal, then an unknown one
    sock.sendall(_frame(b"B", b"p1\0twice\0\0\0\x00\x01\x00\x00\x00\x0221\0\0")
                 + _frame(b"D", b"Pp1\0") + _frame(b"E", b"p1\0\0\0\0\0")
                 + _frame(b"D", b"Pnope\0") + _frame(b"S", b""))
    msgs = _read_until(sock, b"Z")
    sock.close()
    codes = [code for code, _ in msgs]
    assert codes[:4] == [b"2", b"T", b"D", b"C"], msgs
    assert msgs[2][1][6:] == b"42"
    errors = [dict((f[:1], f[1:]) for f in body.split(b"\0") if f) for code, body in msgs
              if code == b"E"]
    assert errors and errors[0][b"C"] == b"34000", msgs


# --------------------------------------------------------------------------- between statements


def test_notify_reaches_an_idle_listener_at_once(relay):
    """PostgreSQL delivers a NOTIFY to an idle LISTENing client without waiting for its
    next query; through pgbarrier too (the client sends nothing after LISTEN)."""
    channel = f"ch_{uuid.uuid4().hex[:8]}"
    with relay.connect() as listener, relay.connect() as talker:
        listener.execute(f"LISTEN {channel}")
        talker.execute(f"NOTIFY {channel}, 'first'")
        got = [n.payload for n in listener.notifies(timeout=20, stop_after=1)]
        assert got == ["first"]
        with relay.direct() as direct:  # from outside pgbarrier as well
            direct.execute(f"SELECT pg_notify('{channel}', 'second')")
        got = [n.payload for n in listener.notifies(timeout=20, stop_after=1)]
        assert got == ["second"]
        assert listener.execute("SELECT 7").fetchone() == (7,), "the session goes on"


def test_upstream_terminated_between_statements_ends_the_client_at_once(relay):
    """pg_terminate_backend of an idle session's upstream: PostgreSQL's FATAL 57P01 reaches
    the client as it is sent, then the connection closes (no query needed to find out)."""
    sock = _raw_session(relay)
    sock.sendall(_frame(b"Q", b"SELECT pg_backend_pid()\0"))
    rows = [body for code, body in _read_until(sock, b"Z") if code == b"D"]
    pid = int(rows[0][6:])
    with relay.direct() as direct:
        direct.execute("SELECT pg_terminate_backend(%s)", [pid])
    msgs = _read_until(sock, b"Z")  # nothing is sent: the server's words, then the end
    sock.close()
    errors = [dict((f[:1], f[1:]) for f in body.split(b"\0") if f) for code, body in msgs
              if code == b"E"]
    assert errors and errors[0][b"C"] == b"57P01" and errors[0][b"S"] == b"FATAL", msgs


# --------------------------------------------------------------------------- the libpq path


def test_libpq_path_when_the_relay_is_off():
    from conftest import UPSTREAM
    from pgbarrier.app import App, Config
    from pgbarrier.backends.postgres import PostgresBackend, PostgresSession

    require_postgres()
    database = f"pgb_norelay_{uuid.uuid4().hex[:8]}"
    backend = PostgresBackend(UPSTREAM, relay=False)
    app = App(Config(port=0, data_dir=":memory:", barrier_interval_ms=3_600_000,
                     default_database=database), backend=backend)
    server = app.start()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        assert isinstance(backend.connect(database, "root"), PostgresSession)
        dsn = f"host=127.0.0.1 port={server.port} user=root dbname={database}"
        with psycopg.connect(dsn, autocommit=True) as c:
            assert c.execute("SELECT %s::int + 1", [1]).fetchone() == (2,)
            assert c.execute("SELECT 1", prepare=True).fetchone() == (1,)
            assert c.execute("SELECT name FROM rw_catalog.rw_databases").fetchone() == (database,)
    finally:
        app.backend.drop_database(database)
        app.stop()
