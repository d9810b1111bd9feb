"""Upstream: materialized views are PostgreSQL's own (issue 14, items 2 and 3).

A plain ``CREATE MATERIALIZED VIEW`` and everything PostgreSQL does with it answers through
pgbarrier exactly as PostgreSQL answers directly (one psql script run both ways, outputs
compared). A batch-refresh view is created in the client's session (its search_path and
current role), takes PostgreSQL's storage clauses and ``WITH [NO] DATA``, and ``DROP ...
CASCADE`` keeps pgbarrier's job registry in step. RisingWave's rule still holds: no
materialized view reads a batch-refresh view. Fresh databases and roles, dropped afterwards.
"""

from __future__ import annotations

import subprocess
import threading
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from tests.conftest import require_postgres, start_server, stop_server

RULE = "creating streaming jobs on batch refresh materialized views is not supported"

# Only PostgreSQL's own materialized views: the answers must be byte for byte PostgreSQL's.
SCRIPT = r"""
\set VERBOSITY default
CREATE SCHEMA s1;
SET search_path = s1, public;
CREATE TABLE t1 (a int PRIMARY KEY, b text);
INSERT INTO t1 VALUES (1, 'x'), (2, 'y');
CREATE MATERIALIZED VIEW mv1 AS SELECT * FROM t1;
CREATE MATERIALIZED VIEW IF NOT EXISTS mv1 AS SELECT * FROM t1;
CREATE MATERIALIZED VIEW m (x) USING heap WITH (fillfactor = 70) TABLESPACE pg_default AS SELECT a FROM t1 WITH NO DATA;
SELECT * FROM m;
SELECT schemaname, matviewname, ispopulated FROM pg_matviews WHERE schemaname = 's1' ORDER BY 2;
SELECT relname, reloptions FROM pg_class WHERE relname = 'm';
REFRESH MATERIALIZED VIEW m;
SELECT * FROM m ORDER BY 1;
CREATE UNIQUE INDEX mv1_a ON mv1 (a);
INSERT INTO t1 VALUES (3, 'z');
REFRESH MATERIALIZED VIEW CONCURRENTLY mv1 WITH DATA;
SELECT * FROM mv1 ORDER BY 1;
REFRESH MATERIALIZED VIEW m WITH NO DATA;
SELECT * FROM m;
REFRESH MATERIALIZED VIEW CONCURRENTLY m;
BEGIN;
CREATE MATERIALIZED VIEW in_tx AS SELECT 1 AS one;
ROLLBACK;
SELECT count(*) FROM pg_matviews WHERE matviewname = 'in_tx';
\dm
CREATE VIEW over_mv AS SELECT * FROM mv1;
DROP MATERIALIZED VIEW mv1;
ALTER MATERIALIZED VIEW m RENAME TO m2;
ALTER MATERIALIZED VIEW m2 SET SCHEMA public;
ALTER MATERIALIZED VIEW public.m2 RENAME COLUMN x TO y;
DROP MATERIALIZED VIEW mv1, public.m2 CASCADE;
DROP MATERIALIZED VIEW IF EXISTS nothing_here;
DROP MATERIALIZED VIEW nothing_here;
REFRESH MATERIALIZED VIEW nothing_here;
\dm
"""


@pytest.fixture(scope="module")
def env() -> Iterator[dict]:
    dsn = require_postgres()
    sfx = uuid.uuid4().hex[:8]
    names = {"db": f"pgb_mv_{sfx}", "direct": f"pgb_mvd_{sfx}", "role": f"pgb_mvr_{sfx}"}
    with psycopg.connect(dsn, autocommit=True) as adm:
        adm.execute(f'CREATE DATABASE "{names["direct"]}"')
        adm.execute(f'CREATE ROLE "{names["role"]}"')
    srv = start_server("--database", names["db"], "--upstream",
                       dsn.rsplit("/", 1)[0] + "/?sslmode=disable")
    names["server"] = srv
    names["dsn"] = dsn
    try:
        yield names
    finally:
        code = stop_server(srv)
        with psycopg.connect(dsn, autocommit=True) as adm:
            for db in (names["db"], names["direct"]):
                adm.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
            adm.execute(f'DROP ROLE IF EXISTS "{names["role"]}"')
    assert code == 0, "".join(srv.log)


