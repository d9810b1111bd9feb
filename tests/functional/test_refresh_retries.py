"""Retries, auto-suspend, catch-up and the history that shows them (issue 29, items 4, 5, 7).

The in-process tests run on both data backends with a manual clock and an hour-long
barrier interval (as test_batch_refresh.py): time moves with ``clock.advance``, FLUSH
checkpoints carry it, and a run's future says when it has ended. The kill -9 test runs a
real server process on each meta store (SQLite, PostgreSQL) and waits on conditions with
deadlines. A view fails by casting a text column that a test sets to ``'x'`` (22P02 on
both backends).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import errors as pgerr

from conftest import ServerProcess, start_server, stop_server
from test_batch_refresh import Harness, in_process
from test_durability import meta_args  # noqa: F401 - a fixture: SQLite, then PostgreSQL
from test_events import Listener


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def h(request) -> Iterator[Harness]:
    with in_process(request.param) as harness:
        yield harness


def _n(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:6]}"


JOB_COLS = ("status, suspended, suspended_by, suspend_reason, consecutive_failures, "
            "last_success_at, next_refresh_at, retry_backoff_sec, max_failures, jitter_sec, "
            "refresh_interval_sec")


def _job(conn, view: str) -> dict:
    cur = conn.execute(f"SELECT {JOB_COLS} FROM rw_catalog.rw_batch_refresh_jobs "
                       f"WHERE name = '{view}'")
    row = cur.fetchone()
    return None if row is None else dict(zip([d.name for d in cur.description], row))


def _history(conn, view: str) -> list[tuple]:
    return conn.execute(
        "SELECT trigger, status, sqlstate, error, duration_ms, node, target_epoch, started_at "
        f"FROM rw_catalog.rw_refresh_history WHERE job = '{view}' ORDER BY run_id").fetchall()


def _scheduled_run(h: Harness, c, view: str, advance_ms: int):
    """Move the clock (and a second more: epochs run ahead of a manual clock by a
    millisecond per barrier), let checkpoints carry it, and return the run that started."""
    before = h.app.scheduler.latest_run(h.database, view)
    h.clock.advance(advance_ms + 1_000)
    h.settle(c)
    fut = h.app.scheduler.latest_run(h.database, view)
    assert fut is not None and fut is not before, "a scheduled run started"
    return fut.result(timeout=60)


def test_failed_runs_are_retried_with_backoff_then_the_view_is_suspended(h):
    t, v = _n("t"), _n("v")
    with h.connect() as lc, h.connect() as c:
        listener = Listener(lc, "rw_barrier")
        c.execute(f"CREATE TABLE {t} (s TEXT)")
        c.execute(f"INSERT INTO {t} VALUES ('1')")
        c.execute(f"CREATE MATERIALIZED VIEW {v} WITH (refresh.interval.sec = 3600, "
                  "refresh.retry_backoff.sec = 10, refresh.max_failures = '3') "
                  f"AS SELECT CAST(s AS INTEGER) AS n FROM {t}")
        job = _job(c, v)
        assert (job["retry_backoff_sec"], job["max_failures"], job["jitter_sec"]) == (10, 3, 0)
        c.execute(f"UPDATE {t} SET s = 'x'")

        run = _scheduled_run(h, c, v, 3_600_000)
        assert (run.trigger, run.status, run.sqlstate) == ("schedule", "failed", "22P02")
        job = _job(c, v)
        assert job["status"] == "failed" and job["consecutive_failures"] == 1
        # retried after the backoff (10 s, jittered into [5 s, 10 s]), not a whole hour
        wait = (job["next_refresh_at"] - run.finished_at).total_seconds()
        assert 4 <= wait <= 11, wait
        h.clock.advance(4_000)
        h.settle(c)
        assert h.wait_run(v).run_id == run.run_id, "not before the backoff"

        run = _scheduled_run(h, c, v, 6_000)  # 11 s after the failure
        assert (run.trigger, run.status, run.sqlstate) == ("retry", "failed", "22P02")
        job = _job(c, v)
        assert job["consecutive_failures"] == 2
        wait = (job["next_refresh_at"] - run.finished_at).total_seconds()
        assert 9 <= wait <= 21, f"the backoff doubles: {wait}"

        run = _scheduled_run(h, c, v, 20_000)
        assert (run.trigger, run.status) == ("retry", "failed")
        job = _job(c, v)
        assert job["consecutive_failures"] == 3
        assert (job["status"], job["suspended"], job["suspended_by"]) == \
            ("suspended", True, "pgbarrier")
        assert job["suspend_reason"] == f"suspended after 3 consecutive failures: {run.error}"
        assert job["next_refresh_at"] is None
        # LISTEN rw_barrier hears of it as of a SUSPEND statement
        assert listener.payloads() == [{"database": h.database, "view": v, "event": "suspend",
                                        "by": "pgbarrier", "reason": job["suspend_reason"],
                                        "resumes_at": None}]

        # suspended: no more scheduled runs, the missed slot is one skipped row
        for _ in range(2):
            h.clock.advance(3_600_000)
            h.settle(c)
        assert h.wait_run(v).run_id == run.run_id
        rows = _history(c, v)
        assert [r[:3] for r in rows] == [
            ("create", "succeeded", None), ("schedule", "failed", "22P02"),
            ("retry", "failed", "22P02"), ("retry", "failed", "22P02"),
            ("retry", "skipped", None)]
        assert rows[-1][3].startswith(f'materialized view "{v}" was suspended at ')
        assert rows[-1][3].endswith(f"by pgbarrier: {job['suspend_reason']}")
        for trigger, status, _, error, duration, node, epoch, _ in rows[1:4]:
            assert "invalid input syntax for type integer" in error.lower() \
                or "could not convert" in error.lower(), error
            assert duration is not None and duration >= 0
            assert node and "pid" in node and epoch > 0

        # a manual refresh that fails does not count; one that succeeds resets the count
        with pytest.raises(pgerr.InvalidTextRepresentation):
            c.execute(f"REFRESH MATERIALIZED VIEW {v}")
        assert _job(c, v)["consecutive_failures"] == 3
        c.execute(f"UPDATE {t} SET s = '7'")
        c.execute(f"REFRESH MATERIALIZED VIEW {v}")
        job = _job(c, v)
        assert job["consecutive_failures"] == 0 and job["last_success_at"] is not None
        assert job["suspended"], "a manual refresh does not resume the view"
        assert c.execute(f"SELECT n FROM {v}").fetchall() == [(7,)]
        c.execute(f"ALTER MATERIALIZED VIEW {v} RESUME")
        assert _job(c, v)["status"] == "idle"


def test_max_failures_zero_never_suspends_and_the_backoff_is_capped_at_the_interval(h):
    t, v = _n("t"), _n("v")
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (s TEXT)")
        c.execute(f"INSERT INTO {t} VALUES ('1')")
        c.execute(f"CREATE MATERIALIZED VIEW {v} BATCH REFRESH EVERY 30 SECONDS "
                  f"WITH (refresh.max_failures = 0, refresh.retry_backoff.sec = 20) "
                  f"AS SELECT CAST(s AS INTEGER) AS n FROM {t}")
        c.execute(f"UPDATE {t} SET s = 'x'")
        run = _scheduled_run(h, c, v, 30_000)
        for n in range(2, 8):
            job = _job(c, v)
            wait = (job["next_refresh_at"] - run.finished_at).total_seconds()
            assert wait <= 31, f"capped at the interval: {wait}"
            run = _scheduled_run(h, c, v, 30_000)
            assert (run.trigger, run.status) == ("retry", "failed")
            assert _job(c, v)["consecutive_failures"] == n
        assert not _job(c, v)["suspended"]
        # a scheduled success resets the count
        c.execute(f"UPDATE {t} SET s = '2'")
        run = _scheduled_run(h, c, v, 30_000)
        assert (run.trigger, run.status) == ("retry", "succeeded")
        job = _job(c, v)
        assert job["consecutive_failures"] == 0 and job["status"] == "idle"
        assert (job["next_refresh_at"] - run.started_at).total_seconds() == \
            pytest.approx(30, abs=2), "back on its interval"


def test_after_a_long_pause_each_view_runs_once_spread_over_its_jitter(h):
    t = _n("t")
    views = [_n("v") for _ in range(6)]
    db = h.database
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT)")
        for v in views:
            c.execute(f"CREATE MATERIALIZED VIEW {v} BATCH REFRESH EVERY 1 MINUTE "
                      f"WITH (refresh.jitter.sec = 30) AS SELECT id FROM {t}")
        c.execute(f"ALTER DATABASE {db} PAUSE REASON 'nightly load'")
        try:
            for _ in range(5):  # many missed slots, over several checkpoints
                h.clock.advance(120_000)
                h.settle(c)
            for v in views:
                assert h.wait_run(v) is None
                skipped = [r for r in _history(c, v) if r[1] == "skipped"]
                assert len(skipped) == 1, "one skipped row per pause, not one per slot"
                assert skipped[0][0] == "schedule"
                assert skipped[0][3].startswith(f'database "{db}" was paused at ')
                assert skipped[0][3].endswith(" by root: nightly load")
            c.execute(f"INSERT INTO {t} VALUES (1)")
        finally:
            c.execute(f"ALTER DATABASE {db} RESUME")
        resumed = h.clock.now_ms()
        starts = {}
        for _ in range(36):  # one second at a time, past the jitter
            h.clock.advance(1_000)
            h.settle(c)
            for v in views:
                fut = h.app.scheduler.latest_run(db, v)
                if v not in starts and fut is not None:
                    starts[v] = fut.result(timeout=60)
        assert set(starts) == set(views), "each view caught up"
        for v, run in starts.items():
            assert (run.trigger, run.status) == ("catchup", "succeeded")
            offset = run.started_at.timestamp() * 1000 - resumed
            # within the jitter (and the few seconds epochs run ahead of a manual clock)
            assert 0 <= offset <= 34_000, offset
            catchups = [r for r in _history(c, v) if r[0] == "catchup"]
            assert len(catchups) == 1, "at most one catch-up run per view"
        assert len({r.started_at for r in starts.values()}) > 1, \
            "the catch-up runs are spread over the jitter, not all at once"


def test_bad_option_values_are_22023_and_change_nothing(h):
    t, v = _n("t"), _n("v")
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT)")
        for options, message in [
                ("refresh.max_failures = -1", 'invalid value for parameter "refresh.max_failures": "-1"'),
                ("refresh.retry_backoff.sec = 0", 'invalid value for parameter "refresh.retry_backoff.sec": "0"'),
                ("refresh.jitter.sec = 'soon'", 'invalid value for parameter "refresh.jitter.sec": "soon"'),
                ("refresh.retries = 3", 'unrecognized parameter "refresh.retries"'),
                ("refresh.jitter.sec = 1, refresh.jitter.sec = 2",
                 'parameter "refresh.jitter.sec" specified more than once')]:
            with pytest.raises(pgerr.InvalidParameterValue) as e:
                c.execute(f"CREATE MATERIALIZED VIEW {v} WITH (refresh.interval.sec = 5, "
                          f"{options}) AS SELECT id FROM {t}")
            assert e.value.diag.message_primary == message
            assert _job(c, v) is None, "nothing was created"
        c.execute(f"CREATE MATERIALIZED VIEW {v} WITH (refresh.interval.sec = 5, "
                  f"refresh.max_failures = 2) AS SELECT id FROM {t}")
        before = _job(c, v)
        for options in ["refresh.max_failures = 'many'", "refresh.retry_backoff.sec = -3",
                        "refresh.jitter.sec = 2147483648", "refresh.jitter.sec = 1, foo = 2",
                        "refresh.jitter.sec = 4, refresh.max_failures = 1.5"]:
            with pytest.raises(pgerr.InvalidParameterValue):
                c.execute(f"ALTER MATERIALIZED VIEW {v} SET ({options})")
            assert _job(c, v) == before, "nothing changed"
        c.execute(f"ALTER MATERIALIZED VIEW {v} SET (refresh.retry_backoff.sec = 3, "
                  "refresh.jitter.sec = '4', refresh.max_failures = 0)")
        job = _job(c, v)
        assert (job["retry_backoff_sec"], job["jitter_sec"], job["max_failures"]) == (3, 4, 0)
        c.execute(f"ALTER MATERIALIZED VIEW {v} RESET (refresh.retry_backoff.sec, "
                  "refresh.max_failures, refresh.jitter.sec)")
        job = _job(c, v)
        assert (job["retry_backoff_sec"], job["max_failures"], job["jitter_sec"]) == (10, 5, 0)
        assert job["refresh_interval_sec"] == 5


# ---------------------------------------------------------------- across kill -9


def _until(check, timeout: float = 60.0):
    """Poll ``check`` (a query) until it returns something truthy, against a deadline."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


