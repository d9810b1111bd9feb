"""How every embedded DuckDB instance is locked down before a client reaches it.

Rules this module keeps (verified on duckdb 2.0.1):

* :func:`lock_down` runs on each new instance (one per pgbarrier database, file or
  ``:memory:``) before any client statement, in this order, because each step
  forbids changing the ones before it: load the built-in extensions pgbarrier
  needs (those ``duckdb_extensions()`` reports as ``(BUILT-IN)``: icu for
  ``TimeZone``, json for ``jsonb``, parquet for data files); the operator's
  ``memory_limit`` / ``threads``; ``temp_directory`` (DuckDB's default
  ``<db>.duckdb.tmp`` inside the data dir, none for ``:memory:``, so a spill never
  lands outside it); no Python replacement scans (a query must not see pgbarrier's
  own Python objects); PostgreSQL's integer division and NULL order (``ORDER BY x DESC``
  puts NULLs first); no extension autoinstall/autoload, no community
  extensions, no persistent secrets; ``allowed_directories`` = the temp dir and each
  ``--allow-path`` (resolved, so a symlinked or ``..`` spelling cannot widen it;
  DuckDB itself resolves what a client names and already allows the database's own
  file and WALs); ``enable_external_access = false``; ``allowed_configs`` = the
  settings a session may change (below); then ``lock_configuration = true``.
  An instance DuckDB hands back already locked (it caches instances per file within
  a process, e.g. a backend reopened in the same process) is left as it is.
  After that DuckDB refuses every other file, ATTACH of a file outside the allowed
  directories, INSTALL/LOAD, and any change to the configuration.
* The settings a session may change (``allowed_configs``) come from DuckDB's own
  answer: every name in ``duckdb_settings()`` that DuckDB accepts as
  ``SET SESSION`` on a probe instance (options DuckDB keeps per instance refuse
  it: threads, memory_limit, temp_directory, enable_external_access...), minus
  :data:`NOT_FOR_CLIENTS` (settings that name host paths or reach into the
  server's Python process). Measured: none of the remaining ones, set with
  ``SET SESSION``, changes what another connection sees.
* ``lock_configuration`` stops a client from changing anything else, but not the
  *scope* of an allowed one: DuckDB would still take ``SET GLOBAL TimeZone``, and a
  plain ``SET default_null_order`` / ``SET default_order`` / ``PRAGMA x = v`` is
  instance-wide in DuckDB. So :meth:`StatementGuard.check` (on every client
  statement that DuckDB parses as SET/RESET/PRAGMA/ATTACH/DETACH) refuses
  ``SET``/``RESET GLOBAL`` (42501 ``permission denied to set parameter "x"``), runs
  every other SET/RESET/``PRAGMA x = v`` of an allowed setting as ``SET SESSION`` /
  ``RESET SESSION``, and refuses ATTACH and DETACH (42501): DuckDB has no setting
  to keep a client from attaching a DuckDB file inside an ``--allow-path``
  directory, or from detaching pgbarrier's own catalog database. The guard remembers
  which allowed settings the session changed (``USE`` changes ``schema``), so
  ``DISCARD ALL`` resets exactly those (:meth:`StatementGuard.reset`).
* pgbarrier's own schemas are read-only to clients: a statement that names
  ``pgbarrier_catalog`` (the PostgreSQL catalog every session of the database shares)
  or ``pgbarrier`` (the materialized-view marker) and is anything but a read is 42501
  ``permission denied for schema ...``, so no client can break another's catalog.
* Server paths are not shown, as PostgreSQL keeps ``data_directory`` to superusers:
  each session's TEMP macros (:data:`PATH_SHADOWS`) shadow ``duckdb_settings()``,
  ``duckdb_databases()`` (so ``PRAGMA database_list``) and ``duckdb_temporary_files()``
  with the same rows, paths NULL; naming the originals past the shadow
  (``system.main.duckdb_settings()``), any statement but a query that names them,
  DuckDB's logs, and ``SHOW`` of a path setting (:data:`PATH_SETTINGS`) are 42501.
* The instance itself (its settings, databases, extensions, memory, build, ``CHECKPOINT``)
  is refused unless the operator opens it: :mod:`pgbarrier.backends.duckdb_instance`.
* No secrets: DuckDB keeps even a temporary secret per instance (every session of the
  database would use it) and pgbarrier reaches no remote storage, so ``CREATE SECRET``
  is 42501; so is ``SET VARIABLE pgbarrier_*`` (pgbarrier's own, the session's user).
* ``--duckdb-memory-limit`` is per database (each is its own DuckDB instance); its
  default is a quarter of the host's RAM (:func:`default_memory_limit`), so one
  runaway query cannot take the host, DuckDB's own default being 80%.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import duckdb

from pgbarrier.backends.duckdb_instance import refusal as instance_refusal
from pgbarrier.backends.duckdb_sql import literal, quote_ident
from pgbarrier.errors import PgError

#: session-settable DuckDB settings that clients still may not change: they name host
#: paths (files DuckDB would write or search) or reach the server's Python objects
NOT_FOR_CLIENTS = frozenset({
    "home_directory", "file_search_path", "log_query_path", "profile_output",
    "profiling_output", "enable_profiling", "python_enable_replacements",
    "python_scan_all_frames", "pandas_analyze_sample", "allocator_background_threads",
    "allocator_flush_threshold", "debug_checkpoint_scan_sleep_ms",
    # pgbarrier reads DuckDB's error text to build PostgreSQL's errors
    "errors_as_json",
})

ALLOW_PATH_HINT = ("pgbarrier lets a client read and write only its own database; an "
                   "operator opens a directory for data files with --allow-path DIR.")
SETTING_HINT = ("DuckDB's instance-wide settings are fixed by the operator "
                "(--duckdb-memory-limit, --duckdb-threads); SET SESSION changes this "
                "session's own settings only.")


def default_memory_limit() -> str:
    """A quarter of the host's physical RAM, as DuckDB reads a size (``"6144MB"``)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return "2GB"
    return f"{max(256, total // 4 // (1024 * 1024))}MB"


