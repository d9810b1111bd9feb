"""Reflection of keys, indexes and sequences gives PostgreSQL's answers on the DuckDB backend.

One schema, created through pgbarrier on both data backends (embedded DuckDB, and an upstream
PostgreSQL 15 as the reference): ``customers`` (primary key, a UNIQUE varchar(120), a
varchar(50), jsonb, timestamp), ``orders`` (a foreign key to customers, a CHECK, a text default,
a plain and a two-column unique index) and a sequence. Real clients reflect it on both and the
answers must be equal:

* SQLAlchemy 2 ``inspect()``: get_columns, get_pk_constraint, get_foreign_keys, get_indexes,
  get_unique_constraints, get_check_constraints, get_sequence_names, and ``MetaData.reflect``;
* pgjdbc ``DatabaseMetaData`` (``tests/clients/PgbarrierKeys.java``): getImportedKeys,
  getExportedKeys, getCrossReference, getIndexInfo, getTables of SEQUENCE;
* psql 15: ``\\d orders`` / ``\\d customers`` (foreign-key and "Referenced by" sections), ``\\d``
  of an index, ``\\ds``, ``\\dd``, ``\\do``, ``\\dL``, ``\\dC``, ``\\dconfig`` and the listings of
  objects DuckDB has none of (event triggers, foreign servers, conversions...);
* Metabase's and Grafana's catalog functions (format(), parse_ident, pg_stat_user_tables).

The CHECK compares a numeric column with ``0.0``: PostgreSQL decompiles ``amount >= 0`` as
``amount >= 0::numeric`` (an implicit cast DuckDB does not record), ``0.0`` the same on both.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator

import pytest

from conftest import CLIENT_TIMEOUT_S, compile_java, inprocess_app, missing_client_tool

DATABASE = "cat_reflect"
SCHEMA = [
    "CREATE TABLE customers (id integer PRIMARY KEY, email varchar(120) NOT NULL UNIQUE, "
    "name varchar(50), meta jsonb, created timestamp)",
    "CREATE TABLE orders (id integer PRIMARY KEY, customer_id integer NOT NULL "
    "REFERENCES customers(id), amount numeric(10,2) CHECK (amount >= 0.0), status text DEFAULT 'new')",
    "CREATE INDEX orders_status_idx ON orders (status)",
    "CREATE UNIQUE INDEX orders_cust_status ON orders (customer_id, status)",
    "CREATE SEQUENCE order_seq",
]
BACKENDS = ("duckdb", "postgres")


@pytest.fixture(scope="module")
def ports() -> Iterator[dict[str, int]]:
    import psycopg

    from contextlib import ExitStack

    with ExitStack() as stack:
        found = {}
        for backend in BACKENDS:
            app = stack.enter_context(inprocess_app(backend, DATABASE))
            port = app.server.port
            with psycopg.connect(f"host=127.0.0.1 port={port} dbname={DATABASE} user=postgres",
                                 autocommit=True) as conn:
                for sql in SCHEMA:
                    conn.execute(sql)
            found[backend] = port
        yield found


# --------------------------------------------------------------------------- SQLAlchemy


@pytest.fixture(scope="module")
def inspectors(ports):
    sa = pytest.importorskip("sqlalchemy")
    engines = {b: sa.create_engine(f"postgresql+psycopg://postgres@127.0.0.1:{p}/{DATABASE}")
               for b, p in ports.items()}
    yield {b: sa.inspect(e) for b, e in engines.items()}
    for e in engines.values():
        e.dispose()


def _plain(value):
    """Reflection results with type objects as their repr (TypeEngine has no equality)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if hasattr(value, "compile") and hasattr(value, "python_type"):
        return repr(value)
    return value


@pytest.mark.parametrize("call", ["get_columns", "get_pk_constraint", "get_foreign_keys", "get_indexes",
                                  "get_unique_constraints"])
@pytest.mark.parametrize("table", ["customers", "orders"])
def test_sqlalchemy_reflects_as_postgres(inspectors, call, table):
    got = {b: _plain(getattr(i, call)(table)) for b, i in inspectors.items()}
    assert got["duckdb"] == got["postgres"]


@pytest.mark.parametrize("table", ["customers", "orders"])
def test_sqlalchemy_check_constraints(inspectors, table):
    got = {b: i.get_check_constraints(table) for b, i in inspectors.items()}
    assert got["duckdb"] == got["postgres"]


def test_sqlalchemy_sequence_names(inspectors):
    got = {b: i.get_sequence_names() for b, i in inspectors.items()}
    assert got["duckdb"] == got["postgres"] == ["order_seq"]