def _psql(host: str, port: int, user: str, database: str, script: str) -> str:
    out = subprocess.run(["psql", "-X", "-q", "-h", host, "-p", str(port), "-U", user,
                          "-d", database], input=script, capture_output=True, text=True,
                         timeout=60)
    return out.stdout + out.stderr


def _conn(env: dict) -> psycopg.Connection:
    return psycopg.connect(env["server"].dsn(env["db"], "postgres"), autocommit=True)


def test_plain_materialized_views_answer_as_postgres_does(env):
    info = psycopg.conninfo.conninfo_to_dict(env["dsn"])
    direct = _psql(info.get("host", "127.0.0.1"), int(info.get("port", 5432)),
                   info.get("user", "postgres"), env["direct"], SCRIPT)
    srv = env["server"]
    through = _psql(srv.host, srv.port, "postgres", env["db"], SCRIPT)
    assert "ERROR" in direct and "has not been populated" in direct  # the script does err
    assert through.replace(env["db"], "DB") == direct.replace(env["direct"], "DB")


def test_batch_view_created_in_the_clients_session(env):
    with _conn(env) as c:
        c.execute("CREATE SCHEMA bs")
        c.execute("SET search_path = bs")
        c.execute("CREATE TABLE bt (a int)")
        c.execute("INSERT INTO bt VALUES (1), (2)")
        c.execute(f'GRANT USAGE, CREATE ON SCHEMA bs TO "{env["role"]}"')
        c.execute(f'GRANT SELECT ON bt TO "{env["role"]}"')
        c.execute("CREATE MATERIALIZED VIEW bmv WITH (refresh.interval.sec = 3600, "
                  "fillfactor = 70) USING heap AS SELECT * FROM bt")
        row = c.execute("SELECT n.nspname, c.reloptions, c.relkind FROM pg_class c "
                        "JOIN pg_namespace n ON n.oid = c.relnamespace "
                        "WHERE c.relname = 'bmv'").fetchone()
        assert row == ("bs", ["fillfactor=70"], "m")
        assert c.execute("SELECT count(*) FROM bmv").fetchone() == (2,)
        jobs = [r[0] for r in c.execute("SELECT name FROM rw_catalog.rw_batch_refresh_jobs")]
        assert "bs.bmv" in jobs
        c.execute("INSERT INTO bt VALUES (3)")
        c.execute("REFRESH MATERIALIZED VIEW bmv")  # found through the session's search_path
        assert c.execute("SELECT count(*) FROM bmv").fetchone() == (3,)

        # owned by the session's current role, not the upstream's
        c.execute(f'SET ROLE "{env["role"]}"')
        c.execute("CREATE MATERIALIZED VIEW rmv WITH (refresh.interval.sec = 3600) "
                  "AS SELECT a FROM bt")
        c.execute("RESET ROLE")
        owner = c.execute("SELECT matviewowner FROM pg_matviews WHERE matviewname = 'rmv'"
                          ).fetchone()
        assert owner == (env["role"],)

        # RisingWave's rule, with the session's search_path
        with pytest.raises(psycopg.errors.FeatureNotSupported, match=RULE):
            c.execute("CREATE MATERIALIZED VIEW bad AS SELECT * FROM bmv")
        c.execute("CREATE VIEW pv AS SELECT * FROM bmv")
        with pytest.raises(psycopg.errors.FeatureNotSupported, match=RULE):
            c.execute("CREATE MATERIALIZED VIEW bad AS SELECT * FROM pv")

        # DROP ... CASCADE of a batch view: its dependents go, and so does its job
        with pytest.raises(psycopg.errors.DependentObjectsStillExist):
            c.execute("DROP MATERIALIZED VIEW bmv")
        c.execute("DROP MATERIALIZED VIEW bmv CASCADE")
        assert c.execute("SELECT to_regclass('bs.pv')").fetchone() == (None,)
        jobs = [r[0] for r in c.execute("SELECT name FROM rw_catalog.rw_batch_refresh_jobs")]
        assert "bs.bmv" not in jobs and "bs.rmv" in jobs
        c.execute("DROP MATERIALIZED VIEW rmv")


