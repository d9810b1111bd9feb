"""Recovery at start: the meta store's state back into a fresh process.

Rules this module keeps:

* The default database is created only on the first start of a meta store;
  after that the stored databases are exactly the ones that exist (a dropped
  ``dev`` stays dropped).
* Each database's barrier worker resumes from its recorded ``prev_epoch``
  (the highest epoch handed out), so new epochs are above every recorded one
  whatever the clock says, with its pause state (when, by whom).
* Jobs: ``idle`` and ``failed`` come back as they were. ``refreshing`` (the
  process died mid-run) becomes ``failed`` with error ``process restarted``
  (and so does its ``running`` history row); it re-runs when due.
  ``creating`` (the create was never acknowledged) is dropped, with whatever
  the backend holds of it; ``dropping`` finishes its drop. A job whose
  backend object is missing is logged and marked ``failed`` with that error,
  so ``rw_catalog.rw_batch_refresh_jobs`` shows it.
* Every remaining job is handed to the scheduler, which counts its next run
  from the recorded epochs.
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

log = logging.getLogger(__name__)

RESTARTED = "process restarted"


def restore_databases(app: App) -> None:
    store = app.meta
    if not store.bootstrapped():
        if not store.load_databases():
            store.put_database(DatabaseRecord(app.config.default_database))
        store.mark_bootstrapped()
    for rec in store.load_databases():
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
    for run in store.load_runs():
        if run.status == "running":
            run = replace(run, status="failed", finished_at=now, error=RESTARTED)
            store.put_run(run)
        runs.append(run)
    app.history.restore(runs)
    for view in store.load_views():
        if not app.barrier.has_database(view.database):
            continue
        if not app.backend.relation_exists(view.database, view.name):
            log.warning("streaming view %s.%s: its backend view is missing", view.database,
                        view.name)
        app.jobs.add_streaming(StreamingView(view.name, view.database, view.definition))
    for rec in store.load_jobs():
        job = job_from_record(rec)
        where = f"{job.database}.{job.name}"
        if not app.barrier.has_database(job.database):
            store.delete_job(job.database, job.name)
            continue
        if isinstance(job.status, (js.Creating, js.Dropping)):
            log.warning("batch-refresh job %s was %s when the process stopped; dropping it",
                        where, job.status.name)
            try:
                app.backend.drop_batch_view(job.database, job.name)
            except Exception as exc:  # nothing of it may exist yet
                log.info("dropping the backend object of %s: %s", where, exc)
            store.delete_job(job.database, job.name)
            continue
        status = job.status
        if isinstance(status, js.Refreshing):
            log.warning("refresh run %d of %s was running when the process stopped; marked failed",
                        status.run_id, where)
            status = js.Failed(status.last_committed_epoch, RESTARTED, status.target_epoch)
        if not app.backend.relation_exists(job.database, job.name):
            error = f'backend object "{job.name}" of database "{job.database}" is missing'
            log.error("batch-refresh job %s: %s", where, error)
            last = js.last_committed_epoch(status) or job.snapshot_epoch
            status = js.Failed(last, error, getattr(status, "failed_epoch", last))
        job = replace(job, status=status)
        app.jobs.register(job)
        app.scheduler.track(job)


__all__ = ["restore_databases", "restore_jobs", "RunRecord"]
