"""The row a CHECK or NOT NULL violation failed on, for PostgreSQL's ``Failing row contains``.

Rules this module keeps:

* DuckDB's violation names the table and the constraint, not the row; PostgreSQL's DETAIL
  shows the whole new row (``Failing row contains (1, null, abc).``: every column in table
  order, each in PostgreSQL's text output, ``null`` for NULL, a value longer than 64 bytes
  cut there and followed by ``...``). :func:`failing_row` finds it again by asking DuckDB
  (the caller's ``query``, a read on a connection of its own) for the statement's new rows
  that break the constraint, the first one: an ``INSERT ... VALUES`` (a column not listed
  takes its default) and an ``UPDATE`` (the rows its WHERE picks, with its SET applied).
* Only what can be read again without effects: a statement that calls a sequence function
  or a volatile function (``nextval``, ``random``, ``now``...), an ``INSERT ... SELECT``,
  ``ON CONFLICT``, ``RETURNING`` or an ``UPDATE ... FROM`` gives no DETAIL (None), and so
  does a default that is not a constant or a sequence's next value, and a statement longer
  than :data:`MAX_STATEMENT` characters (a bulk INSERT's error must not cost seconds). A ``serial`` column's
  value is the sequence's last value (the failed statement took it), counted back for the
  earlier rows of a multi-row INSERT.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import sqlglot
from sqlglot import exp

from pgbarrier.backends.duckdb_types import pg_type_oid
from pgbarrier.pgproto import types as pgt

#: runs a read query with parameters on a connection of its own: its rows
Query = Callable[[str, list[Any]], list[tuple[Any, ...]]]

MAX_FIELD_BYTES = 64
#: statements longer than this are not read again (a bulk INSERT's error stays cheap)
MAX_STATEMENT = 50_000
_VOLATILE = re.compile(r"(?i)\b(nextval|setval|currval|random|gen_random_uuid|uuid|now|"
                       r"current_timestamp|clock_timestamp|localtimestamp|current_time|"
                       r"current_date|today|transaction_timestamp|statement_timestamp)\b")
_NEXTVAL = re.compile(r"""(?i)^\s*nextval\s*\(\s*'(?:"?[^'".]+"?\.)?"?([^'"]+)"?'\s*\)\s*$""")


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _text(value: Any, duck_type: str) -> str:
    if value is None:
        return "null"
    text = pgt.to_text(value, pg_type_oid(duck_type))
    raw = text.encode()
    if len(raw) <= MAX_FIELD_BYTES:
        return text
    return raw[:MAX_FIELD_BYTES].decode(errors="ignore") + "..."


def failing_row(sql: str | None, table: str, violates: str, query: Query | None,
                params: list[Any] | None = None) -> str | None:
    """PostgreSQL's ``Failing row contains (...).`` for the first new row of ``sql``
    (writing ``table``, with parameter values ``params`` for its ``$n``) that ``violates``
    (a DuckDB SQL condition on the row's columns that is true for a failing row); None
    when the row cannot be found again."""
    if query is None or not sql or len(sql) > MAX_STATEMENT or _VOLATILE.search(sql):
        return None
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
        target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
        schema = target.db if isinstance(target, exp.Table) and target.db else None
        found_columns = query(
            "SELECT table_schema, column_name, data_type, column_default "
            "FROM information_schema.columns WHERE lower(table_name) = lower(?) "
            "ORDER BY table_schema <> 'main', table_schema, ordinal_position", [table])
        if schema is not None:  # the statement named it (public is DuckDB's main)
            schema = "main" if schema.lower() == "public" else schema
            found_columns = [c for c in found_columns if c[0].lower() == schema.lower()]
        first = found_columns[0][0] if found_columns else None
        columns = [c[1:] for c in found_columns if c[0] == first]
        if not columns:
            return None
        given = list(params or [])
        if isinstance(tree, exp.Insert):
            rows_sql, more = _inserted(tree, columns, query, len(given))
        elif isinstance(tree, exp.Update):
            rows_sql, more = _updated(tree, columns)
        else:
            return None
        if rows_sql is None:
            return None
        names = ", ".join(_quote(c[0]) for c in columns)
        found = query(f"SELECT * FROM ({rows_sql}) AS failing_row({names}) WHERE {violates} "
                      "LIMIT 1", given + more)
    except Exception:  # noqa: BLE001 - a row that cannot be found again has no DETAIL
        return None
    if not found:
        return None
    values = ", ".join(_text(v, c[1]) for v, c in zip(found[0], columns))
    return f"Failing row contains ({values})."


def _inserted(tree: exp.Insert, columns: list[tuple[Any, ...]], query: Query, taken: int
              ) -> tuple[str | None, list[Any]]:
    """The rows an INSERT ... VALUES adds (its own parameters ``$n`` after the ``taken``
    ones of the statement)."""
    source = tree.expression
    if not isinstance(source, exp.Values) or tree.args.get("conflict") or \
            tree.args.get("returning"):
        return None, []
    listed = [c.name for c in tree.this.expressions] if isinstance(tree.this, exp.Schema) \
        else [c[0] for c in columns]
    width = len(source.expressions[0].expressions) if source.expressions else 0
    if width != len(listed):
        return None, []
    n = len(source.expressions)
    aliases = ", ".join(f"v{i}" for i in range(width))
    exprs: list[str] = []
    params: list[Any] = []
    lowered = {name.lower(): i for i, name in enumerate(listed)}
    for name, duck_type, default in columns:
        i = lowered.get(name.lower())
        if i is not None:
            exprs.append(f"CAST(v{i} AS {duck_type})")
            continue
        if default is None:
            exprs.append(f"CAST(NULL AS {duck_type})")
            continue
        seq = _NEXTVAL.match(default)
        if seq is not None:
            last = query("SELECT last_value, increment_by FROM duckdb_sequences() "
                         "WHERE sequence_name = ? ORDER BY schema_name <> 'main' LIMIT 1",
                         [seq.group(1)])
            if not last or last[0][0] is None:
                return None, []
            k = taken + len(params)
            exprs.append(f"CAST(${k + 1} - (${k + 2} - row_number() OVER ()) * ${k + 3} "
                         f"AS {duck_type})")
            params.extend([last[0][0], n, last[0][1]])
            continue
        if _VOLATILE.search(default):
            return None, []
        exprs.append(f"CAST({default} AS {duck_type})")
    return (f"SELECT {', '.join(exprs)} FROM ({source.sql(dialect='duckdb')}) "
            f"AS new_rows({aliases})"), params


def _updated(tree: exp.Update, columns: list[tuple[Any, ...]]) -> tuple[str | None, list[Any]]:
    if tree.args.get("from") or tree.args.get("from_") or tree.args.get("returning"):
        return None, []
    sets: dict[str, exp.Expr] = {}
    for assignment in tree.expressions:
        if not isinstance(assignment, exp.EQ) or not isinstance(assignment.this, exp.Column):
            return None, []
        sets[assignment.this.name.lower()] = assignment.expression
    exprs = []
    for name, duck_type, _default in columns:
        value = sets.get(name.lower())
        exprs.append(f"CAST({value.sql(dialect='duckdb')} AS {duck_type})" if value is not None
                     else _quote(name))
    where = tree.args.get("where")
    target = tree.this.sql(dialect="duckdb")
    condition = f" WHERE {where.this.sql(dialect='duckdb')}" if isinstance(where, exp.Where) \
        else ""
    return f"SELECT {', '.join(exprs)} FROM {target}{condition}", []
