"""The embedded DuckDB data plane (duckdb 2.x Python API).

Rules this module keeps:

* One DuckDB database per pgbarrier database: ``<data_dir>/<name>.duckdb``, or a
  private in-memory database per name when ``data_dir`` is ``:memory:``.
* Each client session gets its own cursor (a DuckDB connection to that database),
  so sessions run concurrently and ``interrupt`` cancels only that session.
* Statements are classified by their leading keywords to produce PostgreSQL's
  command tags (``INSERT 0 3``, ``UPDATE 2``, ``SELECT 1``, ``CREATE TABLE``...).
* ``describe`` builds a lazy relation for queries, which DuckDB plans but does
  not run; DML never runs to be described (see ``NeedsExecution``).
* A batch view is a table; its refresh rebuilds it with ``CREATE OR REPLACE
  TABLE`` inside one transaction, so readers see the old rows until COMMIT.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import duckdb

from pgbarrier.backends.base import Backend, BackendSession, RefreshCancel
from pgbarrier.backends.duckdb_errors import to_pg_error
from pgbarrier.backends.duckdb_types import pg_type_oid
from pgbarrier.errors import QueryCanceled
from pgbarrier.result import Column, Result, command, rowset
from pgbarrier.sql.classify import leading_words

#: statements whose first keyword means "returns rows"
_ROW_WORDS = frozenset({"SELECT", "WITH", "VALUES", "TABLE", "SHOW", "DESCRIBE", "EXPLAIN",
                        "PRAGMA", "SUMMARIZE", "FROM", "CALL", "PIVOT", "UNPIVOT"})
#: queries DuckDB can plan lazily as a relation (describe without running)
_LAZY_WORDS = frozenset({"SELECT", "WITH", "VALUES", "TABLE", "FROM"})
_DML = frozenset({"INSERT", "UPDATE", "DELETE", "MERGE"})
_SKIP_IN_TAG = frozenset({"OR", "REPLACE", "TEMP", "TEMPORARY", "UNIQUE", "IF", "NOT", "EXISTS",
                          "GLOBAL", "LOCAL", "PERSISTENT", "UNLOGGED"})
_TX_TAGS = {"BEGIN": "BEGIN", "START": "START TRANSACTION", "COMMIT": "COMMIT", "END": "COMMIT",
            "ROLLBACK": "ROLLBACK", "ABORT": "ROLLBACK"}


class NeedsExecution(Exception):
    """The row shape cannot be known without running the statement (DML ... RETURNING)."""


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def command_tag(words: tuple[str, ...], sql: str) -> str:
    """PostgreSQL's CommandComplete tag for a statement that returns no rows."""
    if not words:
        return ""
    first = words[0]
    if first in _TX_TAGS:
        return _TX_TAGS[first]
    if first in ("CREATE", "DROP", "ALTER"):
        rest = [w for w in leading_words(sql, 8)[1:] if w not in _SKIP_IN_TAG]
        if rest and rest[0] == "MATERIALIZED" and len(rest) > 1:
            return f"{first} MATERIALIZED {rest[1]}"
        return f"{first} {rest[0]}" if rest else first
    if first == "TRUNCATE":
        return "TRUNCATE TABLE"
    return first


def _returns_rows(words: tuple[str, ...], sql: str) -> bool:
    if not words:
        return False
    if words[0] in _ROW_WORDS:
        return True
    return words[0] in _DML and "RETURNING" in sql.upper()


class DuckDBSession(BackendSession):
    def __init__(self, conn: duckdb.DuckDBPyConnection) -> None:
        super().__init__()
        self._cursor = conn.cursor()

    def cursor(self) -> duckdb.DuckDBPyConnection:
        return self._cursor

    def execute(self, sql: str, params: list[Any] | None = None) -> Result:
        words = leading_words(sql, 3)
        cur = self._cursor
        try:
            if params:
                cur.execute(sql, params)
            else:
                cur.execute(sql)
            if _returns_rows(words, sql):
                columns = [Column(d[0], pg_type_oid(d[1])) for d in cur.description or ()]
                rows = cur.fetchall()
                tag = words[0] if words[0] in _DML else "SELECT"
                return rowset(columns, rows, tag)
            counted = cur.fetchall() if words and words[0] in _DML else None
        except duckdb.Error as exc:
            raise to_pg_error(exc, sql) from None
        tag = command_tag(words, sql)
        if counted is not None:
            n = counted[0][0] if counted else 0
            tag = f"INSERT 0 {n}" if words[0] == "INSERT" else f"{words[0]} {n}"
        return command(tag)

    def describe(self, sql: str, params: list[Any] | None = None) -> list[Column] | None:
        words = leading_words(sql, 3)
        if not _returns_rows(words, sql):
            return None
        if words[0] not in _LAZY_WORDS:
            raise NeedsExecution(sql)
        try:
            rel = self._cursor.sql(sql, params=params) if params else self._cursor.sql(sql)
        except duckdb.Error as exc:
            raise to_pg_error(exc, sql) from None
        if rel is None:
            return None
        return [Column(name, pg_type_oid(t)) for name, t in zip(rel.columns, rel.types)]

    def interrupt(self) -> None:
        self._cursor.interrupt()

    def close(self) -> None:
        try:
            self._cursor.close()
        except duckdb.Error:
            pass


