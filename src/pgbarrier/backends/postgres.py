"""The upstream PostgreSQL data plane: statements relayed to a real server.

A client session's upstream connection is opened here with libpq; unless it is TLS (or
``relay=False``) it is then spoken in raw protocol by :mod:`pgbarrier.backends.pg_relay`,
and the client's ordinary SQL is relayed as bytes (:mod:`pgbarrier.session.relay`).
:class:`PostgresSession` below is the libpq path kept for TLS upstreams (add
``sslmode=disable`` to ``--upstream`` on a trusted network to relay).

Rules this module keeps:

* Each pgbarrier database is the upstream database of the same name (the
  upstream DSN with its dbname replaced); ``ensure_database`` creates it there.
* A client's upstream session runs as the client's own user, as PgBouncer does by
  default: ``alice`` is ``alice`` upstream (current_user, session_user, privileges,
  ownership). Its libpq connection gets the client's user and only the password the
  client authenticated with (or none): the DSN's password, ``PGPASSWORD`` and the server
  process's ``.pgpass`` are never offered for another user's connection. A client whose
  user is the DSN's own user, and every client under ``force_user``
  (``--upstream-force-user``), connects with the DSN as it is (the old behaviour).
* pgbarrier's own work (CREATE/DROP DATABASE, the refresh pool) uses the DSN's role. A
  batch-refresh view's first snapshot and a streaming view are created on the pool
  under ``SET LOCAL ROLE <owner>`` (the creating client), so the client owns them and a
  query over a table it cannot read fails with the upstream's 42501, leaving nothing
  behind; PostgreSQL itself runs ``REFRESH MATERIALIZED VIEW`` with the owner's
  privileges.
* A start-up failure of the upstream (libpq gives its text, not its SQLSTATE) keeps the
  upstream's FATAL wording, DETAIL and HINT, with the SQLSTATE PostgreSQL sends for that
  message (``_STARTUP_FATALS``): 28000 for an unknown role, 53300 for too many
  connections, 28P01, 3D000...; a password the upstream wants and pgbarrier does not
  have is FATAL 28000 saying what to configure. Anything else (refused, unreachable, the
  upstream down) is FATAL 08006 ``the upstream PostgreSQL server is unavailable`` with
  libpq's reason as the DETAIL, at once (no retry, no wait: a client's own retry works the
  moment the upstream is back).
* One upstream connection per client session, in autocommit mode: psycopg never
  adds a BEGIN; the client's own BEGIN/COMMIT pass through like any statement.
* Statements are relayed, not re-interpreted (ARCHITECTURE practice 11): the SQL
  goes to the server unchanged through libpq's extended protocol (``$1``
  placeholders included), and rows come back as the server's own text bytes,
  with its command tag, column type OIDs and typmods (``Result.raw_format == 0``,
  ``Result.exact_tag``). No row is decoded into Python values.
* A client's upstream session logs in with the client's start-up settings (every one,
  ``options`` included, but those pgbarrier keeps itself: see
  :mod:`pgbarrier.session.settings`): ``application_name`` and ``client_encoding`` as
  libpq's own keywords, the rest as ``-c name=value`` in libpq's ``options`` after the
  DSN's own, other ``options`` switches as they came. So the upstream validates and
  applies them as PostgreSQL does (a bad one is its own FATAL, SQLSTATE recovered from
  its wording, ``_STARTUP_FATALS``), and what it reports with ParameterStatus
  (``server_version``, ``TimeZone``...) is what the client is told. A setting the client
  did not send is the upstream's own default. (libpq of the pgbarrier process still adds
  ``PGTZ``/``PGDATESTYLE``/``PGGEQO`` from its environment when set.) The refresh pool's
  sessions keep pgbarrier's fixed settings (``_SESSION_OPTIONS``).
* Upstream errors keep their SQLSTATE, severity, message, detail, hint and
  position; a lost upstream connection is a FATAL 08006. NOTICEs raised while a
  statement runs become the result's notices.
* ``describe`` prepares the unnamed statement upstream and describes it; it
  never executes. The next ``execute`` of the same text with the same parameter
  types reuses that statement. ``describe_statement`` prepares it with the
  client's parameter OIDs (0 where unspecified) and returns the upstream's
  inferred ones.
* Bind parameters are relayed as the client sent them (``WireParams``: bytes,
  per-value format, type OID — the client's, or the upstream's inferred one
  when the client left it 0), never decoded. Python values (from pgbarrier's
  own callers) travel in text with unspecified types.
* Rows come back in text unless the client asked binary for every column; then
  the upstream is asked for binary and its bytes are relayed
  (``Result.raw_format == 1``). For mixed formats the rows come in text and the
  session converts the binary columns.
* After ``SET``/``RESET``/``DISCARD``/``COMMIT``/``ROLLBACK`` the reported
  parameters the upstream announced (libpq keeps its ParameterStatus values)
  are put in ``Result.parameter_status``. A client that sent no ``application_name``
  gets the empty one PostgreSQL would give it, set right after connecting (one round
  trip: libpq never sends an empty one, and the upstream login is named
  ``pgbarrier/<user>`` meanwhile); ``RESET application_name`` then returns to
  ``pgbarrier/<user>``.
* ``interrupt`` may be called from any thread: while a statement runs it sends
  the upstream a cancel request, re-sent with back-off until the statement ends
  (a cancel that reaches the server before the statement does is dropped by
  PostgreSQL); the statement then fails with 57014. Idle, it does nothing.
* Batch-refresh views are real materialized views; refresh work runs on a small
  connection pool per database, whose sessions (PostgreSQL 14+) check every second that
  pgbarrier is still there (``client_connection_check_interval``), so a first snapshot or
  refresh of a pgbarrier killed meanwhile is aborted upstream instead of committing after
  recovery cleaned up. Work that gets no pooled connection within ``_POOL_QUICK_S`` opens
  a direct one for that call: while the upstream is down it fails at once with 08006
  (recorded as the run's error) instead of waiting out the pool's timeout, and it works
  again the moment the upstream is back, whatever the pool's reconnection back-off.
  A refresh is ``CONCURRENTLY`` when the view has
  a unique index PostgreSQL accepts for it, else plain; either way readers see
  the old rows or the new ones, never a half-done refresh.
* ``relations_read`` follows plain views through ``pg_depend``/``pg_rewrite`` with one
  recursive query (PostgreSQL's own record of what a view reads; nothing is parsed).
* Identifiers are quoted with ``psycopg.sql.Identifier``; values travel as
  parameters. View queries are SQL text by nature and are composed verbatim.
"""

from __future__ import annotations

import getpass
import logging
import os
import re
import select
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
from psycopg import pq
from psycopg import sql as pgsql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool, PoolTimeout

