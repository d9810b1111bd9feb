"""``public`` is the default schema in every statement, quoted or not (issue 15), and a
catalog query never runs on DuckDB's own catalog.

Each test drives a real pgbarrier server on each data backend in turn (``backend_server``:
the embedded DuckDB, then an upstream PostgreSQL 15, the reference) through psycopg 3,
psql 15 or SQLAlchemy 2; where the DuckDB backend must refuse what PostgreSQL does, the test
runs on DuckDB only and says why.
"""

from __future__ import annotations

import shutil

import psycopg
import pytest

from conftest import start_server, stop_server

#: how clients spell the schema: Metabase quotes every identifier, others do not
SPELLINGS = ["public", '"public"', "PUBLIC"]


def _connect(server) -> psycopg.Connection:
    return psycopg.connect(server.dsn(), autocommit=True)


def _only_duckdb(server) -> None:
    if server.kind != "duckdb":
        pytest.skip("DuckDB backend behaviour (PostgreSQL itself answers upstream)")


@pytest.mark.parametrize("schema", SPELLINGS)
def test_every_statement_kind_takes_a_public_qualifier(backend_server, schema):
    t = f"pq_{SPELLINGS.index(schema)}"
    with _connect(backend_server) as c:
        c.execute(f"CREATE TABLE {schema}.{t} (id int PRIMARY KEY, v text)")
        c.execute(f"CREATE VIEW {schema}.{t}_v AS SELECT id, v FROM {schema}.{t}")
        c.execute(f"CREATE INDEX {t}_i ON {schema}.{t} (v)")
        c.execute(f"CREATE SEQUENCE {schema}.{t}_s")
        assert c.execute(f"SELECT nextval('{t}_s')").fetchone() == (1,)
        cur = c.execute(f"INSERT INTO {schema}.{t} (id, v) VALUES (1, 'public.x'), (2, 'b') "
                        "RETURNING id")
        assert cur.fetchall() == [(1,), (2,)]
        assert c.execute(f"UPDATE {schema}.{t} SET v = 'c' WHERE {schema}.{t}.id = 2"
                         ).rowcount == 1
        c.execute(f"MERGE INTO {schema}.{t} AS d USING (SELECT 3 AS id) AS s ON d.id = s.id "
                  "WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, 'm')")
        assert c.execute(f"DELETE FROM {schema}.{t} WHERE id = 3").rowcount == 1
        c.execute(f"ALTER TABLE {schema}.{t} ADD COLUMN w int")
        c.execute(f"COMMENT ON TABLE {schema}.{t} IS 'public.{t}'")
        # column references, two- and three-part names, the literal untouched
        assert c.execute(f"SELECT {schema}.{t}.id, v, w FROM dev.{schema}.{t} ORDER BY 1"
                         ).fetchall() == [(1, "public.x", None), (2, "c", None)]
        assert c.execute(f"SELECT count(*) FROM {schema}.{t}_v").fetchone() == (2,)
        assert c.execute(
            "SELECT table_schema FROM information_schema.tables WHERE table_name = %s",
            [t]).fetchall() == [("public",)]
        assert c.execute(
            "SELECT obj_description(c.oid, 'pg_class') FROM pg_catalog.pg_class c "
            "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relname = %s AND n.nspname = 'public'", [t]).fetchone() == (f"public.{t}",)
        c.execute(f"TRUNCATE {schema}.{t}")
        assert c.execute(f"SELECT count(*) FROM {schema}.{t}").fetchone() == (0,)
        c.execute(f"DROP VIEW {schema}.{t}_v")
        c.execute(f"DROP INDEX {schema}.{t}_i")
        c.execute(f"DROP SEQUENCE {schema}.{t}_s")
        c.execute(f"DROP TABLE {schema}.{t}")
        assert c.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = %s",
                         [t]).fetchone() == (0,)


def test_prepared_statements_with_parameters_take_it(backend_server):
    with _connect(backend_server) as c:
        c.execute('CREATE TABLE "public"."pq_prep" (id int, v text)')
        c.execute('INSERT INTO "public"."pq_prep" (id, v) VALUES (%s, %s)', [1, "a"],
                  prepare=True)
        cur = c.execute('SELECT "id", "v" FROM "public"."pq_prep" WHERE "id" = %s', [1],
                        prepare=True)
        assert [(d.name, d.type_code) for d in cur.description] == [("id", 23), ("v", 25)]
        assert cur.fetchall() == [(1, "a")]
        c.execute("DROP TABLE public.pq_prep")


def test_create_schema_public_says_it_exists(backend_server):
    with _connect(backend_server) as c:
        with pytest.raises(psycopg.Error) as err:
            c.execute("CREATE SCHEMA public")
        assert err.value.sqlstate == "42P06"
        assert err.value.diag.message_primary == 'schema "public" already exists'
        notices = []
        c.add_notice_handler(lambda n: notices.append((n.sqlstate, n.message_primary)))
        cur = c.execute('CREATE SCHEMA IF NOT EXISTS "public"')
        assert cur.statusmessage == "CREATE SCHEMA"
        assert notices == \
            [("42P06", 'schema "public" already exists, skipping')]


