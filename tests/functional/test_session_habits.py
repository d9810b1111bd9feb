"""PostgreSQL session habits (issue 15, item 5) on both backends, PostgreSQL being the
reference: search_path, TimeZone, transaction modes, settings, SQL PREPARE/EXECUTE,
cursors. Each test runs the same statements against pgbarrier over DuckDB and over
PostgreSQL and expects PostgreSQL's answers.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import psycopg
import pytest

from conftest import inprocess_app

DATABASE = "sess_habits"


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def dsn(request) -> Iterator[str]:
    with inprocess_app(request.param, DATABASE) as app:
        yield f"host=127.0.0.1 port={app.server.port} dbname={DATABASE} user=postgres"


def one(conn: psycopg.Connection, sql: str):
    return conn.execute(sql).fetchone()[0]


def test_search_path_resolves_unqualified_names(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS habits_s CASCADE")
        conn.execute("CREATE SCHEMA habits_s")
        try:
            conn.execute("CREATE TABLE habits_s.sp_t (a int)")
            conn.execute("INSERT INTO habits_s.sp_t VALUES (7)")
            with pytest.raises(psycopg.errors.UndefinedTable):
                conn.execute("SELECT a FROM sp_t")
            conn.execute("SET search_path = habits_s, public")
            assert one(conn, "SHOW search_path") == "habits_s, public"
            assert one(conn, "SELECT a FROM sp_t") == 7
            assert conn.execute("SELECT current_schema(), current_schemas(false)").fetchone() \
                == ("habits_s", ["habits_s", "public"])
            assert one(conn, "SELECT current_schemas(true)")[0] == "pg_catalog"
            conn.execute("CREATE TABLE sp_new (b int)")  # created in the first schema
            assert one(conn, "SELECT table_schema FROM information_schema.tables "
                             "WHERE table_name = 'sp_new'") == "habits_s"
            conn.execute("RESET search_path")
            assert one(conn, "SELECT current_schema()") == "public"
            with pytest.raises(psycopg.errors.UndefinedTable):
                conn.execute("SELECT a FROM sp_t")
        finally:
            conn.execute("RESET search_path")
            conn.execute("DROP SCHEMA habits_s CASCADE")


def test_search_path_from_startup_options(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS habits_opt CASCADE")
        conn.execute("CREATE SCHEMA habits_opt")
        conn.execute("CREATE TABLE habits_opt.opt_t (a int)")
        conn.execute("INSERT INTO habits_opt.opt_t VALUES (3)")
    try:
        with psycopg.connect(dsn, autocommit=True,
                             options="-c search_path=habits_opt,public") as conn:
            assert one(conn, "SHOW search_path") == "habits_opt,public"  # as given
            assert one(conn, "SELECT current_schema()") == "habits_opt"
            assert one(conn, "SELECT a FROM opt_t") == 3
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("DROP SCHEMA habits_opt CASCADE")


def test_search_path_skips_missing_schemas_and_shows_as_postgres(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET search_path = 'My S', Habits_Missing, public")
        assert one(conn, "SHOW search_path") == '"My S", habits_missing, public'
        assert one(conn, "SELECT current_schemas(false)") == ["public"]
        conn.execute("CREATE SCHEMA habits_missing")  # exists now: on the path from now on
        try:
            assert one(conn, "SELECT current_schema()") == "habits_missing"
        finally:
            conn.execute("DROP SCHEMA habits_missing")
        assert one(conn, "SELECT current_schema()") == "public"
        conn.execute("SET search_path TO DEFAULT")
        assert one(conn, "SHOW search_path") == '"$user", public'


def _raw_text(conn: psycopg.Connection) -> None:
    """timestamptz values as the server's text, not parsed by psycopg."""
    from psycopg.types.string import TextLoader

    conn.adapters.register_loader("timestamptz", TextLoader)


