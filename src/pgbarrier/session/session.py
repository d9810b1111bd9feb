"""One client connection's protocol state, free of I/O.

The wire handler decodes frames and calls :meth:`Session.handle` with each
message; the session appends the encoded answers to its outbox, and the handler
writes them. Rules this module keeps:

* Simple Query: the text is split into statements; each gets its result; the
  first error stops the rest; an empty query gets EmptyQueryResponse; one
  ReadyForQuery ends it, carrying the transaction status (I/T/E).
* Extended Query: after an error every message up to Sync is skipped; Sync
  sends ReadyForQuery. Describe never executes: a portal's shape comes from the
  backend's planner, and only for ``DML ... RETURNING`` (whose shape DuckDB
  cannot tell without running it) is the RowDescription sent with Execute.
* Execute with a row limit sends at most that many rows and PortalSuspended;
  the next Execute resumes.
* A failing statement never ends the connection; only FATAL errors do (the
  handler closes after sending them).
"""

from __future__ import annotations

import logging
import re
import secrets
import threading
from typing import TYPE_CHECKING, Any

from pgbarrier.backends.duckdb import NeedsExecution
from pgbarrier.errors import (
    InvalidCatalogName,
    InvalidAuthorizationSpecification,
    InFailedSqlTransaction,
    PgError,
    as_pg_error,
)
from pgbarrier.result import Column, Result
from pgbarrier.session.executor import StatementExecutor
from pgbarrier.session.portal import Portal, PreparedStatement
from pgbarrier.session.transaction import TxState, after_error, after_success, allowed_when_failed
from pgbarrier.sql.classify import leading_words, split_statements
from pgbarrier.wire import messages as m
from pgbarrier.wire import types as pgt

if TYPE_CHECKING:
    from pgbarrier.control import ControlPlane

log = logging.getLogger(__name__)

_PARAM_REF = re.compile(r"\$(\d+)")


