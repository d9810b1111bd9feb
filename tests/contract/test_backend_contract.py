"""One contract, two data planes: DuckDB (in memory) and an upstream PostgreSQL.

Every test runs against both backends. PostgreSQL rows arrive as the server's
own text bytes, DuckDB rows as Python values; ``texts`` turns both into the
text PostgreSQL prints, so the same assertion holds for either.

The PostgreSQL runs use a fresh upstream database per module, created and
dropped by the fixture; when PostgreSQL is unreachable they are skipped (and
fail under ``CI=true``, see ``require_postgres``). No test sleeps: the
interrupt test waits on events, and waits with a timeout only as a bound.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest

from conftest import require_postgres
from pgbarrier.backends.base import Backend, BackendSession
from pgbarrier.backends.duckdb import DuckDBBackend
from pgbarrier.errors import PgError
from pgbarrier.result import Result
from pgbarrier.pgproto import types as pgt
from pgbarrier.pgproto.types import to_text

#: a statement that runs far longer than any test: only an interrupt ends it
LONG_QUERY = {
    "duckdb": "SELECT sum(a.range * b.range) FROM range(1000000000) a, range(1000000000) b",
    "postgres": "SELECT pg_sleep(30)",
}
JOIN_TIMEOUT_S = 30


@dataclass
class Env:
    kind: str
    backend: Backend
    db: str
    dsn: str | None = None

    @property
    def pg(self) -> bool:
        return self.kind == "postgres"


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def env(request: pytest.FixtureRequest) -> Iterator[Env]:
    if request.param == "duckdb":
        duck = DuckDBBackend(":memory:")
        duck.ensure_database("contract")
        yield Env("duckdb", duck, "contract")
        duck.close()
        return
    from pgbarrier.backends.postgres import PostgresBackend

    dsn = require_postgres()
    pg = PostgresBackend(dsn)
    db = f"pgbarrier_contract_{uuid.uuid4().hex[:12]}"
    pg.ensure_database(db)
    try:
        yield Env("postgres", pg, db, dsn)
    finally:
        pg.close()
        pg.drop_database(db)


@pytest.fixture
def session(env: Env) -> Iterator[BackendSession]:
    s = env.backend.connect(env.db, "root")
    yield s
    s.close()


def text(v: Any) -> str | None:
    """A value as PostgreSQL's text output, from raw upstream bytes or a Python value."""
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).decode()
    return to_text(v)


def texts(result: Result) -> list[tuple[str | None, ...]]:
    return [tuple(text(v) for v in row) for row in result.rows()]


def run(session: BackendSession, sql: str, params: list[Any] | None = None
        ) -> tuple[str, list[tuple[str | None, ...]]]:
    """(CommandComplete tag, rows as text) of one statement."""
    result = session.execute(sql, params)
    rows = texts(result) if result.columns is not None else []
    return result.completion_tag(len(rows)), rows


def error_of(session: BackendSession, sql: str, params: list[Any] | None = None) -> PgError:
    with pytest.raises(PgError) as info:
        session.execute(sql, params)
    return info.value


# --------------------------------------------------------------------------- statements


def test_dml_has_postgresql_tags(session: BackendSession) -> None:
    assert run(session, "CREATE TABLE tags (id INTEGER PRIMARY KEY, v TEXT)") == ("CREATE TABLE", [])
    assert run(session, "INSERT INTO tags VALUES (1, 'a'), (2, 'b'), (3, NULL)") == ("INSERT 0 3", [])
    assert run(session, "UPDATE tags SET v = 'x' WHERE id > 1") == ("UPDATE 2", [])
    assert run(session, "DELETE FROM tags WHERE id = 1") == ("DELETE 1", [])
    result = session.execute("SELECT id, v FROM tags ORDER BY id")
    assert [c.name for c in result.columns or []] == ["id", "v"]
    assert result.columns[0].type_oid == pgt.INT4
    rows = texts(result)
    assert rows == [("2", "x"), ("3", "x")]
    assert result.completion_tag(len(rows)) == "SELECT 2"
    assert run(session, "SELECT count(*) FROM tags WHERE v IS NULL") == ("SELECT 1", [("0",)])
    assert run(session, "DROP TABLE tags") == ("DROP TABLE", [])


