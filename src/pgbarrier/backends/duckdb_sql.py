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


#: the text every type check of pgbarrier's (``varchar(n)`` / ``char(n)`` lengths, 22001;
#: ``bit(n)``, 22026) carries in its ``error()`` message: each raises a class 22 error
#: (duckdb_ddl/lengths.py makes them; the catalog hides them)
LENGTH_CHECK_MARKER = "pgbarrier:22"
