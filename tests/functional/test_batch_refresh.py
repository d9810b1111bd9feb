"""Batch-refresh views, one contract suite on both data backends (DuckDB and PostgreSQL).

The server runs in-process with a manual clock and a barrier interval of an hour,
so barriers come only from commands: the tests move time with ``clock.advance``
and let ``FLUSH`` checkpoints carry the new time (see ``Harness.settle``). A
scheduled run is started by a barrier listener after its barrier is collected; a
worker handles one barrier at a time, so a later ``FLUSH`` guarantees the listener
ran, and the run's future tells when it has committed. No sleeps.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg
import pytest
from psycopg import errors as pgerr

from conftest import inprocess_app, run_in_background
from pgbarrier.app import App
from pgbarrier.barrier.clock import ManualClock, SystemClock



@dataclass
class Harness:
    app: App
    clock: ManualClock
    database: str
    port: int

    def connect(self) -> psycopg.Connection:
        return psycopg.connect(host="127.0.0.1", port=self.port, user="root",
                               dbname=self.database, autocommit=True)

    def settle(self, conn: psycopg.Connection) -> None:
        """Three FLUSHes. A checkpoint commits its *prev* epoch, so the first commits the
        barrier injected before the clock moved, the second commits the new time, and the
        third is collected only after the second's listeners (which start due runs) ran."""
        for _ in range(3):
            conn.execute("FLUSH")

    def wait_run(self, name: str):
        """The job's latest run once it has finished (None: no run has started yet)."""
        fut = self.app.scheduler.latest_run(self.database, name)
        return None if fut is None else fut.result(timeout=60)


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def harness(request) -> Iterator[Harness]:
    database = f"pgb_{uuid.uuid4().hex[:10]}"
    clock = ManualClock(SystemClock().now_ms())
    with inprocess_app(request.param, database, clock) as app:
        yield Harness(app, clock, database, app.server.port)


@pytest.fixture
def h(harness) -> Iterator[Harness]:
    yield harness
    with harness.connect() as c:
        c.execute(f"ALTER DATABASE {harness.database} RESUME")


def _n(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:6]}"


def _count(conn, view: str) -> int:
    return conn.execute(f"SELECT count(*) FROM {view}").fetchone()[0]


def _runs(conn, view: str) -> list[tuple]:
    return conn.execute(
        "SELECT trigger, status, rows, error FROM rw_catalog.rw_refresh_history "
        f"WHERE job = '{view}' ORDER BY run_id").fetchall()


def test_view_keeps_its_snapshot_until_its_interval_then_catches_up(h):
    t, v = _n("t"), _n("v")
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT)")
        c.execute(f"INSERT INTO {t} VALUES (1), (2), (3)")
        c.execute(f"CREATE MATERIALIZED VIEW {v} WITH (refresh.interval.sec = 1) AS SELECT id FROM {t}")
        c.execute(f"INSERT INTO {t} VALUES (4)")
        h.clock.advance(500)
        h.settle(c)
        assert h.wait_run(v) is None, "not due yet"
        assert _count(c, v) == 3
        h.clock.advance(600)
        h.settle(c)
        run = h.wait_run(v)
        assert run is not None and run.status == "succeeded" and run.rows == 4
        assert _count(c, v) == 4
        assert _runs(c, v) == [("create", "succeeded", 3, None), ("schedule", "succeeded", 4, None)]
        job = c.execute("SELECT status, last_committed_epoch > snapshot_epoch, next_refresh_at > "
                        f"last_refreshed_at - interval '2 seconds' FROM rw_catalog.rw_batch_refresh_jobs "
                        f"WHERE name = '{v}'").fetchone()
        assert job == ("idle", True, True)
        # the history joins with ordinary tables
        owners = _n("owners")
        c.execute(f"CREATE TABLE {owners} (job TEXT, team TEXT)")
        c.execute(f"INSERT INTO {owners} VALUES ('{v}', 'bi')")
        assert c.execute(f"SELECT o.team, count(*) FROM rw_catalog.rw_refresh_history r JOIN {owners} o "
                         "ON o.job = r.job GROUP BY o.team").fetchall() == [("bi", 2)]