class Session:
    """Protocol state of one connection; call :meth:`start`, then :meth:`handle`."""

    def __init__(self, control: ControlPlane, server_parameters: dict[str, str]) -> None:
        self.control = control
        self.server_parameters = server_parameters
        self.process_id = secrets.randbits(31)
        self.secret_key = secrets.randbits(32)
        self.out = m.Outbox()
        self.tx = TxState.IDLE
        self.skip_until_sync = False
        self.statements: dict[str, PreparedStatement] = {}
        self.portals: dict[str, Portal] = {}
        self.executor: StatementExecutor | None = None
        self.closed = False
        self._running = threading.Lock()

    # ------------------------------------------------------------------ start-up

    def start(self, startup: m.StartupMessage) -> None:
        """Authenticate (trust) and open the backend session; raises FATAL errors."""
        params = startup.parameters
        user = params.get("user")
        if not user:
            raise InvalidAuthorizationSpecification("no PostgreSQL user name specified in startup packet")
        database = params.get("database") or user
        if not self.control.database_exists(database):
            raise InvalidCatalogName(f'database "{database}" does not exist', severity="FATAL")
        info = self.control.open_session(user=user, database=database,
                                         application_name=params.get("application_name", ""))
        self.executor = StatementExecutor(self.control.connect_backend(database, user), self.control, info)
        self.out.add(m.authentication_ok())
        reported = dict(self.server_parameters)
        reported["application_name"] = params.get("application_name", "")
        reported["session_authorization"] = user
        for name, value in reported.items():
            self.out.add(m.parameter_status(name, value))
        self.out.add(m.backend_key_data(self.process_id, self.secret_key))
        self.out.add(m.ready_for_query(self.tx.value))

    # ------------------------------------------------------------------ dispatch

    def handle(self, msg: m.FrontendMessage) -> None:
        with self._running:
            if isinstance(msg, m.Query):
                self._simple_query(msg.sql)
            elif isinstance(msg, m.Sync):
                self.skip_until_sync = False
                self.out.add(m.ready_for_query(self.tx.value))
            elif isinstance(msg, (m.Flush, m.Terminate)):
                return
            elif self.skip_until_sync:
                return
            else:
                try:
                    self._extended(msg)
                except Exception as exc:  # every failure becomes an ErrorResponse
                    self._error(exc)
                    self.skip_until_sync = True

    def cancel(self) -> None:
        """Cancel the running statement (called from another thread)."""
        if self.executor is not None:
            self.executor.backend.interrupt()
            self.control.cancel(self.executor.info)

    def close(self) -> None:
        if self.executor is not None and not self.closed:
            self.closed = True
            self.executor.backend.close()
            self.control.close_session(self.executor.info)

    # ------------------------------------------------------------------ helpers

    def _error(self, exc: BaseException) -> None:
        err = as_pg_error(exc)
        if not isinstance(exc, PgError):
            log.exception("internal error", exc_info=exc)
        self.out.add(m.error_response(err))

    def _run(self, sql: str, params: list[Any] | None) -> Result:
        assert self.executor is not None
        first = (leading_words(sql, 1) or (None,))[0]
        if self.tx is TxState.FAILED and not allowed_when_failed(first):
            raise InFailedSqlTransaction()
        try:
            if self.tx is TxState.FAILED and first in ("COMMIT", "END"):
                self.executor.backend.execute("ROLLBACK")
                result = Result(tag="ROLLBACK")
            else:
                result = self.executor.execute(sql, params, self.tx)
        except BaseException:
            self.tx = after_error(self.tx)
            raise
        self.tx = after_success(self.tx, first)
        return result

    def _row_description(self, columns: list[Column], portal: Portal | None) -> bytes:
        fields = [
            m.FieldDescription(
                c.name, c.type_oid, c.type_size, c.type_modifier,
                self._format(portal, i, c.type_oid))
            for i, c in enumerate(columns)
        ]
        return m.row_description(fields)

    def _format(self, portal: Portal | None, index: int, type_oid: int) -> int:
        if portal is None:
            return 0
        if self.executor is not None and self.executor.backend.raw_format == 0:
            # the backend relays the upstream's text bytes: every column goes out
            # in text, whatever the client asked (the same answer at Describe and
            # at Execute, for control-plane results too)
            return 0
        fmt = portal.format_of(index)
        return 1 if fmt == 1 and pgt.supports_binary(type_oid) else 0

    def _send_rows(self, result: Result, portal: Portal | None, limit: int) -> bool:
        """Send rows; True when the row set is exhausted."""
        columns = result.columns or []
        rows = result.rows()
        sent = 0
        out = self.out
        if result.raw_format == 0:
            # already PostgreSQL text bytes (an upstream's own): relayed as they are
            def encode(row: tuple[Any, ...]) -> list[bytes | None]:
                return list(row)
        else:
            encoders = [pgt.encoder(c.type_oid, self._format(portal, i, c.type_oid))
                        for i, c in enumerate(columns)]

            def encode(row: tuple[Any, ...]) -> list[bytes | None]:
                return [None if v is None else enc(v) for enc, v in zip(encoders, row)]
        for row in rows:
            out.add(m.data_row(encode(row)))
            sent += 1
            if limit and sent >= limit:
                if portal is not None:
                    portal.sent += sent
                return False
        if portal is not None:
            portal.sent += sent
            self._last_count = portal.sent
        else:
            self._last_count = sent
        return True

    def _complete(self, result: Result, count: int) -> None:
        for notice in result.notices:
            self.out.add(m.notice_response(notice))
        self.out.add(m.command_complete(result.completion_tag(count)))

    # ------------------------------------------------------------------ simple query

    def _simple_query(self, text: str) -> None:
        self.skip_until_sync = False
        pieces = split_statements(text)
        if not pieces:
            self.out.add(m.empty_query_response())
        for piece in pieces:
            try:
                result = self._run(piece.text, None)
                if result.columns is not None:
                    self.out.add(self._row_description(result.columns, None))
                    self._send_rows(result, None, 0)
                    count = self._last_count
                else:
                    count = 0
                self._complete(result, count)
            except Exception as exc:
                if isinstance(exc, PgError):
                    exc.with_position_offset(piece.offset)
                self._error(exc)
                break
        self.out.add(m.ready_for_query(self.tx.value))

    # ------------------------------------------------------------------ extended query

    def _extended(self, msg: m.FrontendMessage) -> None:
        if isinstance(msg, m.Parse):
            self._parse(msg)
        elif isinstance(msg, m.Bind):
            self._bind(msg)
        elif isinstance(msg, m.Describe):
            self._describe(msg)
        elif isinstance(msg, m.Execute):
            self._execute(msg)
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
            label = f'"{name}"' if name else "unnamed prepared statement"
            raise PgError(f"prepared statement {label} does not exist", sqlstate="26000")
        return stmt

    def _bind(self, msg: m.Bind) -> None:
        stmt = self._statement(msg.statement)
        n = len(msg.params)
        fmts = msg.param_formats
        if len(fmts) not in (0, 1, n):
            raise PgError(f"bind message has {len(fmts)} parameter formats but {n} parameters",
                          sqlstate="08P01")
        params = []
        for i, raw in enumerate(msg.params):
            fmt = fmts[0] if len(fmts) == 1 else (fmts[i] if fmts else 0)
            oid = stmt.param_oids[i] if i < len(stmt.param_oids) else 0
            params.append(pgt.decode_param(raw, oid, fmt))
        self.portals[msg.portal] = Portal(msg.portal, stmt, params, msg.result_formats)
        self.out.add(m.bind_complete())

    def _param_count(self, stmt: PreparedStatement) -> int:
        refs = [int(x) for x in _PARAM_REF.findall(stmt.sql)]
        return max([len(stmt.param_oids), *refs])

    def _describe(self, msg: m.Describe) -> None:
        assert self.executor is not None
        if msg.kind == "S":
            stmt = self._statement(msg.name)
            n = self._param_count(stmt)
            oids = [stmt.param_oids[i] if i < len(stmt.param_oids) and stmt.param_oids[i]
                    else pgt.TEXT for i in range(n)]
            self.out.add(m.parameter_description(oids))
            try:
                columns = self.executor.describe(stmt.sql, [None] * n if n else None) if stmt.sql else None
            except NeedsExecution:
                columns = None
            self.out.add(m.no_data() if columns is None else self._row_description(columns, None))
            return
        portal = self.portals.get(msg.name)
        if portal is None:
            raise PgError(f'portal "{msg.name}" does not exist', sqlstate="34000")
        if portal.result is not None:
            columns = portal.result.columns
        else:
            try:
                columns = self.executor.describe(portal.statement.sql, portal.params or None) \
                    if portal.statement.sql else None
            except NeedsExecution:
                portal.describe_deferred = True
                return
        portal.described = columns
        self.out.add(m.no_data() if columns is None else self._row_description(columns, portal))

    def _execute(self, msg: m.Execute) -> None:
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
            portal.result = self._run(portal.statement.sql, portal.params or None)
            if portal.describe_deferred and portal.result.columns is not None:
                self.out.add(self._row_description(portal.result.columns, portal))
        result = portal.result
        if result.columns is None:
            portal.done = True
            self._complete(result, 0)
            return
        if self._send_rows(result, portal, msg.max_rows):
            portal.done = True
            self._complete(result, portal.sent)
        else:
            self.out.add(m.portal_suspended())
