"""Bounded, unambiguous refresh history (issue 12, item 6), through real servers.

* ``rw_refresh_history`` names each run's database: a view ``mv`` in two
  databases gives two rows told apart by ``database`` (and by their row counts).
* With ``--refresh-history-per-job 5 --refresh-history-max-age-sec 3600``, a
  prune pass (the one at start; its log line is the readiness signal) leaves in
  the meta store, read directly afterwards, exactly the newest 5 runs of each job
  among those started within the hour, and ``rw_refresh_history`` shows the same.
* A restart keeps the newest rows and new run ids continue above them.
* A refresh run is recorded while a prune pass is under way (held between two
  of its batches by the pruner's test hook), and the pass then finishes.

Both meta stores: SQLite in the data dir, and PostgreSQL (a fresh database of the
local PostgreSQL per test; skipped when unreachable, failing under CI=true).
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
from pgbarrier.meta import open_meta_store
from pgbarrier.meta.store import MetaStore, RunRecord

PRUNED = "refresh history pruned"


@pytest.fixture(params=["sqlite", "postgres"])
def meta_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """None for SQLite in the data dir, else the URL of a fresh PostgreSQL database."""
    if request.param == "sqlite":
        yield None
        return
    dsn = require_postgres()
    name = f"pgb_hist_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield f"postgresql://postgres@127.0.0.1:5432/{name}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _start(data: str, url: str | None, *extra: str) -> ServerProcess:
    meta = ("--meta-store", url) if url else ()
    return start_server("--data-dir", data, *meta, *extra)


def _stop(srv: ServerProcess) -> None:
    assert stop_server(srv) == 0, "".join(srv.log)


def _history(srv: ServerProcess) -> list[tuple]:
    with psycopg.connect(srv.dsn(), autocommit=True) as c:
        return c.execute("SELECT database, job, run_id, trigger, status, rows "
                         "FROM rw_catalog.rw_refresh_history ORDER BY database, job, run_id"
                         ).fetchall()


def _stored(data: str, url: str | None) -> list[RunRecord]:
    store = open_meta_store(data, url)
    try:
        return store.load_runs()  # every stored run of every job
    finally:
        store.close()


def _build(data: str, url: str | None) -> None:
    """``mv`` in dev (over 3 rows) and in other (over 5 rows), each with its create run."""
    srv = _start(data, url)
    try:
        with psycopg.connect(srv.dsn(), autocommit=True) as c:
            c.execute("CREATE DATABASE other")
        for db, n in (("dev", 3), ("other", 5)):
            with psycopg.connect(srv.dsn(db), autocommit=True) as c:
                c.execute(f"CREATE TABLE t AS SELECT range AS x FROM range({n})")
                c.execute("CREATE MATERIALIZED VIEW mv WITH (refresh.interval.sec = 3600) "
                          "AS SELECT x FROM t")
        assert [(d, j, t, s, r) for d, j, _, t, s, r in _history(srv)] == [
            ("dev", "mv", "create", "succeeded", 3), ("other", "mv", "create", "succeeded", 5)]
    finally:
        _stop(srv)


def _seed(store: MetaStore, now: dt.datetime, count: int = 20) -> None:
    """Runs 1001..1000+count per job; run 1000+count-k started (10k + 5) minutes ago."""
    for db in ("dev", "other"):
        for k in range(count):
            store.put_run(RunRecord(db, "mv", 1000 + count - k, "schedule",
                                    now - dt.timedelta(minutes=10 * k + 5), 7, "succeeded",
                                    now - dt.timedelta(minutes=10 * k + 5), k))


def test_pruned_by_count_and_age_restart_keeps_newest(tmp_path, meta_url) -> None:
    data = str(tmp_path / "data")
    _build(data, meta_url)
    now = dt.datetime.now(dt.timezone.utc)
    store = open_meta_store(data, meta_url)
    try:
        _seed(store, now)
    finally:
        store.close()
    # within the hour: k = 0..5 (5..55 minutes ago); the newest 5 of them: k = 0..4
    limits = ("--refresh-history-per-job", "5", "--refresh-history-max-age-sec", "3600")
    kept = [1016, 1017, 1018, 1019, 1020]

    srv = _start(data, meta_url, *limits)
    try:
        assert srv.wait_for_log(PRUNED), "".join(srv.log)
        rows = _history(srv)
        assert [(d, r) for d, _, r, *_ in rows] == [("dev", i) for i in kept] + [
            ("other", i) for i in kept]
        with psycopg.connect(srv.dsn("dev"), autocommit=True) as c:
            c.execute("REFRESH MATERIALIZED VIEW mv")
        with psycopg.connect(srv.dsn("other"), autocommit=True) as c:
            c.execute("REFRESH MATERIALIZED VIEW mv")
        manual = [r for r in _history(srv) if r[3] == "manual"]
        # each run names its own database, with that database's row count
        assert [(d, j, s, r) for d, j, _, _, s, r in manual] == [
            ("dev", "mv", "succeeded", 3), ("other", "mv", "succeeded", 5)]
        assert all(run_id > 1020 for _, _, run_id, *_ in manual)
    finally:
        _stop(srv)
    stored = _stored(data, meta_url)
    assert sorted((r.database, r.run_id) for r in stored) == sorted(
        [("dev", i) for i in kept] + [("other", i) for i in kept]
        + [(d, run_id) for d, _, run_id, *_ in manual])

    srv = _start(data, meta_url, *limits)  # the pass at start drops each job's oldest
    try:
        assert srv.wait_for_log(PRUNED), "".join(srv.log)
        newest = kept[1:]
        expect = [(d, i) for d in ("dev", "other")
                  for i in newest + [m[2] for m in manual if m[0] == d]]
        assert [(d, r) for d, _, r, *_ in _history(srv)] == expect
    finally:
        _stop(srv)
    stored = _stored(data, meta_url)
    assert sorted((r.database, r.run_id) for r in stored) == sorted(expect)
    hour_ago = dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1)
    assert all(r.started_at >= hour_ago for r in stored)


def test_unlimited_keeps_everything(tmp_path) -> None:
    data = str(tmp_path / "data")
    _build(data, None)
    store = open_meta_store(data, None)
    try:
        _seed(store, dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=30))
    finally:
        store.close()
    srv = _start(data, None, "--refresh-history-per-job", "0",
                 "--refresh-history-max-age-sec", "0")
    try:
        assert len(_history(srv)) == 2 * 21  # 20 seeded and the create run, per job
    finally:
        _stop(srv)
    assert PRUNED not in "".join(srv.log)
    assert len(_stored(data, None)) == 2 * 21


def test_refresh_recorded_while_pruning(tmp_path, meta_url) -> None:
    data = str(tmp_path / "data")
    _build(data, meta_url)
    store = open_meta_store(data, meta_url)
    try:
        _seed(store, dt.datetime.now(dt.timezone.utc))
    finally:
        store.close()
    app = App(Config(port=0, data_dir=data, meta_store=meta_url, barrier_interval_ms=200,
                     refresh_history_per_job=3, refresh_history_max_age_s=0,
                     refresh_history_prune_interval_s=3600))
    app.history.batch = 2  # many batches, so the pass can be held between two of them
    in_pass, release = threading.Event(), threading.Event()

    def hold() -> None:
        in_pass.set()
        assert release.wait(60)

    app.history_pruner.between = hold
    server = app.start()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        assert in_pass.wait(60)
        assert app.history_pruner.passes == 0  # the pass at start is under way
        port = server.server_address[1]
        with psycopg.connect(host="127.0.0.1", port=port, user="root", dbname="dev",
                             autocommit=True) as c:
            c.execute("INSERT INTO t VALUES (3)")
            c.execute("REFRESH MATERIALIZED VIEW mv")
            (run_id, status, rows), = c.execute(
                "SELECT run_id, status, rows FROM rw_catalog.rw_refresh_history "
                "WHERE database = 'dev' AND trigger = 'manual'").fetchall()
        assert (status, rows) == ("succeeded", 4)
        assert app.history_pruner.passes == 0  # recorded while the pass was held
        assert any(r.run_id == run_id and r.status == "succeeded" for r in app.meta.load_runs())
        release.set()
        assert app.history_pruner.wait_passes(1, 60)
        # that pass chose dev's cut before the new run; the next one counts it
        app.history_pruner.between = None
        app.history_pruner.request()
        assert app.history_pruner.wait_passes(2, 60)
        by_db: dict[str, list[int]] = {}
        for r in app.meta.load_runs():
            by_db.setdefault(r.database, []).append(r.run_id)
        assert by_db == {"dev": [1019, 1020, run_id], "other": [1018, 1019, 1020]}
    finally:
        release.set()
        app.stop()


def test_negative_limit_is_refused() -> None:
    out = subprocess.run([sys.executable, "-m", "pgbarrier", "serve", "--port", "0",
                          "--data-dir", ":memory:", "--refresh-history-per-job", "-1"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip() == ("pgbarrier: --refresh-history-per-job and "
                                  "--refresh-history-max-age-sec must not be negative")
