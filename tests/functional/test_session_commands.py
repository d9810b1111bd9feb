"""Session commands clients send at connect, on both backends (PostgreSQL is the reference).

SET/SHOW/RESET of PostgreSQL settings, transaction isolation, DEALLOCATE, DISCARD,
set_config/current_setting, pg_settings, time zones and savepoints, through psycopg.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import psycopg
import pytest

from conftest import inprocess_app

DATABASE = "sess_cmds"


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def dsn(request) -> Iterator[str]:
    with inprocess_app(request.param, DATABASE) as app:
        yield f"host=127.0.0.1 port={app.server.port} dbname={DATABASE} user=postgres"


def one(conn: psycopg.Connection, sql: str):
    return conn.execute(sql).fetchone()[0]


def test_connect_time_settings_are_kept_per_session(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True) as a, psycopg.connect(dsn, autocommit=True) as b:
        a.execute("SET extra_float_digits = 3")
        a.execute("SET application_name = 'PostgreSQL JDBC Driver'")
        a.execute("SET search_path = public")
        a.execute("SET statement_timeout = 0")
        assert one(a, "SHOW extra_float_digits") == "3"
        assert one(a, "SHOW application_name") == "PostgreSQL JDBC Driver"
        assert one(b, "SHOW extra_float_digits") == "1"
        assert one(a, "SHOW standard_conforming_strings") == "on"
        assert one(a, "SHOW DateStyle") == "ISO, MDY"
        a.execute("RESET extra_float_digits")
        assert one(a, "SHOW extra_float_digits") == "1"


def test_transaction_isolation(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert one(conn, "SHOW TRANSACTION ISOLATION LEVEL") == "read committed"
        conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        assert one(conn, "SHOW default_transaction_isolation") == "repeatable read"
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            conn.execute("SET default_transaction_isolation = 'sometimes'")


def test_set_config_current_setting_and_pg_settings(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert one(conn, "SELECT set_config('application_name', 'bi-tool', false)") == "bi-tool"
        assert one(conn, "SELECT current_setting('application_name')") == "bi-tool"
        assert one(conn, "SHOW application_name") == "bi-tool"
        row = conn.execute("SELECT name, setting FROM pg_catalog.pg_settings "
                           "WHERE name = 'standard_conforming_strings'").fetchone()
        assert row == ("standard_conforming_strings", "on")
        assert one(conn, "SELECT current_setting('server_version_num')").startswith("1")
        with pytest.raises(psycopg.errors.UndefinedObject):
            conn.execute("SELECT current_setting('no_such_setting')")


def test_deallocate_and_discard(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET application_name = 'before-discard'")
        assert conn.execute("DEALLOCATE ALL").statusmessage == "DEALLOCATE ALL"
        conn.execute("CREATE TEMP TABLE scratch (x int)")
        assert conn.execute("DISCARD ALL").statusmessage == "DISCARD ALL"
        # reset to the session's start-up value ('' here; the upstream backend's own
        # connection name pgbarrier/<user> there, see backends/postgres.py)
        assert one(conn, "SHOW application_name") != "before-discard"
        with pytest.raises(psycopg.errors.UndefinedTable):
            conn.execute("SELECT * FROM scratch")


def test_time_zone_applies_to_timestamptz(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute('SET TIME ZONE "Asia/Shanghai"')
        assert one(conn, "SHOW TIME ZONE") == "Asia/Shanghai"
        assert conn.info.parameter_status("TimeZone") == "Asia/Shanghai"
        value = one(conn, "SELECT '2024-06-01 12:00'::timestamptz")
        assert value.utcoffset() == dt.timedelta(hours=8)
        assert value.astimezone(dt.timezone.utc).hour == 4
        text = one(conn, "SELECT CAST(TIMESTAMPTZ '2024-01-01 00:00:00+00' AS text)")
        assert text == "2024-01-01 08:00:00+08"
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            conn.execute("SET TimeZone = 'Nowhere/Atlantis'")
        conn.execute("RESET TimeZone")
        assert one(conn, "SELECT TIMESTAMPTZ '2024-01-01 00:00:00+00'").utcoffset() == \
            dt.timedelta(0)


def test_savepoints_in_nested_transaction_blocks(dsn) -> None:
    """psycopg's nested transaction() (SQLAlchemy's first connect) issues SAVEPOINT and
    RELEASE; they work when the inner block succeeds."""
    with psycopg.connect(dsn) as conn:
        with conn.transaction():
            conn.execute("CREATE TABLE IF NOT EXISTS sp_t (x int)")
            with conn.transaction():
                conn.execute("INSERT INTO sp_t VALUES (1)")
        assert one(conn, "SELECT count(*) FROM sp_t") == 1
        conn.rollback()