def test_transaction_statements_pass_through(session: BackendSession) -> None:
    run(session, "CREATE TABLE tx (id INTEGER)")
    assert run(session, "BEGIN") == ("BEGIN", [])
    assert run(session, "INSERT INTO tx VALUES (1)") == ("INSERT 0 1", [])
    assert run(session, "ROLLBACK") == ("ROLLBACK", [])
    assert run(session, "SELECT count(*) FROM tx")[1] == [("0",)]
    run(session, "BEGIN")
    run(session, "INSERT INTO tx VALUES (2)")
    assert run(session, "COMMIT") == ("COMMIT", [])
    assert run(session, "SELECT id FROM tx")[1] == [("2",)]


def test_dollar_parameters(session: BackendSession) -> None:
    run(session, "CREATE TABLE params (id INTEGER, v TEXT)")
    assert run(session, "INSERT INTO params VALUES ($1, $2)", [1, "one"]) == ("INSERT 0 1", [])
    assert run(session, "INSERT INTO params VALUES ($1, $2)", [2, None]) == ("INSERT 0 1", [])
    assert run(session, "SELECT v FROM params WHERE id = $1", [1]) == ("SELECT 1", [("one",)])
    assert run(session, "SELECT id FROM params WHERE v IS NULL AND id > $1", [0])[1] == [("2",)]
    assert run(session, "UPDATE params SET v = $1 WHERE id = $2", ["two", 2]) == ("UPDATE 1", [])
    assert run(session, "SELECT v FROM params ORDER BY id")[1] == [("one",), ("two",)]


# --------------------------------------------------------------------------- describe


def test_describe_reports_shape_without_executing(env: Env, session: BackendSession) -> None:
    run(session, "CREATE TABLE descr (id INTEGER, v TEXT)")
    assert session.describe("INSERT INTO descr VALUES (1, 'x')") is None
    assert session.describe("INSERT INTO descr VALUES ($1, $2)", [None, None]) is None
    assert run(session, "SELECT count(*) FROM descr")[1] == [("0",)]
    cols = session.describe("SELECT id, v AS label FROM descr WHERE id = $1", [None])
    assert cols is not None and [c.name for c in cols] == ["id", "label"]
    assert cols[0].type_oid == pgt.INT4
    if env.pg:
        # PostgreSQL describes DML ... RETURNING and parameter types too, still without running
        returning = session.describe("INSERT INTO descr VALUES (7, 'z') RETURNING id")
        assert [c.name for c in returning or []] == ["id"]
        assert run(session, "SELECT count(*) FROM descr")[1] == [("0",)]
        assert session.describe_params("SELECT $1::int + 1, $2 || 'x'") == [pgt.INT4, pgt.TEXT]
        assert session.describe("SELECT 'x'::varchar(7) AS s")[0].type_modifier == 7 + 4


def test_describe_query_validates(env: Env, session: BackendSession) -> None:
    run(session, "CREATE TABLE dq (id INTEGER, v TEXT)")
    cols = env.backend.describe_query(env.db, "SELECT id AS a, v FROM dq")
    assert [c.name for c in cols] == ["a", "v"] and cols[0].type_oid == pgt.INT4
    with pytest.raises(PgError) as info:
        env.backend.describe_query(env.db, "SELECT * FROM dq_missing")
    assert info.value.sqlstate == "42P01"


def test_describe_does_not_run_the_query(env: Env, session: BackendSession) -> None:
    # DuckDB: DESCRIBE <query> binds without running (a lazy cursor.sql() relation ran nextval())
    run(session, "CREATE TABLE side (id INTEGER)")
    run(session, "INSERT INTO side VALUES (1), (2)")
    run(session, "CREATE SEQUENCE side_seq")
    assert [c.name for c in session.describe("SELECT nextval('side_seq') AS n FROM side") or []] == ["n"]
    assert [c.name for c in env.backend.describe_query(
        env.db, "SELECT nextval('side_seq') AS n FROM side")] == ["n"]
    assert run(session, "SELECT nextval('side_seq')")[1] == [("1",)]


# --------------------------------------------------------------------------- errors


