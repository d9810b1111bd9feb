"""rw_catalog rewriting, checked by running the rewritten SQL on DuckDB and PostgreSQL."""

from __future__ import annotations

import os
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

import duckdb
import pytest

from pgbarrier import errors
from pgbarrier.sql import CatalogTable, rewrite_catalog_refs

PG_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
BIG = 2**62 + 12345  # far past 2**53: a float would lose it
PAUSED_AT = datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc)

DATABASES = CatalogTable(
    columns=(
        ("name", "TEXT"),
        ("paused", "BOOLEAN"),
        ("paused_at", "TIMESTAMPTZ"),
        ("paused_by", "TEXT"),
        ("barrier_interval_ms", "INTEGER"),
        ("committed_epoch", "BIGINT"),
        ("committed_at", "TIMESTAMPTZ"),
    ),
    rows=[
        ("dev", False, None, None, 1000, BIG, PAUSED_AT + timedelta(seconds=5)),
        ("o'brien \\ db", True, PAUSED_AT, "root", 250, 65536, None),
    ],
)
HISTORY = CatalogTable(
    columns=(("job", "TEXT"), ("run_id", "BIGINT"), ("trigger", "TEXT"), ("rows", "NUMERIC")),
    rows=[],
)
TABLES = {"rw_databases": DATABASES, "rw_refresh_history": HISTORY}


@pytest.fixture
def duck() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("CREATE TABLE owners (db TEXT, owner TEXT)")
    con.execute("INSERT INTO owners VALUES ('dev', 'alice'), ('other', 'bob')")
    return con


def run_duck(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple]:
    rewritten = rewrite_catalog_refs(sql, TABLES, "duckdb")
    assert "rw_catalog" not in rewritten.lower()
    return con.execute(rewritten).fetchall()


def test_select_star(duck: duckdb.DuckDBPyConnection) -> None:
    rows = run_duck(duck, "SELECT * FROM rw_catalog.rw_databases ORDER BY name")
    assert rows == [
        ("dev", False, None, None, 1000, BIG, PAUSED_AT + timedelta(seconds=5)),
        ("o'brien \\ db", True, PAUSED_AT, "root", 250, 65536, None),
    ]


def test_big_bigint_survives(duck: duckdb.DuckDBPyConnection) -> None:
    rows = run_duck(duck, "SELECT committed_epoch, committed_epoch + 1 FROM rw_catalog.rw_databases WHERE name = 'dev'")
    assert rows == [(BIG, BIG + 1)]


def test_column_types(duck: duckdb.DuckDBPyConnection) -> None:
    rewritten = rewrite_catalog_refs("SELECT * FROM rw_catalog.rw_databases", TABLES, "duckdb")
    types = [str(d[1]) for d in duck.execute(rewritten).description]
    assert types == ["VARCHAR", "BOOLEAN", "TIMESTAMP WITH TIME ZONE", "VARCHAR", "INTEGER", "BIGINT", "TIMESTAMP WITH TIME ZONE"]


def test_join_with_an_ordinary_table(duck: duckdb.DuckDBPyConnection) -> None:
    rows = run_duck(
        duck,
        "SELECT d.name, o.owner, d.paused FROM rw_catalog.rw_databases d "
        "JOIN owners o ON o.db = d.name",
    )
    assert rows == [("dev", "alice", False)]


def test_where_and_unaliased_qualified_columns(duck: duckdb.DuckDBPyConnection) -> None:
    rows = run_duck(
        duck,
        "SELECT rw_databases.name, rw_catalog.rw_databases.paused_by "
        "FROM RW_CATALOG.RW_DATABASES WHERE paused AND paused_at < now()",
    )
    assert rows == [("o'brien \\ db", "root")]


def test_alias_with_column_list(duck: duckdb.DuckDBPyConnection) -> None:
    rows = run_duck(duck, "SELECT n FROM rw_catalog.rw_databases AS x(n) WHERE x.n = 'dev'")
    assert rows == [("dev",)]


def test_null_timestamptz_keeps_its_type(duck: duckdb.DuckDBPyConnection) -> None:
    rows = run_duck(
        duck,
        "SELECT paused_at IS NULL, typeof(paused_at) FROM rw_catalog.rw_databases WHERE name = 'dev'",
    )
    assert rows == [(True, "TIMESTAMP WITH TIME ZONE")]


def test_zero_rows(duck: duckdb.DuckDBPyConnection) -> None:
    rewritten = rewrite_catalog_refs("SELECT * FROM rw_catalog.rw_refresh_history", TABLES, "duckdb")
    result = duck.execute(rewritten)
    assert result.fetchall() == []
    assert [d[0] for d in result.description] == ["job", "run_id", "trigger", "rows"]
    assert [str(d[1]) for d in result.description][:2] == ["VARCHAR", "BIGINT"]