def test_anchors_counts_and_history_survive_kill9(tmp_path, meta_args) -> None:  # noqa: F811
    def start() -> ServerProcess:
        return start_server("--data-dir", str(tmp_path / "data"), "--barrier-interval-ms",
                            "100", *meta_args)

    srv = start()
    try:
        with psycopg.connect(srv.dsn(), autocommit=True) as c:
            c.execute("CREATE TABLE src (s TEXT)")
            c.execute("INSERT INTO src VALUES ('1')")
            c.execute("CREATE MATERIALIZED VIEW slow WITH (refresh.interval.sec = 3600) "
                      "AS SELECT s FROM src")
            c.execute("CREATE MATERIALIZED VIEW fast BATCH REFRESH EVERY 1 SECOND "
                      "AS SELECT s FROM src")
            c.execute("CREATE MATERIALIZED VIEW bad WITH (refresh.interval.sec = 1, "
                      "refresh.max_failures = 1) AS SELECT CAST(s AS INTEGER) AS n FROM src")
            # its first scheduled run fails, and suspends it (refresh.max_failures = 1)
            c.execute("UPDATE src SET s = 'x'")
            _until(lambda: c.execute("SELECT suspended FROM rw_catalog."
                                     "rw_batch_refresh_jobs WHERE name = 'bad'").fetchone()[0])
            c.execute("ALTER DATABASE dev PAUSE REASON 'maintenance'")
            # fast falls due while paused: one skipped row
            _until(lambda: c.execute("SELECT count(*) FROM rw_catalog.rw_refresh_history "
                                     "WHERE job = 'fast' AND status = 'skipped'").fetchone()[0])
            slow_next = c.execute("SELECT next_refresh_at FROM rw_catalog.rw_batch_refresh_jobs "
                                  "WHERE name = 'slow'").fetchone()[0]
            bad_runs = c.execute(
                "SELECT run_id, trigger, status, sqlstate, duration_ms, node FROM "
                "rw_catalog.rw_refresh_history WHERE job = 'bad' AND status = 'failed'").fetchall()
        assert bad_runs and bad_runs[0][1:4] == ("schedule", "failed", "22P02")
        srv.proc.kill()  # SIGKILL: nothing gets to flush
        srv.proc.wait(timeout=30)

        srv = start()
        with psycopg.connect(srv.dsn(), autocommit=True) as c:
            job = c.execute("SELECT consecutive_failures, status, suspended_by FROM rw_catalog."
                            "rw_batch_refresh_jobs WHERE name = 'bad'").fetchone()
            assert job == (1, "suspended", "pgbarrier"), "the count and the suspension survive"
            assert c.execute(
                "SELECT run_id, trigger, status, sqlstate, duration_ms, node FROM "
                "rw_catalog.rw_refresh_history WHERE job = 'bad' AND status = 'failed'"
            ).fetchall() == bad_runs, "history rows survive with their sqlstate, duration, node"
            assert c.execute("SELECT next_refresh_at FROM rw_catalog.rw_batch_refresh_jobs "
                             "WHERE name = 'slow'").fetchone()[0] == slow_next, \
                "the schedule's anchor survives: slow is not due at start"
            c.execute("ALTER DATABASE dev RESUME")
            runs = _until(lambda: c.execute(
                "SELECT trigger, status FROM rw_catalog.rw_refresh_history WHERE job = 'fast' "
                "AND trigger = 'catchup' AND status <> 'running'").fetchall())
            assert runs == [("catchup", "succeeded")]
            fast = c.execute("SELECT trigger, status FROM rw_catalog.rw_refresh_history "
                             "WHERE job = 'fast' AND status = 'skipped'").fetchall()
            assert fast == [("schedule", "skipped")], "one skipped row per pause, across kill -9"
            assert c.execute("SELECT count(*) FROM rw_catalog.rw_refresh_history "
                             "WHERE job = 'slow'").fetchone()[0] == 1, "slow only has its create"
            node = c.execute("SELECT node FROM rw_catalog.rw_refresh_history WHERE job = 'fast' "
                             "AND trigger = 'catchup'").fetchone()[0]
            assert node and node != bad_runs[0][5], "the node that ran it: the new process"
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)
