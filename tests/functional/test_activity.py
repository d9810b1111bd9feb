"""Sessions you can see and end on DuckDB (issue 16 item 3): pg_stat_activity,
pg_backend_pid(), pg_cancel_backend() and pg_terminate_backend(), against a real server
with psycopg."""

from __future__ import annotations

import time
import uuid

import psycopg
import pytest
from psycopg import errors as pgerr

from tests.conftest import run_in_background, start_server, stop_server

#: runs for many minutes on DuckDB (test_statement_timeout's); every test stops it
HEAVY = ("SELECT count(*) AS n FROM range(1000000000) a, range(1000000) b "
         "WHERE a.range + b.range < 0")
#: how long a state a test waits for may take to show
DEADLINE_S = 30

ACTIVITY = ("SELECT datname, usename, application_name, state, query, backend_type, "
            "client_addr, client_port, backend_start, query_start, state_change, xact_start, "
            "wait_event_type, wait_event FROM pg_stat_activity WHERE pid = %s")


@pytest.fixture(scope="module")
def srv():
    s = start_server()
    yield s
    assert stop_server(s) == 0, "server did not exit cleanly:\n" + "".join(s.log)


def _connect(srv, user: str = "root", app: str = "", **kw) -> psycopg.Connection:
    return psycopg.connect(srv.dsn(user=user), autocommit=True, application_name=app, **kw)


def _row(watcher, pid: int):
    return watcher.execute(ACTIVITY, [pid]).fetchone()


def _until(watcher, pid: int, check) -> tuple:
    """The victim's pg_stat_activity row once ``check(row)`` holds (queried again and
    again; fails after DEADLINE_S)."""
    deadline = time.monotonic() + DEADLINE_S
    row = None
    while time.monotonic() < deadline:
        row = _row(watcher, pid)
        if row is not None and check(row):
            return row
    pytest.fail(f"pg_stat_activity never showed it: last {row!r}")


def test_backend_pid_is_the_key_data_pid(srv):
    with _connect(srv) as conn:
        assert conn.execute("SELECT pg_backend_pid()").fetchone() == (conn.info.backend_pid,)
        assert conn.execute("SELECT pg_catalog.pg_backend_pid()").fetchone()[0] \
            == conn.info.backend_pid


def test_activity_lists_another_session_idle_then_active(srv):
    app = "act-" + uuid.uuid4().hex[:8]
    with _connect(srv, app=app) as victim, _connect(srv) as watcher:
        victim.execute("SELECT 41 + 1")
        pid = victim.info.backend_pid
        row = _row(watcher, pid)
        (datname, usename, appname, state, query, btype, addr, port, bstart, qstart,
         changed, xstart, wtype, wevent) = row
        assert (datname, usename, appname, state, btype) == ("dev", "root", app, "idle",
                                                             "client backend")
        assert query == "SELECT 41 + 1"
        assert addr == "127.0.0.1" and isinstance(port, int) and port > 0
        assert bstart <= qstart <= changed
        assert xstart is None and wtype is None and wevent is None
        # datid is the database's pg_database.oid
        assert watcher.execute("SELECT count(*) FROM pg_stat_activity a JOIN pg_database d "
                               "ON d.oid = a.datid AND d.datname = a.datname WHERE a.pid = %s",
                               [pid]).fetchone() == (1,)

        # one row per session; the watcher sees itself active, running this very query
        own = watcher.execute("SELECT state, query FROM pg_stat_activity WHERE pid = "
                              "pg_backend_pid()").fetchone()
        assert own[0] == "active" and "pg_backend_pid()" in own[1]
        pids = [r[0] for r in watcher.execute("SELECT pid FROM pg_stat_activity")]
        assert len(pids) == len(set(pids)) and {pid, watcher.info.backend_pid} <= set(pids)

        victim.autocommit = False
        victim.execute("SELECT 2")
        assert _row(watcher, pid)[3] == "idle in transaction"
        assert _row(watcher, pid)[11] is not None
        with pytest.raises(pgerr.DivisionByZero):
            victim.execute("SELECT 1 / 0")
        assert _row(watcher, pid)[3] == "idle in transaction (aborted)"
        victim.rollback()
        victim.autocommit = True

        running = run_in_background(victim, HEAVY)
        try:
            row = _until(watcher, pid, lambda r: r[3] == "active")
            assert row[4] == HEAVY and row[11] is not None and row[12] is None
        finally:
            running.cancel_until_done(victim)
        assert isinstance(running.outcome[0], pgerr.QueryCanceled)


def test_long_query_text_is_cut_like_track_activity_query_size(srv):
    with _connect(srv) as victim, _connect(srv) as watcher:
        long_sql = "SELECT '" + "é" * 2000 + "' AS x"
        victim.execute(long_sql)
        query = _row(watcher, victim.info.backend_pid)[4]
        assert len(query.encode()) <= 1023 and long_sql.startswith(query) and len(query) > 400


