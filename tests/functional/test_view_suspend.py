"""ALTER MATERIALIZED VIEW v SUSPEND | RESUME (issue 29, item 1), on both data backends.

The server runs in-process with a manual clock and an hour-long barrier interval (as in
test_batch_refresh.py): the tests move time with ``clock.advance`` and let FLUSH
checkpoints carry it; a run's future says when it has committed. No sleeps.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import errors as pgerr

from conftest import ServerProcess, inprocess_app, start_server, stop_server
from pgbarrier.barrier.clock import ManualClock, SystemClock
from test_batch_refresh import Harness
from test_durability import meta_args  # noqa: F401 - a fixture: SQLite, then PostgreSQL


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def h(request) -> Iterator[Harness]:
    database = f"pgb_{uuid.uuid4().hex[:10]}"
    clock = ManualClock(SystemClock().now_ms())
    with inprocess_app(request.param, database, clock) as app:
        yield Harness(app, clock, database, app.server.port)


def _n(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:6]}"


def _job(conn, view: str) -> tuple:
    return conn.execute(
        "SELECT status, suspended, suspended_at IS NOT NULL, suspended_by, suspend_reason, "
        f"next_refresh_at IS NULL FROM rw_catalog.rw_batch_refresh_jobs WHERE name = '{view}'"
    ).fetchone()


def _notices(conn) -> list[str]:
    got: list[str] = []
    conn.add_notice_handler(lambda d: got.append(d.message_primary))
    return got


def test_suspended_view_takes_no_scheduled_runs_but_manual_refresh_and_resume(h):
    t, v = _n("t"), _n("v")
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT)")
        c.execute(f"CREATE MATERIALIZED VIEW {v} BATCH REFRESH EVERY 1 SECOND AS SELECT id FROM {t}")
        c.execute(f"INSERT INTO {t} VALUES (1)")
        assert c.execute(f"ALTER MATERIALIZED VIEW {v} SUSPEND REASON 'upstream load'"
                         ).statusmessage == "ALTER MATERIALIZED VIEW"
        assert _job(c, v) == ("suspended", True, True, "root", "upstream load", True)
        h.clock.advance(5000)
        h.settle(c)
        assert h.wait_run(v) is None, "a suspended view takes no scheduled run"
        assert c.execute(f"SELECT count(*) FROM {v}").fetchone()[0] == 0  # its last result
        # a manual refresh still runs on it (Snowflake's rule) and it stays suspended
        c.execute(f"REFRESH MATERIALIZED VIEW {v}")
        assert c.execute(f"SELECT count(*) FROM {v}").fetchone()[0] == 1
        assert h.wait_run(v).trigger == "manual"
        assert _job(c, v)[:2] == ("suspended", True)
        c.execute(f"INSERT INTO {t} VALUES (2)")
        h.clock.advance(5000)
        h.settle(c)
        assert h.wait_run(v).trigger == "manual", "still no scheduled run"
        # the database pause still refuses a manual refresh of a suspended view
        c.execute(f"ALTER DATABASE {h.database} PAUSE")
        try:
            with pytest.raises(pgerr.ObjectNotInPrerequisiteState):
                c.execute(f"REFRESH MATERIALIZED VIEW {v}")
        finally:
            c.execute(f"ALTER DATABASE {h.database} RESUME")
        # RESUME: due while suspended, it catches up once at the next checkpoint
        c.execute(f"ALTER MATERIALIZED VIEW {v} RESUME")
        assert _job(c, v)[1:5] == (False, False, None, None)
        h.settle(c)
        run = h.wait_run(v)
        assert run is not None and run.trigger == "catchup" and run.status == "succeeded"
        assert c.execute(f"SELECT count(*) FROM {v}").fetchone()[0] == 2
        rows = c.execute("SELECT trigger, status, error FROM rw_catalog.rw_refresh_history "
                         f"WHERE job = '{v}' AND trigger <> 'manual' AND trigger <> 'create' "
                         "ORDER BY run_id").fetchall()
        assert [r[:2] for r in rows] == [("schedule", "skipped"), ("catchup", "succeeded")], \
            "one skipped row for the suspension, one catch-up run, not one per missed slot"
        assert rows[0][2].startswith(f'materialized view "{v}" was suspended at ')
        assert rows[0][2].endswith(" by root: upstream load")


def test_suspend_and_resume_are_idempotent_with_a_notice(h):
    t, v = _n("t"), _n("v")
    with h.connect() as c:
        notices = _notices(c)
        c.execute(f"CREATE TABLE {t} (id INT)")
        c.execute(f"CREATE MATERIALIZED VIEW {v} BATCH REFRESH AS SELECT id FROM {t}")
        c.execute(f"ALTER MATERIALIZED VIEW public.{v} RESUME")
        assert notices[-1] == f'materialized view "{v}" is not suspended, nothing to do'
        c.execute(f"ALTER MATERIALIZED VIEW {v} SUSPEND")
        first = c.execute("SELECT suspended_at FROM rw_catalog.rw_batch_refresh_jobs "
                          f"WHERE name = '{v}'").fetchone()[0]
        n = len(notices)
        c.execute(f"alter materialized view {v} suspend;")
        assert notices[n:] == [f'materialized view "{v}" is already suspended, nothing to do']
        c.execute(f"ALTER MATERIALIZED VIEW {v} SUSPEND REASON 'it''s late'")
        assert notices[-1] == (f'materialized view "{v}" is already suspended; '
                               "its reason is replaced")
        assert c.execute("SELECT suspended_at, suspend_reason FROM rw_catalog."
                         f"rw_batch_refresh_jobs WHERE name = '{v}'").fetchone() == \
            (first, "it's late")
        c.execute(f"ALTER MATERIALIZED VIEW {v} RESUME")
        n = len(notices)
        c.execute(f"ALTER MATERIALIZED VIEW {v} RESUME")
        assert notices[n:] == [f'materialized view "{v}" is not suspended, nothing to do']


def test_wrong_names_kinds_syntax_and_transaction_blocks(h):
    t, v = _n("t"), _n("v")
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT)")
        c.execute(f"CREATE MATERIALIZED VIEW {v} BATCH REFRESH AS SELECT id FROM {t}")
        with pytest.raises(pgerr.UndefinedTable) as e:
            c.execute("ALTER MATERIALIZED VIEW no_such_view SUSPEND")
        assert e.value.diag.message_primary == 'relation "no_such_view" does not exist'
        with pytest.raises(pgerr.WrongObjectType) as e:
            c.execute(f"ALTER MATERIALIZED VIEW {t} SUSPEND")
        assert e.value.diag.message_primary == f'"{t}" is not a batch-refresh materialized view'
        other = _n("m")  # PostgreSQL's own materialized view upstream, a streaming one on DuckDB
        c.execute(f"CREATE MATERIALIZED VIEW {other} AS SELECT id FROM {t}")
        with pytest.raises(pgerr.WrongObjectType):
            c.execute(f"ALTER MATERIALIZED VIEW {other} RESUME")
        with pytest.raises(pgerr.SyntaxError) as e:
            c.execute(f"ALTER MATERIALIZED VIEW {v} SUSPEND BECAUSE 'x'")
        assert e.value.diag.message_primary == 'syntax error at or near "BECAUSE"'
        with pytest.raises(pgerr.SyntaxError):
            c.execute(f"ALTER MATERIALIZED VIEW {v} SUSPEND REASON")
        with pytest.raises(pgerr.SyntaxError):
            c.execute(f"ALTER MATERIALIZED VIEW {v} RESUME NOW")
        c.autocommit = False
        try:
            with pytest.raises(pgerr.ActiveSqlTransaction) as e:
                c.execute(f"ALTER MATERIALIZED VIEW {v} SUSPEND")
            assert e.value.diag.message_primary == \
                "ALTER MATERIALIZED VIEW cannot run inside a transaction block"
            c.rollback()
        finally:
            c.autocommit = True
        assert c.execute("SELECT suspended FROM rw_catalog.rw_batch_refresh_jobs "
                         f"WHERE name = '{v}'").fetchone() == (False,), "nothing changed"
        # other ALTER MATERIALIZED VIEW forms of PostgreSQL's own views still pass through
        if h.app.backend.dialect == "postgres":
            c.execute(f"ALTER MATERIALIZED VIEW {other} RENAME TO {other}_x")
            assert c.execute(f"SELECT count(*) FROM {other}_x").fetchone() == (0,)


def test_metrics_count_suspended_views(h):
    t, v = _n("t"), _n("v")
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT)")
        c.execute(f"CREATE MATERIALIZED VIEW {v} BATCH REFRESH AS SELECT id FROM {t}")
        before = _suspended_metric(h)
        c.execute(f"ALTER MATERIALIZED VIEW {v} SUSPEND")
        assert _suspended_metric(h) == before + 1
        c.execute(f"ALTER MATERIALIZED VIEW {v} RESUME")
        assert _suspended_metric(h) == before


def _suspended_metric(h) -> float:
    from prometheus_client import generate_latest

    text = generate_latest(h.app.metrics.registry).decode()
    for line in text.splitlines():
        if line.startswith("pgbarrier_batch_refresh_jobs_suspended{") \
                and f'database="{h.database}"' in line:
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError("no pgbarrier_batch_refresh_jobs_suspended series:\n" + text)


# -- durable: kill -9 and restart, on both meta stores ------------------------------------


def _start(tmp_path, meta_args) -> ServerProcess:
    return start_server("--data-dir", str(tmp_path / "data"), *meta_args)


def test_suspension_survives_kill9(tmp_path, meta_args):
    srv = _start(tmp_path, meta_args)
    with psycopg.connect(srv.dsn(), autocommit=True) as c:
        c.execute("CREATE TABLE t (id INT)")
        c.execute("CREATE MATERIALIZED VIEW v BATCH REFRESH EVERY 1 SECOND AS SELECT id FROM t")
        c.execute("ALTER MATERIALIZED VIEW v SUSPEND REASON 'maintenance'")
    srv.proc.kill()
    srv.proc.wait(timeout=30)
    srv = _start(tmp_path, meta_args)
    try:
        with psycopg.connect(srv.dsn(), autocommit=True) as c:
            assert _job(c, "v") == ("suspended", True, True, "root", "maintenance", True)
            c.execute("ALTER MATERIALIZED VIEW v RESUME")
            assert _job(c, "v")[1] is False
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)


def test_database_qualified_view_names_as_postgresql(h):
    """``db.schema.v`` names the view when ``db`` is the session's database (PostgreSQL's
    rule for every control statement); another database is 0A000 and nothing happens."""
    t, v = _n("t"), _n("v")
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT)")
        c.execute(f"CREATE MATERIALIZED VIEW {h.database}.public.{v} BATCH REFRESH AS "
                  f"SELECT id FROM {t}")
        assert c.execute("SELECT count(*) FROM rw_catalog.rw_batch_refresh_jobs "
                         f"WHERE name = '{v}'").fetchone() == (1,)
        c.execute(f"INSERT INTO {t} VALUES (1)")
        assert c.execute(f"REFRESH MATERIALIZED VIEW {h.database}.public.{v}"
                         ).statusmessage == "REFRESH MATERIALIZED VIEW"
        assert c.execute(f"SELECT count(*) FROM {v}").fetchone() == (1,)
        c.execute(f"ALTER MATERIALIZED VIEW {h.database}.public.{v} SUSPEND")
        assert _job(c, v)[:2] == ("suspended", True)
        for sql in (f"REFRESH MATERIALIZED VIEW no_db.public.{v}",
                    f"ALTER MATERIALIZED VIEW no_db.public.{v} RESUME",
                    f"CREATE MATERIALIZED VIEW no_db.public.{v}_2 BATCH REFRESH AS "
                    f"SELECT id FROM {t}"):
            with pytest.raises(pgerr.FeatureNotSupported) as e:
                c.execute(sql)
            assert e.value.diag.message_primary.startswith(
                'cross-database references are not implemented: "no_db.public.'), sql
        assert _job(c, v)[:2] == ("suspended", True), "nothing changed"
        c.execute(f"DROP MATERIALIZED VIEW {h.database}.public.{v}")
        assert c.execute("SELECT count(*) FROM rw_catalog.rw_batch_refresh_jobs "
                         f"WHERE name = '{v}'").fetchone() == (0,)
