"""Recovery at start: the meta store's state back into a fresh process.

Rules this module keeps:

* The default database is created only on the first start of a meta store;
  after that the stored databases are exactly the ones that exist (a dropped
  ``dev`` stays dropped).
* A database marked ``dropping`` (its DROP DATABASE was cut short) is dropped
  from the backend and then forgotten; one whose backend drop fails stays marked
  and out of service, and the next start tries again.
* Each database's barrier worker resumes from its recorded ``prev_epoch``
  (at or above every epoch it handed out: a lease ceiling after a crash, the
  exact last epoch after a clean stop, see :mod:`pgbarrier.meta.checkpoints`),
  so new epochs are above every one issued before whatever the clock says,
  with its pause state (when, by whom).
* Jobs: ``idle`` and ``failed`` come back as they were. ``refreshing`` (the
  process died mid-run) becomes ``failed`` with error ``process restarted``
  (and so does its ``running`` history row); it re-runs when due.
  ``creating`` (the create was never acknowledged) is dropped, with whatever
  the backend holds of it; ``dropping`` finishes its drop, backend table
  first, then the record (a drop the backend refuses, e.g. for an upstream
  object that depends on the view, keeps the job, ``failed`` with that error).
  A job whose backend object is missing is logged and marked ``failed`` with
  that error, so ``rw_catalog.rw_batch_refresh_jobs`` shows it.
* Streaming views: the record is written before the backend view and deleted
  after it, so a record whose backend view is missing is a create or drop the
  crash cut short: the record is deleted and the name is free. Together with
  the job rules: after any crash each name is a working view or entirely gone.
* Every remaining job is handed to the scheduler, which counts its next run
  from the recorded epochs.
* Start-up stays short with many jobs: a job or view that comes back unchanged
  is not written again, and backend objects are checked a batch per statement
  (see ``_present``), not one catalog query each.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from pgbarrier.barrier.pause import Paused, PauseState, Running
from pgbarrier.jobs import state as js
from pgbarrier.jobs.registry import StreamingView, job_from_record
from pgbarrier.meta.store import DatabaseRecord, RunRecord

if TYPE_CHECKING:
    from pgbarrier.app import App
    from pgbarrier.backends.base import Backend

log = logging.getLogger(__name__)

RESTARTED = "process restarted"
#: relations checked by one statement at start (see _present)
_CHECK_BATCH = 16


def restore_databases(app: App) -> None:
    store = app.meta
    if not store.bootstrapped():
        if not store.load_databases():
            store.put_database(DatabaseRecord(app.config.default_database))
        store.mark_bootstrapped()
    for rec in store.load_databases():
        if rec.dropping:  # a DROP DATABASE cut short: finish it, backend first
            try:
                app.backend.drop_database(rec.name)
            except Exception:  # noqa: BLE001 - left marked: the next start tries again
                log.exception("finishing the drop of database %r failed", rec.name)
                continue
            store.delete_database(rec.name)
            log.info("finished the drop of database %r that a crash cut short", rec.name)
            continue
        pause: PauseState = Running()
        if rec.paused:
            pause = Paused(at=rec.paused_at or dt.datetime.now(dt.timezone.utc),
                           by=rec.paused_by or "")
        app.backend.ensure_database(rec.name)
        app.barrier.add_database(rec.name, prev_epoch=rec.prev_epoch, pause=pause,
                                 committed_epoch=rec.committed_epoch)


def restore_jobs(app: App) -> None:
    """Load jobs, streaming views and history; call after the databases are restored."""
    store, now = app.meta, dt.datetime.now(dt.timezone.utc)
    runs = []
    for run in store.load_runs(app.history.keep_per_job, app.history.cutoff()):  # what is kept
        if run.status == "running":
            run = replace(run, status="failed", finished_at=now, error=RESTARTED)
            store.put_run(run)
        runs.append(run)
    app.history.restore(runs)
    views = [v for v in store.load_views() if app.barrier.has_database(v.database)]
    records = store.load_jobs()
    present = _present(app.backend, [(v.database, v.name) for v in views]
                       + [(r.database, r.name) for r in records
                          if r.status not in ("creating", "dropping")
                          and app.barrier.has_database(r.database)])
    for view in views:
        if (view.database, view.name) not in present:
            log.warning("streaming view %s.%s: its backend view is missing (a create or drop "
                        "cut short); forgetting it", view.database, view.name)
            store.delete_view(view.database, view.name)
            continue
        app.jobs.add_streaming(StreamingView(view.name, view.database, view.definition),
                               persist=False)
    for rec in records:
        job = job_from_record(rec)
        where = f"{job.database}.{job.name}"
        if not app.barrier.has_database(job.database):
            store.delete_job(job.database, job.name)
            continue
        if isinstance(job.status, (js.Creating, js.Dropping)):
            log.warning("batch-refresh job %s was %s when the process stopped; dropping it",
                        where, job.status.name)
            try:
                app.backend.drop_batch_view(job.database, job.name)  # IF EXISTS
            except Exception as exc:  # noqa: BLE001 - the job stays, failed, for a new DROP
                log.error("could not drop the backend object of %s: %s", where, exc)
                last = rec.last_committed_epoch or job.snapshot_epoch
                job = replace(job, status=js.Failed(last, f"drop at restart failed: {exc}", last))
                app.jobs.register(job)
                app.scheduler.track(job)
                continue
            store.delete_job(job.database, job.name)
            continue
        status = job.status
        if isinstance(status, js.Refreshing):
            log.warning("refresh run %d of %s was running when the process stopped; marked failed",
                        status.run_id, where)
            status = js.Failed(status.last_committed_epoch, RESTARTED, status.target_epoch)
        if (job.database, job.name) not in present:
            error = f'backend object "{job.name}" of database "{job.database}" is missing'
            log.error("batch-refresh job %s: %s", where, error)
            last = js.last_committed_epoch(status) or job.snapshot_epoch
            status = js.Failed(last, error, getattr(status, "failed_epoch", last))
        changed = status != job.status
        job = replace(job, status=status)
        app.jobs.register(job, persist=changed)  # an unchanged job is already recorded
        app.scheduler.track(job)


def _present(backend: Backend, relations: list[tuple[str, str]]) -> set[tuple[str, str]]:
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
    return '"' + name.replace('"', '""') + '"'


__all__ = ["restore_databases", "restore_jobs", "RunRecord"]