def test_pause_holds_scheduled_refreshes_back_and_resume_lets_them_run(h):
    t, v = _n("t"), _n("v")
    db = h.database
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT)")
        c.execute(f"CREATE MATERIALIZED VIEW {v} BATCH REFRESH EVERY 1 SECOND AS SELECT id FROM {t}")
        c.execute(f"INSERT INTO {t} VALUES (1)")
        c.execute(f"ALTER DATABASE {db} PAUSE")
        h.clock.advance(5000)
        h.settle(c)
        assert h.wait_run(v) is None and _count(c, v) == 0
        c.execute(f"ALTER DATABASE {db} RESUME")
        c.execute("FLUSH")  # the resume barrier's listeners have run: the due job started
        run = h.wait_run(v)
        assert run is not None and run.trigger == "catchup" and run.status == "succeeded"
        assert _count(c, v) == 1
        # the slots the pause held are one skipped row (not one per missed second)
        assert [r[:2] for r in _runs(c, v)] == [("create", "succeeded"), ("schedule", "skipped"),
                                                ("catchup", "succeeded")]


def test_manual_refresh_commits_before_returning_and_is_refused_while_paused(h):
    t, v = _n("t"), _n("v")
    db = h.database
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT)")
        c.execute(f"CREATE MATERIALIZED VIEW {v} WITH (refresh.interval.sec = 3600) AS SELECT id FROM {t}")
        c.execute(f"INSERT INTO {t} VALUES (1), (2)")
        assert c.execute(f"REFRESH MATERIALIZED VIEW {v}").statusmessage == "REFRESH MATERIALIZED VIEW"
        assert _count(c, v) == 2
        assert _runs(c, v)[-1] == ("manual", "succeeded", 2, None)
        c.execute(f"ALTER DATABASE {db} PAUSE")
        with pytest.raises(pgerr.ObjectNotInPrerequisiteState) as info:
            c.execute(f"REFRESH MATERIALIZED VIEW {v}")
        diag = info.value.diag
        assert diag.message_primary == f'cannot refresh materialized view "{v}" while database barrier is paused'
        assert diag.message_detail.startswith(f'database "{db}" was paused at ')
        assert diag.message_hint == f"Resume the database with ALTER DATABASE {db} RESUME, then retry."


def test_failed_refresh_is_recorded_and_the_job_runs_again_when_due(h):
    t, v = _n("t"), _n("v")
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (s TEXT)")
        c.execute(f"INSERT INTO {t} VALUES ('1')")
        c.execute(f"CREATE MATERIALIZED VIEW {v} WITH (refresh.interval.sec = 1) AS "
                  f"SELECT CAST(s AS INTEGER) AS n FROM {t}")
        c.execute(f"INSERT INTO {t} VALUES ('abc')")
        h.clock.advance(1100)
        h.settle(c)
        run = h.wait_run(v)
        assert run.status == "failed" and run.error
        assert _count(c, v) == 1, "readers keep the last committed result"
        status, err = c.execute("SELECT j.status, r.error FROM rw_catalog.rw_batch_refresh_jobs j "
                                "JOIN rw_catalog.rw_refresh_history r ON r.job = j.name "
                                f"WHERE j.name = '{v}' AND r.status = 'failed'").fetchone()
        assert status == "failed" and "abc" in err
        c.execute(f"DELETE FROM {t} WHERE s = 'abc'")
        c.execute(f"INSERT INTO {t} VALUES ('2')")
        h.clock.advance(1100)
        h.settle(c)
        assert h.wait_run(v).status == "succeeded"
        assert sorted(r[0] for r in c.execute(f"SELECT n FROM {v}").fetchall()) == [1, 2]


