"""Per-view suspend and resume of a batch-refresh view (issue 29, item 1).

Rules this module keeps:

* ``ALTER MATERIALIZED VIEW v SUSPEND [REASON 'text']`` holds the view's scheduled runs:
  the scheduler starts none for it (:mod:`pgbarrier.jobs.scheduler`) and readers keep its
  last committed result. ``REFRESH MATERIALIZED VIEW v`` still runs on it (Snowflake's
  rule), unless the database is paused (55000, as for any view). A run in progress when
  it is suspended finishes and commits.
* ``ALTER MATERIALIZED VIEW v RESUME`` lets them run again: a view that fell due while
  suspended runs once, at the next checkpoint, never once per missed interval.
* The state (when, by whom, why) is written to the meta store before the statement
  returns, in the job's record, so it survives a restart and a leader failover;
  ``rw_catalog.rw_batch_refresh_jobs`` shows it (``suspended``, ``suspended_at``,
  ``suspended_by``, ``suspend_reason``; ``status`` reads ``suspended`` unless a run is in
  progress), and the metric ``pgbarrier_batch_refresh_jobs_suspended`` counts such views.
* Idempotent: SUSPEND of a suspended view keeps its time and author and says so in a
  NOTICE (a new REASON replaces the old one); RESUME of a view that is not suspended is a
  NOTICE, nothing changes.
* Errors, in PostgreSQL's order: 42P01 ``relation "v" does not exist`` for an unknown
  name, 42809 ``"v" is not a batch-refresh materialized view`` for any other relation (a
  table, a view, a streaming view, PostgreSQL's own materialized view upstream), 42501
  for a user who does not own the view (PostgreSQL's ALTER rule; DuckDB has no roles).
  Inside a transaction block it is 25001 (the executor's rule for control statements).
* The name is resolved as REFRESH resolves it (upstream with the session's search_path),
  and a statement on one view name takes its turn with CREATE, DROP and REFRESH of it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pgbarrier.errors import Notice, PgError, UndefinedTable
from pgbarrier.logs import session_fields
from pgbarrier.result import Result, command

if TYPE_CHECKING:
    from pgbarrier.backends.base import BackendSession
    from pgbarrier.jobs.registry import BatchRefreshJob
    from pgbarrier.sql.view_suspend import ResumeView, SuspendView

#: the control plane (pgbarrier.control.ControlPlane, which imports this module) and its
#: SessionInfo
ControlPlane = SessionInfo = Any

log = logging.getLogger(__name__)

TAG = "ALTER MATERIALIZED VIEW"


def _job(plane: ControlPlane, name: str, info: SessionInfo) -> BatchRefreshJob:
    """The batch-refresh job of view ``name`` (pgbarrier's name), or the error for it."""
    db = info.database
    job = plane.jobs.get(db, name)
    if job is not None:
        plane.backend.require_owner(db, "materialized view", name, info.user)
        return job
    short = name.rpartition(".")[2]
    if plane.jobs.streaming_view(db, name) is not None or plane.backend.relation_exists(db, name):
        raise PgError(f'"{short}" is not a batch-refresh materialized view', sqlstate="42809",
                      hint="Only a materialized view created with BATCH REFRESH (or "
                           "refresh.interval.sec) can be suspended or resumed.")
    raise UndefinedTable(f'relation "{name}" does not exist')


def suspend(plane: ControlPlane, stmt: SuspendView, info: SessionInfo,
            session: BackendSession | None) -> Result:
    db = info.database
    name = plane.resolve_name(info, stmt.name, session)
    with plane.name_lock(info, name, "alter"):
        job = _job(plane, name, info)
        if job.suspended:
            if stmt.reason is None or stmt.reason == job.suspend_reason:
                return command(TAG, [Notice(
                    f'materialized view "{name}" is already suspended, nothing to do')])
            plane.jobs.update(db, name, suspend_reason=stmt.reason)
            return command(TAG, [Notice(
                f'materialized view "{name}" is already suspended; its reason is replaced')])
        plane.jobs.update(db, name, suspended_at=plane.scheduler.now(), suspended_by=info.user,
                          suspend_reason=stmt.reason)
    log.info('batch refresh job "%s" of database "%s" suspended by %s%s', name, db, info.user,
             f": {stmt.reason}" if stmt.reason else "",
             extra={"event": "job_suspended", **session_fields(info)})
    return command(TAG)


def resume(plane: ControlPlane, stmt: ResumeView, info: SessionInfo,
           session: BackendSession | None) -> Result:
    db = info.database
    name = plane.resolve_name(info, stmt.name, session)
    with plane.name_lock(info, name, "alter"):
        job = _job(plane, name, info)
        if not job.suspended:
            return command(TAG, [Notice(
                f'materialized view "{name}" is not suspended, nothing to do')])
        job = plane.jobs.update(db, name, suspended_at=None, suspended_by=None,
                                suspend_reason=None)
        plane.scheduler.track(job)  # due while suspended: runs once, at the next checkpoint
    log.info('batch refresh job "%s" of database "%s" resumed by %s', name, db, info.user,
             extra={"event": "job_resumed", **session_fields(info)})
    return command(TAG)