def test_drop_schema_public_is_refused_on_duckdb(backend_server):
    _only_duckdb(backend_server)  # PostgreSQL would drop it (not done to the reference)
    with _connect(backend_server) as c:
        c.execute("CREATE TABLE pq_keep (a int)")
        for sql in ("DROP SCHEMA public", "DROP SCHEMA IF EXISTS public CASCADE"):
            with pytest.raises(psycopg.Error) as err:
                c.execute(sql)
            assert err.value.sqlstate == "0A000", sql
            assert "DROP SCHEMA public" in err.value.diag.message_primary
        assert c.execute("SELECT count(*) FROM public.pq_keep").fetchone() == (0,)
        c.execute("DROP TABLE pq_keep")


@pytest.mark.parametrize("sql, sqlstate, message, position_of", [
    ('SELECT * FROM "public".pq_missing', "42P01", 'relation "public.pq_missing" does not exist',
     '"public".pq_missing'),
    ("SELECT nope FROM public.pq_err", "42703", None, "nope"),
    ("SELECT * FROM pq_other.public.pq_err", "0A000",
     'cross-database references are not implemented: "pq_other.public.pq_err"',
     "pq_other"),
])
def test_errors_point_into_the_clients_text(backend_server, sql, sqlstate, message, position_of):
    with _connect(backend_server) as c:
        c.execute("CREATE TABLE IF NOT EXISTS pq_err (a int)")
        with pytest.raises(psycopg.Error) as err:
            c.execute(sql)
        assert err.value.sqlstate == sqlstate
        if message is not None:
            assert err.value.diag.message_primary == message
        assert err.value.diag.statement_position == str(sql.index(position_of) + 1)


def test_metabase_privileges_query_with_keyword_labels(backend_server):
    """Metabase's table-privileges query labels columns with keywords (``AS select``)."""
    with _connect(backend_server) as c:
        c.execute("CREATE TABLE IF NOT EXISTS pq_priv (a int)")
        cur = c.execute(
            "SELECT t.schemaname AS schema, t.tablename AS table, "
            "pg_catalog.has_table_privilege(current_user, 'public.pq_priv', 'SELECT') AS select, "
            "pg_catalog.has_table_privilege(current_user, 'public.pq_priv', 'UPDATE') AS update "
            "FROM pg_catalog.pg_tables t WHERE t.tablename = 'pq_priv'")
        assert [d.name for d in cur.description] == ["schema", "table", "select", "update"]
        assert cur.fetchall() == [("public", "pq_priv", True, True)]
        cur = c.execute("SELECT matviewname AS select FROM pg_catalog.pg_matviews")
        assert [d.name for d in cur.description] == ["select"]


@pytest.mark.parametrize("sql", [
    # relations pgbarrier does not emulate (pg_sequences and referential_constraints are
    # emulated since issue 15's catalog work)
    "SELECT * FROM pg_catalog.pg_prepared_statements",
    "SELECT * FROM pg_prepared_statements",
    "SELECT * FROM information_schema.parameters",
    "CREATE VIEW pq_cat_v AS SELECT relname FROM pg_catalog.pg_class",
    # EXPLAIN explains the rewritten query (test_explain_vs_postgres.py), never DuckDB's catalog
    "EXPLAIN SELECT * FROM pg_catalog.pg_prepared_statements",
])
def test_catalog_relations_never_come_from_duckdbs_own_catalog(backend_server, sql):
    """What pgbarrier does not emulate is refused, not answered by DuckDB's own catalog
    (with DuckDB's names: schema main, its OIDs)."""
    _only_duckdb(backend_server)
    with _connect(backend_server) as c:
        with pytest.raises(psycopg.Error) as err:
            c.execute(sql)
        assert err.value.sqlstate == "0A000"
        assert "not supported on the DuckDB backend" in err.value.diag.message_primary


def test_unparsable_catalog_query_is_a_syntax_error(backend_server):
    sql = "SELECT relname FROM pg_catalog.pg_class WHERE ("
    with _connect(backend_server) as c:
        with pytest.raises(psycopg.Error) as err:
            c.execute(sql)
        assert err.value.sqlstate == "42601"
        # at the "(" (DuckDB's parser) or just after it (PostgreSQL's: end of input)
        assert int(err.value.diag.statement_position) >= sql.index("(") + 1


def test_psql_qualified_statements_and_listing(backend_server):
    if shutil.which("psql") is None:
        pytest.skip("psql is not installed")
    script = (
        'CREATE TABLE "public"."pq_psql" (id int);\n'
        "INSERT INTO public.pq_psql VALUES (1), (2);\n"
        "SELECT count(*) FROM PUBLIC.pq_psql;\n"
        "\\dt public.pq_psql\n"
        "DROP TABLE public.pq_psql;\n")
    proc = backend_server.psql("-A", "-t", "-v", "ON_ERROR_STOP=1", input=script)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:3] == ["CREATE TABLE", "INSERT 0 2", "2"], proc.stdout
    assert any(line.startswith("public|pq_psql|table|") for line in lines), proc.stdout
    assert lines[-1] == "DROP TABLE", proc.stdout