def test_batch_view_with_no_data(env):
    with _conn(env) as c:
        c.execute("CREATE TABLE nt (a int)")
        c.execute("INSERT INTO nt VALUES (1)")
        c.execute("CREATE MATERIALIZED VIEW nd WITH (refresh.interval.sec = 3600) "
                  "AS SELECT * FROM nt WITH NO DATA")
        jobs = [r[0] for r in c.execute("SELECT name FROM rw_catalog.rw_batch_refresh_jobs")]
        assert "nd" in jobs
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState,
                           match='materialized view "nd" has not been populated'):
            c.execute("SELECT * FROM nd")
        c.execute("REFRESH MATERIALIZED VIEW nd")
        assert c.execute("SELECT count(*) FROM nd").fetchone() == (1,)
        with pytest.raises(psycopg.errors.FeatureNotSupported,
                           match="WITH NO DATA is not supported"):
            c.execute("REFRESH MATERIALIZED VIEW nd WITH NO DATA")
        c.execute("DROP MATERIALIZED VIEW nd")


def test_batch_view_create_checks_for_its_client_and_leaves_the_setting_as_it_was(env):
    """The first snapshot runs in the client's session under client_connection_check_interval
    = 1000 (a pgbarrier killed with -9 leaves no orphan CREATE upstream: test_ddl_crash), and
    the client's own value is back afterwards, whether the CREATE succeeded or failed."""
    with _conn(env) as c:
        if c.info.server_version < 140000:
            pytest.skip("client_connection_check_interval needs PostgreSQL 14")
        show = "SHOW client_connection_check_interval"
        default = c.execute(show).fetchone()
        c.execute("CREATE MATERIALIZED VIEW cc WITH (refresh.interval.sec = 3600) AS "
                  "SELECT current_setting('client_connection_check_interval') AS during")
        assert c.execute("SELECT during FROM cc").fetchone() == ("1s",)
        assert c.execute(show).fetchone() == default
        c.execute("SET client_connection_check_interval = '7s'")
        failing = ("CREATE MATERIALIZED VIEW cc0 WITH (refresh.interval.sec = 3600) AS "
                   "SELECT 1 / (g - 1) AS x FROM generate_series(1, 1) AS g")
        with pytest.raises(psycopg.errors.DivisionByZero):
            c.execute(failing)
        assert c.execute(show).fetchone() == ("7s",)
        # the extended protocol (psycopg prepares a statement run often): the error leaves the
        # upstream skipping until the client's Sync, and the restore must not wait for it
        with pytest.raises(psycopg.errors.DivisionByZero):
            c.execute(failing, prepare=True)
        assert c.execute(show).fetchone() == ("7s",)
        c.execute("DROP MATERIALIZED VIEW cc")
        assert c.execute(show).fetchone() == ("7s",)
        # a create cancelled by a DROP (57014): the session answers, with its own value back
        done = threading.Event()
        failure: list[BaseException] = []

        def create() -> None:
            try:
                c.execute("CREATE MATERIALIZED VIEW cc1 WITH (refresh.interval.sec = 3600) AS "
                          "SELECT 1 AS x FROM pg_sleep(30)", prepare=True)
            except psycopg.Error as exc:
                failure.append(exc)
            finally:
                done.set()
        threading.Thread(target=create, daemon=True).start()
        with _conn(env) as other:
            for _ in range(100):  # until its first snapshot runs (bounded: 10 s)
                if other.execute("SELECT count(*) FROM pg_stat_activity WHERE query LIKE "
                                 "'CREATE MATERIALIZED VIEW \"cc1\"%' AND state = 'active'"
                                 ).fetchone()[0]:
                    break
                done.wait(0.1)
            other.execute("DROP MATERIALIZED VIEW cc1")
        assert done.wait(30), "the cancelled create never answered"
        assert [type(e) for e in failure] == [psycopg.errors.QueryCanceled], failure
        assert c.execute(show).fetchone() == ("7s",)


