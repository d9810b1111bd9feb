"""Recovery at start (meta/recovery.py) on a real SQLite store and a real DuckDB backend.

What a crash leaves is written into the store and the backend directly; ``recover`` must
return exactly what the store holds afterwards, in the shape the jobs registry writes.
"""

from __future__ import annotations

import ast
import datetime as dt
import os
import pathlib
from dataclasses import replace
from collections.abc import Iterator

import pytest

from pgbarrier.backends.duckdb import DuckDBBackend
from pgbarrier.backends.duckdb_files import database_path
from pgbarrier.barrier.pause import Paused, Running
from pgbarrier.jobs.registry import job_from_record, job_to_record
from pgbarrier.meta.recovery import RESTARTED, Restored, recover
from pgbarrier.meta.sqlite import SqliteMetaStore
from pgbarrier.meta.store import DatabaseRecord, JobRecord, RunRecord, ViewRecord

T0 = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
E = 1 << 16


@pytest.fixture
def data(tmp_path: pathlib.Path) -> str:
    return str(tmp_path / "data")


@pytest.fixture
def store(data: str) -> Iterator[SqliteMetaStore]:
    s = SqliteMetaStore(data)
    yield s
    s.close()


@pytest.fixture
def backend(data: str) -> Iterator[DuckDBBackend]:
    b = DuckDBBackend(data)
    yield b
    b.close()


def _recover(store: SqliteMetaStore, backend: DuckDBBackend) -> Restored:
    return recover(store, backend, default_database="dev")


def _job(name: str, status: str, database: str = "dev", **fields: object) -> JobRecord:
    return replace(JobRecord(database=database, name=name, definition=f"CREATE MATERIALIZED VIEW "
                             f"{name} AS SELECT 1", query="SELECT 1 AS x", columns=None,
                             refresh_interval_sec=60, status=status, snapshot_epoch=10 * E,
                             last_committed_epoch=10 * E, created_at=T0), **fields)


def _batch_view(backend: DuckDBBackend, name: str, database: str = "dev") -> None:
    backend.create_batch_view(database, name, None, "SELECT 1 AS x")


def test_first_start_creates_the_default_database_and_a_dropped_one_stays_dropped(
        store, backend) -> None:
    first = _recover(store, backend)
    assert [d.name for d in first.databases] == ["dev"]
    assert store.load_databases() == [DatabaseRecord("dev")]
    store.delete_database("dev")
    store.put_database(DatabaseRecord("other"))
    assert [d.name for d in _recover(store, backend).databases] == ["other"]


def test_maintenance_database_is_made_once_per_store_old_stores_included(store, backend) -> None:
    def names() -> list[str]:
        return [d.name for d in recover(store, backend, default_database="dev",
                                        maintenance_database="postgres").databases]

    store.mark_bootstrapped()  # a store from before: bootstrapped, never had postgres
    store.put_database(DatabaseRecord("dev", prev_epoch=3 * E))
    assert names() == ["dev", "postgres"]
    assert store.load_databases()[0] == DatabaseRecord("dev", prev_epoch=3 * E)
    store.delete_database("postgres")  # DROP DATABASE postgres: it stays dropped
    assert names() == ["dev"]
    assert store.marked("maintenance_database")


def test_databases_come_back_with_epochs_and_pause_state_and_cut_short_drops_finish(
        data, store, backend) -> None:
    store.mark_bootstrapped()
    store.put_database(DatabaseRecord("a", prev_epoch=7 * E, committed_epoch=5 * E))
    store.put_database(DatabaseRecord("p", paused=True, paused_at=T0, paused_by="alice",
                                      prev_epoch=9 * E, committed_epoch=9 * E))
    store.put_database(DatabaseRecord("gone"))
    backend.ensure_database("gone")
    _batch_view(backend, "mv", "gone")
    store.put_job(_job("mv", "idle", database="gone"))
    store.mark_database_dropping("gone")
    assert os.path.exists(database_path(data, "gone"))

    restored = _recover(store, backend)

    assert {(d.name, d.prev_epoch, d.committed_epoch, d.pause) for d in restored.databases} == {
        ("a", 7 * E, 5 * E, Running()), ("p", 9 * E, 9 * E, Paused(at=T0, by="alice"))}
    assert sorted(r.name for r in store.load_databases()) == ["a", "p"]
    assert not os.path.exists(database_path(data, "gone")), "the backend drop was finished"
    assert store.load_jobs() == [] and restored.jobs == []
    assert os.path.exists(database_path(data, "a")), "every served database is on the backend"


