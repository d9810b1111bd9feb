"""RisingWave's rule holds transitively (issue 12, item 5): a batch-refresh or streaming
view whose query reads a batch-refresh view, directly or through any chain of plain views
(schema-qualified, quoted, in a join or a subquery), is 0A000 with RisingWave's wording, on
both backends; plain views over ordinary tables (or a CTE that merely shares the batch
view's name) stay fine. Each backend resolves the views with its own catalog."""

from __future__ import annotations

import os
from collections.abc import Iterator

import psycopg
import pytest

MESSAGE = "creating streaming jobs on batch refresh materialized views is not supported"
BATCH = "WITH (refresh.interval.sec = 60) "
KINDS = {"batch": BATCH, "streaming": ""}


@pytest.fixture(scope="module")
def conn(backend_server) -> Iterator[psycopg.Connection]:
    """A fresh database with batch view ``bm``, table ``t`` and chains of plain views."""
    db = f"vr_{os.getpid()}"
    with psycopg.connect(backend_server.dsn(), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {db}")
        admin.execute(f"CREATE DATABASE {db}")
    c = psycopg.connect(backend_server.dsn(db), autocommit=True)
    try:
        for sql in [
            "CREATE TABLE t (a int)",
            "INSERT INTO t VALUES (1), (2)",
            f"CREATE MATERIALIZED VIEW bm {BATCH}AS SELECT a FROM t",
            "CREATE VIEW over_batch AS SELECT * FROM bm",
            "CREATE SCHEMA rules_s",
            "CREATE VIEW rules_s.deep1 AS SELECT a FROM bm WHERE a > 0",
            'CREATE VIEW "Deep Two" AS SELECT * FROM rules_s.deep1',
            'CREATE VIEW deep3 AS SELECT a + 1 AS b FROM "Deep Two"',
            "CREATE VIEW over_t AS SELECT a FROM t",
            "CREATE VIEW over_over_t AS SELECT * FROM over_t",
            "CREATE VIEW cte_named_bm AS WITH bm AS (SELECT 7 AS a) SELECT a FROM bm",
        ]:
            c.execute(sql)
        yield c
    finally:
        c.close()
        # DROP DATABASE takes bm with it, although plain views depend on it upstream
        with psycopg.connect(backend_server.dsn(), autocommit=True) as admin:
            admin.execute(f"DROP DATABASE {db}")


def _refused(conn: psycopg.Connection, kind: str, query: str) -> psycopg.Error:
    with pytest.raises(psycopg.Error) as info:
        conn.execute(f"CREATE MATERIALIZED VIEW refused_mv {KINDS[kind]}AS {query}")
    err = info.value
    assert err.sqlstate == "0A000", err
    assert err.diag.message_primary == MESSAGE
    # nothing was created
    assert conn.execute("SELECT count(*) FROM pg_class WHERE relname = 'refused_mv'"
                        ).fetchone() == (0,)
    return err


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_direct(conn, kind):
    err = _refused(conn, kind, "SELECT a FROM bm")
    assert err.diag.message_detail == '"bm" is a batch refresh materialized view.'


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_one_view_deep(conn, kind):
    err = _refused(conn, kind, "SELECT * FROM over_batch")
    assert err.diag.message_detail == (
        '"bm" is a batch refresh materialized view. The query reads it through view '
        '"over_batch" (over_batch -> bm).')


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_three_deep_qualified_and_quoted(conn, kind):
    err = _refused(conn, kind, "SELECT b FROM deep3")
    assert err.diag.message_detail == (
        '"bm" is a batch refresh materialized view. The query reads it through views '
        '"deep3", "Deep Two", "rules_s.deep1" (deep3 -> Deep Two -> rules_s.deep1 -> bm).')
    _refused(conn, kind, 'SELECT * FROM "Deep Two"')
    _refused(conn, kind, "SELECT a FROM rules_s.deep1")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_through_a_join_or_a_subquery(conn, kind):
    _refused(conn, kind, "SELECT t.a FROM t JOIN (SELECT a FROM over_batch) s ON s.a = t.a")
    _refused(conn, kind, "SELECT a FROM t WHERE a IN (SELECT b FROM deep3)")
    _refused(conn, kind, "WITH x AS (SELECT * FROM over_batch) SELECT count(*) FROM x")


def test_a_view_created_later_is_seen(conn):
    # the rule is checked against the catalog as it is at CREATE time
    conn.execute("CREATE VIEW late_view AS SELECT a FROM over_t UNION ALL SELECT b FROM deep3")
    err = _refused(conn, "streaming", "SELECT * FROM late_view")
    assert "late_view -> deep3" in err.diag.message_detail


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_plain_views_over_tables_are_fine(conn, kind):
    for name, query in [(f"ok_{kind}_1", "SELECT a FROM over_over_t"),
                        (f"ok_{kind}_2", "SELECT a FROM cte_named_bm"),
                        (f"ok_{kind}_3", "SELECT o.a FROM over_t o JOIN t USING (a)")]:
        conn.execute(f"CREATE MATERIALIZED VIEW {name} {KINDS[kind]}AS {query}")
        rows = sorted(conn.execute(f"SELECT * FROM {name}").fetchall())
        expected = sorted(conn.execute(query).fetchall())
        assert rows == expected and rows
        conn.execute(f"DROP MATERIALIZED VIEW {name}")


def test_a_long_chain(conn):
    names = [f"chain_{i}" for i in range(80)]
    try:
        prev = "bm"
        for name in names:
            conn.execute(f"CREATE VIEW {name} AS SELECT a FROM {prev}")
            prev = name
        err = _refused(conn, "batch", f"SELECT a FROM {names[-1]}")
        assert err.diag.message_detail.endswith(
            "(" + " -> ".join([*reversed(names), "bm"]) + ").")
    finally:
        for name in reversed(names):
            conn.execute(f"DROP VIEW IF EXISTS {name}")
