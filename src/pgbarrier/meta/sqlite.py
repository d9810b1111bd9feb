"""The default meta store: SQLite in the data dir (``meta.sqlite``).

Rules: a ``:memory:`` data dir gives an in-memory database (nothing survives,
as asked); otherwise WAL with ``synchronous=FULL``, so a committed write
survives ``kill -9`` and power loss. Uses the standard library's sqlite3.
"""

from __future__ import annotations

import os
import sqlite3

from pgbarrier.meta.sqlbase import SqlMetaStore

FILE_NAME = "meta.sqlite"


class SqliteMetaStore(SqlMetaStore):
    paramstyle = "?"

    def __init__(self, data_dir: str) -> None:
        if data_dir == ":memory:":
            path = ":memory:"
        else:
            os.makedirs(data_dir, exist_ok=True)
            path = os.path.join(data_dir, FILE_NAME)
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level="DEFERRED")
        try:
            if path != ":memory:":
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
            super().__init__(conn)
            self.migrate()
        except BaseException:
            conn.close()
            raise
