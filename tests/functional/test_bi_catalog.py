"""BI tools and psql browse pgbarrier's catalog (issue 6), on both data backends.

One pgbarrier server on port 0 per backend (module scope): the embedded DuckDB, and an
upstream PostgreSQL with a fresh upstream database created for the module and dropped after
it (the reference: there every catalog query reaches PostgreSQL itself). Through pgbarrier,
over the wire, the fixture creates

* ``items``: a table with a primary key, a NOT NULL column with a default and a numeric(10,2);
* ``items_named``: a view;
* ``mv_stream``: a plain materialized view (``CREATE MATERIALIZED VIEW ... AS``): a streaming
  view on DuckDB, PostgreSQL's own materialized view upstream (issue 14);
* ``mv_batch``: a batch-refresh materialized view (``WITH (refresh.interval.sec = 3600)``).

Then real clients browse them as a user's tools would:

* psql 15 meta-commands (``\\l \\dn \\dt \\dv \\dm \\d \\d+ \\du \\df \\conninfo``), unaligned output;
* pgjdbc's DatabaseMetaData (``tests/clients/PgbarrierMeta.java``, compiled with javac against
  Debian's ``/usr/share/java/postgresql.jar``), what DBeaver and Metabase call;
* SQLAlchemy 2 on psycopg 3 (``create_engine`` + ``inspect``), what Superset calls.

How each backend lists ``mv_stream`` is spelled out per backend (``PLAIN_MV_KIND``), because
the two implement it differently: on an upstream PostgreSQL a plain ``CREATE MATERIALIZED
VIEW`` is relayed and is PostgreSQL's own materialized view (README, "Materialized views on
the upstream PostgreSQL", issue 14), so PostgreSQL's catalog lists it as a materialized view
(``\\dm``, not ``\\dv``); on DuckDB it is a streaming view that pgbarrier's emulated catalog
lists as what the user created, a materialized view. Today both answer "materialized view";
everything else is expected to look the same on both backends too.

A client tool that is missing skips its tests with the reason; under ``CI=true`` it fails them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from conftest import (
    CLIENT_TIMEOUT_S,
    ServerProcess,
    compile_java,
    missing_client_tool,
    require_postgres,
    start_server,
    stop_server,
    upstream_root,
)

USER = "root"

TABLE = "items"
VIEW = "items_named"
MV_STREAM = "mv_stream"
MV_BATCH = "mv_batch"

SETUP = [
    f"CREATE TABLE {TABLE} (id integer PRIMARY KEY, name text NOT NULL DEFAULT 'x', "
    "price numeric(10,2))",
    f"INSERT INTO {TABLE} (id, name, price) VALUES (1, 'a', 1.50), (2, 'b', 2.25)",
    f"INSERT INTO {TABLE} (id, price) VALUES (3, 9.99)",
    f"CREATE VIEW {VIEW} AS SELECT id, name FROM {TABLE}",
    f"CREATE MATERIALIZED VIEW {MV_STREAM} AS SELECT name, count(*) AS n FROM {TABLE} GROUP BY name",
    f"CREATE MATERIALIZED VIEW {MV_BATCH} WITH (refresh.interval.sec = 3600) AS "
    f"SELECT id, price FROM {TABLE}",
]

# How each backend's catalog shows a plain materialized view (see the module docstring):
# DuckDB's streaming view and, upstream, PostgreSQL's own materialized view (issue 14; before,
# upstream it was a plain PostgreSQL view and listed as "view").
PLAIN_MV_KIND = {"duckdb": "materialized view", "postgres": "materialized view"}

# The default 'x' of items.name as catalogs print it: PostgreSQL decompiles it as 'x'::text;
# a catalog that prints the bare literal is as good for every client here.
DEFAULT_X = re.compile(r"^'x'(::text)?$")


# --------------------------------------------------------------------------- server and objects


@dataclass
class Target:
    backend: str
    server: ServerProcess
    database: str

    @property
    def host(self) -> str:
        return self.server.host

    @property
    def port(self) -> int:
        return self.server.port

    def relations(self, kind: str) -> set[str]:
        """The names of this module's objects that a catalog should list as ``kind``
        ("table", "view" or "materialized view")."""
        kinds = {TABLE: "table", VIEW: "view", MV_STREAM: PLAIN_MV_KIND[self.backend],
                 MV_BATCH: "materialized view"}
        return {name for name, k in kinds.items() if k == kind}

    def log_tail(self, n: int = 40) -> str:
        return "\n--- server log (tail) ---\n" + "".join(self.server.log[-n:])


def _upstream_ddl(dsn: str, statement: str, database: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True, connect_timeout=10) as conn:
        conn.execute(sql.SQL(statement).format(sql.Identifier(database)))


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def target(request) -> Iterator[Target]:
    import psycopg

    database = f"pgb_bi_{uuid.uuid4().hex[:10]}"
    extra = ["--database", database]
    dsn = None
    if request.param == "postgres":
        dsn = require_postgres()
        _upstream_ddl(dsn, "CREATE DATABASE {}", database)
        extra += ["--upstream", upstream_root(dsn)]
    srv = None
    try:
        srv = start_server(*extra)
        target = Target(request.param, srv, database)
        with psycopg.connect(srv.dsn(database, USER), autocommit=True, connect_timeout=10) as conn:
            for statement in SETUP:
                try:
                    conn.execute(statement)
                except psycopg.Error as exc:
                    raise AssertionError(f"setup failed on {statement!r}: {exc!r}"
                                         + target.log_tail()) from exc
        yield target
    finally:
        code = stop_server(srv) if srv is not None else 0
        if dsn is not None:
            _upstream_ddl(dsn, "DROP DATABASE IF EXISTS {} WITH (FORCE)", database)
    assert code == 0, "server did not exit cleanly:\n" + "".join(srv.log)


# --------------------------------------------------------------------------- psql 15


@dataclass
class PsqlOutput:
    """``psql -X -A -F '|' -c <meta-command>``: the title, the header's fields, the rows."""

    proc: subprocess.CompletedProcess[str]
    lines: list[str]

    @property
    def title(self) -> str:
        return self.lines[0] if self.lines else ""

    @property
    def header(self) -> list[str]:
        return self.lines[1].split("|") if len(self.lines) > 1 else []

    @property
    def rows(self) -> list[list[str]]:
        return [line.split("|") for line in self.lines[2:] if "|" in line]


