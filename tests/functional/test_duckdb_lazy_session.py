"""A DuckDB session opens its DuckDB connection at the first statement that needs it
(issue 13: idle sessions' memory), and no client can tell.

A real server on an in-memory DuckDB, driven through psycopg. Each test starts sessions
whose first statements are the ones pgbarrier answers itself (SET/SHOW/RESET of the
client settings it keeps, DISCARD ALL, statement_timeout) or a temp table, then checks
what PostgreSQL would show: the values set, ``version()``, ``current_user``, the time
zone, temp objects and settings private to the session, ParameterStatus at start-up.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from psycopg import errors

from tests.conftest import ServerProcess, start_server, stop_server

TS = "SELECT '2020-01-01 00:00:00+00'::timestamptz::varchar"


@pytest.fixture(scope="module")
def srv() -> Iterator[ServerProcess]:
    server = start_server()
    yield server
    stop_server(server)


def connect(server: ServerProcess, user: str = "root", **kwargs: str) -> psycopg.Connection:
    return psycopg.connect(host=server.host, port=server.port, user=user, dbname="dev",
                           autocommit=True, **kwargs)


def test_settings_before_any_query_hold_and_stay_the_sessions(srv: ServerProcess) -> None:
    with connect(srv, user="alice") as a, connect(srv) as b:
        a.execute("SET application_name = 'lazy-a'")
        a.execute("SET TimeZone = 'UTC'")
        a.execute("SET DateStyle = 'ISO, DMY'")
        assert a.execute("SHOW application_name").fetchone() == ("lazy-a",)
        assert a.info.parameter_status("application_name") == "lazy-a"
        a.execute("SET TimeZone = 'Asia/Tokyo'")
        assert a.info.parameter_status("TimeZone") == "Asia/Tokyo"
        # the first statement DuckDB runs sees every setting taken before it
        assert a.execute(TS).fetchone() == ("2020-01-01 09:00:00+09",)
        assert a.execute("SELECT current_user, version()").fetchone() == (
            "alice", a.execute("SELECT version()").fetchone()[0])
        assert a.execute("SELECT version()").fetchone()[0].startswith("PostgreSQL 15.0 (pgbarrier")
        assert a.execute("SHOW DateStyle").fetchone() == ("ISO, DMY",)
        # the other session, whose first statement comes after all of that, has its own
        assert b.execute(TS).fetchone() == ("2020-01-01 00:00:00+00",)
        assert b.execute("SHOW application_name").fetchone() == ("",)
        assert b.execute("SELECT current_user").fetchone() == ("root",)


def test_discard_all_and_reset_before_any_query(srv: ServerProcess) -> None:
    with connect(srv) as conn:
        conn.execute("SET TimeZone = 'Europe/Berlin'")
        conn.execute("DISCARD ALL")
        conn.execute("RESET ALL")
        conn.execute("DISCARD TEMP")
        assert conn.execute("SHOW TimeZone").fetchone() == ("UTC",)
        assert conn.execute(TS).fetchone() == ("2020-01-01 00:00:00+00",)
    with connect(srv) as conn:
        conn.execute("DISCARD ALL")
        assert conn.execute("SELECT 1 / 2").fetchone() == (0,)  # integer division, as PostgreSQL


def test_a_session_whose_first_statement_is_a_temp_table(srv: ServerProcess) -> None:
    with connect(srv) as a, connect(srv) as b:
        a.execute("CREATE TEMP TABLE lazy_t AS SELECT 1 AS x, '{}'::jsonb AS j")
        assert a.execute("SELECT x FROM lazy_t").fetchone() == (1,)
        with pytest.raises(errors.UndefinedTable):
            b.execute("SELECT x FROM lazy_t")
        b.execute("CREATE TEMP TABLE lazy_t (y int)")  # its own, no clash
        assert b.execute("SELECT count(*) FROM lazy_t").fetchone() == (0,)
        assert a.execute("SELECT x FROM lazy_t").fetchone() == (1,)


def test_a_duckdb_setting_as_the_first_statement_stays_the_sessions(srv: ServerProcess) -> None:
    with connect(srv) as a, connect(srv) as b:
        a.execute("SET integer_division = false")  # pgbarrier's default is true (PostgreSQL's /)
        assert a.execute("SELECT 1 / 2").fetchone() == (0.5,)
        assert b.execute("SELECT 1 / 2").fetchone() == (0,)


def test_a_start_up_time_zone_is_in_force(srv: ServerProcess) -> None:
    with connect(srv, options="-c TimeZone=Asia/Tokyo") as conn:
        assert conn.info.parameter_status("TimeZone") == "Asia/Tokyo"
        assert conn.execute(TS).fetchone() == ("2020-01-01 09:00:00+09",)
    with pytest.raises(psycopg.OperationalError, match="TimeZone"):
        connect(srv, options="-c TimeZone=Nowhere/Special")
    with connect(srv) as conn:  # the server goes on
        assert conn.execute(TS).fetchone() == ("2020-01-01 00:00:00+00",)


def test_a_bad_time_zone_before_any_query_is_22023_and_changes_nothing(
        srv: ServerProcess) -> None:
    with connect(srv) as conn:
        with pytest.raises(errors.InvalidParameterValue):
            conn.execute("SET TimeZone = 'Nowhere/Special'")
        assert conn.execute("SHOW TimeZone").fetchone() == ("UTC",)
        assert conn.execute(TS).fetchone() == ("2020-01-01 00:00:00+00",)


def test_many_idle_sessions_then_each_runs_a_statement(srv: ServerProcess) -> None:
    conns = [connect(srv, user=f"u{i}") for i in range(30)]
    try:
        for i, conn in enumerate(conns):
            assert conn.execute("SELECT current_user").fetchone() == (f"u{i}",)
    finally:
        for conn in conns:
            conn.close()
