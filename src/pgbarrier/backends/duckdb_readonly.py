"""Read-only transactions on DuckDB: which statements PostgreSQL refuses in one.

DuckDB has no per-transaction read-only mode, so the DuckDB session asks
:func:`refused` before running a statement in a read-only transaction (``BEGIN READ
ONLY``, ``SET TRANSACTION READ ONLY``, ``default_transaction_read_only = on``). Rules:

* Refused, as PostgreSQL 15 refuses them, with 25006 ``cannot execute <command> in a
  read-only transaction`` naming the command as PostgreSQL's tag does (``INSERT``,
  ``CREATE TABLE``, ``TRUNCATE TABLE``, ``COPY FROM``...): INSERT, UPDATE, DELETE and
  MERGE of a table that is not temporary; every CREATE, ALTER and DROP (temporary
  objects too); COMMENT, GRANT, REVOKE, TRUNCATE, COPY ... FROM; a ``WITH`` query holding
  one of INSERT/UPDATE/DELETE/MERGE (named ``SELECT``, as PostgreSQL names it); any
  statement calling ``nextval``/``setval`` (``nextval()``).
* Only statements in read-only transactions pay: a first-word test, a parse (sqlglot)
  only to find a DML target or a data-modifying ``WITH``.
* Not seen: writes hidden in a macro or a table function (DuckDB's own); pgbarrier's
  control statements (they run outside transaction blocks).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlglot import exp

from pgbarrier.errors import PgError
from pgbarrier.sql.colnames import parse_single

_DML = frozenset({"INSERT", "UPDATE", "DELETE", "MERGE"})
_ALWAYS = frozenset({"CREATE", "ALTER", "DROP", "COMMENT", "GRANT", "REVOKE", "TRUNCATE"})
_SEQUENCE_CALL = re.compile(r"\b(nextval|setval)\s*\(", re.I)
_DML_WORD = re.compile(r"\b(INSERT|UPDATE|DELETE|MERGE)\b", re.I)


def _target(sql: str) -> exp.Table | None:
    tree = parse_single(sql)
    table = tree.this if isinstance(tree, (exp.Insert, exp.Update, exp.Delete, exp.Merge)) \
        else None
    if isinstance(table, exp.Schema):  # INSERT INTO t (cols)
        table = table.this
    return table if isinstance(table, exp.Table) else None


def _modifying_with(sql: str) -> bool:
    tree = parse_single(sql)  # unparsed with the words there: refused, rather than let through
    return tree is None or any(
        True for _ in tree.find_all(exp.Insert, exp.Update, exp.Delete, exp.Merge))


def refused(sql: str, words: tuple[str, ...], tag: Callable[[], str],
            is_temp: Callable[[str | None, str], bool]) -> PgError | None:
    """The error PostgreSQL gives for ``sql`` in a read-only transaction, or None.

    ``tag`` gives the statement's command tag; ``is_temp(schema, name)`` tells whether a
    DML target is a temporary table."""
    if not words:
        return None
    first = words[0]
    name: str | None = None
    if first in _ALWAYS:
        name = tag()
    elif first == "COPY":
        if re.search(r"\bFROM\b", sql, re.I) and not re.match(r"\s*COPY\s*\(", sql, re.I):
            name = "COPY FROM"
    elif first in _DML:
        target = _target(sql)
        if target is None or not is_temp(target.db or None, target.name):
            name = first
    elif first == "WITH" and _DML_WORD.search(sql) and _modifying_with(sql):
        name = "SELECT"
    if name is None and _SEQUENCE_CALL.search(sql):
        name = _SEQUENCE_CALL.search(sql).group(1).lower() + "()"  # type: ignore[union-attr]
    if name is None:
        return None
    return PgError(f"cannot execute {name} in a read-only transaction", sqlstate="25006")
