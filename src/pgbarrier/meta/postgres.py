"""The PostgreSQL meta store (``--meta-store postgresql://...``).

Rules: everything lives in its own schema (``pgbarrier_meta`` unless told
otherwise), created and migrated at start; one psycopg connection, each call
one committed transaction, opened again when the server dropped it (the
transaction that found it dropped fails). ``connect_timeout`` (seconds) applies
only when the DSN does not set its own. With ``migrate=False`` (a process that may only follow,
see :mod:`pgbarrier.meta.election`) the schema is only checked: a store newer than this
code is refused, an older or empty one is left for the leader to migrate.

The store unreachable (its server stopped, restarted, killed, the connection cut) fails
the call that found it so with :class:`~pgbarrier.meta.sqlbase.StoreFailure` SQLSTATE
25006 ``cannot record this change: the meta store is unavailable`` (what a PostgreSQL
standby answers a write with; the leader's lock session is on the same server, so the
process is stepping down meanwhile), the driver's reason as the DETAIL. The next call
connects again.
"""

from __future__ import annotations

import select
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from pgbarrier.meta.sqlbase import SqlMetaStore, StoreFailure

DEFAULT_SCHEMA = "pgbarrier_meta"
#: the store connection's application_name in pg_stat_activity, unless the DSN sets one
APPLICATION_NAME = "pgbarrier-meta"


class PostgresMetaStore(SqlMetaStore):
    paramstyle = "%s"

    def _newest_first_plan(self, cur: Any) -> None:
        # right after a bulk load the history has no statistics: the planner then guesses a
        # handful of rows per job and picks a bitmap scan plus a sort of the job's whole
        # history (~90 ms a job at 100,000 runs) over the backward index scan the LIMIT
        # wants. Transaction-local, for start-up's load only.
        cur.execute("SET LOCAL enable_bitmapscan = off")
        cur.execute("SET LOCAL enable_seqscan = off")
        cur.execute("SET LOCAL enable_sort = off")

    def __init__(self, dsn: str, schema: str = DEFAULT_SCHEMA, *,
                 connect_timeout: int | None = None, migrate: bool = True) -> None:
        self.dsn, self.schema = dsn, schema
        given = conninfo_to_dict(dsn)
        self._extra: dict[str, Any] = {}
        if connect_timeout is not None and "connect_timeout" not in given:
            self._extra["connect_timeout"] = connect_timeout
        if "application_name" not in given:
            self._extra["application_name"] = APPLICATION_NAME
        conn = psycopg.connect(dsn, **self._extra)
        try:
            quoted = sql.Identifier(schema).as_string(conn)
            super().__init__(conn, prefix=quoted + ".")
            if migrate:
                self.migrate()
            else:
                self._check_version()
        except BaseException:
            conn.close()
            raise

    def migrate(self) -> None:
        # the schema too: a process that may only follow creates nothing (two starting at once
        # would race on CREATE SCHEMA); an elected leader migrates under its lock
        with self._tx() as cur:
            cur.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(
                sql.Identifier(self.schema)))
        super().migrate()

    def _failure(self, exc: BaseException) -> StoreFailure | None:
        if not isinstance(exc, psycopg.OperationalError):
            return None
        state = exc.sqlstate
        if state is not None and not self._conn.broken and not state.startswith(("08", "57P")):
            return None  # the server's answer to this statement (a lock timeout, say)
        return StoreFailure("cannot record this change: the meta store is unavailable",
                            sqlstate="25006", detail=" ".join(str(exc).split()),
                            hint="Retry when the meta store is back: nothing acknowledged "
                                 "is lost.")

    def _reconnect_if_broken(self) -> None:
        # a connection the server dropped (a restart, pg_terminate_backend) is opened again
        # for the next transaction; the one that found it broken has failed its caller. An
        # idle connection with something to read was ended by the server (its FATAL and the
        # close wait in the socket): it is replaced now, so this transaction does not fail
        # for what happened while the connection was idle
        conn = self._conn
        suspect = conn.broken or conn.closed
        if not suspect:
            try:  # nothing else ever comes unasked on this connection (no LISTEN, no SET)
                suspect = bool(select.select([conn.fileno()], [], [], 0)[0])
            except (OSError, ValueError):
                suspect = True
        if suspect:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - already broken
                pass
            self._conn = psycopg.connect(self.dsn, **self._extra)

    def _check_version(self) -> None:
        with self._tx() as cur:
            cur.execute("SELECT to_regclass(%s)", (self._p + "meta_info",))
            if cur.fetchone()[0] is None:
                return
            self._version_in(cur)
