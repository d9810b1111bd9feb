"""ALTER MATERIALIZED VIEW v SET (refresh.interval.sec = n) / RESET (...) (issue 29, item 3),
on both data backends, in-process with a manual clock (see test_batch_refresh.py). No sleeps.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import errors as pgerr

from conftest import inprocess_app, start_server, stop_server
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


def _interval(conn, view: str) -> int:
    return conn.execute("SELECT refresh_interval_sec FROM rw_catalog.rw_batch_refresh_jobs "
                        f"WHERE name = '{view}'").fetchone()[0]


def test_a_new_interval_takes_effect_at_once(h):
    t, v = _n("t"), _n("v")
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT)")
        c.execute(f"CREATE MATERIALIZED VIEW {v} BATCH REFRESH EVERY 1 HOUR AS SELECT id FROM {t}")
        c.execute(f"INSERT INTO {t} VALUES (1)")
        assert c.execute(f"ALTER MATERIALIZED VIEW {v} SET (refresh.interval.sec = 2)"
                         ).statusmessage == "ALTER MATERIALIZED VIEW"
        assert _interval(c, v) == 2
        h.clock.advance(1000)
        h.settle(c)
        assert h.wait_run(v) is None, "not due yet"
        h.clock.advance(1100)
        h.settle(c)
        run = h.wait_run(v)
        assert run is not None and run.trigger == "schedule" and run.rows == 1
        # longer again: the entry pushed under 2 s is stale and starts nothing
        c.execute(f"ALTER MATERIALIZED VIEW public.{v} SET (refresh.interval.sec = '600')")
        c.execute(f"INSERT INTO {t} VALUES (2)")
        h.clock.advance(3000)
        h.settle(c)
        assert h.wait_run(v).run_id == run.run_id, "no run under the old interval"
        c.execute(f"ALTER MATERIALIZED VIEW {v} RESET (refresh.interval.sec)")
        assert _interval(c, v) == 60
        h.clock.advance(60_000)
        h.settle(c)
        assert h.wait_run(v).run_id != run.run_id
        assert c.execute(f"SELECT count(*) FROM {v}").fetchone() == (2,)


@pytest.mark.parametrize(("options", "sqlstate", "message"), [
    ("SET (refresh.interval.sec = 0)", "22023",
     'invalid value for parameter "refresh.interval.sec": "0"'),
    ("SET (refresh.interval.sec = -5)", "22023",
     'invalid value for parameter "refresh.interval.sec": "-5"'),
    ("SET (refresh.interval.sec = 'soon')", "22023",
     'invalid value for parameter "refresh.interval.sec": "soon"'),
    ("SET (refresh.every = 5)", "22023", 'unrecognized parameter "refresh.every"'),
    ("RESET (fillfactor)", "22023", 'unrecognized parameter "fillfactor"'),
    ("SET (refresh.interval.sec = 5, refresh.interval.sec = 6)", "22023",
     'parameter "refresh.interval.sec" specified more than once'),
    ("SET (refresh.interval.sec)", "42601", 'syntax error at or near ")"'),
    ("SET (refresh.interval.sec = 5", "42601", "syntax error at end of input"),
])
def test_bad_options_change_nothing(h, options, sqlstate, message):
    t, v = _n("t"), _n("v")
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT)")
        c.execute(f"CREATE MATERIALIZED VIEW {v} BATCH REFRESH EVERY 30 SECONDS AS SELECT id FROM {t}")
        with pytest.raises(psycopg.Error) as e:
            c.execute(f"ALTER MATERIALIZED VIEW {v} {options}")
        assert (e.value.sqlstate, e.value.diag.message_primary) == (sqlstate, message)
        assert _interval(c, v) == 30


def test_wrong_objects_and_postgresql_own_views(h):
    t = _n("t")
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT)")
        # upstream a name that is not pgbarrier's is PostgreSQL's to answer: its grammar
        # takes one dot in a parameter name, so its answer is 42601
        upstream = h.app.backend.dialect == "postgres"
        with pytest.raises(pgerr.SyntaxError if upstream else pgerr.UndefinedTable):
            c.execute("ALTER MATERIALIZED VIEW nope SET (refresh.interval.sec = 5)")
        with pytest.raises(pgerr.SyntaxError if upstream else pgerr.WrongObjectType):
            c.execute(f"ALTER MATERIALIZED VIEW {t} SET (refresh.interval.sec = 5)")
        m = _n("m")
        c.execute(f"CREATE MATERIALIZED VIEW {m} AS SELECT id FROM {t}")
        if upstream:  # PostgreSQL's own: relayed, PostgreSQL answers
            c.execute(f"ALTER MATERIALIZED VIEW {m} SET (fillfactor = 70)")
            assert c.execute("SELECT reloptions FROM pg_class WHERE relname = %s",
                             (m,)).fetchone() == (["fillfactor=70"],)
            c.execute(f"ALTER MATERIALIZED VIEW {m} RESET (fillfactor)")
            with pytest.raises(pgerr.InvalidParameterValue):
                c.execute(f"ALTER MATERIALIZED VIEW {m} SET (refresh_every = 5)")
        else:  # a streaming view
            with pytest.raises(pgerr.WrongObjectType):
                c.execute(f"ALTER MATERIALIZED VIEW {m} SET (refresh.interval.sec = 5)")


def test_a_new_interval_survives_kill9(tmp_path, meta_args):
    srv = start_server("--data-dir", str(tmp_path / "data"), *meta_args)
    with psycopg.connect(srv.dsn(), autocommit=True) as c:
        c.execute("CREATE TABLE t (id INT)")
        c.execute("CREATE MATERIALIZED VIEW v BATCH REFRESH EVERY 1 HOUR AS SELECT id FROM t")
        c.execute("ALTER MATERIALIZED VIEW v SET (refresh.interval.sec = 1234)")
    srv.proc.kill()
    srv.proc.wait(timeout=30)
    srv = start_server("--data-dir", str(tmp_path / "data"), *meta_args)
    try:
        with psycopg.connect(srv.dsn(), autocommit=True) as c:
            assert _interval(c, "v") == 1234
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)
