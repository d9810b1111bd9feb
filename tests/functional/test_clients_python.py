"""Python drivers against pgbarrier on both data backends: psycopg 3, asyncpg, pg8000.

The server runs in-process (as in ``test_batch_refresh.py``) on port 0, once per
backend: the embedded DuckDB, and an upstream PostgreSQL on 127.0.0.1:5432
(skipped when unreachable, failing under ``CI=true``). Every test runs on both.

What is pinned: autocommit and transactions, server-side prepared statements,
pipeline mode, SQLSTATE and diagnostics, ParameterStatus after SET, version(),
the simple-query implicit transaction, binary results and binary parameters for
every common type (scalars, numeric, arrays), parameter types inferred for
clients that send none (asyncpg), and a client-side timeout that cancels the
running statement. No sleeps: the timeout test bounds a statement that runs
until it is cancelled.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import decimal
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import asyncpg
import pg8000.native
import psycopg
import pytest
from psycopg import errors as pgerr

from conftest import inprocess_app
from pgbarrier.app import App

#: a statement that runs far longer than any test: only a cancel ends it
LONG_QUERY = {
    "duckdb": "SELECT sum(a.range * b.range) FROM range(1000000000) a, range(1000000000) b",
    "postgres": "SELECT pg_sleep(60)",
}


@dataclass
class Server:
    kind: str
    app: App
    database: str
    port: int

    @property
    def pg(self) -> bool:
        return self.kind == "postgres"

    def connect(self, **kw) -> psycopg.Connection:
        kw.setdefault("autocommit", True)
        return psycopg.connect(host="127.0.0.1", port=self.port, user="root",
                               dbname=self.database, **kw)

    async def aconnect(self) -> asyncpg.Connection:
        return await asyncpg.connect(host="127.0.0.1", port=self.port, user="root",
                                     database=self.database, ssl=False)

    def pg8000(self) -> pg8000.native.Connection:
        return pg8000.native.Connection("root", host="127.0.0.1", port=self.port,
                                        database=self.database)


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def srv(request) -> Iterator[Server]:
    database = f"pgc_{uuid.uuid4().hex[:10]}"
    with inprocess_app(request.param, database) as app:
        yield Server(request.param, app, database, app.server.port)


def _n(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:6]}"


def run(coro):
    return asyncio.run(coro)


# --------------------------------------------------------------------------- values of every type

UUID = uuid.UUID("550e8400-e29b-41d4-a716-446655440000")
TS = dt.datetime(2024, 1, 2, 3, 4, 5, 123456)
TSTZ = dt.datetime(2024, 1, 2, 1, 4, 5, 500000, tzinfo=dt.timezone.utc)

#: (SQL type, literal, value psycopg/asyncpg return) — the literal is valid in both backends
TYPED = [
    ("bool", "true", True),
    ("int2", "-7", -7),
    ("int4", "2147483647", 2147483647),
    ("int8", "9000000000", 9000000000),
    ("float4", "1.5", 1.5),
    ("float8", "2.25", 2.25),
    ("numeric(12,3)", "12345.678", decimal.Decimal("12345.678")),
    ("text", "'hé llo'", "hé llo"),
    ("varchar", "'abc'", "abc"),
    ("bytea", "'abc'", b"abc"),
    ("date", "'2024-02-29'", dt.date(2024, 2, 29)),
    ("time", "'12:34:56.789'", dt.time(12, 34, 56, 789000)),
    ("timestamp", "'2024-01-02 03:04:05.123456'", TS),
    ("timestamptz", "'2024-01-02 03:04:05.5+02'", TSTZ),
    ("interval", "'3 days 04:05:06'", dt.timedelta(days=3, hours=4, minutes=5, seconds=6)),
    ("uuid", f"'{UUID}'", UUID),
    ("int4[]", "[1, 2, NULL]" if False else "ARRAY[1, 2, NULL]", [1, 2, None]),
    ("text[]", "ARRAY['a', 'b c', '\"q\"']", ["a", "b c", '"q"']),
    ("numeric(6,2)[]", "ARRAY[1.50, -2.25]", [decimal.Decimal("1.50"), decimal.Decimal("-2.25")]),
    ("date[]", "ARRAY['2024-01-01'::date]", [dt.date(2024, 1, 1)]),
    ("float8[]", "ARRAY[1.5, 2.5]", [1.5, 2.5]),
    ("bool[]", "ARRAY[true, false]", [True, False]),
    ("int8[]", "ARRAY[1, 9000000000]", [1, 9000000000]),
]
#: json/jsonb: psycopg and asyncpg hand them over differently (parsed / text)
JSON_TYPES = [("json", "'{\"a\": [1, 2]}'"), ("jsonb", "'{\"a\": [1, 2]}'")]


def _select_all_types() -> str:
    cols = [f"CAST({lit} AS {typ}) AS c{i}" for i, (typ, lit, _) in enumerate(TYPED)]
    cols += [f"CAST({lit} AS {typ}) AS j{i}" for i, (typ, lit) in enumerate(JSON_TYPES)]
    return "SELECT " + ", ".join(cols)


# --------------------------------------------------------------------------- psycopg


def test_psycopg_autocommit_and_transactions(srv):
    t = _n("t")
    with srv.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT, v TEXT)")
        assert c.execute(f"INSERT INTO {t} VALUES (%s, %s), (%s, %s)", [1, "a", 2, None]
                         ).statusmessage == "INSERT 0 2"
        assert c.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    with srv.connect(autocommit=False) as c:
        c.execute(f"INSERT INTO {t} VALUES (3, 'c')")
        assert c.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        c.rollback()
        c.execute(f"INSERT INTO {t} VALUES (4, 'd')")
        with pytest.raises(pgerr.UndefinedTable):
            c.execute("SELECT * FROM no_such_table_here")
        assert c.info.transaction_status == psycopg.pq.TransactionStatus.INERROR
        with pytest.raises(pgerr.InFailedSqlTransaction) as info:
            c.execute("SELECT 1")
        assert info.value.sqlstate == "25P02"
        c.rollback()
        c.execute(f"INSERT INTO {t} VALUES (5, 'e')")
        c.commit()
        assert c.execute(f"SELECT id FROM {t} ORDER BY id").fetchall() == [(1,), (2,), (5,)]


def test_psycopg_server_side_prepared_statements(srv):
    t = _n("t")
    with srv.connect(prepare_threshold=0) as c:
        c.execute(f"CREATE TABLE {t} (id INT, v TEXT, dd DATE)")
        for i in range(5):
            c.execute(f"INSERT INTO {t} VALUES (%s, %s, %s)", [i, f"v{i}", dt.date(2024, 1, 1 + i)])
        cur = c.cursor()
        for i in range(5):
            cur.execute(f"SELECT v, dd FROM {t} WHERE id = %s", [i], prepare=True)
            assert cur.fetchall() == [(f"v{i}", dt.date(2024, 1, 1 + i))]
        # the statements were prepared server-side, named, and live across Syncs
        assert c._prepared._names, "psycopg prepared nothing"
        assert c.execute(f"SELECT count(*) FROM {t} WHERE v LIKE %s", ["v%"]).fetchone() == (5,)


def test_psycopg_pipeline_mode(srv):
    t = _n("t")
    with srv.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT PRIMARY KEY, v TEXT)")
        with c.pipeline():
            c.execute(f"INSERT INTO {t} VALUES (%s, %s)", [1, "a"])
            c.execute(f"INSERT INTO {t} VALUES (%s, %s)", [2, "b"])
            cur = c.execute(f"SELECT v FROM {t} WHERE id = %s", [2])
            cur2 = c.execute(f"SELECT count(*) FROM {t}")
        assert cur.fetchall() == [("b",)]
        assert cur2.fetchone() == (2,)
        with pytest.raises(psycopg.errors.UndefinedTable) as info:
            with c.pipeline():
                c.execute(f"INSERT INTO {t} VALUES (%s, %s)", [3, "c"])
                c.execute("SELECT * FROM no_such_table_here")
                c.execute(f"INSERT INTO {t} VALUES (%s, %s)", [4, "d"])
        assert info.value.sqlstate == "42P01"
        # what came after the error up to Sync was skipped
        assert c.execute(f"SELECT count(*) FROM {t} WHERE id = 4").fetchone() == (0,)
        assert c.execute("SELECT 1").fetchone() == (1,)


def test_psycopg_sqlstate_and_diag(srv):
    t = _n("t")
    with srv.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT PRIMARY KEY)")
        c.execute(f"INSERT INTO {t} VALUES (1)")
        with pytest.raises(psycopg.errors.IntegrityError) as info:
            c.execute(f"INSERT INTO {t} VALUES (%s)", [1])
        assert info.value.sqlstate.startswith("23")
        assert info.value.diag.severity == "ERROR"
        with pytest.raises(pgerr.UndefinedTable) as info2:
            c.execute("SELECT * FROM no_such_table_here")
        diag = info2.value.diag
        assert diag.sqlstate == "42P01" and diag.severity_nonlocalized == "ERROR"
        assert diag.message_primary == 'relation "no_such_table_here" does not exist'
        assert int(diag.statement_position) == len("SELECT * FROM ") + 1
        with pytest.raises(pgerr.SyntaxError) as info3:
            c.execute("SELEC 1")
        assert info3.value.sqlstate == "42601"


def test_psycopg_binary_results_for_every_type(srv):
    with srv.connect() as c:
        cur = c.cursor(binary=True)
        cur.execute(_select_all_types())
        row = cur.fetchone()
        assert cur.pgresult.fformat(0) == 1, "results were not binary"
        assert all(cur.pgresult.fformat(i) == 1 for i in range(cur.pgresult.nfields))
        assert list(row[:len(TYPED)]) == [expected for _, _, expected in TYPED]
        assert row[len(TYPED)] == {"a": [1, 2]} and row[len(TYPED) + 1] == {"a": [1, 2]}
        # the same in text
        text = c.execute(_select_all_types()).fetchone()
        assert text == row


def test_psycopg_binary_parameters_round_trip(srv):
    with srv.connect() as c:
        for typ, _lit, value in TYPED:
            cur = c.cursor(binary=True)
            cur.execute(f"SELECT CAST(%b AS {typ})", [value])
            assert cur.fetchone() == (value,), typ
            cur = c.cursor()
            cur.execute(f"SELECT CAST(%t AS {typ})", [value])
            assert cur.fetchone() == (value,), typ


def test_parameter_status_after_set(srv):
    with srv.connect() as c:
        assert c.info.parameter_status("application_name") == ""
        c.execute("SET application_name = 'reporting'")
        assert c.info.parameter_status("application_name") == "reporting"
        assert c.execute("SHOW application_name").fetchone() == ("reporting",)
        c.execute("SET TimeZone = 'UTC'")
        assert c.info.parameter_status("TimeZone") == "UTC"
        c.execute("SET DateStyle = 'ISO, MDY'")
        assert c.info.parameter_status("DateStyle") == "ISO, MDY"
        c.execute("SET extra_float_digits = 3")
        c.execute("SET client_encoding = 'UTF8'")
        c.execute("SET standard_conforming_strings = on")
        c.execute("SET search_path TO public")
        assert c.execute("SHOW search_path").fetchone() == ("public",)
        c.execute("RESET application_name")
        # what was reported is what SHOW says (PostgreSQL backend: the upstream's start-up value)
        assert c.info.parameter_status("application_name") == \
            c.execute("SHOW application_name").fetchone()[0]
        assert c.info.parameter_status("application_name") != "reporting"


def test_version_says_postgresql_15(srv):
    with srv.connect() as c:
        (version,) = c.execute("SELECT version()").fetchone()
    assert version.startswith("PostgreSQL 15")
    if not srv.pg:
        assert "pgbarrier" in version and "DuckDB" in version


def test_simple_query_runs_in_one_implicit_transaction(srv):
    t = _n("t")
    with srv.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT)")
        with pytest.raises(psycopg.errors.DivisionByZero if srv.pg else psycopg.Error):
            c.execute(f"INSERT INTO {t} VALUES (1); SELECT 1 / (SELECT count(*) - 1 FROM {t})"
                      + ("" if srv.pg else "::INTEGER; SELECT error('boom')"))
        # the INSERT of the failed Query was rolled back with it
        assert c.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)
        c.execute(f"INSERT INTO {t} VALUES (1); INSERT INTO {t} VALUES (2)")
        assert c.execute(f"SELECT count(*) FROM {t}").fetchone() == (2,)
        with pytest.raises(pgerr.ActiveSqlTransaction) as info:
            c.execute("SELECT 1; FLUSH")
        assert info.value.diag.message_primary == "FLUSH cannot run inside a transaction block"
        c.execute("FLUSH")  # alone it runs


def test_mixed_result_formats_per_column(srv):
    """Bind asks binary, text, binary: each column comes in the format asked for (libpq cannot
    ask this; asyncpg does for types it decodes only in text)."""
    import socket
    import struct

    def msg(code: bytes, body: bytes) -> bytes:
        return code + struct.pack("!i", len(body) + 4) + body

    sock = socket.create_connection(("127.0.0.1", srv.port))
    try:
        body = struct.pack("!i", 196608) + b"user\x00root\x00database\x00" \
            + srv.database.encode() + b"\x00\x00"
        sock.sendall(struct.pack("!i", len(body) + 4) + body)
        sql = b"SELECT 7::int4 AS a, 'x'::text AS b, 1.50::numeric(5,2) AS c\x00"
        sock.sendall(msg(b"P", b"\x00" + sql + struct.pack("!h", 0))
                     + msg(b"B", b"\x00\x00" + struct.pack("!hh", 0, 0)
                           + struct.pack("!hhhh", 3, 1, 0, 1))
                     + msg(b"D", b"P\x00") + msg(b"E", b"\x00" + struct.pack("!i", 0))
                     + msg(b"S", b""))
        buf, out = b"", []
        while sum(1 for c, _ in out if c == b"Z") < 2:
            data = sock.recv(65536)
            assert data, "connection closed"
            buf += data
            while len(buf) >= 5 and len(buf) >= 1 + struct.unpack("!i", buf[1:5])[0]:
                n = struct.unpack("!i", buf[1:5])[0]
                out.append((buf[:1], buf[5:1 + n]))
                buf = buf[1 + n:]
        out = [(c, p) for c, p in out if c not in (b"R", b"S", b"K")]
        assert [c for c, _ in out][-6:] == [b"1", b"2", b"T", b"D", b"C", b"Z"]
        desc = dict(out)[b"T"]
        formats, pos = [], 2
        for _ in range(3):
            pos = desc.index(b"\x00", pos) + 1
            formats.append(struct.unpack("!h", desc[pos + 16:pos + 18])[0])
            pos += 18
        assert formats == [1, 0, 1]
        row = dict(out)[b"D"]
        assert row[:2] == struct.pack("!h", 3)
        assert row[2:10] == struct.pack("!ii", 4, 7) and row[10:15] == struct.pack("!i", 1) + b"x"
        from pgbarrier.pgproto import types as pgt
        (n,) = struct.unpack("!i", row[15:19])
        assert pgt.decode_binary(pgt.NUMERIC, row[19:19 + n]) == decimal.Decimal("1.50")
    finally:
        sock.close()


# --------------------------------------------------------------------------- asyncpg


def test_asyncpg_fetch_fetchval_and_prepared_statement(srv):
    async def go():
        conn = await srv.aconnect()
        try:
            t = _n("t")
            await conn.execute(f"CREATE TABLE {t} (id INT, v TEXT, amount NUMERIC(10,2))")
            await conn.executemany(f"INSERT INTO {t} VALUES ($1, $2, $3)",
                                   [(1, "a", decimal.Decimal("1.50")), (2, "b", decimal.Decimal("2.25")),
                                    (3, None, None)])
            rows = await conn.fetch(f"SELECT id, v, amount FROM {t} WHERE id > $1 ORDER BY id", 1)
            assert [tuple(r) for r in rows] == [(2, "b", decimal.Decimal("2.25")), (3, None, None)]
            assert await conn.fetchval(f"SELECT count(*) FROM {t}") == 3
            assert await conn.fetchval("SELECT $1::int + 1", 41) == 42
            stmt = await conn.prepare(f"SELECT v FROM {t} WHERE id = $1")
            assert [p.name for p in stmt.get_parameters()] == ["int4"]
            assert await stmt.fetchval(1) == "a"
            assert await stmt.fetchval(2) == "b"
            assert await stmt.fetchval(3) is None
            assert await conn.fetchval(f"SELECT amount FROM {t} WHERE v = $1", "b") == \
                decimal.Decimal("2.25")
            assert await conn.fetchval(f"SELECT count(*) FROM {t} WHERE id = ANY($1)", [1, 3]) == 2
            assert (await conn.fetchval("SELECT version()")).startswith("PostgreSQL 15")
        finally:
            await conn.close()
    run(go())


def test_asyncpg_binary_round_trip_of_every_type(srv):
    async def go():
        conn = await srv.aconnect()
        try:
            # a literal of each type comes back decoded from binary
            row = await conn.fetchrow(_select_all_types())
            assert list(row)[:len(TYPED)] == [expected for _, _, expected in TYPED]
            # each value goes in as a binary parameter and comes back
            for typ, _lit, value in TYPED:
                assert await conn.fetchval(f"SELECT $1::{typ}", value) == value, typ
            # through a table: parameter types inferred from the columns
            t = _n("t")
            await conn.execute(
                f"CREATE TABLE {t} (b BOOLEAN, i2 SMALLINT, i4 INTEGER, i8 BIGINT, f4 REAL, "
                "f8 DOUBLE PRECISION, n NUMERIC(12,3), s TEXT, vc VARCHAR, bin BYTEA, d DATE, "
                "tm TIME, ts TIMESTAMP, tz TIMESTAMPTZ, iv INTERVAL, u UUID, ia INTEGER[], "
                "ta TEXT[])")
            values = [True, -7, 2147483647, 9000000000, 1.5, 2.25, decimal.Decimal("-12345.678"),
                      "hé", "abc", b"\x00\xff", dt.date(1999, 12, 31), dt.time(23, 59, 59, 1),
                      TS, TSTZ, dt.timedelta(days=-1, seconds=5), UUID, [1, None, 3], ["x", None]]
            await conn.execute(f"INSERT INTO {t} VALUES ({', '.join(f'${i + 1}' for i in range(18))})",
                               *values)
            got = await conn.fetchrow(f"SELECT * FROM {t}")
            assert list(got) == values
            assert await conn.fetchval("SELECT $1::json", '{"a": 1}') == '{"a": 1}'
            assert (await conn.fetchval("SELECT $1::jsonb", '{"a": 1}')).replace(" ", "") == '{"a":1}'
            # numeric edge values in base-10000 digits
            for text in ("0", "0.001", "-1", "10000", "123456789.000001", "99999999.99"):
                assert await conn.fetchval("SELECT $1::numeric(20,6)", decimal.Decimal(text)) == \
                    decimal.Decimal(text).quantize(decimal.Decimal("0.000001"))
        finally:
            await conn.close()
    run(go())


def test_asyncpg_transaction(srv):
    async def go():
        conn = await srv.aconnect()
        try:
            t = _n("t")
            await conn.execute(f"CREATE TABLE {t} (id INT)")
            with pytest.raises(RuntimeError):
                async with conn.transaction():
                    await conn.execute(f"INSERT INTO {t} VALUES ($1)", 1)
                    assert await conn.fetchval(f"SELECT count(*) FROM {t}") == 1
                    raise RuntimeError("roll back")
            assert await conn.fetchval(f"SELECT count(*) FROM {t}") == 0
            async with conn.transaction():
                await conn.execute(f"INSERT INTO {t} VALUES ($1)", 2)
            assert await conn.fetchval(f"SELECT count(*) FROM {t}") == 1
            with pytest.raises(asyncpg.PostgresError) as info:
                async with conn.transaction():
                    await conn.execute("SELECT * FROM no_such_table_here")
            assert info.value.sqlstate == "42P01"
            assert not conn.is_in_transaction()
        finally:
            await conn.close()
    run(go())


def test_asyncpg_timeout_cancels_the_statement(srv):
    async def go():
        conn = await srv.aconnect()
        try:
            with pytest.raises(asyncio.TimeoutError):
                await conn.fetchval(LONG_QUERY[srv.kind], timeout=0.5)
            # the statement was cancelled, the connection goes on
            assert await conn.fetchval("SELECT 1", timeout=30) == 1
        finally:
            await conn.close()
    run(go())


# --------------------------------------------------------------------------- pg8000


def test_pg8000_native_parameters_transaction_and_sqlstate(srv):
    con = srv.pg8000()
    try:
        t = _n("t")
        con.run(f"CREATE TABLE {t} (id INT, v TEXT, ts TIMESTAMP)")
        con.run(f"INSERT INTO {t} VALUES (:id, :v, :ts)", id=1, v="one", ts=TS)
        assert con.run(f"SELECT v, ts FROM {t} WHERE id = :id", id=1) == [["one", TS]]
        assert con.row_count == 1
        con.run("BEGIN")
        con.run(f"INSERT INTO {t} VALUES (:id, :v, NULL)", id=2, v="two")
        con.run("ROLLBACK")
        assert con.run(f"SELECT count(*) FROM {t}") == [[1]]
        con.run("START TRANSACTION")
        con.run(f"INSERT INTO {t} VALUES (:id, :v, NULL)", id=3, v="three")
        con.run("COMMIT")
        assert con.run(f"SELECT id FROM {t} ORDER BY id") == [[1], [3]]
        with pytest.raises(pg8000.native.DatabaseError) as info:
            con.run("SELECT * FROM no_such_table_here")
        fields = info.value.args[0]
        assert fields["C"] == "42P01" and fields["S"] == "ERROR"
        assert con.run("SELECT :x::int * 2", x=21) == [[42]]
    finally:
        con.close()


# --------------------------------------------------------------------------- fetch sizes


def test_asyncpg_cursor_reads_a_large_result_a_fetch_size_at_a_time(srv):
    """asyncpg's cursor is a portal read by Execute with a row limit (a fetch size), each
    Execute a round trip, the next rows framed while the client reads (duckdb): every row
    once, in order, whatever the sizes and formats of the fetches."""
    table = _n("fetched")
    with srv.connect() as c:
        c.execute(f"CREATE TABLE {table} AS SELECT i, 'r' || i::text AS label, i * 0.5 AS half "
                  f"FROM generate_series(1, 30000) AS g(i)")

    async def go():
        conn = await srv.aconnect()
        try:
            query = f"SELECT i, label, half FROM {table} ORDER BY i"
            want = [tuple(r) for r in await conn.fetch(query)]
            async with conn.transaction():
                got = [tuple(r) async for r in conn.cursor(query, prefetch=700)]
            assert got == want
            async with conn.transaction():
                cur = await conn.cursor(query)
                parts = []
                for n in [1, 5000, 3, 2999, 8192, 4000, 20000]:
                    parts.extend(tuple(r) for r in await cur.fetch(n))
                    if n == 4000:  # another statement between two fetches of the portal
                        assert await conn.fetchval(f"SELECT count(*) FROM {table}") == 30000
            assert parts == want
        finally:
            await conn.close()
    run(go())


def test_psycopg_named_cursor_reads_a_large_result_a_fetch_at_a_time(srv):
    """A psycopg named cursor is DECLARE and FETCH FORWARD n, a round trip each, the next
    rows framed while the client reads (duckdb): every row once, in order."""
    table = _n("declared")
    with srv.connect() as c:
        c.execute(f"CREATE TABLE {table} AS SELECT i, 'r' || i::text AS label, i * 0.5 AS half "
                  f"FROM generate_series(1, 30000) AS g(i)")
        query = f"SELECT i, label, half FROM {table} ORDER BY i"
        want = c.execute(query).fetchall()
    with srv.connect(autocommit=False) as c:
        with c.cursor(name="big") as cur:
            cur.itersize = 700
            cur.execute(query)
            assert list(cur) == want
        with c.cursor(name="steps") as cur, c.cursor() as other:
            cur.execute(query)
            got = []
            for n in [1, 5000, 3, 2999, 8192, 4000, 20000]:
                got.extend(cur.fetchmany(n))
                if n == 4000:  # another statement between two FETCHes of the cursor
                    assert other.execute(f"SELECT count(*) FROM {table}").fetchone() == (30000,)
            assert got == want
