"""Shared fixtures: a real pgbarrier server process on port 0, and the clients' DSNs.

The server is started as ``python -m pgbarrier serve --port 0`` and the test waits
for its "ready" log line (which names the port) — a readiness wait, never a sleep.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pgbarrier.app import App, Config

READY = re.compile(r"ready: listening on ([\d.]+):(\d+)")
START_TIMEOUT_S = 60


@dataclass
class ServerProcess:
    proc: subprocess.Popen[str]
    host: str
    port: int
    log: list[str] = field(default_factory=list)
    logged: threading.Condition = field(default_factory=threading.Condition)

    def wait_for_log(self, text: str, timeout: float = 30) -> bool:
        """Block until a log line containing ``text`` has been written (woken per line)."""
        with self.logged:
            return self.logged.wait_for(lambda: any(text in line for line in self.log), timeout)

    def dsn(self, database: str = "dev", user: str = "root") -> str:
        return f"host={self.host} port={self.port} user={user} dbname={database}"

    def psql(self, *args: str, database: str = "dev", input: str | None = None,
             check: bool = False) -> subprocess.CompletedProcess[str]:
        cmd = ["psql", "-X", "-h", self.host, "-p", str(self.port), "-U", "root", "-d", database,
               *args]
        env = {**os.environ, "PGCONNECT_TIMEOUT": "10", "PGAPPNAME": "pytest"}
        return subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=60,
                              check=check, env=env)


def start_server(*extra: str) -> ServerProcess:
    cmd = [sys.executable, "-m", "pgbarrier", "serve", "--port", "0", "--data-dir", ":memory:",
           *extra]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    lines: list[str] = []
    found: list[tuple[str, int]] = []
    ready = threading.Event()
    logged = threading.Condition()

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            with logged:
                lines.append(line)
                logged.notify_all()
            m = READY.search(line)
            if m and not found:
                found.append((m.group(1), int(m.group(2))))
                ready.set()
        ready.set()  # process ended

    threading.Thread(target=pump, daemon=True).start()
    if not ready.wait(START_TIMEOUT_S) or not found:
        proc.kill()
        raise RuntimeError("pgbarrier did not become ready:\n" + "".join(lines))
    host, port = found[0]
    return ServerProcess(proc, host, port, lines, logged)


def stop_server(server: ServerProcess) -> int:
    server.proc.terminate()
    try:
        return server.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        raise


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def backend_server(request) -> Iterator[ServerProcess]:
    """A server process on each backend in turn: embedded DuckDB, then ``--upstream`` the
    PostgreSQL on 127.0.0.1:5432 (skipped, or failing under CI=true, when unreachable);
    ``.kind`` says which."""
    extra: tuple[str, ...] = ()
    if request.param == "postgres":
        reset_upstream_database(require_postgres(), "dev")
        extra = ("--upstream", UPSTREAM)
    srv = start_server(*extra)
    srv.kind = request.param  # type: ignore[attr-defined]
    yield srv
    assert stop_server(srv) == 0, "server did not exit cleanly:\n" + "".join(srv.log)


@pytest.fixture
def dev_backend():
    """An embedded DuckDB backend in memory with database ``dev`` (in process, no server)."""
    pytest.importorskip("duckdb")
    from pgbarrier.backends.duckdb import DuckDBBackend

    backend = DuckDBBackend(":memory:")
    backend.ensure_database("dev")
    yield backend
    backend.close()


@pytest.fixture
def plane():
    """A control plane on :func:`dev_backend`'s kind of DuckDB (in memory, database ``dev``)
    with a barrier manager whose clock never moves: what a session in process needs."""
    pytest.importorskip("duckdb")
    from pgbarrier.backends.duckdb import DuckDBBackend
    from pgbarrier.barrier.clock import ManualClock
    from pgbarrier.barrier.manager import BarrierManager
    from pgbarrier.control import ControlPlane
    from pgbarrier.jobs.registry import JobRegistry

    backend = DuckDBBackend(":memory:")
    backend.ensure_database("dev")
    barrier = BarrierManager(ManualClock(1_750_000_000_000), barrier_interval_ms=3_600_000)
    barrier.add_database("dev")
    barrier.start()
    yield ControlPlane(backend, barrier, JobRegistry(), ManualClock(1_750_000_000_000))
    barrier.stop()
    backend.close()


@pytest.fixture
def dev_session(dev_backend):
    """A session of ``root`` on :func:`dev_backend`, the columnar path open (until pyarrow
    is loaded, statements take the row path: ``duckdb_batches.load``)."""
    pytest.importorskip("pyarrow")
    from pgbarrier.backends import duckdb_batches

    duckdb_batches.load()
    s = dev_backend.connect("dev", "root")
    yield s
    s.close()


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    srv = start_server("--barrier-interval-ms", "1000")
    yield srv
    code = stop_server(srv)
    assert code == 0, "server did not exit cleanly:\n" + "".join(srv.log)


def postgres_dsn() -> str:
    return os.environ.get("PGBARRIER_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")


def require_postgres() -> str:
    """The upstream PostgreSQL DSN, or skip (fail under CI=true) when it is unreachable."""
    import psycopg

    dsn = postgres_dsn()
    try:
        with psycopg.connect(dsn, connect_timeout=5):
            pass
    except psycopg.OperationalError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL at {dsn} is unreachable under CI=true: {exc}")
        pytest.skip(f"PostgreSQL at {dsn} is unreachable: {exc}")
    return dsn


UPSTREAM = "postgresql://postgres@127.0.0.1:5432/"


@contextmanager
def fresh_postgres_database(prefix: str) -> Iterator[str]:
    """A new database ``<prefix>_<random>`` on the reference PostgreSQL (its DSN), dropped
    afterwards: the same statements run there and on pgbarrier to compare the answers."""
    import uuid

    import psycopg
    from psycopg import sql

    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    admin = require_postgres()
    with psycopg.connect(admin, autocommit=True, connect_timeout=10) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield admin.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(admin, autocommit=True, connect_timeout=10) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
                         .format(sql.Identifier(name)))


def reset_upstream_database(dsn: str, database: str) -> None:
    """Empty an upstream database a fresh pgbarrier server will use: every schema but the
    system ones dropped, ``public`` made again as PostgreSQL 15 makes it. A server with a
    fresh meta store knows nothing of what an earlier run left there, and such leftovers
    (a materialized view a failed run did not drop) must not fail the next run."""
    import psycopg

    base = dsn.rsplit("/", 1)[0]
    with psycopg.connect(f"{base}/postgres", autocommit=True) as adm:
        if adm.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone() is None:
            return
    with psycopg.connect(f"{base}/{database}", autocommit=True) as c:
        schemas = [r[0] for r in c.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' "
            "AND nspname <> 'information_schema'")]
        for schema in schemas:
            c.execute(f'DROP SCHEMA "{schema}" CASCADE')
        c.execute("CREATE SCHEMA public AUTHORIZATION pg_database_owner")
        c.execute("GRANT USAGE ON SCHEMA public TO PUBLIC")


def _drop_leftover(database: str) -> None:
    """A fixed-name upstream database an interrupted run left behind goes first (the
    teardown below never ran for it), so a test starts from nothing."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(UPSTREAM + "postgres", autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(database)))


