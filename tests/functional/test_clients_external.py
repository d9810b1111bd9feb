"""External clients against a real pgbarrier: pgjdbc, node-postgres and pgbench (SPEC §5).

Every client runs against a server process on port 0 on each data backend: the
embedded DuckDB and an upstream PostgreSQL (a fresh upstream database per module,
dropped afterwards). The client programs live in ``tests/clients/``:

* ``PgbarrierJdbc.java`` is compiled with javac into a temporary directory and run
  with ``java -cp`` against Debian's pgjdbc jar (``/usr/share/java/postgresql.jar``);
* ``pg_client.js`` runs with node and the ``pg`` package that ``npm ci`` put in
  ``tests/clients/node_modules``;
* ``select.sql``, ``select_table.sql`` and ``write.sql`` are pgbench custom scripts.

``make clients`` (a prerequisite of ``make test``) installs pgjdbc and node-postgres.
A client tool that is missing skips its tests with the reason; under ``CI=true`` it
fails them instead. Scenarios that fail because of a known server bug are marked
strict xfail with the exact cause (``KNOWN_FAILURES``), so they turn red once fixed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from conftest import (
    CLIENT_TIMEOUT_S,
    CLIENTS,
    ServerProcess,
    compile_java,
    missing_client_tool,
    require_postgres,
    start_server,
    stop_server,
    upstream_root,
)


#: none today: pgjdbc's executeBatch on the upstream backend (Bind/Describe/Execute x3, one
#: Sync, a duplicate key in the last row) rolls the whole batch back as PostgreSQL does, now
#: that the upstream gets the batch as the client sent it (session/relay.py)
KNOWN_FAILURES: dict[tuple[str, str, str], str] = {}


def _known_failure(request: pytest.FixtureRequest, client: str, scenario: str, backend: str) -> None:
    reason = KNOWN_FAILURES.get((client, scenario, backend))
    if reason is not None:
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))


# --------------------------------------------------------------------------- server matrix


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

    def sql(self, text: str) -> str:
        out = self.server.psql("-v", "ON_ERROR_STOP=1", "-At", "-c", text, database=self.database)
        assert out.returncode == 0, out.stderr + self.log_tail()
        return out.stdout

    def resume(self) -> None:
        """Leave the database resumed whatever a scenario did (a later test may create views)."""
        self.server.psql("-c", f"ALTER DATABASE {self.database} RESUME", database=self.database)

    def log_tail(self, n: int = 40) -> str:
        return "\n--- server log (tail) ---\n" + "".join(self.server.log[-n:])


def _drop_upstream(dsn: str, database: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True, connect_timeout=10) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def target(request) -> Iterator[Target]:
    database = f"pgb_cli_{uuid.uuid4().hex[:10]}"
    extra = ["--database", database, "--barrier-interval-ms", "100"]
    dsn = None
    if request.param == "postgres":
        dsn = require_postgres()
        extra += ["--upstream", upstream_root(dsn)]
    try:
        srv = start_server(*extra)
    except BaseException:
        if dsn is not None:
            _drop_upstream(dsn, database)
        raise
    try:
        yield Target(request.param, srv, database)
    finally:
        code = stop_server(srv)
        if dsn is not None:
            _drop_upstream(dsn, database)
    assert code == 0, "server did not exit cleanly:\n" + "".join(srv.log)


def _suffix() -> str:
    return uuid.uuid4().hex[:8]


def _lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.strip()]


def _check(proc: subprocess.CompletedProcess[str], expected: list[str], target: Target) -> None:
    got = _lines(proc.stdout)
    detail = (f"exit {proc.returncode}\n--- stdout ---\n{proc.stdout}\n--- stderr ---\n"
              f"{proc.stderr[-4000:]}{target.log_tail()}")
    assert got == expected, detail
    assert proc.returncode == 0, detail


# --------------------------------------------------------------------------- pgjdbc


@pytest.fixture(scope="session")
def jdbc_classpath(tmp_path_factory) -> str:
    return compile_java(tmp_path_factory, "PgbarrierJdbc.java")


def _jdbc(classpath: str, target: Target, scenario: str) -> subprocess.CompletedProcess[str]:
    # pgjdbc's defaults (what BI tools use): start-up `SET extra_float_digits = 3`,
    # prepareThreshold=5, binary transfer for the common types; only a socket timeout added
    url = f"jdbc:postgresql://{target.host}:{target.port}/{target.database}?user=root&socketTimeout=60"
    return subprocess.run(["java", "-cp", classpath, "PgbarrierJdbc", url, scenario, target.database,
                           _suffix()], capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S)


JDBC_EXPECTED: dict[str, list[str]] = {
    "connect": ["product: PostgreSQL", "select: 1"],
    "statement": ["create: 0", "insert: 3", "update: 2", "delete: 1", "row: 1 a", "row: 2 z",
                  "execute: true 2"],
    "prepared": ["exec 1: 1 n1", "exec 2: 2 n2", "exec 3: 3 n3", "exec 4: 1 n1", "exec 5: 2 n2",
                 "exec 6: 3 n3", "updated: 12"],
    "types": [
        f"exec {run}: " + ("1 9000000000 7 2.5 12.34 true 2024-02-29 2024-02-29 13:14:15.5 x"
                           if run % 2 else
                           "2 -1 -7 -0.25 -0.01 false 1999-12-31 1999-12-31 23:59:59.0 null")
        for run in range(1, 7)],
    "fetchsize": ["row: 1 n1", "row: 2 n2", "row: 3 n3", "row: 4 n4", "row: 5 n5", "rows: 5",
                  "after commit: 5"],
    "txmodes": ["isolation: repeatable read", "read only: on", "insert: 25006",
                "isolation: serializable", "getTransactionIsolation: true"],
    "batch": ["batch: [1, 1, 1]", "failing batch: 23505", "ids: 1,2,3"],
    "errors": ["paused create: 55000", "missing table: 42P01", "resumed create: none", "view: 2"],
    "control": ["pause: 0", "paused: true", "resume: 0", "paused: false"],
}


@pytest.mark.parametrize("scenario", list(JDBC_EXPECTED))
def test_pgjdbc(request, target, jdbc_classpath, scenario):
    """pgjdbc with its default settings: connect; Statement counts; a PreparedStatement past
    prepareThreshold=5 (named statement, binary results); common types in binary; setFetchSize
    in a transaction (portal suspended at the row limit); setTransactionIsolation and
    setReadOnly (a write refused, 25006); executeBatch as one implicit
    transaction; getSQLState(); PAUSE/RESUME prepared."""
    _known_failure(request, "jdbc", scenario, target.backend)
    try:
        proc = _jdbc(jdbc_classpath, target, scenario)
    finally:
        if scenario in ("errors", "control"):
            target.resume()
    _check(proc, JDBC_EXPECTED[scenario] + [f"done: {scenario}"], target)


# --------------------------------------------------------------------------- node-postgres


@pytest.fixture(scope="session")
def node_client() -> list[str]:
    if shutil.which("node") is None:
        missing_client_tool("node not found (needed for the node-postgres tests)")
    if not (CLIENTS / "node_modules" / "pg" / "package.json").is_file():
        missing_client_tool(f"node-postgres not installed in {CLIENTS / 'node_modules'} (npm ci)")
    return ["node", str(CLIENTS / "pg_client.js")]


NODE_EXPECTED: dict[str, list[str]] = {
    "params": ['by id: [{"id":2,"name":"n2"}]', 'by name or id: ["n1","n3"]',
               'cast: {"n":42,"s":"x"}'],
    "named": ['first: [{"id":2,"name":"n2"},{"id":3,"name":"n3"}]',
              'second: [{"id":3,"name":"n3"}]'],
    "rowcount": ['create: ["CREATE",null]', 'insert: ["INSERT",3]', 'insert param: ["INSERT",1]',
                 'update: ["UPDATE",3]', 'delete: ["DELETE",1]', 'select: ["SELECT",3]'],
    "errors": ['paused create: "55000"', 'missing table: "42P01"', 'missing table param: "42P01"',
               'resumed create: "none"', "view: 2"],
}


@pytest.mark.parametrize("scenario", list(NODE_EXPECTED))
def test_node_postgres(request, target, node_client, scenario):
    """node-postgres: $1 parameters, a named query run twice, rowCount, err.code."""
    _known_failure(request, "node", scenario, target.backend)
    try:
        proc = subprocess.run([*node_client, target.host, str(target.port), target.database, scenario,
                               _suffix()], capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S,
                              cwd=CLIENTS)
    finally:
        if scenario == "errors":
            target.resume()
    _check(proc, NODE_EXPECTED[scenario] + [f'done: "{scenario}"'], target)


# --------------------------------------------------------------------------- pgbench

@pytest.fixture(scope="module")
def pgbench_tables(target) -> Target:
    if shutil.which("pgbench") is None:
        missing_client_tool("pgbench not found (Debian package postgresql-client)")
    rows = ", ".join(f"({i}, 'n{i}')" for i in range(1, 11))
    target.sql("CREATE TABLE pgbench_small (id INT, name TEXT)")
    target.sql(f"INSERT INTO pgbench_small VALUES {rows}")
    target.sql("CREATE TABLE pgbench_log (client INT, v INT)")
    return target


@pytest.mark.parametrize("mode", ["simple", "extended", "prepared"])
@pytest.mark.parametrize("script", ["select.sql", "select_table.sql", "write.sql"])
def test_pgbench(request, pgbench_tables, script, mode):
    """pgbench -n -M <mode> -t 20 -c 2 with a custom script: every transaction processed."""
    target = pgbench_tables
    _known_failure(request, "pgbench", f"{script}:{mode}", target.backend)
    before = int(target.sql("SELECT count(*) FROM pgbench_log"))
    env = {**os.environ, "PGCONNECT_TIMEOUT": "10"}
    proc = subprocess.run(["pgbench", "-n", "-M", mode, "-t", "20", "-c", "2", "-f", str(CLIENTS / script),
                           "-h", target.host, "-p", str(target.port), "-U", "root", target.database],
                          capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S, env=env)
    detail = (f"exit {proc.returncode}\n--- stdout ---\n{proc.stdout}\n--- stderr ---\n"
              f"{proc.stderr[-4000:]}{target.log_tail()}")
    assert proc.returncode == 0, detail
    assert "number of transactions actually processed: 40/40" in proc.stdout, detail
    after = int(target.sql("SELECT count(*) FROM pgbench_log"))
    assert after - before == (40 if script == "write.sql" else 0), detail


# --------------------------------------------------------------------------- psql


def test_psql_c_f_on_error_stop_and_verbose_errors(target, tmp_path):
    db = target.database
    t = f"psql_{_suffix()}"
    out = target.server.psql("-X", "-At", "-c", f"CREATE TABLE {t} (id INT, v TEXT)",
                             "-c", f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b')",
                             "-c", f"SELECT v FROM {t} ORDER BY id", database=db)
    assert out.returncode == 0, out.stderr + target.log_tail()
    assert out.stdout.split("\n")[:3] == ["CREATE TABLE", "INSERT 0 2", "a"]

    script = tmp_path / "stop.sql"
    script.write_text(
        "\\set VERBOSITY verbose\n"
        f"ALTER DATABASE {db} PAUSE;\n"
        f"CREATE MATERIALIZED VIEW v_{t} BATCH REFRESH AS SELECT id FROM {t};\n"
        f"INSERT INTO {t} VALUES (3, 'never');\n")
    out = target.server.psql("-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", str(script), database=db)
    target.resume()
    assert out.returncode == 3, out.stdout + out.stderr
    assert "ERROR:  55000: cannot create batch refresh job while database barrier is paused" in out.stderr
    assert f'DETAIL:  database "{db}" was paused at ' in out.stderr
    assert f"HINT:  Resume the database with ALTER DATABASE {db} RESUME, then retry." in out.stderr
    assert target.sql(f"SELECT count(*) FROM {t}").strip() == "2", "psql stopped at the error"

    out = target.server.psql("-X", "-c", "\\set VERBOSITY verbose", "-c", "SELECT * FROM no_such_tbl",
                             database=db)
    assert out.returncode == 1
    assert "ERROR:  42P01: " in out.stderr

