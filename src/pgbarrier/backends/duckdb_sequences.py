"""Reading a sequence as a relation (``SELECT last_value, is_called FROM s``) on DuckDB.

Rules this module keeps:

* PostgreSQL lets a query read a sequence's one row (``last_value``, ``log_cnt``,
  ``is_called``); DuckDB has no such relation. :func:`sequence_read` recognises the
  statement pg_dump sends (``SELECT <those columns, or *> FROM [schema.]name``) and
  nothing else; :func:`sequence_row` answers it from ``duckdb_sequences()``, or returns
  None when no sequence has that name (the statement then runs as any other, so a table
  of that name, or 42P01, is what the client gets).
* The values are PostgreSQL's: before the first ``nextval`` ``last_value`` is the start
  value and ``is_called`` false; after it, the last value handed out (by any session,
  as in PostgreSQL) and true. ``log_cnt`` is 0 (DuckDB logs no sequence values ahead).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import duckdb

from pgbarrier.pgproto import types as pgt

__all__ = ["COLUMNS", "SequenceRead", "sequence_read", "sequence_row"]

_NAME = r'"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*'
_READ = re.compile(
    rf"\s*SELECT\s+(\*|(?:last_value|log_cnt|is_called)(?:\s*,\s*(?:last_value|log_cnt|is_called))*)"
    rf"\s+FROM\s+(?:({_NAME})\s*\.\s*)?({_NAME})\s*;?\s*\Z", re.I)
COLUMNS = {"last_value": pgt.INT8, "log_cnt": pgt.INT8, "is_called": pgt.BOOL}


@dataclass(frozen=True)
class SequenceRead:
    schema: str | None  # PostgreSQL's name (public), None when unqualified
    name: str
    columns: tuple[str, ...]


def _ident(text: str) -> str:
    return text[1:-1].replace('""', '"') if text.startswith('"') else text.lower()


def sequence_read(sql: str) -> SequenceRead | None:
    m = _READ.match(sql)
    if m is None:
        return None
    cols = tuple(COLUMNS) if m.group(1) == "*" else tuple(
        c.strip().lower() for c in m.group(1).split(","))
    return SequenceRead(_ident(m.group(2)) if m.group(2) else None, _ident(m.group(3)), cols)


def sequence_row(cur: duckdb.DuckDBPyConnection, read: SequenceRead,
                 search_path: list[str]) -> tuple[Any, ...] | None:
    """The row of the sequence ``read`` names (DuckDB schemas: ``public`` is ``main``),
    None when there is no such sequence or a table or view of that name comes first."""
    schemas = [read.schema] if read.schema is not None else list(search_path)
    schemas = ["main" if s == "public" else s for s in schemas]
    for schema in schemas:
        relation = cur.execute(
            "SELECT 1 FROM duckdb_tables() WHERE database_name = current_database() "
            "AND schema_name = ? AND table_name = ? UNION ALL SELECT 1 FROM duckdb_views() "
            "WHERE database_name = current_database() AND schema_name = ? AND view_name = ?",
            [schema, read.name, schema, read.name]).fetchone()
        if relation is not None:
            return None
        row = cur.execute(
            "SELECT coalesce(last_value, start_value), 0, last_value IS NOT NULL "
            "FROM duckdb_sequences() WHERE database_name = current_database() "
            "AND schema_name = ? AND sequence_name = ?", [schema, read.name]).fetchone()
        if row is not None:
            values = dict(zip(COLUMNS, row))
            return tuple(values[c] for c in read.columns)
    return None
