"""Record the queries pgjdbc's DatabaseMetaData and SQLAlchemy's inspector send, from PostgreSQL.

    .venv/bin/python tests/clients/capture_client_queries.py
        [--dsn postgresql://postgres@127.0.0.1:5432/postgres] [--log-file PATH]
        [--out tests/data/client-queries]

Writes ``pgjdbc.json``, ``sqlalchemy.json`` and ``superset.json`` in the format of the captured-client-query files
(``{"client", "source", "queries"}``). How:

1. a fresh database on the PostgreSQL server of ``--dsn`` (a superuser), with the objects that
   ``tests/functional/test_captured_queries.py`` creates before it runs the recorded queries
   (``cq_items`` with a primary key and a default, a view, two materialized views); dropped at
   the end;
2. each client connects to it with ``options=-c log_statement=all`` (its own session only,
   nothing server-wide is changed) and makes the calls of ``tests/functional/test_bi_catalog.py``
   on ``cq_items``: pgjdbc runs ``PgbarrierMeta.java``; SQLAlchemy connects and calls the
   inspector;
3. the statements are read back from the server's log (the part written while the client ran,
   lines of the capture database only). An extended-protocol ``execute`` has its ``$n``
   replaced by the values of the log's ``DETAIL:  parameters:`` line, so each query runs on its
   own; exact repeats are kept once, in first-seen order; transaction control (BEGIN,
   SAVEPOINT, ROLLBACK...) is left out of "queries", since it does not run on its own, and named
   in "source";
4. every recorded query is run once more on its own (autocommit) against the capture database;
   the script fails if one does not run.

The log is ``pg_current_logfile()`` under the data directory when the logging collector runs,
else Debian's ``/var/log/postgresql/postgresql-<version>-<cluster>.log`` (from ``cluster_name``),
or ``--log-file``. It needs Debian's default ``log_line_prefix``, ``%m [%p] %q%u@%d``. Reading it needs the right to read the server's log (root here).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import uuid
import zipfile
from pathlib import Path

import psycopg
from psycopg import conninfo, sql

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PGJDBC_JAR = Path(os.environ.get("PGBARRIER_PGJDBC_JAR", "/usr/share/java/postgresql.jar"))

# The objects of tests/functional/test_captured_queries.py, which runs the recorded queries:
# the queries name the table they describe, so these names make them list its objects.
TABLE = "cq_items"
ORDERS = "cq_orders"
SETUP = [
    f"CREATE TABLE {TABLE} (id integer PRIMARY KEY, name text NOT NULL DEFAULT 'x', price numeric(10,2))",
    f"CREATE VIEW cq_view AS SELECT id, name FROM {TABLE}",
    f"CREATE MATERIALIZED VIEW cq_stream AS SELECT id, price FROM {TABLE}",
    f"CREATE MATERIALIZED VIEW cq_batch AS SELECT count(*) AS n FROM {TABLE}",
    # keys, an index and comments for the constraint / index / comment readers
    f"CREATE TABLE {ORDERS} (id serial PRIMARY KEY, item_id integer REFERENCES {TABLE}(id), "
    "code varchar(20) UNIQUE, qty integer CHECK (qty > 0))",
    f"CREATE INDEX {ORDERS}_qty_idx ON {ORDERS} (qty)",
    f"COMMENT ON TABLE {TABLE} IS 'the items'",
    f"COMMENT ON COLUMN {TABLE}.name IS 'item name'",
]
SESSION_OPTIONS = "-c log_statement=all -c log_parameter_max_length=-1"

# %m [%p] %q%u@%d <LEVEL>:  <message>
ENTRY = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \S+ \[(\d+)\] (?:(\S*)@(\S*) )?"
                   r"([A-Z]+):  (.*)$")
STATEMENT = re.compile(r"^(?:statement|execute [^:]*): (.*)$", re.S)
PARAM = re.compile(r"\$(\d+) = ('(?:[^']|'')*'|NULL)")
# Transaction control makes no sense on its own (SAVEPOINT outside a transaction block is an
# error); such statements are left out of "queries" and named in "source" instead.
TRANSACTION_CONTROL = re.compile(r"^\s*(BEGIN|START\s+TRANSACTION|COMMIT|END|ROLLBACK|ABORT|"
                                 r"SAVEPOINT|RELEASE)\b", re.I)


def log_file(conn: psycopg.Connection) -> Path:
    data_dir, collector, cluster, prefix = conn.execute(
        "SELECT current_setting('data_directory'), current_setting('logging_collector'), "
        "current_setting('cluster_name'), current_setting('log_line_prefix')").fetchone()
    if not prefix.startswith("%m [%p] %q%u@%d "):
        sys.exit(f"log_line_prefix is {prefix!r}; this script reads '%m [%p] %q%u@%d ' (Debian's)")
    current = conn.execute("SELECT pg_current_logfile('stderr')").fetchone()[0]
    if collector == "on" and current:
        return Path(data_dir) / current
    if cluster and "/" in cluster:  # Debian's pg_ctlcluster: stderr into /var/log/postgresql
        path = Path(f"/var/log/postgresql/postgresql-{cluster.replace('/', '-')}.log")
        if path.is_file():
            return path
    sys.exit("cannot find the server's log file (logging_collector is off and it is not a Debian "
             "cluster): give --log-file")


def log_entries(text: str, database: str) -> list[tuple[str, str, str]]:
    """(pid, level, message) of the log entries of ``database``; continuation lines joined."""
    entries: list[list[str]] = []
    for line in text.split("\n"):
        m = ENTRY.match(line)
        if m:
            pid, _user, db, level, message = m.groups()
            entries.append([pid, db or "", level, message])
        elif entries:
            entries[-1][3] += "\n" + line
    return [(pid, level, message.rstrip("\n")) for pid, db, level, message in entries
            if db == database]


def substitute(query: str, params: dict[str, str]) -> str:
    """``query`` with each ``$n`` outside literals, quoted identifiers and comments replaced."""
    out: list[str] = []
    i = 0
    while i < len(query):
        ch = query[i]
        if ch in "'\"":
            j = i + 1
            while j < len(query):
                if query[j] == ch:
                    if j + 1 < len(query) and query[j + 1] == ch:
                        j += 2
                        continue
                    break
                j += 1
            out.append(query[i:j + 1])
            i = j + 1
        elif query.startswith("--", i):
            j = query.find("\n", i)
            j = len(query) if j < 0 else j
            out.append(query[i:j])
            i = j
        elif ch == "$" and (m := re.match(r"\$(\d+)", query[i:])) and m.group(1) in params:
            out.append(params[m.group(1)])
            i += len(m.group(0))
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def statements(entries: list[tuple[str, str, str]]) -> tuple[list[str], list[str]]:
    """The statements of the log entries, parameters substituted, repeats kept once: the
    queries, and apart the transaction-control statements."""
    found: list[str] = []
    control: list[str] = []
    pending: str | None = None  # an execute whose DETAIL line may follow

    def keep(query: str) -> None:
        query = query.strip()
        into = control if TRANSACTION_CONTROL.match(query) else found
        if query not in into:
            into.append(query)

    for _pid, level, message in entries:
        if level == "DETAIL" and pending is not None and message.startswith("parameters: "):
            params = {n: value for n, value in PARAM.findall(message[len("parameters: "):])}
            keep(substitute(pending, params))
            pending = None
            continue
        if pending is not None:
            keep(pending)
            pending = None
        if level == "LOG" and (m := STATEMENT.match(message)):
            if message.startswith("execute "):
                pending = m.group(1)
            else:
                keep(m.group(1))
        elif level in ("ERROR", "FATAL"):
            sys.exit(f"the client got an error while capturing: {message}")
    if pending is not None:
        keep(pending)
    return found, control


def capture(log: Path, database: str, run) -> tuple[list[str], list[str]]:
    start = log.stat().st_size
    run()
    with log.open("rb") as f:
        f.seek(start)
        text = f.read().decode("utf-8", "replace")
    queries, control = statements(log_entries(text, database))
    if not queries:
        sys.exit(f"no statement of database {database} found in {log}")
    return queries, control


def run_pgjdbc(host: str, port: int, user: str, database: str) -> None:
    with tempfile.TemporaryDirectory() as classes:
        subprocess.run(["javac", "-cp", str(PGJDBC_JAR), "-d", classes, str(HERE / "PgbarrierMeta.java")],
                       check=True, timeout=120)
        options = SESSION_OPTIONS.replace(" ", "%20").replace("=", "%3D")
        url = f"jdbc:postgresql://{host}:{port}/{database}?user={user}&options={options}"
        proc = subprocess.run(["java", "-cp", f"{classes}{os.pathsep}{PGJDBC_JAR}", "PgbarrierMeta", url,
                               TABLE], capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            sys.exit(f"PgbarrierMeta failed:\n{proc.stdout}{proc.stderr}")


def run_sqlalchemy(host: str, port: int, user: str, database: str) -> None:
    from sqlalchemy import create_engine, inspect

    engine = create_engine(f"postgresql+psycopg://{user}@{host}:{port}/{database}",
                           connect_args={"options": SESSION_OPTIONS})
    try:
        with engine.connect():
            pass
        inspector = inspect(engine)
        inspector.get_schema_names()
        inspector.get_table_names()
        inspector.get_view_names()
        inspector.get_materialized_view_names()
        inspector.get_columns(TABLE)
        inspector.get_pk_constraint(TABLE)
        inspector.get_foreign_keys(ORDERS)
        inspector.get_indexes(ORDERS)
        inspector.get_unique_constraints(ORDERS)
        inspector.get_check_constraints(ORDERS)
        inspector.get_table_comment(TABLE)
        inspector.get_sequence_names()
    finally:
        engine.dispose()


#: the SQL Superset's PostgresEngineSpec (superset/db_engine_specs/postgres.py) sends itself:
#: get_catalog_names, get_prequeries for schema public, get_cancel_query_id, cancel_query (of
#: a pid no session has), estimate_statement_cost, and the SQL Lab preview of a table
SUPERSET_SQL = [
    "SELECT datname FROM pg_database\nWHERE datistemplate = false;",
    'set search_path = "public"',
    "SELECT pg_backend_pid()",
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid='0'",
    f"EXPLAIN SELECT * FROM {TABLE}",
    f"SELECT * FROM public.{TABLE} LIMIT 100",
]


def run_superset(host: str, port: int, user: str, database: str) -> None:
    """What Superset sends when a PostgreSQL database is added, its schemas and tables are
    browsed, a table's metadata is shown (get_table_metadata) and SQL Lab runs: its engine
    spec's own SQL, and SQLAlchemy's inspector calls it makes."""
    from sqlalchemy import create_engine, inspect, text

    engine = create_engine(f"postgresql+psycopg://{user}@{host}:{port}/{database}",
                           connect_args={"options": SESSION_OPTIONS})
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))  # test_connection's ping
            for statement in SUPERSET_SQL:
                result = conn.exec_driver_sql(statement)
                if result.returns_rows:
                    result.fetchall()
            conn.rollback()
        inspector = inspect(engine)
        inspector.get_schema_names()
        inspector.get_table_names("public")
        inspector.get_foreign_table_names("public")
        inspector.get_view_names("public")
        inspector.get_materialized_view_names("public")
        for table in (TABLE, ORDERS):
            inspector.get_columns(table, "public")
            inspector.get_pk_constraint(table, "public")
            inspector.get_foreign_keys(table, "public")
            inspector.get_indexes(table, "public")
            inspector.get_table_comment(table, "public")
        inspector.get_columns("cq_view", "public")
    finally:
        engine.dispose()


def check_standalone(dsn: str, queries: list[str]) -> list[str]:
    """The queries that fail when run on their own, with their errors."""
    failures = []
    for query in queries:
        with psycopg.connect(dsn, autocommit=True) as conn:
            try:
                conn.execute(query.encode())  # bytes: no client-side % placeholders
            except psycopg.Error as exc:
                failures.append(f"{query!r}: {exc}")
    return failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", default=os.environ.get(
        "PGBARRIER_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres"))
    parser.add_argument("--log-file", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "client-queries")
    args = parser.parse_args()

    import sqlalchemy

    params = conninfo.conninfo_to_dict(args.dsn)
    host, port, user = params.get("host", "127.0.0.1"), int(params.get("port", 5432)), params["user"]
    database = f"pgb_capture_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(args.dsn, autocommit=True) as admin:
        log = args.log_file or log_file(admin)
        server = admin.execute("SHOW server_version").fetchone()[0]
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    capture_dsn = conninfo.make_conninfo(args.dsn, dbname=database)
    try:
        with psycopg.connect(capture_dsn, autocommit=True) as conn:
            for statement in SETUP:
                conn.execute(statement)
            table_oids = {name: conn.execute(sql.SQL("SELECT {}::regclass::oid").format(
                sql.Literal(name))).fetchone()[0] for name in (TABLE, ORDERS)}
        with zipfile.ZipFile(PGJDBC_JAR) as jar:
            manifest = jar.read("META-INF/MANIFEST.MF").decode()
        m = re.search(r"^Implementation-Version: (\S+)", manifest, re.M)
        clients = {
            "pgjdbc": (f"pgjdbc {m.group(1) if m else '(Debian libpostgresql-jdbc-java)'}",
                       "DatabaseMetaData getCatalogs, getSchemas, getTables(null, 'public', '%', "
                       "{TABLE, VIEW, MATERIALIZED VIEW}), "
                       f"getColumns(null, 'public', '{TABLE}', null), getPrimaryKeys(null, 'public', "
                       f"'{TABLE}'), getTransactionIsolation, after "
                       "connecting with pgjdbc's defaults (tests/clients/PgbarrierMeta.java)",
                       run_pgjdbc),
            "sqlalchemy": (f"SQLAlchemy {sqlalchemy.__version__} (psycopg {psycopg.__version__})",
                           "create_engine('postgresql+psycopg://...') and a first connect (dialect "
                           "initialisation), then inspect(engine): get_schema_names, get_table_names, "
                           "get_view_names, get_materialized_view_names, "
                           f"get_columns('{TABLE}'), get_pk_constraint('{TABLE}'), "
                           f"get_foreign_keys, get_indexes, get_unique_constraints and "
                           f"get_check_constraints('{ORDERS}'), get_table_comment('{TABLE}'), "
                           "get_sequence_names",
                           run_sqlalchemy),
            "superset": ("Superset (PostgresEngineSpec; SQLAlchemy "
                         f"{sqlalchemy.__version__}, psycopg {psycopg.__version__})",
                         "Superset's engine-spec SQL (get_catalog_names, get_prequeries, "
                         "get_cancel_query_id, cancel_query, estimate_statement_cost, a table "
                         "preview) and the inspector calls of its database, schema and table "
                         "browsers (get_schema_names, get_table_names, get_foreign_table_names, "
                         "get_view_names, get_materialized_view_names, and for "
                         f"'{TABLE}' and '{ORDERS}' get_columns, get_pk_constraint, "
                         "get_foreign_keys, get_indexes, get_table_comment), tests/clients/"
                         "capture_client_queries.py run_superset",
                         run_superset),
        }
        args.out.mkdir(parents=True, exist_ok=True)
        for name, (client, calls, run) in clients.items():
            queries, control = capture(log, database, lambda: run(host, port, user, database))
            failures = check_standalone(capture_dsn, queries)
            if failures:
                sys.exit(f"{name}: captured queries that do not run on their own:\n" + "\n".join(failures))
            source = (f"queries sent by {calls}; captured from PostgreSQL {server}'s own log (the "
                      f"client's session had log_statement=all) by tests/clients/capture_client_queries.py. "
                      "Parameterised queries are recorded with the values of the log's "
                      "'DETAIL: parameters:' line substituted for $n as literals, so each query runs on "
                      "its own; exact repeats are kept once, in first-seen order")
            for table, table_oid in table_oids.items():
                named_by_oid = [q for q in queries if re.search(rf"\b{table_oid}\b", q)]
                if named_by_oid:
                    which = ("one of them names" if len(named_by_oid) == 1
                             else f"{len(named_by_oid)} of them name")
                    source += (f"; {which} table {table} by its OID in the capture database "
                               f"({table_oid}), as the client sent it: run elsewhere, that OID "
                               "matches no row")
            if control:
                source += ("; transaction control left out (it does not run on its own): "
                           + ", ".join(control))
            path = args.out / f"{name}.json"
            path.write_text(json.dumps({"client": client, "source": source, "queries": queries},
                                       indent=1, ensure_ascii=False) + "\n")
            print(f"{path}: {len(queries)} queries, each runs on its own")
    finally:
        with psycopg.connect(args.dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))


if __name__ == "__main__":
    main()
