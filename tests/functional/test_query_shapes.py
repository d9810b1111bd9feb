"""Queries in shapes other than ``SELECT ... FROM``, answered as PostgreSQL answers them.

A query in parentheses (PostgreSQL's ``select_with_parens``: ``(SELECT 1)``,
``(VALUES ...) UNION ...``) once had no leading words for pgbarrier, which then answered
it with an empty CommandComplete and no rows. A ``VALUES`` list's columns are
``column1``, ``column2``... (DuckDB's are ``col0``...). A ``WITH`` query, what BI tools and dbt
send, and a ``FROM``-less ``SELECT`` of a set-returning function now take the columnar
result path. Each statement runs on pgbarrier's DuckDB, on pgbarrier ``--upstream`` and
on PostgreSQL; the command tag, the column names and types and the rows must be the same.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conftest import fresh_postgres_database, start_server, stop_server

psycopg = pytest.importorskip("psycopg")

DDL = [
    "CREATE TABLE t (a integer, b varchar(20), c numeric(12,2))",
    "INSERT INTO t SELECT i, 'x' || i, i / 4.0 FROM generate_series(1, 3000) AS g(i)",
    "CREATE TABLE f (x double precision, y real, flag boolean, s text, bin bytea)",
    "INSERT INTO f VALUES (0.5, 0.5, true, 'a', '\\x0102'), (1.5, 1.5, false, 'b', '\\x'), "
    "(2.5, 2.5, NULL, NULL, NULL), (-2.5, -2.5, true, 'd', '\\xff'), (3.7, 3.7, false, 'e', NULL)",
    "CREATE TABLE inf AS SELECT g, CASE WHEN g % 3 = 0 THEN 'infinity'::date WHEN g % 3 = 1 "
    "THEN '-infinity'::date ELSE date '2024-01-01' END AS d, CASE WHEN g % 2 = 0 THEN "
    "'infinity'::timestamp ELSE '-infinity'::timestamp END AS ts, CASE WHEN g % 2 = 0 THEN "
    "'infinity'::timestamptz WHEN g % 5 = 0 THEN '-infinity'::timestamptz ELSE "
    "timestamptz '2024-01-01 00:00+00' END AS tz FROM generate_series(1, 100) AS s(g)",
]

STATEMENTS = [
    "(SELECT 1 AS a)",
    "((SELECT 1 AS a))",
    "( /* a comment */ SELECT a, b FROM t WHERE a < 4 ORDER BY a)",
    "(SELECT a FROM t WHERE a < 3) UNION (SELECT 7) ORDER BY 1",
    "(SELECT a, c FROM t ORDER BY a)",
    "(TABLE t ORDER BY a LIMIT 2)",
    "(WITH x AS (SELECT 5 AS n) SELECT n FROM x)",
    "WITH x AS (SELECT a, b, c FROM t WHERE a % 3 = 0) SELECT * FROM x ORDER BY a",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 2500) "
    "SELECT n FROM r ORDER BY n",
    "WITH x AS (SELECT a FROM t) SELECT count(*), sum(a) FROM x",
    "SELECT generate_series(1, 2500) AS g",
    "VALUES (1, 'a'), (2, 'b')",
    "VALUES (2), (1) ORDER BY 1 LIMIT 1",
    "(VALUES (1), (2))",
    "VALUES (1) UNION ALL SELECT 2 ORDER BY 1",
    "SELECT * FROM (VALUES (1, 'a')) v",
    "SELECT v.column2, x FROM (VALUES (1, 'a')) AS v(x)",
    "SELECT a, (VALUES (7)) FROM t WHERE a < 3 ORDER BY a",
    "WITH x AS (VALUES (1, 2)) SELECT * FROM x",
    "SELECT (SELECT 3 AS x UNION SELECT 4 ORDER BY 1 LIMIT 1), ((SELECT 5 AS y))",
    # functions whose DuckDB namesakes answer otherwise (duckdb_dialect.functions)
    "SELECT round(2.5::float8) AS a, round(-2.5::float8) AS b, round(3.5::float8) AS c, "
    "round(2.5) AS d, round(-2.5) AS e",
    "SELECT x, round(x), round(y) AS ry, round(x::numeric) AS rn FROM f ORDER BY x",
    "SELECT to_hex(255) AS a, to_hex(-1) AS b, to_hex(-1::bigint) AS c, to_hex(a) AS d, "
    "to_hex(a - 5) AS e FROM t WHERE a < 3 ORDER BY a",
    "SELECT substr('hello', 0, 3) AS a, substr('hello', -1, 3) AS b, substr('hello', -1) AS c, "
    "substring('hello' from -2 for 4) AS d, substr('hello', 2) AS e, substr('hello', -9, 3) AS f",
    "SELECT a, substr(b, a - 3, 3) AS s, substring(b from a - 2) AS z FROM t WHERE a < 7 "
    "ORDER BY a",
    "SELECT concat('a', flag, 1) AS c, concat_ws('-', flag, s) AS w FROM f ORDER BY x",
    "SELECT format('%s-%I-%L', 'a', 'b c', 'd') AS f, format('%s|%s', NULL, 1.5) AS g, "
    "format('%2$s %1$s %%', 'x', 'y') AS h",
    "SELECT a, format('x=%s;%L', b, c) FROM t WHERE a < 4 ORDER BY a",
    "SELECT 'on'::boolean AS a, CAST(' OFF ' AS bool) AS b, 'tr'::boolean AS c, "
    "'Yes'::boolean AS d, '0'::boolean AS e",
    "SELECT lpad(s, 3) AS l, rpad(s, 3) AS r, lpad('abcdef', 2) AS t FROM f ORDER BY x",
    "SELECT length(bin), length(s) AS ls, length('\\x0102'::bytea) AS lb FROM f ORDER BY x",
    "SELECT num_nulls(x, flag, s) AS n, num_nonnulls(x, flag, s) AS nn FROM f ORDER BY x",
    "SELECT sqrt(abs(x)), ln(x + 10), log(x + 10) AS l10, power(2, x), "
    "power(x, 2) AS sq FROM f ORDER BY x",
]

#: statements PostgreSQL refuses with an error a translation must raise too (SQLSTATE)
REFUSED = [
    ("SELECT sqrt(-1)", "2201F"), ("SELECT sqrt(x) FROM f", "2201F"),
    ("SELECT ln(0)", "2201E"), ("SELECT log(x - 0.5) FROM f", "2201E"),
    ("SELECT ln(-1.5::float8)", "2201E"), ("SELECT log(2, 0)", "2201E"),
    ("SELECT power(0, -1)", "2201F"), ("SELECT power(x, 0.5) FROM f", "2201F"),
]


def _answer(dsn: str, sql: str) -> tuple:
    with psycopg.connect(dsn, autocommit=True) as conn:
        cur = conn.execute(sql)
        names = [(d.name, d.type_code) for d in cur.description or ()]
        return cur.statusmessage, names, cur.fetchall() if cur.description else None


@pytest.fixture(scope="module")
def dsns() -> Iterator[dict[str, str]]:
    with fresh_postgres_database("pgb_shapes") as pg_dsn:
        embedded = start_server()
        server, database = pg_dsn.split("://", 1)[1].split("/", 1)
        relay = start_server("--upstream", f"postgresql://{server}/", "--database", database)
        try:
            out = {"postgres": pg_dsn, "duckdb": embedded.dsn(),
                   "upstream": relay.dsn(database, server.split("@", 1)[0])}
            for name in ("postgres", "duckdb"):
                with psycopg.connect(out[name], autocommit=True) as conn:
                    for stmt in DDL:
                        conn.execute(stmt)
            yield out
        finally:
            assert stop_server(embedded) == 0, "".join(embedded.log)
            assert stop_server(relay) == 0, "".join(relay.log)


@pytest.mark.parametrize("sql", STATEMENTS)
@pytest.mark.parametrize("target", ["duckdb", "upstream"])
def test_the_same_answer_as_postgresql(dsns, target, sql):
    expected = _answer(dsns["postgres"], sql)
    assert expected[0].startswith("SELECT"), expected
    assert _answer(dsns[target], sql) == expected


#: statements that make a table from a query (PostgreSQL's tag: SELECT n, or CREATE TABLE
#: AS for WITH NO DATA), each with a query reading what it made
MAKERS = [
    ("SELECT a, b INTO t_into FROM t WHERE a < 10", "TABLE t_into ORDER BY a"),
    ("WITH x AS (SELECT a FROM t WHERE a < 4) SELECT * INTO TEMP TABLE t_into FROM x",
     "SELECT * FROM t_into ORDER BY 1"),
    ("SELECT 1 AS one INTO TEMPORARY t_into", "TABLE t_into"),
    ("CREATE TABLE t_into AS SELECT a, b, c FROM t WHERE a <= 5", "TABLE t_into ORDER BY a"),
    ("CREATE TEMP TABLE t_into AS SELECT a FROM t WITH NO DATA", "TABLE t_into"),
]


@pytest.mark.parametrize(("maker", "reader"), MAKERS)
@pytest.mark.parametrize("target", ["duckdb", "upstream"])
def test_a_table_made_from_a_query_as_postgresql_makes_it(dsns, target, maker, reader):
    """``SELECT INTO`` (which DuckDB has no form of) makes the table ``CREATE TABLE AS``
    makes, and both answer PostgreSQL's tag and row count."""
    def made(dsn: str) -> tuple:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS t_into")
            try:
                cur = conn.execute(maker)
                return cur.statusmessage, cur.rowcount, _answer(dsn, reader) \
                    if "TEMP" not in maker.upper() else conn.execute(reader).fetchall()
            finally:
                conn.execute("DROP TABLE IF EXISTS t_into")
    expected = made(dsns["postgres"])
    assert made(dsns[target]) == expected