def _psql(target: Target, command: str) -> PsqlOutput:
    if shutil.which("psql") is None:
        missing_client_tool("psql not found (Debian package postgresql-client)")
    env = {**os.environ, "PGHOST": target.host, "PGPORT": str(target.port), "PGUSER": USER,
           "PGDATABASE": target.database, "PGCONNECT_TIMEOUT": "10", "PGAPPNAME": "pytest-bi"}
    proc = subprocess.run(["psql", "-X", "-A", "-F", "|", "-c", command], capture_output=True,
                          text=True, timeout=CLIENT_TIMEOUT_S, env=env)
    detail = (f"psql -c {command!r}: exit {proc.returncode}\n--- stdout ---\n{proc.stdout}"
              f"\n--- stderr ---\n{proc.stderr[-4000:]}{target.log_tail()}")
    assert proc.returncode == 0, detail
    assert "ERROR" not in proc.stderr, detail
    return PsqlOutput(proc, proc.stdout.splitlines())


def _detail(out: PsqlOutput, target: Target) -> str:
    return f"--- stdout ---\n{out.proc.stdout}\n--- stderr ---\n{out.proc.stderr}{target.log_tail()}"


def _public(out: PsqlOutput) -> set[tuple[str, str]]:
    """(name, type) of the public rows of a \\d[tvm] listing (Schema|Name|Type|Owner)."""
    return {(row[1], row[2]) for row in out.rows if row[0] == "public"}


def test_psql_l_lists_the_database(target):
    out = _psql(target, "\\l")
    assert out.title == "List of databases", _detail(out, target)
    assert out.header == ["Name", "Owner", "Encoding", "Collate", "Ctype", "ICU Locale",
                          "Locale Provider", "Access privileges"], _detail(out, target)
    assert target.database in [row[0] for row in out.rows], _detail(out, target)


def test_psql_dn_lists_public(target):
    out = _psql(target, "\\dn")
    assert out.title == "List of schemas", _detail(out, target)
    assert out.header == ["Name", "Owner"], _detail(out, target)
    assert "public" in [row[0] for row in out.rows], _detail(out, target)


@pytest.mark.parametrize("command, kind", [("\\dt", "table"), ("\\dv", "view"),
                                           ("\\dm", "materialized view")])
def test_psql_dt_dv_dm_list_exactly_the_relations_of_their_kind(target, command, kind):
    """\\dt lists items; \\dv the view; \\dm both materialized views on DuckDB (on an upstream
    PostgreSQL the streaming one is a plain view, listed by \\dv); nothing else in public."""
    out = _psql(target, command)
    assert out.title == "List of relations", _detail(out, target)
    assert out.header == ["Schema", "Name", "Type", "Owner"], _detail(out, target)
    assert _public(out) == {(name, kind) for name in target.relations(kind)}, _detail(out, target)


