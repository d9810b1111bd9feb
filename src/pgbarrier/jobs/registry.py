"""Materialized views known to this process: batch-refresh jobs and streaming views.

Rules this module keeps:

* A name is reserved before its create command rides a barrier, so two sessions
  cannot create the same view at once (the second gets 42P07).
* A job's status changes only through :mod:`pgbarrier.jobs.state` transitions,
  applied under the registry's lock (:meth:`JobRegistry.transition`).
* Thread-safe: sessions, refresh runs and barrier workers call in concurrently;
  nothing here blocks or touches a backend.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from pgbarrier.errors import DuplicateTable, UndefinedTable
from pgbarrier.jobs.state import JobStatus


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


@dataclass(frozen=True)
class StreamingView:
    name: str
    database: str
    definition: str


class JobRegistry:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[tuple[str, str], BatchRefreshJob | None] = {}
        self._streaming: dict[tuple[str, str], StreamingView] = {}

    def reserve(self, database: str, name: str) -> None:
        """Claim ``name``; 42P07 if a job (or a pending create) already has it."""
        with self._lock:
            if (database, name) in self._jobs or (database, name) in self._streaming:
                raise DuplicateTable(f'relation "{name}" already exists')
            self._jobs[(database, name)] = None

    def release(self, database: str, name: str) -> None:
        """Forget a reservation or a job (a failed create, or a drop)."""
        with self._lock:
            self._jobs.pop((database, name), None)

    def register(self, job: BatchRefreshJob) -> None:
        with self._lock:
            self._jobs[(job.database, job.name)] = job

    def transition(self, database: str, name: str, fn: Callable[..., JobStatus], *args: Any,
                   **changes: Any) -> BatchRefreshJob:
        """Apply ``fn(status, *args)`` (a :mod:`state` transition) and field ``changes``.

        Raises 42P01 when there is no such job, and the transition's
        ``IllegalTransition`` (changing nothing) when the edge does not exist.
        """
        with self._lock:
            job = self._jobs.get((database, name))
            if job is None:
                raise UndefinedTable(f'materialized view "{name}" does not exist')
            new = replace(job, status=fn(job.status, *args), **changes)
            self._jobs[(database, name)] = new
            return new

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

    def add_streaming(self, view: StreamingView) -> None:
        with self._lock:
            self._streaming[(view.database, view.name)] = view

    def remove_streaming(self, database: str, name: str) -> StreamingView | None:
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
