"""Batch-refresh jobs known to this process, per database.

Rules this module keeps:

* A name is reserved before its create command rides a barrier, so two sessions
  cannot create the same view at once (the second gets 42P07).
* Jobs change state only through :mod:`pgbarrier.jobs.state` transitions.
* Thread-safe: sessions and the barrier worker call in concurrently; nothing
  here blocks or touches a backend.
"""

from __future__ import annotations

import datetime as dt
import threading
from dataclasses import dataclass, replace

from pgbarrier.errors import DuplicateTable
from pgbarrier.jobs.state import JobStatus, created


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


class JobRegistry:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[tuple[str, str], BatchRefreshJob | None] = {}

    def reserve(self, database: str, name: str) -> None:
        """Claim ``name``; 42P07 if a job (or a pending create) already has it."""
        with self._lock:
            if (database, name) in self._jobs:
                raise DuplicateTable(f'relation "{name}" already exists')
            self._jobs[(database, name)] = None

    def release(self, database: str, name: str) -> None:
        """Forget a reservation or a job (a failed create, or a drop)."""
        with self._lock:
            self._jobs.pop((database, name), None)

    def register(self, job: BatchRefreshJob) -> None:
        with self._lock:
            self._jobs[(job.database, job.name)] = job

    def mark_created(self, database: str, name: str, at: dt.datetime) -> BatchRefreshJob:
        with self._lock:
            job = self._jobs[(database, name)]
            assert job is not None
            new = replace(job, status=created(job.status), last_refreshed_at=at)
            self._jobs[(database, name)] = new
            return new

    def get(self, database: str, name: str) -> BatchRefreshJob | None:
        with self._lock:
            return self._jobs.get((database, name))

    def is_job(self, database: str, name: str) -> bool:
        with self._lock:
            return self._jobs.get((database, name)) is not None

    def jobs(self) -> list[BatchRefreshJob]:
        with self._lock:
            return sorted((j for j in self._jobs.values() if j is not None),
                          key=lambda j: (j.database, j.name))
