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
