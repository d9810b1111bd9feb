"""The embedded DuckDB data plane (duckdb 2.x Python API).

Rules this module keeps:

* One DuckDB database per pgbarrier database: a file directly in ``data_dir`` whose
  name is derived safely from the database name (:mod:`pgbarrier.backends.duckdb_files`),
  or a private in-memory database per name when ``data_dir`` is ``:memory:``.
* Each instance is locked down by :func:`pgbarrier.backends.duckdb_config.lock_down`
  as it is opened, before any client statement (no host files outside ``--allow-path``,
  no extensions, no persistent secrets, configuration locked); every client statement
  passes :class:`~pgbarrier.backends.duckdb_config.StatementGuard` (no SET GLOBAL, no
  ATTACH/DETACH, a SET is per session), and DISCARD ALL resets what the session SET.
* Each client session gets its own cursor (a DuckDB connection to that database),
  so sessions run concurrently and ``interrupt`` cancels only that session. The cursor
  is opened, and the session's DuckDB set-up run on it (its user variable, UTC, the
  TEMP ``version()`` macro and path shadows, the TEMP ``jsonb`` type), the first time
  the session needs DuckDB, before that first use: an idle session, or one that has
  only run the client settings kept here (SET/SHOW/RESET of them, DISCARD ALL), holds
  no DuckDB connection (a DuckDB connection with its temp catalog is tens of KB).
  A ``TimeZone`` other than ``UTC`` opens it at once (DuckDB judges the zone), so does a
  ``search_path`` other than the default (its schemas are looked up), and a
  failed set-up is that first statement's error (the next one tries again).
* PostgreSQL's ``public`` is DuckDB's ``main``: a ``public`` qualifier in any statement
  (and in a materialized view's query) is substituted token by token
  (:mod:`pgbarrier.sql.public_schema`), and DuckDB's error positions are mapped back to
  the client's text. ``CREATE SCHEMA [IF NOT EXISTS] public`` answers as PostgreSQL does
  (42P06, or its NOTICE); ``DROP SCHEMA public`` is 0A000 (``main`` cannot be dropped).
* Transaction control: ``BEGIN`` / ``START TRANSACTION`` take PostgreSQL's modes (kept by
  the client settings, DuckDB gets a plain BEGIN; a read-only transaction refuses writes,
  :mod:`pgbarrier.backends.duckdb_readonly`); SQL ``PREPARE`` / ``EXECUTE`` /
  ``DEALLOCATE`` (:mod:`pgbarrier.backends.duckdb_prepared`) and cursors ``DECLARE`` /
  ``FETCH`` / ``MOVE`` / ``CLOSE`` (:mod:`pgbarrier.backends.duckdb_cursors`) are the
  session's own, recognised by their first word.
* PostgreSQL's unreserved keywords DuckDB reserves (``at``, ``by``, ``show``) are quoted
  where they stand as names before DuckDB sees the text
  (:mod:`pgbarrier.backends.duckdb_keywords`), so ``CREATE TABLE at (...)`` works.
* Statements are classified by their leading keywords to produce PostgreSQL's
  command tags (``INSERT 0 3``, ``UPDATE 2``, ``SELECT 1``, ``CREATE TABLE``...).
* ``describe`` builds a lazy relation (``cursor.sql()``), which binds the query
  and runs nothing, except that binding evaluates the sequence functions
  (``nextval``/``setval``/``currval``): a query that names one of them is
  described with DuckDB's ``DESCRIBE <query>`` instead (five times slower, and
  it runs nothing at all). ``describe_query`` always uses ``DESCRIBE``.
  Parameters are bound as the values given, or NULL when describing a
  statement before Bind. DML never runs to be described: ``... RETURNING`` is
  described as ``SELECT <returning list> FROM <target>``, else the shape comes
  with Execute (see ``NeedsExecution``).
* ``describe_statement`` infers parameter types with
  :func:`pgbarrier.backends.duckdb_types.infer_param_types` (DuckDB itself leaves
  them unknown until values are bound).
* PostgreSQL's client settings that DuckDB does not know are kept per session
  here (accepted, remembered, answered by ``SHOW``, reset by ``RESET``), so that
  drivers' connect-time ``SET``s work: ``application_name`` (63 characters
  kept), ``extra_float_digits`` (-15..3; output is always the shortest exact
  form, as with PostgreSQL's default 1), ``client_encoding`` (every encoding
  :mod:`pgbarrier.pgproto.encodings` converts; the wire converts text to and from it),
  ``DateStyle`` (ISO output only; the field order is remembered),
  ``IntervalStyle`` (postgres only), ``TimeZone`` (any zone DuckDB's ICU knows,
  applied to the session's DuckDB connection), ``standard_conforming_strings`` (on
  only), ``bytea_output`` (hex only) and ``search_path`` (applied to DuckDB's own
  search_path, ``public`` being ``main`` and ``"$user"`` the user's schema; schemas that
  do not exist are skipped, as PostgreSQL skips them, and the path is worked out again
  when the session SETs it or creates or drops a schema: a schema another session creates
  later joins this session's path at its next SET; a path with no existing schema leaves
  DuckDB creating in ``main``, where PostgreSQL would refuse, 3F000). ``current_schema()``
  and ``current_schemas()`` answer from the same path. PostgreSQL's other
  user-settable settings (``synchronous_commit``, ``work_mem``, ``jit``...) and custom
  ``a.b`` ones are accepted, checked and shown back as PostgreSQL does
  (:mod:`pgbarrier.backends.duckdb_gucs`) and change nothing in DuckDB; ``SHOW`` of a name
  that is no setting (DuckDB takes it for a table) is 42704 (``SHOW TABLES`` and DuckDB's
  own settings stay DuckDB's, under the statement guard), ``SHOW ALL`` lists them all.
  A value outside those is 22023. ``server_version``, ``server_version_num``, ``server_encoding`` and
  ``integer_datetimes`` answer ``SHOW`` and refuse ``SET`` (55P02). ``SET LOCAL``
  is treated as ``SET`` and these settings are not rolled back with a
  transaction (PostgreSQL would). A change of a reported one (application_name,
  client_encoding, DateStyle, IntervalStyle, TimeZone,
  standard_conforming_strings) is in ``Result.parameter_status``. The
  statement is recognised by its first word (SET/SHOW/RESET) and the setting
  name only; every other SET/SHOW/RESET goes to DuckDB.
* ``version()`` answers ``PostgreSQL 15.0 (pgbarrier <v> on DuckDB <v>)``: each
  session creates a TEMP macro ``version()``, and DuckDB resolves a function
  name in the session's temp schema before the built-in one (no SQL rewriting).
  ``pragma_version()`` still tells DuckDB's own version.
* asyncpg's type introspection query (it sends it to build array codecs) is
  answered from a static table of PostgreSQL's built-in types
  (:func:`pgbarrier.backends.duckdb_types.type_introspection_rows`), recognised
  by its first words; DuckDB's ``pg_catalog`` cannot run it.
* DuckDB has no ``jsonb``: each session creates a TEMP type ``jsonb`` as an
  alias of ``JSON``, so ``'{}'::jsonb`` and ``jsonb`` columns work. A result column that
  is a declared ``jsonb`` column (``pgcatalog.origins``) or a visibly jsonb expression
  (``duckdb_dialect.result_types``) is reported as ``jsonb`` (OID 3802) and printed as
  PostgreSQL prints jsonb; other JSON values are ``json`` (OID 114).
* Rows stream: a statement's rows are a :class:`~pgbarrier.result.RowStream`
  fetched from the session's cursor (``execute`` + ``fetchmany``, which DuckDB
  runs incrementally; ``fetchall`` would build the whole result), so memory is a
  batch, not the result. The cursor holds one pending result: every other use of
  it (another statement, a Describe, a transaction's COMMIT) first parks the
  pending stream, reading its rest into memory, so a portal suspended by
  Execute's row limit still resumes with all its rows and count (a portal given
  its own cursor would be another DuckDB connection, outside this session's
  transaction, temp objects and settings). If that rest fails, its rows before
  the failure and then the error go to the portal's next Execute; inside a
  transaction block DuckDB has aborted the transaction by then, so the other
  statement gets 25P02 (PostgreSQL would fail only the portal). ``interrupt`` during a fetch is
  DuckDB's interrupt; otherwise (rows being written, a portal suspended) it flags
  the stream, which fails with 57014 at its next batch, unless a suspended
  portal's next Execute begins first (PostgreSQL ignores a cancel when idle).
* Large results take the columnar path (:mod:`pgbarrier.backends.duckdb_batches`): a read
  statement runs as DuckDB's streaming Arrow result and its rows are a
  :class:`~pgbarrier.result.BatchStream` of record batches, written out a column at a time
  (:mod:`pgbarrier.pgproto.columnar`); parking, cancel and errors mid-result are as above.
  A text whose result was short takes the row path next time (``fetchmany``, and its kept
  plan), so ``SELECT 1`` pays nothing for batches.
* A batch view is a table; its refresh rebuilds it with ``CREATE OR REPLACE
  TABLE`` inside one transaction, so readers see the old rows until COMMIT.
* The hidden marker table ``pgbarrier.materialized_views`` is created when the database
  is opened, before any client can use it, never inside a client's or a create's
  transaction (two transactions creating the schema conflict in DuckDB's catalog). Each
  create/drop of a batch-refresh or streaming view writes its marker row and commits
  under the database's marker lock (the query itself runs outside it), and a DuckDB
  write-write conflict of such a transaction is retried (``_CONFLICT_RETRIES`` times),
  so concurrent creates and drops of different views never see one.
* ``relations_read`` follows plain views through ``duckdb_views()`` (DuckDB keeps no
  dependencies of a view: :mod:`pgbarrier.backends.duckdb_ddl.depends` reads them from its
  stored SQL, the one place dependencies come from).
"""

from __future__ import annotations

import os
import re
import logging
import threading
from time import perf_counter
import weakref
from pathlib import Path
from collections.abc import Callable
from typing import Any

import duckdb

from pgbarrier import __version__
from pgbarrier.backends import duckdb_ddl
from pgbarrier.backends.duckdb_numeric import natural_converter
from pgbarrier.backends.duckdb_views import WRITES as VIEW_WRITES, ViewNames
from pgbarrier.backends.duckdb_views import refused as refused_write
from pgbarrier.backends.base import (
    Backend,
    BackendSession,
    DropsMaterializedViews,
    NeedsExecution,
    RefreshCancel,
    WireParams,
    database_options_refused,
)
from pgbarrier.backends.duckdb_catalog import SessionCatalog
from pgbarrier.backends.duckdb_results import ResultPlan
from pgbarrier.backends.duckdb_copy import CopyIn, target_columns
from pgbarrier.backends.duckdb_config import PATH_SHADOWS, DuckDBLimits, StatementGuard, lock_down
from pgbarrier.backends.duckdb_dialect import ColumnTypes, may_differ, result_types
from pgbarrier.backends.duckdb_dialect import translate as _translate
from pgbarrier.backends.duckdb_constraint_errors import ConstraintRow
from pgbarrier.backends.duckdb_errors import to_pg_error
from pgbarrier.backends.duckdb_spares import SpareCursors
from pgbarrier.backends.duckdb_intervals import (interval_indexes, months_query, months_rows,
                                                  parts_query)
