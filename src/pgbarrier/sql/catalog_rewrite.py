"""Rewrite ``rw_catalog.<view>`` references into derived tables a backend can run.

Rules this module keeps:

* :func:`rewrite_catalog_refs` parses with sqlglot in the backend's dialect (``"duckdb"``
  or ``"postgres"``) and replaces every table reference ``rw_catalog.<name>`` read in a
  ``FROM`` or ``JOIN`` (at any depth: subqueries, CTEs, set operations, joins) by
  ``(SELECT ...) AS <alias>``, where ``<alias>`` is the user's alias (with its column list,
  if any) or else the bare view name, so ``rw_databases.name`` still resolves. Column
  references spelled ``rw_catalog.<name>.<col>`` lose their ``rw_catalog.`` part. A
  leading catalog part (``dev.rw_catalog.x``) is ignored.
* ``rw_catalog`` and ``<name>`` match case-insensitively when unquoted, exactly when
  quoted (PostgreSQL's folding). An unknown ``rw_catalog.x`` is
  :class:`~pgbarrier.errors.UndefinedTable` (42P01) ``relation "rw_catalog.x" does not
  exist``.
* The derived table is built as an AST: ``SELECT "c1", ... FROM (VALUES (CAST(v AS t),
  ...), ...) AS "_rw"("c1", ...)`` with a cast on every cell, so column types hold even
  for NULLs; no rows gives ``SELECT CAST(NULL AS t) AS "c1", ... WHERE FALSE``. Cells:
  ``None`` -> NULL, ``bool`` -> TRUE/FALSE, ``int`` -> an exact integer literal (values past
  2**53 survive), ``float``/``Decimal`` -> a numeric literal, ``datetime`` -> its ISO text
  (a naive datetime is taken as UTC), anything else -> ``str(value)``; the cast gives the
  type. Bare ``NUMERIC``/``DECIMAL`` becomes ``DECIMAL(38, 10)`` on DuckDB (whose bare
  ``NUMERIC`` is ``DECIMAL(18, 3)``).
* The client's statement is parsed and rewritten as an AST, but the rows are written as
  text (:func:`derived_sql`: the same SQL sqlglot would generate, at a string join per
  cell) into the place of a placeholder table: a view of thousands of rows
  (``rw_refresh_history``) must not cost an AST node per cell. :func:`is_rewritten` tells
  a backend that a statement reads such rows (it needs no result-type planning: every
  cell is cast).
* SQL that sqlglot cannot parse, or that has no reference to rewrite (the word only in a
  string or comment, or a ``rw_catalog`` table that is written to rather than read), is
  returned unchanged for the backend to judge. Several statements in ``sql`` are rewritten
  one by one and joined with ``;``.
"""

from __future__ import annotations

import datetime as _dt
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from pgbarrier import errors

__all__ = ["CATALOG_SCHEMA", "CatalogTable", "derived_sql", "is_rewritten",
           "rewrite_catalog_refs"]

CATALOG_SCHEMA = "rw_catalog"
_VALUES_ALIAS = "_rw"


@dataclass
class CatalogTable:
    """The rows of one system view; ``columns`` are ``(name, SQL type)`` pairs."""

    columns: tuple[tuple[str, str], ...]
    rows: list[tuple[Any, ...]] = field(default_factory=list)


def folded(ident: exp.Expr | None) -> str | None:
    """An identifier as PostgreSQL stores it (unquoted folds to lower case); None if not one."""
    if not isinstance(ident, exp.Identifier):
        return None
    return ident.name if ident.quoted else ident.name.lower()


def _data_type(type_sql: str, dialect: str) -> exp.DataType:
    if dialect == "duckdb" and type_sql.strip().upper() in ("NUMERIC", "DECIMAL"):
        type_sql = "DECIMAL(38, 10)"
    return exp.DataType.build(type_sql, dialect=dialect)


def _literal(value: object) -> exp.Expr:
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int):
        return exp.Literal.number(str(value))
    if isinstance(value, (float, Decimal)) and value == value and abs(value) != float("inf"):
        return exp.Literal.number(str(value))
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        return exp.Literal.string(value.isoformat())
    if isinstance(value, (_dt.date, _dt.time)):
        return exp.Literal.string(value.isoformat())
    return exp.Literal.string(str(value))