def test_rules_drop_and_show(h):
    t, v, s = _n("t"), _n("v"), _n("s")
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT)")
        c.execute(f"CREATE MATERIALIZED VIEW {v} BATCH REFRESH AS SELECT id FROM {t}")
        c.execute(f"CREATE MATERIALIZED VIEW {s} AS SELECT id FROM {t}")
        c.execute(f"INSERT INTO {t} VALUES (1)")
        upstream = h.app.backend.dialect == "postgres"
        if upstream:  # issue 14: PostgreSQL's own materialized view, current as of its REFRESH
            assert _count(c, s) == 0 and _count(c, v) == 0
            c.execute(f"REFRESH MATERIALIZED VIEW {s}")
        assert _count(c, s) == 1 and _count(c, v) == 0, "streaming shows current data"
        with pytest.raises(pgerr.FeatureNotSupported) as info:
            c.execute(f"CREATE MATERIALIZED VIEW {_n('x')} AS WITH w AS (SELECT * FROM {v}) SELECT * FROM w")
        assert info.value.diag.message_primary == \
            "creating streaming jobs on batch refresh materialized views is not supported"
        with pytest.raises(pgerr.FeatureNotSupported) as info:
            c.execute(f"ALTER MATERIALIZED VIEW {v} AS SELECT 1")
        assert info.value.diag.message_primary == \
            "ALTER MATERIALIZED VIEW is not supported for batch refresh materialized views"
        with pytest.raises(pgerr.UndefinedTable):
            c.execute(f"CREATE MATERIALIZED VIEW {_n('x')} BATCH REFRESH AS SELECT * FROM no_such_input")
        if not upstream:  # upstream the job follows the rename (test_upstream_matviews)
            for view, kind in ((v, "batch refresh"), (s, "streaming")):
                with pytest.raises(pgerr.FeatureNotSupported, match=f"for {kind} materialized"):
                    c.execute(f"ALTER MATERIALIZED VIEW {view} RENAME TO {view}_2")
        shown = [r[0] for r in c.execute("SHOW MATERIALIZED VIEWS").fetchall()]
        assert v in shown and (s in shown) is not upstream  # upstream: PostgreSQL's, not ours
        c.execute(f"DROP MATERIALIZED VIEW {v}")
        c.execute(f"DROP MATERIALIZED VIEW {s}")
        with pytest.raises(pgerr.UndefinedTable):
            c.execute(f"SELECT * FROM {v}")
        assert c.execute(f"SELECT count(*) FROM rw_catalog.rw_batch_refresh_jobs WHERE name = '{v}'"
                         ).fetchone() == (0,)
        notices = []
        c.add_notice_handler(lambda d: notices.append(d.message_primary))
        c.execute(f"DROP MATERIALIZED VIEW IF EXISTS {v}")
        assert notices == [f'materialized view "{v}" does not exist, skipping']
        with pytest.raises(pgerr.UndefinedTable):
            c.execute(f"DROP MATERIALIZED VIEW {v}")


def test_wait_mode_waits_for_resume_bounded_by_statement_timeout(h):
    t, v = _n("t"), _n("v")
    db = h.database
    with h.connect() as c, h.connect() as other:
        c.execute(f"CREATE TABLE {t} (id INT)")
        c.execute(f"INSERT INTO {t} VALUES (1)")
        c.execute("SET batch_refresh_when_paused = 'wait'")
        assert c.execute("SHOW batch_refresh_when_paused").fetchone() == ("wait",)
        other.execute(f"ALTER DATABASE {db} PAUSE")
        c.execute("SET statement_timeout = '200ms'")
        with pytest.raises(pgerr.QueryCanceled) as info:
            c.execute(f"CREATE MATERIALIZED VIEW {v} BATCH REFRESH AS SELECT id FROM {t}")
        assert "statement timeout" in info.value.diag.message_primary
        c.execute("SET statement_timeout = 0")

        create = run_in_background(
            c, f"CREATE MATERIALIZED VIEW {v} BATCH REFRESH AS SELECT id FROM {t}")
        other.execute(f"ALTER DATABASE {db} RESUME")
        assert create.done.wait(60), "the create never finished"
        create.thread.join()
        assert create.outcome == ["done"]
        assert _count(other, v) == 1


