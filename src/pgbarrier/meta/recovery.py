"""Recovery at start: the meta store reconciled with the backend, and what it holds then.

:func:`recover` takes the meta store and the backend, finishes or undoes in
both what a crash cut short, and returns :class:`Restored`: plain records of
what the process serves from now on. It touches nothing in memory; the caller
(:meth:`pgbarrier.app.App.start`) loads the result into the barrier manager,
the jobs registry, the refresh history and the scheduler without writing to
the store again, since the store already holds exactly what is returned.

Rules this module keeps:

* The default database is created only on the first start of a meta store;
  after that the stored databases are exactly the ones that exist (a dropped
  ``dev`` stays dropped). The maintenance database (``postgres``, when the caller
  asks for one: the DuckDB backend) is created once per meta store too, on its first
  start or on the first start of a store made before there was one; after that it is
  an ordinary database (a dropped ``postgres`` stays dropped).
* A database marked ``dropping`` (its DROP DATABASE was cut short) is dropped
  from the backend and then forgotten; one whose backend drop fails stays marked
  and out of service, and the next start tries again.
* Each database resumes from its recorded ``prev_epoch`` (at or above every
  epoch it handed out: a lease ceiling after a crash, the exact last epoch
  after a clean stop, see :mod:`pgbarrier.meta.checkpoints`), so new epochs
  are above every one issued before whatever the clock says, with its pause
  state (when, by whom).
* Jobs: ``idle`` and ``failed`` come back as they were. ``refreshing`` (the
  process died mid-run) becomes ``failed`` with error ``process restarted``
  (and so does its ``running`` history row); it re-runs when due.
  ``creating`` (the create was never acknowledged) is dropped, with whatever
  the backend holds of it; ``dropping`` finishes its drop, backend table
  first, then the record (a drop the backend refuses, e.g. for an upstream
  object that depends on the view, keeps the job, ``failed`` with that error).
  A job whose backend object is missing is logged and marked ``failed`` with
  that error, so ``rw_catalog.rw_batch_refresh_jobs`` shows it. A job of a
  database that is not served is forgotten.
* A ``failed`` record written here has exactly the fields the jobs registry
  writes for a failed job (last committed epoch, error, failed epoch; no
  target or run), so loading it and writing it back changes nothing.
* Streaming views: the record is written before the backend view and deleted
  after it, so a record whose backend view is missing is a create or drop the
  crash cut short: the record is deleted and the name is free. Together with
  the job rules: after any crash each name is a working view or entirely gone.
* Start-up stays short with many jobs: a job or view that comes back unchanged
  is not written again, and backend objects are checked a batch per statement
  (see ``_present``), not one catalog query each.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, replace
from typing import Any, Protocol

from pgbarrier.barrier.pause import Paused, PauseState, Running
from pgbarrier.meta.store import DatabaseRecord, JobRecord, MetaStore, RunRecord, ViewRecord

log = logging.getLogger(__name__)

RESTARTED = "process restarted"
#: the meta store's mark that the maintenance database was created (see the module rules)
MAINTENANCE_STEP = "maintenance_database"
#: relations checked by one statement at start (see _present)
_CHECK_BATCH = 16


class RecoveryBackend(Protocol):
    """What recovery asks of the backend (:class:`pgbarrier.backends.base.Backend` has it)."""

    def ensure_database(self, name: str) -> None: ...

    def drop_database(self, name: str) -> None: ...

    def drop_batch_view(self, database: str, name: str) -> None: ...

    def describe_query(self, database: str, query: str) -> Any: ...

    def relation_exists(self, database: str, name: str) -> bool: ...


@dataclass(frozen=True)
class RestoredDatabase:
    name: str
    #: the next barrier's prev epoch (None: never recorded, start from the clock)
    prev_epoch: int | None
    committed_epoch: int | None
    pause: PauseState


@dataclass(frozen=True)
class Restored:
    """What the meta store holds after :func:`recover`, in the order to load it."""

    databases: list[RestoredDatabase]
    #: the refresh runs kept (oldest first per job)
    runs: list[RunRecord]
    views: list[ViewRecord]
    #: every job comes back ``idle`` or ``failed``
    jobs: list[JobRecord]


def recover(store: MetaStore, backend: RecoveryBackend, *, default_database: str,
            runs_per_job: int = 0, runs_since: dt.datetime | None = None,
            maintenance_database: str | None = None) -> Restored:
    """Apply the module rules to ``store`` and ``backend``; return what is restored.

    ``runs_per_job`` and ``runs_since`` bound the refresh runs loaded (see
    :meth:`~pgbarrier.meta.store.MetaStore.load_runs`).
    """
    databases = _databases(store, backend, default_database, maintenance_database)
    served = {db.name for db in databases}
    runs = _runs(store, runs_per_job, runs_since)
    views = [v for v in store.load_views() if v.database in served]
    records = store.load_jobs()
    present = _present(backend, [(v.database, v.name) for v in views]
                       + [(r.database, r.name) for r in records
                          if r.status not in ("creating", "dropping") and r.database in served])
    return Restored(databases, runs, _views(store, views, present),
                    _jobs(store, backend, records, served, present))


def _databases(store: MetaStore, backend: RecoveryBackend, default_database: str,
               maintenance_database: str | None = None) -> list[RestoredDatabase]:
    if not store.bootstrapped():
        if not store.load_databases():
            store.put_database(DatabaseRecord(default_database))
        store.mark_bootstrapped()
    if maintenance_database is not None and not store.marked(MAINTENANCE_STEP):
        # once per meta store, new or from before there was one: later it is an ordinary
        # database (a DROP DATABASE of it stays dropped)
        if maintenance_database not in {r.name for r in store.load_databases()}:
            store.put_database(DatabaseRecord(maintenance_database))
        store.mark(MAINTENANCE_STEP)
    restored = []
    # every database's epochs are at or below the lease (see meta/checkpoints.py)
    ceiling = store.load_epoch_ceiling()
    for rec in store.load_databases():
        if rec.dropping:  # a DROP DATABASE cut short: finish it, backend first
            try:
                backend.drop_database(rec.name)
            except Exception:  # noqa: BLE001 - left marked: the next start tries again
                log.exception("finishing the drop of database %r failed", rec.name)
                continue
            store.delete_database(rec.name)
            log.info("finished the drop of database %r that a crash cut short", rec.name)
            continue
        pause: PauseState = Running()
        if rec.paused:
            pause = Paused(at=rec.paused_at or dt.datetime.now(dt.timezone.utc),
                           by=rec.paused_by or "", reason=rec.pause_reason,
                           resumes_at=rec.resumes_at)
        backend.ensure_database(rec.name)
        prev = rec.prev_epoch
        if ceiling is not None:
            prev = ceiling if prev is None else max(prev, ceiling)
        restored.append(RestoredDatabase(rec.name, prev, rec.committed_epoch, pause))
    return restored


def _runs(store: MetaStore, per_job: int, since: dt.datetime | None) -> list[RunRecord]:
    now = dt.datetime.now(dt.timezone.utc)
    runs = []
    for run in store.load_runs(per_job, since):  # what is kept
        if run.status == "running":
            run = replace(run, status="failed", finished_at=now, error=RESTARTED)
            store.put_run(run)
        runs.append(run)
    return runs


def _views(store: MetaStore, views: list[ViewRecord],
           present: set[tuple[str, str]]) -> list[ViewRecord]:
    kept = []
    for view in views:
        if (view.database, view.name) not in present:
            log.warning("streaming view %s.%s: its backend view is missing (a create or drop "
                        "cut short); forgetting it", view.database, view.name)
            store.delete_view(view.database, view.name)
            continue
        kept.append(view)
    return kept


def _jobs(store: MetaStore, backend: RecoveryBackend, records: list[JobRecord],
          served: set[str], present: set[tuple[str, str]]) -> list[JobRecord]:
    kept = []
    for rec in records:
        where = f"{rec.database}.{rec.name}"
        if rec.database not in served:
            store.delete_job(rec.database, rec.name)
            continue
        if rec.status in ("creating", "dropping"):
            log.warning("batch-refresh job %s was %s when the process stopped; dropping it",
                        where, rec.status)
            try:
                backend.drop_batch_view(rec.database, rec.name)  # IF EXISTS
            except Exception as exc:  # noqa: BLE001 - the job stays, failed, for a new DROP
                log.error("could not drop the backend object of %s: %s", where, exc)
                failed = _failed(rec, f"drop at restart failed: {exc}", _last(rec))
                store.put_job(failed)
                kept.append(failed)
                continue
            store.delete_job(rec.database, rec.name)
            continue
        new = rec
        if new.status == "refreshing":
            log.warning("refresh run %d of %s was running when the process stopped; marked failed",
                        new.run_id or 0, where)
            new = _failed(new, RESTARTED, new.target_epoch or _last(new))
        if (rec.database, rec.name) not in present:
            error = f'backend object "{rec.name}" of database "{rec.database}" is missing'
            log.error("batch-refresh job %s: %s", where, error)
            failed_epoch = (new.failed_epoch or _last(new)) if new.status == "failed" \
                else _last(new)
            new = _failed(new, error, failed_epoch)
        if new != rec:  # an unchanged job is already recorded
            store.put_job(new)
        kept.append(new)
    return kept


def _last(rec: JobRecord) -> int:
    """The epoch readers of the job see (its snapshot until a refresh committed)."""
    return rec.last_committed_epoch if rec.last_committed_epoch is not None else rec.snapshot_epoch


def _failed(rec: JobRecord, error: str, failed_epoch: int) -> JobRecord:
    return replace(rec, status="failed", last_committed_epoch=_last(rec), error=error,
                   failed_epoch=failed_epoch, target_epoch=None, run_id=None)


def _present(backend: RecoveryBackend,
             relations: list[tuple[str, str]]) -> set[tuple[str, str]]:
    """Which of ``(database, name)`` exist on the backend.

    One statement per ``_CHECK_BATCH`` relations of a database, described (never
    run): ``SELECT 1 FROM "a", "b", ... LIMIT 0``, which the backend refuses
    when one is missing; only then is each of that batch asked for on its own.
    With a thousand jobs this is what keeps start-up short (a catalog query per
    job cost ~2 ms on DuckDB).
    """
    by_db: dict[str, list[str]] = {}
    for database, name in relations:
        by_db.setdefault(database, []).append(name)
    found: set[tuple[str, str]] = set()
    for database, names in by_db.items():
        for i in range(0, len(names), _CHECK_BATCH):
            batch = names[i:i + _CHECK_BATCH]
            query = "SELECT 1 FROM " + ", ".join(_quote(n) for n in batch) + " LIMIT 0"
            try:
                backend.describe_query(database, query)
                found.update((database, n) for n in batch)
            except Exception:  # one is missing (or cannot be read): ask one by one
                found.update((database, n) for n in batch
                             if backend.relation_exists(database, n))
    return found


def _quote(name: str) -> str:
    """pgbarrier's name of a view (``v`` or ``schema.v``: pgbarrier.sql.relnames, which
    meta does not import) quoted part by part."""
    schema, dot, rel = name.partition(".")
    parts = (schema, rel) if dot else (name,)
    return ".".join('"' + p.replace('"', '""') + '"' for p in parts)


__all__ = ["RESTARTED", "RecoveryBackend", "Restored", "RestoredDatabase", "recover"]
