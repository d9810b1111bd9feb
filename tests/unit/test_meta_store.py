"""The meta store on SQLite and PostgreSQL: migrations, round trips, durability across reopen."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Iterator

import pytest

from conftest import require_postgres
from pgbarrier.meta.schema import SCHEMA_VERSION
from pgbarrier.meta.store import DatabaseRecord, JobRecord, MetaStore, RunRecord, ViewRecord

T0 = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)


@pytest.fixture(params=["sqlite", "postgres"])
def reopen(request: pytest.FixtureRequest, tmp_path) -> Iterator[Callable[[], MetaStore]]:
    """A function opening the same store again (as a restarted process would)."""
    opened: list[MetaStore] = []
    if request.param == "sqlite":
        from pgbarrier.meta.sqlite import SqliteMetaStore

        def make() -> MetaStore:
            opened.append(SqliteMetaStore(str(tmp_path / "data")))
            return opened[-1]
        yield make
    else:
        import psycopg

        from pgbarrier.meta.postgres import PostgresMetaStore

        dsn = require_postgres()
        schema = f"pgb_test_{uuid.uuid4().hex[:10]}"

        def make() -> MetaStore:
            opened.append(PostgresMetaStore(dsn, schema))
            return opened[-1]
        yield make
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    for store in opened:
        try:
            store.close()
        except Exception:
            pass


def test_schema_version_recorded_and_bootstrap_flag(reopen: Callable[[], MetaStore]) -> None:
    store = reopen()
    assert store.schema_version() == SCHEMA_VERSION
    assert not store.bootstrapped()
    store.mark_bootstrapped()
    store.close()
    again = reopen()
    assert again.bootstrapped()
    assert again.schema_version() == SCHEMA_VERSION


def test_records_round_trip_across_reopen(reopen: Callable[[], MetaStore]) -> None:
    store = reopen()
    db = DatabaseRecord("dev", True, T0, "alice", prev_epoch=5 << 40, committed_epoch=4 << 40)
    job = JobRecord(database="dev", name="mv", definition="CREATE ...", query="SELECT 1",
                    columns=("a", "b"), refresh_interval_sec=60, status="failed",
                    snapshot_epoch=1 << 40, last_committed_epoch=2 << 40, created_at=T0,
                    last_refreshed_at=T0, failed_epoch=3 << 40, error="boom")
    run = RunRecord("dev", "mv", 7, "manual", T0, 3 << 40, "failed", T0, None, "boom")
    store.put_database(db)
    store.put_database(DatabaseRecord("other"))
    store.put_job(job)
    store.put_view(ViewRecord("dev", "sv", "CREATE MATERIALIZED VIEW sv AS SELECT 1"))
    store.put_run(run)
    store.close()

    again = reopen()
    assert again.load_databases() == [db, DatabaseRecord("other")]
    assert again.load_jobs() == [job]
    assert again.load_views() == [ViewRecord("dev", "sv", "CREATE MATERIALIZED VIEW sv AS SELECT 1")]
    assert again.load_runs() == [run]

    again.put_database(DatabaseRecord("dev", False, None, None, 6 << 40, 5 << 40))
    again.delete_job("dev", "mv")
    assert again.load_jobs() == [] and again.load_runs() == []
    again.delete_database("dev")
    assert [d.name for d in again.load_databases()] == ["other"]
    assert again.load_views() == []


def test_values_with_quotes_are_parameters(reopen: Callable[[], MetaStore]) -> None:
    store = reopen()
    store.put_view(ViewRecord("d'b", "x'); DROP TABLE databases; --", "it's"))
    assert store.load_views() == [ViewRecord("d'b", "x'); DROP TABLE databases; --", "it's")]


def _record(name: str, paused: bool = False) -> DatabaseRecord:
    return DatabaseRecord(name, paused, T0 if paused else None, "root" if paused else None,
                          1 << 16, 1 << 16)


def test_writes_are_committed_when_they_return(reopen: Callable[[], MetaStore]) -> None:
    """A write alone (SQLite: its own implicit transaction) and writes from several threads
    at once (one group-commit transaction) are committed, whatever path they took, and a
    failing write fails only its caller and leaves no transaction open."""
    import threading

    store = reopen()
    store.put_database(_record("alone", paused=True))
    threads = [threading.Thread(target=store.put_database, args=(_record(f"db{i}"),))
               for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with pytest.raises(Exception):
        store._exec("INSERT INTO {p}no_such_table (x) VALUES (?)", (1,))  # type: ignore[attr-defined]
    store.put_database(_record("after"))
    conn = store._conn  # type: ignore[attr-defined]
    if isinstance(getattr(conn, "in_transaction", None), bool):  # sqlite3: nothing left open
        assert not conn.in_transaction
    names = {d.name: d.paused for d in reopen().load_databases()}
    assert names["alone"] is True and names["after"] is False
    assert {f"db{i}" for i in range(8)} <= set(names)


def test_a_cron_schedule_round_trips(reopen: Callable[[], MetaStore]) -> None:
    """Migration 7 (issue 29, item 6): a job's cron expression and zone are kept; an
    interval job keeps NULLs there."""
    store = reopen()
    cron = JobRecord(database="dev", name="nightly", definition="CREATE ...", query="SELECT 1",
                     columns=None, refresh_interval_sec=60, status="idle",
                     snapshot_epoch=1 << 40, last_committed_epoch=1 << 40, created_at=T0,
                     refresh_cron="30 2 * * MON-FRI", refresh_timezone="Europe/Berlin")
    every = JobRecord(database="dev", name="often", definition="CREATE ...", query="SELECT 1",
                      columns=None, refresh_interval_sec=5, status="idle",
                      snapshot_epoch=1 << 40, last_committed_epoch=1 << 40, created_at=T0)
    store.put_job(cron)
    store.put_job(every)
    store.close()
    again = reopen()
    assert again.load_jobs() == [cron, every]
    again.put_job(JobRecord(**{**cron.__dict__, "refresh_cron": None, "refresh_timezone": None}))
    assert again.load_jobs()[0].refresh_cron is None