def test_errors_carry_sqlstate(env: Env, session: BackendSession) -> None:
    missing = error_of(session, "SELECT * FROM no_such_table")
    assert missing.sqlstate == "42P01"
    assert missing.message == 'relation "no_such_table" does not exist'
    syntax = error_of(session, "SELEC 1")
    assert syntax.sqlstate == "42601" and syntax.position == 1
    run(session, "CREATE TABLE uniq (id INTEGER PRIMARY KEY)")
    run(session, "INSERT INTO uniq VALUES (1)")
    dup = error_of(session, "INSERT INTO uniq VALUES (1)")
    if env.pg:
        assert dup.sqlstate == "23505"
        assert dup.detail == "Key (id)=(1) already exists."
        assert missing.position == len("SELECT * FROM ") + 1 and missing.severity == "ERROR"
    else:
        assert dup.sqlstate.startswith("23")
    with pytest.raises(PgError) as info:
        session.describe("SELECT * FROM no_such_table")
    assert info.value.sqlstate == "42P01"
    # the session goes on after errors
    assert run(session, "SELECT count(*) FROM uniq")[1] == [("1",)]


# --------------------------------------------------------------------------- views


def test_relation_exists(env: Env, session: BackendSession) -> None:
    run(session, "CREATE TABLE rel_here (id INTEGER)")
    assert env.backend.relation_exists(env.db, "rel_here")
    assert not env.backend.relation_exists(env.db, "rel_absent")


def test_batch_view_keeps_its_snapshot_until_refreshed(env: Env, session: BackendSession) -> None:
    b, db = env.backend, env.db
    run(session, "CREATE TABLE bv_src (id INTEGER, v TEXT)")
    run(session, "INSERT INTO bv_src VALUES (1, 'a'), (2, 'b')")
    query = "SELECT id, v FROM bv_src"
    assert b.create_batch_view(db, "bv", ("k", "label"), query) == 2
    assert b.relation_exists(db, "bv")
    run(session, "INSERT INTO bv_src VALUES (3, 'c')")
    assert run(session, "SELECT k, label FROM bv ORDER BY k")[1] == [("1", "a"), ("2", "b")]
    assert b.refresh_batch_view(db, "bv", ("k", "label"), query) == 3
    assert run(session, "SELECT k, label FROM bv ORDER BY k")[1] == [("1", "a"), ("2", "b"), ("3", "c")]
    run(session, "DELETE FROM bv_src WHERE id < 3")
    assert b.refresh_batch_view(db, "bv", ("k", "label"), query) == 1
    b.drop_batch_view(db, "bv")
    assert not b.relation_exists(db, "bv")
    b.drop_batch_view(db, "bv")  # IF EXISTS


def test_reader_never_sees_a_half_done_refresh(env: Env, session: BackendSession) -> None:
    b, db = env.backend, env.db
    run(session, "CREATE TABLE iso_src (id INTEGER)")
    run(session, "INSERT INTO iso_src VALUES (1), (2)")
    query = "SELECT id FROM iso_src"
    assert b.create_batch_view(db, "iso_bv", None, query) == 2
    if env.pg:
        # a unique index on plain columns: the refresh runs CONCURRENTLY and does not block readers
        run(session, "CREATE UNIQUE INDEX iso_bv_id ON iso_bv (id)")
    run(session, "INSERT INTO iso_src VALUES (3)")
    reader = b.connect(db, "root")  # a role the upstream knows
    try:
        run(reader, "BEGIN ISOLATION LEVEL REPEATABLE READ" if env.pg else "BEGIN")
        assert run(reader, "SELECT count(*) FROM iso_bv")[1] == [("2",)]
        counts: list[int] = []
        refresher = threading.Thread(
            target=lambda: counts.append(b.refresh_batch_view(db, "iso_bv", None, query)))
        refresher.start()
        refresher.join(JOIN_TIMEOUT_S)
        blocked = refresher.is_alive()
        assert run(reader, "SELECT count(*) FROM iso_bv")[1] == [("2",)]
        run(reader, "COMMIT")
        refresher.join()
        assert not blocked, "the refresh waited for a reader"
        assert counts == [3]
        assert run(reader, "SELECT count(*) FROM iso_bv")[1] == [("3",)]
    finally:
        reader.close()
    b.drop_batch_view(db, "iso_bv")