def test_default_mode_still_fails_while_paused(h):
    with h.connect() as c:
        c.execute(f"ALTER DATABASE {h.database} PAUSE")
        with pytest.raises(pgerr.ObjectNotInPrerequisiteState):
            c.execute(f"CREATE MATERIALIZED VIEW {_n('v')} BATCH REFRESH AS SELECT 1 AS x")


def test_backend_errors_keep_their_sqlstate_through_the_proxy(h):
    t = _n("t")
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT PRIMARY KEY)")
        c.execute(f"INSERT INTO {t} VALUES (1)")
        with pytest.raises(pgerr.UniqueViolation) as info:
            c.execute(f"INSERT INTO {t} VALUES (1)")
        if h.app.backend.dialect == "postgres":
            assert info.value.diag.message_detail == "Key (id)=(1) already exists."
        with pytest.raises(pgerr.UndefinedTable):
            c.execute("SELECT * FROM no_such_table_anywhere")
        assert c.execute(f"SELECT count(*) FROM {t}").fetchone() == (1,), "the session goes on"


def test_drop_during_a_refresh_cancels_it(h):
    if h.app.backend.dialect != "postgres":
        pytest.skip("needs a query that runs until cancelled: pg_sleep on the PostgreSQL backend")
    t, v = _n("t"), _n("v")
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (x INT)")
        c.execute(f"INSERT INTO {t} VALUES (1)")
        # rows with x > 1 make the refresh sleep for 10 minutes, unless it is cancelled
        c.execute(f"CREATE MATERIALIZED VIEW {v} WITH (refresh.interval.sec = 1) AS "
                  f"SELECT x FROM {t}, LATERAL (SELECT pg_sleep(CASE WHEN x > 1 THEN 600 ELSE 0 END)) s")
        c.execute(f"INSERT INTO {t} VALUES (2)")
        h.clock.advance(1100)
        h.settle(c)
        running = h.app.scheduler.running(h.database, v)
        assert running is not None, "the scheduled refresh should be running"
        c.execute(f"DROP MATERIALIZED VIEW {v}")
        run = running.result(timeout=60)
        assert run.status == "cancelled"
        assert run.error == "canceling statement due to user request"
        with pytest.raises(pgerr.UndefinedTable):
            c.execute(f"SELECT * FROM {v}")
        assert _runs(c, v)[-1][:2] == ("schedule", "cancelled")


def test_a_wait_for_resume_is_cancellable(h):
    t, v = _n("t"), _n("v")
    db = h.database
    with h.connect() as c, h.connect() as other:
        c.execute(f"CREATE TABLE {t} (id INT)")
        c.execute("SET batch_refresh_when_paused = 'wait'")
        other.execute(f"ALTER DATABASE {db} PAUSE")
        create = run_in_background(
            c, f"CREATE MATERIALIZED VIEW {v} BATCH REFRESH AS SELECT id FROM {t}")
        create.cancel_until_done(c)
        outcome = create.outcome
        assert len(outcome) == 1 and isinstance(outcome[0], pgerr.QueryCanceled), outcome
        assert outcome[0].diag.message_primary == "canceling statement due to user request"
        assert c.execute("SELECT 1").fetchone() == (1,), "the session goes on"
        assert c.execute(f"SELECT count(*) FROM rw_catalog.rw_batch_refresh_jobs WHERE name = '{v}'"
                         ).fetchone() == (0,)


@contextmanager
def in_process(backend: str, start_ms: int | None = None) -> Iterator[Harness]:
    """A Harness on a fresh database of ``backend``, its manual clock at ``start_ms``
    (now when None): the module fixture of the refresh-control test files."""
    database = f"pgb_{uuid.uuid4().hex[:10]}"
    clock = ManualClock(SystemClock().now_ms() if start_ms is None else start_ms)
    with inprocess_app(backend, database, clock) as app:
        yield Harness(app, clock, database, app.server.port)
