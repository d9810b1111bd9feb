"""The PostgreSQL meta store (``--meta-store postgresql://...``).

Rules: everything lives in its own schema (``pgbarrier_meta`` unless told
otherwise), created and migrated at start; one psycopg connection, each call
one committed transaction, opened again when the server dropped it (the
transaction that found it dropped fails). ``connect_timeout`` (seconds) applies
only when the DSN does not set its own. With ``migrate=False`` (a process that may only follow,
see :mod:`pgbarrier.meta.election`) the schema is only checked: a store newer than this
code is refused, an older or empty one is left for the leader to migrate.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from pgbarrier.meta.sqlbase import SqlMetaStore

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

    def _reconnect_if_broken(self) -> None:
        # a connection the server dropped (a restart, pg_terminate_backend) is opened again
        # for the next transaction; the one that found it broken has failed its caller
        if self._conn.broken:
            self._conn = psycopg.connect(self.dsn, **self._extra)

    def _check_version(self) -> None:
        with self._tx() as cur:
            cur.execute("SELECT to_regclass(%s)", (self._p + "meta_info",))
            if cur.fetchone()[0] is None:
                return
            self._version_in(cur)
