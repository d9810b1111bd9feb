"""PostgreSQL-unreserved names DuckDB reserves are quoted where they are names only."""

from __future__ import annotations

import duckdb
import pytest

from pgbarrier.backends.duckdb_keywords import quote_keyword_names


@pytest.mark.parametrize("sql, expected", [
    ("CREATE TABLE at (by int, show text)", 'CREATE TABLE "at" ("by" int, "show" text)'),
    ("SELECT at.by FROM at ORDER BY by", 'SELECT "at"."by" FROM "at" ORDER BY "by"'),
    ("SELECT Show FROM t", 'SELECT "show" FROM t'),
    ("select x at time zone 'UTC', by from t", "select x at time zone 'UTC', \"by\" from t"),
])
def test_names_are_quoted(sql, expected) -> None:
    assert quote_keyword_names(sql) == expected


@pytest.mark.parametrize("sql", [
    "SELECT a FROM t ORDER BY a", "SELECT a FROM t GROUP  BY a",
    "SELECT rank() OVER (PARTITION BY a ORDER BY b) FROM t",
    "CREATE SEQUENCE s INCREMENT BY 2", "SHOW search_path", "SELECT 'at by show'",
    "SELECT \"at\" FROM t -- by", "SELECT ts AT TIME ZONE 'UTC' FROM t",
    "ALTER SEQUENCE s OWNED BY t.a",
])
def test_keywords_and_other_text_are_left_alone(sql) -> None:
    assert quote_keyword_names(sql) is sql


def test_every_quoted_statement_runs_on_duckdb() -> None:
    conn = duckdb.connect()
    for sql in ("CREATE TABLE at (by int, show text)", "INSERT INTO at VALUES (1, 'x')",
                "SELECT at.by, show FROM at WHERE by = 1 ORDER BY by"):
        with pytest.raises(duckdb.ParserException):
            conn.execute(sql)
        conn.execute(quote_keyword_names(sql))


def test_unchanged_text_is_the_callers_own_object_even_when_cached() -> None:
    first = "".join(["SELECT * FROM ", "no_keywords_here"])
    second = "".join(["SELECT * FROM ", "no_keywords_here"])
    assert quote_keyword_names(first) is first
    assert quote_keyword_names(second) is second  # a cache hit keeps the caller's text
