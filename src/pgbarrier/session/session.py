"""One client connection's protocol state, free of I/O.

The server (server/connection.py) decodes frames and calls :meth:`Session.handle` with each
message; the session appends the encoded answers to its outbox, and the handler
writes them. Rules this module keeps:

* Simple Query: the text is split into statements; each gets its result; the
  first error stops the rest; an empty query gets EmptyQueryResponse; one
  ReadyForQuery ends it, carrying the transaction status (I/T/E).
* Several statements in one Query run in PostgreSQL's implicit transaction
  block: outside an explicit block, pgbarrier opens a backend transaction before
  the first statement that needs one (not for a last statement standing alone)
  and commits it after the last statement; an error rolls it back, so earlier
  statements of the Query are undone. An explicit ``BEGIN`` in the Query turns
  the implicit block into a regular one (the statements before it are part of
  it; the BEGIN is not sent to the backend, and options it carries are not
  applied). ``COMMIT``/``ROLLBACK`` without an explicit block end the implicit
  one with PostgreSQL's WARNING 25P01 ``there is no transaction in progress``
  (a lone one is answered without reaching the backend), ``BEGIN`` inside a
  block gets WARNING 25001 ``there is already a transaction in progress``, and
  ``... AND CHAIN`` outside a block is 25P01. Statements after a COMMIT of an
  explicit block run in a new implicit block. Control statements that change
  state (PAUSE, FLUSH, CREATE DATABASE...) are 25001 anywhere in a
  multi-statement Query, as PostgreSQL refuses CREATE DATABASE there.
* Start-up: the packet's settings are read once
  (:func:`~pgbarrier.sql.startup_params.startup_settings`, ``options`` included); the
  backend gets the ones :func:`~pgbarrier.session.settings.for_backend` leaves it (an
  upstream logs in with them, so it validates them: its FATAL is the client's), then
  pgbarrier's own are taken into the session. The ParameterStatus messages after
  AuthenticationOk are the values in force: what the backend reports (an upstream reports
  every one, ``server_version`` and ``TimeZone`` included), pgbarrier's announced values
  (app.py) for the rest.
* ParameterStatus: when a statement changes a reported parameter (e.g.
  ``SET application_name``), the new value is sent before its
  CommandComplete, and only when it differs from what the client was last told
  (PostgreSQL 15 sends it later, just before ReadyForQuery; clients accept
  either). A rolled-back implicit block reports the values restored.
* Extended Query: after an error every message up to Sync is skipped; Sync
  sends ReadyForQuery. Outside an explicit block, the Executes up to a Sync are
  one implicit transaction, as in PostgreSQL: on an upstream PostgreSQL read as
  raw bytes the upstream keeps it itself (:mod:`pgbarrier.session.relay`); where
  the backend opens one (``opens_implicit_transaction``: DuckDB) pgbarrier opens a backend
  transaction before the first statement that writes, commits it at Sync, and
  rolls it back when one of them failed. A BEGIN inside turns it into a regular
  block; control statements that change state are 25001 inside it. Describe never executes: a statement's parameter types and row
  shape, and a portal's shape, come from the backend's planner; only for ``DML
  ... RETURNING`` whose shape the backend cannot tell is the RowDescription sent
  with Execute.
* Parameter types: OIDs the client leaves 0 are filled in by Describe of the
  statement (the backend infers them); Bind reads values by the client's OID,
  else the inferred one (text that does not parse under an inferred type stays
  text for the backend). A relaying backend (PostgreSQL) gets the client's
  bytes, formats and OIDs untouched.
* Result formats: binary where the client asks it and the type has a binary
  form (:func:`pgbarrier.pgproto.types.supports_binary`), else text, the same
  answer in Describe's RowDescription and at Execute. A relaying backend whose
  client asks binary for every column relays the upstream's binary rows; with
  mixed formats the upstream's text is converted for the binary columns.
* Execute with a row limit sends at most that many rows and PortalSuspended;
  the next Execute resumes; a limit of 0 or less means every row (PostgreSQL's). On the
  columnar path an Execute that suspends (and a SQL cursor's FETCH n) writes its rows,
  then reads the next request's rows from the backend before its PortalSuspended
  (:meth:`Session._read_ahead`: under its own cancel and timeout; an error there is kept
  for the Execute whose rows reach it), and they are framed after the batch
  (:meth:`Session.frame_ahead`): a driver's fetch size costs the client one framing it
  does not wait for, not a read and a framing per round trip.
* Bind keeps PostgreSQL's checks and answers: a named portal still open is 42P03
  ``cursor "p" already exists`` (the unnamed one is replaced); a parameter count the
  statement does not take is 08P01 ``bind message supplies 2 parameters, but prepared
  statement "" requires 1``; a parameter format code other than 0/1 is 22023
  ``unsupported format code: 2``; result formats that fit no column list are 08P01,
  and a result format code other than 0/1 is 22023 at Execute. Portals end with their
  transaction: once the session is idle after a Sync or Query, none is left.
* Any error in the extended protocol inside a block aborts it (E), as in PostgreSQL.
  A message whose text is not UTF-8 is ERROR 22021 (an :class:`~m.Undecodable`), and
  CopyData/CopyDone/CopyFail outside COPY are ignored.
* COPY FROM STDIN / TO STDOUT on a backend that ``copies_here`` (DuckDB) run here, in
  the simple and the extended protocol (:mod:`pgbarrier.session.copy`): during COPY FROM
  STDIN every message goes to it until CopyDone or CopyFail (or an error); the statement
  is recognised by its first word and ``STDIN``/``STDOUT``/``PROGRAM`` in its text (no
  parse on the fast path); a COPY of a file is the backend's statement.
* Client encoding: where the backend leaves it to pgbarrier (DuckDB:
  ``BackendSession.client_encoding``), the session holds its
  :class:`~pgbarrier.pgproto.encodings.ClientEncoding`, which
  the backend's settings change in place; while its codec is None (UTF8, the default)
  nothing is converted and nothing per value is added. Otherwise text is converted where
  PostgreSQL converts it (:mod:`pgbarrier.pgproto.transcode`): the connection decodes each
  message in it, Bind values are converted before they are read, and errors, notices,
  RowDescription, ParameterStatus, result values and COPY data are written in it. An
  encoding changed where no SET reports it (``set_config``) is reported at the statement's
  end. An upstream PostgreSQL converts for itself: relayed sessions convert nothing.
* NotificationResponse: what the backend received for the session's LISTENs (DuckDB keeps
  them itself) goes just before a ReadyForQuery outside a transaction block, as
  PostgreSQL sends them; the server also writes them to an idle connection at once
  (:meth:`Session.notifications`).
* A failing statement never ends the connection; only FATAL errors do (the
  handler closes after sending them).
* Rows stream: with a ``spill`` callback (the handler's socket write), the
  outbox is written out every ``SPILL_BYTES`` of DataRows, before the next rows
  are produced, so a row set the backend streams (:class:`~pgbarrier.result.RowStream`)
  holds one batch and one spill in memory, and a client that does not read blocks
  the statement (socket back-pressure) instead of growing the server. An error
  met after rows were sent is an ErrorResponse after them, and fails the block
  as any statement's error does. The session stays socket-free: ``spill``
  raises :class:`ClientGone` when the client went away, which no statement
  handler catches. A row set read in record batches (:class:`~pgbarrier.result.BatchStream`,
  DuckDB's columnar path) is written a batch at a time by
  :mod:`pgbarrier.pgproto.columnar` (a row limit slices a batch); under a client encoding
  other than UTF8 or a DateStyle/IntervalStyle other than the defaults its rows go
  through the per-value encoders instead, with the same bytes as ever.
* No lock: :meth:`Session.handle` is called by one thread at a time (the server runs at
  most one batch per connection at once, server/connection.py); :meth:`Session.cancel`,
  the only method other threads call (a CancelRequest, a hang-up, statement_timeout's
  timer), reads no protocol state: it interrupts the backend and the control plane.
  The session imports no concrete backend: what it needs from one is
  :mod:`pgbarrier.backends.base` (``NeedsExecution``, ``WireParams``).
* With a relaying upstream (``self.relay``), statements that are not
  pgbarrier's never reach this class: the relay passes them upstream as bytes
  and tells the session what happened (``relay_ready``, ``relay_failed``... : the
  session alone writes ``tx``, ``skip_until_sync`` and ``reported``); what is left
  here is the full path (control statements, ``rw_catalog``, own settings).
"""