@dataclass(frozen=True)
class DuckDBLimits:
    """The operator's choices for every DuckDB instance."""

    memory_limit: str = field(default_factory=default_memory_limit)
    threads: int | None = None  #: None: DuckDB's default (the number of cores)
    allow_paths: tuple[str, ...] = ()
    #: clients may see the instance's settings, databases, memory, build
    #: (``--allow-instance-info``; pgbarrier.backends.duckdb_instance)
    instance_info: bool = False


_session_settable: frozenset[str] | None = None
_known: frozenset[str] = frozenset()
_probe_lock = threading.Lock()


def known_settings() -> frozenset[str]:
    """Lower-cased names of every setting DuckDB has (``duckdb_settings()``)."""
    session_settable()
    return _known


def session_settable() -> frozenset[str]:
    """Lower-cased names of the settings DuckDB accepts as ``SET SESSION`` and
    pgbarrier lets clients change (probed once per process on a private instance)."""
    global _session_settable, _known
    with _probe_lock:
        if _session_settable is None:
            names = set()
            probe = duckdb.connect(":memory:")
            try:
                rows = probe.execute("SELECT name, value FROM duckdb_settings()").fetchall()
                _known = frozenset(name.lower() for name, _ in rows)
                for name, value in rows:
                    if name.lower() in NOT_FOR_CLIENTS:
                        continue
                    try:
                        if value is None:
                            probe.execute(f"RESET SESSION {quote_ident(name)}")
                        else:
                            probe.execute(f"SET SESSION {quote_ident(name)} = $1", [value])
                    except duckdb.Error:
                        continue  # DuckDB keeps it per instance (or it has no session form)
                    names.add(name.lower())
            finally:
                probe.close()
            _session_settable = frozenset(names)
        return _session_settable


def allowed_directories(allow_paths: Sequence[str]) -> list[str]:
    """``--allow-path`` directories as DuckDB's ``allowed_directories`` entries: resolved
    (symlinks, ``..``), with a trailing ``/`` so ``/data`` does not open ``/data2``."""
    out = []
    for p in allow_paths:
        real = os.path.realpath(os.path.expanduser(p))
        out.append(real.rstrip(os.sep) + os.sep)
    return out


