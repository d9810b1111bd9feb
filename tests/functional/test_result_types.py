"""Result types, values and column names as PostgreSQL 15 gives them, on the DuckDB backend.

Each statement runs on PostgreSQL (a scratch database) and on a DuckDB-backed pgbarrier
server, on the same table, and everything a driver sees must be the same: each column's
name, type OID and type modifier in the RowDescription, and each value's bytes as sent, in
text format and in binary format (psycopg, ``cursor(binary=True)``); asyncpg (binary
codecs chosen by OID) reads the same values; ``pg_typeof`` answers the same names; a
statement described before it runs (Parse/Describe) has the same shape as when it runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.conftest import fresh_postgres_database, start_server, stop_server

SETUP = (
    "CREATE TABLE t (i2 smallint, i4 integer, i8 bigint, n2 numeric(10,2), f8 double precision, "
    "tx text, vc varchar(10), d date, ts timestamp, g integer)",
    "INSERT INTO t VALUES "
    "(1, 1, 1, 1.25, 1.5, 'a', 'ab', '2024-01-02', '2024-01-02 03:04:05.5', 1), "
    "(2, 2, 2, 2.50, 2.5, 'bc', 'cd', '2024-03-04', '2024-03-04 05:06:07', 1), "
    "(3, 4, 10, 3.00, 3.25, 'def', 'efg', '2023-12-31', '2023-12-31 23:59:59.999999', 2)",
)

#: statements whose names, types and values must be PostgreSQL's exactly
STATEMENTS = [
    # aggregates
    "SELECT sum(i2), sum(i4), sum(i8), sum(n2), sum(f8), count(*), count(i4) FROM t",
    "SELECT avg(i2), avg(i4), avg(i8), avg(n2), avg(f8) FROM t",
    "SELECT stddev(i4), stddev_samp(i8), stddev_pop(i2), variance(i4), var_samp(n2), "
    "var_pop(n2), stddev(f8) FROM t",
    "SELECT min(i2), max(i8), min(n2), max(vc), min(tx), max(d), min(ts) FROM t",
    "SELECT bit_and(i4), bit_or(i2), bool_and(i4 > 0), bool_or(i4 > 3), string_agg(tx, ','), "
    "array_agg(i4 ORDER BY i4) FROM t",
    "SELECT count(DISTINCT i4), sum(DISTINCT i4), avg(DISTINCT i4) FROM t",
    "SELECT sum(i4), avg(i4), stddev(i4) FROM t WHERE false",
    "SELECT g, sum(i4), avg(i8), round(avg(n2), 1) FROM t GROUP BY g ORDER BY g",
    "SELECT g, avg(i4) AS a FROM t GROUP BY g ORDER BY a DESC",
    "SELECT avg(i4) FILTER (WHERE g = 1), sum(i4) FILTER (WHERE g = 2) FROM t",
    "SELECT avg(x) FROM (VALUES (1), (1), (1)) v(x)",
    "SELECT avg(x) FROM (VALUES (100000000), (1)) v(x)",
    "SELECT avg(x), stddev(x), variance(x) FROM (VALUES (1.5), (2.25), (4)) v(x)",
    "SELECT stddev(x), variance(x) FROM (VALUES (7), (7)) v(x)",
    "SELECT stddev(x) FROM (VALUES (1)) v(x)",
    # numeric arithmetic and rounding
    "SELECT 1.0/3, 10.0/4, 1/3.0, 2.5 * 2, 1.5 + 1, 100.0 * 3 / 7",
    "SELECT sum(i4)/count(*), sum(i8)/count(*), 100.0 * count(*) / sum(count(*)) over () "
    "FROM t GROUP BY g ORDER BY g",
    "SELECT round(avg(i4), 2), round(avg(n2), 1), round(avg(f8)::numeric, 3), "
    "avg(i4)::numeric(10,2), avg(i4) * 2, coalesce(avg(i4), 0) FROM t",
    "SELECT round(2.675, 2), round(-2.5), round(1234.5, -2), trunc(2.29, 1), ceil(-1.5), "
    "floor(-1.5), abs(-2.50)",
    "SELECT n2 / 3, n2 * n2, n2 + 1, -n2, round(n2, 1), round(n2), ceil(n2), floor(n2), "
    "abs(n2), trunc(n2, 1) FROM t ORDER BY i4",
    "SELECT i4::numeric, i8::numeric / 3, f8::numeric, '1.50'::numeric, 12.345::numeric(4,2), "
    "i4::numeric(6,3) FROM t ORDER BY t.i4",
    "SELECT i4 + i4, i4 * 2, i2 + i2, i2 * 2, i8 + 1, i4 - i8, i4 / 2, f8 * 2, -i2, i4 % 3, "
    "mod(i4, 3), mod(i8, 3) FROM t ORDER BY i4",
    "SELECT round(i8 * 1.0), ceil(f8), floor(f8), abs(i2), sqrt(2), power(2, 10), sign(-2.5), "
    "factorial(5) FROM t ORDER BY i4",
    # strings, arrays, dates
    "SELECT length(tx), char_length(tx), character_length(vc), bit_length(tx), "
    "position('b' in tx), strpos(tx, 'c'), ascii(tx) FROM t ORDER BY i4",
    "SELECT upper(tx), lower(vc), substring(tx, 1, 2), substring(tx from 2), trim(vc), "
    "ltrim(tx), rtrim(tx), replace(tx, 'a', 'b'), tx || vc, left(tx, 1), "
    "reverse(tx), repeat(tx, 2), split_part(tx, 'e', 1), md5(tx) FROM t ORDER BY i4",
    "SELECT array_length(ARRAY[1,2], 1), cardinality(ARRAY[1,2,3]), "
    "array_position(ARRAY[1,2], 2), (ARRAY[1,2])[2], ARRAY[i2, i4] FROM t ORDER BY i4",
    "SELECT extract(year from d), extract(month from ts), extract(dow from d), "
    "extract(second from ts), extract(milliseconds from ts), extract(epoch from ts), "
    "extract(hour from ts) FROM t ORDER BY i4",
    "SELECT date_part('year', d), date_part('month', ts), date_part('epoch', ts) "
    "FROM t ORDER BY i4",
    "SELECT date_trunc('month', ts), d + 1, d - d, ts - ts, d + interval '1 day' "
    "FROM t ORDER BY i4",
    # windows and series
    "SELECT row_number() over (), rank() over (order by i4), dense_rank() over (order by i4), "
    "ntile(2) over (order by i4), percent_rank() over (order by i4), count(*) over (), "
    "sum(i4) over (), avg(i4) over (), lag(i4) over (order by i4) FROM t ORDER BY i4",
    "SELECT generate_series(1, 3), generate_series(1::bigint, 3)",
    "SELECT * FROM generate_series(1, 3)",
    "SELECT g.x + 1 FROM generate_series(1, 2) AS g(x)",
    # derived tables, CTEs, subqueries, CASE, COALESCE
    "WITH s AS (SELECT g, sum(i4) AS s4, sum(i8) AS s8 FROM t GROUP BY g) "
    "SELECT g, s4, s8, s4 + 1 FROM s ORDER BY g",
    "SELECT q.total, q.total * 2 FROM (SELECT sum(i2) AS total FROM t) q",
    "SELECT (SELECT sum(i4) FROM t), (SELECT max(vc) FROM t), "
    "EXISTS (SELECT 1 FROM t WHERE i4 > 3)",
    "SELECT CASE WHEN i4 > 1 THEN i2 ELSE i4 END, CASE WHEN i4 > 1 THEN 1.5 ELSE 2.5 END, "
    "coalesce(i2, i4), coalesce(i4, i8), greatest(i2, i4), least(n2, 9), nullif(i4, 1) "
    "FROM t ORDER BY i4",
    # literals, casts and names
    "SELECT 1, 3000000000, 1.50, 'a', NULL, true, 1::int, 1::bigint, 1::smallint, "
    "1::float4, 1::float8, 'a'::text, 'x'::varchar(3), '2024-01-01'::date, "
    "CAST(1 AS integer), interval '1 day', date '2024-01-01', 1::int::text",
    "SELECT i4 AS y, i4::int AS z, tx AS \"Mixed\" FROM t ORDER BY i4",
    "SELECT nullif(1, 2), coalesce(NULL, 'x'), greatest(1, 2.5), least(1, 2), "
    "current_date IS NOT NULL, now() IS NOT NULL",
    "SELECT sum(i4) FROM t UNION ALL SELECT sum(i4) FROM t WHERE g = 1",
]

#: expressions whose pg_typeof must be PostgreSQL's: of an aggregate query, of any other
TYPEOF_AGGREGATES = [
    "sum(1)", "avg(1)", "count(*)", "sum(i2)", "sum(i4)", "sum(i8)", "sum(n2)", "sum(f8)",
    "avg(i8)", "avg(n2)", "avg(f8)", "stddev(i4)", "variance(n2)", "min(vc)", "max(tx)",
    "array_agg(i4)", "string_agg(tx, ',')", "bool_and(true)", "(SELECT sum(i4) FROM t)",
]
TYPEOF = [
    "length(tx)", "char_length(tx)", "position('b' in tx)", "strpos(tx, 'b')",
    "extract(year from d)", "date_part('year', d)", "round(n2, 1)", "round(f8)", "ceil(n2)",
    "floor(f8)", "abs(i2)", "mod(i8, 2)", "i4 + i4", "i2 * 2", "i4 * i8", "f8 * 2", "n2 / 2",
    "d - d", "d + 1", "ts - ts", "1", "1.5", "3000000000", "'a'::varchar(3)",
    "'a'::char(3)", "upper(vc)", "array_length(ARRAY[1], 1)", "now()", "current_date",
    "i4::numeric(6,2)", "coalesce(i2, i4)", "CASE WHEN true THEN i4 ELSE i8 END",
]


#: statements described before they run (extended protocol): shape and values
PREPARED = [
    ("SELECT sum(i4), avg(i4), length(tx), i4 FROM t WHERE g = %s GROUP BY tx, i4 "
     "ORDER BY i4", [1]),
    ("SELECT round(avg(n2), %s), avg(i8) FROM t", [2]),
    ("SELECT array_length(ARRAY[1,2], 1), position('b' in %s), %s::numeric(5,1)",
     ["abc", "1.25"]),
]


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[str, str]]:
    """(PostgreSQL DSN, pgbarrier DSN), each with the table made."""
    srv = start_server()
    try:
        with fresh_postgres_database("pgb_types") as pg_dsn:
            for dsn in (pg_dsn, srv.dsn()):
                with psycopg.connect(dsn, autocommit=True) as conn:
                    conn.execute("DROP TABLE IF EXISTS t")
                    for stmt in SETUP:
                        conn.execute(stmt)
            yield pg_dsn, srv.dsn()
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)


def _sent(dsn: str, sql: str, binary: bool, params: list[Any] | None = None,
          prepare: bool | None = None) -> tuple[Any, ...]:
    """Each column's (name, OID, typmod) and each value as sent (bytes)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        cur = conn.cursor(binary=binary)
        cur.execute(sql, params, prepare=prepare)
        res = cur.pgresult
        assert res is not None
        shape = [(res.fname(i).decode(), res.ftype(i), res.fmod(i), res.fformat(i))
                 for i in range(res.nfields)]
        values = [[res.get_value(r, c) for c in range(res.nfields)]
                  for r in range(res.ntuples)]
        return shape, values


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
@pytest.mark.parametrize("sql", STATEMENTS, ids=[s[:70] for s in STATEMENTS])
def test_results_are_postgresqls(servers, sql, binary):
    pg, duck = servers
    assert _sent(duck, sql, binary) == _sent(pg, sql, binary)