from __future__ import annotations

import logging
import secrets
from time import perf_counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pgbarrier.backends.base import NeedsExecution, WireParams
from pgbarrier.errors import (
    DuplicateCursor,
    InvalidCatalogName,
    InvalidParameterValue,
    InvalidAuthorizationSpecification,
    InFailedSqlTransaction,
    Notice,
    PgError,
    QueryCanceled,
    as_pg_error,
)
from pgbarrier.logs import session_fields, statement_for_log
from pgbarrier.metrics.statements import CONTROL, LOCAL, RELAYED, SessionStatements, StatementTotals
from pgbarrier.result import BatchStream, Column, Result, command, write_now
from pgbarrier.sql.startup_params import startup_settings
from pgbarrier.session import copy, settings
from pgbarrier.session.copy import CopyInState
from pgbarrier.sql.copy_options import CopyStatement, parse_copy
from pgbarrier.session.executor import StatementExecutor
from pgbarrier.session.portal import Portal, PreparedStatement
from pgbarrier.session.timeouts import TIMERS, Timer
from pgbarrier.session.transaction import (
    TxKind,
    TxState,
    after_error,
    after_success,
    allowed_when_failed,
    tx_kind,
)
from pgbarrier.sql.classify import leading_words, split_statements
from pgbarrier.sql.route import Kind, route
from pgbarrier.sql.identifiers import truncate_identifier
from pgbarrier.pgproto import encodings, transcode
from pgbarrier.pgproto import messages as m
from pgbarrier.pgproto.codes import (
    BIND,
    CLOSE,
    DESCRIBE,
    EXECUTE,
    PARSE,
    QUERY,
    TX_FAILED,
    TX_IDLE,
    TX_IN_BLOCK,
)
from pgbarrier.pgproto import types as pgt

if TYPE_CHECKING:
    from pgbarrier.control import ControlPlane
    from pgbarrier.session.relay import SessionRelay

log = logging.getLogger(__name__)

#: DataRow bytes gathered before the handler's ``spill`` writes them out
SPILL_BYTES = 256 * 1024
#: an upstream ReadyForQuery's status byte -> the session's transaction state
_RELAY_TX = {TX_IDLE: TxState.IDLE, TX_IN_BLOCK: TxState.IN_BLOCK, TX_FAILED: TxState.FAILED}


class _Untimed:
    """What :meth:`Session._arm_timeout` returns when no ``statement_timeout`` is set."""

    __slots__ = ()

    def disarm(self) -> None:
        pass


_UNTIMED = _Untimed()


class ClientGone(BaseException):
    """Raised by ``spill`` when the client is gone: ends the connection, past every
    ``except Exception`` of the statement handlers (nothing is left to answer)."""


_NO_TRANSACTION = Notice("there is no transaction in progress", sqlstate="25P01",
                         severity="WARNING")


def _chain_name(sql: str, first: str | None) -> str:
    if first == "ROLLBACK" and "TO" in leading_words(sql, 4):
        return "ROLLBACK TO SAVEPOINT"
    return f"{'COMMIT' if first in ('COMMIT', 'END') else 'ROLLBACK'} AND CHAIN"


