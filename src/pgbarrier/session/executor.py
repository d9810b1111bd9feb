"""Runs one SQL statement for a session: control plane, own settings, catalog, or backend.

Rules this module keeps:

* Where a statement goes is :func:`pgbarrier.sql.route.route`'s decision (cheap
  checks, cached per text), read here and not made again; only ``CONTROL`` statements
  are parsed with sqlglot (``parse_control``), and one that starts like ours but does
  not parse is a 42601 error, never passed through.
* A control statement the control plane says is PostgreSQL's own
  (``ControlPlane.passes_through``: a materialized view upstream that is not a
  batch-refresh view) goes to the backend session as the client wrote it, under
  PostgreSQL's rules (transaction blocks included).
* Control statements that change state are refused inside a transaction block
  (25001), as PostgreSQL refuses ``CREATE DATABASE`` there; a simple Query with
  several statements is such a block (PostgreSQL's implicit transaction), so
  there they are refused too, wherever they stand in it (``in_multi``).
* A control statement's identifiers longer than 63 bytes are cut (PostgreSQL's
  NAMEDATALEN) and its result carries PostgreSQL's NOTICE 42622 for each.
* pgbarrier's own settings (:mod:`pgbarrier.session.settings`) are kept per
  session; ``statement_timeout`` also reaches a PostgreSQL backend, ``lock_timeout``
  (which bounds the control plane's waits for a view name) every backend.
* ``CATALOG`` statements (they mention ``rw_catalog``) get its tables substituted on the AST;
  everything else goes to the backend unchanged, with the client's Bind
  parameters and result formats.
* A statement whose ``CASCADE`` would drop pgbarrier's materialized views
  (:class:`~pgbarrier.backends.base.DropsMaterializedViews`) has the control plane drop
  them first (their jobs durably, as ``DROP MATERIALIZED VIEW`` does), then the rest of
  the statement runs as the backend decided it;
  inside a transaction block it is refused (25001), as the control statements are.
* Describing never executes: control statements and own settings are described
  here, everything else by the backend (row shape and parameter types).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pgbarrier.backends.base import DropsMaterializedViews, PassThrough
from pgbarrier.errors import ActiveSqlTransaction
from pgbarrier.result import Column, Result, command, rowset
from pgbarrier.session import settings
from pgbarrier.session.transaction import TxState
from pgbarrier.sql.catalog_rewrite import rewrite_catalog_refs
from pgbarrier.sql.classify import leading_words
from pgbarrier.sql.route import Kind, Route, route
from pgbarrier.sql.controls import parse_control
from pgbarrier.sql.statements import truncation_notices
from pgbarrier.pgproto import types as pgt

if TYPE_CHECKING:
    from pgbarrier.backends.base import BackendSession, WireParams
    from pgbarrier.control import ControlPlane, SessionInfo


def _tag(sql: str) -> str:
    words = leading_words(sql, 2)
    return " ".join(words[:2]) + " ... CASCADE"


class StatementExecutor:
    def __init__(self, backend: BackendSession, control: ControlPlane, info: SessionInfo) -> None:
        self.backend = backend
        self.control = control
        self.info = info

    def _backend_sql(self, sql: str, r: Route) -> str:
        if r.kind is Kind.CATALOG:
            return rewrite_catalog_refs(sql, self.control.catalog_tables(), self.control.dialect)
        return sql

    def _setting(self, stmt: settings.SettingStatement, sql: str) -> Result:
        info = self.info
        if stmt.name == settings.WHEN_PAUSED:
            if stmt.verb == "SHOW":
                return rowset([Column(stmt.name, pgt.TEXT)], [(info.when_paused,)], "SHOW")
            info.when_paused = "error" if stmt.verb == "RESET" else \
                settings.parse_when_paused(stmt.value or "")
            return command(stmt.verb)
        # statement_timeout and the idle timeouts
        field = settings.TIMEOUTS[stmt.name]
        if stmt.verb == "SHOW":
            return rowset([Column(stmt.name, pgt.TEXT)],
                          [(settings.show_timeout(getattr(info, field)),)], "SHOW")
        timeout = 0 if stmt.verb == "RESET" else settings.parse_timeout_ms(stmt.value or "",
                                                                           stmt.name)
        if stmt.name == settings.LOCK_TIMEOUT or (
                self.control.dialect == "postgres" and stmt.name == settings.STATEMENT_TIMEOUT):
            self.backend.execute(sql, None)  # lock_timeout: the backend keeps its own copy too
        setattr(info, field, timeout)
        self.backend.remember_setting(stmt.name, settings.show_timeout(timeout))
        return command(stmt.verb)

    def execute(self, sql: str, params: list[Any] | WireParams | None, tx: TxState, *,
                result_formats: tuple[int, ...] = (), in_multi: bool = False) -> Result:
        r = route(sql)
        if r.kind is Kind.CONTROL:
            stmt = parse_control(sql)
            if self.control.passes_through(stmt, self.info, self.backend):
                # PostgreSQL's own materialized view upstream: the text goes unchanged
                return self.backend.execute(sql, params, result_formats)
            if (tx is not TxState.IDLE or in_multi) and not self.control.allowed_in_transaction(stmt):
                raise ActiveSqlTransaction(
                    f"{self.control.statement_name(stmt)} cannot run inside a transaction block")
            try:
                result = self.control.execute(stmt, self.info, self.backend)
            except PassThrough:  # PostgreSQL's own after all: as passes_through would
                return self.backend.execute(sql, params, result_formats)
            notices = truncation_notices(sql)
            if notices:
                result.notices[:0] = notices
            return result
        if r.setting is not None:
            return self._setting(r.setting, sql)
        try:
            return self.backend.execute(self._backend_sql(sql, r), params, result_formats)
        except DropsMaterializedViews as drops:
            if tx is not TxState.IDLE or in_multi:
                raise ActiveSqlTransaction(
                    f"{_tag(sql)} cannot run inside a transaction block",
                    detail="It drops pgbarrier's materialized view"
                           f"{'s' if len(drops.names) > 1 else ''} "
                           + ", ".join(f'"{n}"' for n in drops.names)
                           + ", whose refresh jobs are dropped durably outside any "
                             "transaction.",
                    hint="Drop the materialized views first, or run the statement on "
                         "its own.") from None
            self.control.drop_views(drops.names, self.info, self.backend)
            return drops.resume()

    def describe(self, sql: str, params: list[Any] | WireParams | None) -> list[Column] | None:
        """Row shape without executing (may raise NeedsExecution for DML ... RETURNING)."""
        r = route(sql)
        if r.kind is Kind.CONTROL:
            return self.control.describe(parse_control(sql))
        own = r.setting
        if own is not None:
            return [Column(own.name, pgt.TEXT)] if own.verb == "SHOW" else None
        return self.backend.describe(self._backend_sql(sql, r), params)

    def describe_statement(self, sql: str, param_oids: tuple[int, ...]
                           ) -> tuple[list[int], list[Column] | None]:
        """Parameter type OIDs and row shape of a prepared statement, without executing."""
        r = route(sql)
        if r.kind is Kind.CONTROL or r.setting is not None:
            return list(param_oids), self.describe(sql, None)
        return self.backend.describe_statement(self._backend_sql(sql, r), param_oids)

    def param_types(self, sql: str, param_oids: tuple[int, ...]) -> list[int]:
        """Parameter type OIDs (the client's, the rest inferred by the backend), without executing."""
        r = route(sql)
        if r.kind is Kind.CONTROL or r.setting is not None:
            return list(param_oids)
        return self.backend.param_types(self._backend_sql(sql, r), param_oids)