from pgbarrier.backends.base import (
    REPORTED_PARAMETERS,
    Backend,
    BackendSession,
    RefreshCancel,
    WireParams,
)
from pgbarrier.backends.upstream_session import UpstreamSession
from pgbarrier.sql.relnames import canonical
from pgbarrier.errors import FeatureNotSupported, Notice, PgError
from pgbarrier.result import Column, Result
from pgbarrier.sql.startup_params import StartupSettings, options_text
from pgbarrier.sql.dependencies import walk
from pgbarrier.pgproto.types import to_text

log = logging.getLogger(__name__)

#: the refresh pool's session settings (pgbarrier's own work, never a client's)
_SESSION_OPTIONS = "-c DateStyle=ISO,MDY -c IntervalStyle=postgres -c TimeZone=UTC"
_ENCODING = "utf-8"
#: back-off of re-sent cancel requests while an interrupted statement still runs
_CANCEL_FIRST_RETRY_S = 0.05
_CANCEL_MAX_RETRY_S = 1.0
#: how often a waiting execute wakes up to look for a pending cancel
_WAKE_S = 0.2
_CANCEL_TIMEOUT_S = 5.0
_POOL_TIMEOUT_S = 30.0
#: how long pgbarrier's own work waits for a pooled upstream connection before it opens a
#: direct one (:meth:`PostgresBackend._run`)
_POOL_QUICK_S = 0.25
#: PostgreSQL 14+: look for a vanished pgbarrier during long refresh-pool statements
_CHECK_CLIENT = "-c client_connection_check_interval=1000"

_FATAL_LOST = "08006"
#: libpq looks a password up in this file when it has none; the path can never exist
_NO_PASSFILE = "/dev/null/pgbarrier-no-passfile"
#: PostgreSQL 15's start-up FATALs (primary message → SQLSTATE). libpq reports a failed
#: start-up only as text (psycopg's ``diag`` is empty then), so the SQLSTATE the
#: upstream sent is recovered from its wording.
_STARTUP_FATALS = tuple((re.compile(pattern), state) for pattern, state in (
    (r'^role ".*" does not exist$', "28000"),
    (r'^role ".*" is not permitted to log in$', "28000"),
    (r"^no pg_hba\.conf entry for ", "28000"),
    (r"^pg_hba\.conf rejects connection for ", "28000"),
    (r'^password authentication failed for user ".*"$', "28P01"),
    (r'^too many connections for (role|database) ".*"$', "53300"),
    (r"^sorry, too many clients already$", "53300"),
    (r"^remaining connection slots are reserved for ", "53300"),
    (r'^database ".*" does not exist$', "3D000"),
    (r'^database ".*" is not currently accepting connections$', "55000"),
    (r'^permission denied for database ".*"$', "42501"),
    (r"^the database system is (starting up|shutting down|in recovery mode|"
     r"not yet accepting connections|not accepting connections)$", "57P03"),
    # a start-up setting the upstream refuses (guc.c, postgres.c)
    (r'^invalid value for parameter ".*": ".*"$', "22023"),
    (r'^parameter ".*" requires a (Boolean|numeric) value$', "22023"),
    (r' is outside the valid range for parameter ".*" \(.* \.\. .*\)$', "22023"),
    (r'^unrecognized configuration parameter ".*"$', "42704"),
    (r'^parameter ".*" cannot be changed( now| without restarting the server)?$', "55P02"),
    (r'^parameter ".*" cannot be set after connection start$', "55P02"),
    (r'^permission denied to set parameter ".*"$', "42501"),
    (r"^(-c |--).* requires a value$", "42601"),
    (r"^invalid command-line argument for server process: ", "42601"),
    (r'^conversion between .* and .* is not supported$', "0A000"),
))
_FATAL_LINE = re.compile(r"(?:FATAL|ERROR|PANIC):  (.*)")
_NO_PASSWORD = "fe_sendauth: no password supplied"

_E = pq.ExecStatus

#: (view, relation it reads, relation's name, relkind): from each input (view NULL), then
#: down every plain view's rewrite rule's dependencies; UNION's dedup ends the recursion
#: (the set of edges is finite). A name is pgbarrier's (:func:`_canonical`): bare in
#: ``public``, else qualified.
_VIEW_EDGES = """
WITH RECURSIVE edge(parent, child) AS (
    SELECT NULL::oid, to_regclass(i.name)::oid
    FROM unnest(%s::text[]) AS i(name) WHERE to_regclass(i.name) IS NOT NULL
  UNION
    SELECT e.child, d.refobjid
    FROM edge e
    JOIN pg_class v ON v.oid = e.child AND v.relkind = 'v'
    JOIN pg_rewrite r ON r.ev_class = v.oid
    JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
                    AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> v.oid
)
SELECT DISTINCT e.parent::bigint, e.child::bigint,
       CASE WHEN n.nspname = 'public' THEN c.relname::text
            ELSE n.nspname || '.' || c.relname END,
       c.relkind::text
FROM edge e JOIN pg_class c ON c.oid = e.child JOIN pg_namespace n ON n.oid = c.relnamespace
"""
_F = pq.DiagnosticField


#: pgbarrier's name of a relation upstream: bare in ``public`` (the refresh pool's
#: schema), else ``schema.relname`` (:mod:`pgbarrier.sql.relnames` decides it)
_canonical = canonical


