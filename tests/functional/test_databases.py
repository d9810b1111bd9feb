"""CREATE / DROP DATABASE and SHOW DATABASES on the embedded backend."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import errors as pgerr


def test_databases_are_independent_and_drop_refuses_connected_sessions(server):
    with psycopg.connect(server.dsn(), autocommit=True) as dev:
        assert dev.execute("CREATE DATABASE analytics").statusmessage == "CREATE DATABASE"
        with pytest.raises(pgerr.DuplicateDatabase):
            dev.execute("CREATE DATABASE analytics")
        assert ("analytics",) in dev.execute("SHOW DATABASES").fetchall()
        with psycopg.connect(server.dsn(database="analytics"), autocommit=True) as other:
            other.execute("CREATE TABLE t (x INT)")
            other.execute("ALTER DATABASE analytics PAUSE")
            paused = dict(dev.execute("SELECT name, paused FROM rw_catalog.rw_databases").fetchall())
            assert paused == {"analytics": True, "dev": False}, "pausing one database leaves the other"
            with pytest.raises(pgerr.ObjectInUse) as info:
                dev.execute("DROP DATABASE analytics")
            assert info.value.diag.message_detail == "There is 1 other session using the database."
            with pytest.raises(pgerr.ObjectInUse):
                other.execute("DROP DATABASE analytics")
        assert dev.execute("DROP DATABASE analytics").statusmessage == "DROP DATABASE"
        assert ("analytics",) not in dev.execute("SHOW DATABASES").fetchall()
        with pytest.raises(pgerr.InvalidCatalogName):
            dev.execute("DROP DATABASE analytics")
        dev.execute("DROP DATABASE IF EXISTS analytics")
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(server.dsn(database="analytics"), connect_timeout=10)
