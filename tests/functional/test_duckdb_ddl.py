"""Issue 26 on the DuckDB backend: pgbarrier's views live in their schemas, object kinds
and dependencies are PostgreSQL's (DROP), for pgbarrier's batch-refresh and streaming
views too. What PostgreSQL itself can answer is compared side by side in
``tests/compat/ddl-*.sql``; this file covers pgbarrier's own views, which PostgreSQL has
no syntax for, and durability."""

from __future__ import annotations

import psycopg
import pytest

from tests.conftest import start_server, stop_server


@pytest.fixture(scope="module")
def duck():
    srv = start_server()
    yield srv
    assert stop_server(srv) == 0, "".join(srv.log)


def _error(conn, sql):
    with pytest.raises(psycopg.Error) as info:
        conn.execute(sql)
    return info.value


def test_schema_qualified_views_live_in_their_schema(duck):
    with psycopg.connect(duck.dsn(), autocommit=True) as c:
        c.execute("CREATE SCHEMA sq1")
        c.execute("CREATE TABLE sq1.x (a int)")
        c.execute("INSERT INTO sq1.x VALUES (1), (2)")
        c.execute("CREATE MATERIALIZED VIEW sq1.sv BATCH REFRESH EVERY 30 SECONDS AS "
                  "SELECT count(*) n FROM sq1.x")
        c.execute("CREATE MATERIALIZED VIEW sq1.st AS SELECT a FROM sq1.x")
        assert c.execute("SELECT n FROM sq1.sv").fetchone() == (2,)
        assert c.execute("SELECT count(*) FROM sq1.st").fetchone() == (2,)
        rows = c.execute("SELECT n.nspname, c.relname, c.relkind FROM pg_class c JOIN "
                         "pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'sq1' "
                         "ORDER BY 2").fetchall()
        assert rows == [("sq1", "st", "m"), ("sq1", "sv", "m"), ("sq1", "x", "r")]
        assert c.execute("SELECT name FROM rw_catalog.rw_batch_refresh_jobs "
                         "WHERE name LIKE 'sq1.%'").fetchall() == [("sq1.sv",)]
        # REFRESH / DROP resolve with the search_path, as PostgreSQL's do
        c.execute("SET search_path = sq1, public")
        c.execute("INSERT INTO x VALUES (3)")
        c.execute("REFRESH MATERIALIZED VIEW sv")
        assert c.execute("SELECT n FROM sv").fetchone() == (3,)
        # unqualified names of a new view's query bind with the creator's search_path
        c.execute("CREATE MATERIALIZED VIEW sv2 BATCH REFRESH EVERY 30 SECONDS AS "
                  "SELECT sum(a) s FROM x")
        c.execute("RESET search_path")
        c.execute("REFRESH MATERIALIZED VIEW sq1.sv2")
        assert c.execute("SELECT s FROM sq1.sv2").fetchone() == (6,)
        err = _error(c, "CREATE MATERIALIZED VIEW nosuch.v AS SELECT 1")
        assert err.sqlstate == "3F000"
        for name in ("sq1.sv", "sq1.sv2", "sq1.st"):
            c.execute(f"DROP MATERIALIZED VIEW {name}")
        c.execute("DROP SCHEMA sq1 CASCADE")


@pytest.mark.parametrize("form", ["BATCH REFRESH EVERY 30 SECONDS", ""])
def test_pgbarrier_views_are_materialized_views_to_drop(duck, form):
    kind = "batch" if form else "streaming"
    with psycopg.connect(duck.dsn(), autocommit=True) as c:
        c.execute(f"CREATE TABLE k_{kind} (a int)")
        c.execute(f"CREATE MATERIALIZED VIEW mv_{kind} {form} AS SELECT a FROM k_{kind}")
        try:
            for stmt, hint in ((f"DROP TABLE mv_{kind}", "MATERIALIZED VIEW"),
                               (f"DROP VIEW mv_{kind}", "MATERIALIZED VIEW"),
                               (f"DROP MATERIALIZED VIEW k_{kind}", "DROP TABLE")):
                err = _error(c, stmt)
                assert err.sqlstate == "42809", stmt
                assert hint in err.diag.message_hint
            assert c.execute(f"SELECT count(*) FROM mv_{kind}").fetchone() == (0,)
            err = _error(c, f"DROP TABLE k_{kind}")
            assert err.sqlstate == "2BP01"
            assert err.diag.message_detail == \
                f"materialized view mv_{kind} depends on table k_{kind}"
        finally:
            c.execute(f"DROP MATERIALIZED VIEW IF EXISTS mv_{kind}")
            c.execute(f"DROP TABLE k_{kind}")