def lock_down(conn: duckdb.DuckDBPyConnection, limits: DuckDBLimits, in_memory: bool) -> None:
    """Configure a just-opened instance (see the module rules); raises ``duckdb.Error``."""
    cur = conn.cursor()
    try:
        if cur.execute("SELECT current_setting('lock_configuration')").fetchone()[0]:
            return  # DuckDB handed back an instance this process already opened and locked
        for (name,) in cur.execute("SELECT extension_name FROM duckdb_extensions() "
                                   "WHERE install_path = '(BUILT-IN)'").fetchall():
            cur.execute(f"LOAD {quote_ident(name)}")
        dirs = allowed_directories(limits.allow_paths)
        if in_memory:
            temp = ""
        else:
            (temp,) = cur.execute("SELECT current_setting('temp_directory')").fetchone()
            if temp:
                temp = os.path.realpath(temp)
                dirs.insert(0, temp.rstrip(os.sep) + os.sep)
        steps = [
            f"SET GLOBAL memory_limit = {literal(limits.memory_limit)}",
            *([f"SET GLOBAL threads = {int(limits.threads)}"] if limits.threads else []),
            f"SET GLOBAL temp_directory = {literal(temp)}",
            "SET GLOBAL python_enable_replacements = false",
            "SET GLOBAL integer_division = true",  # PostgreSQL's int / int (duckdb_dialect)
            # PostgreSQL's NULL order: last ascending, first descending (DuckDB's default
            # puts them last both ways: ORDER BY x DESC answered them last)
            "SET GLOBAL default_null_order = 'nulls_last_on_asc_first_on_desc'",
            "SET GLOBAL autoinstall_known_extensions = false",
            "SET GLOBAL autoload_known_extensions = false",
            "SET GLOBAL allow_community_extensions = false",
            "SET GLOBAL allow_persistent_secrets = false",
            "SET GLOBAL allowed_directories = " + _list(dirs),
            "SET GLOBAL enable_external_access = false",
            "SET GLOBAL allowed_configs = " + _list(sorted(session_settable())),
            "SET GLOBAL lock_configuration = true",
        ]
        for step in steps:
            cur.execute(step)
    finally:
        cur.close()


def _list(items: Sequence[str]) -> str:
    return "[" + ", ".join(literal(i) for i in items) + "]"


class InsufficientPrivilege(PgError):
    sqlstate = "42501"


#: first words of the statements the guard looks at (others cannot be SET/ATTACH...)
_WATCHED = frozenset({"SET", "RESET", "PRAGMA", "ATTACH", "DETACH", "USE"})
#: pgbarrier's own schemas, shared by every session of a database (its PostgreSQL catalog,
#: and the marker of which tables are materialized views)
_INTERNAL = re.compile(r'(?i)(?<![\w$])"?(pgbarrier(?:_catalog)?)"?(?![\w$])')
_LITERALS = re.compile(r"'(?:[^']|'')*'")
#: what a client may do with a statement that names them: read
_READS = frozenset({"SELECT", "EXPLAIN", "PRAGMA", "RELATION", "PREPARE", "EXECUTE"})


#: DuckDB's settings whose value is a server path (SHOW answers them)
PATH_SETTINGS = frozenset({
    "allowed_directories", "allowed_paths", "extension_directories",
    "extension_repository_directory", "file_search_path", "home_directory", "log_query_path",
    "profile_output", "profiling_output", "secret_directory", "temp_directory",
})
_PATH_LIST = ", ".join(f"'{n}'" for n in sorted(PATH_SETTINGS))
#: per-session TEMP macros that shadow DuckDB's catalog functions which show server paths
#: (DuckDB resolves the session's temp schema first; ``PRAGMA database_list`` reads
#: ``duckdb_databases()``): the same rows, paths NULL
PATH_SHADOWS = (
    "CREATE OR REPLACE TEMP MACRO duckdb_settings() AS TABLE SELECT * REPLACE ("
    f"CASE WHEN name IN ({_PATH_LIST}) THEN NULL ELSE value END AS value, "
    f"CASE WHEN name IN ({_PATH_LIST}) THEN NULL ELSE typed_value END AS typed_value) "
    "FROM system.main.duckdb_settings()",
    "CREATE OR REPLACE TEMP MACRO duckdb_databases() AS TABLE SELECT * REPLACE ("
    "NULL::VARCHAR AS path) FROM system.main.duckdb_databases()",
    "CREATE OR REPLACE TEMP MACRO duckdb_temporary_files() AS TABLE SELECT * REPLACE ("
    "NULL::VARCHAR AS path) FROM system.main.duckdb_temporary_files()",
)
#: the shadowed functions named past their shadow (``system.main.duckdb_settings()``), or
#: a statement that could drop or replace a shadow, and DuckDB's logs
_PATH_FUNCTIONS = re.compile(r"(?i)(\.\s*)?(?<![\w$])(duckdb_databases|duckdb_settings|"
                             r"duckdb_temporary_files|duckdb_logs|duckdb_log_contexts)(?![\w$])")
