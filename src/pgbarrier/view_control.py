"""Per-view control of a batch-refresh view: suspend and resume (issue 29, item 1), its
options (items 3 and 4).

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
* ``ALTER MATERIALIZED VIEW v SET (refresh.interval.sec = n)`` changes the view's interval
  at once and durably (the job's record): its next run is due ``n`` seconds after the run it
  counts from (so a shorter interval may make it due at once: it runs at the next
  checkpoint). ``RESET (refresh.interval.sec)`` returns to the default, 60. The other
  options (``refresh.retry_backoff.sec``, ``refresh.max_failures``, ``refresh.jitter.sec``)
  are set and reset alike; what each means, its default and valid values are
  :mod:`pgbarrier.jobs.policy`'s, which CREATE's ``WITH (...)`` reads too. A bad value is
  22023 ``invalid value for parameter``. Any other option is PostgreSQL's 22023
  ``unrecognized parameter "x"``, one named twice ``parameter "x" specified more than
  once``; a list that does not parse is 42601 at its first token out of place; nothing
  changes then. The same errors as SUSPEND for a name that is not a batch-refresh view
  (upstream such a text is PostgreSQL's own and relayed unchanged, see
  :mod:`pgbarrier.sql.view_options`). ``rw_batch_refresh_jobs.refresh_interval_sec`` shows
  the new interval; ``definition`` stays the CREATE statement as written.
* Calendar schedules (issue 29, item 6): ``SET (refresh.cron = '0 3 * * *' [,
  refresh.timezone = 'Europe/Berlin'])`` makes the view run at the expression's slots
  (:mod:`pgbarrier.cron`), in its zone (kept when only the expression changes, UTC
  when it had none); ``SET (refresh.timezone = 'z')`` alone changes the zone of a cron
  view, and is 22023 ``parameter "refresh.timezone" needs a cron schedule`` on an interval
  view. ``SET (refresh.interval.sec = n)`` makes a cron view an interval view again (its
  expression and zone are cleared); giving it with ``refresh.cron`` in one SET is 42601
  ``conflicting or redundant options``. ``RESET (refresh.cron)`` (or ``RESET
  (refresh.interval.sec)``) returns the view to the default schedule, every 60 s;
  ``RESET (refresh.timezone)`` returns a cron view to UTC. A malformed expression or an
  unknown zone is 22023 (the DETAIL names the wrong field), nothing changes.
  ``rw_batch_refresh_jobs`` shows ``refresh_cron`` and ``refresh_timezone`` (NULL for an
  interval view, whose ``refresh_interval_sec`` is NULL for a cron view).
* The name is resolved as REFRESH resolves it (upstream with the session's search_path),
  and a statement on one view name takes its turn with CREATE, DROP and REFRESH of it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from collections.abc import Iterable

from pgbarrier.errors import InvalidParameterValue, Notice, PgError, UndefinedTable
from pgbarrier import cron
from pgbarrier.errors import SyntaxError as PgSyntaxError
from pgbarrier.jobs import policy
from pgbarrier.logs import session_fields
from pgbarrier.result import Result, command

if TYPE_CHECKING:
    from pgbarrier.backends.base import BackendSession
    from pgbarrier.jobs.registry import BatchRefreshJob
    from pgbarrier.sql.view_options import ViewOptions
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


def _event(plane: ControlPlane, database: str, view: str, event: str, by: str,
           reason: str | None) -> None:
    """The ``rw_barrier`` event of a suspend or resume that changed something."""
    if plane.events is not None:
        plane.events.barrier_event(database, event, by, view=view, reason=reason)


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
            _event(plane, db, name, "suspend", info.user, stmt.reason)
            return command(TAG, [Notice(
                f'materialized view "{name}" is already suspended; its reason is replaced')])
        plane.jobs.update(db, name, suspended_at=plane.scheduler.now(), suspended_by=info.user,
                          suspend_reason=stmt.reason)
        _event(plane, db, name, "suspend", info.user, stmt.reason)
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
        plane.scheduler.resumed(job)  # due while suspended: one catch-up run
        _event(plane, db, name, "resume", info.user, None)
    log.info('batch refresh job "%s" of database "%s" resumed by %s', name, db, info.user,
             extra={"event": "job_resumed", **session_fields(info)})
    return command(TAG)


#: the schedule options of a batch-refresh view, with their defaults (RESET); a cron
#: schedule's zone defaults to UTC, and no cron expression means "every
#: refresh.interval.sec". The policy options are jobs/policy.py's (POLICY_OPTIONS).
OPTIONS = {"refresh.interval.sec": policy.DEFAULT_INTERVAL_SEC, "refresh.cron": None,
           "refresh.timezone": None}


def _interval(text: str, position: int) -> int:
    return policy.option("refresh.interval.sec").parse(text, position)


def _schedule(job: BatchRefreshJob, stmt: ViewOptions,
              given: dict[str, tuple[str | None, int]]) -> tuple[int, str | None, str | None]:
    """The job's (interval, cron, zone) after ``stmt``: see the module rules."""
    interval, cron_text, zone = job.refresh_interval_sec, job.refresh_cron, job.refresh_timezone
    if not stmt.reset:
        if "refresh.interval.sec" in given and "refresh.cron" in given:
            raise PgSyntaxError("conflicting or redundant options",
                                position=given["refresh.cron"][1])
        if "refresh.interval.sec" in given:
            value, at = given["refresh.interval.sec"]
            interval, cron_text, zone = _interval(value or "", at), None, None
        if "refresh.cron" in given:
            cron_text, zone = given["refresh.cron"][0] or "", zone or "UTC"
            cron_text, _ = cron.check(cron_text, None, position=given["refresh.cron"][1])
        if "refresh.timezone" in given:
            value, at = given["refresh.timezone"]
            if cron_text is None:
                raise InvalidParameterValue(
                    'parameter "refresh.timezone" needs a cron schedule', position=at,
                    hint="Set refresh.cron as well, or first.")
            _, zone = cron.check(cron_text, value or "", position=at)
        return interval, cron_text, zone
    if "refresh.interval.sec" in given or "refresh.cron" in given:
        return policy.DEFAULT_INTERVAL_SEC, None, None  # the default schedule: every 60 s
    if "refresh.timezone" in given and cron_text is not None:
        zone = "UTC"
    return interval, cron_text, zone


