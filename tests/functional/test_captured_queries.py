"""Captured client catalog traffic runs on the DuckDB backend with PostgreSQL's result shape.

Every query in ``tests/data/client-queries/*.json`` (psql 15, DBeaver, pgcli, pgAdmin,
Metabase, Grafana, Superset, and pgjdbc / SQLAlchemy when present) runs through pgbarrier twice, with the same objects
created first: over the embedded DuckDB backend and over an upstream PostgreSQL 15 (the
reference). The DuckDB run must succeed where PostgreSQL succeeds (or fail with the same
SQLSTATE where PostgreSQL fails), return the same column names and type OIDs, and list
pgbarrier's objects wherever the reference lists them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from conftest import inprocess_app

DATA = Path(__file__).resolve().parents[1] / "data" / "client-queries"
DATABASE = "cq_catalog"
#: objects the fixture creates; their names must appear in DuckDB's rows where they
#: appear in PostgreSQL's
OBJECTS = ("cq_items", "cq_view", "cq_stream", "cq_batch", "cq_orders", "cq_orders_qty_idx",
           "cq_orders_pkey", "cq_orders_item_id_fkey", "cq_orders_code_key", "cq_orders_qty_check",
           "cq_orders_id_seq", "the items", "item name")
SETUP = [
    "CREATE TABLE cq_items (id integer PRIMARY KEY, name text NOT NULL DEFAULT 'x', "
    "price numeric(10,2))",
    "CREATE VIEW cq_view AS SELECT id, name FROM cq_items",
    "CREATE MATERIALIZED VIEW cq_stream AS SELECT id, price FROM cq_items",
    "CREATE MATERIALIZED VIEW cq_batch WITH (refresh.interval.sec = 3600) AS "
    "SELECT count(*) AS n FROM cq_items",
    # keys, an index, a sequence and comments for the constraint, index and comment readers
    "CREATE TABLE cq_orders (id serial PRIMARY KEY, item_id integer REFERENCES cq_items(id), "
    "code varchar(20) UNIQUE, qty integer CHECK (qty > 0))",
    "CREATE INDEX cq_orders_qty_idx ON cq_orders (qty)",
    "COMMENT ON TABLE cq_items IS 'the items'",
    "COMMENT ON COLUMN cq_items.name IS 'item name'",
]

#: the queries the DuckDB backend answers differently on purpose, with the reason
KNOWN_DIFFERENCES: dict[tuple[str, int], str] = {}
#: on the upstream backend a streaming view is a plain view (backends/postgres.py), on
#: DuckDB a materialized view (issue 6: \dm lists it): view listings differ on purpose
NOT_COMPARED = {"cq_stream"}


def _load() -> list[tuple[str, int, str]]:
    out = []
    for path in sorted(DATA.glob("*.json")):
        doc = json.loads(path.read_text())
        client = path.stem
        out += [(client, i, q) for i, q in enumerate(doc["queries"])]
    return out


QUERIES = _load()


@dataclass
class Outcome:
    columns: list[tuple[str, int]] | None = None
    rows: list[tuple] | None = None
    sqlstate: str | None = None


def _run_all(port: int) -> dict[tuple[str, int], Outcome]:
    results: dict[tuple[str, int], Outcome] = {}
    dsn = f"host=127.0.0.1 port={port} dbname={DATABASE} user=postgres"
    with psycopg.connect(dsn, autocommit=True) as conn:
        for sql in SETUP:
            conn.execute(sql)
        for client, i, sql in QUERIES:
            try:
                # a fresh connection per query: a SET in one must not change the next
                with psycopg.connect(dsn, autocommit=True) as c:
                    cur = c.execute(sql, prepare=False)
                    cols = [(d.name, d.type_code) for d in cur.description or ()]
                    rows = cur.fetchall() if cur.description else []
                results[(client, i)] = Outcome(cols, rows)
            except psycopg.Error as exc:
                results[(client, i)] = Outcome(sqlstate=exc.sqlstate or "?")
    return results


@pytest.fixture(scope="module")
def outcomes() -> Iterator[dict[str, dict[tuple[str, int], Outcome]]]:
    found = {}
    for backend in ("duckdb", "postgres"):
        with inprocess_app(backend, DATABASE) as app:
            found[backend] = _run_all(app.server.port)
    yield found


def _names(rows: list[tuple]) -> set[str]:
    return {v for row in rows for v in row if isinstance(v, str) and v in OBJECTS}


@pytest.mark.parametrize(("client", "index", "sql"), QUERIES,
                         ids=[f"{c}#{i}" for c, i, _ in QUERIES])
def test_captured_query_has_postgres_shape(outcomes, client, index, sql) -> None:
    known = KNOWN_DIFFERENCES.get((client, index))
    if known is None:
        _check_shape(outcomes, client, index, sql)
        return
    try:
        _check_shape(outcomes, client, index, sql)
    except AssertionError:
        pytest.xfail(known)
    pytest.fail(f"now matches PostgreSQL: drop it from KNOWN_DIFFERENCES ({known})")


def _check_shape(outcomes, client, index, sql) -> None:
    ref = outcomes["postgres"][(client, index)]
    got = outcomes["duckdb"][(client, index)]
    if ref.sqlstate is not None:
        assert got.sqlstate == ref.sqlstate, f"PostgreSQL fails with {ref.sqlstate}: {sql}"
        return
    assert got.sqlstate is None, f"DuckDB backend failed with {got.sqlstate}: {sql}"
    assert got.columns == ref.columns
    missing = _names(ref.rows) - _names(got.rows) - NOT_COMPARED
    assert not missing, f"objects PostgreSQL lists but DuckDB does not: {missing}"


def test_every_captured_query_is_counted(outcomes) -> None:
    """The per-client tally the issue asks for (printed with -s), and a floor on it."""
    tally: dict[str, list[int]] = {}
    for (client, index), got in outcomes["duckdb"].items():
        ok = got.sqlstate is None or got.sqlstate == outcomes["postgres"][(client, index)].sqlstate
        tally.setdefault(client, [0, 0])[0 if ok else 1] += 1
    print("\ncaptured queries on DuckDB (run / failed):", tally)
    assert all(failed <= sum(1 for c, _ in KNOWN_DIFFERENCES if c == client)
               for client, (_, failed) in tally.items())