_SECRET_RE = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:(?:TEMP|TEMPORARY|PERSISTENT)\s+)?"
                        r"SECRET\b", re.I)
_QUERY_WORDS = frozenset({"SELECT", "WITH", "FROM", "TABLE", "VALUES", "PRAGMA", "EXPLAIN",
                          "DESCRIBE", "SUMMARIZE"})
_SHOW_RE = re.compile(r'\s*SHOW\s+("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_.]*)\s*;?\s*\Z', re.I)
PATHS_HINT = ("pgbarrier shows the server's files and directories to no client (PostgreSQL "
              "shows them to superusers only); pg_database and pg_settings list the "
              "databases and this session's settings.")


def _refuse_server_paths(sql: str, first_word: str | None) -> None:
    """42501 for a statement that would show a server path: DuckDB's catalog functions
    that list files and directories, and ``SHOW`` of a path setting (PostgreSQL keeps
    ``data_directory`` and its like to superusers)."""
    m = _PATH_FUNCTIONS.search(sql)
    if m is not None:
        name = m.group(2).lower()
        if m.group(1) or name.startswith("duckdb_log") or first_word not in _QUERY_WORDS:
            raise InsufficientPrivilege(f"permission denied for function {name}",
                                        hint=PATHS_HINT)
    if first_word == "SHOW":
        shown = _SHOW_RE.match(_COMMENTS.sub("", sql, count=1))
        if shown and _unquote_name(shown.group(1)).lower() in PATH_SETTINGS:
            raise InsufficientPrivilege(
                f'permission denied to examine "{_unquote_name(shown.group(1))}"',
                hint=PATHS_HINT)


def _refuse_internal_writes(sql: str, schema: str) -> None:
    """42501 for a statement that names pgbarrier's own schemas and may change something
    (DROP, ALTER, INSERT, CREATE ... even ``CREATE TABLE t AS SELECT`` from them: name
    ``pg_catalog`` instead); reading them is allowed."""
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error:
        return  # DuckDB will report the syntax error itself
    for s in statements:
        if s.type.name not in _READS:
            raise InsufficientPrivilege(
                f"permission denied for schema {schema}",
                hint="pgbarrier keeps its own catalog there: every session may read it, "
                     "none may change it.")
_COMMENTS = re.compile(r"\A(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?\*/)*", re.S)
_NAME = r'("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_.]*)'
_SET_RE = re.compile(rf"(SET|RESET)\s+(?:(GLOBAL|SESSION|LOCAL|VARIABLE)\s+)?{_NAME}(.*)\Z",
                     re.I | re.S)
_PRAGMA_RE = re.compile(rf"PRAGMA\s+{_NAME}\s*(=|\bTO\b)(.*)\Z", re.I | re.S)


def _unquote_name(name: str) -> str:
    return name[1:-1].replace('""', '"') if name.startswith('"') else name


