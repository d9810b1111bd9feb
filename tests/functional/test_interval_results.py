"""Interval results on the DuckDB backend print and decode as PostgreSQL's, months included.

DuckDB's Python API folds an interval's months into 30-day days
(:mod:`pgbarrier.backends.duckdb_intervals` keeps them). Every answer here is compared with
the same statement on the reference PostgreSQL (a fresh database on 127.0.0.1:5432): the
wire text (psycopg with a text loader, psql), the binary bytes, and the values psycopg and
asyncpg decode, for literals, arithmetic and an interval column of a table.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from conftest import fresh_postgres_database, start_server, stop_server

asyncpg = pytest.importorskip("asyncpg")
psycopg = pytest.importorskip("psycopg")
from psycopg.adapt import Loader  # noqa: E402

QUERIES = [
    "SELECT interval '1 month 2 days 03:04:05' AS i",
    "SELECT interval '-1 year -2 mons 3 days -00:00:01.5' AS i, 1 AS x",
    "SELECT interval '14 months' AS a, interval '-2 days 01:00:00' AS b, "
    "interval '0 seconds' AS c, CAST(NULL AS interval) AS d",
    "SELECT interval '1 month' * 3 + interval '40 days' AS i",
    "SELECT i, n FROM ivals ORDER BY n",
    "SELECT * FROM ivals WHERE i > interval '1 day' ORDER BY n",
]
TABLE = [
    "CREATE TABLE ivals (n integer, i interval)",
    "INSERT INTO ivals VALUES (1, interval '1 month 2 days 03:04:05'), "
    "(2, interval '-1 year 2 mons -3 days 00:00:00.25'), (3, NULL), (4, interval '36 hours')",
]


class _Text(Loader):
    def load(self, data):
        return bytes(data).decode()


class _Raw(Loader):
    format = psycopg.pq.Format.BINARY

    def load(self, data):
        return bytes(data)


@pytest.fixture(scope="module")
def dsns() -> Iterator[dict[str, str]]:
    srv = start_server()
    try:
        with fresh_postgres_database("pgb_iv") as pg_dsn:
            out = {"duckdb": srv.dsn(), "postgres": pg_dsn}
            for dsn in out.values():
                with psycopg.connect(dsn, autocommit=True) as conn:
                    for stmt in TABLE:
                        conn.execute(stmt)
            yield out
    finally:
        assert stop_server(srv) == 0


def _psycopg(dsn: str, sql: str, binary: bool, raw: bool) -> list[tuple]:
    with psycopg.connect(dsn) as conn:
        if raw:
            conn.adapters.register_loader("interval", _Raw if binary else _Text)
        return conn.cursor(binary=binary).execute(sql).fetchall()


def _asyncpg(dsn: str, sql: str) -> list[tuple]:
    async def go() -> list[tuple]:
        conn = await asyncpg.connect(dsn if dsn.startswith("postgresql:") else
                                     "postgresql://" + _url(dsn))
        try:
            return [tuple(r) for r in await conn.fetch(sql)]
        finally:
            await conn.close()
    return asyncio.run(go())


def _url(kv: str) -> str:
    parts = dict(p.split("=", 1) for p in kv.split())
    return f"{parts['user']}@{parts['host']}:{parts['port']}/{parts['dbname']}"


@pytest.mark.parametrize("sql", QUERIES)
@pytest.mark.parametrize("way", ["text-wire", "binary-wire", "psycopg-text", "psycopg-binary",
                                 "asyncpg"])
def test_interval_as_postgres(dsns, sql, way):
    def run(dsn: str) -> list[tuple]:
        if way == "asyncpg":
            return _asyncpg(dsn, sql)
        return _psycopg(dsn, sql, binary="binary" in way, raw=way.endswith("wire"))
    expected = run(dsns["postgres"])
    assert run(dsns["duckdb"]) == expected


def test_interval_text_carries_months(dsns):
    """The text a client gets says months, as PostgreSQL's does (not 30-day days)."""
    got = _psycopg(dsns["duckdb"], QUERIES[0], binary=False, raw=True)
    assert got == [("1 mon 2 days 03:04:05",)]
    raw = _psycopg(dsns["duckdb"], QUERIES[0], binary=True, raw=True)[0][0]
    assert int.from_bytes(raw[12:16], "big") == 1  # months, then days 2
    assert int.from_bytes(raw[8:12], "big") == 2
