"""One DuckDB session's view of the emulated PostgreSQL catalog, and its session commands.

Rules this module keeps:

* A statement that may touch the catalog (:func:`pgbarrier.backends.pgcatalog.rewrite.may_touch_catalog`)
  is rewritten on sqlglot's AST for the catalog in
  :mod:`pgbarrier.backends.pgcatalog`, which is installed into the DuckDB database the
  first time a session needs it. Every other statement runs unchanged.
* The session's values reach the rewrite: its database name and user, and its client
  settings (``current_setting``, ``set_config``, ``pg_settings``).
* Output columns that are catalog columns of PostgreSQL types DuckDB lacks (``name``,
  ``oid``, ``"char"``, ``regproc``) are reported with those types, when DuckDB's type of
  the column is one they can carry (text for names, an integer for OIDs).
* ``SAVEPOINT`` and ``RELEASE`` are accepted (a savepoint never rolled back to changes
  nothing); ``ROLLBACK TO SAVEPOINT`` is 0A000: DuckDB has no savepoints. psycopg's
  nested ``transaction()`` blocks (SQLAlchemy's first connect uses one) therefore work
  until one of them fails.
* ``DEALLOCATE ALL`` and ``DISCARD ALL|PLANS|SEQUENCES|TEMP`` answer with their tags;
  ``DISCARD ALL`` also resets the client settings. (Protocol-level prepared statements
  are the wire session's; SQL ``PREPARE``d ones are the DuckDB session's,
  :mod:`pgbarrier.backends.duckdb_prepared`, which also answers ``DEALLOCATE name``.)
* After a CREATE / ALTER / DROP TABLE succeeds, :meth:`SessionCatalog.after_ddl` records
  the declared ``varchar(n)`` / ``char(n)`` / ``jsonb`` types DuckDB forgets
  (:mod:`pgbarrier.backends.pgcatalog.declared`), on the session's cursor.
* :meth:`SessionCatalog.declared_jsonb` names a table's columns declared ``jsonb`` (for
  the dialect translation's column types: DuckDB's ``JSON`` says json or jsonb).
* A query's result columns get PostgreSQL's table OID, attnum and typmod
  (:mod:`pgbarrier.backends.pgcatalog.origins`), looked up on the session's cursor before
  the query runs; any DDL (and the end of a transaction that ran some) drops the
  database's cached origins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import re
from collections.abc import Callable
from functools import lru_cache

from pgbarrier.errors import FeatureNotSupported, PgError
from pgbarrier.result import Column, Result, command
from pgbarrier.sql.colnames import postgres_names
from pgbarrier.backends.pgcatalog.rewrite import (
    CatalogContext,
    may_touch_catalog,
    rewrite_pg_catalog,
    settings_table,
)
from pgbarrier.sql.catalog_rewrite import is_rewritten
from pgbarrier.sql.public_schema import map_public, may_name_public
import duckdb

from pgbarrier.backends.pgcatalog import CATALOG_DB, MARKER_SCHEMA
from pgbarrier.backends.pgcatalog.origins import ColumnOrigin, RelationColumns, origins_of
from pgbarrier.backends.pgcatalog.declared import (
    COLUMN_TYPES_TABLE, apply_changes, declared_changes, inherited, made_from_query)
from pgbarrier.backends.duckdb_results import ResultPlan, plans_of, result_plan
from pgbarrier.backends.pgcatalog.viewdefs import view_definition
from pgbarrier.sql.setting import SettingStatement
from pgbarrier.pgproto import types as pgt

if TYPE_CHECKING:
    from pgbarrier.backends.duckdb_settings import ClientSettings
    from pgbarrier.backends.pgcatalog import CatalogInstaller

_DDL_WORDS = frozenset({"CREATE", "ALTER", "DROP"})
#: row shapes a session keeps (its prepared statements' Describes)
_DESCRIBED_SIZE = 256
_QUERY_WORDS = frozenset({("SELECT",), ("WITH",), ("TABLE",)})
_INTEGER_OIDS = frozenset({pgt.INT2, pgt.INT4, pgt.INT8, pgt.NUMERIC})
_TEXT_OIDS = frozenset({pgt.TEXT, pgt.VARCHAR})


#: PostgreSQL types DuckDB lacks -> the DuckDB-side types whose values they can carry
_CARRIERS = {pgt.OID: _INTEGER_OIDS, 28: _INTEGER_OIDS, pgt.NAME: _TEXT_OIDS,
             pgt.CHAR: _TEXT_OIDS, 24: _TEXT_OIDS | _INTEGER_OIDS,
             1034: frozenset({1009}), 1028: frozenset({1016, 1007}), 1002: frozenset({1009}),
             1003: frozenset({1009}), 22: frozenset({1005}), 30: frozenset({1016, 1007}),
             194: _TEXT_OIDS, 2277: _TEXT_OIDS, pgt.VARCHAR: frozenset({pgt.TEXT}), 2205: _TEXT_OIDS, 2206: _TEXT_OIDS, 4089: _TEXT_OIDS,
             pgt.JSONB: frozenset({pgt.JSON})}


def _fits(pg_oid: int, carried_oid: int) -> bool:
    return carried_oid in _CARRIERS.get(pg_oid, frozenset())


_MISSING = re.compile(r'relation "([^"]+)" does not exist')
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$ ]*\Z")
#: plain-looking names DuckDB gives constants (PostgreSQL: ``?column?``)
_KEYWORD_NAMES = frozenset({"true", "false", "null"})


@lru_cache(maxsize=1024)
def _pg_names(sql: str, duck_names: tuple[str, ...]) -> tuple[str, ...] | None:
    """PostgreSQL's names for a result DuckDB named ``duck_names``; None to keep them
    (cached: the same statement text comes back on every execution)."""
    if all(_PLAIN_NAME.match(n) and n.lower() not in _KEYWORD_NAMES for n in duck_names):
        return None  # columns and aliases (DuckDB names anything else by its text)
    return postgres_names(sql, len(duck_names))


class SessionCatalog:
    def __init__(self, installer: CatalogInstaller | None, database: str, user: str,
                 settings: ClientSettings, drop_temp: Callable[[], None],
                 search_path: Callable[[], tuple[str, ...]] = lambda: ("public",),
                 activity: Callable[[], Any] | None = None,
                 process_id: Callable[[], int] = lambda: 0, signals: bool = False) -> None:
        self._activity = activity
        self._process_id = process_id
        self._signals = signals
        self.installer = installer
        self.settings = settings
        self._drop_temp = drop_temp  # DISCARD ALL / TEMP: the session's temporary relations
        self._search_path = search_path
        self._database = database
        self._user = user
        self._context: CatalogContext | None = None
        self._ran_ddl = False  # in the current transaction (origins)
        self._relations: RelationColumns | None = None
        #: statement key -> (schema generation, its row shape): see :meth:`described`
        self._described: dict[tuple[Any, ...], tuple[int, tuple[Column, ...]]] = {}

    @property
    def context(self) -> CatalogContext:
        """The session's values for the rewrite, made at its first catalog query."""
        context = self._context
        if context is None:
            settings = self.settings
            context = self._context = CatalogContext(
                database=self._database, user=self._user, current_setting=settings.value,
                set_config=lambda name, value, _local: settings.set_value(name, value),
                settings_table=lambda: settings_table(settings.rows()),
                search_path=self._search_path, process_id=self._process_id,
                signals=self._signals)
            if self._activity is not None:
                context.activity_table = self._activity
            context.view_definition = self._view_definition
        return context

    def _view_definition(self, oid: int) -> str | None:
        if self.installer is None:
            return None
        cur = self.installer.cursor()
        try:
            return view_definition(cur, oid, self._search_path())
        finally:
            cur.close()

    def rewrite(self, sql: str) -> tuple[str, dict[str, int]]:
        """The SQL to run and the column type overrides (empty when not a catalog query):
        ``public`` qualifiers become ``main`` first (:mod:`pgbarrier.sql.public_schema`),
        then a catalog query is rewritten. Raises ``CatalogUnparsed`` for a statement that
        names a catalog relation but cannot be parsed, FeatureNotSupported for one that
        cannot be rewritten."""
        mapped = map_public(sql, self._database) if may_name_public(sql) else None
        if mapped is not None:
            if mapped.cross_database is not None:
                name, position = mapped.cross_database
                raise FeatureNotSupported(
                    f'cross-database references are not implemented: "{name}"',
                    position=position)
            sql = mapped.sql
        if self.installer is None or not may_touch_catalog(sql):
            return sql, {}
        rewritten = rewrite_pg_catalog(sql, self.context)
        if rewritten is None:
            return sql, {}
        self.installer.ensure()
        return rewritten.sql, rewritten.column_types

    def relation_name(self, name: str) -> str:
        """A relation's name as the client wrote it (quoting kept), as DuckDB names it:
        ``public`` is ``main`` (COPY's table, which no statement text carries)."""
        mapped = map_public(name, self._database) if may_name_public(name) else None
        if mapped is None:
            return name
        if mapped.cross_database is not None:
            raise FeatureNotSupported(
                f'cross-database references are not implemented: "{mapped.cross_database[0]}"')
        return mapped.sql

    def for_client(self, err: PgError, client_sql: str, run_sql: str) -> PgError:
        """DuckDB's error on ``run_sql`` as the client's: its position mapped back after a
        ``public`` substitution (dropped after a catalog rewrite, which has no such
        mapping), and a missing relation the client qualified with ``public`` named so, as
        PostgreSQL names it."""
        position = err.position
        if position is None or run_sql is client_sql:
            return err
        mapped = map_public(client_sql, self._database) if may_name_public(client_sql) else None
        if mapped is None or mapped.sql != run_sql:
            err.position = None
            return err
        err.position = mapped.client_position(position)
        m = _MISSING.fullmatch(err.message)
        if m and err.sqlstate == "42P01" and run_sql.startswith("main.", position - 1):
            err.message = f'relation "public.{m.group(1)}" does not exist'
        return err

    # -- the session's described statements ------------------------------------------------

    @property
    def generation(self) -> int:
        """The database's schema generation (``OriginCache``): any DDL moves it."""
        return self.installer.origins.generation if self.installer is not None else -1

    def described(self, key: tuple[Any, ...]) -> list[Column] | None:
        """A statement's row shape described before in this session, while no DDL ran
        anywhere in the database since (a prepared statement's Describe of each Bind, as
        PostgreSQL keeps its plan's result shape until an invalidation)."""
        hit = self._described.get(key)
        if hit is None or hit[0] != self.generation or self.installer is None:
            return None
        return hit[1]

    def remember_described(self, key: tuple[Any, ...], generation: int,
                           columns: list[Column]) -> None:
        if self.installer is None or generation != self.generation:
            return  # DDL meanwhile: the shape may be stale already
        described = self._described
        if len(described) >= _DESCRIBED_SIZE:
            described.pop(next(iter(described)))
        described[key] = (generation, tuple(columns))

    def after_ddl(self, cur: Any, sql: str, words: tuple[str, ...]) -> None:
        """Keep the declared column types DuckDB forgets (``pgcatalog.declared``) in step
        with a CREATE / ALTER / DROP TABLE that just succeeded on ``cur``; forget the
        database's result column origins (``pgcatalog.origins``)."""
        if self.installer is None or len(words) < 2 or words[0] not in _DDL_WORDS:
            return
        self.installer.origins.bump()
        self._ran_ddl = True
        changes = declared_changes(sql, words)
        made = made_from_query(sql, words)
        if made is not None:
            changes = [*changes, *self._inherited(cur, *made)]
        if changes:
            apply_changes(cur, MARKER_SCHEMA, changes)

    def _inherited(self, cur: Any, schema: str, table: str, query: str) -> list[Any]:
        """What a CREATE TABLE ... AS records: its columns' declared types, those of the
        query's result columns (their origins, read as for a query's RowDescription).
        While the database's catalog is not installed (no query read a result's origins
        yet) and nothing is declared in it, there is nothing to inherit: the installation
        (about a second) is not paid for a CREATE TABLE AS."""
        if not self.installer.installed:
            try:
                if not cur.execute(f"SELECT 1 FROM {MARKER_SCHEMA}.{COLUMN_TYPES_TABLE} "
                                   "LIMIT 1").fetchall():
                    return []
            except duckdb.Error:
                return []
        found = self.origins(cur, query, ("SELECT",))
        if not found or not any(o.type_oid is not None for o in found):
            return []
        try:
            columns = [r[0] for r in cur.execute(
                "SELECT column_name FROM duckdb_columns() WHERE database_name = "
                "current_database() AND schema_name = $1 AND table_name = $2 "
                "ORDER BY column_index", [schema, table]).fetchall()]
        except duckdb.Error:
            return []
        return inherited(schema, table, columns,
                         [(o.type_oid, o.typmod) if o.type_oid is not None else None
                          for o in found])

    def declared_jsonb(self, cur: Any, table: str) -> frozenset[str]:
        """The columns (lower case) of tables named ``table`` declared ``jsonb``."""
        if self.installer is None:
            return frozenset()
        try:
            rows = cur.execute(
                f"SELECT column_name FROM {MARKER_SCHEMA}.column_types "
                f"WHERE lower(table_name) = lower($1) AND type_oid = {pgt.JSONB}",
                [table]).fetchall()
        except duckdb.Error:
            return frozenset()
        return frozenset(r[0].lower() for r in rows)

    def transaction_ended(self) -> None:
        """COMMIT / ROLLBACK: DDL of the transaction is now seen by all, or undone."""
        if self._ran_ddl and self.installer is not None:
            self._ran_ddl = False
            self.installer.origins.bump()

    def origins(self, cur: Any, sql: str, words: tuple[str, ...]
                ) -> tuple[ColumnOrigin, ...] | None:
        """Where the result columns of the client's query ``sql`` come from
        (``pgcatalog.origins``), read on ``cur`` before the query runs on it; None when
        unknown (not a query, no catalog, a catalog query, or the lookup failed)."""
        if self.installer is None or words[:1] not in _QUERY_WORDS or may_touch_catalog(sql) \
                or is_rewritten(sql):
            return None
        installer = self.installer
        if self._relations is None:  # the catalog is installed on a first read only
            self._relations = RelationColumns(installer.origins, MARKER_SCHEMA)
        try:
            return origins_of(sql, self._search_path(), installer.origins,
                              self._relations.lookup(cur))
        except duckdb.Error:
            return None
        except (RecursionError, ValueError, KeyError, AttributeError, TypeError):
            # sqlglot's optimizer on a statement it does not expect: the metadata is
            # PostgreSQL's extra, never a reason to fail the client's query
            return None

    def result_plan(self, cursor: Callable[[], Any], sql: str, words: tuple[str, ...]
                    ) -> ResultPlan | None:
        """PostgreSQL's result types of the client's query ``sql``
        (:mod:`pgbarrier.backends.duckdb_results`), planned on ``cursor()`` (asked only when
        the catalog must be read) before it runs; None: DuckDB's result as it is."""
        if self.installer is None or words[:1] not in _QUERY_WORDS or may_touch_catalog(
                sql.lower().replace("pg_typeof(", "")) or is_rewritten(sql):
            return None  # a catalog query, or rw_catalog's rows: their own types
        installer = self.installer
        if self._relations is None:
            self._relations = RelationColumns(installer.origins, MARKER_SCHEMA)
        try:
            relations = self._relations
            return result_plan(sql, self._search_path(), plans_of(installer.origins),
                               installer.origins.generation,
                               lambda names: relations.lookup(cursor())(names))
        except duckdb.Error:
            return None

    @staticmethod
    def rename(sql: str, columns: list[Column]) -> list[Column]:
        """PostgreSQL's names where DuckDB named a column by its SQL text (``1``,
        ``"version"()``); plain names never cost a parse."""
        names = _pg_names(sql, tuple(c.name for c in columns))
        if names is None:
            return columns
        return [Column(n, c.type_oid, c.type_modifier) for n, c in zip(names, columns)]

    @staticmethod
    def retype(columns: list[Column], overrides: dict[str | int, int]) -> list[Column]:
        """``columns`` with the type OIDs ``overrides`` gives by name or by position (the
        dialect translation's jsonb columns), where DuckDB's type can carry the value."""
        if not overrides:
            return columns
        out = []
        for i, col in enumerate(columns):
            oid = overrides.get(i, overrides.get(col.name))
            out.append(Column(col.name, oid) if oid is not None and _fits(oid, col.type_oid)
                       else col)
        return out

    def session_command(self, words: tuple[str, ...]) -> Result | None:
        """``DEALLOCATE ALL`` / ``DISCARD ...`` / ``SAVEPOINT`` / ``RELEASE``, answered
        here; None for anything else."""
        if words[:1] == ("SAVEPOINT",):
            return command("SAVEPOINT")
        if words[:1] == ("RELEASE",):
            return command("RELEASE")
        if words[:2] == ("ROLLBACK", "TO"):
            raise FeatureNotSupported(
                "ROLLBACK TO SAVEPOINT is not supported on the DuckDB backend",
                detail="DuckDB has no savepoints: SAVEPOINT and RELEASE are accepted, and "
                       "only rolling back to one cannot be done.",
                hint="Roll back the whole transaction instead.")
        if words[:2] == ("DEALLOCATE", "ALL") or words[:3] == ("DEALLOCATE", "PREPARE", "ALL"):
            return command("DEALLOCATE ALL")
        if words[:1] == ("DISCARD",) and len(words) > 1 and \
                words[1] in ("ALL", "PLANS", "SEQUENCES", "TEMP", "TEMPORARY"):
            if words[1] in ("ALL", "TEMP", "TEMPORARY"):
                self._drop_temp()
            if words[1] == "ALL":
                result = self.settings.handle(SettingStatement("RESET", "all"))
                tagged = command("DISCARD ALL")
                if result is not None:
                    tagged.parameter_status = result.parameter_status
                return tagged
            return command("DISCARD " + ("TEMP" if words[1] == "TEMPORARY" else words[1]))
        return None