def test_sqlalchemy_metadata_reflect(ports):
    sa = pytest.importorskip("sqlalchemy")
    shapes = {}
    for backend, port in ports.items():
        engine = sa.create_engine(f"postgresql+psycopg://postgres@127.0.0.1:{port}/{DATABASE}")
        meta = sa.MetaData()
        meta.reflect(engine)
        shapes[backend] = {
            name: (sorted(c.name for c in t.columns),
                   sorted(fk.target_fullname for fk in t.foreign_keys),
                   sorted(ix.name for ix in t.indexes))
            for name, t in meta.tables.items()}
        engine.dispose()
    assert shapes["duckdb"] == shapes["postgres"]
    assert shapes["duckdb"]["orders"][1] == ["customers.id"]


# --------------------------------------------------------------------------- pgjdbc


@pytest.fixture(scope="module")
def jdbc_keys(ports, tmp_path_factory) -> dict[str, list[str]]:
    classpath = compile_java(tmp_path_factory, "PgbarrierKeys.java")
    out = {}
    for backend, port in ports.items():
        url = f"jdbc:postgresql://127.0.0.1:{port}/{DATABASE}?user=postgres"
        proc = subprocess.run(["java", "-cp", classpath, "PgbarrierKeys", url, "customers",
                               "orders"], capture_output=True, text=True,
                              timeout=CLIENT_TIMEOUT_S)
        out[backend] = proc.stdout.splitlines()
    return out


def test_pgjdbc_keys_indexes_and_sequences_match_postgres(jdbc_keys):
    assert "done: keys" in jdbc_keys["postgres"], jdbc_keys["postgres"]
    assert jdbc_keys["duckdb"] == jdbc_keys["postgres"]
    assert any(line.startswith("imported: customers|id|orders|customer_id|1|")
               for line in jdbc_keys["duckdb"])


# --------------------------------------------------------------------------- psql


def _psql(port: int, command: str) -> str:
    if shutil.which("psql") is None:
        missing_client_tool("psql not found")
    proc = subprocess.run(["psql", "-X", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres",
                           "-d", DATABASE, "-c", command], capture_output=True, text=True,
                          timeout=CLIENT_TIMEOUT_S)
    return proc.stdout + proc.stderr


@pytest.mark.parametrize("command", [r"\d orders", r"\d customers", r"\d orders_status_idx",
                                     r"\d orders_cust_status", r"\ds", r"\dd", r"\do",
                                     r"\dL", r"\dy", r"\des", r"\dc", r"\drds", r"\ddp",
                                     r"\dconfig nonesuch*", r"\dx", r"\dRs",
                                     r"\dAc btree int4"])
def test_psql_describe_sections_match_postgres(ports, command):
    got = {b: _psql(p, command) for b, p in ports.items()}
    assert got["duckdb"] == got["postgres"]


def test_altered_and_renamed_columns_keep_postgres_types(ports):
    """ADD COLUMN, ALTER COLUMN TYPE, RENAME COLUMN and RENAME TO keep varchar(n) / jsonb."""
    import psycopg

    steps = ["CREATE TABLE cat_alter (a varchar(10), b varchar(4), c jsonb)",
             "ALTER TABLE cat_alter ADD COLUMN d char(3)",
             "ALTER TABLE cat_alter ALTER COLUMN b TYPE text",
             "ALTER TABLE cat_alter RENAME COLUMN a TO a2",
             "ALTER TABLE cat_alter RENAME TO cat_altered"]
    got = {}
    for backend, port in ports.items():
        with psycopg.connect(f"host=127.0.0.1 port={port} dbname={DATABASE} user=postgres",
                             autocommit=True) as conn:
            for sql in steps:
                conn.execute(sql)
            got[backend] = conn.execute(
                "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
                "JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname = 'cat_altered' "
                "AND a.attnum > 0 ORDER BY a.attnum").fetchall()
            conn.execute("DROP TABLE cat_altered")
    assert got["duckdb"] == got["postgres"]
    assert ("a2", "character varying(10)") in got["duckdb"]


def _rows(ports, sql):
    import psycopg

    out = {}
    for backend, port in ports.items():
        with psycopg.connect(f"host=127.0.0.1 port={port} dbname={DATABASE} user=postgres",
                             autocommit=True) as conn:
            try:
                out[backend] = conn.execute(sql).fetchall()
            except psycopg.Error as exc:
                out[backend] = exc.sqlstate
    return out