@pytest.mark.parametrize("exprs", [TYPEOF_AGGREGATES, TYPEOF], ids=["aggregates", "scalars"])
def test_pg_typeof_answers_postgresqls_names(servers, exprs):
    pg, duck = servers
    sql = "SELECT " + ", ".join(f"pg_typeof({e})" for e in exprs) + " FROM t LIMIT 1"
    expected = _sent(pg, sql, False)
    got = _sent(duck, sql, False)
    assert got[0] == expected[0]  # regtype columns named pg_typeof
    assert dict(zip(exprs, [v.decode() for v in got[1][0]])) == \
        dict(zip(exprs, [v.decode() for v in expected[1][0]]))


@pytest.mark.parametrize("sql, params", PREPARED, ids=[p[0][:60] for p in PREPARED])
def test_described_before_execution_as_postgresql(servers, sql, params):
    """Parse/Describe before Bind/Execute (a prepared statement): the RowDescription of
    the Describe and the rows of the Execute are PostgreSQL's."""
    pg, duck = servers
    for binary in (False, True):
        assert _sent(duck, sql, binary, params, prepare=True) == \
            _sent(pg, sql, binary, params, prepare=True)


def test_asyncpg_reads_postgresqls_values(servers):
    """asyncpg decodes by OID in binary: the numbers it reads, and their scales."""
    asyncpg = pytest.importorskip("asyncpg")
    pg, duck = servers
    sql = ("SELECT sum(i4), avg(i4), sum(i8), stddev(i4), length(tx), round(avg(n2), 3), "
           "extract(second from ts), 1.0/3 FROM t GROUP BY tx, ts ORDER BY tx")

    async def read(dsn: str) -> Any:
        conn = await asyncpg.connect(dsn)
        try:
            stmt = await conn.prepare(sql)
            types = [(a.name, a.type.oid) for a in stmt.get_attributes()]
            rows = [[(type(v).__name__, str(v)) for v in r] for r in await stmt.fetch()]
            return types, rows
        finally:
            await conn.close()
    as_url = dict(part.split("=", 1) for part in duck.split())
    duck_url = (f"postgresql://{as_url['user']}@{as_url['host']}:{as_url['port']}/"
                f"{as_url['dbname']}")
    assert asyncio.run(read(duck_url)) == asyncio.run(read(pg))


def test_an_error_position_is_the_clients_text(servers):
    """A statement run with inputs appended (avg) still points at the client's text."""
    pg, duck = servers
    sql = "SELECT avg(i4)\nFROM t WHERE nosuch = 1"
    for dsn in (pg, duck):
        with psycopg.connect(dsn, autocommit=True) as conn:
            with pytest.raises(psycopg.errors.UndefinedColumn) as info:
                conn.execute(sql)
            assert info.value.diag.statement_position == str(sql.index("nosuch") + 1)
