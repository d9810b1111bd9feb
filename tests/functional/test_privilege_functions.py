"""PostgreSQL's privilege inquiry functions and ::reg* casts on DuckDB answer as PostgreSQL.

DuckDB's own has_*_privilege macros say true for anything, a name that names nothing
and a privilege word that means nothing included, and its ::regclass of a missing name is
NULL. pgbarrier has no privileges on DuckDB, so an existing object is the session's
(true); what PostgreSQL refuses, it refuses with PostgreSQL's SQLSTATE and message. Each
statement runs on PostgreSQL itself (a fresh database with the same objects) and on the
DuckDB backend, and the outcomes are compared.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest

from conftest import ServerProcess, require_postgres, start_server, stop_server

SETUP = ("CREATE TABLE pt (a int, b text)", "CREATE SEQUENCE ps", "CREATE SCHEMA pschema",
         "CREATE TABLE pschema.inner_t (x int)")

#: (statement, also compare the rows): the same outcome on both backends, row or error
CASES = [
    "SELECT has_table_privilege('pt', 'SELECT')",
    "SELECT has_table_privilege('public.pt', 'select, INSERT WITH GRANT OPTION')",
    "SELECT has_table_privilege('pschema.inner_t', 'UPDATE')",
    "SELECT has_table_privilege('nosuch_tbl', 'SELECT')",
    "SELECT has_table_privilege('pt', 'FLY')",
    "SELECT has_table_privilege('pt', 'SELECT,FLY')",
    "SELECT has_table_privilege('nosuch_tbl', 'FLY')",
    "SELECT has_table_privilege(4294967000, 'SELECT')",
    "SELECT has_table_privilege('nosuch_role', 'pt', 'SELECT')",
    "SELECT has_table_privilege(current_user, 'pt', 'DELETE')",
    "SELECT has_table_privilege('public', 'pt', 'SELECT')",
    "SELECT has_database_privilege('public', current_database(), 'CONNECT, TEMP')",
    "SELECT has_database_privilege('public', current_database(), 'CREATE')",
    "SELECT has_schema_privilege('public', 'public', 'USAGE')",
    "SELECT has_schema_privilege('public', 'public', 'CREATE')",
    "SELECT has_schema_privilege('public', 'pschema', 'USAGE')",
    "SELECT has_function_privilege('public', 'now()', 'EXECUTE')",
    "SELECT has_sequence_privilege('public', 'ps', 'USAGE')",
    "SELECT has_any_column_privilege('pt', 'SELECT')",
    "SELECT has_any_column_privilege('pt', 'DELETE')",
    "SELECT has_column_privilege('pt', 'b', 'UPDATE')",
    "SELECT has_column_privilege('pt', 'nosuch_col', 'SELECT')",
    "SELECT has_column_privilege('pt', 'a', 'TRUNCATE')",
    "SELECT has_sequence_privilege('ps', 'USAGE')",
    "SELECT has_sequence_privilege('pt', 'USAGE')",
    "SELECT has_sequence_privilege('ps', 'DELETE')",
    "SELECT has_schema_privilege('public', 'CREATE')",
    "SELECT has_schema_privilege('pschema', 'usage')",
    "SELECT has_schema_privilege('nosuch_schema', 'USAGE')",
    "SELECT has_schema_privilege('public', 'SELECT')",
    "SELECT has_database_privilege(current_database(), 'CONNECT')",
    "SELECT has_database_privilege(current_database(), 'temp')",
    "SELECT has_database_privilege('nosuch_db', 'CONNECT')",
    "SELECT has_database_privilege(current_database(), 'USAGE')",
    "SELECT has_function_privilege('now()', 'EXECUTE')",
    "SELECT has_function_privilege('nosuch_fn(integer)', 'EXECUTE')",
    "SELECT has_function_privilege('now()', 'USAGE')",
    "SELECT 'nosuch_tbl'::regclass",
    "SELECT 'nosuch_type'::regtype",
    "SELECT 'nosuch_schema'::regnamespace",
    "SELECT to_regclass('nosuch_tbl') IS NULL",
    "SELECT count(*) FROM pg_class WHERE oid = 'pt'::regclass",
    "SELECT count(*) FROM pg_class WHERE oid = 'pschema.inner_t'::regclass",
    "SELECT count(*) FROM pg_type WHERE oid = 'integer'::regtype",
]


def _outcome(conn: psycopg.Connection, sql: str) -> tuple:
    try:
        return ("rows", conn.execute(sql).fetchall())
    except psycopg.Error as exc:
        return ("error", exc.sqlstate, exc.diag.message_primary)


@pytest.fixture(scope="module")
def both() -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    dsn = require_postgres()
    name = f"pgb_priv_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    srv: ServerProcess = start_server("--data-dir", ":memory:")
    try:
        with psycopg.connect(dsn.rsplit("/", 1)[0] + "/" + name, autocommit=True) as pg, \
                psycopg.connect(srv.dsn("dev", "postgres"), autocommit=True) as duck:
            for conn in (pg, duck):
                for sql in SETUP:
                    conn.execute(sql)
            yield pg, duck
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.parametrize("sql", CASES)
def test_the_outcome_is_postgresqls(both, sql):
    pg, duck = both
    assert _outcome(duck, sql) == _outcome(pg, sql)
