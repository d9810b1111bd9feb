"""pgbarrier.backends.duckdb_explain: PostgreSQL's EXPLAIN options and result shape on DuckDB."""

from __future__ import annotations

import pytest

from pgbarrier.backends.duckdb_explain import for_duckdb, is_duckdb_plan, plan_result
from pgbarrier.pgproto import types as pgt


@pytest.mark.parametrize("sql, expected", [
    ("EXPLAIN SELECT 1", "EXPLAIN SELECT 1"),
    ("EXPLAIN ANALYZE SELECT 1", "EXPLAIN ANALYZE SELECT 1"),
    ("EXPLAIN (ANALYZE, COSTS, VERBOSE, BUFFERS, FORMAT JSON) SELECT 1",
     "EXPLAIN (ANALYZE, FORMAT JSON) SELECT 1"),
    ("explain (costs false, verbose) select 1", "explain select 1"),
    ("EXPLAIN (SETTINGS on, WAL, TIMING off, SUMMARY) SELECT 1", "EXPLAIN SELECT 1"),
    # what DuckDB does not know and PostgreSQL does not only display: left for DuckDB
    ("EXPLAIN (GENERIC_PLAN) SELECT $1", "EXPLAIN (GENERIC_PLAN) SELECT $1"),
])
def test_display_only_options_are_dropped(sql, expected):
    assert for_duckdb(sql) == expected


def test_text_plan_is_a_row_per_line_and_json_one_row():
    rows = [("physical_plan", "a\nb\n")]
    assert is_duckdb_plan([("explain_key",), ("explain_value",)])
    assert not is_duckdb_plan([("QUERY PLAN",)])
    columns, lines = plan_result("EXPLAIN SELECT 1", rows)
    assert [(c.name, c.type_oid) for c in columns] == [("QUERY PLAN", pgt.TEXT)]
    assert lines == [("a",), ("b",)]
    columns, lines = plan_result("EXPLAIN (FORMAT JSON) SELECT 1", [("p", '[{"x": 1}]')])
    assert [(c.name, c.type_oid) for c in columns] == [("QUERY PLAN", pgt.JSON)]
    assert lines == [('[{"x": 1}]',)]