def test_no_sqlglot_names_in_messages(env):
    with _conn(env) as c:
        with pytest.raises(psycopg.errors.SyntaxError) as info:
            c.execute("CREATE MATERIALIZED VIEW pz WITH (refresh.interval.sec = 5) "
                      "PARTITION BY x AS SELECT 1")
        assert info.value.diag.message_primary == 'syntax error at or near "PARTITION BY"'


def _history(c: psycopg.Connection, view: str) -> list[tuple]:
    return c.execute("SELECT trigger, status, error FROM rw_catalog.rw_refresh_history "
                     "WHERE job = %s ORDER BY run_id", [view]).fetchall()


@pytest.mark.parametrize("how", ["table", "schema", "direct"])
def test_a_batch_view_postgresql_drops_by_cascade_leaves_the_registry(env, how):
    """Issue 14 item 4: DROP TABLE/SCHEMA ... CASCADE (or a DROP pgbarrier never saw) takes
    the batch view upstream; the next time pgbarrier looks its job goes, with the reason in
    rw_refresh_history, and the name can be created again."""
    sfx = uuid.uuid4().hex[:6]
    schema, view = f"vs_{sfx}", f"gone_{sfx}"
    with _conn(env) as c:
        c.execute(f"CREATE SCHEMA {schema}")
        c.execute(f"CREATE TABLE {schema}.t AS SELECT 1 AS a")
        c.execute(f"CREATE MATERIALIZED VIEW {view} WITH (refresh.interval.sec = 3600) "
                  f"AS SELECT count(*) AS n FROM {schema}.t")
        if how == "table":
            c.execute(f"DROP TABLE {schema}.t CASCADE")
        elif how == "schema":
            c.execute(f"DROP SCHEMA {schema} CASCADE")
        else:
            with psycopg.connect(env["dsn"], dbname=env["db"], autocommit=True) as direct:
                direct.execute(f"DROP MATERIALIZED VIEW {view}")
        assert (view,) not in c.execute("SHOW MATERIALIZED VIEWS").fetchall()
        assert c.execute("SELECT count(*) FROM rw_catalog.rw_batch_refresh_jobs "
                         "WHERE name = %s", [view]).fetchone() == (0,)
        last = _history(c, view)[-1]
        assert last[:2] == ("vanished", "cancelled") and "no longer exists" in last[2]
        c.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        c.execute(f"CREATE TABLE IF NOT EXISTS {schema}.t AS SELECT 1 AS a")
        c.execute(f"CREATE MATERIALIZED VIEW {view} WITH (refresh.interval.sec = 3600) "
                  f"AS SELECT count(*) AS n FROM {schema}.t")
        assert c.execute(f"SELECT n FROM {view}").fetchone() == (1,)
        c.execute(f"DROP MATERIALIZED VIEW {view}")
        c.execute(f"DROP SCHEMA {schema} CASCADE")


