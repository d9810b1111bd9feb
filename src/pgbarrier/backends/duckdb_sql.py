"""Quoting for SQL that pgbarrier writes itself for DuckDB: one place, used by the backend,
its lock-down and its PostgreSQL catalog."""

from __future__ import annotations


def quote_ident(name: str) -> str:
    """``name`` as a double-quoted identifier."""
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    """``text`` as a single-quoted string literal."""
    return "'" + text.replace("'", "''") + "'"