def test_timezone_applies_to_timestamptz_text_and_binary(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        _raw_text(conn)
        value = "SELECT '2024-01-01 00:00:00+00'::timestamptz"
        assert one(conn, value) == "2024-01-01 00:00:00+00"
        conn.execute("SET TimeZone = 'Asia/Tokyo'")
        assert one(conn, value) == "2024-01-01 09:00:00+09"
        conn.execute("SET TIME ZONE 'Asia/Kolkata'")
        assert one(conn, value) == "2024-01-01 05:30:00+05:30"
        conn.execute("SET TimeZone = 'America/New_York'")
        assert one(conn, "SELECT '2024-07-01 12:00:00+00'::timestamptz") == \
            "2024-07-01 08:00:00-04"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET TimeZone = 'Asia/Tokyo'")
        got = conn.cursor(binary=True).execute(
            "SELECT '2024-01-01 00:00:00+00'::timestamptz").fetchone()[0]
        assert got == dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
        assert got.utcoffset() == dt.timedelta(hours=9)  # psycopg reads the session zone


def test_timezone_from_startup_parameter(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True, options="-c TimeZone=Asia/Tokyo") as conn:
        _raw_text(conn)
        assert conn.info.parameter_status("TimeZone") == "Asia/Tokyo"
        assert one(conn, "SELECT '2024-01-01 00:00:00+00'::timestamptz") == \
            "2024-01-01 09:00:00+09"


def test_timezone_from_pgtz(dsn) -> None:
    import os
    import subprocess

    params = dict(p.split("=", 1) for p in dsn.split())
    out = subprocess.run(
        ["psql", "-X", "-At", "-h", params["host"], "-p", params["port"], "-U", params["user"],
         "-d", params["dbname"], "-c", "SHOW TimeZone",
         "-c", "SELECT '2024-01-01 00:00:00+00'::timestamptz"],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PGTZ": "Asia/Tokyo"})
    assert out.stdout.split() == ["Asia/Tokyo", "2024-01-01", "09:00:00+09"], out.stderr


# --------------------------------------------------------------------------- transaction modes


def test_begin_accepts_every_transaction_mode(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert one(conn, "SHOW TRANSACTION ISOLATION LEVEL") == "read committed"
        for begin, level, read_only in [
                ("BEGIN ISOLATION LEVEL REPEATABLE READ", "repeatable read", "off"),
                ("BEGIN ISOLATION LEVEL SERIALIZABLE, READ ONLY, DEFERRABLE", "serializable", "on"),
                ("START TRANSACTION ISOLATION LEVEL READ UNCOMMITTED READ WRITE NOT DEFERRABLE",
                 "read uncommitted", "off"),
                ("BEGIN TRANSACTION ISOLATION LEVEL READ COMMITTED", "read committed", "off")]:
            cur = conn.execute(begin)
            assert cur.statusmessage == begin.split()[0].replace("START", "START TRANSACTION")
            assert one(conn, "SHOW TRANSACTION ISOLATION LEVEL") == level
            assert one(conn, "SHOW transaction_isolation") == level
            assert one(conn, "SELECT current_setting('transaction_read_only')") == read_only
            conn.execute("COMMIT")
            assert one(conn, "SHOW transaction_isolation") == "read committed"
        with pytest.raises(psycopg.errors.SyntaxError) as err:
            conn.execute("BEGIN ISOLATION LEVEL SOMETIMES")
        assert 'at or near "SOMETIMES"' in str(err.value)
        assert err.value.diag.statement_position == "23"


def test_set_transaction_and_session_characteristics(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        notices: list[str] = []
        conn.add_notice_handler(lambda d: notices.append(d.message_primary))
        conn.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")  # no block: no effect
        assert notices == ["SET TRANSACTION can only be used in transaction blocks"]
        assert one(conn, "SHOW transaction_isolation") == "read committed"
        conn.execute("BEGIN")
        conn.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY")
        assert one(conn, "SHOW transaction_isolation") == "serializable"
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")  # SHOW took no snapshot
        conn.execute("SELECT 1")
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")  # the same: no change
        with pytest.raises(psycopg.errors.ActiveSqlTransaction, match="before any query"):
            conn.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
        conn.execute("ROLLBACK")
        conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        assert one(conn, "SHOW default_transaction_isolation") == "repeatable read"
        assert one(conn, "SHOW transaction_isolation") == "repeatable read"
        rows = dict(conn.execute("SELECT name, setting FROM pg_settings "
                                 "WHERE name LIKE '%transaction_isolation'").fetchall())
        assert rows == {"default_transaction_isolation": "repeatable read",
                        "transaction_isolation": "repeatable read"}
        conn.execute("SET default_transaction_isolation TO DEFAULT")
        assert one(conn, "SHOW transaction_isolation") == "read committed"
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="requires a Boolean"):
            conn.execute("SET default_transaction_read_only = maybe")


def test_read_only_transactions_refuse_writes(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS ro_t")
        conn.execute("CREATE TABLE ro_t (a int)")
        conn.execute("CREATE TEMP TABLE ro_tmp (a int)")
        refused = {"INSERT INTO ro_t VALUES (1)": "INSERT",
                   "UPDATE ro_t SET a = 2": "UPDATE",
                   "DELETE FROM ro_t": "DELETE",
                   "CREATE TABLE ro_new (a int)": "CREATE TABLE",
                   "CREATE TEMP TABLE ro_new (a int)": "CREATE TABLE",
                   "DROP TABLE ro_t": "DROP TABLE",
                   "TRUNCATE ro_t": "TRUNCATE TABLE",
                   "WITH w AS (INSERT INTO ro_t VALUES (1) RETURNING a) SELECT * FROM w": "SELECT"}
        for sql, name in refused.items():
            conn.execute("BEGIN READ ONLY")
            with pytest.raises(psycopg.errors.ReadOnlySqlTransaction) as err:
                conn.execute(sql)
            assert str(err.value) == f"cannot execute {name} in a read-only transaction"
            conn.execute("ROLLBACK")
        conn.execute("BEGIN READ ONLY")  # temporary tables may be written, reads are fine
        conn.execute("INSERT INTO ro_tmp VALUES (1)")
        assert one(conn, "SELECT count(*) FROM ro_t") == 0
        conn.execute("COMMIT")
        conn.execute("SET default_transaction_read_only = on")  # every transaction
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            conn.execute("INSERT INTO ro_t VALUES (1)")
        conn.execute("SET default_transaction_read_only = off")
        conn.execute("INSERT INTO ro_t VALUES (1)")
        conn.execute("DROP TABLE ro_t")


def test_psycopg_isolation_level_and_read_only(dsn) -> None:
    with psycopg.connect(dsn) as conn:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        conn.read_only = True
        assert one(conn, "SHOW transaction_isolation") == "repeatable read"
        assert one(conn, "SHOW transaction_read_only") == "on"
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            conn.execute("CREATE TABLE psy_ro (a int)")
        conn.rollback()
        conn.isolation_level = psycopg.IsolationLevel.SERIALIZABLE
        conn.read_only = False
        assert one(conn, "SHOW transaction_isolation") == "serializable"
        assert one(conn, "SHOW transaction_read_only") == "off"
        conn.commit()


def test_asyncpg_transaction_modes(dsn) -> None:
    import asyncio

    import asyncpg

    params = dict(p.split("=", 1) for p in dsn.split())

    async def go() -> None:
        conn = await asyncpg.connect(host=params["host"], port=int(params["port"]),
                                     user=params["user"], database=params["dbname"])
        try:
            async with conn.transaction(isolation="repeatable_read", readonly=True):
                assert await conn.fetchval("SHOW transaction_isolation") == "repeatable read"
                assert await conn.fetchval("SHOW transaction_read_only") == "on"
                with pytest.raises(asyncpg.exceptions.ReadOnlySQLTransactionError):
                    await conn.execute("CREATE TABLE apg_ro (a int)")
        except asyncpg.exceptions.InFailedSQLTransactionError:
            pass
        finally:
            await conn.close()
        conn = await asyncpg.connect(host=params["host"], port=int(params["port"]),
                                     user=params["user"], database=params["dbname"])
        try:
            async with conn.transaction(isolation="serializable", deferrable=True,
                                        readonly=True):
                assert await conn.fetchval("SHOW transaction_deferrable") == "on"
        finally:
            await conn.close()

    asyncio.run(go())


# --------------------------------------------------------------------------- settings


@pytest.mark.parametrize("name, value, shown", [
    ("synchronous_commit", "on", "on"), ("synchronous_commit", "'LOCAL'", "local"),
    ("synchronous_commit", "true", "on"), ("work_mem", "'64MB'", "64MB"),
    ("work_mem", "65536", "64MB"), ("work_mem", "'1.5MB'", "1536kB"),
    ("jit", "off", "off"), ("jit", "'of'", "off"), ("row_security", "off", "off"),
    ("extra_float_digits", "3", "3"), ("lock_timeout", "'90s'", "90s"),
    ("idle_in_transaction_session_timeout", "'5min'", "5min"),
    ("effective_cache_size", "'4GB'", "4GB"), ("effective_cache_size", "1000", "8000kB"),
    ("vacuum_cost_delay", "2", "2ms"), ("random_page_cost", "1.1", "1.1"),
    ("geqo_threshold", "1e3", "1000"), ("default_text_search_config", "'pg_catalog.english'",
                                        "pg_catalog.english"),
    ("habits.custom", "'x y'", "x y")])
def test_user_settings_are_accepted_and_shown_back(request, dsn, name, value, shown) -> None:
    if name.startswith("idle_") and request.node.callspec.params["dsn"] == "postgres":
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "pgbarrier keeps the idle timeouts itself and never sends them upstream, so the "
            "upstream's current_setting does not see them")))
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"SET {name} = {value}")
        assert one(conn, f"SHOW {name}") == shown
        assert one(conn, f"SELECT current_setting('{name}')") == shown
        if "." not in name:
            assert conn.execute("SELECT count(*) FROM pg_settings WHERE name = %s",
                                (name,)).fetchone()[0] == 1