def test_wait_for_resume_is_a_wait_event(srv):
    db = "w" + uuid.uuid4().hex[:8]
    with _connect(srv) as admin:
        admin.execute(f"CREATE DATABASE {db}")
    t, v = "t_" + uuid.uuid4().hex[:6], "v_" + uuid.uuid4().hex[:6]
    dsn = srv.dsn(database=db)
    with psycopg.connect(dsn, autocommit=True) as c, \
            psycopg.connect(dsn, autocommit=True) as other:
        c.execute(f"CREATE TABLE {t} (id INT)")
        c.execute("SET batch_refresh_when_paused = 'wait'")
        other.execute(f"ALTER DATABASE {db} PAUSE")
        create = run_in_background(
            c, f"CREATE MATERIALIZED VIEW {v} BATCH REFRESH AS SELECT id FROM {t}")
        try:
            row = _until(other, c.info.backend_pid, lambda r: r[12] is not None)
            assert (row[3], row[12], row[13]) == ("active", "IPC", "BarrierResume")
        finally:
            other.execute(f"ALTER DATABASE {db} RESUME")
        assert create.done.wait(60), "the create never finished"
        create.thread.join()
        assert create.outcome == ["done"]
        row = _row(other, c.info.backend_pid)
        assert row[3] == "idle" and row[12] is None and row[13] is None


def test_cancel_backend_stops_another_sessions_statement(srv):
    with _connect(srv) as victim, _connect(srv) as killer:
        pid = victim.info.backend_pid
        running = run_in_background(victim, HEAVY)
        try:
            _until(killer, pid, lambda r: r[3] == "active")
            deadline = time.monotonic() + DEADLINE_S
            while not running.done.wait(0.1) and time.monotonic() < deadline:
                # a cancel landing before DuckDB starts the query is lost: repeated
                assert killer.execute("SELECT pg_cancel_backend(%s)", [pid]).fetchone() \
                    == (True,)
        finally:
            running.cancel_until_done(victim)
        err = running.outcome[0]
        assert isinstance(err, pgerr.QueryCanceled), err
        assert err.sqlstate == "57014"
        assert victim.execute("SELECT 7").fetchone() == (7,)  # the session goes on


def test_terminate_backend_ends_a_session_with_57p01(srv):
    app = "term-" + uuid.uuid4().hex[:8]
    victim = _connect(srv, app=app)
    try:
        pid = victim.info.backend_pid
        assert victim.execute("SELECT 1").fetchone() == (1,)
        with _connect(srv) as killer:
            got = killer.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                 "WHERE application_name = %s", [app]).fetchall()
            assert got == [(True,)]
            with pytest.raises(psycopg.OperationalError) as info:
                victim.execute("SELECT 1")
            sqlstate = getattr(info.value, "sqlstate", None)
            assert sqlstate == "57P01" or \
                "terminating connection due to administrator command" in str(info.value)
            assert victim.closed or victim.broken
            # the session is gone from pg_stat_activity
            deadline = time.monotonic() + DEADLINE_S
            while _row(killer, pid) is not None:
                assert time.monotonic() < deadline, "the terminated session is still listed"
    finally:
        victim.close()


def test_terminate_backend_ends_a_running_statement_with_57p01(srv):
    victim = _connect(srv)
    try:
        pid = victim.info.backend_pid
        running = run_in_background(victim, HEAVY)
        with _connect(srv) as killer:
            _until(killer, pid, lambda r: r[3] == "active")
            # one call: the server repeats the cancel until the statement ends
            assert killer.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone() \
                == (True,)
            assert running.done.wait(DEADLINE_S), "the terminated statement goes on"
        running.thread.join(60)
        err = running.outcome[0]
        assert isinstance(err, psycopg.OperationalError), err
        assert err.sqlstate == "57P01", err
        assert victim.closed or victim.broken
    finally:
        victim.close()


def test_signal_to_a_pid_that_is_no_session_is_false(srv):
    with _connect(srv) as conn:
        pids = {r[0] for r in conn.execute("SELECT pid FROM pg_stat_activity")}
        nobody = next(p for p in range(12345, 12400) if p not in pids)
        warnings = []
        conn.add_notice_handler(lambda d: warnings.append((d.severity, d.message_primary)))
        assert conn.execute("SELECT pg_terminate_backend(%s), pg_cancel_backend(%s)",
                            [nobody, nobody]).fetchone() == (False, False)
        assert warnings == [("WARNING", f"PID {nobody} is not a PostgreSQL backend process")] * 2
        warnings.clear()
        assert conn.execute("SELECT pg_backend_pid()").fetchone() == (conn.info.backend_pid,)
        assert warnings == []
        assert conn.execute("SELECT pg_terminate_backend(NULL)").fetchone() == (None,)


def test_another_users_session_is_42501(srv):
    with _connect(srv, user="alice") as victim, _connect(srv, user="bob") as other:
        pid = victim.info.backend_pid
        with pytest.raises(pgerr.InsufficientPrivilege) as info:
            other.execute("SELECT pg_terminate_backend(%s)", [pid])
        assert info.value.diag.message_primary == (
            "must be a member of the role whose process is being terminated or member of "
            "pg_signal_backend")
        with pytest.raises(pgerr.InsufficientPrivilege) as info:
            other.execute("SELECT pg_cancel_backend(%s)", [pid])
        assert "being canceled" in info.value.diag.message_primary
        assert victim.execute("SELECT 3").fetchone() == (3,)  # not signalled
        assert other.execute("SELECT 4").fetchone() == (4,)