def test_cascade_drops_pgbarrier_views_with_their_jobs_durably(tmp_path):
    srv = start_server("--data-dir", str(tmp_path))
    try:
        with psycopg.connect(srv.dsn(), autocommit=True) as c:
            notices: list[str] = []
            c.add_notice_handler(lambda d: notices.append(d.message_detail or ""))
            c.execute("CREATE TABLE sales (amount int)")
            c.execute("CREATE MATERIALIZED VIEW tot BATCH REFRESH EVERY 30 SECONDS AS "
                      "SELECT sum(amount) s FROM sales")
            c.execute("CREATE MATERIALIZED VIEW live AS SELECT amount FROM sales")
            c.execute("CREATE VIEW over_tot AS SELECT s FROM tot")
            c.execute("BEGIN")
            err = _error(c, "DROP TABLE sales CASCADE")
            assert err.sqlstate == "25001"
            c.execute("ROLLBACK")
            c.execute("DROP TABLE sales CASCADE")
            assert notices == ["drop cascades to materialized view tot\n"
                               "drop cascades to view over_tot\n"
                               "drop cascades to materialized view live"]
            assert c.execute("SELECT count(*) FROM pg_class WHERE relname IN "
                             "('sales', 'tot', 'live', 'over_tot')").fetchone() == (0,)
            assert c.execute("SELECT count(*) FROM rw_catalog.rw_batch_refresh_jobs"
                             ).fetchone() == (0,)
    finally:
        assert stop_server(srv) == 0
    srv = start_server("--data-dir", str(tmp_path))
    try:
        with psycopg.connect(srv.dsn(), autocommit=True) as c:
            assert c.execute("SHOW MATERIALIZED VIEWS").fetchall() == []
            c.execute("CREATE TABLE sales (amount int)")  # every name is free again
            c.execute("CREATE MATERIALIZED VIEW tot BATCH REFRESH EVERY 30 SECONDS AS "
                      "SELECT sum(amount) s FROM sales")
    finally:
        assert stop_server(srv) == 0


def test_cascade_notice_lists_what_it_dropped(duck):
    notices: list[str] = []
    with psycopg.connect(duck.dsn(), autocommit=True) as c:
        c.add_notice_handler(lambda d: notices.append((d.message_primary, d.message_detail)))
        c.execute("CREATE TABLE nb (a int)")
        c.execute("CREATE MATERIALIZED VIEW nb_mv BATCH REFRESH EVERY 30 SECONDS AS "
                  "SELECT a FROM nb")
        c.execute("CREATE VIEW nb_v AS SELECT a FROM nb_mv")
        c.execute("DROP MATERIALIZED VIEW nb_mv CASCADE")
        assert notices == [("drop cascades to view nb_v", None)]
        c.execute("DROP TABLE nb")


