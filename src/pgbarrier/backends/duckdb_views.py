"""Which DuckDB relations are pgbarrier's materialized views, and the writes they refuse.

A batch-refresh view is a DuckDB table and a streaming view a DuckDB view, but both are
PostgreSQL materialized views to clients, and only the barrier manager changes them.
Rules this module keeps:

* :class:`ViewNames` holds, per database, the (DuckDB schema, relation) of each of
  pgbarrier's views, read from the marker table when the database is opened and kept in
  step by the backend after each create or drop commits. Its answer costs a dictionary
  lookup; a database without such views costs nothing at all.
* :meth:`ViewNames.refusal` answers PostgreSQL's 42809 for a client statement that would
  write one: ``cannot change materialized view "v"`` (INSERT, UPDATE, DELETE, MERGE,
  also inside a WITH), ``"v" is not a table`` (TRUNCATE), ``cannot copy to materialized
  view "v"`` (COPY FROM). A statement is parsed only when its text names one of them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import sqlglot
from sqlglot import exp

from pgbarrier.errors import PgError

__all__ = ["ViewNames"]

#: the first words of statements that may write a relation
WRITES = frozenset({"INSERT", "UPDATE", "DELETE", "MERGE", "TRUNCATE", "WITH"})


def _name(ident: Any) -> str | None:
    if not isinstance(ident, exp.Identifier):
        return None
    return ident.name if ident.quoted else ident.name.lower()


class ViewNames:
    """pgbarrier's views of one database, as DuckDB relations (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._names: frozenset[tuple[str, str]] = frozenset()

    def load(self, cur: Any, marker_schema: str) -> None:
        rows = cur.execute(f"SELECT schema_name, relname FROM {marker_schema}."
                           "materialized_views").fetchall()
        with self._lock:
            self._names = frozenset((s.lower(), r.lower()) for s, r in rows)

    def add(self, schema: str, relname: str) -> None:
        with self._lock:
            self._names = self._names | {(schema.lower(), relname.lower())}

    def remove(self, schema: str, relname: str) -> None:
        with self._lock:
            self._names = self._names - {(schema.lower(), relname.lower())}

    def is_view(self, schema: str, relname: str) -> bool:
        return (schema.lower(), relname.lower()) in self._names

    def mentioned(self, sql: str) -> bool:
        """Whether ``sql`` may name one of them (a substring test)."""
        names = self._names
        if not names:
            return False
        low = sql.lower()
        return any(rel in low for _, rel in names)

    def refusal(self, sql: str, first: str, resolve: Callable[[str, str | None], str | None]
                ) -> PgError | None:
        """PostgreSQL's error if ``sql`` (first word ``first``) writes one of them;
        ``resolve(name, schema)`` is the DuckDB schema the session finds a relation in."""
        if first not in WRITES or not self.mentioned(sql):
            return None
        try:
            tree = sqlglot.parse_one(sql, read="postgres")
        except Exception:  # noqa: BLE001 - DuckDB's parser answers what sqlglot cannot read
            return None
        targets: list[tuple[exp.Table, str]] = []
        if isinstance(tree, exp.TruncateTable):
            targets += [(t, "truncate") for t in tree.expressions if isinstance(t, exp.Table)]
        for node in tree.find_all(exp.Insert, exp.Update, exp.Delete, exp.Merge):
            target = node.this
            if isinstance(target, exp.Schema):
                target = target.this
            if isinstance(target, exp.Table):
                targets.append((target, "change"))
        for table, how in targets:
            rel = _name(table.this)
            if rel is None:
                continue
            schema = resolve(rel, _name(table.args.get("db")))
            if schema is not None and self.is_view(schema, rel):
                return refused(rel, how)
        return None


def refused(relname: str, how: str) -> PgError:
    """PostgreSQL's 42809 for writing materialized view ``relname`` (``how``: ``change``,
    ``truncate`` or ``copy``)."""
    if how == "truncate":
        return PgError(f'"{relname}" is not a table', sqlstate="42809")
    if how == "copy":
        return PgError(f'cannot copy to materialized view "{relname}"', sqlstate="42809")
    return PgError(f'cannot change materialized view "{relname}"', sqlstate="42809")
