"""The PostgreSQL meta store (``--meta-store postgresql://...``).

Rules: everything lives in its own schema (``pgbarrier_meta`` unless told
otherwise), created and migrated at start; one psycopg connection, each call
one committed transaction.
"""

from __future__ import annotations

import psycopg
from psycopg import sql

from pgbarrier.meta.sqlbase import SqlMetaStore

DEFAULT_SCHEMA = "pgbarrier_meta"


class PostgresMetaStore(SqlMetaStore):
    paramstyle = "%s"

    def __init__(self, dsn: str, schema: str = DEFAULT_SCHEMA) -> None:
        conn = psycopg.connect(dsn)
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        conn.commit()
        quoted = sql.Identifier(schema).as_string(conn)
        super().__init__(conn, prefix=quoted + ".")
        self.migrate()