@pytest.mark.parametrize("command", ["\\d items", "\\d+ items"])
def test_psql_d_items_shows_columns_default_not_null_and_primary_key(target, command):
    out = _psql(target, command)
    detail = _detail(out, target)
    assert out.title == 'Table "public.items"', detail
    expected_header = ["Column", "Type", "Collation", "Nullable", "Default"]
    if command.startswith("\\d+"):
        expected_header += ["Storage", "Compression", "Stats target", "Description"]
    assert out.header == expected_header, detail
    columns = {row[0]: row[1:5] for row in out.rows}
    assert list(columns) == ["id", "name", "price"], detail
    assert columns["id"] == ["integer", "", "not null", ""], detail
    assert columns["name"][:3] == ["text", "", "not null"], detail
    assert DEFAULT_X.match(columns["name"][3]), detail
    assert columns["price"] == ["numeric(10,2)", "", "", ""], detail
    assert "Indexes:" in out.lines, detail
    assert '    "items_pkey" PRIMARY KEY, btree (id)' in out.lines, detail


def test_psql_du_lists_roles(target):
    out = _psql(target, "\\du")
    assert out.title == "List of roles", _detail(out, target)
    assert out.header == ["Role name", "Attributes", "Member of"], _detail(out, target)
    assert len(out.rows) >= 1, _detail(out, target)


def test_psql_df_runs(target):
    out = _psql(target, "\\df")
    assert out.title == "List of functions", _detail(out, target)
    assert out.header == ["Schema", "Name", "Result data type", "Argument data types",
                          "Type"], _detail(out, target)


def test_psql_conninfo(target):
    out = _psql(target, "\\conninfo")
    assert out.lines == [f'You are connected to database "{target.database}" as user "{USER}" '
                         f'on host "{target.host}" at port "{target.port}".'], _detail(out, target)


# --------------------------------------------------------------------------- pgjdbc DatabaseMetaData


@pytest.fixture(scope="session")
def meta_classpath(tmp_path_factory) -> str:
    return compile_java(tmp_path_factory, "PgbarrierMeta.java")


@dataclass
class JdbcMeta:
    proc: subprocess.CompletedProcess[str]
    lines: dict[str, list[str]]  # key -> the values of its lines, in order
    detail: str

    def failure(self, call: str) -> str | None:
        return next((f for f in self.lines.get("FAILED", []) if f.split("|")[0] == call), None)


@pytest.fixture(scope="module")
def jdbc_meta(target, meta_classpath) -> JdbcMeta:
    """One run of PgbarrierMeta per backend; each test checks one DatabaseMetaData call."""
    # pgjdbc's defaults, as BI tools use them; only a socket timeout added
    url = f"jdbc:postgresql://{target.host}:{target.port}/{target.database}?user={USER}&socketTimeout=60"
    proc = subprocess.run(["java", "-cp", meta_classpath, "PgbarrierMeta", url, TABLE],
                          capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S)
    lines: dict[str, list[str]] = {}
    for line in proc.stdout.splitlines():
        key, _, value = line.partition(": ")
        lines.setdefault(key, []).append(value)
    detail = (f"exit {proc.returncode}\n--- stdout ---\n{proc.stdout}\n--- stderr ---\n"
              f"{proc.stderr[-4000:]}{target.log_tail()}")
    return JdbcMeta(proc, lines, detail)


def _jdbc_call(jdbc_meta: JdbcMeta, call: str) -> None:
    assert jdbc_meta.failure("connect") is None, jdbc_meta.detail
    assert jdbc_meta.failure(call) is None, jdbc_meta.detail


def test_pgjdbc_runs_every_call(jdbc_meta):
    assert jdbc_meta.proc.returncode == 0, jdbc_meta.detail
    assert jdbc_meta.lines.get("done") == ["meta"], jdbc_meta.detail


def test_pgjdbc_get_catalogs(target, jdbc_meta):
    _jdbc_call(jdbc_meta, "getCatalogs")
    assert target.database in jdbc_meta.lines.get("catalog", []), jdbc_meta.detail


def test_pgjdbc_get_schemas(jdbc_meta):
    _jdbc_call(jdbc_meta, "getSchemas")
    schemas = jdbc_meta.lines.get("schema", [])
    assert {"public", "pg_catalog", "information_schema"} <= set(schemas), jdbc_meta.detail
    assert len(schemas) == len(set(schemas)), jdbc_meta.detail