def test_pg_settings_setting_is_in_the_settings_unit(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET work_mem = '64MB'")
        conn.execute("SET lock_timeout = '5s'")
        rows = dict(conn.execute("SELECT name, setting FROM pg_settings "
                                 "WHERE name IN ('work_mem', 'lock_timeout')").fetchall())
        assert rows == {"work_mem": "65536", "lock_timeout": "5000"}


@pytest.mark.parametrize("sql, sqlstate, message, hint", [
    ("SET synchronous_commit = bogus", "22023",
     'invalid value for parameter "synchronous_commit": "bogus"',
     "Available values: local, remote_write, remote_apply, on, off."),
    ("SET work_mem = 10", "22023",
     '10 kB is outside the valid range for parameter "work_mem" (64 .. 2147483647)', None),
    ("SET work_mem = '64 XB'", "22023", 'invalid value for parameter "work_mem": "64 XB"',
     'Valid units for this parameter are "B", "kB", "MB", "GB", and "TB".'),
    ("SET work_mem = 1, 2", "22023", "SET work_mem takes only one argument", None),
    ("SET jit = maybe", "22023", 'parameter "jit" requires a Boolean value', None),
    ("SET vacuum_cost_delay = 200", "22023",
     '200 ms is outside the valid range for parameter "vacuum_cost_delay" (0 .. 100)', None),
    ("SET habits_unknown = 1", "42704",
     'unrecognized configuration parameter "habits_unknown"', None),
    ("SHOW habits_unknown", "42704",
     'unrecognized configuration parameter "habits_unknown"', None),
    ("SELECT current_setting('habits_unknown')", "42704",
     'unrecognized configuration parameter "habits_unknown"', None),
])
def test_bad_settings_fail_as_postgres(dsn, sql, sqlstate, message, hint) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        with pytest.raises(psycopg.Error) as err:
            conn.execute(sql)
        assert (err.value.sqlstate, err.value.diag.message_primary, err.value.diag.message_hint) \
            == (sqlstate, message, hint)
        assert one(conn, "SELECT current_setting('habits_unknown', true)") is None


# --------------------------------------------------------------------------- SQL PREPARE


def test_sql_prepare_execute_returns_rows_and_inner_tags(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS prep_t")
        conn.execute("CREATE TABLE prep_t (a int, b text)")
        assert conn.execute("PREPARE hp AS SELECT $1::int + 1 AS x").statusmessage == "PREPARE"
        cur = conn.execute("EXECUTE hp(1)")
        assert (cur.statusmessage, [d.name for d in cur.description], cur.fetchall()) == \
            ("SELECT 1", ["x"], [(2,)])
        conn.execute("PREPARE hq(int, text) AS SELECT $1 + 1 AS n, $2 || '!' AS s")
        assert conn.execute("EXECUTE hq('41', 'hi')").fetchall() == [(42, "hi!")]
        conn.execute("PREPARE hins(int, text) AS INSERT INTO prep_t VALUES ($1, $2)")
        assert conn.execute("EXECUTE hins(5, 'five')").statusmessage == "INSERT 0 1"
        conn.execute("PREPARE hupd AS UPDATE prep_t SET a = a + 1")
        assert conn.execute("EXECUTE hupd").statusmessage == "UPDATE 1"
        conn.execute("PREPARE hsel AS SELECT a, b FROM prep_t ORDER BY a")
        assert conn.execute("EXECUTE hsel").fetchall() == [(6, "five")]
        with pytest.raises(psycopg.errors.SyntaxError) as err:
            conn.execute("EXECUTE hq(1)")
        assert err.value.diag.message_primary == \
            'wrong number of parameters for prepared statement "hq"'
        assert err.value.diag.message_detail == "Expected 2 parameters but got 1."
        with pytest.raises(psycopg.errors.DuplicatePreparedStatement):
            conn.execute("PREPARE hp AS SELECT 1")
        assert conn.execute("DEALLOCATE hp").statusmessage == "DEALLOCATE"
        with pytest.raises(psycopg.errors.InvalidSqlStatementName,
                           match='prepared statement "hp" does not exist'):
            conn.execute("EXECUTE hp(1)")
        with pytest.raises(psycopg.errors.InvalidSqlStatementName):
            conn.execute("DEALLOCATE PREPARE hp")
        conn.execute("DEALLOCATE ALL")
        with pytest.raises(psycopg.errors.InvalidSqlStatementName):
            conn.execute("EXECUTE hsel")
        conn.execute("DROP TABLE prep_t")


def test_sql_execute_in_simple_query_protocol(dsn) -> None:
    import subprocess

    params = dict(p.split("=", 1) for p in dsn.split())
    out = subprocess.run(
        ["psql", "-X", "-At", "-h", params["host"], "-p", params["port"], "-U", params["user"],
         "-d", params["dbname"], "-c", "PREPARE sq(int) AS SELECT $1 * 2 AS twice; EXECUTE sq(21)"],
        capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["PREPARE", "42"], out.stderr


# --------------------------------------------------------------------------- cursors


def _fetch(conn: psycopg.Connection, sql: str) -> tuple[str, list]:
    cur = conn.execute(sql)
    return cur.statusmessage, cur.fetchall() if cur.description else []


def test_declare_fetch_move_close(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.NoActiveSqlTransaction,
                           match="DECLARE CURSOR can only be used in transaction blocks"):
            conn.execute("DECLARE hc CURSOR FOR SELECT 1")
        conn.execute("BEGIN")
        assert conn.execute("DECLARE hc CURSOR FOR SELECT i FROM generate_series(0, 9) g(i)"
                            ).statusmessage == "DECLARE CURSOR"
        assert _fetch(conn, "FETCH 2 FROM hc") == ("FETCH 2", [(0,), (1,)])
        assert _fetch(conn, "FETCH hc") == ("FETCH 1", [(2,)])
        assert _fetch(conn, "FETCH NEXT IN hc") == ("FETCH 1", [(3,)])
        assert _fetch(conn, "MOVE 3 IN hc") == ("MOVE 3", [])
        assert _fetch(conn, "FETCH FORWARD 2 FROM hc") == ("FETCH 2", [(7,), (8,)])
        assert _fetch(conn, "FETCH ALL FROM hc") == ("FETCH 1", [(9,)])
        assert _fetch(conn, "FETCH hc") == ("FETCH 0", [])
        with pytest.raises(psycopg.errors.DuplicateCursor, match='cursor "hc" already exists'):
            conn.execute("DECLARE hc CURSOR FOR SELECT 1")
        conn.execute("ROLLBACK")
        conn.execute("BEGIN")
        with pytest.raises(psycopg.errors.InvalidCursorName, match='cursor "hc" does not exist'):
            conn.execute("FETCH hc")  # the block ended: so did the cursor
        conn.execute("ROLLBACK")
        conn.execute("BEGIN")
        conn.execute("DECLARE hc CURSOR FOR SELECT 1")
        assert conn.execute("CLOSE hc").statusmessage == "CLOSE CURSOR"
        with pytest.raises(psycopg.errors.InvalidCursorName):
            conn.execute("CLOSE hc")
        conn.execute("ROLLBACK")


def test_scroll_cursor_goes_both_ways(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("BEGIN")
        conn.execute("DECLARE hs SCROLL CURSOR FOR SELECT i FROM generate_series(1, 5) g(i)")
        assert _fetch(conn, "FETCH LAST FROM hs") == ("FETCH 1", [(5,)])
        assert _fetch(conn, "FETCH PRIOR FROM hs") == ("FETCH 1", [(4,)])
        assert _fetch(conn, "FETCH ABSOLUTE 2 FROM hs") == ("FETCH 1", [(2,)])
        assert _fetch(conn, "FETCH RELATIVE 2 FROM hs") == ("FETCH 1", [(4,)])
        assert _fetch(conn, "FETCH BACKWARD ALL FROM hs") == ("FETCH 3", [(3,), (2,), (1,)])
        assert _fetch(conn, "FETCH FORWARD 2 FROM hs") == ("FETCH 2", [(1,), (2,)])
        assert _fetch(conn, "FETCH RELATIVE 0 FROM hs") == ("FETCH 1", [(2,)])
        assert _fetch(conn, "MOVE FORWARD ALL IN hs") == ("MOVE 3", [])
        assert _fetch(conn, "FETCH -2 FROM hs") == ("FETCH 2", [(5,), (4,)])
        assert _fetch(conn, "FETCH ABSOLUTE -1 FROM hs") == ("FETCH 1", [(5,)])
        assert _fetch(conn, "FETCH ABSOLUTE 9 FROM hs") == ("FETCH 0", [])
        assert _fetch(conn, "FETCH BACKWARD 1 FROM hs") == ("FETCH 1", [(5,)])
        conn.execute("COMMIT")


def test_with_hold_cursor_outlives_commit_not_rollback(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DECLARE hh CURSOR WITH HOLD FOR SELECT i * 10 FROM generate_series(0, 2) g(i)")
        assert _fetch(conn, "FETCH 2 FROM hh") == ("FETCH 2", [(0,), (10,)])
        conn.execute("BEGIN")
        conn.execute("DECLARE hh2 CURSOR WITH HOLD FOR SELECT 'kept'")
        conn.execute("DECLARE hh3 CURSOR FOR SELECT 'gone'")
        conn.execute("COMMIT")
        assert _fetch(conn, "FETCH ALL FROM hh2") == ("FETCH 1", [("kept",)])
        with pytest.raises(psycopg.errors.InvalidCursorName):
            conn.execute("FETCH hh3")
        conn.execute("BEGIN")
        conn.execute("DECLARE hh4 CURSOR WITH HOLD FOR SELECT 1")
        conn.execute("ROLLBACK")
        with pytest.raises(psycopg.errors.InvalidCursorName):
            conn.execute("FETCH hh4")
        assert _fetch(conn, "FETCH ALL FROM hh") == ("FETCH 1", [(20,)])
        assert conn.execute("CLOSE ALL").statusmessage == "CLOSE CURSOR ALL"
        with pytest.raises(psycopg.errors.InvalidCursorName):
            conn.execute("FETCH hh")


def test_psycopg_named_cursor(dsn) -> None:
    with psycopg.connect(dsn) as conn:
        with conn.cursor("habits_named") as cur:
            cur.itersize = 7
            cur.execute("SELECT i, 'r' || i AS label FROM generate_series(1, 25) g(i)")
            assert [d.name for d in cur.description] == ["i", "label"]
            assert cur.fetchone() == (1, "r1")
            assert cur.fetchmany(3) == [(2, "r2"), (3, "r3"), (4, "r4")]
            assert [r[0] for r in cur] == list(range(5, 26))
        conn.commit()
        with conn.cursor("habits_scroll", scrollable=True, withhold=True) as cur:
            cur.execute("SELECT i FROM generate_series(1, 5) g(i)")
            conn.commit()
            assert cur.fetchall() == [(1,), (2,), (3,), (4,), (5,)]
            cur.scroll(1, mode="absolute")
            assert cur.fetchone() == (2,)
        with conn.cursor("habits_binary", binary=True) as cur:
            cur.execute("SELECT 42::int AS answer")
            assert cur.fetchall() == [(42,)]


# --------------------------------------------------------------------------- keyword names


def test_unreserved_keywords_as_table_and_column_names(dsn) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS at")
        conn.execute("CREATE TABLE at (by int, show text, ts timestamptz)")
        try:
            conn.execute("INSERT INTO at (by, show, ts) VALUES (%s, %s, %s)",
                         (1, "one", dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)))
            conn.execute("INSERT INTO at VALUES (2, 'at by show', NULL)")
            rows = conn.execute(
                "SELECT at.by, show, ts AT TIME ZONE 'UTC' AS utc FROM at "
                "WHERE by >= %s ORDER BY by", (1,)).fetchall()
            assert rows == [(1, "one", dt.datetime(2024, 1, 1)), (2, "at by show", None)]
            cur = conn.execute("SELECT by FROM at GROUP BY by ORDER BY by DESC")
            assert [d.name for d in cur.description] == ["by"]
            assert cur.fetchall() == [(2,), (1,)]
            assert conn.execute("UPDATE at SET show = 'x' WHERE by = 1").statusmessage == \
                "UPDATE 1"
        finally:
            conn.execute("DROP TABLE at")
