"""PostgreSQL's DDL rules on DuckDB: object kinds, dependencies, ALTER TABLE.

The embedded DuckDB stores what clients create, but its DDL answers differently from
PostgreSQL's: it drops a table a view reads, it takes pgbarrier's materialized views for
its own tables and views, it refuses most ``ALTER TABLE`` on a table with an index, and
it has no ``ADD CONSTRAINT`` / ``DROP CONSTRAINT`` for most constraints. This package
decides such statements as PostgreSQL 15 would, from DuckDB's own catalog, and answers
the DuckDB statements that carry them out (a :class:`~.drop.Plan`), which the session
runs in one transaction. Modules:

* :mod:`.objects` — a snapshot of the database's objects, read from DuckDB's catalog;
* :mod:`.names` — names in the client's text, resolved with the search_path;
* :mod:`.depends` — what depends on what (views' stored SQL, foreign keys, defaults);
* :mod:`.create` — ``CREATE TABLE | VIEW`` naming a column twice;
* :mod:`.drop` — ``DROP TABLE | VIEW | INDEX | SEQUENCE | SCHEMA``;
* :mod:`.alter` — ``ALTER TABLE`` as migration tools emit it;
* :mod:`.index` — ``ALTER INDEX``;
* :mod:`.rebuild` — building a table again where DuckDB cannot alter it in place;
* :mod:`.lengths` — ``varchar(n)`` / ``char(n)`` enforced as PostgreSQL does.

:func:`plan` is the one entry: a statement it does not decide (None) runs on DuckDB as
written. Only DDL reaches it (the caller checks the first words), so ordinary statements
never pay for it.
"""

from __future__ import annotations

from typing import Any

from pgbarrier.backends.duckdb_ddl.alter import Translate, plan_alter
from pgbarrier.backends.duckdb_ddl.create import check_create
from pgbarrier.backends.duckdb_ddl.drop import Plan, plan_drop
from pgbarrier.backends.duckdb_ddl.index import plan_alter_index
from pgbarrier.backends.duckdb_ddl.objects import snapshot

__all__ = ["Plan", "plan", "decides", "snapshot"]

_DROPPED = frozenset({"TABLE", "VIEW", "INDEX", "SEQUENCE", "SCHEMA"})
_CREATED = frozenset({"TABLE", "VIEW"})
_CREATED_AFTER = frozenset({("OR", "REPLACE"), ("TEMP", "TABLE"), ("TEMP", "VIEW"),
                            ("TEMPORARY", "TABLE"), ("TEMPORARY", "VIEW")})


def decides(words: tuple[str, ...]) -> bool:
    """Whether a statement starting with ``words`` (upper case) is one :func:`plan` takes."""
    if len(words) < 2:
        return False
    return (words[0] == "DROP" and words[1] in _DROPPED) or \
        (words[0] == "ALTER" and words[1] in ("TABLE", "INDEX", "VIEW")) or \
        (words[0] == "CREATE" and (words[1] in _CREATED or words[1:3] in _CREATED_AFTER))


def plan(sql: str, words: tuple[str, ...], cur: Any, path: tuple[str, ...],
         named_cons: str | None = None, translate: Translate | None = None,
         user: str = "") -> Plan | None:
    """The plan for DDL statement ``sql`` (its first ``words``), seen from the session's
    cursor ``cur`` and search_path ``path`` (``named_cons``: the catalog's constraints
    with PostgreSQL's names, :func:`.objects.snapshot`; ``translate``: PostgreSQL's SQL
    to DuckDB's; ``user``: the session's); None: DuckDB runs it as written."""
    if words[0] == "CREATE":
        check_create(sql)  # PostgreSQL's 42701; else DuckDB runs it as written
        return None
    if words[0] == "DROP":
        return plan_drop(sql, snapshot(cur, named_cons), path)
    if words[:2] == ("ALTER", "INDEX"):
        return plan_alter_index(sql, snapshot(cur, named_cons), path)
    if words[:2] in (("ALTER", "TABLE"), ("ALTER", "VIEW")):
        return plan_alter(sql, snapshot(cur, named_cons), path, translate or (lambda s: s),
                          user)
    return None