def _text_array(values: list[str]) -> str:
    """A ``text[]`` literal of ``values`` (for a text-format parameter)."""
    quoted = ('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values)
    return "{" + ",".join(quoted) + "}"


def _session_rows(session: BackendSession, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    """Rows of a catalog query run on the client's ``session``, as text."""
    res = session.execute(sql, params)
    return [tuple(bytes(v).decode(_ENCODING) if isinstance(v, (bytes, bytearray, memoryview))
                  else v for v in row) for row in res.rows()]


_CHECK_CLIENT_GUC = "client_connection_check_interval"


def _check_client_during(session: BackendSession) -> Callable[[], None]:
    """Make the client's ``session`` check for its client (pgbarrier) every second, as the
    refresh pool's sessions do (``_CHECK_CLIENT``): a first snapshot that runs there while
    pgbarrier is killed (-9) is aborted by the upstream instead of committing an orphan after
    recovery cleaned up. Returns what puts the client's own value back (call it after the
    statement, success or failure), so the client sees no change. Nothing on a PostgreSQL
    before 14 (no such setting). A failed restore is only logged: its cause (the session is
    lost, or an aborted transaction: a transaction block, or the implicit one of the
    client's open extended-protocol batch, where the relay sends nothing until the client's
    Sync) is the statement's own error, and PostgreSQL rolls the SET back with that
    transaction anyway."""
    rows = _session_rows(session, "SELECT pg_catalog.current_setting($1, true)",
                         [_CHECK_CLIENT_GUC])
    old = rows[0][0] if rows else None
    if old is None:  # PostgreSQL < 14
        return lambda: None
    _session_rows(session, "SELECT pg_catalog.set_config($1, '1000', false)", [_CHECK_CLIENT_GUC])

    def restore() -> None:
        try:
            _session_rows(session, "SELECT pg_catalog.set_config($1, $2, false)",
                          [_CHECK_CLIENT_GUC, old])
        except PgError as err:
            log.debug("could not restore %s of a client session: %s", _CHECK_CLIENT_GUC, err)
    return restore


def _ident(name: str) -> pgsql.Identifier:
    """A view name as pgbarrier keeps it (``v`` or ``schema.v``), quoted part by part."""
    return pgsql.Identifier(*name.split("."))


# --------------------------------------------------------------------------- errors


def _text(raw: bytes | None) -> str | None:
    return None if raw is None else raw.decode(_ENCODING, "replace")


def _make_error(sqlstate: str, message: str, *, severity: str | None = None,
                detail: str | None = None, hint: str | None = None,
                position: str | int | None = None) -> PgError:
    pos = int(position) if position not in (None, "") else None
    cls = PgError.by_sqlstate(sqlstate)
    return cls(message, detail=detail, hint=hint, position=pos, sqlstate=sqlstate,
               severity=severity or "ERROR")


def _lost(message: str) -> PgError:
    return _make_error(_FATAL_LOST, message.strip() or "upstream connection lost",
                       severity="FATAL")


def _error_from_result(res: pq.abc.PGresult, pgconn: pq.abc.PGconn | None = None) -> PgError:
    """A failed PGresult as a PgError with the upstream's own fields."""
    state = _text(res.error_field(_F.SQLSTATE))
    if not state:
        # libpq's own failure (no server message): the connection is gone
        msg = _text(res.error_message) or (pgconn.get_error_message() if pgconn else "")
        return _lost(msg or "server closed the connection unexpectedly")
    err = _make_error(
        state,
        _text(res.error_field(_F.MESSAGE_PRIMARY)) or "",
        severity=_text(res.error_field(_F.SEVERITY_NONLOCALIZED))
        or _text(res.error_field(_F.SEVERITY)),
        detail=_text(res.error_field(_F.MESSAGE_DETAIL)),
        hint=_text(res.error_field(_F.MESSAGE_HINT)),
        position=_text(res.error_field(_F.STATEMENT_POSITION)),
    )
    err.fields = _more_fields(res)
    return err


def _more_fields(res: pq.abc.PGresult) -> dict[str, str]:
    """The error's fields beyond PgError's attributes (CONTEXT, names, internal query...)."""
    out = {}
    for code, field in _MORE_FIELDS:
        value = _text(res.error_field(field))
        if value is not None:
            out[code] = value
    return out


#: ErrorResponse fields beyond PgError's own attributes, with libpq's names for them
_MORE_FIELDS = (("p", _F.INTERNAL_POSITION), ("q", _F.INTERNAL_QUERY), ("W", _F.CONTEXT),
                ("s", _F.SCHEMA_NAME), ("t", _F.TABLE_NAME), ("c", _F.COLUMN_NAME),
                ("d", _F.DATATYPE_NAME), ("n", _F.CONSTRAINT_NAME), ("F", _F.SOURCE_FILE),
                ("L", _F.SOURCE_LINE), ("R", _F.SOURCE_FUNCTION))


def _error_from_psycopg(exc: psycopg.Error) -> PgError:
    """A psycopg exception as a PgError with the upstream's own fields."""
    diag = exc.diag
    if not diag.sqlstate:
        if isinstance(exc, psycopg.OperationalError):
            return _connect_error(exc)
        return _make_error("XX000", str(exc))
    err = _make_error(diag.sqlstate, diag.message_primary or str(exc),
                      severity=diag.severity_nonlocalized or diag.severity,
                      detail=diag.message_detail, hint=diag.message_hint,
                      position=diag.statement_position)
    if exc.pgresult is not None:
        err.fields = _more_fields(exc.pgresult)
    return err


def _connect_error(exc: psycopg.OperationalError, user: str | None = None) -> PgError:
    """A failed upstream start-up as the client should see it (see the module rules)."""
    text = str(exc)
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _FATAL_LINE.search(line)
        if m is None:
            continue
        message = m.group(1).strip()
        for pattern, state in _STARTUP_FATALS:
            if pattern.search(message):
                fields = {}
                for extra in lines[i + 1:i + 3]:
                    key, sep, value = extra.partition(":  ")
                    if sep and key in ("DETAIL", "HINT"):
                        fields[key.lower()] = value.strip()
                return _make_error(state, message, severity="FATAL", **fields)
        break
    if user is not None and _NO_PASSWORD in text:
        log.warning('the upstream PostgreSQL asks for a password for user "%s", and pgbarrier '
                    "does not know it (a --users-file holds only SCRAM verifiers)", user)
        return _make_error(
            "28000", f'the upstream PostgreSQL asks for a password for user "{user}", and '
            "pgbarrier has none to give it", severity="FATAL",
            detail="pgbarrier passes on the password a client authenticated with only when it "
                   "knows it (--password-file, or --auth-method password); a --users-file "
                   "holds SCRAM verifiers, not passwords.",
            hint="Let the upstream trust pgbarrier's host for this user (pg_hba.conf), list "
                 "the user in --password-file, or connect every session as the --upstream "
                 "user with --upstream-force-user.")
    return _unavailable(text)


def _unavailable(text: str) -> PgError:
    """No answer from the upstream (refused, unreachable, closed during start-up): FATAL
    08006 ``the upstream PostgreSQL server is unavailable``, libpq's reason as the DETAIL
    and its hint (``Is the server running…``) as the HINT."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if lines and lines[0].startswith("connection failed: "):  # psycopg's prefix
        lines[0] = lines[0][len("connection failed: "):]
    hint = None
    if len(lines) > 1 and lines[-1].endswith("?"):
        hint = lines.pop()
    return _make_error(_FATAL_LOST, "the upstream PostgreSQL server is unavailable",
                       severity="FATAL", detail=" ".join(lines) or None, hint=hint)


def _notice(diag: psycopg.errors.Diagnostic) -> Notice:
    return Notice(diag.message_primary or "", detail=diag.message_detail,
                  hint=diag.message_hint, sqlstate=diag.sqlstate or "00000",
                  severity=diag.severity_nonlocalized or diag.severity or "NOTICE")


def _columns(res: pq.abc.PGresult) -> list[Column]:
    return [Column(_text(res.fname(i)) or "", res.ftype(i), res.fmod(i), res.ftable(i),
                   res.ftablecol(i))
            for i in range(res.nfields)]


def _raw_rows(res: pq.abc.PGresult) -> Iterator[tuple[bytes | None, ...]]:
    get = res.get_value
    cols = range(res.nfields)
    for r in range(res.ntuples):
        yield tuple(get(r, c) for c in cols)


def _encode_params(params: list[Any] | None) -> list[bytes | None] | None:
    if not params:
        return None
    return [None if v is None else to_text(v).encode(_ENCODING) for v in params]


#: the run-time parameters PostgreSQL reports with ParameterStatus (GUC_REPORT)
_REPORTED = tuple(name.encode() for name in REPORTED_PARAMETERS)
#: command tags after which reported parameters may have changed
_MAY_CHANGE_PARAMS = ("SET", "RESET", "DISCARD", "COMMIT", "ROLLBACK")


def _all_binary(result_formats: tuple[int, ...]) -> bool:
    return bool(result_formats) and all(f == 1 for f in result_formats)


# --------------------------------------------------------------------------- session


class PostgresSession(UpstreamSession):
    """One client's upstream connection; rows relayed as the server's text or binary bytes."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        super().__init__()
        self._conn = conn
        self._pg = conn.pgconn
        self._notices: list[Notice] = []
        conn.add_notice_handler(self._on_notice)
        #: SQL text and parameter OIDs of the upstream unnamed prepared statement (from describe)
        self._prepared: tuple[bytes, tuple[int, ...]] | None = None
        self._lock = threading.Lock()
        self._busy = False
        self._cancel_wanted = False
        self._poll = select.poll()
        self._poll.register(self._pg.socket, select.POLLIN)

    def _on_notice(self, diag: psycopg.errors.Diagnostic) -> None:
        self._notices.append(_notice(diag))

    # ------------------------------------------------------------------ execute

    def apply_startup(self, startup: StartupSettings) -> None:
        name = startup.get("application_name") or ""
        current = self._pg.parameter_status(b"application_name")
        if current is None or current.decode(_ENCODING, "replace") != name:
            res = self._pg.exec_params(b"SELECT pg_catalog.set_config('application_name', $1, false)",
                                       [name.encode(_ENCODING)], None, None, 0)
            if res.status != _E.TUPLES_OK:
                raise _error_from_result(res, self._pg)

    def execute(self, sql: str, params: list[Any] | WireParams | None = None,
                result_formats: tuple[int, ...] = ()) -> Result:
        query = sql.encode(_ENCODING)
        oids: tuple[int, ...] = ()
        formats: tuple[int, ...] | None = None
        if isinstance(params, WireParams):
            values: list[bytes | None] | None = list(params.values) or None
            oids = params.oids
            formats = params.formats if any(params.formats) else None
        else:
            values = _encode_params(params)
        result_format = 1 if _all_binary(result_formats) else 0
        self._notices = notices = []
        pg = self._pg
        with self._lock:
            self._busy, self._cancel_wanted = True, False
        try:
            try:
                if self._prepared is not None and self._prepared[0] == query \
                        and (not oids or self._prepared[1] == tuple(oids)):
                    pg.send_query_prepared(b"", values, formats, result_format)
                else:
                    self._prepared = None  # the extended protocol replaces the unnamed statement
                    pg.send_query_params(query, values, list(oids) if oids else None, formats,
                                         result_format)
                results, copy = self._collect()
            except psycopg.OperationalError as exc:
                raise _lost(str(exc)) from None
        finally:
            with self._lock:
                self._busy = False
        if copy:  # checked first: the upstream reports the refused COPY FROM STDIN as 57014
            raise FeatureNotSupported(
                "COPY to or from the client is not supported with an upstream PostgreSQL")
        for res in results:
            if res.status in (_E.FATAL_ERROR, _E.NONFATAL_ERROR):
                raise _error_from_result(res, pg)
        if not results:
            raise _lost(pg.get_error_message())
        res = results[-1]
        tag = _text(res.command_status) or ""
        if res.status == _E.TUPLES_OK:
            result = Result(tag=tag, columns=_columns(res), row_source=_raw_rows(res),
                            notices=notices, raw_format=result_format, exact_tag=True)
        else:
            result = Result(tag=tag, notices=notices, raw_format=0, exact_tag=True)
        if tag.startswith(_MAY_CHANGE_PARAMS):
            result.parameter_status = self.reported_parameters()
        return result

    def reported_parameters(self) -> dict[str, str]:
        """The upstream's current values of the parameters PostgreSQL reports."""
        out = {}
        for name in _REPORTED:
            value = self._pg.parameter_status(name)
            if value is not None:
                out[name.decode()] = value.decode(_ENCODING, "replace")
        return out

    def _collect(self) -> tuple[list[pq.abc.PGresult], bool]:
        """Every result of the statement just sent; True when it tried COPY with the client."""
        pg = self._pg
        results: list[pq.abc.PGresult] = []
        copy = False
        while True:
            if pg.is_busy():
                self._wait()
                pg.consume_input()
                continue
            res = pg.get_result()
            if res is None:
                return results, copy
            status = res.status
            if status == _E.COPY_OUT:
                copy = True
                self._drain_copy_out()
            elif status in (_E.COPY_IN, _E.COPY_BOTH):
                copy = True
                pg.put_copy_end(b"COPY from the client is not supported by pgbarrier")
            else:
                results.append(res)

    def _drain_copy_out(self) -> None:
        pg = self._pg
        while True:
            n, _ = pg.get_copy_data(1)
            if n > 0:
                continue
            if n < 0:
                return
            self._wait()
            pg.consume_input()

    def _wait(self) -> None:
        """Wait until the upstream socket is readable, re-sending a wanted cancel meanwhile."""
        retry = _CANCEL_FIRST_RETRY_S
        next_cancel: float | None = None
        while True:
            timeout = _WAKE_S if next_cancel is None else max(0.0, next_cancel - time.monotonic())
            if self._poll.poll(timeout * 1000):
                return
            if self._cancel_wanted:
                now = time.monotonic()
                if next_cancel is None:
                    next_cancel = now + retry
                elif now >= next_cancel:
                    self._send_cancel()
                    retry = min(retry * 2, _CANCEL_MAX_RETRY_S)
                    next_cancel = time.monotonic() + retry

    # ------------------------------------------------------------------ describe

    def _prepare(self, sql: str, param_oids: tuple[int, ...] = ()) -> pq.abc.PGresult:
        query = sql.encode(_ENCODING)
        self._prepared = None
        try:
            res = self._pg.prepare(b"", query, list(param_oids) if param_oids else None)
            if res.status != _E.COMMAND_OK:
                raise _error_from_result(res, self._pg)
            desc = self._pg.describe_prepared(b"")
            if desc.status != _E.COMMAND_OK:
                raise _error_from_result(desc, self._pg)
        except psycopg.OperationalError as exc:
            raise _lost(str(exc)) from None
        self._prepared = (query, tuple(desc.param_type(i) for i in range(desc.nparams)))
        return desc

    def describe(self, sql: str, params: list[Any] | WireParams | None = None
                 ) -> list[Column] | None:
        """Row shape from the upstream's own Describe of the prepared statement; nothing runs."""
        oids = params.oids if isinstance(params, WireParams) else ()
        desc = self._prepare(sql, oids)
        return _columns(desc) if desc.nfields else None

    def describe_params(self, sql: str) -> list[int]:
        """Parameter type OIDs the upstream infers for ``sql`` (``$1``...), without running it."""
        desc = self._prepare(sql)
        return [desc.param_type(i) for i in range(desc.nparams)]

    def describe_statement(self, sql: str, param_oids: tuple[int, ...] = ()
                           ) -> tuple[list[int], list[Column] | None]:
        """The upstream's parameter types and row shape of ``sql`` (one Parse + Describe)."""
        desc = self._prepare(sql, param_oids)
        return ([desc.param_type(i) for i in range(desc.nparams)],
                _columns(desc) if desc.nfields else None)

    # ------------------------------------------------------------------ cancel, close

    def _send_cancel(self) -> None:
        try:
            self._conn.cancel_safe(timeout=_CANCEL_TIMEOUT_S)
        except Exception as exc:  # a failed cancel must never break the caller
            log.warning("upstream cancel request failed: %s", exc)

    def interrupt(self) -> None:
        with self._lock:
            if not self._busy:
                return
            self._cancel_wanted = True
        self._send_cancel()

    def close(self) -> None:
        try:
            self._conn.close()
        except psycopg.Error:
            pass


# --------------------------------------------------------------------------- backend


def admin_conninfo(dsn: str) -> str:
    """What pgbarrier's own upstream work connects to: the DSN's own database, or
    ``postgres`` when it names none."""
    if conninfo_to_dict(dsn).get("dbname"):
        return dsn
    return make_conninfo(dsn, dbname="postgres")


class PostgresBackend(Backend):
    """An upstream PostgreSQL server; pgbarrier database ``d`` is upstream database ``d``."""

    dialect = "postgres"

    def __init__(self, upstream_dsn: str, *, pool_size: int = 4, relay: bool = True,
                 force_user: bool = False) -> None:
        super().__init__()
        self.upstream_dsn = upstream_dsn
        #: True: every session connects as the DSN's user (``--upstream-force-user``)
        self.force_user = force_user
        #: the role the DSN connects as (libpq's own default when it names none)
        self.dsn_user = (conninfo_to_dict(upstream_dsn).get("user") or os.environ.get("PGUSER")
                         or getpass.getuser())
        #: False: every session uses libpq (the old path), even on a plain-TCP upstream
        self.relay = relay
        self._told_tls = False
        self.pool_size = pool_size
        self._pools: dict[str, ConnectionPool] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ connections

    def conninfo(self, database: str, application_name: str = "pgbarrier") -> str:
        """The upstream DSN for ``database``, with pgbarrier's session settings."""
        own = conninfo_to_dict(self.upstream_dsn).get("options") or ""
        options = f"{_SESSION_OPTIONS} {own}".strip()
        return make_conninfo(self.upstream_dsn, dbname=database, client_encoding="UTF8",
                             options=options, fallback_application_name=application_name)

    def _admin_conninfo(self) -> str:
        return admin_conninfo(self.upstream_dsn)

    def _admin(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(self._admin_conninfo(), autocommit=True)
        except psycopg.OperationalError as exc:
            raise _connect_error(exc) from None

    def _acts_as_dsn(self, user: str | None) -> bool:
        """Whether ``user``'s work runs as the DSN's role anyway (no check, no SET ROLE)."""
        return user is None or self.force_user or user == self.dsn_user

    def has_database(self, name: str) -> bool:
        with self._admin() as conn:
            try:
                return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                                    [name]).fetchone() is not None
            except psycopg.Error as exc:
                raise _error_from_psycopg(exc) from None

    def ensure_database(self, name: str, owner: str | None = None, new: bool = False) -> None:
        with self._admin() as conn:
            try:
                exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                                      [name]).fetchone()
                if exists and new:
                    raise PgError(
                        f'database "{name}" already exists', sqlstate="42P04",
                        detail="It exists on the upstream PostgreSQL, but pgbarrier does not "
                               "serve it.",
                        hint=f"To serve it, start pgbarrier with --adopt-database {name}; "
                             "or choose another name.")
                if not exists:
                    stmt = pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(name))
                    if not self._acts_as_dsn(owner):
                        stmt = pgsql.SQL("{} OWNER {}").format(stmt, pgsql.Identifier(owner))
                    conn.execute(stmt)
            except (psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
                pass  # created concurrently
            except psycopg.Error as exc:
                raise _error_from_psycopg(exc) from None

    def drop_database(self, name: str) -> None:
        """Drop upstream database ``name`` (connections to it are terminated)."""
        with self._lock:
            pool = self._pools.pop(name, None)
        if pool is not None:
            pool.close()
        with self._admin() as conn:
            try:
                conn.execute(pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                    pgsql.Identifier(name)))
            except psycopg.Error as exc:
                raise _error_from_psycopg(exc) from None

    def rename_database(self, old: str, new: str, session: BackendSession | None = None) -> None:
        """PostgreSQL's own rename, in the client's ``session`` (its rules: owner and
        CREATEDB, nobody else connected), after pgbarrier's idle connections to ``old``
        are closed so they are not the ones in the way."""
        with self._lock:
            pool = self._pools.pop(old, None)
        if pool is not None:
            pool.close()
        sql = pgsql.SQL("ALTER DATABASE {} RENAME TO {}").format(
            pgsql.Identifier(old), pgsql.Identifier(new)).as_string(None)
        if session is not None:
            session.execute(sql)
            return
        with self._admin() as conn:
            try:
                conn.execute(sql)
            except psycopg.Error as exc:
                raise _error_from_psycopg(exc) from None

    def create_database_in_session(self, session: BackendSession, name: str, options: str,
                                   options_at: int) -> None:
        """PostgreSQL's own CREATE DATABASE with the client's options, as the client's
        current role (PostgreSQL checks OWNER membership, TEMPLATE rights and the rest);
        an error's position is moved back into the client's text."""
        head = "CREATE DATABASE " + _ident(name).as_string(None) + " "
        try:
            session.execute(head + options)
        except PgError as err:
            if err.position is not None:
                err.position = err.position - len(head) + options_at - 1 \
                    if err.position > len(head) else None
            raise

    def current_role(self, session: BackendSession) -> str | None:
        rows = _session_rows(session, "SELECT current_user", [])
        return rows[0][0] if rows else None

    def require_database_right(self, action: str, name: str, user: str,
                               session: BackendSession | None = None) -> None:
        """PostgreSQL's rules, asked of the upstream's catalog: CREATE DATABASE needs
        superuser or CREATEDB; ALTER (PAUSE/RESUME) and DROP DATABASE need ownership
        (``has_privs_of_role`` of the owner). With the client's ``session``, asked there of
        its ``current_user`` (what PostgreSQL checks, after SET ROLE or SET SESSION
        AUTHORIZATION); without one, of ``user``."""
        if session is not None:
            if action == "create":
                rows = _session_rows(session, "SELECT r.rolsuper OR r.rolcreatedb FROM "
                                     "pg_catalog.pg_roles r WHERE r.rolname = current_user", [])
                allowed = bool(rows) and rows[0][0] in ("t", True)
                message = "permission denied to create database"
            else:
                rows = _session_rows(session, "SELECT pg_catalog.pg_has_role(current_user, "
                                     "d.datdba, 'USAGE') FROM pg_catalog.pg_database d "
                                     "WHERE d.datname = $1", [name])
                allowed = not rows or rows[0][0] in ("t", True)  # missing: the caller's 3D000
                message = f"must be owner of database {name}"
            if not allowed:
                raise PgError(message, sqlstate="42501")
            return
        if self._acts_as_dsn(user):
            return
        with self._admin() as conn:
            try:
                if action == "create":
                    row = conn.execute("SELECT rolsuper OR rolcreatedb FROM pg_roles "
                                       "WHERE rolname = %s", [user]).fetchone()
                    allowed = bool(row and row[0])
                    message = "permission denied to create database"
                else:
                    row = conn.execute("SELECT pg_has_role(%s, datdba, 'USAGE') FROM pg_database "
                                       "WHERE datname = %s", [user, name]).fetchone()
                    allowed = row is None or bool(row[0])  # a missing one is the caller's 3D000
                    message = f"must be owner of database {name}"
            except psycopg.Error as exc:
                raise _error_from_psycopg(exc) from None
        if not allowed:
            raise PgError(message, sqlstate="42501")

    def require_owner(self, database: str, kind: str, name: str, user: str) -> None:
        """PostgreSQL's ownership check (``has_privs_of_role`` of the relation's owner)."""
        if self._acts_as_dsn(user):
            return

        def go(conn: psycopg.Connection[Any]) -> bool:
            ident = _ident(name).as_string(conn)
            row = conn.execute("SELECT pg_has_role(%s, c.relowner, 'USAGE') FROM pg_class c "
                               "WHERE c.oid = to_regclass(%s)", [user, ident]).fetchone()
            return row is None or bool(row[0])  # gone meanwhile: the caller's own error
        if not self._call(database, go):
            raise PgError(f"must be owner of {kind} {name}", sqlstate="42501")

    def session_conninfo(self, database: str, user: str, password: str | None = None,
                         startup: StartupSettings | None = None) -> str:
        """The DSN for ``user``'s session: as ``user`` with ``password`` (none offered when
        it is None: neither the DSN's, nor PGPASSWORD, nor .pgpass), or the DSN as it is
        for the DSN's own user and under ``force_user``; with the client's ``startup``
        settings (module rules)."""
        startup = startup or StartupSettings()
        keywords: dict[str, str] = {}
        rest: list[tuple[str, str]] = []
        for name, value in startup.items():
            low = name.lower()
            if low == "application_name" and value:
                keywords["application_name"] = value
            elif low == "client_encoding":
                keywords["client_encoding"] = value
            elif low != "application_name":
                rest.append((name, value))
        own = conninfo_to_dict(self.upstream_dsn).get("options") or ""
        options = f"{own} {options_text(rest, startup.switches)}".strip()
        info = make_conninfo(self.upstream_dsn, dbname=database, options=options or None,
                             fallback_application_name=f"pgbarrier/{user}", **keywords)
        if self.force_user or user == self.dsn_user:
            return info
        return make_conninfo(info, user=user, password=password or "", passfile=_NO_PASSFILE)

    def connect(self, database: str, user: str, password: str | None = None,
                startup: StartupSettings | None = None) -> BackendSession:
        """The client's upstream connection, as ``user`` with the client's ``startup``
        settings (see :meth:`session_conninfo`): spoken in raw protocol (the relay,
        :mod:`pgbarrier.backends.pg_relay`) unless it is TLS or ``relay`` is off, then
        through libpq (:class:`PostgresSession`)."""
        try:
            conn = psycopg.connect(self.session_conninfo(database, user, password, startup),
                                   autocommit=True)
        except psycopg.OperationalError as exc:
            raise _connect_error(exc, user) from None
        if conn.pgconn.ssl_in_use and self.relay and not self._told_tls:
            self._told_tls = True
            log.info("the upstream connection uses TLS: statements go through libpq, not the "
                     "byte relay (sslmode=disable in --upstream relays them)")
        if self.relay and not conn.pgconn.ssl_in_use:
            from pgbarrier.backends.pg_relay import RelaySession

            try:
                return RelaySession(conn)
            except BaseException:
                conn.close()
                raise
        return PostgresSession(conn)

    def _pool(self, database: str) -> ConnectionPool:
        with self._lock:
            pool = self._pools.get(database)
            if pool is not None:
                return pool
            info = self.conninfo(database, "pgbarrier/refresh")
            # one direct connection first: a missing database is a 3D000 now, not a pool timeout
            try:
                with psycopg.connect(info) as first:
                    version = first.info.server_version
            except psycopg.OperationalError as exc:
                raise _connect_error(exc) from None
            if version >= 140000:
                # a first snapshot or refresh whose pgbarrier died (kill -9) is aborted by the
                # upstream within a second, instead of committing after recovery cleaned up
                own = conninfo_to_dict(info).get("options") or ""
                info = make_conninfo(info, options=f"{own} {_CHECK_CLIENT}".strip())
            pool = ConnectionPool(info, min_size=1, max_size=max(1, self.pool_size),
                                  kwargs={"autocommit": True}, timeout=_POOL_TIMEOUT_S,
                                  check=ConnectionPool.check_connection,
                                  name=f"pgbarrier-{database}", open=False)
            pool.open()
            self._pools[database] = pool
            return pool

    def _run(self, database: str, fn: Any) -> Any:
        pool = self._pool(database)
        try:
            conn = pool.getconn(timeout=_POOL_QUICK_S)
        except PoolTimeout:
            # none at hand: every pooled one busy, or the pool still reconnecting (with its
            # own back-off of up to seconds) after the upstream went away. A direct
            # connection answers at once: the upstream's refusal (08006), or a session
            # for this one call, so work resumes the moment the upstream is back.
            try:
                direct = psycopg.connect(pool.conninfo, autocommit=True)
            except psycopg.OperationalError as exc:
                raise _connect_error(exc) from None
            with direct:
                return fn(direct)
        try:
            with conn:  # what ``pool.connection()`` does: a pooled one is not closed here
                return fn(conn)
        finally:
            pool.putconn(conn)

    def notify(self, database: str, channel: str, payload: str) -> None:
        """pgbarrier's events go through PostgreSQL's own NOTIFY in ``database``, so LISTEN,
        UNLISTEN and transactions are PostgreSQL's. On a refresh-pool connection when the
        database has a pool (it runs refreshes), else on a connection of its own for this
        one event (a database that is only paused and resumed keeps no pool for it)."""
        def send(conn: psycopg.Connection[Any]) -> None:
            conn.execute("SELECT pg_notify(%s, %s)", [channel, payload])

        with self._lock:
            pooled = database in self._pools
        if pooled:
            self._run(database, send)
            return
        try:
            with psycopg.connect(self.conninfo(database, "pgbarrier/events"),
                                 autocommit=True) as conn:
                send(conn)
        except psycopg.OperationalError as exc:
            raise _connect_error(exc) from None

    # ------------------------------------------------------------------ catalog

    def relation_exists(self, database: str, name: str) -> bool:
        def go(conn: psycopg.Connection[Any]) -> bool:
            ident = _ident(name).as_string(conn)
            row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", [ident]).fetchone()
            return bool(row and row[0])
        return self._call(database, go)

    def relations_read(self, database: str, inputs: frozenset[str],
                       session: BackendSession | None = None) -> list[tuple[str, ...]]:
        """Plain views followed through PostgreSQL's own record of what a view reads: the
        ``pg_depend`` rows of its ``pg_rewrite`` rule (a recursive query, no parsing).
        With ``session`` (the client's) the names resolve with its search_path, and each
        input that exists is reported too, as a chain of one (pgbarrier's name for it)."""
        names = [".".join(pgsql.Identifier(p).as_string(None) for p in n.split("."))
                 for n in sorted(inputs)]
        if session is not None:
            rows = [(None if a is None else int(a), int(b), c, d) for a, b, c, d in _session_rows(
                session, _VIEW_EDGES.replace("%s", "$1"), [_text_array(names)])]
        else:
            def go(conn: psycopg.Connection[Any]) -> list[tuple[Any, ...]]:
                return conn.execute(_VIEW_EDGES, [names]).fetchall()
            try:
                rows = self._call(database, go)
            except PgError:  # a name to_regclass refuses: describe_query answers for it
                return []
        shown = {oid: name for _, oid, name, _ in rows}
        is_view = {oid: kind == "v" for _, oid, _, kind in rows}
        reads: dict[int, list[int]] = {}
        starts = []
        for parent, oid, _, _ in rows:
            if parent is None:
                starts.append(oid)
            elif oid != parent:
                reads.setdefault(parent, []).append(oid)
        paths = walk(starts, lambda o: sorted(reads.get(o, ())) if is_view.get(o) else None)
        found = [tuple(shown[o] for o in path) for path in paths]
        if session is not None:
            found[:0] = [(shown[o],) for o in sorted(set(starts))]
        return found

    def alter_view_name(self, session: BackendSession, name: str, action: str,
                        target: str) -> None:
        """``ALTER MATERIALIZED VIEW <name> RENAME TO / SET SCHEMA <target>`` of the view
        pgbarrier names ``name`` (:func:`_canonical`), in the client's ``session``."""
        schema, _, rel = name.rpartition(".")
        assert action in ("RENAME TO", "SET SCHEMA")
        session.execute(pgsql.SQL("ALTER MATERIALIZED VIEW {} " + action + " {}").format(
            pgsql.Identifier(schema or "public", rel), pgsql.Identifier(target)).as_string(None))

    @staticmethod
    def name_after(name: str, action: str, target: str) -> str:
        """pgbarrier's name for view ``name`` after ``RENAME TO`` / ``SET SCHEMA target``."""
        schema, _, rel = name.rpartition(".")
        if action == "RENAME TO":
            return _canonical(schema or "public", target)
        return _canonical(target, rel)

    def relation_name(self, session: BackendSession, name: str) -> str | None:
        """pgbarrier's name (:func:`_canonical`) of the relation ``name`` means in the
        client's ``session`` (its search_path), or None when there is none."""
        ident = ".".join(pgsql.Identifier(p).as_string(None) for p in name.split("."))
        try:
            rows = _session_rows(session, "SELECT n.nspname, c.relname FROM pg_catalog.pg_class c"
                                 " JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
                                 " WHERE c.oid = pg_catalog.to_regclass($1)", [ident])
        except PgError as err:
            if err.sqlstate == "25P02":
                raise
            return None  # a name to_regclass refuses: the statement's own error follows
        return _canonical(rows[0][0], rows[0][1]) if rows else None

    def creation_name(self, session: BackendSession, name: str) -> str:
        """pgbarrier's name for a view the client's ``session`` creates as ``name``: an
        unqualified name goes to the session's ``current_schema()`` (PostgreSQL's rule);
        with none, PostgreSQL's 3F000."""
        if "." in name:
            schema, _, rel = name.rpartition(".")
            return _canonical(schema, rel)
        rows = _session_rows(session, "SELECT pg_catalog.current_schema()", [])
        schema = rows[0][0] if rows else None
        if schema is None:
            raise PgError("no schema has been selected to create in", sqlstate="3F000")
        return _canonical(schema, name)

    def describe_view_query(self, database: str, query: str,
                            session: BackendSession | None = None) -> list[Column] | None:
        """In the client's own upstream session when there is one (its search_path, its
        privileges), as the view will be created there."""
        if session is not None:
            return session.describe(query)
        return self.describe_query(database, query)

    def describe_query(self, database: str, query: str) -> list[Column]:
        def go(conn: psycopg.Connection[Any]) -> list[Column]:
            pg = conn.pgconn
            res = pg.prepare(b"", query.encode(_ENCODING), None)
            if res.status != _E.COMMAND_OK:
                raise _error_from_result(res, pg)
            desc = pg.describe_prepared(b"")
            if desc.status != _E.COMMAND_OK:
                raise _error_from_result(desc, pg)
            return _columns(desc)
        return self._call(database, go)

    # ------------------------------------------------------------------ views

    @staticmethod
    def _head(keyword: str, name: str, columns: tuple[str, ...] | None,
              storage: tuple[tuple[str, str], ...] = ()) -> pgsql.Composed:
        head = pgsql.SQL(keyword + " {}").format(_ident(name))
        if columns:
            head = pgsql.SQL("{} ({})").format(
                head, pgsql.SQL(", ").join(pgsql.Identifier(c) for c in columns))
        # PostgreSQL's clause order: USING, WITH (...), TABLESPACE; the texts are the client's
        using = [text for kind, text in storage if kind == "USING"]
        options = [text for kind, text in storage if kind == "WITH"]
        space = [text for kind, text in storage if kind == "TABLESPACE"]
        tail = " ".join(using + ([f"WITH ({', '.join(options)})"] if options else []) + space)
        if tail:
            head = pgsql.SQL("{} {}").format(head, pgsql.SQL(tail))  # type: ignore[arg-type]
        return head

    @staticmethod
    def _ddl_with_query(conn: psycopg.Connection[Any], head: pgsql.Composable, query: str,
                        tail: str = "") -> pq.abc.PGresult:
        """Run ``head AS query tail`` as one statement (extended protocol: a ``;`` inside
        ``query`` cannot smuggle a second statement); error positions become relative
        to ``query``."""
        prefix = head.as_string(conn) + " AS "
        pg = conn.pgconn
        res = pg.exec_params((prefix + query + tail).encode(_ENCODING), None, None, None, 0)
        if res.status != _E.COMMAND_OK:
            err = _error_from_result(res, pg)
            if err.position is not None:
                err.position -= len(prefix)
                if not 1 <= err.position <= len(query):
                    err.position = None
            raise err
        return res

    def _as_owner(self, conn: psycopg.Connection[Any], owner: str | None, fn: Any) -> Any:
        """``fn(conn)`` in one transaction, under ``SET LOCAL ROLE owner`` when given: what
        it creates belongs to ``owner`` and runs with ``owner``'s privileges only. Under
        ``force_user`` (sessions run as the DSN's user) it runs as the DSN's user too."""
        if owner is None or self.force_user or owner == self.dsn_user:
            return fn(conn)
        with conn.transaction():
            conn.execute(pgsql.SQL("SET LOCAL ROLE {}").format(pgsql.Identifier(owner)))
            return fn(conn)

    def create_batch_view(self, database: str, name: str, columns: tuple[str, ...] | None,
                          query: str, owner: str | None = None,
                          cancel: RefreshCancel | None = None, *,
                          storage: tuple[tuple[str, str], ...] = (), with_data: bool = True,
                          session: BackendSession | None = None) -> int:
        """``CREATE MATERIALIZED VIEW name [(cols)] [storage] AS query WITH [NO] DATA``;
        returns its row count (0 for NO DATA: the view is unpopulated). With ``session``
        (the client's own upstream session) it runs there, with the client's search_path
        and current role, which owns it; else on the pool as ``owner``. ``cancel`` sends
        the upstream a cancel request."""
        tail = " WITH DATA" if with_data else " WITH NO DATA"
        head = self._head("CREATE MATERIALIZED VIEW", name, columns, storage)
        if session is not None:
            text = head.as_string(None) + " AS " + query + tail
            restore = _check_client_during(session)
            try:
                if cancel is not None:
                    cancel.bind(session.interrupt)
                try:
                    res = session.execute(text)
                except PgError as err:
                    if err.position is not None:  # relative to the client's query
                        err.position -= len(head.as_string(None)) + 4
                        if not 1 <= err.position <= len(query):
                            err.position = None
                    raise
                finally:
                    if cancel is not None:
                        cancel.unbind()
            finally:
                restore()
            tag = res.tag or ""
            if not with_data:
                return 0
            if tag.startswith("SELECT ") and tag[7:].isdigit():
                return int(tag[7:])
            return 0

        def go(conn: psycopg.Connection[Any]) -> int:
            if cancel is not None:
                cancel.bind(conn.cancel_safe)
            try:
                res = self._ddl_with_query(conn, head, query, tail)
            finally:
                if cancel is not None:
                    cancel.unbind()
            if not with_data:
                return 0
            tag = _text(res.command_status) or ""
            if tag.startswith("SELECT ") and tag[7:].isdigit():  # PostgreSQL's tag: SELECT <n>
                return int(tag[7:])
            return self._count(conn, name)
        return self._call(database, lambda conn: self._as_owner(conn, owner, go))

    def refresh_batch_view(self, database: str, name: str, columns: tuple[str, ...] | None = None,
                           query: str | None = None, cancel: RefreshCancel | None = None) -> int:
        """Refresh the materialized view (``columns``/``query`` unused: PostgreSQL stores them).

        ``CONCURRENTLY`` when a unique, valid index on plain columns without a
        predicate exists (readers are not blocked), else a plain refresh (readers
        wait for it). Returns the row count right after the refresh committed.
        """
        def go(conn: psycopg.Connection[Any]) -> int:
            ident = _ident(name)
            if self._can_refresh_concurrently(conn, name):
                stmt = pgsql.SQL("REFRESH MATERIALIZED VIEW CONCURRENTLY {}").format(ident)
            else:
                stmt = pgsql.SQL("REFRESH MATERIALIZED VIEW {}").format(ident)
            if cancel is not None:
                cancel.bind(conn.cancel_safe)
            try:
                conn.execute(stmt)
            finally:
                if cancel is not None:
                    cancel.unbind()
            return self._count(conn, name)
        return self._call(database, go)

    @staticmethod
    def _can_refresh_concurrently(conn: psycopg.Connection[Any], name: str) -> bool:
        ident = _ident(name).as_string(conn)
        row = conn.execute(
            """
            SELECT c.relispopulated AND EXISTS (
                SELECT 1 FROM pg_index i
                WHERE i.indrelid = c.oid AND i.indisunique AND i.indisvalid
                  AND i.indpred IS NULL AND i.indexprs IS NULL AND i.indnatts > 0)
            FROM pg_class c
            WHERE c.oid = to_regclass(%s) AND c.relkind = 'm'
            """, [ident]).fetchone()
        return bool(row and row[0])

    @staticmethod
    def _count(conn: psycopg.Connection[Any], name: str) -> int:
        row = conn.execute(pgsql.SQL("SELECT count(*) FROM {}").format(_ident(name))).fetchone()
        return int(row[0]) if row else 0

    def drop_batch_view(self, database: str, name: str, cascade: bool = False) -> None:
        stmt = "DROP MATERIALIZED VIEW IF EXISTS {} CASCADE" if cascade else \
            "DROP MATERIALIZED VIEW IF EXISTS {}"
        self._call(database, lambda conn: conn.execute(pgsql.SQL(stmt).format(_ident(name))))

    def create_view(self, database: str, name: str, columns: tuple[str, ...] | None,
                    query: str, owner: str | None = None) -> None:
        """A plain ``CREATE VIEW`` as ``owner``: a streaming view, always current."""
        self._call(database, lambda conn: self._as_owner(conn, owner, lambda c: self._ddl_with_query(
            c, self._head("CREATE VIEW", name, columns), query)))

    def drop_view(self, database: str, name: str) -> None:
        self._call(database, lambda conn: conn.execute(
            pgsql.SQL("DROP VIEW IF EXISTS {}").format(_ident(name))))

    def _call(self, database: str, fn: Any) -> Any:
        """Run ``fn(conn)`` on a pooled connection; psycopg errors become PgErrors."""
        try:
            return self._run(database, fn)
        except psycopg.Error as exc:
            raise _error_from_psycopg(exc) from None

    def close(self) -> None:
        with self._lock:
            pools = list(self._pools.values())
            self._pools.clear()
        for pool in pools:
            pool.close()