def _derived_select(table: CatalogTable, dialect: str) -> exp.Select:
    types = [_data_type(t, dialect) for _, t in table.columns]
    names = [exp.to_identifier(name, quoted=True) for name, _ in table.columns]

    def cast(value: object, dtype: exp.DataType) -> exp.Cast:
        return exp.Cast(this=_literal(value), to=dtype.copy())

    if not table.rows:
        projections = [
            exp.alias_(cast(None, dtype), name.copy()) for name, dtype in zip(names, types)
        ]
        return exp.select(*projections).where(exp.false())

    width = len(names)
    tuples = []
    for row in table.rows:
        if len(row) != width:
            raise ValueError(f"catalog row has {len(row)} values, expected {width}: {row!r}")
        tuples.append(exp.Tuple(expressions=[cast(v, t) for v, t in zip(row, types)]))
    values = exp.Values(
        expressions=tuples,
        alias=exp.TableAlias(
            this=exp.to_identifier(_VALUES_ALIAS, quoted=True),
            columns=[n.copy() for n in names],
        ),
    )
    return exp.select(*(exp.column(n.copy()) for n in names)).from_(values)


def _literal_sql(value: object) -> str:
    """:func:`_literal`'s SQL text, without building it."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (float, Decimal)) and value == value and abs(value) != float("inf"):
        return str(value)
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        text = value.isoformat()
    elif isinstance(value, (_dt.date, _dt.time)):
        text = value.isoformat()
    else:
        text = str(value)
    return "'" + text.replace("'", "''") + "'"


def derived_sql(table: CatalogTable, dialect: str) -> str:
    """:func:`_derived_select`'s SQL text (in parentheses), the rows written as text."""
    if not table.rows:
        return f"({_derived_select(table, dialect).sql(dialect=dialect)})"
    names = [exp.to_identifier(name, quoted=True).sql(dialect=dialect)
             for name, _ in table.columns]
    casts = [(f"CAST(", f" AS {_data_type(t, dialect).sql(dialect=dialect)})")
             for _, t in table.columns]
    width = len(names)
    tuples = []
    for row in table.rows:
        if len(row) != width:
            raise ValueError(f"catalog row has {len(row)} values, expected {width}: {row!r}")
        tuples.append("(" + ", ".join(f"{head}{_literal_sql(v)}{tail}"
                                      for v, (head, tail) in zip(row, casts)) + ")")
    columns = ", ".join(names)
    return (f"(SELECT {columns} FROM (VALUES {', '.join(tuples)}) AS "
            f'"{_VALUES_ALIAS}"({columns}))')


def is_rewritten(sql: str) -> bool:
    """Whether ``sql`` came from :func:`rewrite_catalog_refs` with a view's rows in it."""
    return f'AS "{_VALUES_ALIAS}"(' in sql


def _catalog_name(table: exp.Table) -> str | None:
    """``<name>`` if ``table`` is ``rw_catalog.<name>`` read in FROM/JOIN, else None."""
    if folded(table.args.get("db")) != CATALOG_SCHEMA:
        return None
    if not isinstance(table.parent, (exp.From, exp.Join)):
        return None
    return folded(table.this)


def _rewrite_tree(tree: exp.Expr, tables: Mapping[str, CatalogTable], dialect: str,
                  derived: dict[str, str]) -> bool:
    """Replaces each read view by a placeholder table; ``derived``: placeholder -> rows."""
    changed = False
    for table in list(tree.find_all(exp.Table)):
        name = _catalog_name(table)
        if name is None:
            continue
        source = tables.get(name)
        if source is None:
            raise errors.UndefinedTable(f'relation "{CATALOG_SCHEMA}.{name}" does not exist')
        alias = table.args.get("alias")
        if alias is None:
            alias = exp.TableAlias(this=table.this.copy())
        placeholder = f"pgb_rw_rows_{uuid.uuid4().hex}"
        derived[placeholder] = derived_sql(source, dialect)
        table.replace(exp.Table(this=exp.to_identifier(placeholder), alias=alias.copy()))
        changed = True
    if changed:
        for column in tree.find_all(exp.Column):
            if folded(column.args.get("db")) == CATALOG_SCHEMA:
                column.set("db", None)
                column.set("catalog", None)
    return changed


def rewrite_catalog_refs(sql: str, tables: Mapping[str, CatalogTable], dialect: str) -> str:
    """``sql`` with every read of ``rw_catalog.<name>`` replaced by ``tables[name]``'s rows."""
    try:
        trees: Sequence[exp.Expr | None] = sqlglot.parse(sql, read=dialect)
    except (ParseError, TokenError):
        return sql
    changed = False
    derived: dict[str, str] = {}
    for tree in trees:
        if tree is not None and _rewrite_tree(tree, tables, dialect, derived):
            changed = True
    if not changed:
        return sql
    out = ";\n".join(tree.sql(dialect=dialect) for tree in trees if tree is not None)
    for placeholder, rows in derived.items():
        out = out.replace(placeholder, rows, 1)
    return out