def test_a_vanished_view_is_noticed_at_a_create_of_its_name_and_by_its_refresh(env):
    sfx = uuid.uuid4().hex[:6]
    view, again = f"gone_c_{sfx}", f"gone_r_{sfx}"
    with _conn(env) as c:
        c.execute(f"CREATE TABLE base_{sfx} AS SELECT 1 AS a")
        for name in (view, again):
            c.execute(f"CREATE MATERIALIZED VIEW {name} WITH (refresh.interval.sec = 3600) "
                      f"AS SELECT count(*) AS n FROM base_{sfx}")
        c.execute(f"DROP TABLE base_{sfx} CASCADE")
        c.execute(f"CREATE TABLE base_{sfx} AS SELECT 1 AS a UNION ALL SELECT 2")
        # a CREATE of the name looks first (no SHOW in between)
        c.execute(f"CREATE MATERIALIZED VIEW {view} WITH (refresh.interval.sec = 3600) "
                  f"AS SELECT count(*) AS n FROM base_{sfx}")
        assert c.execute(f"SELECT n FROM {view}").fetchone() == (2,)
        # a REFRESH of the other is PostgreSQL's 42P01, and its job is gone with it
        with pytest.raises(psycopg.errors.UndefinedTable, match=f'relation "{again}" does not'):
            c.execute(f"REFRESH MATERIALIZED VIEW {again}")
        assert c.execute("SELECT count(*) FROM rw_catalog.rw_batch_refresh_jobs WHERE name = %s",
                         [again]).fetchone() == (0,)
        assert _history(c, again)[-1][:2] == ("vanished", "cancelled")
        c.execute(f"DROP MATERIALIZED VIEW {view}")
        c.execute(f"DROP TABLE base_{sfx}")


def test_a_scheduled_run_of_a_vanished_view_drops_its_job(env):
    """Nobody looks: the job's own next run fails, and the job goes with the reason."""
    sfx = uuid.uuid4().hex[:6]
    view = f"gone_s_{sfx}"
    with _conn(env) as c:
        c.execute(f"CREATE TABLE base_{sfx} AS SELECT 1 AS a")
        c.execute(f"CREATE MATERIALIZED VIEW {view} WITH (refresh.interval.sec = 1) "
                  f"AS SELECT count(*) AS n FROM base_{sfx}")
        c.execute(f"DROP TABLE base_{sfx} CASCADE")
        waited = 0
        while c.execute("SELECT count(*) FROM rw_catalog.rw_batch_refresh_jobs WHERE name = %s",
                        [view]).fetchone() != (0,):
            waited += 1
            assert waited < 300, "the vanished job was not dropped after its failed run"
            c.execute("SELECT pg_sleep(0.1)")  # a bounded poll of observable state
        runs = _history(c, view)
        assert runs[-1][:2] == ("vanished", "cancelled"), runs
        assert [r[:2] for r in runs[1:-1]] == [("schedule", "failed")], runs


def _job(c: psycopg.Connection, name: str) -> tuple | None:
    return c.execute("SELECT name, refresh_interval_sec, status FROM "
                     "rw_catalog.rw_batch_refresh_jobs WHERE name = %s", [name]).fetchone()