@contextmanager
def inprocess_app(backend: str, database: str, clock=None) -> Iterator[App]:
    """A serving in-process App on port 0 over ``backend`` ("duckdb" or "postgres").

    Barriers come only from commands (the periodic interval is an hour), so tests
    drive time themselves. A PostgreSQL backend gets its own upstream database,
    dropped afterwards.
    """
    upstream = None
    if backend == "postgres":
        from pgbarrier.backends.postgres import PostgresBackend

        require_postgres()
        _drop_leftover(database)
        upstream = PostgresBackend(UPSTREAM)
    app = App(Config(port=0, data_dir=":memory:", barrier_interval_ms=3_600_000,
                     default_database=database), clock=clock, backend=upstream)
    server = app.start()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield app
    finally:
        if upstream is not None:
            app.backend.drop_database(database)
        app.stop()


@dataclass
class Background:
    """A statement running on ``conn`` in a thread; ``outcome`` is ["done"] or [its exception]."""

    done: threading.Event
    outcome: list[object]
    thread: threading.Thread

    def cancel_until_done(self, conn, rounds: int = 600) -> None:
        """Send CancelRequests until the statement ends. A cancel that lands before the
        statement starts is lost, so it is repeated; each round waits on the end event."""
        for _ in range(rounds):
            conn.cancel_safe()
            if self.done.wait(0.1):
                break
        self.thread.join(timeout=60)


def run_in_background(conn, sql: str) -> Background:
    done = threading.Event()
    outcome: list[object] = []

    def run() -> None:
        try:
            conn.execute(sql)
            outcome.append("done")
        except Exception as exc:  # noqa: BLE001 - the caller checks it
            outcome.append(exc)
        done.set()

    thread = threading.Thread(target=run)
    thread.start()
    return Background(done, outcome, thread)


# --------------------------------------------------------------------------- external client tools

CLIENTS = Path(__file__).resolve().parent / "clients"
PGJDBC_JAR = Path(os.environ.get("PGBARRIER_PGJDBC_JAR", "/usr/share/java/postgresql.jar"))
CLIENT_TIMEOUT_S = 120


def missing_client_tool(reason: str) -> None:
    """Skip, or fail under CI=true, when a client tool is not installed."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true; `make clients` installs the client tools)")
    pytest.skip(f"{reason}; `make clients` installs the client tools")


def upstream_root(dsn: str) -> str:
    """postgresql://user@host:port/db -> postgresql://user@host:port/ (the server's --upstream)."""
    return dsn.rsplit("/", 1)[0] + "/"


def compile_java(tmp_path_factory, source: str) -> str:
    """Compile ``tests/clients/<source>`` against pgjdbc; the classpath to run it with."""
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            missing_client_tool(f"{tool} not found (a JDK is needed for the pgjdbc tests)")
    if not PGJDBC_JAR.is_file():
        missing_client_tool(f"pgjdbc jar {PGJDBC_JAR} not found "
                            "(Debian package libpostgresql-jdbc-java)")
    out = tmp_path_factory.mktemp(Path(source).stem)
    subprocess.run(["javac", "-cp", str(PGJDBC_JAR), "-d", str(out), str(CLIENTS / source)],
                   check=True, capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S)
    return f"{out}{os.pathsep}{PGJDBC_JAR}"
