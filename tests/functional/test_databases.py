"""CREATE / DROP DATABASE and SHOW DATABASES, on the embedded backend and on an upstream PostgreSQL
(where each pgbarrier database is the upstream database of the same name: unique names, dropped
afterwards)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from psycopg import errors as pgerr

from conftest import UPSTREAM, ServerProcess, require_postgres, start_server, stop_server


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


@contextmanager
def _upstream_pgbarrier(tmp_path) -> Iterator[tuple[ServerProcess, str, str, str]]:
    """A pgbarrier in front of the PostgreSQL, its first database ``home``, and a free name
    ``other``; both upstream databases are dropped afterwards, and the server must exit
    cleanly."""
    dsn = require_postgres()
    home, other = f"pgb_{uuid.uuid4().hex[:10]}", f"pgb_{uuid.uuid4().hex[:10]}"
    srv = start_server("--upstream", UPSTREAM, "--database", home,
                       "--data-dir", str(tmp_path / "data"))
    try:
        yield srv, dsn, home, other
    finally:
        code = stop_server(srv)
        with psycopg.connect(dsn, autocommit=True) as conn:
            for name in (home, other):
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    assert code == 0, "".join(srv.log)


def _upstream_exists(dsn: str, name: str) -> bool:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                            [name]).fetchone() is not None


def test_create_and_drop_database_on_an_upstream_postgresql(tmp_path):
    with _upstream_pgbarrier(tmp_path) as (srv, dsn, home, other):
        assert _upstream_exists(dsn, home), "the first start creates the upstream database"
        with psycopg.connect(srv.dsn(home), autocommit=True) as c:
            assert c.execute(f"CREATE DATABASE {other}").statusmessage == "CREATE DATABASE"
            assert _upstream_exists(dsn, other)
            with pytest.raises(pgerr.DuplicateDatabase):
                c.execute(f"CREATE DATABASE {other}")
            with psycopg.connect(srv.dsn(other), autocommit=True) as o:
                o.execute("CREATE TABLE t (x INT)")
                o.execute("INSERT INTO t VALUES (1), (2)")
                # the table is in the upstream database of that name
                upstream = dsn.rsplit("/", 1)[0] + "/" + other
                with psycopg.connect(upstream, autocommit=True) as direct:
                    assert direct.execute("SELECT count(*) FROM t").fetchone() == (2,)
                with pytest.raises(pgerr.ObjectInUse) as info:
                    c.execute(f"DROP DATABASE {other}")
                assert info.value.diag.message_detail == \
                    "There is 1 other session using the database."
            assert _upstream_exists(dsn, other), "a refused DROP leaves the database"
            assert c.execute(f"DROP DATABASE {other}").statusmessage == "DROP DATABASE"
            assert not _upstream_exists(dsn, other)
            assert (other,) not in c.execute("SHOW DATABASES").fetchall()
            c.execute(f"DROP DATABASE IF EXISTS {other}")
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(srv.dsn(other), connect_timeout=10)


def test_drop_database_takes_its_batch_views_and_the_views_over_them(backend_server):
    db = f"dropdeps_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(backend_server.dsn(), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {db}")
        admin.execute(f"CREATE DATABASE {db}")
        with psycopg.connect(backend_server.dsn(db), autocommit=True) as c:
            c.execute("CREATE TABLE t AS SELECT 1 AS a")
            c.execute("CREATE MATERIALIZED VIEW bm WITH (refresh.interval.sec = 3600) "
                      "AS SELECT a FROM t")
            c.execute("CREATE VIEW over_bm AS SELECT a FROM bm")
        admin.execute(f"DROP DATABASE {db}")  # upstream, over_bm depends on bm
        admin.execute(f"CREATE DATABASE {db}")
        with psycopg.connect(backend_server.dsn(db), autocommit=True) as c:
            assert c.execute("SHOW MATERIALIZED VIEWS").fetchall() == []
            c.execute("CREATE TABLE t AS SELECT 2 AS a")
            c.execute("CREATE MATERIALIZED VIEW bm WITH (refresh.interval.sec = 3600) "
                      "AS SELECT a FROM t")
            assert c.execute("SELECT a FROM bm").fetchone() == (2,)
        admin.execute(f"DROP DATABASE {db}")


def test_create_database_options_and_drop_force_are_postgresqls_upstream(tmp_path):
    """Upstream, CREATE DATABASE's options are PostgreSQL's to judge (as the client's role)
    and DROP DATABASE ... WITH (FORCE) ends the other sessions with PostgreSQL's FATAL."""
    with _upstream_pgbarrier(tmp_path) as (srv, dsn, home, other):
        with psycopg.connect(srv.dsn(home), autocommit=True) as c:
            c.execute(f"CREATE DATABASE {other} WITH ENCODING utf8 LC_COLLATE \"C\" "
                      "LC_CTYPE \"C\" TEMPLATE template0 CONNECTION LIMIT 7")
            assert c.execute("SELECT datcollate, datconnlimit FROM pg_database WHERE datname = %s",
                             [other]).fetchone() == ("C", 7)
            assert (other,) in c.execute("SHOW DATABASES").fetchall()
            with pytest.raises(pgerr.SyntaxError, match='option "nope" not recognized') as bad:
                c.execute(f"CREATE DATABASE {other}_x WITH NOPE = 1")
            assert bad.value.diag.statement_position == str(len(f"CREATE DATABASE {other}_x WITH ") + 1)
            with pytest.raises(pgerr.UndefinedObject, match='role "pgb_no_such_role" does not exist'):
                c.execute(f"CREATE DATABASE {other}_y OWNER pgb_no_such_role")
            assert not _upstream_exists(dsn, f"{other}_x") and not _upstream_exists(dsn, f"{other}_y")
            with pytest.raises(pgerr.SyntaxError, match='unrecognized DROP DATABASE option "bar"'):
                c.execute(f"DROP DATABASE {other} (BAR)")
            victim = psycopg.connect(srv.dsn(other), autocommit=True)
            try:
                c.execute(f"DROP DATABASE {other} WITH (FORCE)")
                with pytest.raises(psycopg.OperationalError, match="administrator command"):
                    victim.execute("SELECT 1")
            finally:
                victim.close()
            assert not _upstream_exists(dsn, other)
            c.execute(f"DROP DATABASE IF EXISTS {other} (FORCE)")


def test_database_options_on_duckdb_are_refused_naming_the_option(server):
    with psycopg.connect(server.dsn(), autocommit=True) as c:
        with pytest.raises(pgerr.FeatureNotSupported,
                           match='CREATE DATABASE option "encoding" is not supported'):
            c.execute("CREATE DATABASE opt_db WITH ENCODING utf8")
        c.execute("CREATE DATABASE force_db")
        with psycopg.connect(server.dsn("force_db"), autocommit=True) as other:
            other.execute("SELECT 1")
            with pytest.raises(pgerr.FeatureNotSupported, match="FORCE"):
                c.execute("DROP DATABASE force_db WITH (FORCE)")
        c.execute("DROP DATABASE force_db (FORCE)")  # nobody else there: it just drops
        assert ("force_db",) not in c.execute("SHOW DATABASES").fetchall()


def test_alter_database_rename_moves_the_database_and_pgbarriers_record(backend_server):
    """ALTER DATABASE ... RENAME TO on both backends: the data, the pause state (when and
    by whom) and the epochs go with the name; PostgreSQL's refusals in PostgreSQL's order."""
    a, b = f"ren_{uuid.uuid4().hex[:8]}", f"ren_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(backend_server.dsn(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {a}")
        try:
            with psycopg.connect(backend_server.dsn(a), autocommit=True) as c:
                c.execute("CREATE TABLE t (x INT)")
                c.execute("INSERT INTO t VALUES (1), (2)")
                c.execute(f"ALTER DATABASE {a} PAUSE")
                *before, epoch = c.execute("SELECT paused_at, paused_by, committed_epoch FROM "
                                           "rw_catalog.rw_databases WHERE name = %s",
                                           [a]).fetchone()
                with pytest.raises(pgerr.FeatureNotSupported, match="current database cannot be renamed"):
                    c.execute(f"ALTER DATABASE {a} RENAME TO {b}")
                with pytest.raises(pgerr.ObjectInUse, match=f'database "{a}" is being accessed') as busy:
                    admin.execute(f"ALTER DATABASE {a} RENAME TO {b}")
                assert busy.value.diag.message_detail == "There is 1 other session using the database."
            with pytest.raises(pgerr.DuplicateDatabase, match='database "dev" already exists'):
                admin.execute(f"ALTER DATABASE {a} RENAME TO dev")
            with pytest.raises(pgerr.InvalidCatalogName, match=f'database "{b}" does not exist'):
                admin.execute(f"ALTER DATABASE {b} RENAME TO {a}")
            assert admin.execute(f"ALTER DATABASE {a} RENAME TO {b}").statusmessage == "ALTER DATABASE"
            names = [n for (n,) in admin.execute("SHOW DATABASES").fetchall()]
            assert b in names and a not in names
            listed = [n for (n,) in admin.execute("SELECT datname FROM pg_database").fetchall()]
            assert b in listed and a not in listed
            *after, epoch_after = admin.execute(
                "SELECT paused, paused_at, paused_by, committed_epoch FROM "
                "rw_catalog.rw_databases WHERE name = %s", [b]).fetchone()
            assert after == [True, *before]
            assert epoch_after >= epoch, "epochs go on from the old name's"
            with psycopg.connect(backend_server.dsn(b), autocommit=True) as c:
                assert c.execute("SELECT sum(x) FROM t").fetchone() == (3,)
                with pytest.raises(pgerr.ObjectNotInPrerequisiteState):
                    c.execute("CREATE MATERIALIZED VIEW m WITH (refresh.interval.sec = 60) "
                              "AS SELECT x FROM t")  # still paused under its new name
                c.execute(f"ALTER DATABASE {b} RESUME")
                c.execute("CREATE MATERIALIZED VIEW m WITH (refresh.interval.sec = 3600) AS "
                          "SELECT x FROM t")
            with pytest.raises(pgerr.FeatureNotSupported, match="batch refresh or streaming"):
                admin.execute(f"ALTER DATABASE {b} RENAME TO {a}")
            with pytest.raises(psycopg.OperationalError):
                psycopg.connect(backend_server.dsn(a), connect_timeout=10)
        finally:
            admin.execute(f"DROP DATABASE IF EXISTS {a}")
            admin.execute(f"DROP DATABASE IF EXISTS {b}")


def test_a_renamed_database_keeps_its_name_and_data_across_a_restart(tmp_path):
    data = str(tmp_path / "data")
    srv = start_server("--data-dir", data)
    try:
        with psycopg.connect(srv.dsn(), autocommit=True) as c:
            c.execute("CREATE DATABASE old_name")
            with psycopg.connect(srv.dsn("old_name"), autocommit=True) as o:
                o.execute("CREATE TABLE t AS SELECT 42 AS x")
            c.execute("ALTER DATABASE old_name RENAME TO new_name")
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)
    srv = start_server("--data-dir", data)
    try:
        with psycopg.connect(srv.dsn(), autocommit=True) as c:
            names = [n for (n,) in c.execute("SHOW DATABASES").fetchall()]
            assert "new_name" in names and "old_name" not in names
        with psycopg.connect(srv.dsn("new_name"), autocommit=True) as o:
            assert o.execute("SELECT x FROM t").fetchone() == (42,)
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)
