"""PostgreSQL session habits (issue 15, item 5) on both backends, PostgreSQL being the
reference: search_path, TimeZone, transaction modes, settings, SQL PREPARE/EXECUTE,
cursors. Each test runs the same statements against pgbarrier over DuckDB and over
PostgreSQL and expects PostgreSQL's answers.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import psycopg
import pytest

from conftest import inprocess_app

DATABASE = "sess_habits"


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def dsn(request) -> Iterator[str]:
    with inprocess_app(request.param, DATABASE) as app:
        yield f"host=127.0.0.1 port={app.server.port} dbname={DATABASE} user=postgres"


def one(conn: psycopg.Connection, sql: str):
    return conn.execute(sql).fetchone()[0]


def test_search_path_resolves_unqualified_names(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS habits_s CASCADE")
        conn.execute("CREATE SCHEMA habits_s")
        try:
            conn.execute("CREATE TABLE habits_s.sp_t (a int)")
            conn.execute("INSERT INTO habits_s.sp_t VALUES (7)")
            with pytest.raises(psycopg.errors.UndefinedTable):
                conn.execute("SELECT a FROM sp_t")
            conn.execute("SET search_path = habits_s, public")
            assert one(conn, "SHOW search_path") == "habits_s, public"
            assert one(conn, "SELECT a FROM sp_t") == 7
            assert conn.execute("SELECT current_schema(), current_schemas(false)").fetchone() \
                == ("habits_s", ["habits_s", "public"])
            assert one(conn, "SELECT current_schemas(true)")[0] == "pg_catalog"
            conn.execute("CREATE TABLE sp_new (b int)")  # created in the first schema
            assert one(conn, "SELECT table_schema FROM information_schema.tables "
                             "WHERE table_name = 'sp_new'") == "habits_s"
            conn.execute("RESET search_path")
            assert one(conn, "SELECT current_schema()") == "public"
            with pytest.raises(psycopg.errors.UndefinedTable):
                conn.execute("SELECT a FROM sp_t")
        finally:
            conn.execute("RESET search_path")
            conn.execute("DROP SCHEMA habits_s CASCADE")


def test_search_path_skips_missing_schemas_and_shows_as_postgres(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET search_path = 'My S', Habits_Missing, public")
        assert one(conn, "SHOW search_path") == '"My S", habits_missing, public'
        assert one(conn, "SELECT current_schemas(false)") == ["public"]
        conn.execute("CREATE SCHEMA habits_missing")  # exists now: on the path from now on
        try:
            assert one(conn, "SELECT current_schema()") == "habits_missing"
        finally:
            conn.execute("DROP SCHEMA habits_missing")
        assert one(conn, "SELECT current_schema()") == "public"
        conn.execute("SET search_path TO DEFAULT")
        assert one(conn, "SHOW search_path") == '"$user", public'


def _raw_text(conn: psycopg.Connection) -> None:
    """timestamptz values as the server's text, not parsed by psycopg."""
    from psycopg.types.string import TextLoader

    conn.adapters.register_loader("timestamptz", TextLoader)


def test_timezone_applies_to_timestamptz_text_and_binary(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        _raw_text(conn)
        value = "SELECT '2024-01-01 00:00:00+00'::timestamptz"
        assert one(conn, value) == "2024-01-01 00:00:00+00"
        conn.execute("SET TimeZone = 'Asia/Tokyo'")
        assert one(conn, value) == "2024-01-01 09:00:00+09"
        conn.execute("SET TIME ZONE 'Asia/Kolkata'")
        assert one(conn, value) == "2024-01-01 05:30:00+05:30"
        conn.execute("SET TimeZone = 'America/New_York'")
        assert one(conn, "SELECT '2024-07-01 12:00:00+00'::timestamptz") == \
            "2024-07-01 08:00:00-04"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET TimeZone = 'Asia/Tokyo'")
        got = conn.cursor(binary=True).execute(
            "SELECT '2024-01-01 00:00:00+00'::timestamptz").fetchone()[0]
        assert got == dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
        assert got.utcoffset() == dt.timedelta(hours=9)  # psycopg reads the session zone


def test_timezone_from_startup_parameter(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True, options="-c TimeZone=Asia/Tokyo") as conn:
        _raw_text(conn)
        assert conn.info.parameter_status("TimeZone") == "Asia/Tokyo"
        assert one(conn, "SELECT '2024-01-01 00:00:00+00'::timestamptz") == \
            "2024-01-01 09:00:00+09"


def test_timezone_from_pgtz(dsn) -> None:
    import os
    import subprocess

    params = dict(p.split("=", 1) for p in dsn.split())
    out = subprocess.run(
        ["psql", "-X", "-At", "-h", params["host"], "-p", params["port"], "-U", params["user"],
         "-d", params["dbname"], "-c", "SHOW TimeZone",
         "-c", "SELECT '2024-01-01 00:00:00+00'::timestamptz"],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PGTZ": "Asia/Tokyo"})
    assert out.stdout.split() == ["Asia/Tokyo", "2024-01-01", "09:00:00+09"], out.stderr
