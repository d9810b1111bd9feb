"""Runs one SQL statement for a session: control plane, catalog, or backend.

Rules this module keeps:

* The cheap classifier decides first; only statements that may be pgbarrier's
  own are parsed with sqlglot (``parse_control``), and one that starts like ours
  but does not parse is a 42601 error, never passed through.
* Control statements are refused inside a transaction block (25001), as
  PostgreSQL refuses ``CREATE DATABASE`` there.
* Queries that mention ``rw_catalog`` get its tables substituted on the AST;
  everything else goes to the backend unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pgbarrier.errors import ActiveSqlTransaction
from pgbarrier.result import Column, Result
from pgbarrier.session.transaction import TxState
from pgbarrier.sql import classify
from pgbarrier.sql.catalog_rewrite import rewrite_catalog_refs
from pgbarrier.sql.statements import parse_control

if TYPE_CHECKING:
    from pgbarrier.backends.base import BackendSession
    from pgbarrier.control import ControlPlane, SessionInfo


class StatementExecutor:
    def __init__(self, backend: BackendSession, control: ControlPlane, info: SessionInfo) -> None:
        self.backend = backend
        self.control = control
        self.info = info

    def _backend_sql(self, sql: str) -> str:
        if classify.mentions_rw_catalog(sql):
            return rewrite_catalog_refs(sql, self.control.catalog_tables(), self.control.dialect)
        return sql

    def execute(self, sql: str, params: list[Any] | None, tx: TxState) -> Result:
        if classify.is_control(sql):
            stmt = parse_control(sql)
            if tx is not TxState.IDLE:
                raise ActiveSqlTransaction(
                    f"{self.control.statement_name(stmt)} cannot run inside a transaction block")
            return self.control.execute(stmt, self.info)
        return self.backend.execute(self._backend_sql(sql), params)

    def describe(self, sql: str, params: list[Any] | None) -> list[Column] | None:
        """Row shape without executing (may raise NeedsExecution for DML ... RETURNING)."""
        if classify.is_control(sql):
            return self.control.describe(parse_control(sql))
        return self.backend.describe(self._backend_sql(sql), params)
