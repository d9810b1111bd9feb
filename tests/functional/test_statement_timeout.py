"""statement_timeout and CancelRequest stop every statement, the first snapshot of a
batch-refresh CREATE included (issue 11, item 5), on both backends."""

from __future__ import annotations

import threading
import time
import uuid

import psycopg
import pytest

from tests.conftest import run_in_background

#: would run for many minutes on either backend; every test stops it long before
HEAVY = {
    "duckdb": "SELECT count(*) AS n FROM range(1000000000) a, range(1000000) b "
              "WHERE a.range + b.range < 0",
    "postgres": "SELECT count(*) AS n FROM generate_series(1, 100000000000) g WHERE g < 0",
}
#: how long a stopped statement may take to end (it would otherwise run for minutes)
STOP_WITHIN_S = 60


def _run_bounded(conn, sql: str, params=None) -> BaseException | None:
    """Run ``sql``; its exception (or None). Fails when it does not end in time."""
    outcome: list[BaseException | None] = []

    def go() -> None:
        try:
            conn.execute(sql, params)
            outcome.append(None)
        except Exception as exc:  # noqa: BLE001 - returned to the test
            outcome.append(exc)

    thread = threading.Thread(target=go)
    thread.start()
    thread.join(STOP_WITHIN_S)
    assert not thread.is_alive(), f"{sql!r} was not stopped"
    return outcome[0]


def test_statement_timeout_stops_a_query(backend_server):
    with psycopg.connect(backend_server.dsn(), autocommit=True) as conn:
        conn.execute("SET statement_timeout = '300ms'")
        err = _run_bounded(conn, HEAVY[backend_server.kind])
        assert isinstance(err, psycopg.errors.QueryCanceled), err
        assert "statement timeout" in str(err)
        # the session goes on, and a quick statement is not affected
        assert conn.execute("SELECT 1").fetchone() == (1,)
        conn.execute("RESET statement_timeout")
        assert conn.execute("SHOW statement_timeout").fetchone() == ("0",)


def test_statement_timeout_in_the_extended_protocol(backend_server):
    with psycopg.connect(backend_server.dsn()) as conn:  # a transaction, parameters
        conn.execute("SET statement_timeout = 300")
        err = _run_bounded(conn, HEAVY[backend_server.kind] + " AND %s = 1", [1])
        assert isinstance(err, psycopg.errors.QueryCanceled), err
        assert "statement timeout" in str(err)
        conn.rollback()
        assert conn.execute("SELECT %s::int", [7]).fetchone() == (7,)


def _create_heavy(kind: str, name: str) -> str:
    return (f"CREATE MATERIALIZED VIEW {name} WITH (refresh.interval.sec = 60) AS "
            + HEAVY[kind])


def _assert_nothing_left(conn, name: str) -> None:
    """A stopped CREATE left no job behind and its name is free again."""
    names = [r[0] for r in conn.execute("SHOW MATERIALIZED VIEWS")]
    assert name not in names
    conn.execute(f"CREATE MATERIALIZED VIEW {name} WITH (refresh.interval.sec = 60) "
                 "AS SELECT 1 AS x")
    assert conn.execute(f"SELECT x FROM {name}").fetchone() == (1,)
    conn.execute(f"DROP MATERIALIZED VIEW {name}")


def test_statement_timeout_stops_the_first_snapshot(backend_server):
    kind = backend_server.kind
    with psycopg.connect(backend_server.dsn(), autocommit=True) as conn:
        conn.execute("DROP MATERIALIZED VIEW IF EXISTS heavy_timeout")
        conn.execute("SET statement_timeout = '500ms'")
        err = _run_bounded(conn, _create_heavy(kind, "heavy_timeout"))
        assert isinstance(err, psycopg.errors.QueryCanceled), err
        assert "statement timeout" in str(err)
        conn.execute("RESET statement_timeout")
        _assert_nothing_left(conn, "heavy_timeout")


