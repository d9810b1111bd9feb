"""The ``postgres`` maintenance database on the DuckDB backend (issue 15, item 6).

PostgreSQL always has a ``postgres`` database, and tools connect to it first (``psql -l``,
``createdb``, BI tools' connection tests). On DuckDB it is an ordinary pgbarrier database
created once per meta store, also for a data dir made before it existed; dropping it is
PostgreSQL's DROP DATABASE (refused while sessions use it) and it stays dropped.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest

from conftest import ServerProcess, start_server, stop_server


def _start(data: Path) -> ServerProcess:
    return start_server("--data-dir", str(data))


def _databases(server: ServerProcess) -> list[str]:
    out = server.psql("-At", "-l", "-F", "|", check=True)
    return sorted(line.split("|")[0] for line in out.stdout.splitlines() if "|" in line)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


def test_postgres_exists_at_first_start_and_tools_connect_to_it(data: Path) -> None:
    server = _start(data)
    try:
        assert _databases(server) == ["dev", "postgres"]
        out = server.psql("-At", "-c", "SELECT current_database()", database="postgres",
                          check=True)
        assert out.stdout.strip() == "postgres"
        with psycopg.connect(server.dsn("postgres"), autocommit=True) as conn:
            assert [r[0] for r in conn.execute(
                "SELECT datname FROM pg_database ORDER BY 1").fetchall()] == ["dev", "postgres"]
            conn.execute("CREATE TABLE kept (a int)")
            conn.execute("INSERT INTO kept VALUES (1)")
        assert (data / "postgres.duckdb").exists()
    finally:
        assert stop_server(server) == 0
    server = _start(data)  # its data is a DuckDB file like any database's
    try:
        out = server.psql("-At", "-c", "SELECT a FROM kept", database="postgres", check=True)
        assert out.stdout.strip() == "1"
    finally:
        assert stop_server(server) == 0


def test_drop_database_postgres_as_postgresql_and_it_stays_dropped(data: Path) -> None:
    server = _start(data)
    try:
        with psycopg.connect(server.dsn("postgres"), autocommit=True), \
                psycopg.connect(server.dsn("dev"), autocommit=True) as dev:
            with pytest.raises(psycopg.errors.ObjectInUse,
                               match='database "postgres" is being accessed by other users'):
                dev.execute("DROP DATABASE postgres")
        with psycopg.connect(server.dsn("dev"), autocommit=True) as dev:
            dev.execute("DROP DATABASE postgres")
        assert _databases(server) == ["dev"]
    finally:
        assert stop_server(server) == 0
    server = _start(data)
    try:
        assert _databases(server) == ["dev"]
        with psycopg.connect(server.dsn("dev"), autocommit=True) as dev:
            dev.execute("CREATE DATABASE postgres")  # and it can come back, as in PostgreSQL
        assert _databases(server) == ["dev", "postgres"]
    finally:
        assert stop_server(server) == 0


def test_a_data_dir_from_before_gets_postgres_at_start(data: Path) -> None:
    server = _start(data)
    try:
        with psycopg.connect(server.dsn("dev"), autocommit=True) as dev:
            dev.execute("DROP DATABASE postgres")
            dev.execute("CREATE TABLE old_data (a int)")
    finally:
        assert stop_server(server) == 0
    # what a meta store written before the maintenance database existed holds: no mark
    with sqlite3.connect(data / "meta.sqlite") as meta:
        assert meta.execute("DELETE FROM meta_info WHERE key = 'done:maintenance_database'"
                            ).rowcount == 1
    server = _start(data)
    try:
        assert _databases(server) == ["dev", "postgres"]
        out = server.psql("-At", "-c", "SELECT count(*) FROM old_data", check=True)
        assert out.stdout.strip() == "0"
    finally:
        assert stop_server(server) == 0
