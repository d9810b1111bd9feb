"""Refresh runs, for ``rw_catalog.rw_refresh_history``, and their bounded keeping.

Rules: a run is recorded ``running`` when it starts and gets exactly one final
status (``succeeded``, ``failed`` with its error and SQLSTATE, or ``cancelled``), with
its ``duration_ms`` (finish minus start) and the ``node`` that ran it (the process: its
leader holder name, see :mod:`pgbarrier.leadership`). A scheduled slot that could not run
(database paused, view suspended) is one row of status ``skipped`` with the reason as its
error, written once, finished when written (:meth:`RefreshHistory.skipped`). Triggers:
``create``, ``schedule``, ``manual``, ``retry``, ``catchup`` (and ``vanished``). With a
meta store every start and finish is written to it before it shows here (not under the
history's lock, so runs of different jobs are written together). Every run that ends,
whatever ends it, goes through :meth:`RefreshHistory.finish` or ``skipped`` and then
``on_finished``: the one place that hears of finished runs (metrics, events).

The history is bounded per job, by count and by age (0 turns either off): in
memory at once (the newest ``keep_per_job`` of each job); in the meta store by
:class:`HistoryPruner`, a thread of its own (never a barrier thread) that runs a
prune pass at start and every ``interval_s`` seconds. A pass deletes in batches
(:meth:`~pgbarrier.meta.store.MetaStore.prune_runs`), so a barrier's write waits
for one batch at most, and then drops runs older than the age from memory. A
run still ``running`` is never pruned by age. What ``rw_refresh_history`` shows
is what is kept: the same runs in memory and in the store after a pass.

:meth:`RefreshHistory.restore` gets only what is kept (the newest
``keep_per_job`` runs of each recorded job within the age, read through the
store's primary key), so start-up does not grow with the runs ever recorded;
new run ids continue above the highest loaded (each job's newest is loaded).
"""

from __future__ import annotations

import datetime as dt
import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, fields, replace

from pgbarrier.errors import PgError
from pgbarrier.meta.store import MetaStore, RunRecord

log = logging.getLogger(__name__)

#: defaults of --refresh-history-per-job, --refresh-history-max-age-sec (a week)
DEFAULT_PER_JOB = 1000
DEFAULT_MAX_AGE_S = 7 * 24 * 3600
#: seconds between prune passes, and rows deleted per meta-store transaction
DEFAULT_PRUNE_INTERVAL_S = 60.0
DEFAULT_PRUNE_BATCH = 1000


@dataclass(frozen=True)
class RefreshRun:
    database: str
    job: str
    run_id: int
    trigger: str  # create | schedule | manual | retry | catchup | vanished
    started_at: dt.datetime
    target_epoch: int
    status: str = "running"  # running | succeeded | failed | cancelled | skipped
    finished_at: dt.datetime | None = None
    rows: int | None = None
    error: str | None = None
    sqlstate: str | None = None
    duration_ms: int | None = None
    node: str | None = None


def _shallow(obj: object) -> dict[str, object]:
    """A dataclass's fields (``asdict`` deep-copies every value: slow for thousands of runs)."""
    return {f.name: getattr(obj, f.name) for f in fields(obj)}  # type: ignore[arg-type]


def _record(run: RefreshRun) -> RunRecord:
    return RunRecord(**_shallow(run))  # type: ignore[arg-type]


