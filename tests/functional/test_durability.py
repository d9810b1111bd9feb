"""Durability: kill -9 a real server at chosen points, restart it, find the state (issue 5).

A meta store or data dir that cannot be opened is a one-line error and exit 2.

Each kill-and-restart test runs on both meta stores: SQLite in the data dir and
PostgreSQL (a fresh database of the local PostgreSQL per test, skipped when it
is unreachable, failing under CI=true).
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
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
            assert rows == [("dev", True, "root"), ("other", False, None),
                            ("postgres", False, None)]
            c.execute("ALTER DATABASE dev RESUME")
            c.execute("DROP DATABASE other")
        _kill9(srv)
        srv = _start(tmp_path, meta_args)
        with _connect(srv) as c:
            assert c.execute("SELECT name, paused FROM rw_catalog.rw_databases "
                             "ORDER BY name").fetchall() == [("dev", False), ("postgres", False)]
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)


def test_batch_refresh_job_survives_kill9_before_first_refresh(tmp_path, meta_args) -> None:
    srv = _start(tmp_path, meta_args)
    with _connect(srv) as c:
        c.execute("CREATE TABLE t (id INT)")
        c.execute("INSERT INTO t VALUES (1), (2)")
        c.execute("CREATE MATERIALIZED VIEW mv WITH (refresh.interval.sec = 3600) "
                  "AS SELECT id FROM t")
        c.execute("CREATE MATERIALIZED VIEW sv AS SELECT id FROM t")
        snapshot = c.execute("SELECT snapshot_epoch FROM rw_catalog.rw_batch_refresh_jobs "
                             "WHERE name = 'mv'").fetchone()
    _kill9(srv)

    srv = _start(tmp_path, meta_args)
    try:
        with _connect(srv) as c:
            row = c.execute("SELECT status, snapshot_epoch, last_committed_epoch, "
                            "refresh_interval_sec, next_refresh_at IS NOT NULL "
                            "FROM rw_catalog.rw_batch_refresh_jobs WHERE name = 'mv'").fetchone()
            assert row == ("idle", snapshot[0], snapshot[0], 3600, True)
            assert c.execute("SELECT count(*) FROM mv").fetchone() == (2,)
            assert c.execute("SHOW MATERIALIZED VIEWS").fetchall() == [("mv",), ("sv",)]
            c.execute("INSERT INTO t VALUES (3)")
            c.execute("REFRESH MATERIALIZED VIEW mv")
            assert c.execute("SELECT count(*) FROM mv").fetchone() == (3,)
            runs = c.execute("SELECT run_id, trigger, status FROM rw_catalog.rw_refresh_history "
                             "WHERE job = 'mv' ORDER BY run_id").fetchall()
            assert [(t, s) for _, t, s in runs] == [("create", "succeeded"),
                                                    ("manual", "succeeded")]
            assert runs[0][0] < runs[1][0]
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)


def _app(data_dir: str, clock: ManualClock, checkpoint_frequency: int = 1) -> App:
    """A started in-process App (serving, so that ``stop`` can shut its server down)."""
    app = App(Config(port=0, data_dir=data_dir, barrier_interval_ms=HOUR_MS,
                     checkpoint_frequency=checkpoint_frequency), clock=clock)
    server = app.start()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return app


def _crash(app: App) -> None:
    """A crash as the meta store sees it: the threads that write it stop (the listener
    and the sessions stay, as a killed process's would not matter), nothing is recorded
    on the way out, and the store is closed for the next App to open."""
    app.scheduler.stop(0.0)
    app.history_pruner.stop()
    app.barrier.stop()
    app.meta.close()


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


def test_running_refresh_and_missing_object_after_restart(tmp_path) -> None:
    data = str(tmp_path / "data")
    clock = ManualClock(SystemClock().now_ms())
    app = _app(data, clock)
    server = app.server
    assert server is not None
    with psycopg.connect(host="127.0.0.1", port=server.server_address[1], user="root",
                         dbname="dev", autocommit=True) as c:
        c.execute("CREATE TABLE t (id INT)")
        for v in ("a", "b"):
            c.execute(f"CREATE MATERIALIZED VIEW {v} WITH (refresh.interval.sec = 60) "
                      "AS SELECT id FROM t")
    app.stop()

    # as if the process died mid-refresh of a, and b's backend table vanished
    store = SqliteMetaStore(data)
    from dataclasses import replace

    from pgbarrier.meta.store import RunRecord

    a = next(j for j in store.load_jobs() if j.name == "a")
    target = a.snapshot_epoch + (1 << 20)
    store.put_job(replace(a, status="refreshing", target_epoch=target, run_id=99))
    store.put_run(RunRecord("dev", "a", 99, "schedule", dt.datetime.now(dt.timezone.utc), target))
    store.close()
    from pgbarrier.backends.duckdb import DuckDBBackend

    backend = DuckDBBackend(data)
    backend.drop_batch_view("dev", "b")
    backend.close()

    app = _app(data, clock)
    try:
        jobs = {j.name: j for j in app.jobs.jobs()}
        assert jobs["a"].status.name == "failed" and jobs["a"].status.error == "process restarted"
        assert app.scheduler.next_due_ms("dev", "a") is not None
        assert jobs["b"].status.name == "failed" and "missing" in jobs["b"].status.error
        run = next(r for r in app.history.runs() if r.run_id == 99)
        assert (run.status, run.error) == ("failed", "process restarted")
        assert app.history.next_run_id() > 99
    finally:
        app.stop()


def _serve_fails(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pgbarrier", "serve", "--port", "0", *args],
                          capture_output=True, text=True, timeout=60)


def test_unreachable_meta_store_is_one_line_and_exit_2(tmp_path) -> None:
    out = _serve_fails("--data-dir", str(tmp_path / "data"),
                       "--meta-store", "postgresql://root:s3cret@127.0.0.1:1/x")
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr and "s3cret" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith(
        "pgbarrier: cannot open meta store postgresql://root:***@127.0.0.1:1/x: "), lines[0]


def test_unusable_data_dir_is_one_line_and_exit_2(tmp_path) -> None:
    (tmp_path / "file").write_text("not a directory")
    data = tmp_path / "file" / "data"
    out = _serve_fails("--data-dir", str(data))
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines() == [
        f"pgbarrier: cannot open meta store {data / 'meta.sqlite'}: "
        f"[Errno 20] Not a directory: '{data}'"]


@pytest.mark.parametrize("url, shown", [
    ("postgresql://u:pw@h:5432/db", "postgresql://u:***@h:5432/db"),
    ("postgresql://u@h/db?password=pw&sslmode=require",
     "postgresql://u@h/db?password=***&sslmode=require"),
    ("host=h password=pw dbname=db", "host=h password=*** dbname=db"),
    ("host=h password='p w' dbname=db", "host=h password=*** dbname=db"),
])
def test_meta_store_url_is_shown_without_its_password(url: str, shown: str) -> None:
    from pgbarrier.meta import redact

    assert redact(url) == shown


def test_epochs_increase_after_a_crash_with_the_clock_set_back(tmp_path) -> None:
    """A crash (no clean stop) between lease writes: the recorded ceiling is above
    every epoch handed out, so the next process starts above them all."""
    data = str(tmp_path / "data")
    now = SystemClock().now_ms()
    clock = ManualClock(now)
    app = _app(data, clock)
    for _ in range(20):  # many checkpoints, most of them inside one lease
        clock.advance(500)
        app.barrier.flush("dev")
    app.barrier.pause("dev", "root")
    clock.advance(500)
    app.barrier.flush("dev")
    high = app.barrier.snapshot("dev").prev_epoch
    _crash(app)  # nothing is written on the way out

    app = _app(data, ManualClock(now - 86_400_000))
    try:
        snap = app.barrier.snapshot("dev")
        assert snap.paused and snap.paused_by == "root"
        assert snap.prev_epoch >= high
        assert app.barrier.flush("dev") >= high
        assert app.barrier.snapshot("dev").prev_epoch > high
    finally:
        app.stop()


def test_checkpoints_write_pause_changes_at_once_and_epochs_as_one_lease(tmp_path) -> None:
    from pgbarrier.barrier.epoch import epoch_from_unix_ms
    from pgbarrier.barrier.info import DatabaseSnapshot
    from pgbarrier.meta.checkpoints import LEASE_MS, CheckpointRecorder

    store = SqliteMetaStore(str(tmp_path / "data"))
    rec = CheckpointRecorder(store)
    e0 = epoch_from_unix_ms(SystemClock().now_ms())
    ms = 1 << 16

    def snap(prev: int, paused: bool = False, generation: int = 1,
             name: str = "dev") -> DatabaseSnapshot:
        at = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc) if paused else None
        return DatabaseSnapshot(name, paused, at, "root" if paused else None, 1000, 1,
                                prev, prev - ms, None, generation)

    def stored(name: str = "dev") -> tuple[bool, int]:
        (r,) = [r for r in store.load_databases() if r.name == name]
        return r.paused, r.prev_epoch

    assert rec.record(snap(e0))  # first checkpoint: its record, and the ceiling
    assert stored() == (False, e0) and store.load_epoch_ceiling() == e0 + LEASE_MS * ms
    assert rec.record(snap(e0 + ms, name="other"))  # another database: its record only
    assert store.load_epoch_ceiling() == e0 + LEASE_MS * ms
    assert not rec.record(snap(e0 + (LEASE_MS - 1) * ms))  # inside the lease: nothing
    assert not rec.record(snap(e0 + LEASE_MS * ms, name="other"))  # at it: still nothing
    assert rec.record(snap(e0 + (LEASE_MS - 1) * ms, paused=True))  # pause: at once
    assert stored() == (True, e0 + (LEASE_MS - 1) * ms)
    assert store.load_epoch_ceiling() == e0 + LEASE_MS * ms  # a pause needs no new lease
    assert not rec.record(snap(e0 + LEASE_MS * ms, paused=True))
    # any database passing the ceiling renews it for all
    assert rec.record(snap(e0 + (LEASE_MS + 1) * ms, name="other"))
    assert store.load_epoch_ceiling() == e0 + (2 * LEASE_MS + 1) * ms
    assert rec.record(snap(e0 + 2 * ms, generation=2))  # dropped and created again
    assert stored() == (False, e0 + 2 * ms)
    rec.record_final([snap(e0 + 3 * ms, generation=2), snap(e0 + 5 * ms, name="other")])
    assert stored() == (False, e0 + 3 * ms)  # a clean stop writes the exact epochs
    assert store.load_epoch_ceiling() == e0 + 5 * ms
    store.close()


def test_uncommitted_epochs_are_not_reissued_after_a_crash(tmp_path) -> None:
    """--checkpoint-frequency 3: barriers between checkpoints are never written on their
    own, yet the epochs they handed out are below what a crashed process resumes from."""
    from pgbarrier.barrier.command import Custom

    data = str(tmp_path / "data")
    now = SystemClock().now_ms()
    clock = ManualClock(now)
    app = _app(data, clock, checkpoint_frequency=3)
    committed = app.barrier.flush("dev")
    for _ in range(2):  # two plain barriers: not checkpoints
        clock.advance(100)
        info = app.barrier.schedule("dev", Custom("tick", lambda i: None, checkpoint=False)) \
            .wait_started(30)
        assert not info.is_checkpoint
    high = app.barrier.snapshot("dev").prev_epoch
    assert app.barrier.snapshot("dev").committed_epoch == committed
    _crash(app)  # nothing written on the way out

    app = _app(data, ManualClock(now - 86_400_000), checkpoint_frequency=3)
    try:
        assert app.barrier.snapshot("dev").prev_epoch >= high
        assert app.barrier.flush("dev") >= high
    finally:
        app.stop()
