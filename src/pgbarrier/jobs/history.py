"""Refresh runs, for ``rw_catalog.rw_refresh_history``.

Rules: a run is recorded ``running`` when it starts and gets exactly one final
status (``succeeded``, ``failed`` with its error, or ``cancelled``). The newest
``keep_per_job`` runs of each job are kept in memory. Thread-safe. With a
meta store every start and finish is written to it before it shows here (not
under the history's lock, so runs of different jobs are written together);
:meth:`RefreshHistory.restore` loads the stored runs at start and continues the
run ids above them.
"""

from __future__ import annotations

import datetime as dt
import itertools
import threading
from collections import deque
from dataclasses import dataclass, fields, replace

from pgbarrier.meta.store import MetaStore, RunRecord


@dataclass(frozen=True)
class RefreshRun:
    database: str
    job: str
    run_id: int
    trigger: str  # create | schedule | manual
    started_at: dt.datetime
    target_epoch: int
    status: str = "running"  # running | succeeded | failed | cancelled
    finished_at: dt.datetime | None = None
    rows: int | None = None
    error: str | None = None


def _shallow(obj: object) -> dict[str, object]:
    """A dataclass's fields (``asdict`` deep-copies every value: slow for thousands of runs)."""
    return {f.name: getattr(obj, f.name) for f in fields(obj)}  # type: ignore[arg-type]


def _record(run: RefreshRun) -> RunRecord:
    return RunRecord(**_shallow(run))  # type: ignore[arg-type]


class RefreshHistory:
    def __init__(self, keep_per_job: int = 1000, store: MetaStore | None = None) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._runs: dict[tuple[str, str], deque[RefreshRun]] = {}
        self._keep = keep_per_job

    def next_run_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def start(self, database: str, job: str, trigger: str, target_epoch: int,
              at: dt.datetime, run_id: int | None = None) -> RefreshRun:
        if run_id is None:
            run_id = self.next_run_id()
        run = RefreshRun(database, job, run_id, trigger, at, target_epoch)
        if self._store is not None:
            self._store.put_run(_record(run))
        with self._lock:
            self._runs.setdefault((database, job), deque(maxlen=self._keep)).append(run)
        return run

    def finish(self, run: RefreshRun, status: str, at: dt.datetime, *, rows: int | None = None,
               error: str | None = None) -> RefreshRun:
        done = replace(run, status=status, finished_at=at, rows=rows, error=error)
        if self._store is not None:
            self._store.put_run(_record(done))
        with self._lock:
            runs = self._runs.get((run.database, run.job), deque())
            for i, r in enumerate(runs):
                if r.run_id == run.run_id:
                    runs[i] = done
            return done

    def restore(self, runs: list[RunRecord]) -> None:
        """Load stored runs (oldest first); new run ids continue above the highest."""
        with self._lock:
            top = 0
            for rec in runs:
                run = RefreshRun(**_shallow(rec))
                self._runs.setdefault((run.database, run.job), deque(maxlen=self._keep)).append(run)
                top = max(top, run.run_id)
            self._ids = itertools.count(top + 1)

    def forget(self, database: str, job: str) -> None:
        with self._lock:
            self._runs.pop((database, job), None)

    def runs(self) -> list[RefreshRun]:
        with self._lock:
            return [r for key in sorted(self._runs) for r in self._runs[key]]