from pgbarrier.backends import duckdb_explain
from pgbarrier.backends.duckdb_signals import Signals
from pgbarrier.backends.pgcatalog.rewrite import activity_table
from pgbarrier.backends.duckdb_files import database_path
from pgbarrier.backends.duckdb_sql import literal, quote_ident
from pgbarrier.backends.duckdb_settings import DEFAULT_SEARCH_PATH, ClientSettings, path_names
from pgbarrier.sql.startup_params import StartupSettings
from pgbarrier.backends.pgcatalog import CATALOG_DB, MARKER_SCHEMA, CatalogInstaller
from pgbarrier.backends.pgcatalog.rewrite import may_touch_catalog
from pgbarrier.backends.pgcatalog.origins import with_origins
from pgbarrier.backends.duckdb_types import (
    TYPE_INTROSPECTION_COLUMNS,
    TableColumns,
    count_params,
    infer_param_types,
    is_type_introspection,
    pg_type_oid,
    type_introspection_rows,
)
from pgbarrier.backends.duckdb_cursors import Cursor, parse_close, parse_declare, parse_fetch
from pgbarrier.backends.duckdb_cursors import missing as missing_cursor
from pgbarrier.backends.duckdb_keywords import quote_keyword_names
from pgbarrier.backends.duckdb_lock import lock_targets
from pgbarrier.backends.duckdb_sequences import COLUMNS as SEQUENCE_COLUMNS
from pgbarrier.backends.duckdb_sequences import sequence_read, sequence_row
from pgbarrier.backends.duckdb_prepared import SqlPrepared, wrong_count
from pgbarrier.backends.duckdb_plans import PLANNED_WORDS, Plans
from pgbarrier.backends import duckdb_batches
from pgbarrier.backends import duckdb_notify
from pgbarrier.backends.duckdb_batches import BatchReading
from pgbarrier.backends.duckdb_readonly import refused
from pgbarrier.backends.pgcatalog.unrewritten import CatalogUnparsed
from pgbarrier.errors import (DuplicateDatabase, FeatureNotSupported, InvalidParameterValue,
                              Notice, PgError, QueryCanceled, SyntaxError)
from pgbarrier.result import BatchStream, Column, Result, RowStream, command, rowset
from pgbarrier.sql.classify import leading_words
from pgbarrier.sql.relnames import canonical, name_parts, qualify_relations, quote_name
from pgbarrier.sql.colnames import postgres_names
from pgbarrier.sql.dependencies import walk
from pgbarrier.backends.duckdb_ddl.depends import relations_read
from pgbarrier.backends.duckdb_ddl.objects import pg_schema
from pgbarrier.backends.duckdb_ddl.select_into import as_create
from pgbarrier.sql.public_schema import map_public, may_name_public, schema_command
from pgbarrier.sql.setting import ModeSyntaxError, parse_setting, transaction_modes
from pgbarrier.pgproto import types as pgt
from pgbarrier.pgproto.encodings import ClientEncoding

#: what ``version()`` answers on DuckDB (clients parse "PostgreSQL <major>.<minor>")
VERSION = f"PostgreSQL 15.0 (pgbarrier {__version__} on DuckDB {duckdb.__version__})"

#: statements whose first keyword means "returns rows"
_ROW_WORDS = frozenset({"SELECT", "WITH", "VALUES", "TABLE", "SHOW", "DESCRIBE", "EXPLAIN",
                        "PRAGMA", "SUMMARIZE", "FROM", "CALL", "PIVOT", "UNPIVOT"})
#: queries DuckDB can plan lazily as a relation (describe without running)
_LAZY_WORDS = frozenset({"SELECT", "WITH", "VALUES", "TABLE", "FROM"})
_DML = frozenset({"INSERT", "UPDATE", "DELETE", "MERGE"})
#: CREATE TABLE ... AS ... WITH NO DATA: PostgreSQL's tag is CREATE TABLE AS
_NO_DATA = re.compile(r"(?i)\bwith\s+no\s+data\s*;?\s*$")
#: statements after which no kept plan may run (duckdb_plans): they may change settings
_FORGETS_PLANS = frozenset({"SET", "RESET", "PRAGMA", "ATTACH", "DETACH", "USE", "LOAD",
                            "INSTALL"})
_SKIP_IN_TAG = frozenset({"OR", "REPLACE", "TEMP", "TEMPORARY", "UNIQUE", "IF", "NOT", "EXISTS",
                          "GLOBAL", "LOCAL", "PERSISTENT", "UNLOGGED"})
_PREPARED_WORDS = frozenset({"PREPARE", "EXECUTE"})
_CURSOR_WORDS = frozenset({"DECLARE", "FETCH", "MOVE", "CLOSE"})
_BEGIN = re.compile(r"\s*(?:BEGIN(?:\s+(?:WORK|TRANSACTION)\b)?|START\s+TRANSACTION\b)", re.I)
_TX_TAGS = {"BEGIN": "BEGIN", "START": "START TRANSACTION", "COMMIT": "COMMIT", "END": "COMMIT",
            "ROLLBACK": "ROLLBACK", "ABORT": "ROLLBACK"}


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


def postgres_to_duckdb(sql: str, column_types: ColumnTypes | None = None) -> str:
    """The DuckDB text of a client statement (:mod:`pgbarrier.backends.duckdb_dialect`),
    the same object when nothing differs. A statement the catalog rewrite takes is left to
    it: that rewrite reads PostgreSQL's syntax and writes DuckDB's itself."""
    if not may_differ(sql) or may_touch_catalog(sql):
        return sql
    return _translate(sql, column_types)


