"""Statements a hostile or careless client sends get PostgreSQL's errors, never XX000,
and the session goes on (both backends)."""

from __future__ import annotations

import psycopg
import pytest


DEPTH = 5000


@pytest.mark.parametrize("sql", [
    "CREATE MATERIALIZED VIEW deep_v AS SELECT " + "(" * DEPTH + "1" + ")" * DEPTH,
    "CREATE MATERIALIZED VIEW deep_b WITH (refresh.interval.sec = 5) AS SELECT "
    + "(" * DEPTH + "1" + ")" * DEPTH,
    "SELECT * FROM rw_catalog.rw_databases WHERE " + "(" * DEPTH + "true" + ")" * DEPTH,
], ids=["streaming-mv", "batch-mv", "rw_catalog"])
def test_deeply_nested_statements_are_54001_or_postgres_own_answer(backend_server, sql):
    with psycopg.connect(backend_server.dsn(), autocommit=True) as conn:
        with pytest.raises(psycopg.Error) as info:
            conn.execute(sql)
        assert info.value.sqlstate in ("54001", "42601"), info.value
        assert conn.execute("SELECT 1").fetchone() == (1,)
