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


def test_a_failing_manual_refresh_answers_the_backends_own_error(backend_server):
    with psycopg.connect(backend_server.dsn(), autocommit=True) as conn:
        conn.execute("DROP MATERIALIZED VIEW IF EXISTS casts_bv")
        conn.execute("DROP TABLE IF EXISTS casts_src")
        conn.execute("CREATE TABLE casts_src (a text)")
        conn.execute("INSERT INTO casts_src VALUES ('1')")
        conn.execute("CREATE MATERIALIZED VIEW casts_bv WITH (refresh.interval.sec = 3600) "
                     "AS SELECT a::int AS n FROM casts_src")
        conn.execute("INSERT INTO casts_src VALUES ('x')")  # the next run cannot cast it
        with pytest.raises(psycopg.Error) as info:
            conn.execute("REFRESH MATERIALIZED VIEW casts_bv")
        assert info.value.sqlstate == "22P02", info.value
        # the view keeps its last result; the failure is in the history
        assert conn.execute("SELECT n FROM casts_bv").fetchall() == [(1,)]
        (status,) = conn.execute(
            "SELECT status FROM rw_catalog.rw_refresh_history WHERE job = 'casts_bv' "
            "ORDER BY run_id DESC LIMIT 1").fetchone()
        assert status == "failed"
        conn.execute("DROP MATERIALIZED VIEW casts_bv")
        conn.execute("DROP TABLE casts_src")
