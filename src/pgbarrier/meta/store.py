"""The meta store interface and its records.

Rules this module keeps:

* Everything that must survive a restart goes through :class:`MetaStore`:
  databases with their pause state and epochs, batch-refresh jobs, streaming
  views and refresh history. Nothing else in pgbarrier writes durable state.
* Records are frozen dataclasses; a ``put_*`` is an upsert that is durable when
  it returns (each call is its own transaction), so a caller may acknowledge
  its client right after.
* Epochs are stored as signed 64-bit integers (they stay below 2**63 until
  the year 2300 or so).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from collections.abc import Callable
from typing import Protocol


@dataclass(frozen=True)
class DatabaseRecord:
    name: str
    paused: bool = False
    paused_at: dt.datetime | None = None
    paused_by: str | None = None
    #: the highest epoch handed out (the next barrier's prev epoch)
    prev_epoch: int | None = None
    committed_epoch: int | None = None
    #: a DROP DATABASE began (``mark_database_dropping``) and has not finished
    dropping: bool = False
    #: ``PAUSE ... REASON 'text'`` and ``PAUSE FOR``'s automatic resume time
    pause_reason: str | None = None
    resumes_at: dt.datetime | None = None


@dataclass(frozen=True)
class JobRecord:
    database: str
    name: str
    definition: str
    query: str
    columns: tuple[str, ...] | None
    refresh_interval_sec: int
    #: creating | idle | refreshing | failed | dropping
    status: str
    snapshot_epoch: int
    last_committed_epoch: int | None
    created_at: dt.datetime
    last_refreshed_at: dt.datetime | None = None
    target_epoch: int | None = None
    run_id: int | None = None
    failed_epoch: int | None = None
    error: str | None = None
    #: ALTER MATERIALIZED VIEW v SUSPEND: when, by whom, why (None: not suspended)
    suspended_at: dt.datetime | None = None
    suspended_by: str | None = None
    suspend_reason: str | None = None
    #: a calendar schedule (jobs/cron.py) and its IANA time zone; None: every
    #: refresh_interval_sec
    refresh_cron: str | None = None
    refresh_timezone: str | None = None
    #: WITH (refresh.retry_backoff.sec, refresh.max_failures, refresh.jitter.sec): None is
    #: the default (jobs/policy.py)
    retry_backoff_sec: int | None = None
    max_failures: int | None = None
    jitter_sec: int | None = None
    #: failed scheduled runs since the last success (jobs/scheduler.py)
    consecutive_failures: int = 0


@dataclass(frozen=True)
class ViewRecord:
    database: str
    name: str
    definition: str


@dataclass(frozen=True)
class RunRecord:
    database: str
    job: str
    run_id: int
    trigger: str
    started_at: dt.datetime
    target_epoch: int
    status: str = "running"
    finished_at: dt.datetime | None = None
    rows: int | None = None
    error: str | None = None
    #: the failure's SQLSTATE, how long the run took, the process that ran it
    sqlstate: str | None = None
    duration_ms: int | None = None
    node: str | None = None


class MetaStore(Protocol):
    """Durable meta state; thread-safe."""

    def bootstrapped(self) -> bool:
        """True once :meth:`mark_bootstrapped` ran (i.e. this is not the first start)."""
        ...

    def mark_bootstrapped(self) -> None: ...

    def marked(self, key: str) -> bool:
        """True once :meth:`mark` ran for ``key`` (a one-time start-up step is done)."""
        ...

    def mark(self, key: str) -> None: ...

    def schema_version(self) -> int: ...

    def load_databases(self) -> list[DatabaseRecord]: ...

    def put_database(self, rec: DatabaseRecord) -> None:
        """Insert or update the database's state; never changes ``dropping``."""
        ...

    def mark_database_dropping(self, name: str) -> None:
        """Record that a DROP DATABASE of ``name`` began (durable before it returns)."""
        ...

    def delete_database(self, name: str) -> None:
        """Forget the database and its jobs, views and runs."""
        ...

    def rename_database(self, old: str, new: str) -> None:
        """``ALTER DATABASE old RENAME TO new``: the database's record and everything of
        it, in one transaction."""
        ...

    def load_epoch_ceiling(self) -> int | None:
        """The epoch lease every database's epochs are at or below (None: never written)."""
        ...

    def put_epoch_ceiling(self, epoch: int, *, lower: bool = False) -> None:
        """Raise the lease to ``epoch`` (a lower value is ignored, unless ``lower``: a clean
        shutdown's exact ceiling, nothing else running)."""
        ...

    def load_jobs(self) -> list[JobRecord]: ...

    def put_job(self, rec: JobRecord) -> None: ...

    def rename_job(self, database: str, old: str, new: str) -> None:
        """The job ``old`` and its runs are ``new``'s now, in one transaction."""
        ...

    def delete_job(self, database: str, name: str) -> None:
        """Forget the job and its runs."""
        ...

    def load_views(self) -> list[ViewRecord]: ...

    def put_view(self, rec: ViewRecord) -> None: ...

    def delete_view(self, database: str, name: str) -> None: ...

    def load_runs(self, per_job: int = 0,
                  since: dt.datetime | None = None) -> list[RunRecord]:
        """The stored runs of every recorded job, oldest first per job: only the newest
        ``per_job`` of each (0: all) and only those started at or after ``since``."""
        ...

    def put_run(self, rec: RunRecord) -> None: ...

    def prune_runs(self, per_job: int = 0, before: dt.datetime | None = None, *,
                   batch: int = 1000, between: Callable[[], None] | None = None) -> int:
        """Delete all but the newest ``per_job`` runs of each job (0: no count limit) and
        every finished run started before ``before``; at most ``batch`` rows per
        transaction, calling ``between()`` after each, so other writes wait for one batch
        at most. Returns the rows deleted."""
        ...

    def flush(self) -> None:
        """Make sure everything written is on disk (a no-op where writes already are)."""
        ...

    def close(self) -> None: ...
