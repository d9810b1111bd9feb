"""Statements a hostile or careless client sends get PostgreSQL's errors, never XX000,
and the session goes on (both backends)."""

from __future__ import annotations

import psycopg
import pytest

from tests.conftest import UPSTREAM, require_postgres, start_server, stop_server

DEPTH = 5000


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def any_server(request):
    extra: tuple[str, ...] = ()
    if request.param == "postgres":
        require_postgres()
        extra = ("--upstream", UPSTREAM)
    srv = start_server(*extra)
    yield srv
    assert stop_server(srv) == 0, "".join(srv.log)


@pytest.mark.parametrize("sql", [
    "CREATE MATERIALIZED VIEW deep_v AS SELECT " + "(" * DEPTH + "1" + ")" * DEPTH,
    "CREATE MATERIALIZED VIEW deep_b WITH (refresh.interval.sec = 5) AS SELECT "
    + "(" * DEPTH + "1" + ")" * DEPTH,
    "SELECT * FROM rw_catalog.rw_databases WHERE " + "(" * DEPTH + "true" + ")" * DEPTH,
], ids=["streaming-mv", "batch-mv", "rw_catalog"])
def test_deeply_nested_statements_are_54001_or_postgres_own_answer(any_server, sql):
    with psycopg.connect(any_server.dsn(), autocommit=True) as conn:
        with pytest.raises(psycopg.Error) as info:
            conn.execute(sql)
        assert info.value.sqlstate in ("54001", "42601"), info.value
        assert conn.execute("SELECT 1").fetchone() == (1,)