def test_renaming_a_batch_view_keeps_its_job_in_step(env):
    """Issue 14 item 3: RENAME TO / SET SCHEMA of a batch-refresh view are PostgreSQL's,
    in the client's session, and the job follows: its runs, its schedule and REFRESH /
    DROP under the new name; PostgreSQL's refusals leave it as it was."""
    sfx = uuid.uuid4().hex[:6]
    batch, plain, schema = f"bren_{sfx}", f"pren_{sfx}", f"sren_{sfx}"
    with _conn(env) as c:
        c.execute(f"CREATE TABLE base_{sfx} AS SELECT 1 AS a")
        c.execute(f"CREATE SCHEMA {schema}")
        c.execute(f"CREATE MATERIALIZED VIEW {batch} WITH (refresh.interval.sec = 3600) "
                  f"AS SELECT count(*) AS n FROM base_{sfx}")
        c.execute(f"CREATE MATERIALIZED VIEW {plain} AS SELECT 1 AS x")
        # PostgreSQL's refusal (the name is taken) changes nothing
        with pytest.raises(psycopg.errors.DuplicateTable, match=f'relation "{plain}" already exists'):
            c.execute(f"ALTER MATERIALIZED VIEW {batch} RENAME TO {plain}")
        assert _job(c, batch) is not None
        assert c.execute(f"ALTER MATERIALIZED VIEW {batch} RENAME TO {batch}_2"
                         ).statusmessage == "ALTER MATERIALIZED VIEW"
        assert _job(c, batch) is None and _job(c, f"{batch}_2") == (f"{batch}_2", 3600, "idle")
        assert [r[:2] for r in _history(c, f"{batch}_2")] == [("create", "succeeded")]
        c.execute(f"INSERT INTO base_{sfx} VALUES (2)")
        c.execute(f"REFRESH MATERIALIZED VIEW {batch}_2")
        assert c.execute(f"SELECT n FROM {batch}_2").fetchone() == (2,)
        with pytest.raises(psycopg.errors.UndefinedTable):
            c.execute(f"REFRESH MATERIALIZED VIEW {batch}")
        # into another schema: pgbarrier names it schema.view, and finds it by search_path
        c.execute(f"ALTER MATERIALIZED VIEW IF EXISTS {batch}_2 SET SCHEMA {schema}")
        assert _job(c, f"{schema}.{batch}_2") is not None and _job(c, f"{batch}_2") is None
        assert (f"{schema}.{batch}_2",) in c.execute("SHOW MATERIALIZED VIEWS").fetchall()
        c.execute(f"INSERT INTO base_{sfx} VALUES (3)")
        c.execute(f"REFRESH MATERIALIZED VIEW {schema}.{batch}_2")
        assert c.execute(f"SELECT n FROM {schema}.{batch}_2").fetchone() == (3,)
        c.execute(f"ALTER MATERIALIZED VIEW {schema}.{batch}_2 SET SCHEMA public")
        assert _job(c, f"{batch}_2") is not None
        assert [r[:2] for r in _history(c, f"{batch}_2")] == [
            ("create", "succeeded"), ("manual", "succeeded"), ("manual", "succeeded")]
        c.execute(f"ALTER MATERIALIZED VIEW {batch}_2 RENAME COLUMN n TO m")  # PostgreSQL's
        # PostgreSQL's own view: its statement
        c.execute(f"ALTER MATERIALIZED VIEW {plain} RENAME TO {plain}_2")
        assert c.execute(f"SELECT x FROM {plain}_2").fetchone() == (1,)
        with pytest.raises(psycopg.errors.UndefinedTable):
            c.execute(f"ALTER MATERIALIZED VIEW {plain} RENAME TO {plain}_3")
        notices: list[str] = []
        c.add_notice_handler(lambda d: notices.append(d.message_primary))
        c.execute(f"ALTER MATERIALIZED VIEW IF EXISTS {plain} RENAME TO {plain}_3")
        assert notices == [f'relation "{plain}" does not exist, skipping']
        c.execute(f"DROP MATERIALIZED VIEW {plain}_2")
        c.execute(f"DROP MATERIALIZED VIEW {batch}_2")
        assert _job(c, f"{batch}_2") is None
        c.execute(f"DROP SCHEMA {schema}")
        c.execute(f"DROP TABLE base_{sfx}")


def test_a_renamed_batch_view_keeps_its_job_across_a_restart(tmp_path):
    dsn = require_postgres()
    db = f"pgb_mvrn_{uuid.uuid4().hex[:8]}"
    args = ("--database", db, "--upstream", dsn.rsplit("/", 1)[0] + "/",
            "--data-dir", str(tmp_path / "data"))
    srv = start_server(*args)
    try:
        with psycopg.connect(srv.dsn(db, "postgres"), autocommit=True) as c:
            c.execute("CREATE MATERIALIZED VIEW r1 WITH (refresh.interval.sec = 3600) AS SELECT 1 AS x")
            c.execute("ALTER MATERIALIZED VIEW r1 RENAME TO r2")
        assert stop_server(srv) == 0, "".join(srv.log)
        srv = start_server(*args)
        with psycopg.connect(srv.dsn(db, "postgres"), autocommit=True) as c:
            assert c.execute("SHOW MATERIALIZED VIEWS").fetchall() == [("r2",)]
            assert [r[:2] for r in _history(c, "r2")] == [("create", "succeeded")]
            c.execute("REFRESH MATERIALIZED VIEW r2")
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)
        with psycopg.connect(dsn, autocommit=True) as adm:
            adm.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
