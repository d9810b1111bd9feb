"""``EXPLAIN`` on DuckDB in PostgreSQL's result shape.

PostgreSQL answers ``EXPLAIN`` (and ``EXPLAIN ANALYZE``) with one ``text`` column named
``QUERY PLAN``, a row per line of the plan; DuckDB with two, ``explain_key`` and
``explain_value``, the whole plan drawn in one value. Clients read the first column by
name or position (Superset's cost estimate reads row 0, column 0; psql prints the lines),
so the plan keeps DuckDB's drawing (its operators are DuckDB's, no costs are made up) and
is sent as PostgreSQL sends one: a row per line.
"""

from __future__ import annotations

from typing import Any

from pgbarrier.pgproto import types as pgt
from pgbarrier.result import Column

__all__ = ["COLUMNS", "is_duckdb_plan", "plan_lines"]

COLUMNS = (Column("QUERY PLAN", pgt.TEXT),)
_DUCKDB_COLUMNS = ("explain_key", "explain_value")


def is_duckdb_plan(description: Any) -> bool:
    """Whether a DuckDB cursor's description is that of an EXPLAIN."""
    return tuple(d[0] for d in description or ()) == _DUCKDB_COLUMNS


def plan_lines(rows: list[tuple[Any, ...]]) -> list[tuple[str]]:
    """DuckDB's (key, plan) rows as PostgreSQL's rows: one per line of each plan."""
    return [(line,) for _key, plan in rows for line in str(plan or "").rstrip("\n").split("\n")]
