"""Issue 28, item 2: the SQLite meta store's file cannot be written while pgbarrier runs.

How the fault is made without mounting anything or dropping root (both fragile in CI):
the running server's file-size limit (``RLIMIT_FSIZE``, set from outside with
``prlimit(2)``) is lowered to 0, so every write to a regular file fails with ``EFBIG``
(Python ignores ``SIGXFSZ``), exactly what SQLite sees when the disk refuses a write; the
limit is raised again to end the fault. The data plane is the upstream PostgreSQL on
127.0.0.1:5432 (a fresh database, dropped after), so the meta store is the only file the
server writes. SQLITE_FULL itself (a full disk, 53100) is shown on a real SQLite file in
``tests/unit/test_meta_store_failures.py``.

While the file cannot be written, control statements are refused with PostgreSQL's
SQLSTATE (58030 ``io_error``, or 53100 when SQLite reports the disk full) as an ERROR: the
session goes on, nothing of the refused change shows, and everything acknowledged before
and after survives a restart.
"""

from __future__ import annotations

import resource
import uuid

import psycopg
import pytest

from tests.conftest import UPSTREAM, require_postgres, start_server, stop_server


def _limit_file_size(pid: int, soft: int) -> None:
    _, hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (soft, hard))


def _databases(c: psycopg.Connection) -> list[tuple]:
    return c.execute("SELECT name, paused, paused_at, paused_by FROM rw_catalog.rw_databases "
                     "ORDER BY name").fetchall()


def _jobs(c: psycopg.Connection) -> list[str]:
    return [r[0] for r in c.execute("SELECT name FROM rw_catalog.rw_batch_refresh_jobs "
                                    "ORDER BY name")]


@pytest.mark.skipif(not hasattr(resource, "prlimit"), reason="needs Linux prlimit(2)")
def test_an_unwritable_sqlite_meta_store_refuses_control_statements_and_loses_nothing(tmp_path):
    admin = require_postgres()
    database = f"pgb_sq_{uuid.uuid4().hex[:10]}"
    other = database + "_p"
    data = str(tmp_path / "data")
    args = ("--upstream", UPSTREAM, "--database", database, "--data-dir", data)
    srv = start_server(*args)
    try:
        dsn = lambda db: srv.dsn(db, user="postgres")  # noqa: E731
        with psycopg.connect(dsn(database), autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{other}"')
            c.execute("CREATE TABLE t (id int)")
            c.execute("CREATE MATERIALIZED VIEW mv WITH (refresh.interval.sec = 3600) AS "
                      "SELECT count(*) AS n FROM t")
            c.execute(f'ALTER DATABASE "{other}" PAUSE')
            before = _databases(c)

        _limit_file_size(srv.proc.pid, 0)
        try:
            with psycopg.connect(dsn(database), autocommit=True) as c:
                for statement in (f'ALTER DATABASE "{other}" RESUME',
                                  "CREATE MATERIALIZED VIEW mv2 WITH (refresh.interval.sec = "
                                  "3600) AS SELECT count(*) AS n FROM t",
                                  "DROP MATERIALIZED VIEW mv"):
                    with pytest.raises(psycopg.Error) as info:
                        c.execute(statement)
                    err = info.value
                    print(statement, "->", err.sqlstate, err.diag.message_primary)
                    assert err.sqlstate in ("58030", "53100"), repr(err)
                    assert err.diag.severity_nonlocalized == "ERROR", repr(err)
                    assert err.diag.message_primary.startswith(
                        "could not write to the meta store "), err.diag.message_primary
                    assert c.execute("SELECT 1").fetchone() == (1,)  # the session goes on
                # nothing of the refused changes shows
                assert _databases(c) == before
                assert _jobs(c) == ["mv"]
        finally:
            _limit_file_size(srv.proc.pid, resource.RLIM_INFINITY)

        with psycopg.connect(dsn(database), autocommit=True) as c:  # works again at once
            c.execute(f'ALTER DATABASE "{other}" RESUME')
            c.execute("CREATE MATERIALIZED VIEW mv3 WITH (refresh.interval.sec = 3600) AS "
                      "SELECT count(*) AS n FROM t")
            after = _databases(c)
        assert [r for r in after if r[0] == other][0][1] is False
        assert stop_server(srv) == 0, "".join(srv.log)
        log_text = "".join(srv.log)
        assert "Traceback" not in log_text and "XX000" not in log_text, log_text[-6000:]

        srv = start_server(*args)  # everything acknowledged is there after a restart
        with psycopg.connect(dsn(database), autocommit=True) as c:
            assert [(r[0], r[1]) for r in _databases(c)] == [(r[0], r[1]) for r in after]
            assert _jobs(c) == ["mv", "mv3"]
            c.execute("REFRESH MATERIALIZED VIEW mv")  # the refused DROP left it whole
            assert c.execute("SELECT n FROM mv").fetchone() == (0,)
    finally:
        if srv.proc.poll() is None:
            stop_server(srv)
        with psycopg.connect(admin, autocommit=True) as conn:
            for name in (database, other):
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
