"""ALTER DATABASE d PAUSE [FOR interval] [REASON 'text'] (issue 29, item 2).

In-process on both data backends with a manual clock (an hour-long barrier interval: the
tests move time and let FLUSH carry it); then a real server killed with -9 while a timed
pause runs out, and a leader failover. Waits are polls with deadlines, never sleeps as
synchronisation.
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import errors as pgerr

from conftest import ServerProcess, inprocess_app, start_server, stop_server
from pgbarrier.barrier.clock import ManualClock, SystemClock
from test_batch_refresh import Harness
from test_durability import meta_args  # noqa: F401 - a fixture: SQLite, then PostgreSQL
from test_leader_election import cluster  # noqa: F401 - a fixture: two processes, one store

POLL_S = 30.0


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def h(request) -> Iterator[Harness]:
    database = f"pgb_{uuid.uuid4().hex[:10]}"
    clock = ManualClock(SystemClock().now_ms())
    with inprocess_app(request.param, database, clock) as app:
        yield Harness(app, clock, database, app.server.port)
        with psycopg.connect(host="127.0.0.1", port=app.server.port, user="root",
                             dbname=database, autocommit=True) as c:
            c.execute(f"ALTER DATABASE {database} RESUME")


def _state(conn, db: str) -> tuple:
    return conn.execute("SELECT paused, paused_by, pause_reason, resumes_at - paused_at "
                        "FROM rw_catalog.rw_databases WHERE name = %s", (db,)).fetchone()


def _until_running(conn, db: str, nudge=None) -> None:
    """Poll (with a deadline) until ``db`` is no longer paused; ``nudge`` runs between polls
    (a FLUSH: barriers are what notice a deadline that has passed)."""
    deadline = time.monotonic() + POLL_S
    while time.monotonic() < deadline:
        if nudge is not None:
            nudge()
        if conn.execute("SELECT paused FROM rw_catalog.rw_databases WHERE name = %s",
                        (db,)).fetchone() == (False,):
            return
    raise AssertionError(f"database {db} still paused after {POLL_S} s")


def _notices(conn) -> list[str]:
    got: list[str] = []
    conn.add_notice_handler(lambda d: got.append(d.message_primary))
    return got


def test_a_timed_pause_resumes_by_itself_and_names_its_reason(h):
    db = h.database
    t = f"t_{uuid.uuid4().hex[:6]}"
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT)")
        c.execute(f"ALTER DATABASE {db} PAUSE FOR INTERVAL '10 minutes' REASON 'nightly load'")
        assert _state(c, db) == (True, "root", "nightly load", dt.timedelta(minutes=10))
        with pytest.raises(pgerr.ObjectNotInPrerequisiteState) as e:
            c.execute(f"CREATE MATERIALIZED VIEW v_{t} BATCH REFRESH AS SELECT id FROM {t}")
        paused_at, resumes_at = c.execute(
            "SELECT paused_at, resumes_at FROM rw_catalog.rw_databases WHERE name = %s",
            (db,)).fetchone()
        utc = dt.timezone.utc
        assert e.value.diag.message_detail == (
            f'database "{db}" was paused at {paused_at.astimezone(utc):%Y-%m-%d %H:%M:%S}+00 '
            f"by root: nightly load; it resumes at "
            f"{resumes_at.astimezone(utc):%Y-%m-%d %H:%M:%S}+00")
        h.clock.advance(9 * 60_000)
        h.settle(c)
        assert _state(c, db)[0] is True, "not before its deadline"
        h.clock.advance(60_000)
        _until_running(c, db, lambda: c.execute("FLUSH"))
        assert _state(c, db) == (False, None, None, None)
        c.execute(f"CREATE MATERIALIZED VIEW v_{t} BATCH REFRESH AS SELECT id FROM {t}")


def test_pause_replaces_deadline_and_reason_and_resume_clears_them(h):
    db = h.database
    with h.connect() as c:
        notices = _notices(c)
        c.execute(f"ALTER DATABASE {db} PAUSE FOR '1 minute'")
        assert _state(c, db) == (True, "root", None, dt.timedelta(minutes=1))
        c.execute(f"ALTER DATABASE {db} PAUSE FOR '1 hour' REASON 'longer'")
        assert notices[-1] == f'database "{db}" is already paused; its deadline and reason are replaced'
        assert _state(c, db) == (True, "root", "longer", dt.timedelta(hours=1))
        h.clock.advance(2 * 60_000)
        h.settle(c)
        assert _state(c, db)[0] is True, "the replaced deadline resumes nothing"
        c.execute(f"ALTER DATABASE {db} PAUSE REASON 'until further notice'")
        assert _state(c, db) == (True, "root", "until further notice", None)
        n = len(notices)
        c.execute(f"ALTER DATABASE {db} PAUSE REASON 'until further notice'")
        assert notices[n:] == [f'database "{db}" is already paused, nothing to do']
        h.clock.advance(2 * 3600_000)
        h.settle(c)
        assert _state(c, db)[0] is True, "no deadline any more"
        c.execute(f"ALTER DATABASE {db} RESUME")
        assert _state(c, db) == (False, None, None, None)


@pytest.mark.parametrize(("clause", "sqlstate"), [
    ("FOR 'soon'", "22007"), ("FOR INTERVAL '-5 minutes'", "22023"), ("FOR '0'", "22023"),
    ("FOR '10 minutes ago'", "22023"), ("FOR 10", "42601"), ("REASON", "42601"),
    ("FOR '1 minute' FOR '2 minutes'", "42601"), ("UNTIL '1 minute'", "42601"),
])
def test_bad_pauses_change_nothing(h, clause, sqlstate):
    db = h.database
    with h.connect() as c:
        with pytest.raises(psycopg.Error) as e:
            c.execute(f"ALTER DATABASE {db} PAUSE {clause}")
        assert e.value.sqlstate == sqlstate, e.value
        assert _state(c, db) == (False, None, None, None)
        c.execute(f"ALTER DATABASE {db} PAUSE FOR '1 hour'")
        with pytest.raises(psycopg.Error):
            c.execute(f"ALTER DATABASE {db} PAUSE {clause}")
        assert _state(c, db) == (True, "root", None, dt.timedelta(hours=1)), "kept as it was"
        c.execute(f"ALTER DATABASE {db} RESUME")


def test_a_deadline_that_passed_while_down_resumes_at_start_up(tmp_path, meta_args):
    srv = start_server("--data-dir", str(tmp_path / "data"), *meta_args)
    with psycopg.connect(srv.dsn(), autocommit=True) as c:
        c.execute("ALTER DATABASE dev PAUSE FOR '1 second' REASON 'short'")
        resumes_at = c.execute("SELECT resumes_at FROM rw_catalog.rw_databases "
                               "WHERE name = 'dev'").fetchone()[0]
    srv.proc.kill()  # kill -9 before the deadline (it is a second away)
    srv.proc.wait(timeout=30)
    # the scenario is downtime spanning the deadline: start again only once it has passed
    left = (resumes_at - dt.datetime.now(dt.timezone.utc)).total_seconds()
    if left > 0:
        time.sleep(left)
    srv = start_server("--data-dir", str(tmp_path / "data"), *meta_args)
    try:
        with psycopg.connect(srv.dsn(), autocommit=True) as c:
            _until_running(c, "dev")
            assert _state(c, "dev") == (False, None, None, None)
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)


def test_a_timed_pause_and_a_suspended_view_survive_a_leader_failover(cluster):
    from test_leader_election import _connect, _wait_until_serving

    a = cluster.start()
    b = cluster.start()
    db = cluster.database
    with _connect(a, db) as c:
        c.execute("CREATE TABLE t (id INT)")
        c.execute("CREATE MATERIALIZED VIEW mv BATCH REFRESH AS SELECT id FROM t")
        c.execute("ALTER MATERIALIZED VIEW mv SUSPEND REASON 'held'")
        c.execute(f'ALTER DATABASE "{db}" PAUSE FOR \'3 seconds\' REASON \'failover\'')
        assert _state(c, db)[:3] == (True, "root", "failover")
    a.proc.kill()  # kill -9 of the leader while the pause still runs
    a.proc.wait(timeout=30)
    _wait_until_serving(b, db, time.monotonic() + 60)
    with _connect(b, db) as c:
        _until_running(c, db)  # the new leader resumed it at its deadline
        assert c.execute("SELECT suspended, suspended_by, suspend_reason, status FROM "
                         "rw_catalog.rw_batch_refresh_jobs WHERE name = 'mv'").fetchone() == \
            (True, "root", "held", "suspended")
    assert stop_server(b) == 0, "".join(b.log)