def test_view_is_always_current(env: Env, session: BackendSession) -> None:
    b, db = env.backend, env.db
    run(session, "CREATE TABLE sv_src (id INTEGER)")
    run(session, "INSERT INTO sv_src VALUES (1)")
    b.create_view(db, "sv", ("x",), "SELECT id FROM sv_src")
    assert run(session, "SELECT x FROM sv")[1] == [("1",)]
    run(session, "INSERT INTO sv_src VALUES (2)")
    assert run(session, "SELECT x FROM sv ORDER BY x")[1] == [("1",), ("2",)]
    assert b.relation_exists(db, "sv")
    b.drop_view(db, "sv")
    assert not b.relation_exists(db, "sv")
    b.drop_view(db, "sv")  # IF EXISTS


def test_view_over_missing_relation_is_42P01(env: Env) -> None:
    with pytest.raises(PgError) as info:
        env.backend.create_view(env.db, "sv_bad", None, "SELECT * FROM sv_missing")
    assert info.value.sqlstate == "42P01"
    with pytest.raises(PgError) as info:
        env.backend.create_batch_view(env.db, "bv_bad", None, "SELECT * FROM bv_missing")
    assert info.value.sqlstate == "42P01"
    assert not env.backend.relation_exists(env.db, "bv_bad")


# --------------------------------------------------------------------------- interrupt


def test_interrupt_cancels_the_running_statement(env: Env, session: BackendSession) -> None:
    started, finished = threading.Event(), threading.Event()

    def interrupter() -> None:
        started.wait()
        # an interrupt that lands before the statement started is a no-op (as in
        # PostgreSQL), so it is repeated until the statement has ended
        while True:
            session.interrupt()
            if finished.wait(0.05):
                return

    thread = threading.Thread(target=interrupter, daemon=True)
    thread.start()
    started.set()
    try:
        err = error_of(session, LONG_QUERY[env.kind])
    finally:
        finished.set()
        thread.join(JOIN_TIMEOUT_S)
    assert err.sqlstate == "57014"
    assert err.message == "canceling statement due to user request"
    # the session is usable afterwards, and an interrupt while idle does nothing
    session.interrupt()
    assert run(session, "SELECT 1")[1] == [("1",)]


# --------------------------------------------------------------------------- PostgreSQL only


#: tests of what only a relaying upstream has (raw bytes, notices, connection loss)
pg_only = pytest.mark.parametrize("env", ["postgres"], indirect=True)


@pg_only
def test_rows_are_the_servers_own_text_bytes(env: Env, session: BackendSession) -> None:
    result = session.execute(
        "SELECT 1.50::numeric AS n, true AS b, NULL::int AS z, "
        "'2024-01-02 03:04:05+02'::timestamptz AS ts, '1 day 02:00'::interval AS i")
    assert result.raw_format == 0
    assert list(result.rows()) == [(b"1.50", b"t", None, b"2024-01-02 01:04:05+00", b"1 day 02:00:00")]
    assert [c.type_oid for c in result.columns or []] == [
        pgt.NUMERIC, pgt.BOOL, pgt.INT4, pgt.TIMESTAMPTZ, pgt.INTERVAL]
    show = session.execute("SHOW DateStyle")
    assert list(show.rows()) == [(b"ISO, MDY",)]
    assert show.completion_tag(1) == "SHOW"  # the upstream's tag, exactly


@pg_only
def test_upstream_notices_are_collected(env: Env, session: BackendSession) -> None:
    result = session.execute("DROP TABLE IF EXISTS notice_absent")
    assert result.tag == "DROP TABLE"
    assert [(n.severity, n.sqlstate, n.message) for n in result.notices] == [
        ("NOTICE", "00000", 'table "notice_absent" does not exist, skipping')]
    assert session.execute("SELECT 1").notices == []