#: retries, auto-suspend and catch-up jitter (issue 29, items 4 and 5)
POLICY_OPTIONS = frozenset(k for k in policy.OPTIONS if k not in OPTIONS)


def set_options(plane: ControlPlane, stmt: ViewOptions, info: SessionInfo,
                session: BackendSession | None) -> Result:
    db = info.database
    if stmt.bad_at is not None:
        near = f'at or near "{stmt.bad_near}"' if stmt.bad_near is not None else "at end of input"
        raise PgSyntaxError(f"syntax error {near}", position=stmt.bad_at)
    name = plane.resolve_name(info, stmt.name, session)
    with plane.name_lock(info, name, "alter"):
        job = _job(plane, name, info)
        given: dict[str, tuple[str | None, int]] = {}
        for (key, value), at in zip(stmt.options, stmt.positions):
            if key not in OPTIONS and key not in POLICY_OPTIONS:
                raise InvalidParameterValue(f'unrecognized parameter "{key}"', position=at)
            if key in given:
                raise InvalidParameterValue(f'parameter "{key}" specified more than once',
                                            position=at)
            given[key] = (value, at)
        interval, cron_text, zone = _schedule(
            job, stmt, {k: v for k, v in given.items() if k in OPTIONS})
        policy_given = [(k, v) for k, v in given.items() if k in POLICY_OPTIONS]
        changes: dict[str, Any] = option_values([(k, v) for k, (v, _) in policy_given],
                                                [at for _, (_, at) in policy_given],
                                                reset=stmt.reset)
        changes.update(refresh_interval_sec=interval, refresh_cron=cron_text,
                       refresh_timezone=zone)
        if any(getattr(job, f) != v for f, v in changes.items()):
            job = plane.jobs.update(db, name, **changes)
            plane.scheduler.track(job)  # due by the new schedule (an older slot is stale)
    shown = "".join(f", {k} = {policy.value(job, k)}" for k, _ in policy_given)
    log.info('batch refresh job "%s" of database "%s" now runs %s%s (set by %s)', name,
             db, job.schedule_text, shown, info.user,
             extra={"event": "job_altered", **session_fields(info)})
    return command(TAG)


def option_values(options: Iterable[tuple[str, str | None]], positions: Iterable[int | None],
                  *, reset: bool = False) -> dict[str, int | None]:
    """The job fields ``options`` set, each read and checked by :mod:`pgbarrier.jobs.policy`
    (22023 for an unknown option, a bad value, or one named twice; nothing is changed
    then). A value of None (RESET) is the option's default: ``refresh.interval.sec`` takes
    it, the others keep None (the default, whatever it is later)."""
    changes: dict[str, int | None] = {}
    seen: set[str] = set()
    for (key, text), at in zip(options, positions):
        opt = policy.option(key, at)
        if key in seen:
            raise InvalidParameterValue(f'parameter "{key}" specified more than once',
                                        position=at)
        seen.add(key)
        if reset or text is None:
            changes[opt.field] = opt.default if opt.field == "refresh_interval_sec" else None
        else:
            changes[opt.field] = opt.parse(text, at)
    return changes
