"""The PostgreSQL meta store (``--meta-store postgresql://...``).

Rules: everything lives in its own schema (``pgbarrier_meta`` unless told
otherwise), created and migrated at start; one psycopg connection, each call
one committed transaction. ``connect_timeout`` (seconds) applies only when
the DSN does not set its own.
"""

from __future__ import annotations

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from pgbarrier.meta.sqlbase import SqlMetaStore

DEFAULT_SCHEMA = "pgbarrier_meta"


class PostgresMetaStore(SqlMetaStore):
    paramstyle = "%s"

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
