"""pg_dump of an embedded DuckDB database restores into PostgreSQL (issue 15, item 6).

One schema (tables of PostgreSQL's common column types and arrays, primary keys,
unique, foreign key and CHECK constraints, some of several columns, NOT NULL, defaults,
serial columns, a sequence, plain and expression indexes, views (one on another, one in
another schema), a batch-refresh and a streaming materialized view, comments, a table in
another schema; names chosen so that pg_dump must order by dependency, not by name) is built on a
pgbarrier server on DuckDB, dumped with PostgreSQL 15's pg_dump (plain and ``-Fc``) and
restored into a fresh PostgreSQL database (psql / pg_restore). The same SQL, run
directly on another fresh PostgreSQL database, is the reference: the restored catalog
(pg_catalog / information_schema answers) and rows must equal it. A batch-refresh view
comes back as a PostgreSQL materialized view with its rows (README, "Backups and
pg_dump").
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from conftest import ServerProcess, require_postgres, start_server, stop_server

SCHEMA = r"""
CREATE TABLE parent (id integer PRIMARY KEY, code varchar(10) UNIQUE NOT NULL,
    amount numeric(10,2) DEFAULT 0, note text, flag boolean DEFAULT true, born date,
    at timestamp, atz timestamptz, doc jsonb, raw bytea, big bigint CHECK (big > 0));
CREATE TABLE child (id serial PRIMARY KEY, parent_id integer NOT NULL REFERENCES parent(id),
    label text DEFAULT 'x');