def _chain(first: Callable[[Any], Any], then: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda rows: then(first(rows))


def _duck_param(v: Any) -> Any:
    """A decoded Bind value as DuckDB's Python API takes it."""
    if isinstance(v, pgt.Interval):
        return pgt.interval_text(v)  # months: DuckDB casts PostgreSQL's interval text
    if isinstance(v, list):
        return [_duck_param(x) for x in v]
    return v


#: statements that write nothing: they never open the extended protocol's implicit block
_READ_ONLY_WORDS = frozenset({"SELECT", "VALUES", "TABLE", "SHOW", "EXPLAIN", "DESCRIBE", "SET",
                              "RESET", "DISCARD", "DEALLOCATE", "SUMMARIZE", "PRAGMA"})


#: the TimeZone a connection is set up in (:func:`prepare_connection`): the sessions'
#: default, which a session in it need not set again
PREPARED_ZONE = "UTC"
#: how much of a streaming result DuckDB computes ahead of its reader (the columnar path,
#: ``duckdb_batches``). DuckDB's default, 10 MiB, is filled before the first batch is handed
#: out: some 170,000 rows of eight columns, 4 ms before a large result's first row. At 2 MiB
#: the first batch comes in 1.4 ms, the whole result as fast and with less DuckDB CPU
#: (300,000 rows in process, 30 interleaved rounds: 8.0 / 8.2 ms, 13.0 / 9.7 ms CPU)
STREAM_AHEAD = "2MiB"


def prepare_connection(cur: duckdb.DuckDBPyConnection) -> None:
    """What every session's DuckDB connection of a database holds before its first
    statement, the same for all (``duckdb_spares`` makes them ahead of time): the
    ``version()`` macro, the path shadows (``duckdb_config``), the ``jsonb`` type, and
    TimeZone :data:`PREPARED_ZONE` (DuckDB's own default is the machine's zone), and
    :data:`STREAM_AHEAD`."""
    try:
        cur.execute("SET SESSION TimeZone = " + literal(PREPARED_ZONE))
    except duckdb.Error:  # no ICU: DuckDB has no time zones, timestamptz is UTC
        pass
    cur.execute("SET SESSION streaming_buffer_size = " + literal(STREAM_AHEAD))
    cur.execute("CREATE OR REPLACE TEMP MACRO version() AS " + literal(VERSION))
    for shadow in PATH_SHADOWS:  # no server paths in DuckDB's catalog functions
        cur.execute(shadow)
    try:
        cur.execute("CREATE TEMP TYPE jsonb AS JSON")
    except duckdb.Error:  # the database defines jsonb itself
        pass


class DuckDBSession(BackendSession):
    def copies_here(self, sql: str) -> bool:
        """COPY with the client (FROM STDIN, TO STDOUT, and PROGRAM, which is refused
        there) runs in pgbarrier's COPY sub-protocol; a COPY of a file is DuckDB's
        statement, its options too."""
        upper = sql.upper()
        return "STDIN" in upper or "STDOUT" in upper or "PROGRAM" in upper

    def opens_implicit_transaction(self, sql: str) -> bool:
        """The extended protocol's implicit transaction is a DuckDB transaction (cheap, in
        process), opened before the first statement that may write."""
        return (leading_words(sql, 1) or ("",))[0] not in _READ_ONLY_WORDS

    def copy_in(self, table: str, columns: list[str], own_transaction: bool) -> CopyIn:
        """COPY ``table`` FROM STDIN's loader (:mod:`pgbarrier.backends.duckdb_copy`); a
        materialized view of pgbarrier's refuses it (42809)."""
        views = self._views
        if views is not None and views.mentioned(table):
            found = self.resolve(table.replace('"', ""))
            if found is not None and views.is_view(
                    "main" if found[0] == "public" else found[0], found[1]):
                raise refused_write(found[1], "copy")
        table = self.catalog.relation_name(table)
        cur = self._cursor
        return CopyIn(cur, table, target_columns(cur, table, columns), own_transaction,
                      self._constraints, self._error_query)

    def __init__(self, conn: duckdb.DuckDBPyConnection, catalog: CatalogInstaller | None = None,
                 database: str = "", user: str = "", signals: Signals | None = None,
                 views: ViewNames | None = None, instance_info: bool = False,
                 hub: duckdb_notify.Hub | None = None, spares: SpareCursors | None = None
                 ) -> None:
        super().__init__()
        #: the database's set-up connections kept ready (duckdb_spares)
        self._spares = spares
        #: the operator's --allow-instance-info (duckdb_instance)
        self._instance_info = instance_info
        #: pgbarrier's materialized views of the database (duckdb_views): no writes
        self._views = views
        #: pg_stat_activity and pgb_signal (duckdb_signals); None: no sessions to see
        self._signals = signals
        #: the database's connection, whose cursor the session opens when it needs one
        self._conn = conn
        self._user = user
        #: the session's DuckDB connection once opened (``_open``), else None
        self._raw_cursor: duckdb.DuckDBPyConnection | None = None
        self._closed = False
        #: the stream reading the cursor's pending result, if any (see ``_cursor``)
        self._stream: weakref.ref[RowStream] | None = None
        #: True while DuckDB runs the stream's query (a fetch), for ``interrupt``
        self._fetching = False
        #: the columnar path's choices and its open DuckDB result (duckdb_batches)
        self._batching = BatchReading()
        self._guard_made: StatementGuard | None = None
        self.client = ClientSettings(on_reset_all=self._after_reset_all,
                                     set_timezone=self._set_timezone,
                                     set_search_path=self._set_search_path)
        #: the session's search path in PostgreSQL's names (existing schemas only),
        #: None while it is the default (DuckDB's own default: ``main``, i.e. public)
        self._schemas: tuple[str, ...] | None = None
        #: SQL PREPAREd statements (duckdb_prepared)
        self._prepared = SqlPrepared()
        #: the DuckDB plans of read statements run again (duckdb_plans)
        self._plans = Plans()
        #: SQL cursors by name (duckdb_cursors)
        self._cursors: dict[str, Cursor] = {}
        #: (table, search path) -> (schema generation, its column types): _column_types
        self._column_types_seen: dict[tuple[str, tuple[str, ...]], tuple[int, Any]] = {}
        #: (schema generation, whether the session has temporary relations): one that has
        #: reads its own column types only (_column_types); a new connection has none
        #: (_open)
        self._temps_seen: tuple[int, bool] | None = None
        #: LISTEN / NOTIFY (duckdb_notify): the database's hub, this session's mailbox
        #: (made on first use) and the server's wake-up for it
        self._hub = hub
        self._database = database
        self._mailbox: duckdb_notify.Mailbox | None = None
        self._notified: Callable[[], None] | None = None
        self.catalog = SessionCatalog(catalog, database, user, self.client,
                                      self._drop_temp_relations, self.search_path,
                                      activity=self._activity_table,
                                      process_id=lambda: self.process_id,
                                      signals=signals is not None and signals.registered)

    def _activity_table(self) -> Any:
        hook = self._signals.hook if self._signals is not None else None
        return activity_table(hook.activity() if hook is not None else [])

    def _kept_error(self, err: PgError) -> PgError:
        """A signal's own error (42501) in place of DuckDB's wrapping of it."""
        signals = self._signals
        kept = signals.take_error(self.process_id) if signals is not None else None
        return kept if kept is not None else err

    def _open(self) -> duckdb.DuckDBPyConnection:
        """Open the session's DuckDB connection and set it up, before anything else runs
        on it; it is published (for ``interrupt``) only once set up. A failure closes it
        and is the caller's error."""
        if self._closed:
            raise to_pg_error(duckdb.ConnectionException("Connection already closed!"))
        spares = self._spares
        cur = spares.take() if spares is not None else None
        fresh = cur is None
        if fresh:
            try:
                cur = self._conn.cursor()
            except duckdb.Error as exc:  # the database was closed (dropped)
                raise to_pg_error(exc) from None
        try:
            if fresh:
                prepare_connection(cur)
            cur.execute("SET VARIABLE pgbarrier_user = " + literal(self._user))
            zone = self.client.get("TimeZone")
            if zone != PREPARED_ZONE:  # without ICU, DuckDB refuses any but UTC: its error
                cur.execute("SET SESSION TimeZone = " + literal(zone))
            if self.client.get("search_path") != DEFAULT_SEARCH_PATH:
                self._apply_search_path(cur)
        except duckdb.Error as exc:
            try:
                cur.close()
            except duckdb.Error:
                pass
            raise to_pg_error(exc) from None
        except BaseException:
            cur.close()
            raise
        self._raw_cursor = cur
        # a new DuckDB connection has no temporary relations: none to look for until the
        # schema generation moves (making one moves it)
        self._temps_seen = (self.catalog.generation, False)
        if self._closed:  # closed (by another thread) while it opened
            self.close()
        return cur

    @property
    def _guard(self) -> StatementGuard:
        """The session's :class:`StatementGuard`, made at its first statement for DuckDB."""
        guard = self._guard_made
        if guard is None:
            guard = self._guard_made = StatementGuard(instance_info=self._instance_info)
        return guard

    @property
    def _cursor(self) -> duckdb.DuckDBPyConnection:
        """The session's cursor, free to run something: a pending stream is parked first;
        opened (``_open``) on first use."""
        ref = self._stream
        if ref is not None:
            self._stream = None
            stream = ref()
            if stream is not None:
                stream.park()
            self._batching.release()
        cur = self._raw_cursor
        return cur if cur is not None else self._open()

    def cursor(self) -> duckdb.DuckDBPyConnection:
        return self._cursor

    def _stream_rows(self, cur: duckdb.DuckDBPyConnection, sql: str, client_sql: str,
                     notices: list[Notice] | None = None, intervals: tuple[int, ...] = (),
                     plan: ResultPlan | None = None,
                     convert: Callable[[list[tuple[Any, ...]]], list[tuple[Any, ...]]] | None
                     = None) -> RowStream:
        """The pending result's rows, fetched as they are read (errors as in ``execute``;
        ``notices``: where the signals' warnings of each fetch go; ``intervals``: columns
        of a :func:`~pgbarrier.backends.duckdb_intervals.months_query`, decoded; ``plan``
        and ``convert``: :mod:`pgbarrier.backends.duckdb_results`' text and values)."""
        def to_error(exc: Exception) -> PgError:
            if isinstance(exc, PgError):
                return exc
            if not isinstance(exc, duckdb.Error):
                raise exc
            # DuckDB's position is in the text it ran
            err = self.catalog.for_client(to_pg_error(exc, sql), plan.sql or client_sql
                                          if plan is not None else client_sql, sql)
            if plan is not None:
                err.position = plan.client_position(err.position)
            return self._kept_error(err)

        learn = self._batching.long_result

        def fetch(n: int) -> list[tuple[Any, ...]]:
            self._fetching = True
            try:
                rows = cur.fetchmany(n)
                if len(rows) == n:
                    learn(client_sql)
                return rows
            finally:
                self._fetching = False
                if notices is not None:
                    assert self._signals is not None
                    notices.extend(self._signals.take_notices(self.process_id))

        source = months_rows(fetch, intervals) if intervals else fetch
        if convert is not None:
            def converted(n: int) -> list[tuple[Any, ...]]:
                return convert(source(n))
            stream = RowStream(converted, to_error)
        else:
            stream = RowStream(source, to_error)
        self._stream = weakref.ref(stream)
        return stream

    def _batched(self, cur: duckdb.DuckDBPyConnection, sql: str, client_sql: str,
                 params: list[Any] | WireParams | None, renamed: bool, retype: Any,
                 origins: Any, plan: Any = None) -> Result | None:
        """The statement's rows as a :class:`BatchStream` (the columnar path), or None when
        its columns cannot take it (nothing was read: the caller runs it the row way). A
        result ``plan`` may only retype its columns (:meth:`ResultPlan.value_free`)."""
        batching = self._batching
        values = [_duck_param(v) for v in params] if params else None
        started = perf_counter()
        self._fetching = True
        try:
            opened = batching.open(cur, sql, values)
        finally:
            self._fetching = False
        description = opened.description
        duck = [Column(d[0], pg_type_oid(d[1])) for d in description or ()]
        columns = with_origins(self.catalog.retype(self._named(client_sql, duck, renamed),
                                                   retype), origins)
        if plan is not None:
            if not plan.value_free(duck, [str(d[1]) for d in description or ()]):
                batching.release()
                return None
            columns = plan.columns(columns)
        # unconstrained numerics (duckdb_numeric) are the columnar writers' too
        intervals = interval_indexes(description)
        if intervals:  # again, each interval as its three fields (duckdb_intervals)
            if not batching.servable(opened, arrow=False):
                batching.release()
                return None
            self._fetching = True
            try:
                opened = batching.open(cur, parts_query(sql, len(description), intervals),
                                       values)
            finally:
                self._fetching = False
        if not batching.servable(opened, names=not intervals):
            batching.release()
            return None

        def to_error(exc: Exception) -> PgError:
            if isinstance(exc, PgError):
                return exc
            if not isinstance(exc, duckdb.Error):
                raise exc
            return self._kept_error(self.catalog.for_client(to_pg_error(exc, sql),
                                                            client_sql, sql))

        def read() -> Any:
            self._fetching = True
            try:
                return batching.read()
            finally:
                self._fetching = False

        def ended(count: int) -> None:
            if batching.ended(client_sql, count) and not params:
                # the row path runs it next: as a second run (duckdb_plans)
                self._plans.saw(sql, perf_counter() - started)

        to_rows = batching.to_rows
        natural = natural_converter([d[1] for d in description], columns)
        if natural is not None:  # rows taken as rows (cursors, FETCH): as the row path's
            def to_rows(batch: Any) -> list[tuple[Any, ...]]:
                return natural(batching.to_rows(batch))

        stream = BatchStream(read, to_error, to_rows, ended)
        self._stream = weakref.ref(stream)
        return rowset(columns, stream, "SELECT")

    def apply_startup(self, startup: StartupSettings) -> None:
        self.client.apply_startup(startup)

    def reported_parameters(self) -> dict[str, str]:
        return self.client.reported()

    def output_styles(self) -> tuple[str, str] | None:
        return self.client.styles()

    def client_encoding(self) -> ClientEncoding:
        return self.client.encoding

    def remember_setting(self, name: str, shown: str) -> None:
        self.client.remember(name, shown)

    # ------------------------------------------------------------------ client settings

    def _set_timezone(self, zone: str) -> None:
        if self._raw_cursor is None and zone == "UTC":
            return  # what ``_open`` sets (another zone opens it now: DuckDB judges it)
        self._plans.forget(self._raw_cursor)
        self._cursor.execute("SET SESSION TimeZone = " + literal(zone))

    def _set_search_path(self, value: str) -> None:
        if self._raw_cursor is None:
            if value != DEFAULT_SEARCH_PATH:
                self._open()  # which applies it
            return  # the default is what a fresh DuckDB connection has
        self._apply_search_path(self._cursor)

    def _apply_search_path(self, cur: duckdb.DuckDBPyConnection) -> None:
        """Give DuckDB the session's search_path: ``public`` is DuckDB's ``main``,
        ``"$user"`` the schema named after the user; names of schemas that do not exist
        (now) and ``pg_catalog`` (DuckDB always searches its own) are left out, as
        PostgreSQL skips missing ones. An empty result leaves DuckDB searching ``main``."""
        shown = self.client.get("search_path")
        if shown == DEFAULT_SEARCH_PATH and self._schemas is None:
            return
        self._plans.forget(cur)
        try:
            existing = {r[0] for r in cur.execute(
                "SELECT schema_name FROM duckdb_schemas() "
                "WHERE database_name = current_database()").fetchall()}
            schemas: list[str] = []
            for name in path_names(shown):
                name = self._user if name == "$user" else name
                duck = "main" if name == "public" else name
                if name == "pg_catalog" or (duck in existing and name not in schemas):
                    schemas.append(name)
            duck_path = [("main" if n == "public" else n) for n in schemas if n != "pg_catalog"]
            cur.execute("SET SESSION search_path = " + literal(
                ",".join(quote_ident(n) for n in duck_path) or "main"))
        except duckdb.Error as exc:
            raise to_pg_error(exc) from None
        self._schemas = None if shown == DEFAULT_SEARCH_PATH else tuple(schemas)

    def search_path(self) -> tuple[str, ...]:
        """The schemas the session searches, in PostgreSQL's names (``current_schemas``)."""
        return ("public",) if self._schemas is None else self._schemas

    # ------------------------------------------------------------------ names

    def _relation_schemas(self, rel: str) -> list[str]:
        """PostgreSQL's names of the schemas holding a table or view ``rel`` (not temporary)."""
        try:
            rows = self._cursor.execute(
                "SELECT schema_name FROM duckdb_tables() WHERE database_name = "
                "current_database() AND NOT temporary AND table_name = $1 UNION ALL "
                "SELECT schema_name FROM duckdb_views() WHERE database_name = "
                "current_database() AND NOT temporary AND NOT internal AND view_name = $1",
                [rel]).fetchall()
        except duckdb.Error as exc:
            raise to_pg_error(exc) from None
        return ["public" if r[0] == "main" else r[0] for r in rows]

    def resolve(self, name: str) -> tuple[str, str] | None:
        """(PostgreSQL schema, relation) the client's relation name ``name`` (normalised,
        ``s.v`` when qualified) means: a qualified one in its schema, an unqualified one in
        the first schema of the search_path holding it; None when there is none."""
        schema, dot, rel = name.partition(".")
        if not dot:
            schema, rel = "", name
        found = self._relation_schemas(rel)
        if schema:
            return (schema, rel) if schema in found else None
        return next(((s, rel) for s in self.search_path() if s in found), None)

    def _relation_schema(self, rel: str, schema: str | None) -> str | None:
        """The DuckDB schema holding relation ``rel`` as the session finds it (in
        ``schema`` when the client qualified it), None when there is none."""
        found = self.resolve(rel if schema is None else f"{schema}.{rel}")
        if found is None:
            return None
        return "main" if found[0] == "public" else found[0]

    def relation_name(self, name: str) -> str | None:
        """pgbarrier's name (:mod:`pgbarrier.sql.relnames`) of the relation ``name`` means
        in this session, or None when there is none."""
        found = self.resolve(name)
        return None if found is None else canonical(*found)

    def creation_name(self, name: str) -> str:
        """pgbarrier's name for a relation this session creates as ``name``: an unqualified
        name goes to the first schema of the search_path (PostgreSQL's rule)."""
        schema, dot, rel = name.partition(".")
        if dot:
            duck = "main" if schema == "public" else schema
            try:
                known = self._cursor.execute(
                    "SELECT count(*) FROM duckdb_schemas() WHERE database_name = "
                    "current_database() AND schema_name = $1", [duck]).fetchone()[0]
            except duckdb.Error as exc:
                raise to_pg_error(exc) from None
            if not known:
                raise PgError(f'schema "{schema}" does not exist', sqlstate="3F000")
            return canonical(schema, rel)
        path = [s for s in self.search_path() if s != "pg_catalog"]
        return canonical(path[0] if path else "public", name)

    def bind_query(self, query: str) -> str:
        """``query`` with every relation it names unqualified, that this session's
        search_path finds outside ``public``, qualified with its schema: a view is bound
        to the relations its creator meant (PostgreSQL binds them at CREATE), while its
        refreshes run with the default search_path. The text is unchanged when nothing
        needs it (:func:`pgbarrier.sql.relnames.qualify_relations`)."""
        if self._schemas is None:
            return query  # the default path: public only
        return qualify_relations(query, self.resolve)

    def _after_reset_all(self) -> None:
        if self._raw_cursor is None:
            return  # nothing was set on DuckDB: it is not open yet
        self._plans.forget(self._raw_cursor)
        try:  # DuckDB has no RESET ALL: each setting this session changed is reset
            self._guard.reset(self._cursor)
            self._cursor.execute("SET SESSION TimeZone = 'UTC'")
            if self._schemas is not None:
                self._cursor.execute("RESET search_path")
                self._schemas = None
        except duckdb.Error:
            pass

    # ------------------------------------------------------------------ statements

    def execute(self, sql: str, params: list[Any] | WireParams | None = None,
                result_formats: tuple[int, ...] = ()) -> Result:
        words = leading_words(sql, 3)
        setting = parse_setting(sql, words[0]) if words else None
        if setting is not None:
            own = self.client.handle(setting)
            if own is not None:
                return own
        elif words[:2] == ("WITH", "RECURSIVE") and is_type_introspection(sql):
            return rowset(_INTROSPECTION, type_introspection_rows(params[0] if params else None))
        elif words and words[0] in _CURSOR_WORDS:
            return self._sql_cursor(sql, words)
        elif words and words[0] in _PREPARED_WORDS and words[1:2] != ("TRANSACTION",):
            return self._sql_prepared(sql, words, result_formats)
        elif words and words[0] in ("DEALLOCATE", "DISCARD", "SAVEPOINT", "RELEASE") or \
                words[:2] == ("ROLLBACK", "TO"):
            answered = self.catalog.session_command(words)
            if answered is not None:
                if words[0] in ("DEALLOCATE", "DISCARD") and words[1:2] == ("ALL",):
                    self._prepared.clear()
                    if words[0] == "DISCARD":
                        self._cursors.clear()
                return answered
            if words[0] == "DEALLOCATE":
                self._prepared.deallocate(sql)
                return command("DEALLOCATE")
        elif words[1:2] == ("SCHEMA",) and words[0] in ("CREATE", "DROP"):
            own_schema = _public_schema_command(sql)
            if own_schema is not None:
                return own_schema
            if words[0] == "DROP":
                planned = self._planned_ddl(sql, words)
                if planned is not None:
                    return planned
        elif words and words[0] in _TX_TAGS:
            return self._transaction(sql, words)
        elif words and words[0] in ("SELECT", "WITH") and (create := as_create(sql)) is not None:
            return self.execute(create, params, result_formats)  # SELECT INTO: CREATE TABLE AS
        elif words[:1] == ("SELECT",) and "_" in sql and (read := sequence_read(sql)) is not None:
            row = sequence_row(self._cursor, read, list(self.search_path()))
            if row is not None:  # duckdb_sequences: a sequence read as its one row
                return rowset([Column(c, SEQUENCE_COLUMNS[c]) for c in read.columns], [row])
        elif duckdb_ddl.decides(words):
            planned = self._planned_ddl(sql, words)
            if planned is not None:
                return planned
        elif words and words[0] in duckdb_notify.KEYWORDS:
            return duckdb_notify.run(sql, words[0], self._notify_box(), self.client.in_block)
        elif words and words[0] == "LOCK":
            for name in lock_targets(sql, self.client.in_block):  # duckdb_lock
                self.execute(f"SELECT * FROM {name} LIMIT 0")  # 42P01 for a missing one
            return command("LOCK TABLE")
        client = self.client
        views = self._views
        if views is not None and words and words[0] in VIEW_WRITES:
            refusal = views.refusal(sql, words[0], self._relation_schema)
            if refusal is not None:  # pgbarrier's materialized views are the barrier's
                raise refusal
        client.tx_queried = True
        if words and words[0] in _FORGETS_PLANS:
            self._plans.forget(self._raw_cursor)  # a setting may change: plans made before go
        if client.read_only:
            refusal = refused(sql, words, lambda: command_tag(words, sql), self._is_temp)
            if refusal is not None:
                raise refusal
        sql = self._guard.check(sql, words[0] if words else None)  # duckdb_config
        if words[:1] == ("EXPLAIN",):
            return self._explain(sql, params)
        client_sql = sql
        # PostgreSQL's result types (duckdb_results): its text, when it has one, runs
        plan = self.catalog.result_plan(self.cursor, sql, words)
        edited = plan.sql if plan is not None and plan.sql is not None else client_sql
        sql, retype, translated = self._to_duckdb(edited)
        cur = self._cursor
        rows = _returns_rows(words, sql)
        # before the statement: the lookup runs on the same cursor (pgcatalog.origins)
        origins = self.catalog.origins(cur, client_sql, words) if rows else None
        if self._signals is not None and self._signals.kept:
            self._signals.forget(self.process_id)  # a statement before left some
        try:
            if rows and (plan is None or plan.retypes_only) \
                    and self._batching.wanted(cur, words, sql, client_sql) \
                    and (self._signals is None or "PGB_SIGNAL" not in sql) \
                    and self.client.styles() is None:
                batched = self._batched(cur, sql, client_sql, params, translated
                                        or edited is not client_sql, retype, origins, plan)
                if batched is not None:
                    return batched
            if params:
                cur.execute(sql, [_duck_param(v) for v in params])
            elif rows and words[0] in PLANNED_WORDS and not may_touch_catalog(client_sql):
                # its kept plan when it came before (duckdb_plans)
                self._plans.run(cur, sql, client.in_block)
            else:
                cur.execute(sql)
            if rows:
                description = cur.description or []  # read once: each read builds it
                duck = [Column(d[0], pg_type_oid(d[1])) for d in description]
                if plan is not None:  # the appended inputs are the plan's
                    duck = duck[:len(duck) - plan.hidden]
                columns = with_origins(self.catalog.retype(self._named(
                    client_sql, duck, translated or edited is not client_sql), retype), origins)
                convert = None
                if plan is not None:
                    columns, convert = plan.columns(columns), plan.rows(duck)
                natural = natural_converter([d[1] for d in description], columns,
                                            plan.computed if plan is not None else frozenset())
                if natural is not None:  # unconstrained numerics (duckdb_numeric)
                    convert = natural if convert is None else _chain(convert, natural)
                tag = words[0] if words[0] in _DML else "SELECT"
                intervals = interval_indexes(description)
                if intervals and words[0] in _LAZY_WORDS and _SEQUENCE_FN.search(sql) is None:
                    # duckdb_intervals: again, with the intervals' months kept
                    again = months_query(sql, len(description), intervals)
                    if params:
                        cur.execute(again, [_duck_param(v) for v in params])
                    else:
                        cur.execute(again)
                else:
                    intervals = ()
                if self._signals is None or "PGB_SIGNAL" not in sql:  # sqlglot's case
                    return rowset(columns, self._stream_rows(cur, sql, client_sql,
                                                             intervals=intervals, plan=plan,
                                                             convert=convert), tag)
                notices: list[Notice] = []  # duckdb_signals: the warnings of the rows read
                result = rowset(columns, self._stream_rows(cur, sql, client_sql, notices,
                                                           intervals, plan, convert), tag)
                result.notices = notices
                return result
            # DuckDB counts the rows of DML and of CREATE TABLE AS (other DDL: none)
            counted = cur.fetchall() if words and (words[0] in _DML or words[0] == "CREATE") \
                else None
            self.catalog.after_ddl(cur, client_sql, words)
        except duckdb.Error as exc:
            err = self._kept_error(to_pg_error(
                exc, sql, self._constraints, self._error_columns,
                client_sql if translated else None, self._error_query,
                [_duck_param(v) for v in params] if params else None))
            # DuckDB's position is in the text it ran: mapped back, or dropped (duckdb_errors
            # answers some in the client's text of a translated statement)
            if translated:
                if not getattr(err, "client_position", False):
                    err.position = None
            else:
                err = self.catalog.for_client(err, edited, sql)
                if plan is not None:
                    err.position = plan.client_position(err.position)
            if setting is not None and setting.verb == "SHOW" and err.sqlstate == "42P01":
                # DuckDB's SHOW x describes a table x; PostgreSQL's names a setting
                err = PgError(f'unrecognized configuration parameter "{setting.name.lower()}"',
                              sqlstate="42704")
            raise err from None
        tag = command_tag(words, client_sql)
        if self._schemas is not None and words[0] in ("CREATE", "DROP") and \
                words[1:2] == ("SCHEMA",):
            self._apply_search_path(cur)  # a schema on the path may exist now, or no more
        if counted is not None and words[0] != "CREATE":
            n = counted[0][0] if counted else 0
            tag = f"INSERT 0 {n}" if words[0] == "INSERT" else f"{words[0]} {n}"
        elif counted and "TABLE" in words[1:3]:  # CREATE TABLE AS: PostgreSQL's SELECT n
            tag = "CREATE TABLE AS" if _NO_DATA.search(client_sql) else f"SELECT {counted[0][0]}"
        return command(tag)

    def ddl_plan(self, sql: str) -> duckdb_ddl.Plan | None:
        """The plan of DDL statement ``sql`` (:mod:`pgbarrier.backends.duckdb_ddl`), None
        when DuckDB runs it as written; raises PostgreSQL's refusal."""
        words = leading_words(sql, 3)
        cur = self._cursor
        installer = self.catalog.installer
        try:
            if installer is not None and words[0] != "CREATE":
                # constraints by PostgreSQL's names (pgb.named_cons) for DROP and ALTER;
                # a CREATE needs none, and a database's first CREATE TABLE must not pay
                # the catalog's installation (about a second)
                installer.ensure()
            return duckdb_ddl.plan(sql, words, cur, self.search_path(),
                                   f"{CATALOG_DB}.pgb.named_cons" if installer else None,
                                   lambda text: self._to_duckdb(text)[0], self._user)
        except duckdb.Error as exc:
            raise to_pg_error(exc) from None

    def relation_kind(self, name: str) -> str | None:
        """PostgreSQL's relkind of the relation ``name`` means here, None when none."""
        found = self.resolve(name)
        if found is None:
            return None
        try:
            rel = duckdb_ddl.snapshot(self._cursor).find(
                "main" if found[0] == "public" else found[0], found[1])
        except duckdb.Error as exc:
            raise to_pg_error(exc) from None
        return None if rel is None else rel.kind

    def run_statements(self, statements: list[str], sql: str | None = None,
                       words: tuple[str, ...] = ()) -> None:
        """``statements`` in one transaction (the client's block, or one of their own),
        then, for the client's DDL ``sql``, what DuckDB forgets recorded as for any DDL."""
        client = self.client
        cur = self._cursor
        client.tx_queried = True
        own = not client.in_block
        try:
            if own:
                cur.execute("BEGIN TRANSACTION")
            for statement in statements:
                cur.execute(statement)
            if sql is not None:
                self.catalog.after_ddl(cur, sql, words)
            if own:
                cur.execute("COMMIT")
        except duckdb.Error as exc:
            if own:
                try:
                    cur.execute("ROLLBACK")
                except duckdb.Error:
                    pass
            raise to_pg_error(exc, None, self._constraints) from None
        finally:
            if self.catalog.installer is not None:
                self.catalog.installer.origins.bump()

    def _planned_ddl(self, sql: str, words: tuple[str, ...]) -> Result | None:
        """DDL whose PostgreSQL rules DuckDB does not keep (:mod:`pgbarrier.backends.
        duckdb_ddl`): its plan's statements run in one transaction (the client's block,
        or one of their own), then what DuckDB forgets is recorded as for any DDL; None
        when the statement runs on DuckDB as written."""
        if self.client.read_only:
            refusal = refused(sql, words, lambda: command_tag(words, sql), self._is_temp)
            if refusal is not None:
                raise refusal
        self._guard.check(sql, words[0])  # duckdb_config: pgbarrier's own schemas stay
        plan = self.ddl_plan(sql)
        if plan is None:
            return None
        def carry_out() -> Result:
            self.run_statements(plan.statements, sql, words)
            if self._schemas is not None and words[:2] == ("DROP", "SCHEMA"):
                self._apply_search_path(self._cursor)  # a schema on the path may be gone
            return command(plan.tag or command_tag(words, sql), plan.notices)

        if plan.pgbarrier_views:  # the control plane's to drop first
            raise DropsMaterializedViews(plan.pgbarrier_views, carry_out)
        return carry_out()

    def _sql_cursor(self, sql: str, words: tuple[str, ...]) -> Result:
        """DECLARE / FETCH / MOVE / CLOSE (:mod:`pgbarrier.backends.duckdb_cursors`)."""
        cursors = self._cursors
        first = words[0]
        if first == "DECLARE":
            declare = parse_declare(sql)
            if declare.name in cursors:
                raise PgError(f'cursor "{declare.name}" already exists', sqlstate="42P03")
            in_block = self.client.in_block
            if not declare.hold and not in_block:
                raise PgError("DECLARE CURSOR can only be used in transaction blocks",
                              sqlstate="25P01")
            inner = leading_words(declare.query, 1)
            if not inner or inner[0] not in _LAZY_WORDS:
                raise SyntaxError(f'syntax error at or near "{inner[0] if inner else ";"}"')
            result = self.execute(declare.query)
            if result.columns is None:
                raise SyntaxError(f'syntax error at or near "{inner[0]}"')
            source = result.row_source
            stream = source if isinstance(source, BatchStream) and result.batched() \
                and not declare.scroll else None
            cursors[declare.name] = Cursor(declare.name, result.columns,
                                           iter(()) if stream is not None else iter(source),
                                           declare.scroll, declare.hold, in_block,
                                           stream=stream)
            return command("DECLARE CURSOR")
        if first == "CLOSE":
            name = parse_close(sql)
            if name is None:
                cursors.clear()
                return command("CLOSE CURSOR ALL")
            if cursors.pop(name, None) is None:
                raise missing_cursor(name)
            return command("CLOSE CURSOR")
        name, kind, count = parse_fetch(sql)
        cursor = cursors.get(name)
        if cursor is None:
            raise missing_cursor(name)
        if cursor.stream is not None and kind == "forward" and count != 0:
            if first == "MOVE":
                return command(f"MOVE {sum(b.num_rows for b in cursor.forward_batches(count))}")
            return cursor.fetch(count)
        rows = cursor.move(kind, count)
        if first == "MOVE":
            return command(f"MOVE {len(rows)}")
        return rowset(cursor.columns, rows, "FETCH")

    def sql_cursor_columns(self, name: str) -> list[Column] | None:
        cursor = self._cursors.get(name)
        return None if cursor is None else cursor.columns

    def _end_cursors(self, committed: bool) -> None:
        """The block ended: its cursors go, but held ones a COMMIT keeps (their rows were
        read into memory by the COMMIT, which needed the DuckDB connection)."""
        for name, cursor in list(self._cursors.items()):
            if not cursor.hold or (cursor.in_block and not committed):
                del self._cursors[name]
            else:
                cursor.in_block = False

    def _sql_prepared(self, sql: str, words: tuple[str, ...], result_formats: tuple[int, ...]
                      ) -> Result:
        """SQL ``PREPARE`` / ``EXECUTE`` (:mod:`pgbarrier.backends.duckdb_prepared`)."""
        prepared = self._prepared
        if words[0] == "PREPARE":
            prepared.prepare(sql)
            return command("PREPARE")
        statement, values = self._prepared_call(sql)
        return self.execute(statement, values or None, result_formats)

    def _prepared_call(self, sql: str) -> tuple[str, list[Any]]:
        """The statement an ``EXECUTE name (args)`` runs, and its arguments' values."""
        stmt, args, name = self._prepared.lookup(sql)
        values: list[Any] = []
        cur = self._cursor
        try:
            if args is not None:
                values = list(cur.execute("SELECT " + args).fetchone() or ())
            expected = len(stmt.types) if stmt.types else count_params(stmt.statement)
            if len(values) != expected:
                raise wrong_count(name, expected, len(values))
            if stmt.types and values:
                values = list(cur.execute("SELECT " + ", ".join(
                    f"CAST(${i + 1} AS {t})" for i, t in enumerate(stmt.types)),
                    values).fetchone() or ())
        except duckdb.Error as exc:
            raise to_pg_error(exc) from None
        return stmt.statement, values

    def _explain(self, sql: str, params: list[Any] | WireParams | None) -> Result:
        """EXPLAIN (:mod:`pgbarrier.backends.duckdb_explain`): the explained statement is
        translated, ``public``-mapped and catalog-rewritten as if it ran; with ANALYZE it
        runs (a read-only transaction refuses what it would refuse), and its errors are its
        own, positions in the client's text."""
        ex = duckdb_explain.parse(sql)
        statement, offset = ex.statement, ex.offset
        values = [_duck_param(v) for v in params] if params else None
        if ex.first_word == "DECLARE":
            query = parse_declare(statement).query
            offset += statement.rfind(query) if query in statement else 0
            statement = query
        elif ex.first_word == "EXECUTE":
            statement, values = self._prepared_call(statement)
            offset = -1  # the prepared text is not the client's: no position to give
        words = leading_words(statement, 3)
        if ex.options.analyze:  # it runs: the checks of running it (pgbarrier's schemas...)
            self._guard.check(statement, words[0] if words else None)
            if self.client.read_only:
                refusal = refused(statement, words, lambda: command_tag(words, statement),
                                  self._is_temp)
                if refusal is not None:
                    raise refusal
        duck, _, translated = self._to_duckdb(statement)
        settings = duckdb_explain.changed_settings(self.client.get) \
            if ex.options.settings else None
        try:
            result = duckdb_explain.explain(self._cursor, ex.options, statement, duck,
                                            values or None, settings=settings,
                                            constraints=self._constraints)
        except PgError as err:
            err = self._kept_error(err)
            if translated or offset < 0:
                err.position = None
            else:
                err = self.catalog.for_client(err, statement, duck)
                if err.position is not None:
                    err.position += offset
            raise err from None
        if ex.options.analyze and words[:1] == ("CREATE",):
            self.catalog.after_ddl(self._cursor, statement, words)
        return result

    def _transaction(self, sql: str, words: tuple[str, ...]) -> Result:
        """BEGIN / START TRANSACTION with PostgreSQL's modes (kept by the client settings;
        DuckDB gets a plain BEGIN), COMMIT / END / ROLLBACK / ABORT (the block's modes end)."""
        if words[0] in ("BEGIN", "START"):
            m = _BEGIN.match(sql)
            if m is None:
                raise SyntaxError(f'syntax error at or near "{words[1] if len(words) > 1 else words[0]}"')
            try:
                modes = transaction_modes(sql[m.end():])
            except ModeSyntaxError as exc:
                raise SyntaxError(f'syntax error at or near "{exc.token}"',
                                  position=m.end() + exc.offset + 1) from None
            try:
                self._cursor.execute("BEGIN TRANSACTION")
            except duckdb.Error as exc:
                raise to_pg_error(exc) from None
            self.client.begin(modes)
            return command(_TX_TAGS[words[0]])
        chain = "CHAIN" in words and not re.search(r"\bNO\s+CHAIN\b", sql, re.I)
        modes = self.client.transaction_modes() if chain else None
        ended = False
        try:
            self._cursor.execute(sql)
            ended = True
        except duckdb.Error as exc:
            raise to_pg_error(exc, sql, self._constraints) from None
        finally:
            self.client.end()
            self.catalog.transaction_ended()
            if self._cursors:
                self._end_cursors(words[0] in ("COMMIT", "END"))
            if self._mailbox is not None:  # LISTEN / NOTIFY of the block, at its commit
                self._mailbox.transaction_ended(ended and words[0] in ("COMMIT", "END"))
        if modes is not None:
            self.client.begin(modes)
        return command(_TX_TAGS[words[0]])

    def _is_temp(self, schema: str | None, name: str) -> bool:
        """A table ``name`` (in ``schema``) that a DML statement would write is temporary."""
        if schema not in (None, "pg_temp", "temp"):
            return False
        return bool(self._cursor.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name = ?",
            [name]).fetchone()[0])

    def describe(self, sql: str, params: list[Any] | WireParams | None = None
                 ) -> list[Column] | None:
        words = leading_words(sql, 3)
        if words[:1] == ("EXECUTE",):
            stmt = self._prepared.statement_of(sql)
            return None if stmt is None else self.describe(stmt.statement, None)
        if words[:1] == ("EXPLAIN",):
            return duckdb_explain.columns(sql)  # its shape is its options' (explain.c)
        if words[:1] == ("FETCH",):
            name = parse_fetch(sql)[0]
            columns = self.sql_cursor_columns(name)
            if columns is None:
                raise missing_cursor(name)
            return columns
        if not _returns_rows(words, sql):
            return None
        if words[:2] == ("WITH", "RECURSIVE") and is_type_introspection(sql):
            return list(_INTROSPECTION)
        setting = parse_setting(sql, words[0])
        name = setting and self.client.shown(setting)
        if name:
            return [Column(name, pgt.TEXT)]
        key = (sql, self.search_path,
               params.oids if isinstance(params, WireParams) else
               tuple(type(v) for v in params) if params else ())
        cached = self.catalog.described(key)
        if cached is not None:
            return list(cached)
        generation = self.catalog.generation
        rewritten, retype, translated = self._to_duckdb(sql)
        try:
            columns = self._describe(rewritten, words, params)
        except PgError as err:  # DuckDB's position is in the text it ran
            if translated:
                err.position = None
                raise
            raise self.catalog.for_client(err, sql, rewritten) from None
        columns = with_origins(self.catalog.retype(self._named(sql, columns, translated), retype),
                               self.catalog.origins(self._cursor, sql, words))
        plan = self.catalog.result_plan(self.cursor, sql, words)  # duckdb_results
        if plan is not None:
            columns = plan.columns(columns)
        self.catalog.remember_described(key, generation, columns)
        return columns

    def _named(self, client_sql: str, columns: list[Column], translated: bool) -> list[Column]:
        """PostgreSQL's column names: DuckDB's names of a translated statement are those
        of the translation (``CURRENT_TIMESTAMP`` for ``now()``), so they come from the
        client's text whatever they look like."""
        if translated:
            names = postgres_names(client_sql, len(columns))
            if names is not None:
                return [Column(n, c.type_oid, c.type_modifier) for n, c in zip(names, columns)]
        return self.catalog.rename(client_sql, columns)

    def _constraints(self) -> list[ConstraintRow]:
        """The database's constraints (the catalog's ``pgb.named_cons``: DuckDB's
        constraints with the names clients gave them), for constraint-violation messages:
        read on a connection of its own (the session's transaction has failed by then), so a
        table created in that uncommitted transaction has none."""
        installer = self.catalog.installer
        try:
            cur = installer.cursor() if installer is not None else self._conn.cursor()
        except duckdb.Error:
            return []
        source, given = ((f"{CATALOG_DB}.pgb.named_cons", "given_name") if installer is not None
                         else ("duckdb_constraints()", "NULL"))
        try:
            rows = cur.execute(
                "SELECT table_name, constraint_type, constraint_column_names, expression, "
                f"referenced_table, referenced_column_names, {given}, schema_name FROM {source} "
                "WHERE database_name = current_database() "
                "ORDER BY schema_name <> 'main', table_name, constraint_index").fetchall()
        except duckdb.Error:
            return []
        finally:
            cur.close()
        return [(t, k, list(c or []), e, rt, list(rc or []), g, s)
                for t, k, c, e, rt, rc, g, s in rows]

    def _error_query(self, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
        """A read for an error's DETAIL (duckdb_failing_row), on a connection of its own (the
        session's transaction has failed by then)."""
        cur = self._conn.cursor()
        try:
            return cur.execute(sql, params).fetchall()
        finally:
            cur.close()

    def _error_columns(self, names: list[str]) -> TableColumns:
        """Tables' columns for an error's HINT (duckdb_errors): the session's view, else (its
        transaction has failed) the database's, on a connection of its own."""
        found = self._table_columns(names)
        if found:
            return found
        try:
            cur = self._conn.cursor()
        except duckdb.Error:
            return {}
        try:
            rows = cur.execute(
                "SELECT table_name, column_name, data_type FROM information_schema.columns "
                "WHERE lower(table_name) IN (SELECT lower(unnest($1::VARCHAR[]))) "
                "ORDER BY table_schema <> 'main', table_schema, table_name, ordinal_position",
                [names]).fetchall()
        except duckdb.Error:
            return {}
        finally:
            cur.close()
        out: TableColumns = {}
        for table, column, typ in rows:
            out.setdefault(table, {}).setdefault(column, typ)
        return out

    def _describe(self, sql: str, words: tuple[str, ...], params: list[Any] | WireParams | None
                  ) -> list[Column]:
        n = count_params(sql)
        values = [_duck_param(v) for v in params] if params else [None] * n
        if words[0] in _DML:
            query = _returning_query(sql)
            if query is None:
                raise NeedsExecution(sql)
            try:
                return _describe_rows(self._cursor, query, None)
            except PgError:
                raise NeedsExecution(sql) from None
        if words[0] not in _LAZY_WORDS:
            raise NeedsExecution(sql)
        if _SEQUENCE_FN.search(sql) is None:
            # the fast way (a fifth of DESCRIBE's cost): a lazy relation binds the query and
            # runs nothing, except that binding evaluates the sequence functions
            try:
                rel = self._cursor.sql(sql, params=values) if values else self._cursor.sql(sql)
            except duckdb.Error:  # the relation API's error has no caret: DESCRIBE's has
                rel = None
            if rel is not None:
                return [Column(name, pg_type_oid(t)) for name, t in zip(rel.columns, rel.types)]
        return _describe_rows(self._cursor, sql, values or None, columns=self._error_columns)

    def describe_statement(self, sql: str, param_oids: tuple[int, ...] = ()
                           ) -> tuple[list[int], list[Column] | None]:
        if is_type_introspection(sql):
            return [pgt.ARRAY_OF[pgt.OID]], list(_INTROSPECTION)
        return self.param_types(sql, param_oids), self.describe(sql, None)

    def param_types(self, sql: str, param_oids: tuple[int, ...]) -> list[int]:
        oids = list(param_oids)
        n = count_params(sql)
        if n > 0 and (len(oids) < n or 0 in oids):
            if leading_words(sql, 1) == ("EXPLAIN",):  # the explained statement's parameters
                try:
                    sql = duckdb_explain.parse(sql).statement
                except PgError:
                    pass  # the EXPLAIN's own error comes with its execution
            sql, _, _ = self._to_duckdb(sql)
            inferred = infer_param_types(sql, self._table_columns)
            n = max(len(oids), len(inferred))
            oids = [oids[i] if i < len(oids) and oids[i] else
                    (inferred[i] if i < len(inferred) else pgt.TEXT) for i in range(n)]
        return oids

    def _to_duckdb(self, sql: str) -> tuple[str, dict[str | int, int], bool]:
        """The client's PostgreSQL as DuckDB runs it, one way for every path: PostgreSQL's
        keywords DuckDB reserves quoted where they are names (duckdb_keywords), PostgreSQL's
        dialect translated (duckdb_dialect), then ``public`` and the catalog
        (:meth:`_rewrite`). Also the column type overrides, and whether the first two
        changed the text (then DuckDB's error positions cannot be mapped back)."""
        quoted = quote_keyword_names(sql)
        duck = postgres_to_duckdb(quoted, self._column_types)
        run, retype = self._rewrite(duck)
        if may_differ(quoted) and not may_touch_catalog(quoted):  # jsonb results by position
            retype = {**retype, **result_types(quoted, self._column_types)}
        return run, retype, duck is not sql and duck != sql

    def _rewrite(self, sql: str) -> tuple[str, dict[str, int]]:
        """:meth:`SessionCatalog.rewrite`; a catalog statement sqlglot cannot parse is
        DuckDB's syntax error (42601, at its position) when DuckDB's PostgreSQL-derived
        parser refuses it too, else 0A000: it never runs on DuckDB's own catalog."""
        try:
            return self.catalog.rewrite(sql)
        except CatalogUnparsed as unparsed:
            try:
                self._cursor.extract_statements(sql)
            except duckdb.ParserException as exc:
                raise to_pg_error(exc, sql) from None
            except duckdb.Error:
                pass
            raise FeatureNotSupported(
                f"this statement's syntax is not supported in a query naming "
                f"\"{unparsed.relation}\" on the DuckDB backend",
                detail="pgbarrier rewrites catalog queries for DuckDB, and could not parse "
                       "this one.") from None

    def _column_types(self, table: str) -> tuple[tuple[str, str], ...] | None:
        """``table``'s (column, DuckDB type) in order, for the dialect translation; kept
        per table and search path while no DDL ran in the database (its generation), by
        the session and, for the database's own tables, for every session of the database
        (a new connection's first statements do not read DuckDB's catalog again: some
        3 ms a table)."""
        generation = self.catalog.generation
        key = (table.lower(), self.search_path())
        seen = self._column_types_seen.get(key)
        if seen is not None and seen[0] == generation >= 0:
            return seen[1]
        installer = self.catalog.installer
        shared = installer.origins if installer is not None and generation >= 0 else None
        found = shared.columns(key, generation) if shared is not None else None
        if found is not None and self._has_temp_relations(generation):
            found = None  # a temporary relation may shadow the database's: its own reading
        if found is None:
            temporary: set[str] = set()
            for name, columns in self._table_columns([table], temporary).items():
                if name.lower() == table.lower():
                    jsonb = self.catalog.declared_jsonb(self._cursor, table) \
                        if "JSON" in columns.values() else frozenset()
                    found = tuple((c, "JSONB" if t == "JSON" and c.lower() in jsonb else t)
                                  for c, t in columns.items())
                    if shared is not None and not temporary:
                        shared.keep_columns(key, generation, found)
                    break
        if generation >= 0 and found is not None:  # (a failed lookup is not kept)
            if len(self._column_types_seen) >= 256:
                self._column_types_seen.pop(next(iter(self._column_types_seen)))
            self._column_types_seen[key] = (generation, found)
        return found

    def _table_columns(self, names: list[str], temporary: set[str] | None = None
                       ) -> TableColumns:
        """Ordered column types of the tables and views named ``names`` (``main`` first);
        the names with a temporary relation among them are added to ``temporary``."""
        try:
            rows = self._cursor.execute(
                "SELECT table_schema, table_name, column_name, data_type, table_catalog "
                "FROM information_schema.columns WHERE lower(table_name) IN "
                "(SELECT lower(unnest($1::VARCHAR[])))"
                "ORDER BY table_schema <> 'main', table_schema, table_name, ordinal_position",
                [names]).fetchall()
        except duckdb.Error:
            return {}
        out: TableColumns = {}
        first_schema: dict[str, str] = {}
        for schema, table, column, typ, catalog in rows:
            if temporary is not None and catalog == "temp":
                temporary.add(table)
            if first_schema.setdefault(table, schema) != schema:
                continue
            out.setdefault(table, {})[column] = typ
        return out

    def _temp_relations(self) -> list[tuple[str, str]]:
        """This session's temporary relations: (``TABLE`` or ``VIEW``, name)."""
        return self._cursor.execute(
            "SELECT 'TABLE', table_name FROM duckdb_tables() WHERE temporary UNION ALL "
            "SELECT 'VIEW', view_name FROM duckdb_views() WHERE temporary AND NOT internal"
        ).fetchall()

    def _has_temp_relations(self, generation: int) -> bool:
        """Whether the session has temporary relations, asked once per schema generation
        (making or dropping one is DDL: it moves the generation); a session whose DuckDB
        connection is not open yet, or was opened at this generation, has none."""
        if self._raw_cursor is None:
            return False  # no DuckDB connection yet: nothing temporary
        seen = self._temps_seen
        if seen is None or seen[0] != generation:
            try:
                has = bool(self._temp_relations())
            except duckdb.Error:
                has = True  # unknown: the session reads its own
            seen = self._temps_seen = (generation, has)
        return seen[1]

    def _drop_temp_relations(self) -> None:
        """DISCARD ALL/TEMP: drop this session's temporary tables and views."""
        if self._raw_cursor is None:
            return  # not open yet: it has none
        cur = self._cursor
        try:
            for kind, name in self._temp_relations():
                cur.execute(f"DROP {kind} IF EXISTS temp.main.{quote_ident(name)}")
        except duckdb.Error as exc:
            raise to_pg_error(exc) from None

    def interrupt(self) -> None:
        ref = self._stream  # (called from another thread: never parks)
        stream = ref() if ref is not None else None
        if stream is not None and stream.pending:
            stream.cancel()
            if not self._fetching:
                # DuckDB runs nothing (rows are being written, or a portal is suspended):
                # the stream stops at its next batch; DuckDB's own interrupt would also
                # poison a suspended portal's result for its next Execute
                return
        cur = self._raw_cursor
        if cur is not None:  # not open: nothing runs
            cur.interrupt()

    def _notify_box(self) -> duckdb_notify.Mailbox:
        box = self._mailbox
        if box is None:
            hub = self._hub if self._hub is not None else duckdb_notify.Hub()
            box = self._mailbox = hub.mailbox(self._database, lambda: self.process_id)
            box.wake = self._notified
        return box

    def on_notification(self, wake: Callable[[], None]) -> None:
        self._notified = wake
        if self._mailbox is not None:
            self._mailbox.wake = wake

    def take_notifications(self) -> list[tuple[int, str, str]]:
        box = self._mailbox
        return box.take() if box is not None else []

    def close(self) -> None:
        if self._mailbox is not None:
            self._mailbox.close()
        self._stream = None
        self._batching.release()
        self._closed = True
        cur, self._raw_cursor = self._raw_cursor, None
        if cur is None:
            return
        try:
            cur.close()
        except duckdb.Error:
            pass


def _public_schema_command(sql: str) -> Result | None:
    """``CREATE SCHEMA public`` (PostgreSQL's answers: it exists) and ``DROP SCHEMA
    public`` (0A000: DuckDB's ``main`` cannot be dropped); None for other schemas."""
    found = schema_command(sql)
    if found is None:
        return None
    verb, guarded = found
    if verb == "CREATE":
        if guarded:
            return command("CREATE SCHEMA", [Notice(
                'schema "public" already exists, skipping', sqlstate="42P06")])
        raise PgError.by_sqlstate("42P06")('schema "public" already exists', sqlstate="42P06")
    raise FeatureNotSupported(
        "DROP SCHEMA public is not supported on the DuckDB backend",
        detail="PostgreSQL's public schema is DuckDB's main schema, which cannot be dropped.",
        hint="Drop the schema's tables and views one by one instead.")


_DESCRIBE = "DESCRIBE "
#: the functions a lazy relation would run while binding: described with DESCRIBE instead
_SEQUENCE_FN = re.compile(r"(?i)(?:nextval|setval|currval)\s*\(")
_INTROSPECTION = [Column(name, oid) for name, oid in TYPE_INTROSPECTION_COLUMNS]


def _returning_query(sql: str) -> str | None:
    """``SELECT <returning list> FROM <target>`` for ``INSERT/UPDATE/DELETE ... RETURNING``:
    the same columns, described without running the DML (None when it cannot be built)."""
    try:
        import sqlglot
        from sqlglot import exp

        tree = sqlglot.parse_one(sql, read="duckdb")
        returning = tree.args.get("returning")
        target = tree.this
        if isinstance(target, exp.Schema):
            target = target.this
        if not isinstance(returning, exp.Returning) or not isinstance(target, exp.Table):
            return None
        if any(isinstance(p, (exp.Parameter, exp.Placeholder)) for p in returning.find_all(
                exp.Parameter, exp.Placeholder)):
            return None
        select = exp.select(*returning.expressions).from_(target.copy())
        return select.sql(dialect="duckdb")
    except Exception:  # noqa: BLE001 - cannot build it: the shape comes with Execute
        return None


def _describe_rows(cur: duckdb.DuckDBPyConnection, sql: str, values: list[Any] | None,
                   positions: bool = True, columns: Any = None) -> list[Column]:
    """Columns of query ``sql`` from DuckDB's ``DESCRIBE``: it binds, it runs nothing.
    Error positions are relative to ``sql`` (or dropped: ``positions=False``); ``columns``
    answers tables' columns for the error's HINT (duckdb_errors)."""
    try:
        rows = cur.execute(_DESCRIBE + sql, values).fetchall()
    except duckdb.Error as exc:
        err = to_pg_error(exc, _DESCRIBE + sql if positions else None, None, columns)
        if err.position is not None:
            err.position -= len(_DESCRIBE)
            if err.position < 1:
                err.position = None
        raise err from None
    return [Column(name, pg_type_oid(typ)) for name, typ, *_ in rows]


def _with_main(database: str, query: str) -> str:
    """A materialized view's query (pgbarrier's control plane) with ``public``
    qualifiers as DuckDB's ``main``, as every client statement has them."""
    mapped = map_public(query, database) if may_name_public(query) else None
    if mapped is None:
        return query
    if mapped.cross_database is not None:
        raise FeatureNotSupported("cross-database references are not implemented: "
                                  f'"{mapped.cross_database[0]}"')
    return mapped.sql


def _located(name: str) -> tuple[str, str]:
    """(DuckDB schema, relation) of pgbarrier's name ``name`` (:mod:`pgbarrier.sql.relnames`:
    PostgreSQL's ``public`` is DuckDB's ``main``)."""
    schema, rel = name_parts(name)
    return ("main" if schema == "public" else schema), rel


def _where(cur: duckdb.DuckDBPyConnection, name: str) -> tuple[str, str]:
    """(DuckDB schema, relation) of pgbarrier's view ``name``: as its marker row says (a
    view made before views had schemas is in ``main`` under its whole name), else
    :func:`_located`."""
    row = cur.execute(f"SELECT schema_name, relname FROM {MARKER_SCHEMA}.materialized_views "
                      "WHERE name = $1", [name]).fetchone()
    return (row[0], row[1]) if row is not None else _located(name)


def _duck_name(schema: str, rel: str) -> str:
    """A DuckDB schema and relation as a qualified identifier."""
    return f"{quote_ident(schema)}.{quote_ident(rel)}"


#: how many times a create/drop transaction is retried after a write-write conflict
_CONFLICT_RETRIES = 5


def _is_conflict(exc: Exception) -> bool:
    """DuckDB's optimistic concurrency said another transaction wrote the same entry."""
    return isinstance(exc, duckdb.TransactionException) and "conflict" in str(exc).lower()


def _load_columnar() -> None:
    try:
        duckdb_batches.load()
    except Exception:  # noqa: BLE001 - the first result that needs it raises the reason
        logging.getLogger(__name__).warning("the columnar result path could not be loaded",
                                            exc_info=True)


class DuckDBBackend(Backend):
    """DuckDB files under ``data_dir`` (or in memory), one per database."""

    dialect = "duckdb"

    def __init__(self, data_dir: str = ":memory:", limits: DuckDBLimits | None = None) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.limits = limits or DuckDBLimits()
        self._dbs: dict[str, duckdb.DuckDBPyConnection] = {}
        self._catalogs: dict[str, CatalogInstaller] = {}
        self._system_views: dict[str, tuple[tuple[str, str], ...]] = {}
        self._lock = threading.Lock()
        #: per database: held while a marker row is written and its transaction commits
        self._marker_locks: dict[str, threading.Lock] = {}
        #: per database: pgbarrier's views as DuckDB relations (duckdb_views)
        self._views: dict[str, ViewNames] = {}
        #: each open database's set-up connections kept ready (duckdb_spares)
        self._spares: dict[str, SpareCursors] = {}
        #: pgbarrier's sessions as DuckDB sees them (the App sets ``signals.hook``)
        self.signals = Signals()
        #: LISTEN / NOTIFY between the sessions of each database (duckdb_notify)
        self.notifications = duckdb_notify.Hub()
        # the columnar result path's pyarrow (half a second to import) is loaded beside
        # start-up, not by the first client's result (which a statement_timeout would cut)
        threading.Thread(target=_load_columnar, name="pgbarrier-load-pyarrow",
                         daemon=True).start()
        if data_dir != ":memory:":
            Path(data_dir).mkdir(parents=True, exist_ok=True)

    def _db(self, name: str) -> duckdb.DuckDBPyConnection:
        with self._lock:
            conn = self._dbs.get(name)
            if conn is None:
                path = self._path(name)
                conn = duckdb.connect(path)
                try:  # before any client statement: see duckdb_config
                    lock_down(conn, self.limits, in_memory=path == ":memory:")
                except duckdb.Error:
                    conn.close()
                    raise
                catalog = CatalogInstaller(conn, name)
                self.signals.register(conn)
                try:  # up front, outside any transaction: see the module docstring
                    catalog.ensure_marker(conn)
                except duckdb.Error:
                    conn.close()
                    raise
                views = ViewNames()
                try:
                    views.load(conn, MARKER_SCHEMA)
                except duckdb.Error:
                    conn.close()
                    raise
                self._views[name] = views
                self._spares[name] = SpareCursors(conn, prepare_connection)
                self._dbs[name] = conn
                self._marker_locks[name] = threading.Lock()
                catalog.set_system_views(self._system_views)
                self._catalogs[name] = catalog
                self._publish_databases()
            return conn

    def _publish_databases(self) -> None:
        """Every open database's ``pg_database`` lists them all (caller holds the lock)."""
        names = sorted(self._dbs)
        for catalog in self._catalogs.values():
            catalog.set_databases(names)

    def refuse_database_options(self, options: str, options_at: int,
                                session: BackendSession | None) -> None:
        raise database_options_refused(
            options, options_at, detail="The embedded DuckDB backend supports CREATE DATABASE "
                                        "name, without options.")

    def refuse_view_clauses(self, storage: tuple[tuple[str, str], ...], storage_at: int | None,
                            with_data: bool | None, with_data_at: int | None) -> None:
        """DuckDB has no storage parameters (22023 ``unrecognized parameter``, PostgreSQL's
        answer for an unknown one), access methods or tablespaces (0A000), and a view's
        table always holds its rows (``WITH NO DATA``: 0A000)."""
        for kind, text in storage:
            if kind == "WITH":
                key = text.split("=")[0].strip()
                raise InvalidParameterValue(f'unrecognized parameter "{key}"',
                                            position=storage_at)
            raise FeatureNotSupported(
                f"{kind} is not supported for materialized views on the DuckDB backend",
                detail=f"DuckDB has no access methods or tablespaces: {text}",
                position=storage_at)
        if with_data is False:
            raise FeatureNotSupported(
                "CREATE MATERIALIZED VIEW ... WITH NO DATA is not supported on the DuckDB "
                "backend", hint="Omit WITH NO DATA.", position=with_data_at)

    def set_system_views(self, views: dict[str, tuple[tuple[str, str], ...]]) -> None:
        """pgbarrier's ``rw_catalog`` views (name -> columns), listed in ``pg_class``."""
        with self._lock:
            self._system_views = dict(views)
            for catalog in self._catalogs.values():
                catalog.set_system_views(self._system_views)

    def _path(self, name: str) -> str:
        """See :mod:`pgbarrier.backends.duckdb_files`: always a file directly in the data dir."""
        return ":memory:" if self.data_dir == ":memory:" else database_path(self.data_dir, name)

    def ensure_database(self, name: str, owner: str | None = None, new: bool = False) -> None:
        self._db(name)  # a database file pgbarrier does not list is its own leftover

    def drop_database(self, name: str) -> None:
        """Close ``name``'s DuckDB and delete its file (its sessions must be closed)."""
        self._close_database(name)
        path = self._path(name)
        if path != ":memory:":
            for p in (path, path + ".wal"):
                if os.path.exists(p):
                    os.remove(p)

    def _close_database(self, name: str) -> None:
        """Forget ``name``'s open DuckDB (it leaves pg_database) and close it."""
        with self._lock:
            conn = self._dbs.pop(name, None)
            self._catalogs.pop(name, None)
            self._marker_locks.pop(name, None)
            self._views.pop(name, None)
            spares = self._spares.pop(name, None)
            self._publish_databases()
        if spares is not None:
            spares.close()
        if conn is not None:
            conn.close()

    def rename_database(self, old: str, new: str, session: BackendSession | None = None) -> None:
        """Close ``old``'s DuckDB and rename its files; it opens again under ``new``. In
        memory, the open database is kept under its new name, with its catalog anew."""
        if self.data_dir == ":memory:":
            with self._lock:
                conn = self._dbs.pop(old)
                if self._catalogs.pop(old).installed:
                    conn.execute(f"DETACH {CATALOG_DB}")  # it names the database: installed anew
                catalog = CatalogInstaller(conn, new)
                catalog.set_system_views(self._system_views)
                self._dbs[new], self._catalogs[new] = conn, catalog
                self._marker_locks[new] = self._marker_locks.pop(old)
                self._views[new] = self._views.pop(old)
                self._spares[new] = self._spares.pop(old)
                self._publish_databases()
            return
        source, target = self._path(old), self._path(new)
        if os.path.exists(target):
            raise DuplicateDatabase(f'database "{new}" already exists',
                                    detail="Its file is already in the data directory.")
        self._close_database(old)
        if os.path.exists(source + ".wal"):
            os.rename(source + ".wal", target + ".wal")
        if os.path.exists(source):
            os.rename(source, target)
        self._db(new)  # open again: every open database is in pg_database

    def connect(self, database: str, user: str, password: str | None = None,
                startup: StartupSettings | None = None) -> DuckDBSession:
        conn = self._db(database)  # DuckDB has no roles: user is the session's name only
        return DuckDBSession(conn, self._catalogs.get(database), database, user,
                             self.signals, self._views.get(database), self.limits.instance_info,
                             self.notifications, self._spares.get(database))

    def notify(self, database: str, channel: str, payload: str) -> None:
        """pgbarrier's own NOTIFY (its events): to the sessions of ``database`` listening on
        ``channel`` (duckdb_notify), from pgbarrier's process id."""
        self.notifications.notify(database, channel, payload, os.getpid())

    @staticmethod
    def _mark(cur: duckdb.DuckDBPyConnection, name: str, kind: str | None,
              definition: str | None = None) -> tuple[str, str]:
        """Record (or with ``kind=None`` forget) that ``name`` is a materialized view, in
        the caller's transaction, so ``pg_class.relkind`` says ``'m'`` exactly while it is
        (the marker table exists since the database was opened), with where DuckDB has it
        (:func:`_located`). ``definition`` is a batch view's query as the client wrote it
        (PostgreSQL's SQL), for ``pg_get_viewdef`` (a batch view is a table: DuckDB keeps
        no query of it)."""
        schema, rel = _where(cur, name)
        cur.execute(f"DELETE FROM {MARKER_SCHEMA}.materialized_views WHERE name = $1", [name])
        if kind is not None:
            cur.execute(f"INSERT INTO {MARKER_SCHEMA}.materialized_views "
                        "(name, kind, definition, schema_name, relname) "
                        "VALUES ($1, $2, $3, $4, $5)", [name, kind, definition, schema, rel])
        return schema, rel

    def _marked(self, database: str, cur: duckdb.DuckDBPyConnection, name: str,
                kind: str | None, definition: str | None = None) -> None:
        """Write the marker row and COMMIT, serialised with the other marker writes."""
        with self._marker_locks.get(database) or threading.Lock():
            schema, rel = self._mark(cur, name, kind, definition)
            cur.execute("COMMIT")
            views = self._views.get(database)
            if views is not None:
                (views.add if kind is not None else views.remove)(schema, rel)

    def _transaction(self, database: str, body: Any, cancel: RefreshCancel | None = None
                     ) -> Any:
        """``body(cur)`` after BEGIN (it commits); rolled back on error. A write-write
        conflict (DuckDB's TransactionException) is retried a bounded number of times."""
        def go(cur: duckdb.DuckDBPyConnection) -> Any:
            attempt = 0
            while True:
                try:
                    if cancel is not None:
                        cancel.bind(cur.interrupt)
                    cur.execute("BEGIN")
                    done = body(cur)
                    catalog = self._catalogs.get(database)
                    if catalog is not None:  # a view made, refreshed or dropped: its shape
                        catalog.origins.bump()  # may have changed (sessions' caches)
                    return done
                except (duckdb.Error, QueryCanceled) as exc:
                    try:
                        cur.execute("ROLLBACK")
                    except duckdb.Error:
                        pass
                    if isinstance(exc, QueryCanceled):
                        raise
                    if _is_conflict(exc) and attempt < _CONFLICT_RETRIES:
                        attempt += 1
                        continue
                    raise to_pg_error(exc) from None
                finally:
                    if cancel is not None:
                        cancel.unbind()
        return self._run(database, go)

    def _run(self, database: str, fn: Any) -> Any:
        cur = self._db(database).cursor()
        try:
            return fn(cur)
        finally:
            cur.close()

    def relation_exists(self, database: str, name: str) -> bool:
        schema, rel = _located(name)
        rows = self._run(database, lambda c: c.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_catalog = current_database() "
            "AND table_schema = $1 AND table_name = $2", [schema, rel]).fetchall())
        return bool(rows)

    def relation_name(self, session: BackendSession, name: str) -> str | None:
        return session.relation_name(name) if isinstance(session, DuckDBSession) else None

    def creation_name(self, session: BackendSession, name: str) -> str:
        return session.creation_name(name) if isinstance(session, DuckDBSession) else name

    def bind_query(self, session: BackendSession, query: str) -> str:
        return session.bind_query(query) if isinstance(session, DuckDBSession) else query

    def plan_view_drop(self, session: BackendSession, name: str, cascade: bool) -> Any:
        if not isinstance(session, DuckDBSession):
            return None
        return session.ddl_plan(f"DROP MATERIALIZED VIEW {quote_name(name)}"
                                + (" CASCADE" if cascade else ""))

    def run_statements(self, session: BackendSession, statements: list[str]) -> None:
        if isinstance(session, DuckDBSession) and statements:
            session.run_statements(statements)

    def relation_kind(self, session: BackendSession, name: str) -> str | None:
        return session.relation_kind(name) if isinstance(session, DuckDBSession) else None

    def relations_read(self, database: str, inputs: frozenset[str],
                       session: BackendSession | None = None) -> list[tuple[str, ...]]:
        """Plain (and streaming) views followed through what each reads, as
        :mod:`pgbarrier.backends.duckdb_ddl.depends` answers it from DuckDB's catalog and the
        views' stored SQL (the one place dependencies come from); names compare
        case-insensitively, as DuckDB's do. With the client's ``session``
        the inputs resolve with its search_path, and each that exists is reported too, as
        a chain of one (pgbarrier's name for it)."""
        resolved: list[str] | None = None
        if isinstance(session, DuckDBSession):
            found = [session.resolve(n) for n in sorted(inputs)]
            resolved = [canonical(*f) for f in found if f is not None]
            inputs = frozenset(resolved)
        try:
            snap = self._run(database, duckdb_ddl.snapshot)
        except duckdb.Error:
            return []

        def resolve(name: str) -> tuple[str, str] | None:
            parts = name.split(".")
            if len(parts) == 3:
                parts = parts[1:]  # database.schema.name: the database is this one
            schema = parts[0] if len(parts) == 2 else "main"
            found = snap.find("main" if schema == "public" else schema, parts[-1])
            return found.key if found is not None and found.kind in ("r", "v", "m") else None

        def step(key: tuple[str, str]) -> list[tuple[str, str]] | None:
            rel = snap.rels[key]
            if rel.kind != "v" and not (rel.kind == "m" and rel.pgb_kind == "streaming"):
                return None  # a table, or a batch-refresh view: an end of a chain
            return relations_read(rel, snap)

        starts = [k for k in (resolve(n) for n in sorted(inputs)) if k is not None]
        chains = [tuple(canonical(pg_schema(s), n) for s, n in path)
                  for path in walk(starts, step)]
        if resolved is not None:
            chains[:0] = [(n,) for n in resolved]
        return chains

    def describe_query(self, database: str, query: str) -> list[Column]:
        duck_query = _with_main(database, postgres_to_duckdb(query))  # duckdb_dialect, public

        def go(cur: duckdb.DuckDBPyConnection) -> list[Column]:
            return _describe_rows(cur, duck_query, None, positions=False)
        return self._run(database, go)

    @staticmethod
    def _aliased(columns: tuple[str, ...] | None, query: str) -> str:
        if not columns:
            return query
        cols = ", ".join(quote_ident(c) for c in columns)
        return f"SELECT * FROM ({query}) AS _q({cols})"

    def _swap_in(self, database: str, name: str, columns: tuple[str, ...] | None, query: str,
                 replace: bool, cancel: RefreshCancel | None = None) -> int:
        """In one transaction: (re)create table ``name`` from ``query``, count it, commit
        (a create marks it too)."""
        verb = "CREATE OR REPLACE TABLE" if replace else "CREATE TABLE"
        definition = self._aliased(columns, query)  # PostgreSQL's SQL, for pg_get_viewdef
        query = _with_main(database, postgres_to_duckdb(query))  # duckdb_dialect, public

        def body(cur: duckdb.DuckDBPyConnection) -> int:
            where = _where(cur, name)
            target = _duck_name(*where)
            # indexes a client made on the view (PostgreSQL allows them): built again
            indexes = [r[0] for r in cur.execute(
                "SELECT sql FROM duckdb_indexes() WHERE database_name = current_database() "
                "AND schema_name = $1 AND table_name = $2 AND sql IS NOT NULL",
                list(where)).fetchall()] if replace else []
            cur.execute(f"{verb} {target} AS {self._aliased(columns, query)}")
            for index in indexes:
                cur.execute(index)
            (count,) = cur.execute(f"SELECT count(*) FROM {target}").fetchone()
            if cancel is not None:
                cancel.check()  # an interrupt that missed the query still rolls it back
            if replace and cur.execute(
                    f"SELECT definition IS NOT NULL FROM {MARKER_SCHEMA}.materialized_views "
                    "WHERE name = $1", [name]).fetchone() != (False,):
                cur.execute("COMMIT")
            else:  # a create, or a view made before the marker kept definitions
                self._marked(database, cur, name, "batch", definition)
            return int(count)
        return self._transaction(database, body, cancel)

    def create_batch_view(self, database: str, name: str, columns: tuple[str, ...] | None,
                          query: str, owner: str | None = None,
                          cancel: RefreshCancel | None = None, *,
                          storage: tuple[tuple[str, str], ...] = (), with_data: bool = True,
                          session: BackendSession | None = None) -> int:
        """A batch view is a table holding the rows of ``query``, created in one transaction
        (DuckDB has no roles: ``owner`` is ignored; nor storage clauses or WITH NO DATA,
        which the control plane refuses first; the view is the database's, not the
        client ``session``'s)."""
        return self._swap_in(database, name, columns, query, replace=False, cancel=cancel)

    def refresh_batch_view(self, database: str, name: str, columns: tuple[str, ...] | None,
                           query: str, cancel: RefreshCancel | None = None) -> int:
        """``CREATE OR REPLACE TABLE`` in one transaction: readers see the old rows until COMMIT."""
        return self._swap_in(database, name, columns, query, replace=True, cancel=cancel)

    def _drop(self, database: str, kind: str, name: str) -> None:
        def body(cur: duckdb.DuckDBPyConnection) -> None:
            cur.execute(f"DROP {kind} IF EXISTS {_duck_name(*_where(cur, name))}")
            self._marked(database, cur, name, None)
        self._transaction(database, body)

    def drop_batch_view(self, database: str, name: str) -> None:
        self._drop(database, "TABLE", name)

    def create_view(self, database: str, name: str, columns: tuple[str, ...] | None,
                    query: str, owner: str | None = None) -> None:
        query = _with_main(database, postgres_to_duckdb(query))  # duckdb_dialect, public

        def body(cur: duckdb.DuckDBPyConnection) -> None:
            cur.execute(f"CREATE VIEW {_duck_name(*_located(name))} AS "
                        f"{self._aliased(columns, query)}")
            self._marked(database, cur, name, "streaming")
        self._transaction(database, body)

    def drop_view(self, database: str, name: str) -> None:
        self._drop(database, "VIEW", name)

    def close(self) -> None:
        with self._lock:
            for spares in self._spares.values():
                spares.close()
            self._spares.clear()
            for conn in self._dbs.values():
                conn.close()
            self._dbs.clear()
            self._catalogs.clear()