def test_cancel_request_stops_the_first_snapshot(backend_server):
    kind = backend_server.kind
    with psycopg.connect(backend_server.dsn(), autocommit=True) as conn:
        conn.execute("DROP MATERIALIZED VIEW IF EXISTS heavy_cancel")
        job = run_in_background(conn, _create_heavy(kind, "heavy_cancel"))
        job.cancel_until_done(conn)
        assert job.done.is_set(), "the CREATE did not end after CancelRequests"
        (err,) = job.outcome
        assert isinstance(err, psycopg.errors.QueryCanceled), err
        assert "user request" in str(err)
        _assert_nothing_left(conn, "heavy_cancel")


def test_a_timeout_that_did_not_fire_never_hits_a_later_statement(backend_server):
    with psycopg.connect(backend_server.dsn(), autocommit=True) as conn:
        conn.execute("SET statement_timeout = '200ms'")
        for _ in range(200):  # each ends well before its deadline
            assert conn.execute("SELECT 1").fetchone() == (1,)
        conn.execute("SET statement_timeout = 0")
        # a statement longer than the old timeout runs to its end
        assert conn.execute("SELECT count(*) FROM (VALUES (1), (2)) t(x)").fetchone() == (2,)


def _heavy_refresh_view(conn, name: str) -> None:
    """A batch view quick to create whose next refresh runs for minutes (a cross join of a
    table that grew)."""
    conn.execute(f"DROP MATERIALIZED VIEW IF EXISTS {name}")
    conn.execute(f"DROP TABLE IF EXISTS {name}_src")
    conn.execute(f"CREATE TABLE {name}_src (x bigint)")
    conn.execute(f"INSERT INTO {name}_src VALUES (1)")
    # a condition no optimizer can decide from the columns' statistics
    conn.execute(f"CREATE MATERIALIZED VIEW {name} WITH (refresh.interval.sec = 3600) AS "
                 f"SELECT count(*) AS n FROM {name}_src a, {name}_src b "
                 "WHERE (a.x * 31 + b.x * 17) % 1000003 = 5")
    for _ in range(5):  # about 10^5 distinct rows: the refresh's join is 10^10 pairs
        conn.execute(f"INSERT INTO {name}_src SELECT x * 10 + v.i FROM {name}_src CROSS JOIN "
                     "(VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9)) v(i)")


def test_statement_timeout_and_cancel_stop_a_manual_refresh(backend_server):
    name = f"heavy_refresh_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(backend_server.dsn(), autocommit=True) as conn:
        _heavy_refresh_view(conn, name)
        conn.execute("SET statement_timeout = '500ms'")
        err = _run_bounded(conn, f"REFRESH MATERIALIZED VIEW {name}")
        assert isinstance(err, psycopg.errors.QueryCanceled), err
        assert "statement timeout" in str(err)
        conn.execute("RESET statement_timeout")
        job = run_in_background(conn, f"REFRESH MATERIALIZED VIEW {name}")
        # cancel once its run has started: a cancel that lands before (while it waits for
        # a barrier) ends the statement before there is a run to record
        with psycopg.connect(backend_server.dsn(), autocommit=True) as watcher:
            deadline = time.monotonic() + 30
            while watcher.execute(
                    "SELECT count(*) FROM rw_catalog.rw_refresh_history WHERE job = %s "
                    "AND \"trigger\" = 'manual'", [name]).fetchone()[0] < 2:
                assert time.monotonic() < deadline, "the second refresh never started"
                time.sleep(0.02)  # polling observed state against a deadline
        job.cancel_until_done(conn)
        (err,) = job.outcome
        assert isinstance(err, psycopg.errors.QueryCanceled), err
        # the view keeps its last result, and the runs are recorded cancelled
        assert conn.execute(f"SELECT n FROM {name}").fetchone() == (0,)
        statuses = [r[0] for r in conn.execute(
            "SELECT status FROM rw_catalog.rw_refresh_history WHERE job = %s "
            "AND \"trigger\" = 'manual' ORDER BY run_id", [name])]
        assert statuses == ["cancelled", "cancelled"], statuses
        conn.execute(f"DROP MATERIALIZED VIEW {name}")
        conn.execute(f"DROP TABLE {name}_src")