@pytest.mark.parametrize("sql", [
    # Metabase's describe-fields builds the regclass of each table with format('%I.%I')
    "SELECT format('%I.%I', n.nspname, c.relname), format('%I', 'Mixed Case'), "
    "format('%L', 'it''s'), format('%L', NULL), format('%s|%s', 1, NULL), "
    "format('%2$s %1$s %s', 'a', 'b'), format('100%%'), "
    "CAST(CAST(format('%I.%I', n.nspname, c.relname) AS regclass) AS oid) = c.oid "
    "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE c.relname IN ('customers', 'orders') ORDER BY c.relname",
    "SELECT format('%s %s', 'one') FROM pg_namespace",
    "SELECT format('%d', 1) FROM pg_namespace",
    # Metabase's table list
    "SELECT schemaname, relname FROM pg_stat_user_tables ORDER BY relname",
    "SELECT schemaname, relname FROM pg_statio_user_tables ORDER BY relname",
    "SELECT relname, indexrelname FROM pg_stat_user_indexes ORDER BY indexrelname",
])
def test_metabase_functions_and_statistics_views_answer_as_postgres(ports, sql):
    """Values, not just shapes (the counters are left out: DuckDB keeps none)."""
    got = _rows(ports, sql)
    assert got["duckdb"] == got["postgres"]


def _grafana_queries() -> list[str]:
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "data" / "client-queries" / "grafana.json"
    return json.loads(path.read_text())["queries"][2:]  # after the version probes


@pytest.mark.parametrize("sql", _grafana_queries())
def test_grafana_pickers_answer_as_postgres(ports, sql):
    """Grafana's schema, table and column pickers list what PostgreSQL lists (values)."""
    got = _rows(ports, sql)
    # pgbarrier's own system views (schema rw_catalog, and pg_temp_1) are listed on DuckDB
    # on purpose; PostgreSQL has neither
    got["duckdb"] = [r for r in got["duckdb"]
                     if not str(r[0]).startswith(("rw_catalog", "pg_temp_1"))]
    assert got["duckdb"] == got["postgres"]


def test_psql_dC_lists_postgres_casts_between_the_types_it_has(ports):
    """Every cast \\dC lists on DuckDB is one PostgreSQL lists, with the same columns
    (PostgreSQL also lists casts to types pgbarrier does not have: bit, money, reg*...)."""
    got = {b: _psql(p, r"\dC").splitlines() for b, p in ports.items()}
    duck, pg = got["duckdb"], got["postgres"]
    assert duck[:3] == pg[:3], duck[:3]
    rows = [line for line in duck[3:] if "|" in line]
    assert len(rows) > 50
    assert set(rows) <= set(pg)


def test_psql_dconfig_lists_settings(ports):
    out = _psql(ports["duckdb"], r"\dconfig *")
    assert "List of configuration parameters" in out, out
    assert re.search(r"^ DateStyle +\| ISO, MDY", out, re.M), out


@pytest.mark.parametrize("sql", [
    "SELECT * FROM information_schema.referential_constraints",
    "SELECT * FROM information_schema.constraint_column_usage WHERE table_schema = 'public' "
    "ORDER BY table_name, column_name, constraint_name",
    "SELECT * FROM information_schema.constraint_table_usage WHERE table_schema = 'public' "
    "ORDER BY table_name, constraint_name",
    "SELECT constraint_schema, check_clause FROM information_schema.check_constraints "
    "WHERE constraint_schema = 'public' AND constraint_name LIKE '%not_null' ORDER BY 2",
    "SELECT * FROM information_schema.sequences",
    "SELECT grantee, table_schema, table_name, privilege_type, is_grantable, with_hierarchy "
    "FROM information_schema.table_privileges WHERE table_name = 'orders' ORDER BY 4",
    "SELECT * FROM information_schema.triggers",
    "SELECT schemaname, sequencename, start_value, min_value, max_value, increment_by, cycle, "
    "cache_size, last_value FROM pg_sequences",
    "SELECT * FROM pg_locks WHERE false",
    "SELECT * FROM pg_policies",
])
def test_information_schema_keys_and_sequences_answer_as_postgres(ports, sql):
    """What BI tools read for foreign keys, checks, sequences and grants: the same columns,
    types and rows (the database's own name aside)."""
    import psycopg

    got = {}
    for backend, port in ports.items():
        with psycopg.connect(f"host=127.0.0.1 port={port} dbname={DATABASE} user=postgres",
                             autocommit=True) as conn:
            cur = conn.execute(sql)
            got[backend] = ([(d.name, d.type_code) for d in cur.description],
                            [tuple("<db>" if v == DATABASE else v for v in row)
                             for row in cur.fetchall()])
    assert got["duckdb"] == got["postgres"]