class StatementGuard:
    """Keeps a client's statements to its own session (see the module rules)."""

    def __init__(self, allowed: frozenset[str] | None = None,
                 instance_info: bool = False) -> None:
        self.allowed = session_settable() if allowed is None else allowed
        #: the operator's --allow-instance-info (duckdb_instance)
        self.instance_info = instance_info
        #: the allowed settings this session has SET, for :meth:`reset`
        self.changed: set[str] = set()

    def reset(self, cur: duckdb.DuckDBPyConnection) -> None:
        """``RESET SESSION`` each setting this session changed (``DISCARD ALL``, ``RESET
        ALL``: DuckDB has no ``RESET ALL``); nothing to run when it changed none."""
        for name in sorted(self.changed):
            cur.execute(f"RESET SESSION {quote_ident(name)}")
        self.changed.clear()

    def check(self, sql: str, first_word: str | None) -> str:
        """``sql`` as DuckDB should run it (SET scopes made SESSION), or a 42501."""
        internal = _INTERNAL.search(sql)
        if internal is not None:
            internal = _INTERNAL.search(_LITERALS.sub("''", sql))  # a name, not in a string
        if internal is not None:
            _refuse_internal_writes(sql, internal.group(1).lower())
        _refuse_server_paths(sql, first_word)
        if not self.instance_info:
            hidden = instance_refusal(sql)
            if hidden is not None:
                raise hidden
        if first_word == "CREATE" and _SECRET_RE.match(_COMMENTS.sub("", sql, count=1)):
            # DuckDB keeps secrets per instance: every session of the database would use it
            raise InsufficientPrivilege("permission denied to create a secret",
                                        hint="DuckDB shares a secret with every session of the "
                                             "database, and pgbarrier reaches no remote storage.")
        if first_word not in _WATCHED and ";" not in sql.rstrip().rstrip(";"):
            return sql  # one statement DuckDB cannot read as SET/ATTACH...: nothing to parse
        try:
            statements = duckdb.extract_statements(sql)
        except duckdb.Error:
            return sql  # DuckDB will report the syntax error itself
        if len(statements) == 1 and first_word is not None and first_word not in _WATCHED:
            return sql
        st = duckdb.StatementType
        out = []
        changed = False
        for s in statements:
            text = s.query
            if s.type in (st.ATTACH, st.DETACH):
                verb = "attach" if s.type == st.ATTACH else "detach"
                raise InsufficientPrivilege(
                    f"permission denied to {verb} a database",
                    hint="A pgbarrier session works in its own database; each database is "
                         "created with CREATE DATABASE and reached by connecting to it.")
            if s.type == st.SET:
                new = self._setting(text)
                changed = changed or new is not text
                text = new
            out.append(text)
        return "".join(out) if changed else sql

    def _setting(self, text: str) -> str:
        body = _COMMENTS.sub("", text, count=1).rstrip().rstrip(";")
        m = _SET_RE.match(body)
        if m:
            verb, scope, name, rest = m.group(1).upper(), (m.group(2) or "").upper(), \
                _unquote_name(m.group(3)), m.group(4)
            if scope == "VARIABLE":
                if name.lower().startswith("pgbarrier"):  # pgbarrier's own (the user name)
                    raise InsufficientPrivilege(
                        f'permission denied to set parameter "{name}"',
                        hint="pgbarrier keeps the session's user there; it is set at start-up.")
                return text  # DuckDB's variables belong to the connection
            if scope == "GLOBAL":
                raise InsufficientPrivilege(f'permission denied to set parameter "{name}"',
                                            hint=SETTING_HINT)
            if name.lower() not in self.allowed:
                return text  # DuckDB's lock refuses it
            self.changed.add(name)
            return text if scope == "SESSION" else f"{verb} SESSION {quote_ident(name)}{rest}"
        if re.match(r"USE\b", body, re.I):
            self.changed.add("schema")
            return text
        m = _PRAGMA_RE.match(body)
        if m:
            name, rest = _unquote_name(m.group(1)), m.group(3)
            if name.lower() in self.allowed:
                self.changed.add(name)
                return f"SET SESSION {quote_ident(name)} = {rest.strip()}"
        return text


def check_duckdb_flags(allow_paths: Sequence[str], memory_limit: str | None,
                       threads: int | None) -> str | None:
    """Why the operator's DuckDB flags cannot be used (the CLI exits 2), or None."""
    for p in allow_paths:
        if not os.path.isdir(p):
            return f"--allow-path {p}: not a directory"
    if threads is not None and threads < 1:
        return "--duckdb-threads must be at least 1"
    if memory_limit is not None:
        probe = duckdb.connect(":memory:")
        try:
            probe.execute(f"SET memory_limit = {literal(memory_limit)}")
        except duckdb.Error as exc:
            return f"--duckdb-memory-limit {memory_limit}: {str(exc).split(': ', 1)[-1]}"
        finally:
            probe.close()
    return None
