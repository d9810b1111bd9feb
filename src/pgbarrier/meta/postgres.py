"""The PostgreSQL meta store (``--meta-store postgresql://...``).

Rules: everything lives in its own schema (``pgbarrier_meta`` unless told
otherwise), created and migrated at start; one psycopg connection, each call
one committed transaction. ``connect_timeout`` (seconds) applies only when
the DSN does not set its own.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from pgbarrier.meta.sqlbase import SqlMetaStore

DEFAULT_SCHEMA = "pgbarrier_meta"


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
                 connect_timeout: int | None = None) -> None:
        extra = {}
        if connect_timeout is not None and "connect_timeout" not in conninfo_to_dict(dsn):
            extra["connect_timeout"] = connect_timeout
        conn = psycopg.connect(dsn, **extra)
        try:
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
            conn.commit()
            quoted = sql.Identifier(schema).as_string(conn)
            super().__init__(conn, prefix=quoted + ".")
            self.migrate()
        except BaseException:
            conn.close()
            raise