def test_sqlalchemy_table_in_schema_public(backend_server):
    sqlalchemy = pytest.importorskip("sqlalchemy")
    from sqlalchemy import Column, Integer, MetaData, String, Table, insert, inspect, select

    engine = sqlalchemy.create_engine(
        f"postgresql+psycopg://root@{backend_server.host}:{backend_server.port}/dev")
    try:
        meta = MetaData()
        table = Table("pq_sqla", meta, Column("id", Integer, primary_key=True,
                                              autoincrement=False),
                      Column("name", String(20)), schema="public")
        meta.create_all(engine)
        with engine.begin() as conn:
            conn.execute(insert(table), [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}])
        with engine.connect() as conn:
            rows = conn.execute(select(table.c.id, table.c.name).order_by(table.c.id)).all()
        assert [tuple(r) for r in rows] == [(1, "a"), (2, "b")]
        insp = inspect(engine)
        assert "pq_sqla" in insp.get_table_names(schema="public")
        assert [c["name"] for c in insp.get_columns("pq_sqla", schema="public")] == ["id", "name"]
        meta.drop_all(engine)
        assert "pq_sqla" not in inspect(engine).get_table_names(schema="public")
    finally:
        engine.dispose()


def test_copy_names_a_public_table(tmp_path):
    """COPY's table name (DuckDB reads and writes files in an --allow-path directory; the
    upstream backend has no such files, so DuckDB only)."""
    srv = start_server("--allow-path", str(tmp_path))
    try:
        path = tmp_path / "pq_copy.csv"
        with psycopg.connect(srv.dsn(), autocommit=True) as c:
            c.execute('CREATE TABLE "public".pq_copy (id int, v text)')
            c.execute("INSERT INTO public.pq_copy VALUES (1, 'a'), (2, 'b')")
            c.execute(f"COPY \"public\".pq_copy TO '{path}' (HEADER)")
            c.execute(f"COPY public.pq_copy FROM '{path}' (HEADER)")
            assert c.execute("SELECT id, count(*) FROM public.pq_copy GROUP BY id ORDER BY id"
                             ).fetchall() == [(1, 2), (2, 2)]
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)


@pytest.mark.parametrize("schema", ["public", '"public"'])
def test_materialized_views_over_and_named_in_public(backend_server, schema):
    """pgbarrier's own statements: the view's query and its name take ``public`` too."""
    with _connect(backend_server) as c:
        c.execute(f"CREATE TABLE {schema}.pq_mv_src (a int)")
        c.execute("INSERT INTO pq_mv_src VALUES (1), (2)")
        c.execute(f"CREATE MATERIALIZED VIEW {schema}.pq_mv_s AS SELECT a FROM {schema}.pq_mv_src")
        c.execute(f"CREATE MATERIALIZED VIEW {schema}.pq_mv_b WITH (refresh.interval.sec = 3600) "
                  f"AS SELECT count(*) AS n FROM {schema}.pq_mv_src")
        assert c.execute(f"SELECT n FROM {schema}.pq_mv_b").fetchone() == (2,)
        c.execute("INSERT INTO public.pq_mv_src VALUES (3)")
        c.execute(f"REFRESH MATERIALIZED VIEW {schema}.pq_mv_b")
        c.execute(f"REFRESH MATERIALIZED VIEW {schema}.pq_mv_s")  # a no-op on DuckDB
        assert c.execute("SELECT n FROM pq_mv_b").fetchone() == (3,)
        assert c.execute(f"SELECT count(*) FROM {schema}.pq_mv_s").fetchone() == (3,)
        c.execute(f"DROP MATERIALIZED VIEW {schema}.pq_mv_b")
        c.execute(f"DROP MATERIALIZED VIEW {schema}.pq_mv_s")
        c.execute(f"DROP TABLE {schema}.pq_mv_src")


@pytest.mark.parametrize("schema", ["public", '"public"'])
def test_a_serial_column_of_a_public_table(backend_server, schema):
    """serial's sequence (the dialect translation) lives where the table does."""
    with _connect(backend_server) as c:
        c.execute(f"DROP TABLE IF EXISTS {schema}.pub_serial")
        c.execute(f"CREATE TABLE {schema}.pub_serial (id serial PRIMARY KEY, v text)")
        try:
            c.execute(f"INSERT INTO {schema}.pub_serial (v) VALUES ('a'), ('b')")
            assert c.execute(f"SELECT id, v FROM {schema}.pub_serial ORDER BY id").fetchall() \
                == [(1, "a"), (2, "b")]
            assert c.execute("SELECT pg_get_serial_sequence('public.pub_serial', 'id')"
                             ).fetchone() == ("public.pub_serial_id_seq",)
        finally:
            c.execute(f"DROP TABLE {schema}.pub_serial")
