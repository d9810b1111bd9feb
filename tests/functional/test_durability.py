"""Durability: kill -9 a real server at chosen points, restart it, find the state (issue 5).

Each kill-and-restart test runs on both meta stores: SQLite in the data dir and
PostgreSQL (a fresh database of the local PostgreSQL per test, skipped when it
is unreachable, failing under CI=true).
"""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from conftest import ServerProcess, require_postgres, start_server, stop_server
from pgbarrier.app import App, Config
from pgbarrier.barrier.clock import ManualClock, SystemClock
from pgbarrier.meta.sqlite import SqliteMetaStore

HOUR_MS = 3_600_000


@pytest.fixture(params=["sqlite", "postgres"])
def meta_args(request: pytest.FixtureRequest) -> Iterator[tuple[str, ...]]:
    if request.param == "sqlite":
        yield ()
        return
    dsn = require_postgres()
    name = f"pgb_meta_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield ("--meta-store", f"postgresql://postgres@127.0.0.1:5432/{name}")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _start(tmp_path, meta_args: tuple[str, ...]) -> ServerProcess:
    return start_server("--data-dir", str(tmp_path / "data"), "--barrier-interval-ms", "200",
                        *meta_args)


def _kill9(server: ServerProcess) -> None:
    server.proc.kill()  # SIGKILL: nothing gets to flush
    server.proc.wait(timeout=30)


def _connect(server: ServerProcess, database: str = "dev") -> psycopg.Connection:
    return psycopg.connect(server.dsn(database), autocommit=True)


def test_pause_survives_kill9(tmp_path, meta_args) -> None:
    srv = _start(tmp_path, meta_args)
    with _connect(srv) as c:
        c.execute("CREATE DATABASE other")
        c.execute("ALTER DATABASE dev PAUSE")
    _kill9(srv)

    srv = _start(tmp_path, meta_args)
    try:
        with _connect(srv) as c:
            rows = c.execute("SELECT name, paused, paused_by FROM rw_catalog.rw_databases "
                             "ORDER BY name").fetchall()
            assert rows == [("dev", True, "root"), ("other", False, None)]
            c.execute("ALTER DATABASE dev RESUME")
            c.execute("DROP DATABASE other")
        _kill9(srv)
        srv = _start(tmp_path, meta_args)
        with _connect(srv) as c:
            assert c.execute("SELECT name, paused FROM rw_catalog.rw_databases").fetchall() == [
                ("dev", False)]
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)


def _app(data_dir: str, clock: ManualClock) -> App:
    """A started in-process App (serving, so that ``stop`` can shut its server down)."""
    app = App(Config(port=0, data_dir=data_dir, barrier_interval_ms=HOUR_MS), clock=clock)
    server = app.start()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return app


def test_epochs_increase_across_restart_with_clock_set_back(tmp_path) -> None:
    data = str(tmp_path / "data")
    now = SystemClock().now_ms()
    app = _app(data, ManualClock(now))
    try:
        first = app.barrier.flush("dev")
        high = app.barrier.snapshot("dev").prev_epoch
    finally:
        app.stop()

    app = _app(data, ManualClock(now - 86_400_000))  # the clock went back a day
    try:
        assert app.barrier.snapshot("dev").committed_epoch == first
        # a flush commits the prev epoch of its barrier: the highest handed out before
        assert app.barrier.flush("dev") >= high >= first
        assert app.barrier.snapshot("dev").prev_epoch > high
        assert app.barrier.flush("dev") > high
    finally:
        app.stop()