class RefreshHistory:
    def __init__(self, keep_per_job: int = DEFAULT_PER_JOB, store: MetaStore | None = None, *,
                 max_age_s: float = 0, batch: int = DEFAULT_PRUNE_BATCH,
                 now: Callable[[], dt.datetime] | None = None) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._runs: dict[tuple[str, str], deque[RefreshRun]] = {}
        self.keep_per_job = max(keep_per_job, 0)
        self._keep = self.keep_per_job or None  # deque maxlen: None is unbounded
        self.max_age_s = max(max_age_s, 0)
        self.batch = batch
        self._now = now or (lambda: dt.datetime.now(dt.timezone.utc))
        #: called with each run that ended (metrics), after it is recorded
        self.on_finished: Callable[[RefreshRun], None] | None = None
        #: the process that runs refreshes, recorded with each run (set when it takes office)
        self.node: str | None = None

    def cutoff(self) -> dt.datetime | None:
        """Runs started before this are past the age limit (None: no age limit)."""
        if not self.max_age_s:
            return None
        return self._now() - dt.timedelta(seconds=self.max_age_s)

    def prune(self, between: Callable[[], None] | None = None) -> int:
        """One prune pass (see the module rules); returns the stored runs deleted."""
        before = self.cutoff()
        deleted = 0
        if self._store is not None and (self.keep_per_job or before is not None):
            deleted = self._store.prune_runs(self.keep_per_job, before, batch=self.batch,
                                             between=between)
        if before is not None:
            with self._lock:
                for key, runs in self._runs.items():
                    if any(r.started_at < before and r.status != "running" for r in runs):
                        self._runs[key] = deque((r for r in runs if r.started_at >= before
                                                 or r.status == "running"), maxlen=self._keep)
        return deleted

    def next_run_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def start(self, database: str, job: str, trigger: str, target_epoch: int,
              at: dt.datetime, run_id: int | None = None) -> RefreshRun:
        if run_id is None:
            run_id = self.next_run_id()
        run = RefreshRun(database, job, run_id, trigger, at, target_epoch, node=self.node)
        if self._store is not None:
            self._store.put_run(_record(run))
        with self._lock:
            self._runs.setdefault((database, job), deque(maxlen=self._keep)).append(run)
        return run

    def finish(self, run: RefreshRun, status: str, at: dt.datetime, *, rows: int | None = None,
               error: str | None = None, sqlstate: str | None = None) -> RefreshRun:
        duration = max(0, round((at - run.started_at).total_seconds() * 1000))
        done = replace(run, status=status, finished_at=at, rows=rows, error=error,
                       sqlstate=sqlstate, duration_ms=duration)
        if self._store is not None:
            self._store.put_run(_record(done))
        with self._lock:
            runs = self._runs.get((run.database, run.job), deque())
            for i, r in enumerate(runs):
                if r.run_id == run.run_id:
                    runs[i] = done
        return self._ended(done)

    def skipped(self, database: str, job: str, trigger: str, target_epoch: int,
                at: dt.datetime, reason: str, cause: str) -> RefreshRun | None:
        """A slot that could not run: one ``skipped`` row with ``reason`` as its error,
        unless the job's latest skipped row was for the same ``cause`` (a prefix of the
        reason naming the pause or suspension and when it began: one row per pause or
        suspension, also across a restart). Returns the row written, or None."""
        with self._lock:
            runs = self._runs.get((database, job), ())
            last = next((r for r in reversed(runs) if r.status == "skipped"), None)
        if last is not None and (last.error or "").startswith(cause):
            return None
        run = RefreshRun(database, job, self.next_run_id(), trigger, at, target_epoch,
                         status="skipped", finished_at=at, error=reason, node=self.node)
        if self._store is not None:
            self._store.put_run(_record(run))
        with self._lock:
            self._runs.setdefault((database, job), deque(maxlen=self._keep)).append(run)
        return self._ended(run)

    def _ended(self, done: RefreshRun) -> RefreshRun:
        if self.on_finished is not None:
            self.on_finished(done)
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

    def rename(self, database: str, old: str, new: str) -> None:
        """The job's runs are under its new name (the meta store's were renamed with it)."""
        with self._lock:
            runs = self._runs.pop((database, old), None)
            if runs is not None:
                self._runs[(database, new)] = deque((replace(r, job=new) for r in runs),
                                                    maxlen=runs.maxlen)

    def forget(self, database: str, job: str) -> None:
        with self._lock:
            self._runs.pop((database, job), None)

    def runs(self) -> list[RefreshRun]:
        with self._lock:
            return [r for key in sorted(self._runs) for r in self._runs[key]]


class _Stopped(Exception):
    pass


class HistoryPruner:
    """The background prune passes of one :class:`RefreshHistory` (module rules).

    ``between`` (tests) is called after each deleted batch, on the pruner's thread;
    :meth:`wait_passes` waits for a number of finished passes.
    """

    def __init__(self, history: RefreshHistory, interval_s: float = DEFAULT_PRUNE_INTERVAL_S) -> None:
        self.history = history
        self.interval_s = interval_s
        self.between: Callable[[], None] | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._done = threading.Condition()
        self.passes = 0
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="pgbarrier-history-prune",
                                        daemon=True)
        self._thread.start()

    def request(self) -> None:
        """Run a pass now (or right after the one under way)."""
        self._wake.set()

    def wait_passes(self, count: int, timeout: float) -> bool:
        with self._done:
            return self._done.wait_for(lambda: self.passes >= count, timeout)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop after the batch under way (a pass is cut short, the rest waits for the next start)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _between(self) -> None:
        if self.between is not None:
            self.between()
        if self._stop.is_set():
            raise _Stopped

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            started = time.monotonic()
            try:
                deleted = self.history.prune(between=self._between)
            except _Stopped:
                return
            except PgError as exc:  # the store refusing (it logs that once): next pass
                log.debug("pruning the refresh history failed: %s", exc.message)
            except Exception:  # the next pass tries again; runs are still recorded meanwhile
                log.exception("pruning the refresh history failed")
            else:
                if deleted:
                    log.info("refresh history pruned: %d runs deleted in %.3f s", deleted,
                             time.monotonic() - started)
            with self._done:
                self.passes += 1
                self._done.notify_all()
            self._wake.wait(self.interval_s)
