"""A session keeps its statements' row shapes (a prepared statement's Describe at each
Bind), and forgets them when DDL anywhere in the database may have changed one."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from conftest import ServerProcess, start_server, stop_server


@pytest.fixture(scope="module")
def srv() -> Iterator[ServerProcess]:
    server = start_server("--data-dir", ":memory:")
    try:
        yield server
    finally:
        assert stop_server(server) == 0, "".join(server.log)


def _shape(conn: psycopg.Connection, sql: str) -> list[str]:
    cur = conn.execute(sql, prepare=True)  # Parse once, then Bind/Describe/Execute
    cur.fetchall()
    assert cur.description is not None
    return [d.name for d in cur.description]


def test_ddl_in_another_session_reshapes_a_prepared_statement(srv):
    with psycopg.connect(srv.dsn("dev", "postgres"), autocommit=True) as a, \
            psycopg.connect(srv.dsn("dev", "postgres"), autocommit=True) as b:
        a.execute("CREATE TABLE dc_t (x int)")
        for _ in range(3):
            assert _shape(b, "SELECT * FROM dc_t") == ["x"]
        a.execute("ALTER TABLE dc_t ADD COLUMN y text")
        assert _shape(b, "SELECT * FROM dc_t") == ["x", "y"]
        a.execute("BEGIN")
        a.execute("ALTER TABLE dc_t ADD COLUMN z int")
        assert _shape(a, "SELECT * FROM dc_t") == ["x", "y", "z"]  # its own, uncommitted
        assert _shape(b, "SELECT * FROM dc_t") == ["x", "y"]
        a.execute("ROLLBACK")
        assert _shape(a, "SELECT * FROM dc_t") == ["x", "y"]
        a.execute("DROP TABLE dc_t")


def test_a_batch_view_altered_by_a_control_statement_is_reshaped(srv):
    with psycopg.connect(srv.dsn("dev", "postgres"), autocommit=True) as a, \
            psycopg.connect(srv.dsn("dev", "postgres"), autocommit=True) as b:
        a.execute("CREATE TABLE dc_src (k int, v int)")
        a.execute("CREATE MATERIALIZED VIEW dc_mv WITH (refresh.interval.sec = 3600) AS "
                  "SELECT k FROM dc_src")
        for _ in range(2):
            assert _shape(b, "SELECT * FROM dc_mv") == ["k"]
        a.execute("DROP MATERIALIZED VIEW dc_mv")
        a.execute("CREATE MATERIALIZED VIEW dc_mv WITH (refresh.interval.sec = 3600) AS "
                  "SELECT k, v, k + v AS s FROM dc_src")
        assert _shape(b, "SELECT * FROM dc_mv") == ["k", "v", "s"]
        a.execute("DROP MATERIALIZED VIEW dc_mv")
        a.execute("DROP TABLE dc_src")