@pg_only
def test_refresh_without_a_usable_unique_index_is_plain(env: Env, session: BackendSession) -> None:
    b, db = env.backend, env.db
    run(session, "CREATE TABLE plain_src (id INTEGER)")
    run(session, "INSERT INTO plain_src VALUES (1), (2)")
    b.create_batch_view(db, "plain_bv", None, "SELECT id FROM plain_src")
    # CONCURRENTLY refuses both of these indexes (55000); a plain refresh works
    run(session, "CREATE UNIQUE INDEX plain_bv_expr ON plain_bv ((id + 0))")
    run(session, "CREATE UNIQUE INDEX plain_bv_part ON plain_bv (id) WHERE id > 0")
    run(session, "INSERT INTO plain_src VALUES (3)")
    assert b.refresh_batch_view(db, "plain_bv", None, "SELECT id FROM plain_src") == 3
    b.drop_batch_view(db, "plain_bv")


@pg_only
def test_unknown_upstream_database_is_3D000(env: Env) -> None:
    with pytest.raises(PgError) as info:
        env.backend.connect(f"pgbarrier_absent_{uuid.uuid4().hex[:8]}", "root")
    assert info.value.sqlstate == "3D000" and info.value.severity == "FATAL"
    env.backend.ensure_database(env.db)  # idempotent


@pg_only
def test_lost_upstream_connection_is_fatal(env: Env, session: BackendSession) -> None:
    (pid,) = run(session, "SELECT pg_backend_pid()")[1][0]
    assert env.dsn is not None
    with psycopg.connect(env.dsn, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s::int)", [pid])
    first = error_of(session, "SELECT 1")
    assert first.severity == "FATAL" and first.sqlstate in ("57P01", "08006")
    second = error_of(session, "SELECT 1")
    assert second.severity == "FATAL" and second.sqlstate == "08006"


# --------------------------------------------------------------------------- parameter types, settings


def test_describe_statement_infers_parameter_types_without_running(env: Env,
                                                                   session: BackendSession) -> None:
    run(session, "CREATE TABLE ptypes (id INTEGER, d DATE, amount NUMERIC(10,2))")
    oids, cols = session.describe_statement(
        "SELECT amount FROM ptypes WHERE id = $1 AND d < $2 LIMIT $3")
    assert oids == [pgt.INT4, pgt.DATE, pgt.INT8]
    assert cols is not None and [c.type_oid for c in cols] == [pgt.NUMERIC]
    oids, cols = session.describe_statement("INSERT INTO ptypes VALUES ($1, $2, $3)")
    assert oids == [pgt.INT4, pgt.DATE, pgt.NUMERIC] and cols is None
    # a type the client gave is kept
    assert session.describe_statement("SELECT $1::int8 AS x", (pgt.INT8,))[0] == [pgt.INT8]
    assert run(session, "SELECT count(*) FROM ptypes")[1] == [("0",)]


def test_client_settings_and_version(env: Env, session: BackendSession) -> None:
    result = session.execute("SET application_name = 'contract'")
    assert result.tag == "SET" and result.parameter_status["application_name"] == "contract"
    assert run(session, "SHOW application_name")[1] == [("contract",)]
    assert run(session, "SELECT version()")[1][0][0].startswith("PostgreSQL 15")
    for sql in ("SET extra_float_digits = 3", "SET client_encoding = 'UTF8'",
                "SET DateStyle = 'ISO, MDY'", "SET TimeZone = 'UTC'",
                "SET standard_conforming_strings = on", "SET IntervalStyle = postgres"):
        assert session.execute(sql).tag == "SET"
    assert session.execute("SET TimeZone = 'Europe/Berlin'").tag == "SET"
    error = error_of(session, "SET TimeZone = 'Nowhere/Atlantis'")
    assert error.sqlstate == "22023"


@pg_only
def test_binary_rows_are_relayed_when_every_column_is_binary(env: Env, session: BackendSession
                                                            ) -> None:
    result = session.execute("SELECT 7::int4 AS a, 1.5::float8 AS b", None, (1,))
    assert result.raw_format == 1
    assert list(result.rows()) == [(b"\x00\x00\x00\x07", b"?\xf8\x00\x00\x00\x00\x00\x00")]
    mixed = session.execute("SELECT 7::int4 AS a, 'x' AS b", None, (1, 0))
    assert mixed.raw_format == 0 and list(mixed.rows()) == [(b"7", b"x")]
