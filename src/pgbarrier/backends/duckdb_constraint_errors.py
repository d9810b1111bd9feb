"""DuckDB's constraint violations as PostgreSQL reports them: SQLSTATE, message, DETAIL.

Rules this module keeps:

* :func:`constraint_error` turns DuckDB's ``Constraint Error`` texts into PostgreSQL's:
  23505 ``duplicate key value violates unique constraint "t_pkey"`` with DETAIL
  ``Key (a)=(1) already exists.``; 23514 ``new row for relation "t" violates check
  constraint "t_a_check"``; 23503 ``insert or update on table "t" violates foreign key
  constraint "t_b_fkey"`` with DETAIL ``Key (b)=(5) is not present in table "p".``, and
  ``update or delete on table "p" violates foreign key constraint "t_b_fkey" on table
  "t"`` with DETAIL ``Key (id)=(1) is still referenced from table "t".``; 23502 ``null
  value in column "d" of relation "t" violates not-null constraint``.
* DuckDB does not keep a constraint's name (``CONSTRAINT x ...`` is dropped), and its
  messages name the table only for CHECK and NOT NULL: the table is the statement's target
  (``INSERT INTO`` / ``UPDATE`` / ``DELETE FROM`` / ``MERGE INTO``), and the constraint is
  found among the table's constraints (``duckdb_constraints()``, read by the caller's
  ``lookup``); its name is PostgreSQL's default: ``<table>_pkey``,
  ``<table>_<col>[_<col>...]_key``, ``<table>_<col>[_<col>...]_fkey``,
  ``<table>_<col>_check`` for a check on one column and ``<table>_check`` otherwise, a
  repeated check name numbered ``1``, ``2``... in definition order, as PostgreSQL does; a
  constraint the client named in its ``CREATE TABLE`` by that name (the lookup's last field,
  from the catalog's ``pgb.named_cons``). Without a lookup answer the message keeps PostgreSQL's shape with the
  names DuckDB gave. PostgreSQL's DETAIL ``Failing row contains (...)`` (CHECK, NOT NULL)
  is the row found again by :mod:`pgbarrier.backends.duckdb_failing_row` (the caller's
  ``query``), none where it cannot be.
* The error carries PostgreSQL's fields (what psycopg's ``e.diag`` shows): ``s`` schema
  (``public`` for DuckDB's ``main``) and ``t`` table for every violation, ``n`` the
  constraint's name (23505, 23503, 23514) and ``c`` the column (23502); for a foreign key
  the table is the referencing one, as PostgreSQL's. The schema is the constraint row's
  (its eighth field), ``public`` when the lookup has none.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pgbarrier.backends.duckdb_failing_row import Query, failing_row
from pgbarrier.errors import PgError

#: (table, constraint type, columns, CHECK expression, referenced table, referenced columns,
#: the name the client gave it or None[, the table's DuckDB schema])
ConstraintRow = tuple[Any, ...]
Lookup = Callable[[], list[ConstraintRow]]

_NAME = r'(?:"(?:[^"]|"")+"|[^\s.(,;"]+)'
_TARGET = re.compile(r"(?is)^\s*(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|UPDATE|DELETE\s+FROM|"
                     r"MERGE\s+INTO)\s+(?:ONLY\s+)?((?:" + _NAME + r"\.)*" + _NAME + ")")

_DUPLICATE = re.compile(r'^Duplicate key "(.*)" violates (primary key|unique) constraint')
_DUPLICATE_BATCH = re.compile(r'^PRIMARY KEY or UNIQUE constraint violation: duplicate key '
                              r'"(.*)"')
_CHECK = re.compile(r'^CHECK constraint failed on table "?([^"]+?)"? with expression '
                    r'CHECK\((.*)\)$', re.S)
_NOT_NULL = re.compile(r'^NOT NULL constraint failed: (?:.*\.)?("(?:[^"]|"")+"|[^."]+)\.'
                       r'("(?:[^"]|"")+"|[^."]+)$')
_FK_MISSING = re.compile(r'^Violates foreign key constraint because key "(.*)" does not exist '
                         r"in the referenced table")
_FK_REFERENCED = re.compile(r'^Violates foreign key constraint because key "(.*)" is still '
                            r"referenced by a foreign key in a different table")


def _unquote(name: str) -> str:
    return name[1:-1].replace('""', '"') if name.startswith('"') else name.lower()


def target_schema(sql: str | None) -> str | None:
    """The schema an INSERT / UPDATE / DELETE / MERGE names for its table, if it names one
    (PostgreSQL's name: DuckDB's ``main`` is ``public``)."""
    m = _TARGET.match(sql or "")
    parts = re.findall(_NAME, m.group(1)) if m else []
    if len(parts) < 2:
        return None
    schema = _unquote(parts[-2])
    return "public" if schema == "main" else schema


def target_table(sql: str | None) -> str | None:
    """The table an INSERT / UPDATE / DELETE / MERGE writes (unqualified)."""
    m = _TARGET.match(sql or "")
    if not m:
        return None
    parts = re.findall(_NAME, m.group(1))
    return _unquote(parts[-1]) if parts else None


def _pairs(text: str, columns: list[str] | None = None) -> tuple[list[str], list[str]]:
    """DuckDB's ``a: 1, b: x`` as ([a, b], [1, x])."""
    if columns:
        pattern = "^" + ", ".join(re.escape(c) + r": (.*?)" for c in columns) + "$"
        m = re.match(pattern, text, re.S)
        if m:
            return list(columns), list(m.groups())
    names, values = [], []
    for part in re.split(r", (?=[^\s:,]+: )", text):
        name, _, value = part.partition(": ")
        names.append(name)
        values.append(value)
    return names, values