def test_subquery_cte_and_union(duck: duckdb.DuckDBPyConnection) -> None:
    rows = run_duck(
        duck,
        "WITH p AS (SELECT name FROM rw_catalog.rw_databases WHERE paused) "
        "SELECT owner FROM owners WHERE db IN (SELECT name FROM rw_catalog.rw_databases WHERE NOT paused) "
        "UNION ALL SELECT name FROM p "
        "UNION ALL SELECT count(*)::TEXT FROM rw_catalog.rw_refresh_history",
    )
    assert sorted(rows) == [("0",), ("alice",), ("o'brien \\ db",)]


def test_unknown_view_is_42p01() -> None:
    with pytest.raises(errors.UndefinedTable) as info:
        rewrite_catalog_refs("SELECT * FROM rw_catalog.nope", TABLES, "duckdb")
    assert info.value.sqlstate == "42P01"
    assert info.value.message == 'relation "rw_catalog.nope" does not exist'


def test_untouched_sql_comes_back_unchanged() -> None:
    for sql in (
        "SELECT 'rw_catalog.rw_databases'  -- spacing kept",
        "SELECT 1 /* rw_catalog */",
        "SELEC broken rw_catalog",
    ):
        assert rewrite_catalog_refs(sql, TABLES, "duckdb") == sql


def test_decimal_and_numeric_cells(duck: duckdb.DuckDBPyConnection) -> None:
    table = CatalogTable(columns=(("n", "NUMERIC"),), rows=[(Decimal("12345678901.25"),), (7,), (None,)])
    sql = rewrite_catalog_refs("SELECT n FROM rw_catalog.t", {"t": table}, "duckdb")
    assert duck.execute(sql).fetchall() == [(Decimal("12345678901.25"),), (Decimal(7),), (None,)]


def test_postgres_execution() -> None:
    psycopg = pytest.importorskip("psycopg")
    try:
        conn = psycopg.connect(PG_DSN, connect_timeout=3)
    except psycopg.OperationalError as exc:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"PostgreSQL at {PG_DSN} is unreachable: {exc}")
    with conn:
        conn.execute("SET TimeZone = 'UTC'")
        conn.execute("CREATE TEMP TABLE owners (db TEXT, owner TEXT)")
        conn.execute("INSERT INTO owners VALUES ('dev', 'alice'), ('other', 'bob')")
        sql = rewrite_catalog_refs(
            "SELECT d.name, o.owner, d.paused, d.paused_at, d.committed_epoch "
            "FROM rw_catalog.rw_databases AS d LEFT JOIN owners o ON o.db = d.name "
            "ORDER BY d.name",
            TABLES,
            "postgres",
        )
        rows = conn.execute(sql).fetchall()
        assert rows == [
            ("dev", "alice", False, None, BIG),
            ("o'brien \\ db", None, True, PAUSED_AT, 65536),
        ]
        empty = rewrite_catalog_refs("SELECT * FROM rw_catalog.rw_refresh_history", TABLES, "postgres")
        cur = conn.execute(empty)
        assert cur.fetchall() == []
        assert [c.name for c in cur.description] == ["job", "run_id", "trigger", "rows"]
        conn.rollback()


@pytest.mark.parametrize("dialect", ["duckdb", "postgres"])
def test_rows_written_as_text_are_the_sql_sqlglot_generates(dialect):
    """The rows go in as text (a view of thousands of rows must not cost an AST node per
    cell), and that text is exactly what generating the derived table's AST gives."""
    from pgbarrier.sql.catalog_rewrite import _derived_select, derived_sql, is_rewritten

    table = CatalogTable(
        columns=(("i", "BIGINT"), ("s", "TEXT"), ("b", "BOOLEAN"), ("f", "DOUBLE"),
                 ("n", "NUMERIC"), ("t", "TIMESTAMPTZ"), ("d", "DATE"), ('we"ird', "TEXT")),
        rows=[(2**60, "it's a\\b\nc", True, 0.1, Decimal("1.50"),
               datetime(2026, 1, 2, 3, 4, 5), date(2026, 1, 2), None),
              (None, None, False, float("nan"), None, None, None, "$$ é"),
              (-1, "", None, float("inf"), Decimal("-0.001"),
               datetime(2026, 1, 2, tzinfo=timezone.utc), None, "x")])
    assert derived_sql(table, dialect) == f"({_derived_select(table, dialect).sql(dialect=dialect)})"
    out = rewrite_catalog_refs("SELECT * FROM rw_catalog.t AS x WHERE x.i > 0", {"t": table},
                               dialect)
    assert is_rewritten(out) and "pgb_rw_rows_" not in out
    assert not is_rewritten("SELECT * FROM t")
