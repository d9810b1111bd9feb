"""Materialized views known to this process: batch-refresh jobs and streaming views.

Rules this module keeps:

* A name is reserved before its create command rides a barrier, so two sessions
  cannot create the same view at once (the second gets 42P07).
* A job's status changes only through :mod:`pgbarrier.jobs.state` transitions,
  applied under the registry's lock (:meth:`JobRegistry.transition`).
* Thread-safe: sessions, refresh runs and the barrier collectors (commands'
  ``on_collect`` and barrier listeners) call in concurrently; nothing here
  touches a backend.
* With a meta store, every change to a job or streaming view is written to it
  BEFORE the in-memory state changes (under that view's own lock, so its writes
  keep the order of its changes, while writes of different views go to the
  store together); a failed write raises and changes nothing. Reservations
  are not persisted. A batch-refresh job is recorded ``creating`` before its
  snapshot is built and ``dropping`` before its backend table is dropped; a
  streaming view's record is written before its backend view is created
  (:meth:`JobRegistry.intend_streaming`) and deleted after it is dropped, so
  a record never lacks what recovery needs to finish or undo the DDL.
  Recovery hands back what it loaded with ``persist=False`` (nothing to write).
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from pgbarrier.errors import DuplicateTable, UndefinedTable
from pgbarrier import cron
from pgbarrier.jobs import state as js
from pgbarrier.jobs.state import JobStatus
from pgbarrier.meta.store import JobRecord, MetaStore, ViewRecord


@dataclass(frozen=True)
class BatchRefreshJob:
    name: str
    database: str
    definition: str
    query: str
    columns: tuple[str, ...] | None
    refresh_interval_sec: int
    status: JobStatus
    #: the epoch the view's first snapshot was taken at (prev_epoch of its create barrier)
    snapshot_epoch: int
    created_at: dt.datetime
    last_refreshed_at: dt.datetime | None = None
    #: ALTER MATERIALIZED VIEW v SUSPEND: when, by whom, why (None: not suspended); a
    #: suspended job takes no scheduled runs (jobs/scheduler.py)
    suspended_at: dt.datetime | None = None
    suspended_by: str | None = None
    suspend_reason: str | None = None
    #: refresh.retry_backoff.sec, refresh.max_failures, refresh.jitter.sec (None: the
    #: default, see jobs/policy.py)
    retry_backoff_sec: int | None = None
    max_failures: int | None = None
    jitter_sec: int | None = None
    #: failed scheduled runs in a row since the last successful run
    consecutive_failures: int = 0
    #: a calendar schedule (``BATCH REFRESH CRON``, ``refresh.cron``) and its time zone's
    #: IANA name; None: the job runs every ``refresh_interval_sec``
    refresh_cron: str | None = None
    refresh_timezone: str | None = None

    def due_after_ms(self, after_ms: int) -> int:
        """When the next scheduled run is due (unix ms), counting from ``after_ms`` (the
        run the schedule counts from): ``refresh_interval_sec`` later, or the first slot of
        ``refresh_cron`` strictly after it (:mod:`pgbarrier.cron`, its DST rule)."""
        if self.refresh_cron is None:
            return after_ms + self.refresh_interval_sec * 1000
        start = dt.datetime.fromtimestamp(after_ms / 1000, dt.timezone.utc)
        slot = cron.parse(self.refresh_cron).next_after(
            start, cron.zone(self.refresh_timezone or "UTC"))
        if slot is None:  # parse() refuses expressions that never fire: not reached
            return after_ms + cron.HORIZON_MS
        return int(slot.timestamp() * 1000)

    @property
    def schedule_text(self) -> str:
        """The schedule in words, for logs: ``every 60 s`` or ``cron '0 3 * * *' in UTC``."""
        if self.refresh_cron is None:
            return f"every {self.refresh_interval_sec} s"
        return f"cron '{self.refresh_cron}' in {self.refresh_timezone or 'UTC'}"

    @property
    def suspended(self) -> bool:
        return self.suspended_at is not None

    @property
    def shown_status(self) -> str:
        """``status`` as rw_batch_refresh_jobs shows it: ``suspended`` for a suspended job
        that is not refreshing (a manual REFRESH runs on one)."""
        name = self.status.name
        return "suspended" if self.suspended and name in ("idle", "failed") else name


@dataclass(frozen=True)
class StreamingView:
    name: str
    database: str
    definition: str


def job_to_record(job: BatchRefreshJob) -> JobRecord:
    st = job.status
    return JobRecord(
        database=job.database, name=job.name, definition=job.definition, query=job.query,
        columns=job.columns, refresh_interval_sec=job.refresh_interval_sec, status=st.name,
        snapshot_epoch=job.snapshot_epoch, last_committed_epoch=js.last_committed_epoch(st),
        created_at=job.created_at, last_refreshed_at=job.last_refreshed_at,
        target_epoch=getattr(st, "target_epoch", None), run_id=getattr(st, "run_id", None),
        failed_epoch=getattr(st, "failed_epoch", None), error=getattr(st, "error", None),
        suspended_at=job.suspended_at, suspended_by=job.suspended_by,
        suspend_reason=job.suspend_reason, refresh_cron=job.refresh_cron,
        refresh_timezone=job.refresh_timezone, retry_backoff_sec=job.retry_backoff_sec,
        max_failures=job.max_failures, jitter_sec=job.jitter_sec,
        consecutive_failures=job.consecutive_failures)


def status_from_record(rec: JobRecord) -> JobStatus:
    last = rec.last_committed_epoch if rec.last_committed_epoch is not None else rec.snapshot_epoch
    if rec.status == "creating":
        return js.Creating(rec.snapshot_epoch)
    if rec.status == "idle":
        return js.Idle(last)
    if rec.status == "refreshing":
        return js.Refreshing(last, rec.target_epoch or last, rec.run_id or 0)
    if rec.status == "failed":
        return js.Failed(last, rec.error or "", rec.failed_epoch or last)
    return js.Dropping()


def job_from_record(rec: JobRecord) -> BatchRefreshJob:
    return BatchRefreshJob(
        name=rec.name, database=rec.database, definition=rec.definition, query=rec.query,
        columns=rec.columns, refresh_interval_sec=rec.refresh_interval_sec,
        status=status_from_record(rec), snapshot_epoch=rec.snapshot_epoch,
        created_at=rec.created_at, last_refreshed_at=rec.last_refreshed_at,
        suspended_at=rec.suspended_at, suspended_by=rec.suspended_by,
        suspend_reason=rec.suspend_reason, refresh_cron=rec.refresh_cron,
        refresh_timezone=rec.refresh_timezone, retry_backoff_sec=rec.retry_backoff_sec,
        max_failures=rec.max_failures, jitter_sec=rec.jitter_sec,
        consecutive_failures=rec.consecutive_failures or 0)


class JobRegistry:
    def __init__(self, store: MetaStore | None = None) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._jobs: dict[tuple[str, str], BatchRefreshJob | None] = {}
        self._streaming: dict[tuple[str, str], StreamingView] = {}
        #: one lock per view name, held across its meta store write and its change here
        self._key_locks: dict[tuple[str, str], threading.Lock] = {}

    def _key_lock(self, database: str, name: str) -> threading.Lock:
        with self._lock:
            return self._key_locks.setdefault((database, name), threading.Lock())

    def reserve(self, database: str, name: str) -> None:
        """Claim ``name``; 42P07 if a job (or a pending create) already has it."""
        with self._lock:
            if (database, name) in self._jobs or (database, name) in self._streaming:
                raise DuplicateTable(f'relation "{name}" already exists')
            self._jobs[(database, name)] = None

    def release(self, database: str, name: str) -> None:
        """Forget a reservation or a job (a failed create, or a drop)."""
        with self._key_lock(database, name):
            if self._store is not None and self.get(database, name) is not None:
                self._store.delete_job(database, name)
            with self._lock:
                self._jobs.pop((database, name), None)

    def register(self, job: BatchRefreshJob, *, persist: bool = True) -> None:
        """Add ``job``; ``persist=False`` for one loaded unchanged from the meta store."""
        with self._key_lock(job.database, job.name):
            if self._store is not None and persist:
                self._store.put_job(job_to_record(job))
            with self._lock:
                self._jobs[(job.database, job.name)] = job

    def transition(self, database: str, name: str, fn: Callable[..., JobStatus], *args: Any,
                   **changes: Any) -> BatchRefreshJob:
        """Apply ``fn(status, *args)`` (a :mod:`state` transition) and field ``changes``.

        Raises 42P01 when there is no such job, and the transition's
        ``IllegalTransition`` (changing nothing) when the edge does not exist.
        """
        with self._key_lock(database, name):
            job = self.get(database, name)
            if job is None:
                raise UndefinedTable(f'materialized view "{name}" does not exist')
            new = replace(job, status=fn(job.status, *args), **changes)
            if self._store is not None:
                self._store.put_job(job_to_record(new))
            with self._lock:
                self._jobs[(database, name)] = new
            return new

    def update(self, database: str, name: str, **changes: Any) -> BatchRefreshJob:
        """Change fields of a job other than its status (durably first); 42P01 when
        there is no such job."""
        with self._key_lock(database, name):
            job = self.get(database, name)
            if job is None:
                raise UndefinedTable(f'materialized view "{name}" does not exist')
            new = replace(job, **changes)
            if self._store is not None:
                self._store.put_job(job_to_record(new))
            with self._lock:
                self._jobs[(database, name)] = new
            return new

    def rename(self, database: str, old: str, new: str) -> BatchRefreshJob:
        """The job ``old`` is ``new`` from now on (durably, with its runs); ``new`` must be
        free (the caller holds both names)."""
        first, second = sorted((old, new))
        with self._key_lock(database, first), self._key_lock(database, second):
            job = self.get(database, old)
            if job is None:
                raise UndefinedTable(f'materialized view "{old}" does not exist')
            if self._store is not None:
                self._store.rename_job(database, old, new)
            renamed = replace(job, name=new)
            with self._lock:
                del self._jobs[(database, old)]
                self._jobs[(database, new)] = renamed
            return renamed

    def get(self, database: str, name: str) -> BatchRefreshJob | None:
        with self._lock:
            return self._jobs.get((database, name))

    def is_job(self, database: str, name: str) -> bool:
        with self._lock:
            return self._jobs.get((database, name)) is not None

    def jobs(self, database: str | None = None) -> list[BatchRefreshJob]:
        with self._lock:
            return sorted((j for j in self._jobs.values()
                           if j is not None and (database is None or j.database == database)),
                          key=lambda j: (j.database, j.name))

    # streaming views ---------------------------------------------------------

    def add_streaming(self, view: StreamingView, *, persist: bool = True) -> None:
        with self._key_lock(view.database, view.name):
            if self._store is not None and persist:
                self._store.put_view(ViewRecord(view.database, view.name, view.definition))
            with self._lock:
                self._streaming[(view.database, view.name)] = view

    def intend_streaming(self, view: StreamingView) -> None:
        """Record ``view`` durably before its backend view is created (the name is reserved)."""
        if self._store is not None:
            with self._key_lock(view.database, view.name):
                self._store.put_view(ViewRecord(view.database, view.name, view.definition))

    def abandon_streaming(self, database: str, name: str) -> None:
        """Forget the record of a streaming view whose create failed."""
        if self._store is not None:
            with self._key_lock(database, name):
                self._store.delete_view(database, name)

    def remove_streaming(self, database: str, name: str) -> StreamingView | None:
        with self._key_lock(database, name):
            if self._store is not None and self.streaming_view(database, name) is not None:
                self._store.delete_view(database, name)
            with self._lock:
                return self._streaming.pop((database, name), None)

    def streaming_view(self, database: str, name: str) -> StreamingView | None:
        with self._lock:
            return self._streaming.get((database, name))

    def streaming_views(self, database: str | None = None) -> list[StreamingView]:
        with self._lock:
            return sorted((v for v in self._streaming.values()
                           if database is None or v.database == database),
                          key=lambda v: (v.database, v.name))