CREATE INDEX child_parent_idx ON child (parent_id);
CREATE SEQUENCE counter START 100;
CREATE VIEW wide AS SELECT id, code FROM parent WHERE id > 1;
CREATE SCHEMA s;
CREATE TABLE s.t (k integer PRIMARY KEY, v text NOT NULL);
CREATE TABLE s.ser (id serial PRIMARY KEY, t_k integer REFERENCES s.t (k));
INSERT INTO parent VALUES
    (1, 'a', 1.5, E'tab\there\nnewline \\ backslash ''quote''', true, '2020-01-02',
     '2020-01-02 03:04:05', '2020-01-02 03:04:05+00', '{"a": [1, "x\ty"]}', '\x00ff5c0a', 5),
    (2, 'b', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
    (3, 'c', -7.25, '\N', false, '1999-12-31', NULL, NULL, '{}', '\x', 9000000000);
INSERT INTO child (parent_id) VALUES (1), (2), (1);
INSERT INTO s.t VALUES (1, 'one'), (2, '');
INSERT INTO s.ser (t_k) VALUES (2);
CREATE TABLE z_kinds (id integer PRIMARY KEY, a smallint DEFAULT -1 CHECK (a BETWEEN -5 AND 5),
    b real, c double precision, d char(3) CHECK (d IN ('abc', 'xyz')), e uuid, f time,
    g interval, h text[], i integer[], q text DEFAULT 'it''s', ok boolean DEFAULT false,
    at timestamptz DEFAULT now());
CREATE TABLE z_pair (x integer, y integer, label varchar(20), PRIMARY KEY (x, y),
    UNIQUE (label, x));
CREATE TABLE z_ref (id bigserial PRIMARY KEY, x integer, y integer, n smallserial,
    FOREIGN KEY (x, y) REFERENCES z_pair (x, y));
CREATE UNIQUE INDEX z_ref_yx ON z_ref (y, x);
CREATE INDEX z_kinds_lower ON z_kinds (lower(q));
CREATE VIEW a_view AS SELECT id, a FROM z_kinds;
CREATE VIEW a_view_on_view AS SELECT id FROM a_view WHERE a > 0;
CREATE VIEW s.sv AS SELECT k, v FROM s.t WHERE k > 1;
COMMENT ON TABLE z_kinds IS 'all kinds';
COMMENT ON COLUMN z_kinds.q IS 'a ''q''';
INSERT INTO z_kinds VALUES (1, 2, 1.5, 2.25, 'abc', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
    '12:34:56', '1 day 2 hours', ARRAY['x', 'y z', 'q"u', NULL, 'back\slash', '{}', ''],
    ARRAY[1, NULL, 3], E'tab\there', true, '2021-06-07 08:09:10+02'),
    (2, -5, NULL, -0.5, 'xyz', NULL, NULL, '-3 mons', ARRAY[]::text[], NULL, NULL, NULL, NULL);
INSERT INTO z_pair VALUES (1, 2, 'l'), (3, 4, NULL);
INSERT INTO z_ref (x, y) VALUES (1, 2), (NULL, NULL);
-- streaming on pgbarrier; PostgreSQL's is current when created (after the rows)
CREATE MATERIALIZED VIEW a_streaming AS SELECT count(*) AS n, max(a) AS top FROM z_kinds;
"""
#: on pgbarrier a batch-refresh view; on the reference PostgreSQL's own materialized view
VIEW = ("CREATE MATERIALIZED VIEW per_parent {} AS "
        "SELECT parent_id, count(*) AS n FROM child GROUP BY parent_id")

#: what is compared between the restored and the reference database
CATALOG = {
    "relations": """
        SELECT n.nspname, c.relname, c.relkind::text FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname IN ('public', 's')
        ORDER BY 1, 2""",
    "columns": """
        SELECT c.relname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod),
               a.attnotnull, pg_get_expr(d.adbin, d.adrelid)
        FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE n.nspname IN ('public', 's') AND a.attnum > 0 AND NOT a.attisdropped
          AND c.relkind IN ('r', 'v', 'm')
        ORDER BY n.nspname, 1, 2""",
    "information_schema": """
        SELECT table_schema, table_name, column_name, data_type, character_maximum_length,
               numeric_precision, numeric_scale, is_nullable, column_default
        FROM information_schema.columns WHERE table_schema IN ('public', 's')
        ORDER BY 1, 2, ordinal_position""",
    "constraints": """
        SELECT conrelid::regclass::text, conname, contype::text, pg_get_constraintdef(oid)
        FROM pg_constraint WHERE connamespace IN ('public'::regnamespace, 's'::regnamespace)
        ORDER BY 1, 2""",
    "indexes": """
        SELECT schemaname, tablename, indexname, indexdef FROM pg_indexes
        WHERE schemaname IN ('public', 's') ORDER BY 1, 2, 3""",
    "views": """
        SELECT schemaname, viewname, definition FROM pg_views
        WHERE schemaname IN ('public', 's') ORDER BY 1, 2""",
    "matviews": """
        SELECT schemaname, matviewname, definition, ispopulated FROM pg_matviews
        ORDER BY 1, 2""",
    "sequences": """
        SELECT schemaname, sequencename, data_type::text, start_value, min_value, max_value,
               increment_by, last_value FROM pg_sequences ORDER BY 1, 2""",
    "owned": """
        SELECT pg_get_serial_sequence('child', 'id'), pg_get_serial_sequence('z_ref', 'id'),
               pg_get_serial_sequence('z_ref', 'n')""",
    "comments": """
        SELECT c.relname, d.objsubid, d.description FROM pg_description d
        JOIN pg_class c ON c.oid = d.objoid AND d.classoid = 'pg_class'::regclass
        JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname IN ('public', 's')
        ORDER BY 1, 2""",
}
DATA = {
    "parent": "SELECT * FROM parent ORDER BY id",
    "child": "SELECT * FROM child ORDER BY id",
    "s.t": "SELECT * FROM s.t ORDER BY k",
    "s.ser": "SELECT * FROM s.ser ORDER BY id",
    "per_parent": "SELECT * FROM per_parent ORDER BY parent_id",
    "z_kinds": "SELECT * FROM z_kinds ORDER BY id",
    "z_pair": "SELECT * FROM z_pair ORDER BY x",
    "z_ref": "SELECT * FROM z_ref ORDER BY id",
    "a_streaming": "SELECT * FROM a_streaming",
    "a_view_on_view": "SELECT * FROM a_view_on_view ORDER BY id",
    "s.sv": "SELECT * FROM s.sv ORDER BY k",
}


def _statements(sql: str) -> list[str]:
    return [s.strip() for s in sql.split(";\n") if s.strip()]


def _snapshot(dsn: str, data: bool = True) -> dict[str, list[tuple]]:
    with psycopg.connect(dsn, autocommit=True) as c:
        out = {name: c.execute(q).fetchall() for name, q in CATALOG.items()}
        if data:
            out.update({name: [tuple(map(str, r)) for r in c.execute(q).fetchall()]
                        for name, q in DATA.items()})
        return out


@pytest.fixture(scope="module")
def setup() -> Iterator[tuple[ServerProcess, str, str]]:
    """A DuckDB server with the schema, and a PostgreSQL reference database with it."""
    dsn = require_postgres()
    prefix = f"pgbdd_{uuid.uuid4().hex[:8]}"
    base = dsn.rsplit("/", 1)[0]
    srv = start_server()
    try:
        with psycopg.connect(dsn, autocommit=True) as adm:
            adm.execute(f"CREATE DATABASE {prefix}_ref")
        with psycopg.connect(f"{base}/{prefix}_ref", autocommit=True) as ref:
            for statement in _statements(SCHEMA):
                ref.execute(statement)
            ref.execute(VIEW.format(""))
        with psycopg.connect(srv.dsn(), autocommit=True) as c:
            for statement in _statements(SCHEMA):
                c.execute(statement)
            c.execute(VIEW.format("WITH (refresh.interval.sec = 5)"))
        yield srv, prefix, base
    finally:
        code = stop_server(srv)
        with psycopg.connect(dsn, autocommit=True) as adm:
            rows = adm.execute("SELECT datname FROM pg_database WHERE datname LIKE %s",
                               [f"{prefix}%"]).fetchall()
            for (db,) in rows:
                adm.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        assert code == 0, "".join(srv.log)


def _dump(srv: ServerProcess, path: str, *args: str) -> None:
    done = subprocess.run(["pg_dump", "-h", srv.host, "-p", str(srv.port), "-U", "root",
                           *args, "-f", path, "dev"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PGCONNECT_TIMEOUT": "10"})
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr  # no error, no warning


def _restore(base: str, database: str, path: str, custom: bool) -> None:
    with psycopg.connect(f"{base}/postgres", autocommit=True) as adm:
        adm.execute(f"CREATE DATABASE {database}")
    host = ["-h", "127.0.0.1", "-p", "5432", "-U", "postgres", "-d", database]
    cmd = ["pg_restore", "--exit-on-error", "--no-owner", *host, path] if custom else \
        ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", *host, "-f", path]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "ERROR" not in done.stderr, done.stderr


@pytest.mark.parametrize("fmt", ["plain", "custom"])
def test_a_dump_of_duckdb_restores_into_postgresql_as_postgresql_has_it(setup, fmt, tmp_path):
    srv, prefix, base = setup
    path = str(tmp_path / f"dump.{fmt}")
    _dump(srv, path, "-F", "p" if fmt == "plain" else "c")
    _restore(base, f"{prefix}_{fmt}", path, custom=fmt == "custom")
    expected = _snapshot(f"{base}/{prefix}_ref")
    assert expected["matviews"][0][3] is True and len(expected["per_parent"]) == 2
    got = _snapshot(f"{base}/{prefix}_{fmt}")
    for name in expected:
        assert got[name] == expected[name], name


def test_schema_only_restores_the_catalog_without_rows(setup, tmp_path):
    srv, prefix, base = setup
    path = str(tmp_path / "schema.sql")
    _dump(srv, path, "--schema-only")
    _restore(base, f"{prefix}_schema", path, custom=False)
    expected = _snapshot(f"{base}/{prefix}_ref", data=False)
    got = _snapshot(f"{base}/{prefix}_schema", data=False)
    for name in expected:
        if name not in ("matviews", "sequences"):
            assert got[name] == expected[name], name
    with psycopg.connect(f"{base}/{prefix}_schema", autocommit=True) as c:
        assert c.execute("SELECT count(*) FROM parent").fetchone() == (0,)
        assert c.execute("SELECT ispopulated FROM pg_matviews").fetchone() == (False,)


def test_one_table_dumps_alone(setup, tmp_path):
    srv, prefix, base = setup
    path = str(tmp_path / "parent.sql")
    _dump(srv, path, "-t", "parent")
    _restore(base, f"{prefix}_one", path, custom=False)
    ref = f"{base}/{prefix}_ref"
    with psycopg.connect(ref) as r, psycopg.connect(f"{base}/{prefix}_one") as c:
        relations = CATALOG["relations"]
        assert c.execute(relations).fetchall() == [
            row for row in r.execute(relations).fetchall()
            if row[1] in ("parent", "parent_pkey", "parent_code_key")]
        assert c.execute(DATA["parent"]).fetchall() == r.execute(DATA["parent"]).fetchall()
        constraints = CATALOG["constraints"].replace(
            "'s'::regnamespace", "'public'::regnamespace")
        assert c.execute(constraints).fetchall() == [
            row for row in r.execute(constraints).fetchall() if row[0] == "parent"]


_SERIAL_DEFAULTS = ("SELECT adrelid::regclass::text, pg_get_expr(adbin, adrelid) FROM pg_attrdef "
                    "WHERE pg_get_expr(adbin, adrelid) LIKE 'nextval%' ORDER BY 1, 2")

#: pg_dump's own statements, answered by pgbarrier on DuckDB as by PostgreSQL (result
#: rows, or the SQLSTATE of the error); each list runs in one session
STATEMENTS = [
    ["SELECT set_config(name, 'view, foreign-table', false) FROM pg_settings "
     "WHERE name = 'restrict_nonsystem_relation_kind'",
     "SELECT current_setting('restrict_nonsystem_relation_kind')",
     "SELECT set_config(name, 'x', false) FROM pg_settings WHERE name = 'no_such_setting'"],
    ["LOCK TABLE public.parent IN ACCESS SHARE MODE"],
    ["BEGIN", "LOCK TABLE public.parent, s.t IN ACCESS SHARE MODE", "SELECT count(*) FROM child",
     "COMMIT"],
    ["BEGIN", "LOCK TABLE public.no_such_table IN ACCESS SHARE MODE", "ROLLBACK"],
    ["BEGIN", "LOCK ONLY parent, child * IN ACCESS SHARE MODE NOWAIT", "COMMIT"],
    ["BEGIN", "LOCK TABLE parent IN ACCESS SHAR MODE", "ROLLBACK"],
    ["CREATE SEQUENCE dump_seq START 7", "SELECT last_value, is_called FROM public.dump_seq",
     "SELECT nextval('dump_seq')", "SELECT last_value, is_called FROM public.dump_seq",
     "SELECT is_called, last_value FROM dump_seq", "DROP SEQUENCE dump_seq"],
    # (set_config's own answer here is '""' on pgbarrier, '' on PostgreSQL: not pg_dump's)
    ["SELECT pg_catalog.set_config('search_path', '', false) IS NOT NULL",
     "SELECT pg_catalog.current_schemas(false)",
     "SELECT pg_catalog.pg_get_constraintdef(oid) FROM pg_catalog.pg_constraint "
     "WHERE conname IN ('child_parent_id_fkey', 'ser_t_k_fkey') ORDER BY 1",
     _SERIAL_DEFAULTS],
    [_SERIAL_DEFAULTS],
]


def _answers(dsn: str, statements: list[str]) -> list[object]:
    out: list[object] = []
    with psycopg.connect(dsn, autocommit=True) as c:
        for sql in statements:
            try:
                cur = c.execute(sql)
                out.append(cur.fetchall() if cur.description else cur.statusmessage)
            except psycopg.Error as exc:
                out.append(exc.sqlstate)
    return out


@pytest.mark.parametrize("statements", STATEMENTS, ids=lambda s: s[-1 if len(s) < 3 else 1][:40])
def test_pg_dumps_statements_answer_as_on_postgresql(setup, statements):
    srv, prefix, base = setup
    assert _answers(srv.dsn(), statements) == _answers(f"{base}/{prefix}_ref", statements)


def test_a_lock_that_would_block_others_is_refused(setup):
    srv, _prefix, _base = setup
    with psycopg.connect(srv.dsn()) as c:
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="EXCLUSIVE MODE"):
            c.execute("LOCK TABLE parent")  # ACCESS EXCLUSIVE: DuckDB cannot block others


def test_a_batch_view_made_before_definitions_were_kept_dumps_after_a_refresh(tmp_path):
    """A data dir of an older pgbarrier: its marker row has no definition (made so here
    with DuckDB itself, the server stopped)."""
    import duckdb

    data = tmp_path / "data"
    srv = start_server("--data-dir", str(data))
    try:
        with psycopg.connect(srv.dsn(), autocommit=True) as c:
            c.execute("CREATE TABLE t (a integer)")
            c.execute("INSERT INTO t VALUES (1), (2)")
            c.execute("CREATE MATERIALIZED VIEW old WITH (refresh.interval.sec = 3600) AS "
                      "SELECT sum(a) AS s FROM t")
    finally:
        assert stop_server(srv) == 0
    with duckdb.connect(str(data / "dev.duckdb")) as db:
        db.execute("UPDATE pgbarrier.materialized_views SET definition = NULL")
    srv = start_server("--data-dir", str(data))
    try:
        path = str(tmp_path / "old.sql")
        cmd = ["pg_dump", "-h", srv.host, "-p", str(srv.port), "-U", "root", "-f", path, "dev"]
        before = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert before.returncode != 0 and "appears to be empty" in before.stderr
        with psycopg.connect(srv.dsn(), autocommit=True) as c:
            c.execute("REFRESH MATERIALIZED VIEW old")
        _dump(srv, path)
        with open(path, encoding="utf-8") as f:
            assert "CREATE MATERIALIZED VIEW public.old AS" in f.read()
    finally:
        assert stop_server(srv) == 0