def test_pgjdbc_get_tables(target, jdbc_meta):
    _jdbc_call(jdbc_meta, "getTables")
    jdbc_type = {"table": "TABLE", "view": "VIEW", "materialized view": "MATERIALIZED VIEW"}
    expected = sorted(f"{name}|{jdbc_type[kind]}" for kind in jdbc_type
                      for name in target.relations(kind))
    assert sorted(jdbc_meta.lines.get("table", [])) == expected, jdbc_meta.detail


def test_pgjdbc_get_columns(jdbc_meta):
    _jdbc_call(jdbc_meta, "getColumns")
    columns = [value.split("|", 6) for value in jdbc_meta.lines.get("column", [])]
    # COLUMN_NAME, TYPE_NAME, DATA_TYPE (java.sql.Types), COLUMN_SIZE, DECIMAL_DIGITS, IS_NULLABLE
    assert [c[:6] for c in columns] == [
        ["id", "int4", "4", "10", "0", "NO"],
        ["name", "text", "12", "2147483647", "0", "NO"],
        ["price", "numeric", "2", "10", "2", "YES"],
    ], jdbc_meta.detail
    defaults = [c[6] for c in columns]
    assert defaults[0] == "null" and defaults[2] == "null", jdbc_meta.detail
    assert DEFAULT_X.match(defaults[1]), jdbc_meta.detail


def test_pgjdbc_get_primary_keys(jdbc_meta):
    _jdbc_call(jdbc_meta, "getPrimaryKeys")
    assert jdbc_meta.lines.get("pk") == ["items|id|1|items_pkey"], jdbc_meta.detail


def test_pgjdbc_get_transaction_isolation(jdbc_meta):
    _jdbc_call(jdbc_meta, "getTransactionIsolation")
    assert jdbc_meta.lines.get("isolation") == ["READ_COMMITTED"], jdbc_meta.detail


# --------------------------------------------------------------------------- SQLAlchemy 2 (psycopg 3)


@pytest.fixture(scope="module")
def engine(target):
    sqlalchemy = pytest.importorskip("sqlalchemy")
    engine = sqlalchemy.create_engine(
        f"postgresql+psycopg://{USER}@{target.host}:{target.port}/{target.database}",
        connect_args={"connect_timeout": 10})
    try:
        yield engine
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def inspector(engine):
    from sqlalchemy import inspect

    return inspect(engine)


def test_sqlalchemy_connects(target, engine):
    """First connect: SQLAlchemy's dialect initialisation runs ``select pg_catalog.version()``,
    ``select current_schema()`` and ``show standard_conforming_strings``."""
    from sqlalchemy import text

    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM items")).scalar_one() == 3, target.log_tail()
    assert engine.dialect.server_version_info[:1] == (15,), engine.dialect.server_version_info
    assert engine.dialect.default_schema_name == "public"
    assert engine.dialect._backslash_escapes is False  # standard_conforming_strings = on


def test_sqlalchemy_schema_names(inspector):
    assert "public" in inspector.get_schema_names()


def test_sqlalchemy_table_names(inspector):
    assert inspector.get_table_names() == [TABLE]


def test_sqlalchemy_view_names(target, inspector):
    assert sorted(inspector.get_view_names()) == sorted(target.relations("view"))


def test_sqlalchemy_materialized_view_names(target, inspector):
    assert sorted(inspector.get_materialized_view_names()) == sorted(
        target.relations("materialized view"))


def test_sqlalchemy_columns(inspector):
    from sqlalchemy import Integer, Numeric, Text

    columns = inspector.get_columns(TABLE)
    assert [c["name"] for c in columns] == ["id", "name", "price"], columns
    by_name = {c["name"]: c for c in columns}
    assert isinstance(by_name["id"]["type"], Integer), columns
    assert isinstance(by_name["name"]["type"], Text), columns
    price = by_name["price"]["type"]
    assert isinstance(price, Numeric) and (price.precision, price.scale) == (10, 2), columns
    assert [c["nullable"] for c in columns] == [False, False, True], columns
    assert by_name["id"]["default"] is None and by_name["price"]["default"] is None, columns
    assert DEFAULT_X.match(by_name["name"]["default"] or ""), columns


def test_sqlalchemy_pk_constraint(inspector):
    pk = inspector.get_pk_constraint(TABLE)
    assert (pk["name"], pk["constrained_columns"]) == ("items_pkey", ["id"]), pk