@pytest.mark.parametrize("form", ["BATCH REFRESH EVERY 30 SECONDS", ""])
def test_pgbarrier_views_refuse_writes(duck, form):
    kind = "batch" if form else "streaming"
    with psycopg.connect(duck.dsn(), autocommit=True) as c:
        c.execute(f"CREATE TABLE w_{kind} (a int)")
        c.execute(f"INSERT INTO w_{kind} VALUES (1), (2)")
        c.execute(f"CREATE MATERIALIZED VIEW wv_{kind} {form} AS SELECT a FROM w_{kind}")
        try:
            for stmt, message in (
                    (f"INSERT INTO wv_{kind} VALUES (1)", f'cannot change materialized view "wv_{kind}"'),
                    (f"UPDATE wv_{kind} SET a = 3", f'cannot change materialized view "wv_{kind}"'),
                    (f"DELETE FROM public.wv_{kind}", f'cannot change materialized view "wv_{kind}"'),
                    (f"WITH d AS (DELETE FROM wv_{kind} RETURNING a) SELECT * FROM d",
                     f'cannot change materialized view "wv_{kind}"'),
                    (f"TRUNCATE wv_{kind}", f'"wv_{kind}" is not a table')):
                err = _error(c, stmt)
                assert (err.sqlstate, err.diag.message_primary) == ("42809", message), stmt
            with pytest.raises(psycopg.Error) as info:
                with c.cursor().copy(f"COPY wv_{kind} FROM STDIN") as copy:
                    copy.write_row((5,))
            assert info.value.sqlstate == "42809"
            assert c.execute(f"SELECT count(*) FROM wv_{kind}").fetchone() == (2,)
            # reading it into another table is no write of it
            c.execute(f"INSERT INTO w_{kind} SELECT a FROM wv_{kind}")
        finally:
            c.execute(f"DROP MATERIALIZED VIEW wv_{kind}")
            c.execute(f"DROP TABLE w_{kind}")


def test_an_index_on_a_batch_view_survives_its_refreshes(duck):
    with psycopg.connect(duck.dsn(), autocommit=True) as c:
        c.execute("CREATE TABLE ix (a int)")
        c.execute("CREATE MATERIALIZED VIEW ixv BATCH REFRESH EVERY 30 SECONDS AS SELECT a FROM ix")
        c.execute("CREATE INDEX ixv_a ON ixv (a)")
        c.execute("INSERT INTO ix VALUES (1), (2)")
        c.execute("REFRESH MATERIALIZED VIEW ixv")
        assert c.execute("SELECT count(*) FROM ixv").fetchone() == (2,)
        assert c.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'ixv'"
                         ).fetchall() == [("ixv_a",)]
        c.execute("DROP MATERIALIZED VIEW ixv")
        c.execute("DROP TABLE ix")


def test_alter_table_on_pgbarrier_views_is_refused(duck):
    with psycopg.connect(duck.dsn(), autocommit=True) as c:
        c.execute("CREATE TABLE al (a int)")
        c.execute("CREATE MATERIALIZED VIEW alv BATCH REFRESH EVERY 30 SECONDS AS SELECT a FROM al")
        try:
            err = _error(c, "ALTER TABLE alv ADD COLUMN b int")
            assert err.sqlstate == "42809"
            assert err.diag.message_detail == "This operation is not supported for materialized views."
            assert _error(c, "ALTER TABLE alv RENAME TO alw").sqlstate == "0A000"
            # a batch view reading a column refuses its rename: its query is the job's
            assert _error(c, "ALTER TABLE al RENAME COLUMN a TO b").sqlstate == "0A000"
            err = _error(c, "ALTER TABLE al DROP COLUMN a")
            assert err.sqlstate == "2BP01"
            assert err.diag.message_detail == "materialized view alv depends on column a of table al"
        finally:
            c.execute("DROP MATERIALIZED VIEW alv")
            c.execute("DROP TABLE al")


def test_unconstrained_numeric_keeps_its_digits(duck):
    with psycopg.connect(duck.dsn(), autocommit=True) as c:
        c.execute("CREATE TABLE num (n numeric)")
        try:
            c.execute("INSERT INTO num VALUES (1.23456), (-0.0375), (12345678901234567890.5), (0)")
            assert [str(r[0]) for r in c.execute("SELECT n FROM num ORDER BY n")] == \
                ["-0.0375", "0", "1.23456", "12345678901234567890.5"]
            assert c.execute("SELECT sum(n) FROM num").fetchone()[0] == \
                __import__("decimal").Decimal("12345678901234567891.69706")
            cur = c.execute("SELECT n FROM num")
            assert (cur.description[0].type_code, cur.description[0].internal_size) == (1700, None)
            assert c.execute("SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                             "WHERE attrelid = 'num'::regclass AND attname = 'n'"
                             ).fetchone() == ("numeric",)
            assert [str(v) for v in c.execute(
                "SELECT 1.50::numeric, 1.5::numeric * 2, '2.50'::numeric").fetchone()] == \
                ["1.50", "3.0", "2.50"]
        finally:
            c.execute("DROP TABLE num")