@pytest.mark.parametrize(("sql", "sqlstate"), REFUSED)
@pytest.mark.parametrize("target", ["postgres", "duckdb", "upstream"])
def test_a_value_outside_a_functions_domain_is_postgresqls_error(dsns, target, sql, sqlstate):
    """sqrt, ln, log and power raise PostgreSQL's error outside their domain (DuckDB
    answered NaN, -Infinity or Infinity)."""
    with psycopg.connect(dsns[target], autocommit=True) as conn:
        with pytest.raises(psycopg.Error) as raised:
            conn.execute(sql).fetchall()
    assert raised.value.sqlstate == sqlstate, raised.value


@pytest.mark.parametrize("zone", ["UTC", "Europe/Berlin"])
@pytest.mark.parametrize("target", ["duckdb", "upstream"])
def test_infinite_dates_and_timestamps_read_as_postgresql_sends_them(dsns, target, zone):
    """DuckDB's ``infinity`` and ``-infinity`` dates and timestamps are PostgreSQL's, in
    text, binary and COPY (they were year 5881580 and garbage), and a short result reads
    the same the second time (the row path's Python values would say year 9999)."""
    from psycopg.types.string import ByteaBinaryLoader, TextLoader

    def read(dsn: str) -> tuple:
        with psycopg.connect(dsn, autocommit=True) as conn:
            for name in ("date", "timestamp", "timestamptz"):  # the wire's own bytes
                conn.adapters.register_loader(name, TextLoader)
                conn.adapters.register_loader(name, ByteaBinaryLoader)
            conn.execute(f"SET TimeZone = '{zone}'")
            whole = "SELECT g, d, ts, tz FROM inf ORDER BY g"
            short = "SELECT d, ts, tz FROM inf WHERE g < 6 ORDER BY g"
            with conn.cursor().copy(f"COPY ({whole}) TO STDOUT") as copy:
                copied = b"".join(bytes(block) for block in copy)
            return (conn.execute(whole).fetchall(), conn.execute(whole, binary=True).fetchall(),
                    copied, [conn.execute(short).fetchall() for _ in range(3)],
                    conn.execute(short, binary=True).fetchall())
    expected = read(dsns["postgres"])
    assert b"-infinity" in expected[2]
    assert read(dsns[target]) == expected


@pytest.mark.parametrize("target", ["duckdb", "upstream"])
def test_like_escapes_with_a_backslash_in_a_bound_pattern(dsns, target):
    """An ORM escapes a user's % and _ with a backslash (PostgreSQL's default LIKE escape)
    and binds the pattern as a parameter: the same rows as PostgreSQL's."""
    values = ["50%", "500", "a_b", "axb", "c:\\dir"]
    sql = ("SELECT s FROM unnest(%s::text[]) AS v(s) WHERE s LIKE %s OR s ILIKE %s "
           "ORDER BY s")

    def rows(dsn: str) -> list:
        with psycopg.connect(dsn, autocommit=True) as conn:
            return [conn.execute(sql, [values, p, q]).fetchall()
                    for p, q in (("50\\%", "A\\_B"), ("%\\%%", "c:\\\\%"), ("5%", "zz"))]
    expected = rows(dsns["postgres"])
    assert expected[0] == [("50%",), ("a_b",)]
    assert rows(dsns[target]) == expected
