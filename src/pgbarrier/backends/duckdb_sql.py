"""Quoting for SQL that pgbarrier writes itself for DuckDB: one place, used by the backend,
its lock-down and its PostgreSQL catalog; and the marks pgbarrier leaves in DuckDB's
catalog (:data:`LENGTH_CHECK_MARKER`)."""

from __future__ import annotations


def quote_ident(name: str) -> str:
    """``name`` as a double-quoted identifier."""
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    """``text`` as a single-quoted string literal."""
    return "'" + text.replace("'", "''") + "'"


#: the text every ``varchar(n)`` / ``char(n)`` length check of pgbarrier's carries in its
#: ``error()`` message (duckdb_ddl/lengths.py makes them; the catalog hides them)
LENGTH_CHECK_MARKER = "pgbarrier:22001:"