class DuckDBBackend(Backend):
    """DuckDB files under ``data_dir`` (or in memory), one per database."""

    dialect = "duckdb"

    def __init__(self, data_dir: str = ":memory:") -> None:
        super().__init__()
        self.data_dir = data_dir
        self._dbs: dict[str, duckdb.DuckDBPyConnection] = {}
        self._lock = threading.Lock()
        if data_dir != ":memory:":
            Path(data_dir).mkdir(parents=True, exist_ok=True)

    def _db(self, name: str) -> duckdb.DuckDBPyConnection:
        with self._lock:
            conn = self._dbs.get(name)
            if conn is None:
                conn = duckdb.connect(self._path(name))
                self._dbs[name] = conn
            return conn

    def _path(self, name: str) -> str:
        return ":memory:" if self.data_dir == ":memory:" else os.path.join(
            self.data_dir, f"{name}.duckdb")

    def ensure_database(self, name: str) -> None:
        self._db(name)

    def drop_database(self, name: str) -> None:
        """Close ``name``'s DuckDB and delete its file (its sessions must be closed)."""
        with self._lock:
            conn = self._dbs.pop(name, None)
        if conn is not None:
            conn.close()
        path = self._path(name)
        if path != ":memory:":
            for p in (path, path + ".wal"):
                if os.path.exists(p):
                    os.remove(p)

    def connect(self, database: str, user: str) -> DuckDBSession:
        return DuckDBSession(self._db(database))

    def _run(self, database: str, fn: Any) -> Any:
        cur = self._db(database).cursor()
        try:
            return fn(cur)
        finally:
            cur.close()

    def relation_exists(self, database: str, name: str) -> bool:
        rows = self._run(database, lambda c: c.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_catalog = current_database() "
            "AND table_schema = 'main' AND table_name = $1", [name]).fetchall())
        return bool(rows)

    def describe_query(self, database: str, query: str) -> list[Column]:
        def go(cur: duckdb.DuckDBPyConnection) -> list[Column]:
            try:
                rel = cur.sql(query)
            except duckdb.Error as exc:
                raise to_pg_error(exc) from None
            return [Column(n, pg_type_oid(t)) for n, t in zip(rel.columns, rel.types)]
        return self._run(database, go)

    @staticmethod
    def _aliased(columns: tuple[str, ...] | None, query: str) -> str:
        if not columns:
            return query
        cols = ", ".join(quote_ident(c) for c in columns)
        return f"SELECT * FROM ({query}) AS _q({cols})"

    def _swap_in(self, database: str, name: str, columns: tuple[str, ...] | None, query: str,
                 replace: bool, cancel: RefreshCancel | None = None) -> int:
        """In one transaction: (re)create table ``name`` from ``query``, count it, commit."""
        verb = "CREATE OR REPLACE TABLE" if replace else "CREATE TABLE"

        def go(cur: duckdb.DuckDBPyConnection) -> int:
            try:
                if cancel is not None:
                    cancel.bind(cur.interrupt)
                cur.execute("BEGIN")
                cur.execute(f"{verb} {quote_ident(name)} AS {self._aliased(columns, query)}")
                (count,) = cur.execute(f"SELECT count(*) FROM {quote_ident(name)}").fetchone()
                if cancel is not None:
                    cancel.check()  # an interrupt that missed the query still rolls it back
                cur.execute("COMMIT")
                return int(count)
            except (duckdb.Error, QueryCanceled) as exc:
                try:
                    cur.execute("ROLLBACK")
                except duckdb.Error:
                    pass
                raise (exc if isinstance(exc, QueryCanceled) else to_pg_error(exc)) from None
            finally:
                if cancel is not None:
                    cancel.unbind()
        return self._run(database, go)

    def create_batch_view(self, database: str, name: str, columns: tuple[str, ...] | None,
                          query: str) -> int:
        """A batch view is a table holding the rows of ``query``, created in one transaction."""
        return self._swap_in(database, name, columns, query, replace=False)

    def refresh_batch_view(self, database: str, name: str, columns: tuple[str, ...] | None,
                           query: str, cancel: RefreshCancel | None = None) -> int:
        """``CREATE OR REPLACE TABLE`` in one transaction: readers see the old rows until COMMIT."""
        return self._swap_in(database, name, columns, query, replace=True, cancel=cancel)

    def _drop(self, database: str, kind: str, name: str) -> None:
        def go(cur: duckdb.DuckDBPyConnection) -> None:
            try:
                cur.execute(f"DROP {kind} IF EXISTS {quote_ident(name)}")
            except duckdb.Error as exc:
                raise to_pg_error(exc) from None
        self._run(database, go)

    def drop_batch_view(self, database: str, name: str) -> None:
        self._drop(database, "TABLE", name)

    def create_view(self, database: str, name: str, columns: tuple[str, ...] | None,
                    query: str) -> None:
        def go(cur: duckdb.DuckDBPyConnection) -> None:
            try:
                cur.execute(f"CREATE VIEW {quote_ident(name)} AS {self._aliased(columns, query)}")
            except duckdb.Error as exc:
                raise to_pg_error(exc) from None
        self._run(database, go)

    def drop_view(self, database: str, name: str) -> None:
        self._drop(database, "VIEW", name)

    def close(self) -> None:
        with self._lock:
            for conn in self._dbs.values():
                conn.close()
            self._dbs.clear()