def _key(columns: list[str], values: list[str]) -> str:
    return f"Key ({', '.join(columns)})=({', '.join(values)})"


def _check_names(table: str, rows: list[ConstraintRow]) -> list[tuple[str | None, str]]:
    """(expression, PostgreSQL's default name) of ``table``'s checks in definition order."""
    seen: dict[str, int] = {}
    out = []
    for row in rows:
        kind, cols, expr, given = row[1], row[2], row[3], row[6]
        if kind != "CHECK":
            continue
        if given is not None:
            out.append((expr, given))
            continue
        base = f"{table}_{cols[0]}_check" if len(cols) == 1 else f"{table}_check"
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.append((expr, base if n == 0 else f"{base}{n}"))
    return out


def _schema(rows: list[ConstraintRow], table: str) -> str:
    """PostgreSQL's name of ``table``'s schema (DuckDB's ``main`` is ``public``)."""
    for r in rows:
        if r[0].lower() == table.lower() and len(r) > 7 and r[7]:
            return "public" if r[7] == "main" else r[7]
    return "public"


def _mine(rows: list[ConstraintRow], table: str) -> list[ConstraintRow]:
    return [r for r in rows if r[0].lower() == table.lower()]


def constraint_error(message: str, sql: str | None, lookup: Lookup | None,
                     query: Query | None = None, params: list[Any] | None = None
                     ) -> PgError | None:
    """PostgreSQL's error for DuckDB's constraint-violation ``message``; None when the
    message is not one."""
    cache: list[list[ConstraintRow]] = []

    def rows() -> list[ConstraintRow]:
        if not cache:
            cache.append(lookup() if lookup is not None else [])
        return cache[0]

    def err(state: str, text: str, detail: str | None = None, *, table: str,
            name: str | None = None, column: str | None = None) -> PgError:
        e = PgError.by_sqlstate(state)(text, detail=detail, sqlstate=state)
        named = target_schema(sql) if table == target_table(sql) else None
        e.fields["s"] = named or _schema(rows(), table)
        e.fields["t"] = table
        if column is not None:
            e.fields["c"] = column
        if name is not None:
            e.fields["n"] = name
        return e

    m = _NOT_NULL.match(message)
    if m:
        table, column = (n[1:-1].replace('""', '"') if n.startswith('"') else n
                         for n in m.groups())
        if re.match(r"(?is)\s*ALTER\s+TABLE\b.*\bSET\s+NOT\s+NULL\b", sql or ""):
            return err("23502", f'column "{column}" of relation "{table}" contains null values',
                       table=table, column=column)
        return err("23502", f'null value in column "{column}" of relation "{table}" '
                            "violates not-null constraint",
                   failing_row(sql, table, '"' + column.replace('"', '""') + '" IS NULL', query,
                               params),
                   table=table, column=column)
    m = _CHECK.match(message)
    if m:
        table, expr = m.groups()
        names = _check_names(table, _mine(rows(), table))
        name = next((n for e, n in names if e == expr), None) or f"{table}_check"
        return err("23514", f'new row for relation "{table}" violates check constraint '
                            f'"{name}"', failing_row(sql, table, f"NOT ({expr})", query, params),
                   table=table, name=name)
    m = _DUPLICATE.match(message) or _DUPLICATE_BATCH.match(message)
    if m:
        table = target_table(sql) or "?"
        keys = [r for r in _mine(rows(), table) if r[1] in ("PRIMARY KEY", "UNIQUE")]
        if m.re is _DUPLICATE:
            columns, values = _pairs(m.group(1))
            kind = "PRIMARY KEY" if m.group(2) == "primary key" else "UNIQUE"
            found = next((r for r in keys if r[1] == kind and
                          [c.lower() for c in r[2]] == [c.lower() for c in columns]), None)
            columns = found[2] if found else columns
        else:  # a duplicate within the statement's own rows: DuckDB names no columns
            parts = m.group(1).split(", ")
            fits = [r for r in keys if len(r[2]) == len(parts)]
            found = fits[0] if fits else None
            kind = found[1] if found else "UNIQUE"
            columns = found[2] if found else ["?"] * len(parts)
            values = parts if found is None else _pairs(
                ", ".join(f"{c}: {v}" for c, v in zip(columns, parts)), columns)[1]
        name = (found[6] if found and found[6] else f"{table}_pkey" if kind == "PRIMARY KEY"
                else f"{table}_{'_'.join(columns)}_key")
        return err("23505", f'duplicate key value violates unique constraint "{name}"',
                   _key(columns, values) + " already exists.", table=table, name=name)
    m = _FK_MISSING.match(message)
    if m:
        table = target_table(sql) or "?"
        ref_cols, values = _pairs(m.group(1))
        lower = [c.lower() for c in ref_cols]
        fk = next((r for r in _mine(rows(), table) if r[1] == "FOREIGN KEY" and
                   [c.lower() for c in r[5]] == lower), None)
        columns = fk[2] if fk else ref_cols
        referenced = fk[4] if fk and fk[4] else "?"
        name = fk[6] if fk and fk[6] else f"{table}_{'_'.join(columns)}_fkey"
        return err("23503", f'insert or update on table "{table}" violates foreign key '
                            f'constraint "{name}"',
                   _key(columns, values) + f' is not present in table "{referenced}".',
                   table=table, name=name)
    m = _FK_REFERENCED.match(message)
    if m:
        parent = target_table(sql) or "?"
        fk_cols, values = _pairs(m.group(1))
        lower = [c.lower() for c in fk_cols]
        fk = next((r for r in rows() if r[1] == "FOREIGN KEY" and r[4] is not None and
                   r[4].lower() == parent.lower() and [c.lower() for c in r[2]] == lower), None)
        child = fk[0] if fk else "?"
        ref_cols = fk[5] if fk else fk_cols
        name = fk[6] if fk and fk[6] else f"{child}_{'_'.join(fk_cols)}_fkey"
        return err("23503", f'update or delete on table "{parent}" violates foreign key '
                            f'constraint "{name}" on table "{child}"',
                   _key(ref_cols, values) + f' is still referenced from table "{child}".',
                   table=child, name=name)
    return None