class Session:
    """Protocol state of one connection; call :meth:`start`, then :meth:`handle`.
    Slotted: a server holds thousands, mostly idle."""

    __slots__ = ("control", "server_parameters", "process_id", "secret_key", "out", "spill",
                 "tx", "skip_until_sync", "statements", "portals", "executor", "relay",
                 "closed", "reported", "_last_count", "_ext_implicit", "_ext_failed",
                 "_timed_out", "statement_totals", "stats", "_copy_in",
                 "encoding", "_failing_sql", "_ahead")

    def __init__(self, control: ControlPlane, server_parameters: dict[str, str]) -> None:
        self.control = control
        self.server_parameters = server_parameters
        self.process_id = secrets.randbits(31)
        #: the statement running, or the one that failed (_run, _log_error)
        self._failing_sql: str | None = None
        self.secret_key = secrets.randbits(32)
        self.out = m.Outbox()
        #: set by the handler: writes out what the outbox holds while rows are produced
        #: (raises :class:`ClientGone`); None: rows wait in the outbox
        self.spill: Callable[[bytes], None] | None = None
        self.tx = TxState.IDLE
        self.skip_until_sync = False
        self.statements: dict[str, PreparedStatement] = {}
        self.portals: dict[str, Portal] = {}
        #: a portal's stream and framer whose next rows are framed after the batch
        #: (:meth:`frame_ahead`)
        self._ahead: tuple[BatchStream, Any, int] | None = None
        self.executor: StatementExecutor | None = None
        #: set when the backend is an upstream read as raw bytes: messages that are not
        #: pgbarrier's are relayed (:mod:`pgbarrier.session.relay`)
        self.relay: SessionRelay | None = None
        self.closed = False
        #: reported parameters as the client was last told them
        self.reported: dict[str, str] = {}
        self._last_count = 0
        #: a backend transaction opened for the Executes up to the next Sync, and whether
        #: one of them failed (then Sync rolls it back)
        self._ext_implicit = False
        self._ext_failed = False
        #: the running statement was cancelled by statement_timeout, not by its client
        self._timed_out = False
        #: set by the App when metrics are served: ``stats`` (this session's statement
        #: counts, :mod:`pgbarrier.metrics.statements`) is opened there at start-up
        self.statement_totals: StatementTotals | None = None
        self.stats: SessionStatements | None = None
        #: a COPY FROM STDIN waiting for its data (:mod:`pgbarrier.session.copy`)
        self._copy_in: CopyInState | None = None
        #: the client encoding the wire converts to and from (its ``codec`` None: nothing
        #: is converted); the backend's settings change it (:mod:`pgbarrier.pgproto.encodings`)
        self.encoding = encodings.UNCONVERTED_SESSION

    # ------------------------------------------------------------------ start-up

    def start(self, startup: m.StartupMessage, password: str | None = None) -> None:
        """Authenticate (trust) and open the backend session; raises FATAL errors.
        ``password``: what the client authenticated with, when known (for an upstream)."""
        params = startup.parameters
        user = params.get("user")
        if not user:
            raise InvalidAuthorizationSpecification("no PostgreSQL user name specified in startup packet")
        # PostgreSQL cuts both names to NAMEDATALEN - 1 bytes, silently
        user = truncate_identifier(user)
        database = truncate_identifier(params.get("database") or user)
        # what PostgreSQL finds after AuthenticationOk: no such database, then a setting
        # it does not know
        if not self.control.database_exists(database):
            self.out.add(m.authentication_ok())
            raise InvalidCatalogName(f'database "{database}" does not exist', severity="FATAL",
                                     hint=self.control.unserved_database_hint(database))
        try:
            startup = startup_settings(params)
        except PgError:
            self.out.add(m.authentication_ok())
            raise
        info = self.control.open_session(user=user, database=database,
                                         application_name=startup.get("application_name") or "",
                                         process_id=self.process_id)
        try:
            for_backend = settings.for_backend(startup)
            backend = self.control.connect_backend(database, user, password, for_backend)
            backend.process_id = self.process_id
            try:
                backend.apply_startup(for_backend)
                settings.apply_startup(info, startup)
            except PgError:  # PostgreSQL finds a bad setting after authentication
                self.out.add(m.authentication_ok())
                raise
        except BaseException:
            if "backend" in locals():
                backend.close()
            self.control.close_session(info)
            raise
        self.executor = StatementExecutor(backend, self.control, info)
        encoding = backend.client_encoding()
        if encoding is not None:
            self.encoding = encoding
        if self.statement_totals is not None:
            self.stats = self.statement_totals.open(database)
        upstream = backend.relayed_upstream()
        if upstream is not None:
            from pgbarrier.session.relay import SessionRelay

            self.relay = SessionRelay(self, upstream)
        self.out.add(m.authentication_ok())
        # what is in force: the backend's own values where it reports them (an upstream
        # reports every one), pgbarrier's announced ones for the rest
        reported = dict(self.server_parameters)
        reported["application_name"] = startup.get("application_name") or ""
        reported["session_authorization"] = user
        reported.update(backend.reported_parameters())
        self.reported = reported
        codec = self.encoding.codec
        try:
            for name, value in reported.items():
                self.out.add(m.parameter_status(name, value) if codec is None
                             else transcode.parameter_status(name, value, codec))
        except PgError:  # a value the client encoding cannot hold (a user name): FATAL
            self.close()
            raise
        self.out.add(m.backend_key_data(self.process_id, self.secret_key))
        self.out.add(m.ready_for_query(self.tx.value))

    # ------------------------------------------------------------------ dispatch

    def handle(self, msg: m.FrontendMessage) -> None:
        if self._copy_in is not None:
            self._copy_message(msg)
        elif isinstance(msg, m.Query):
            self._end_extended_implicit()
            timer = self._arm_timeout()
            try:
                self._simple_query(msg.sql)
            finally:
                timer.disarm()
            if self.tx is TxState.IDLE:  # the transaction ended: so did its portals
                self.portals.clear()
        elif isinstance(msg, m.Sync):
            self.skip_until_sync = False
            self._end_extended_implicit()
            if self.tx is TxState.IDLE:  # the transaction ended: so did its portals
                self.portals.clear()
            self._ready()
        elif isinstance(msg, (m.Flush, m.Terminate, m.CopyOutsideCopy)):
            return
        elif isinstance(msg, m.FunctionCall) or (
                isinstance(msg, m.Undecodable) and msg.type_code in (b"Q", b"F")):
            # answered like a simple Query: an ErrorResponse, then ReadyForQuery
            self._end_extended_implicit()
            self.skip_until_sync = False
            self.tx = after_error(self.tx)
            self._error(msg.error if isinstance(msg, m.Undecodable)
                        else self._function_call_error(msg))
            self.out.add(m.ready_for_query(self.tx.value))
        elif self.skip_until_sync:
            return
        else:
            timer = self._arm_timeout() if isinstance(msg, m.Execute) else _UNTIMED
            try:
                try:
                    self._extended(msg)
                finally:
                    timer.disarm()
            except Exception as exc:  # every failure becomes an ErrorResponse
                self._error(exc)
                self.skip_until_sync = True
                self._ext_failed = self._ext_implicit
                self.tx = after_error(self.tx)  # any error aborts an open block

    def _function_call_error(self, msg: m.FunctionCall) -> PgError:
        """FunctionCall on the full path is refused: on DuckDB no function has an OID
        (``pg_proc`` is empty), PostgreSQL's own 42883; the byte relay passes FunctionCall
        upstream itself (:mod:`pgbarrier.session.relay`), so this is libpq's TLS path."""
        if self.executor is not None:
            return self.executor.backend.function_call_refused(msg.oid)
        return PgError(f"function with OID {msg.oid} does not exist", sqlstate="42883")

    def cancel(self) -> None:
        """Cancel the running statement (called from another thread)."""
        state = self._copy_in
        if state is not None:  # a COPY FROM STDIN ends at its next CopyData
            state.cancelled = True
        if self.executor is not None:
            self.executor.backend.interrupt()
            self.control.cancel(self.executor.info)

    def _arm_timeout(self) -> Timer | _Untimed:
        """``statement_timeout`` kept by pgbarrier: past it, the running statement is
        cancelled as by a CancelRequest and its 57014 says ``statement timeout``. It spans
        a whole Query message (PostgreSQL times each statement of one separately) or one
        Execute, rows sent included. DuckDB has no timeout of its own, and pgbarrier's own
        statements (a first snapshot) run beside the client's upstream session, so this
        is on for every backend; an upstream enforces its own copy of the setting too.
        Returns the armed timer, which the caller disarms when the statement ends
        (:data:`_UNTIMED` when no timeout is set; every statement asks, so no context
        manager per message)."""
        ms = self.executor.info.statement_timeout_ms if self.executor is not None else 0
        if ms <= 0:
            return _UNTIMED
        self._timed_out = False
        return TIMERS.arm(ms / 1000, self._expire)

    def _expire(self) -> None:
        self._timed_out = True
        self.cancel()

    def close(self) -> None:
        if self.stats is not None and self.statement_totals is not None:
            self.statement_totals.close(self.stats)
        if self.executor is not None and not self.closed:
            self.closed = True
            self.executor.backend.close()
            self.control.close_session(self.executor.info)

    # ------------------------------------------------------------------ notifications

    def _ready(self) -> None:
        """ReadyForQuery, after the notifications that arrived (outside a transaction
        block), as PostgreSQL sends them just before it."""
        if self.tx is TxState.IDLE:
            pending = self.notifications()
            if pending:
                self.out.add(pending)
        self.out.add(m.ready_for_query(self.tx.value))

    def notifications(self) -> bytes:
        """NotificationResponse messages of what the backend received for this session's
        LISTENs (where it keeps them itself: DuckDB), taken now; b"" inside a transaction
        block, where they wait for its end (PostgreSQL's rule). Any thread, between batches
        or in one."""
        if self.tx is not TxState.IDLE or self.executor is None:
            return b""
        got = self.executor.backend.take_notifications()
        if not got:
            return b""
        codec = self.encoding.codec
        if codec is None:
            return b"".join(m.notification_response(*n) for n in got)
        out = []
        for n in got:
            try:
                out.append(transcode.notification_response(*n, codec))
            except PgError as err:  # not in the client encoding: that one is not sent
                log.warning("notification on channel %s not sent: %s", n[1], err.message)
        return b"".join(out)

    # ------------------------------------------------------------------ told by the relay

    # The byte relay (session/relay.py) tells the session what happened upstream through
    # these; it never writes the session's fields itself.

    def relay_ready(self, status: int) -> None:
        """The upstream's ReadyForQuery: its transaction status (``status``, PostgreSQL's
        ``I``, ``T`` or ``E`` as a byte) is the session's, and nothing is skipped any more."""
        self.skip_until_sync = False
        self.tx = _RELAY_TX.get(status, self.tx)

    def relay_sent(self) -> None:
        """A relayed Query or FunctionCall went upstream: it ends skipping to Sync."""
        self.skip_until_sync = False

    def relay_completed(self, sql: str) -> None:
        """A relayed Execute of ``sql`` completed (a BEGIN, COMMIT... in it moves the block)."""
        self.tx = after_success(self.tx, tx_kind(sql))

    def relay_failed(self) -> None:
        """A relayed message failed before Sync: skip to Sync; an open block is aborted."""
        self.skip_until_sync = True
        self.tx = after_error(self.tx)

    def relay_refused(self, err: PgError) -> None:
        """The relay refuses a message itself: ``err`` goes out as the session's own
        errors do, and the session skips to Sync."""
        self._error(err)
        self.skip_until_sync = True

    def relay_replaced_statement(self, name: str) -> None:
        """A relayed Parse made statement ``name`` upstream: the session's own of that
        name (the unnamed one; a named one is refused with 42P05 first) is gone."""
        self.statements.pop(name, None)

    def relay_replaced_portal(self, name: str) -> None:
        """A relayed Bind made portal ``name`` upstream: the session's own of that name
        is gone, as a Bind replaces the unnamed portal (and a named one was closed)."""
        self.portals.pop(name, None)

    def relay_reported(self, events: list[tuple[str, str]]) -> None:
        """ParameterStatus messages the relay passed on: what the client was told."""
        self.reported.update(events)

    # ------------------------------------------------------------------ helpers

    def _error(self, exc: BaseException) -> PgError:
        err = as_pg_error(exc)
        if self._timed_out and isinstance(err, QueryCanceled):
            err = QueryCanceled("canceling statement due to statement timeout")
        if not isinstance(exc, PgError) and err.sqlstate == "XX000":
            log.exception("internal error", exc_info=exc)
        self._log_error(err)
        self.out.add(self.error_message(err))
        return err

    def _log_error(self, err: PgError) -> None:
        """A statement's ERROR, as PostgreSQL logs it with its default
        ``log_min_error_statement = error``: the message, its SQLSTATE and the statement
        (passwords in it as ``'***'``, :func:`pgbarrier.logs.statement_for_log`)."""
        statement, self._failing_sql = self._failing_sql, None
        info = self.executor.info if self.executor is not None else None
        fields = session_fields(info) if info is not None else {"pid": self.process_id}
        if statement is None:
            log.error("%s", err.message, extra={"event": "error", "sqlstate": err.sqlstate,
                                                **fields})
        else:
            log.error("%s; statement: %s", err.message, statement_for_log(statement),
                      extra={"event": "error", "sqlstate": err.sqlstate, **fields})

    def error_message(self, err: PgError) -> bytes:
        """ErrorResponse ``err``, in the client encoding."""
        codec = self.encoding.codec
        return m.error_response(err) if codec is None else transcode.error_response(err, codec)

    def _run(self, sql: str, params: Any, result_formats: tuple[int, ...] = (), *,
             in_multi: bool = False) -> Result:
        """Run one statement; while it runs (and after it failed) it is :attr:`_failing_sql`,
        for the ERROR log line of :meth:`_error`."""
        self._failing_sql = sql
        result = self._run_statement(sql, params, result_formats, in_multi=in_multi)
        self._failing_sql = None
        return result

    def _run_statement(self, sql: str, params: Any, result_formats: tuple[int, ...] = (), *,
                       in_multi: bool = False) -> Result:
        assert self.executor is not None
        first = (leading_words(sql, 1) or (None,))[0]
        kind = tx_kind(sql, first)
        if self.tx is TxState.FAILED and not allowed_when_failed(kind):
            raise InFailedSqlTransaction()
        try:
            if self.tx is TxState.FAILED and kind is TxKind.COMMIT:
                self.executor.backend.execute("ROLLBACK")
                result = Result(tag="ROLLBACK")
            elif self.tx is TxState.IN_BLOCK and kind is TxKind.BEGIN:
                result = command("BEGIN", [Notice("there is already a transaction in progress",
                                                  sqlstate="25001", severity="WARNING")])
            elif self.tx is TxState.IDLE and kind in (TxKind.COMMIT, TxKind.ROLLBACK):
                # no block: nothing for the backend to end (an implicit block is ended by
                # the simple-query loop before this)
                result = command("COMMIT" if kind is TxKind.COMMIT and first != "PREPARE"
                                 else "ROLLBACK",
                                 [_NO_TRANSACTION])
            elif self.tx is TxState.IDLE and kind in (TxKind.CHAIN, TxKind.ROLLBACK_TO):
                raise PgError(f"{_chain_name(sql, first)} can only be used in transaction blocks",
                              sqlstate="25P01")
            else:
                result = self.executor.execute(sql, params, self.tx, result_formats=result_formats,
                                               in_multi=in_multi)
        except BaseException:
            # a COMMIT that fails (a key another transaction committed first) ends the block
            # all the same, rolled back, as PostgreSQL's does
            self.tx = TxState.IDLE if kind is TxKind.COMMIT and self.tx is TxState.IN_BLOCK \
                else after_error(self.tx)
            raise
        self.tx = after_success(self.tx, kind)
        return result

    def _row_description(self, columns: list[Column], portal: Portal | None) -> bytes:
        fields = [
            m.FieldDescription(
                c.name, c.type_oid, c.type_size, c.type_modifier,
                self._format(portal, i, c.type_oid), c.table_oid, c.column_number)
            for i, c in enumerate(columns)
        ]
        codec = self.encoding.codec
        return m.row_description(fields) if codec is None else \
            transcode.row_description(fields, codec)

    def _format(self, portal: Portal | None, index: int, type_oid: int) -> int:
        """The format column ``index`` goes out in: the client's ask where it can be met."""
        if portal is None or portal.format_of(index) != 1:
            return 0
        if self.executor is not None:
            return self.executor.backend.binary_format(type_oid, portal.all_binary())
        return 1 if pgt.supports_binary(type_oid) else 0

    def _encoders(self, result: Result, portal: Portal | None, *,
                  utf8: bool = False) -> list[Any] | None:
        """Per-column functions from a row value to wire bytes (None: relay as they are),
        in the client encoding (``utf8``: in UTF-8 whatever it is, for COPY's writers)."""
        columns = result.columns or []
        if result.raw_format == 1:
            return None
        if result.raw_format == 0:
            convert = [self._format(portal, i, c.type_oid) == 1 for i, c in enumerate(columns)]
            if not any(convert):
                return None
            encs: list[Any] = []
            for c, conv in zip(columns, convert):
                if conv:
                    oid = c.type_oid
                    encs.append(lambda v, oid=oid: pgt.encode_binary(
                        oid, pgt.decode_text(oid, bytes(v).decode("utf-8"))))
                else:
                    encs.append(bytes)
            return encs
        assert self.executor is not None
        styles = self.executor.backend.output_styles()
        codec = None if utf8 else self.encoding.codec
        if codec is None:
            return [pgt.encoder(c.type_oid, self._format(portal, i, c.type_oid), styles,
                                c.type_modifier) for i, c in enumerate(columns)]
        encs = []
        for i, c in enumerate(columns):
            fmt = self._format(portal, i, c.type_oid)
            encs.append(transcode.result_encoder(
                pgt.encoder(c.type_oid, fmt, styles, c.type_modifier), fmt, c.type_oid, codec))
        return encs

    def _send_rows(self, result: Result, portal: Portal | None, limit: int) -> bool:
        """Send rows; True when the row set is exhausted."""
        if isinstance(result.row_source, BatchStream) and result.batched() \
                and self.executor is not None and self.executor.backend.output_styles() is None:
            return self._send_batches(result, result.row_source, portal, limit)
        rows = result.rows()
        sent = 0
        out = self.out
        encoders = self._encoders(result, portal)
        if encoders is None:
            def encode(row: tuple[Any, ...]) -> list[bytes | None]:
                return list(row)
        else:
            def encode(row: tuple[Any, ...]) -> list[bytes | None]:
                return [None if v is None else enc(v) for enc, v in zip(encoders, row)]
        spill = self.spill
        chunks = out.chunks
        data_row = m.data_row
        pending = 0
        try:
            for row in rows:
                data = data_row(encode(row))
                chunks.append(data)
                sent += 1
                if spill is not None:
                    pending += len(data)
                    if pending >= SPILL_BYTES:
                        spill(out.take())  # blocks while the client does not read
                        pending = 0
                if limit and sent >= limit:
                    if portal is not None:
                        portal.sent += sent
                    return False
        except Exception:  # an error after some rows (a streamed result): the block fails
            self.tx = after_error(self.tx)
            raise
        if portal is not None:
            portal.sent += sent
            self._last_count = portal.sent
        else:
            self._last_count = sent
        return True

    def _send_batches(self, result: Result, stream: BatchStream, portal: Portal | None,
                      limit: int) -> bool:
        """:meth:`_send_rows` for a result read in record batches: each batch framed whole,
        a column at a time (:mod:`pgbarrier.pgproto.columnar`)."""
        from pgbarrier.pgproto.columnar import DataRows  # pyarrow: on first use

        columns = result.columns or []
        framer = DataRows(columns, [self._format(portal, i, c.type_oid)
                                    for i, c in enumerate(columns)], self.encoding.codec)
        spill = self.spill
        out = self.out
        chunks = out.chunks
        sent = 0
        pending = 0
        key = framer.key
        try:
            while True:
                framed = stream.take_framed(key, limit - sent if limit else 0)
                if framed is not None:  # framed ahead, after the last Execute (frame_ahead)
                    data, rows = framed
                else:
                    batch = stream.next_batch(limit - sent if limit else 0)
                    if batch is None:
                        break
                    data, rows = framer.frame(batch), batch.num_rows
                chunks.append(data)
                sent += rows
                if spill is not None:
                    pending += len(data)
                    if pending >= SPILL_BYTES or write_now(sent, rows):
                        spill(out.take())  # blocks while the client does not read
                        pending = 0
                if limit and sent >= limit:
                    if portal is not None:
                        portal.sent += sent
                        self._ahead = (stream, framer, limit)
                        self._read_ahead(stream, limit)
                    return False
        except Exception:  # an error after some rows: the block fails
            self.tx = after_error(self.tx)
            raise
        if portal is not None:
            portal.sent += sent
            self._last_count = portal.sent
        else:
            self._last_count = sent
        if stream.continues():  # a cursor's FETCH: its next rows framed after the batch
            rows = stream.window_rows()
            self._ahead = (stream, framer, rows)
            self._read_ahead(stream, rows)
        return True

    def _read_ahead(self, stream: BatchStream, rows: int) -> None:
        """A suspended portal's Execute (``rows``: its row limit) or a cursor's FETCH
        (``rows``: its count) sent its rows: when fewer than that many are read and
        not sent, those rows go out now and the next ones are read from the backend
        meanwhile, under this statement's cancel and timeout (``BatchStream.read_ahead``),
        for :meth:`frame_ahead` to frame after the batch: the next Execute or FETCH finds
        them framed instead of reading and framing them while its client waits."""
        if rows and self.spill is not None and stream.reads_ahead(rows):
            self.spill(self.out.take())
            stream.read_ahead(rows)

    def frame_ahead(self) -> None:
        """After a batch whose last Execute left a portal suspended (a driver's fetch size:
        each Execute a round trip), or that FETCHed from a SQL cursor (psql's FETCH_COUNT,
        drivers' server-side cursors), on the worker, its output already on its way: the
        rows the portal or cursor holds already (read from the backend, not framed) are
        framed now, while the client reads, and its next Execute or FETCH sends them as
        they are (``BatchStream.frame_ahead``). Nothing is read from the backend here: the
        statement does not run meanwhile, and a cancel has nothing to interrupt (what is
        read ahead was read by the statement itself, :meth:`_read_ahead`)."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            stream, framer, rows = ahead
            try:
                stream.frame_ahead(framer, rows)
            except Exception:  # noqa: BLE001 - its Execute frames them, and says what fails
                pass

    def _report(self, values: dict[str, str]) -> None:
        """ParameterStatus for each reported parameter whose value the client does not know."""
        codec = self.encoding.codec
        for name, value in values.items():
            if self.reported.get(name) != value:
                self.reported[name] = value
                self.out.add(m.parameter_status(name, value) if codec is None
                             else transcode.parameter_status(name, value, codec))

    def _complete(self, result: Result, count: int) -> None:
        codec = self.encoding.codec
        for notice in result.notices:
            self.out.add(m.notice_response(notice) if codec is None
                         else transcode.notice_response(notice, codec))
        if result.parameter_status:
            self._report(result.parameter_status)
        encoding = self.encoding
        if encoding is not encodings.UNCONVERTED_SESSION and \
                encoding.name != self.reported.get("client_encoding"):
            # changed where no SET says so (set_config): the client is told, as by SET
            self._report({"client_encoding": encoding.name})
        self.out.add(m.command_complete(result.completion_tag(count)))

    # ------------------------------------------------------------------ COPY

    def _local_copy(self, sql: str) -> bool:
        """COPY run here (:mod:`pgbarrier.session.copy`): a cheap gate on the first word."""
        if sql.lstrip()[:4].upper() != "COPY" or self.executor is None:
            return False
        return self.executor.backend.copies_here(sql)

    def _copy(self, sql: str, *, extended: bool, alone: bool) -> str | None:
        """Start COPY ``sql``: ``"in"`` when it waits for COPY FROM STDIN's data, ``"out"``
        when a COPY TO STDOUT is done (CommandComplete sent); None: a COPY of a file, for
        the backend to run as a statement."""
        assert self.executor is not None
        try:
            st = parse_copy(sql)
            copy.refuse_program(st)
            if not st.stdio:
                return None
            if self.tx is TxState.FAILED:
                raise InFailedSqlTransaction()
            if st.is_from:
                if not alone:
                    raise PgError("COPY FROM STDIN in a Query message with other statements "
                                  "is not supported by pgbarrier", sqlstate="0A000")
                own = self.tx is TxState.IDLE and not self._ext_implicit
                self._copy_in = copy.start_copy_in(st, self.executor.backend, own, extended,
                                                   self.out, self._copy_codec(st),
                                                   self.encoding.codec)
                return "in"
        except BaseException:
            self.tx = after_error(self.tx)
            raise
        result = self._run(copy.select_for(st), None)
        try:
            encoders = None if st.format == "binary" or result.columns is None \
                else self._encoders(result, None, utf8=True)
            n = copy.copy_out(st, result, encoders, self.out, self.spill, self._copy_codec(st),
                              self.encoding.codec,
                              columnar_ok=self.executor.backend.output_styles() is None)
        except Exception:
            self.tx = after_error(self.tx)
            raise
        self.out.add(m.command_complete(f"COPY {n}"))
        return "out"

    def _copy_codec(self, st: CopyStatement) -> encodings.Codec | None:
        """The encoding COPY's text or CSV data is in: its ENCODING, else the client's."""
        if st.encoding is None:
            return self.encoding.codec
        return encodings.codec(st.encoding)

    def _copy_message(self, msg: m.FrontendMessage) -> None:
        """A message during COPY FROM STDIN (see :mod:`pgbarrier.session.copy`)."""
        state = self._copy_in
        assert state is not None
        if isinstance(msg, (m.Sync, m.Flush)):
            return
        try:
            if isinstance(msg, m.CopyOutsideCopy) and msg.type_code == b"d":
                timer = self._arm_timeout()
                try:
                    state.data(msg.payload)
                finally:
                    timer.disarm()
                return
            if isinstance(msg, m.CopyOutsideCopy) and msg.type_code == b"c":
                timer = self._arm_timeout()
                try:
                    n = state.done()
                finally:
                    timer.disarm()
                self._copy_in = None
                self.out.add(m.command_complete(f"COPY {n}"))
                if not state.extended:
                    self.out.add(m.ready_for_query(self.tx.value))
                return
            if isinstance(msg, m.CopyOutsideCopy):
                raise state.fail(msg.payload)
            code = {m.Query: QUERY, m.Parse: PARSE, m.Bind: BIND, m.Execute: EXECUTE,
                    m.Describe: DESCRIBE, m.Close: CLOSE}.get(type(msg), 0)
            raise PgError(f"unexpected message type 0x{code:02X} during COPY from stdin",
                          sqlstate="08P01")
        except Exception as exc:
            self._copy_in = None
            state.abort()
            self.tx = after_error(self.tx)
            self._error(exc)
            if state.extended:
                self.skip_until_sync = True
                self._ext_failed = self._ext_implicit
            else:
                self.out.add(m.ready_for_query(self.tx.value))

    # ------------------------------------------------------------------ simple query

    def _backend_tx(self, sql: str) -> Result:
        """BEGIN/COMMIT/ROLLBACK of an implicit block, sent to the backend."""
        assert self.executor is not None
        return self.executor.backend.execute(sql)

    def _simple_query(self, text: str) -> None:
        self.skip_until_sync = False
        pieces = split_statements(text)
        if not pieces:
            self.out.add(m.empty_query_response())
        multi = len(pieces) > 1
        implicit = False  # a backend transaction pgbarrier opened for this Query's implicit block
        last = len(pieces) - 1
        failed = False
        stats = self.stats
        started = 0.0
        for i, piece in enumerate(pieces):
            if stats is not None:
                started = perf_counter()
            try:
                result = None
                if multi:
                    kind = tx_kind(piece.text)
                    if implicit and kind is TxKind.BEGIN:
                        # the implicit block becomes a regular one, earlier statements included
                        implicit = False
                        self.tx = TxState.IN_BLOCK
                        result = command("BEGIN")
                    elif implicit and kind in (TxKind.COMMIT, TxKind.ROLLBACK):
                        implicit = False
                        ended = self._backend_tx("COMMIT" if kind is TxKind.COMMIT else "ROLLBACK")
                        result = command(ended.tag, [_NO_TRANSACTION])
                        result.parameter_status = ended.parameter_status
                    elif not implicit and self.tx is TxState.IDLE and kind is None and i < last:
                        self._backend_tx("BEGIN")
                        implicit = True
                if result is None and self._local_copy(piece.text):
                    ran = self._copy(piece.text, extended=False, alone=not multi)
                    if ran == "in":
                        return  # COPY FROM STDIN: its data comes next
                    if ran == "out":
                        continue
                if result is None:
                    result = self._run(piece.text, None, in_multi=multi)
                if result.columns is not None:
                    self.out.add(self._row_description(result.columns, None))
                    self._send_rows(result, None, 0)
                    count = self._last_count
                else:
                    count = 0
                self._complete(result, count)
                if stats is not None:
                    stats.ok_one(_route_number(piece.text), perf_counter() - started)
            except Exception as exc:
                if isinstance(exc, PgError):
                    exc.with_position_offset(piece.offset)
                    _semicolon_ends_input(exc, text)
                err = self._error(exc)
                if stats is not None:
                    stats.failed(_route_number(piece.text), err.sqlstate,
                                 perf_counter() - started)
                failed = True
                break
        if implicit:
            try:
                ended = self._backend_tx("ROLLBACK" if failed else "COMMIT")
                if ended.parameter_status:
                    self._report(ended.parameter_status)
            except Exception as exc:  # a failed COMMIT is the Query's error
                if not failed:
                    self._error(exc)
        self._ready()

    # ------------------------------------------------------------------ extended query

    def _begin_extended_implicit(self, sql: str) -> Result | None:
        """PostgreSQL's implicit transaction of the Executes up to Sync (where the backend
        allows it): opened before the first statement that writes, ended at Sync.

        Returns the result of a transaction-control statement the open block absorbs.
        """
        kind = tx_kind(sql)
        if self._ext_implicit:
            if kind is TxKind.BEGIN:  # the implicit block becomes a regular one
                self._ext_implicit = False
                self.tx = TxState.IN_BLOCK
                return command("BEGIN")
            if kind in (TxKind.COMMIT, TxKind.ROLLBACK):
                self._ext_implicit = False
                ended = self._backend_tx("COMMIT" if kind is TxKind.COMMIT else "ROLLBACK")
                return command(ended.tag, [_NO_TRANSACTION])
            return None
        assert self.executor is not None
        if (self.tx is TxState.IDLE and kind is None
                and self.executor.backend.opens_implicit_transaction(sql)
                and route(sql).kind is not Kind.CONTROL):
            self._backend_tx("BEGIN")
            self._ext_implicit = True
        return None

    def _end_extended_implicit(self) -> None:
        """At Sync: commit the implicit block, or roll it back after an error."""
        if not self._ext_implicit:
            return
        self._ext_implicit = False
        failed, self._ext_failed = self._ext_failed, False
        try:
            self._backend_tx("ROLLBACK" if failed else "COMMIT")
        except Exception as exc:  # a failed COMMIT is the batch's error
            self._error(exc)

    def _extended(self, msg: m.FrontendMessage) -> None:
        if isinstance(msg, m.Parse):
            self._parse(msg)
        elif isinstance(msg, m.Bind):
            self._bind(msg)
        elif isinstance(msg, m.Describe):
            self._describe(msg)
        elif isinstance(msg, m.Execute):
            self._execute(msg)
        elif isinstance(msg, m.Undecodable):
            raise msg.error
        elif isinstance(msg, m.Close):
            if msg.kind == "S":
                self.statements.pop(msg.name, None)
            else:
                self.portals.pop(msg.name, None)
            self.out.add(m.close_complete())
        else:
            raise PgError(f"unexpected message {type(msg).__name__}", sqlstate="08P01")

    def _parse(self, msg: m.Parse) -> None:
        if msg.statement and msg.statement in self.statements:
            raise PgError(f'prepared statement "{msg.statement}" already exists', sqlstate="42P05")
        pieces = split_statements(msg.sql)
        if len(pieces) > 1:
            raise PgError("cannot insert multiple commands into a prepared statement",
                          sqlstate="42601")
        sql = pieces[0].text if pieces else ""
        self.statements[msg.statement] = PreparedStatement(msg.statement, sql, msg.param_oids)
        self.out.add(m.parse_complete())

    def _statement(self, name: str) -> PreparedStatement:
        stmt = self.statements.get(name)
        if stmt is None:
            label = f'prepared statement "{name}"' if name else "unnamed prepared statement"
            raise PgError(f"{label} does not exist", sqlstate="26000")
        return stmt

    def _bind(self, msg: m.Bind) -> None:
        """PostgreSQL's exec_bind_message checks, in its order: an open named portal (42P03),
        format count, parameter count (08P01), format codes (22023)."""
        assert self.executor is not None
        if msg.portal and msg.portal in self.portals:
            raise DuplicateCursor(f'cursor "{msg.portal}" already exists')
        stmt = self._statement(msg.statement)
        n = len(msg.params)
        fmts = msg.param_formats
        if len(fmts) not in (0, 1, n):
            raise PgError(f"bind message has {len(fmts)} parameter formats but {n} parameters",
                          sqlstate="08P01")
        required = self._param_count(stmt, n)
        if required != n:
            raise PgError(f'bind message supplies {n} parameters, but prepared statement '
                          f'"{stmt.name}" requires {required}', sqlstate="08P01")
        formats = tuple(fmts[0] if len(fmts) == 1 else (fmts[i] if fmts else 0) for i in range(n))
        for i, fmt in enumerate(formats):
            if fmt not in (0, 1):
                raise InvalidParameterValue(f"unsupported format code: {fmt}")
        typed = [stmt.oid_of(i) for i in range(n)]
        params = self.executor.backend.bind_params(
            WireParams(tuple(msg.params), formats, tuple(oid for oid, _ in typed)),
            lambda: self._decoded_params(msg, stmt, formats, typed))
        self.portals[msg.portal] = Portal(msg.portal, stmt, params, msg.result_formats)
        self.out.add(m.bind_complete())

    def _decoded_params(self, msg: m.Bind, stmt: PreparedStatement, formats: tuple[int, ...],
                        typed: list[tuple[int, bool]]) -> list[Any]:
        """A Bind's parameters as Python values, for a backend that takes them so."""
        assert self.executor is not None
        if stmt.resolved_oids is None and any(
                oid == 0 and fmt == 0 and raw is not None and raw[:1] == b"{"
                for (oid, _), fmt, raw in zip(typed, formats, msg.params)):
            # an untyped "{...}" is an array literal or a json object only the statement can
            # tell: infer its types now (only then: inference is not on the fast path)
            stmt.resolved_oids = tuple(self.executor.param_types(stmt.sql, stmt.param_oids))
            typed = [stmt.oid_of(i) for i in range(len(formats))]
        values = msg.params
        codec = self.encoding.codec
        if codec is not None:  # each value as its type reads it (pgproto.transcode)
            values = self._params_to_utf8(msg, formats, typed, codec)
        return [pgt.decode_param(raw, oid, fmt, strict=given)
                for raw, fmt, (oid, given) in zip(values, formats, typed)]

    @staticmethod
    def _params_to_utf8(msg: m.Bind, formats: tuple[int, ...], typed: list[tuple[int, bool]],
                        codec: encodings.Codec) -> tuple[bytes | None, ...]:
        """Bind values converted from the client encoding; an error names its parameter as
        PostgreSQL's CONTEXT does."""
        out = []
        for i, (raw, fmt, (oid, _)) in enumerate(zip(msg.params, formats, typed)):
            try:
                out.append(transcode.param_to_utf8(raw, fmt, oid, codec))
            except PgError as err:
                where = f'portal "{msg.portal}"' if msg.portal else "unnamed portal"
                err.fields["W"] = f"{where} parameter ${i + 1}"
                raise
        return tuple(out)

    def _param_count(self, stmt: PreparedStatement, supplied: int) -> int:
        """How many parameters ``stmt`` takes: the client's OIDs when they match what it
        supplies (no inference: the fast path), else the backend's inference, kept."""
        assert self.executor is not None
        if stmt.resolved_oids is None:
            if supplied == len(stmt.param_oids) or not stmt.sql:
                return len(stmt.param_oids)
            stmt.resolved_oids = tuple(self.executor.param_types(stmt.sql, stmt.param_oids))
        return max(len(stmt.resolved_oids), len(stmt.param_oids))

    @staticmethod
    def _check_result_formats(portal: Portal, columns: list[Column] | None, *,
                              codes: bool = True) -> None:
        """PostgreSQL's checks of the result formats of a portal that returns rows: a count
        that fits no column list is 08P01, a code neither text nor binary 22023 (``codes``:
        at Execute, as PostgreSQL's printtup finds it)."""
        if columns is None:
            return
        fmts = portal.result_formats
        if len(fmts) > 1 and len(fmts) != len(columns):
            raise PgError(f"bind message has {len(fmts)} result formats but query has "
                          f"{len(columns)} columns", sqlstate="08P01")
        if codes:
            for fmt in fmts:
                if fmt not in (0, 1):
                    raise InvalidParameterValue(f"unsupported format code: {fmt}")

    def _describe(self, msg: m.Describe) -> None:
        assert self.executor is not None
        if msg.kind == "S":
            stmt = self._statement(msg.name)
            if not stmt.sql:
                self.out.add(m.parameter_description(list(stmt.param_oids)))
                self.out.add(m.no_data())
                return
            try:
                oids, columns = self.executor.describe_statement(stmt.sql, stmt.param_oids)
            except NeedsExecution:
                oids, columns = self.executor.param_types(stmt.sql, stmt.param_oids), None
            # PostgreSQL reports unknown parameters as text
            oids = [o or pgt.TEXT for o in oids]
            stmt.resolved_oids = tuple(oids)
            self.out.add(m.parameter_description(oids))
            self.out.add(m.no_data() if columns is None else self._row_description(columns, None))
            return
        portal = self.portals.get(msg.name)
        if portal is None:
            # a SQL cursor (DECLARE) the backend session keeps: the same names as portals
            cursor_columns = self.executor.backend.sql_cursor_columns(msg.name) \
                if msg.name else None
            if cursor_columns is None:
                raise PgError(f'portal "{msg.name}" does not exist', sqlstate="34000")
            self.out.add(self._row_description(cursor_columns, None))
            return
        if portal.result is not None:
            columns = portal.result.columns
        else:
            try:
                columns = self.executor.describe(portal.statement.sql, portal.params or None) \
                    if portal.statement.sql else None
            except NeedsExecution:
                portal.describe_deferred = True
                return
        self._check_result_formats(portal, columns, codes=False)
        portal.described = columns
        self.out.add(m.no_data() if columns is None else self._row_description(columns, portal))

    def _execute(self, msg: m.Execute) -> None:
        stats = self.stats
        if stats is None:
            self._run_portal(msg)
            return
        started = perf_counter()
        portal = self.portals.get(msg.portal)
        number = _route_number(portal.statement.sql) if portal is not None else RELAYED
        try:
            self._run_portal(msg)
        except Exception as exc:
            stats.failed(number, as_pg_error(exc).sqlstate, perf_counter() - started)
            raise
        stats.ok_one(number, perf_counter() - started)

    def _run_portal(self, msg: m.Execute) -> None:
        portal = self.portals.get(msg.portal)
        if portal is None:
            raise PgError(f'portal "{msg.portal}" does not exist', sqlstate="34000")
        if not portal.statement.sql:
            self.out.add(m.empty_query_response())
            return
        if portal.done:
            # PostgreSQL answers an exhausted portal with an empty completion
            self.out.add(m.command_complete(portal.result.completion_tag(0) if portal.result else ""))
            return
        if portal.result is None:
            portal.result = self._begin_extended_implicit(portal.statement.sql)
        if portal.result is None and self._local_copy(portal.statement.sql) and \
                self._copy(portal.statement.sql, extended=True, alone=True):
            portal.done = True
            return
        if portal.result is None:
            portal.result = self._run(portal.statement.sql, portal.params or None,
                                      portal.result_formats, in_multi=self._ext_implicit)
            if portal.describe_deferred and portal.result.columns is not None:
                self.out.add(self._row_description(portal.result.columns, portal))
        result = portal.result
        if portal.sent == 0:
            self._check_result_formats(portal, result.columns)
        else:
            result.resume()  # a cancel sent while the portal was suspended is not for this
        if result.columns is None:
            portal.done = True
            self._complete(result, 0)
            return
        # PostgreSQL: a row count of 0 or less means every row
        if self._send_rows(result, portal, max(msg.max_rows, 0)):
            portal.done = True
            self._complete(result, portal.sent)
        else:
            self.out.add(m.portal_suspended())


_PLAIN_KIND, _CONTROL_KIND = Kind.PLAIN, Kind.CONTROL  # an Enum member lookup is slow


def _route_number(sql: str) -> int:
    """The ``route`` label of a statement (see :mod:`pgbarrier.metrics.statements`)."""
    kind = route(sql).kind
    return RELAYED if kind is _PLAIN_KIND else CONTROL if kind is _CONTROL_KIND else LOCAL


def _semicolon_ends_input(err: PgError, text: str) -> None:
    """A statement's ``syntax error at end of input`` where the Query goes on with the
    statement's ``;``: PostgreSQL's parser reads the ``;`` and says ``at or near ";"``."""
    if err.sqlstate != "42601" or err.message != "syntax error at end of input" or \
            not err.position:
        return
    at = err.position - 1
    while at < len(text) and text[at].isspace():
        at += 1
    if at < len(text) and text[at] == ";":
        err.message = 'syntax error at or near ";"'
        err.position = at + 1
