"""``EXPLAIN`` on DuckDB in PostgreSQL's result shape.

PostgreSQL answers ``EXPLAIN`` (and ``EXPLAIN ANALYZE``) with one column named ``QUERY
PLAN``: a ``text`` row per line of the plan, or with ``FORMAT JSON`` one ``json`` row; DuckDB
with two, ``explain_key`` and ``explain_value``, the whole plan in one value. Clients read the
first column by name or position (Superset's cost estimate reads row 0, column 0; pgcli's
explain mode sends ``EXPLAIN (ANALYZE, COSTS, VERBOSE, BUFFERS, FORMAT JSON)`` and loads the
json; psql prints the lines). Rules this module keeps:

* the plan is DuckDB's (its operators, its JSON); no costs are made up;
* of PostgreSQL's options, DuckDB knows ``ANALYZE`` and ``FORMAT``; the others only change
  what PostgreSQL prints (``COSTS``, ``VERBOSE``, ``BUFFERS``, ``SETTINGS``, ``WAL``,
  ``TIMING``, ``SUMMARY``) and are dropped before DuckDB reads the statement. Any other
  option is left for DuckDB to refuse (0A000).
"""

from __future__ import annotations

import re
from typing import Any

from pgbarrier.pgproto import types as pgt
from pgbarrier.result import Column

__all__ = ["for_duckdb", "is_duckdb_plan", "plan_result"]

_DUCKDB_COLUMNS = ("explain_key", "explain_value")
_OPTIONS = re.compile(r"\A(\s*EXPLAIN\s*)\(([^()]*)\)", re.I)
_DISPLAY_ONLY = frozenset({"COSTS", "VERBOSE", "BUFFERS", "SETTINGS", "WAL", "TIMING",
                           "SUMMARY"})
_JSON = re.compile(r"\bFORMAT\s+JSON\b", re.I)


def for_duckdb(sql: str) -> str:
    """``sql`` (an EXPLAIN) without the options DuckDB does not know and need not."""
    m = _OPTIONS.match(sql)
    if m is None:
        return sql
    kept = [o.strip() for o in m.group(2).split(",")
            if o.strip() and o.split()[0].upper() not in _DISPLAY_ONLY]
    options = f"({', '.join(kept)}) " if kept else ""
    return m.group(1) + options + sql[m.end():].lstrip()


def is_duckdb_plan(description: Any) -> bool:
    """Whether a DuckDB cursor's description is that of an EXPLAIN."""
    return tuple(d[0] for d in description or ()) == _DUCKDB_COLUMNS


def plan_result(client_sql: str, rows: list[tuple[Any, ...]]
                ) -> tuple[list[Column], list[tuple[str]]]:
    """PostgreSQL's columns and rows for DuckDB's (key, plan) rows of ``client_sql``."""
    m = _OPTIONS.match(client_sql)
    if m is not None and _JSON.search(m.group(2)):
        return [Column("QUERY PLAN", pgt.JSON)], [(str(plan),) for _key, plan in rows]
    lines = [(line,) for _key, plan in rows
             for line in str(plan or "").rstrip("\n").split("\n")]
    return [Column("QUERY PLAN", pgt.TEXT)], lines