def test_jobs_after_a_crash(store, backend) -> None:
    _recover(store, backend)  # bootstraps dev
    for name in ("idle", "failed", "refreshing", "refreshing_missing", "made", "dropped"):
        _batch_view(backend, name)
    backend.create_view("dev", "blocker", None, "SELECT 1 AS x")  # DROP TABLE refuses a view
    records = [
        _job("idle", "idle"),
        _job("failed", "failed", error="boom", failed_epoch=12 * E),
        _job("refreshing", "refreshing", target_epoch=14 * E, run_id=3),
        _job("refreshing_missing", "refreshing", target_epoch=15 * E, run_id=4),
        _job("missing", "idle"),
        _job("missing_failed", "failed", error="boom", failed_epoch=12 * E),
        _job("made", "creating", last_committed_epoch=None),
        _job("dropped", "dropping", last_committed_epoch=None),
        _job("blocker", "dropping", last_committed_epoch=None),
        _job("elsewhere", "idle", database="nodb"),
    ]
    for rec in records:
        store.put_job(rec)
    backend.drop_batch_view("dev", "refreshing_missing")
    missing = 'backend object "{}" of database "dev" is missing'.format

    restored = _recover(store, backend)

    by_name = {r.name: r for r in restored.jobs}
    assert set(by_name) == {"idle", "failed", "refreshing", "refreshing_missing", "missing",
                            "missing_failed", "blocker"}
    assert by_name["idle"] == records[0] and by_name["failed"] == records[1]
    assert by_name["refreshing"] == _job("refreshing", "failed", error=RESTARTED,
                                         failed_epoch=14 * E)
    assert by_name["refreshing_missing"] == _job("refreshing_missing", "failed",
                                                 error=missing("refreshing_missing"),
                                                 failed_epoch=15 * E)
    assert by_name["missing"] == _job("missing", "failed", error=missing("missing"),
                                      failed_epoch=10 * E)
    assert by_name["missing_failed"] == _job("missing_failed", "failed",
                                             error=missing("missing_failed"), failed_epoch=12 * E)
    blocker = by_name["blocker"]
    assert (blocker.status, blocker.last_committed_epoch, blocker.failed_epoch) == \
        ("failed", 10 * E, 10 * E)
    assert blocker.error is not None and blocker.error.startswith("drop at restart failed: ")
    assert not backend.relation_exists("dev", "made")
    assert not backend.relation_exists("dev", "dropped")
    # the store holds exactly what was returned, in the registry's own shape
    assert sorted(store.load_jobs(), key=lambda r: r.name) == \
        sorted(restored.jobs, key=lambda r: r.name)
    for rec in restored.jobs:
        assert job_to_record(job_from_record(rec)) == rec, rec.name
        assert rec.status in ("idle", "failed")


def test_views_whose_backend_view_is_missing_are_forgotten(store, backend) -> None:
    _recover(store, backend)
    store.put_database(DatabaseRecord("other"))
    backend.create_view("dev", "kept", None, "SELECT 1 AS x")
    store.put_view(ViewRecord("dev", "kept", "CREATE MATERIALIZED VIEW kept AS SELECT 1"))
    store.put_view(ViewRecord("dev", "cut", "CREATE MATERIALIZED VIEW cut AS SELECT 1"))
    restored = _recover(store, backend)
    assert restored.views == [ViewRecord("dev", "kept", "CREATE MATERIALIZED VIEW kept AS SELECT 1")]
    assert store.load_views() == restored.views


def test_running_runs_become_failed_and_only_kept_runs_are_loaded(store, backend) -> None:
    _recover(store, backend)
    store.put_job(_job("mv", "idle"))
    _batch_view(backend, "mv")
    for run_id in range(1, 4):
        store.put_run(RunRecord("dev", "mv", run_id, "schedule", T0 + dt.timedelta(seconds=run_id),
                                10 * E, status="succeeded", finished_at=T0, rows=1))
    store.put_run(RunRecord("dev", "mv", 4, "schedule", T0 + dt.timedelta(seconds=4), 11 * E))

    restored = recover(store, backend, default_database="dev", runs_per_job=2)

    assert [r.run_id for r in restored.runs] == [3, 4]
    last = restored.runs[-1]
    assert (last.status, last.error) == ("failed", RESTARTED) and last.finished_at is not None
    assert store.load_runs(2) == restored.runs


def test_recovering_a_recovered_store_changes_nothing(store, backend) -> None:
    _recover(store, backend)
    _batch_view(backend, "r")
    store.put_job(_job("r", "refreshing", target_epoch=14 * E, run_id=3))
    store.put_job(_job("m", "idle"))
    store.put_view(ViewRecord("dev", "cut", "CREATE MATERIALIZED VIEW cut AS SELECT 1"))
    store.put_run(RunRecord("dev", "r", 3, "schedule", T0, 14 * E))
    first = _recover(store, backend)
    again = _recover(store, backend)
    assert again == first


def test_meta_imports_neither_app_nor_jobs() -> None:
    """meta is the durable catalog (records in, records out): only barrier of the others,
    and errors (a leaf: its failures are PostgreSQL's SQLSTATEs, issue 28)."""
    root = pathlib.Path(__file__).resolve().parents[2] / "src" / "pgbarrier" / "meta"
    imported = set()
    for f in root.glob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(a.name for a in node.names)
    packages = {m.split(".")[1] for m in imported if m.startswith("pgbarrier.")}
    assert packages <= {"meta", "barrier", "errors"}, packages
