"""SIGTERM: stop accepting, a grace period for running statements, then cancel; exit 0 (issue 5).

A real server process each time. The tests synchronise on its log: the server
logs ``connection <pid>: statement started`` at DEBUG when a statement begins
(so the test knows it is running before it sends SIGTERM) and ``not accepting
connections`` once the listening socket is closed. A statement that must
outlast SIGTERM and then finish on cue waits on a PostgreSQL advisory lock the
test holds; one that must be cancelled is a DuckDB cross join that would run for
hours. No sleeps, no timing assertions.
"""

from __future__ import annotations

import select
import signal
import threading
import uuid

import psycopg
import pytest
from psycopg import errors as pgerr

from conftest import UPSTREAM, ServerProcess, require_postgres, start_server, stop_server

#: minutes of work for DuckDB, and it checks for interrupts as it goes
ENDLESS = ("SELECT count(*) FROM range(1000000000) a, range(1000000) b "
           "WHERE a.range + b.range = -1")


def _start(tmp_path, *extra: str) -> ServerProcess:
    return start_server("--data-dir", str(tmp_path / "data"), "--barrier-interval-ms", "200",
                        "--log-level", "DEBUG", *extra)


class _Statement:
    """A statement on ``conn`` in a thread, with its first row or its exception."""

    def __init__(self, conn: psycopg.Connection, sql: str) -> None:
        self.outcome: list[object] = []
        self.thread = threading.Thread(target=self._run, args=(conn, sql))
        self.thread.start()

    def _run(self, conn: psycopg.Connection, sql: str) -> None:
        try:
            self.outcome.append(conn.execute(sql).fetchone())
        except Exception as exc:  # noqa: BLE001 - the test checks it
            self.outcome.append(exc)

    def result(self) -> object:
        self.thread.join(timeout=120)
        assert not self.thread.is_alive(), "the statement never ended"
        return self.outcome[0]


def _sigterm_and_wait_closed(srv: ServerProcess) -> None:
    srv.proc.send_signal(signal.SIGTERM)
    assert srv.wait_for_log("not accepting connections"), "".join(srv.log)


def _assert_terminated(conn: psycopg.Connection) -> None:
    """The idle connection was sent FATAL 57P01: read it before sending anything (a
    query sent to the closed socket could be answered by a reset instead)."""
    select.select([conn.fileno()], [], [], 30)
    conn.pgconn.consume_input()
    with pytest.raises(pgerr.AdminShutdown) as info:
        conn.execute("SELECT 1")
    assert info.value.diag.severity == "FATAL"
    assert info.value.diag.message_primary == "terminating connection due to administrator command"


def test_sigterm_cancels_a_statement_after_the_grace_period_and_keeps_state(tmp_path):
    srv = _start(tmp_path, "--shutdown-grace-sec", "0.5")
    with psycopg.connect(srv.dsn(), autocommit=True) as c:
        c.execute("ALTER DATABASE dev PAUSE")
    idle = psycopg.connect(srv.dsn(), autocommit=True)
    busy = psycopg.connect(srv.dsn(), autocommit=True)
    statement = _Statement(busy, ENDLESS)
    assert srv.wait_for_log(f"connection {busy.info.backend_pid}: statement started")

    _sigterm_and_wait_closed(srv)
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(srv.dsn(), connect_timeout=10)
    error = statement.result()
    assert isinstance(error, pgerr.AdminShutdown), error
    assert error.diag.severity == "FATAL"
    assert srv.proc.wait(timeout=60) == 0, "".join(srv.log)
    assert any("grace period over: cancelling the statements of 1 connection" in line
               for line in srv.log)
    _assert_terminated(idle)
    idle.close()
    busy.close()

    srv = _start(tmp_path)
    try:
        with psycopg.connect(srv.dsn(), autocommit=True) as c:
            assert c.execute("SELECT paused, paused_by FROM rw_catalog.rw_databases "
                             "WHERE name = 'dev'").fetchone() == (True, "root")
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)


def test_sigterm_lets_a_statement_finish_within_the_grace_period(tmp_path):
    dsn = require_postgres()
    database = f"pgb_{uuid.uuid4().hex[:10]}"
    srv = _start(tmp_path, "--upstream", UPSTREAM, "--database", database,
                 "--shutdown-grace-sec", "600")
    key = 0x5EED
    try:
        with psycopg.connect(srv.dsn(database), autocommit=True) as c:
            c.execute(f"ALTER DATABASE {database} PAUSE")
        # advisory locks are per database: hold it in the upstream database pgbarrier uses
        holder = psycopg.connect(dsn.rsplit("/", 1)[0] + "/" + database, autocommit=True)
        holder.execute("SELECT pg_advisory_lock(%s)", (key,))
        idle = psycopg.connect(srv.dsn(database), autocommit=True)
        busy = psycopg.connect(srv.dsn(database), autocommit=True)
        statement = _Statement(busy, f"SELECT 'finished' FROM pg_advisory_xact_lock({key})")
        assert srv.wait_for_log(f"connection {busy.info.backend_pid}: statement started")

        _sigterm_and_wait_closed(srv)
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(srv.dsn(database), connect_timeout=10)
        _assert_terminated(idle)  # idle sessions end at once, during the grace period
        assert statement.thread.is_alive(), "the running statement was not given its grace"
        holder.execute("SELECT pg_advisory_unlock(%s)", (key,))
        assert statement.result() == ("finished",)
        assert srv.proc.wait(timeout=60) == 0, "".join(srv.log)
        assert not any("grace period over" in line for line in srv.log)
        with pytest.raises(psycopg.OperationalError):
            busy.execute("SELECT 1")  # then its connection was ended too
        for conn in (holder, idle, busy):
            conn.close()

        srv = _start(tmp_path, "--upstream", UPSTREAM, "--database", database)
        with psycopg.connect(srv.dsn(database), autocommit=True) as c:
            assert c.execute("SELECT paused FROM rw_catalog.rw_databases "
                             f"WHERE name = '{database}'").fetchone() == (True,)
        assert stop_server(srv) == 0, "".join(srv.log)
    finally:
        if srv.proc.poll() is None:
            srv.proc.kill()
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
