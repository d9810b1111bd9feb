"""Batch-refresh runs: when they start, where they run, how they commit.

Rules this module keeps (SPEC section 2):

* Driven by barriers: :meth:`RefreshScheduler.on_barrier` is a barrier
  listener. On a checkpoint of a database that is not paused it starts every job
  whose next run is due: the committed epoch is at or past the job's next slot
  (:meth:`RefreshScheduler.next_slot_ms`: the refresh interval, physical time, past
  its last committed epoch, or past its last failed attempt). The run's target
  epoch is that committed epoch. Each job has one current slot (its due time and
  trigger, :meth:`RefreshScheduler.track`); heap entries of older slots are skipped.
* Retries (:mod:`pgbarrier.jobs.policy`): after a failed scheduled run the next
  attempt (trigger ``retry``) is due after the view's exponential backoff, not a
  whole interval; the failed scheduled runs in a row are counted in the job
  (``consecutive_failures``, durable), and reaching ``refresh.max_failures``
  suspends the view in the same meta-store write that records the failure. Any
  successful run sets the count back to 0. The backoff's jitter is fixed by the
  failed attempt, so the due time is the same after a restart.
* Catch-up without storms: after pgbarrier starts (:meth:`RefreshScheduler.restored`),
  a database resumes or a view is resumed (:meth:`RefreshScheduler.resumed`), a view
  whose slot passed meanwhile runs once (trigger ``catchup``), never once per missed
  slot, at a random moment within its ``refresh.jitter.sec``; one whose slot had not
  come keeps it (the anchors, last committed epoch and failed attempt, are durable), so
  a restart does not make every view run at once. No more runs execute at once than
  the refresh pool has workers: runs started beyond that wait in its queue, in the
  order they fell due (holding them back in the heap instead, to start each when a
  worker frees, cost a checkpoint per start and made 100 busy databases' runs seconds
  late: test_many_databases).
* Skipped slots: a slot that falls due while its database is paused or its view is
  suspended is recorded once, as one ``skipped`` row with the reason
  (:meth:`RefreshHistory.skipped`: one per pause or suspension, also across restarts),
  and the view catches up after RESUME.
* Never blocks barrier injection: the listener is called on the barrier
  manager's collector threads (after the barrier is collected, in barrier
  order per database), never on the thread that injects barriers; it only
  pops due entries from a per-database heap (no scan of every job), records
  the run's start and hands the run to a thread pool. The refresh runs beside
  the barrier loop and commits on a later barrier (a ``CommitRefresh``
  command), after which readers see the new result.
* Every meta-store write made on a barrier (a run's start or end, a job's
  drop mark) is a command's ``on_collect``: durable before the issuer hears
  back, off the injecting thread, so a slow write holds up only its own
  database. This module never injects barriers itself: commands go through
  :meth:`BarrierManager.schedule`, and a job falling due asks the manager for
  checkpoints (:meth:`BarrierManager.request_checkpoints`).
* At most one run per job: a run starts only from ``Idle``/``Failed``; a manual
  refresh that finds a run in progress waits for it, then runs its own.
* A failed run records its error and SQLSTATE in the history and leaves the job
  ``Failed`` with its last committed result readable; the next run is due one
  interval after the failed attempt (a failed manual run), or after the backoff (a
  failed scheduled run).
* The registry follows the backend: a job whose view a statement pgbarrier did not
  run dropped (upstream ``DROP TABLE ... CASCADE``, ``DROP SCHEMA ... CASCADE``...) is
  dropped itself, with a history row saying why (trigger ``vanished``, status
  ``cancelled``), the next time pgbarrier looks: after one of its runs fails, at a
  CREATE of its name, at ``SHOW MATERIALIZED VIEWS`` (:meth:`RefreshScheduler.forget_vanished`).
* A job's schedule may change (``ALTER MATERIALIZED VIEW v SET (refresh.interval.sec =
  n)``, ``refresh.cron``): it is tracked again, and entries pushed under the old one are
  skipped. When a run is due is the job's to say (:meth:`BatchRefreshJob.due_after_ms`:
  an interval, or a cron slot, :mod:`pgbarrier.cron`).
* A suspended job (``ALTER MATERIALIZED VIEW v SUSPEND``, :mod:`pgbarrier.view_control`)
  starts no scheduled runs and shows no next due time; RESUME tracks it again, so one
  that fell due meanwhile catches up once. Manual refreshes run on it.
* Paused databases start no scheduled runs; due jobs catch up after RESUME. Paused
  means paused when the listener runs: a PAUSE injected after a checkpoint but
  before that checkpoint was collected holds its runs too. A run
  already started when PAUSE arrives finishes and commits.
* :meth:`RefreshScheduler.stop` (shutdown) starts no more runs, gives the ones
  running until the end of the grace period to commit (the barrier scheduler
  is still running then), and cancels the rest: each is recorded ``cancelled``
  with error ``SHUTDOWN`` and leaves its job ``failed``, so it runs again when
  due after a restart.
"""

from __future__ import annotations

import datetime as dt
import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from pgbarrier.backends.base import RefreshCancel
from pgbarrier.barrier.command import Custom, paused_error
from pgbarrier.barrier.epoch import epoch_to_unix_ms
from pgbarrier.barrier.info import BarrierInfo
from pgbarrier.errors import PgError, UndefinedTable, as_pg_error
from pgbarrier.jobs import policy
from pgbarrier.jobs import state as js
from pgbarrier.jobs import testpoint
from pgbarrier.jobs.alarm import DueAlarm
from pgbarrier.jobs.history import RefreshHistory, RefreshRun
from pgbarrier.jobs.registry import BatchRefreshJob, JobRegistry

if TYPE_CHECKING:
    from pgbarrier.backends.base import Backend
    from pgbarrier.barrier.clock import Clock
    from pgbarrier.barrier.manager import BarrierManager

log = logging.getLogger(__name__)

#: the history's word for a job whose view something else dropped
VANISHED = ("its materialized view no longer exists: a statement pgbarrier did not run "
            "dropped it (DROP ... CASCADE of what it reads, say); the job is dropped")

Wait = Callable[["Future[Any]"], Any]

_CANCEL_REPEAT_S = 0.2
#: after the grace period, how long cancelled runs get to end before stop() gives up on them
_CANCEL_TIMEOUT_S = 10.0
SHUTDOWN = "pgbarrier shut down during the refresh"
#: how long a cancelled DROP still waits for its mark to land (so it can be undone)
_LAND_S = 30.0


@dataclass(frozen=True)
class Slot:
    """A job's next scheduled run: when it is due (unix ms) and what starts it."""

    due_ms: int
    trigger: str  # schedule | retry | catchup
    seq: int


def _suspended_reason(job: BatchRefreshJob) -> tuple[str, str]:
    """A suspended job's skipped slot: (its reason, the part naming the suspension)."""
    since = job.suspended_at.isoformat() if job.suspended_at is not None else "?"
    who = f" by {job.suspended_by}" if job.suspended_by else ""
    why = f": {job.suspend_reason}" if job.suspend_reason else ""
    cause = f'materialized view "{job.name}" was suspended at {since}'
    return f"{cause}{who}{why}", cause


def _done_within(future: Future[Any], seconds: float) -> bool:
    try:
        future.exception(timeout=seconds)
    except TimeoutError:
        return False
    return True


class RefreshScheduler:
    def __init__(self, registry: JobRegistry, history: RefreshHistory, backend: Backend,
                 barrier: BarrierManager, clock: Clock, *, workers: int = 4,
                 wake_on_due: bool = True) -> None:
        self.registry = registry
        self.history = history
        self.backend = backend
        self.barrier = barrier
        self.clock = clock
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="refresh")
        self._lock = threading.Lock()
        #: per database, a heap of (due ms, slot seq, job name); an entry whose seq is not
        #: its job's current slot's is stale
        self._due: dict[str, list[tuple[int, int, str]]] = {}
        self._slots: dict[tuple[str, str], Slot] = {}
        #: per database, jobs whose slot fell due while it was paused (they catch up)
        self._missed: dict[str, set[str]] = {}
        self._seq = itertools.count()
        self._running: dict[tuple[str, str], Future[Any]] = {}
        self._cancels: dict[tuple[str, str], RefreshCancel] = {}
        self._latest: dict[tuple[str, str], Future[Any]] = {}
        #: jobs no scheduled run may start for, nor the vanished check forget (a rename)
        self._held: set[tuple[str, str]] = set()
        self._stopping = False
        #: told (database, view, reason) when failures suspend a view (the App publishes it
        #: as an ``rw_barrier`` event, as a SUSPEND statement's)
        self.on_suspended: Callable[[str, str, str], None] | None = None
        #: injects barriers when a job falls due, instead of waiting for the periodic one
        self._alarm = DueAlarm(clock, self._poke) if wake_on_due else None
        #: called with a scheduled run's lateness (its start minus its due time, seconds)
        self.on_late: Callable[[float], None] | None = None

    def now(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.clock.now_ms() / 1000, tz=dt.timezone.utc)

    # ------------------------------------------------------------------ schedule

    def next_slot_ms(self, job: BatchRefreshJob, base_ms: int) -> int:
        """When the job's next regular run is due, counted from ``base_ms`` (the physical
        time of its last committed epoch or failed attempt): the job's to say
        (:meth:`BatchRefreshJob.due_after_ms`: an interval later, or its next cron slot)."""
        return job.due_after_ms(base_ms)

    def _slot_for(self, job: BatchRefreshJob, woke_ms: int | None) -> tuple[int, str] | None:
        base = js.schedule_base_epoch(job.status)
        if base is None:
            return None
        base_ms = epoch_to_unix_ms(base)
        if isinstance(job.status, js.Failed) and job.consecutive_failures > 0:
            due, trigger = base_ms + policy.retry_delay_ms(job, job.consecutive_failures,
                                                           base), "retry"
        else:
            due, trigger = self.next_slot_ms(job, base_ms), "schedule"
        if woke_ms is not None and due <= woke_ms:
            due, trigger = woke_ms + policy.jitter_ms(job), "catchup"
        return due, trigger

    def track(self, job: BatchRefreshJob, *, woke_ms: int | None = None) -> None:
        """(Re)schedule ``job`` from its current status: its slot replaces the one it had.
        ``woke_ms``: the job's schedule wakes up then (start, RESUME): a slot that passed
        before is one catch-up run (module rules)."""
        found = self._slot_for(job, woke_ms)
        key = (job.database, job.name)
        with self._lock:
            if found is None:
                self._slots.pop(key, None)
                return
            due_ms, trigger = found
            slot = Slot(due_ms, trigger, next(self._seq))
            self._slots[key] = slot
            heapq.heappush(self._due.setdefault(job.database, []), (due_ms, slot.seq, job.name))
        if self._alarm is not None:
            self._alarm.set(job.database, due_ms)

    def restored(self, job: BatchRefreshJob) -> None:
        """A job loaded at start (or when this process takes office): due slots catch up."""
        self.track(job, woke_ms=self.clock.now_ms())

    def resumed(self, job: BatchRefreshJob) -> None:
        """``ALTER MATERIALIZED VIEW v RESUME``: a slot that passed while it was suspended
        is one catch-up run."""
        self.track(job, woke_ms=self.clock.now_ms())

    def _poke(self, database: str) -> None:
        """Ask the barrier manager for two checkpoints at once: the second commits an epoch
        at or past the due time (jobs never inject barriers themselves)."""
        self.barrier.request_checkpoints(database, 2)

    def next_due_ms(self, database: str, name: str) -> int | None:
        """When the job's next scheduled run is due (None: none is, as when suspended)."""
        job = self.registry.get(database, name)
        if job is None or job.suspended or js.schedule_base_epoch(job.status) is None:
            return None
        with self._lock:
            slot = self._slots.get((database, name))
        return None if slot is None else slot.due_ms

    def running(self, database: str, name: str) -> Future[Any] | None:
        """The future of the run in progress for a job (resolves to its RefreshRun), if any."""
        with self._lock:
            return self._running.get((database, name))

    def latest_run(self, database: str, name: str) -> Future[Any] | None:
        """The future of the job's most recent run, finished or not (None: never ran)."""
        with self._lock:
            return self._latest.get((database, name))

    def on_barrier(self, info: BarrierInfo) -> None:
        """Barrier listener: start the runs that are due, record the slots a pause or a
        suspension skips. Cheap, never blocks on a backend."""
        if not info.is_checkpoint or self._stopping:
            return
        db = info.database
        committed_ms = epoch_to_unix_ms(info.prev_epoch)
        with self._lock:
            heap = self._due.get(db)
            if (not heap or heap[0][0] > committed_ms) and (info.paused or not self._missed.get(db)):
                return
        # Listeners run once the barrier is collected, and a PAUSE injected after this
        # checkpoint may be in force already (applied in memory at injection): what is
        # due waits for RESUME then, as if this checkpoint had come after the PAUSE.
        try:
            snap = self.barrier.snapshot(db)
        except PgError:
            return  # the database is being dropped
        if info.paused or snap.paused:
            self._skip_paused(db, committed_ms, info.prev_epoch, snap)
            return
        with self._lock:
            missed = self._missed.pop(db, set())
        for name in sorted(missed):  # slots the pause skipped: one catch-up run each
            job = self.registry.get(db, name)
            if job is not None:
                self.track(job, woke_ms=committed_ms)
        for job, slot in self._pop_due(db, committed_ms):
            if job.suspended:
                self._skip(job, slot, info.prev_epoch, *_suspended_reason(job))
                continue  # ALTER MATERIALIZED VIEW ... RESUME tracks it again
            try:
                run = self._start(job, info.prev_epoch, slot.trigger)
            except (js.IllegalTransition, PgError):
                continue  # a manual run or a drop got there first
            if self.on_late is not None:
                self.on_late(run.started_at.timestamp() - slot.due_ms / 1000)
            self._pool.submit(self._execute, job, run)

    def _pop_due(self, db: str, committed_ms: int) -> list[tuple[BatchRefreshJob, Slot]]:
        """The jobs whose current slot is due at ``committed_ms``, popped from the heap in
        due order (stale entries are dropped)."""
        out: list[tuple[BatchRefreshJob, Slot]] = []
        with self._lock:
            heap = self._due.get(db)
            while heap and heap[0][0] <= committed_ms:
                due_ms, seq, name = heap[0]
                slot = self._slots.get((db, name))
                job = self.registry.get(db, name)
                if slot is None or slot.seq != seq or job is None \
                        or js.schedule_base_epoch(job.status) is None \
                        or (db, name) in self._held:
                    heapq.heappop(heap)  # stale, dropped, running, or renamed: re-tracked
                    continue
                heapq.heappop(heap)
                del self._slots[(db, name)]
                out.append((job, slot))
        return out

    def _skip_paused(self, db: str, committed_ms: int, epoch: int, snap: Any) -> None:
        """The database is paused: each due slot is one ``skipped`` row (once per pause)
        and the job catches up after RESUME."""
        due = self._pop_due(db, committed_ms)
        if not due:
            return
        who = f" by {snap.paused_by}" if snap.paused_by else ""
        why = f": {snap.pause_reason}" if snap.pause_reason else ""
        at = snap.paused_at.isoformat() if snap.paused_at is not None else "?"
        cause = f'database "{db}" was paused at {at}'
        with self._lock:
            self._missed.setdefault(db, set()).update(job.name for job, _ in due)
        for job, slot in due:
            self._skip(job, slot, epoch, f"{cause}{who}{why}", cause)

    def _skip(self, job: BatchRefreshJob, slot: Slot, epoch: int, reason: str,
              cause: str) -> None:
        try:
            self.history.skipped(job.database, job.name, slot.trigger, epoch, self.now(),
                                 reason, cause)
        except PgError as exc:  # the store refusing: the slot is still skipped
            log.warning("could not record a skipped refresh of %s.%s: %s", job.database,
                        job.name, exc.message)

    def _start(self, job: BatchRefreshJob, target_epoch: int, trigger: str) -> RefreshRun:
        run_id = self.history.next_run_id()
        self.registry.transition(job.database, job.name, js.start_refresh, target_epoch, run_id)
        run = self.history.start(job.database, job.name, trigger, target_epoch, self.now(), run_id)
        with self._lock:
            fut: Future[Any] = Future()
            fut.set_running_or_notify_cancel()
            self._running[(job.database, job.name)] = fut
            self._latest[(job.database, job.name)] = fut
            self._cancels[(job.database, job.name)] = RefreshCancel()
        return run

    # ------------------------------------------------------------------ runs

    def _execute(self, job: BatchRefreshJob, run: RefreshRun,
                 failure: list[PgError] | None = None) -> RefreshRun:
        """Refresh on the backend, then commit (or record the failure) on a barrier; a
        failure's PgError (its own SQLSTATE) is appended to ``failure`` when given."""
        key = (job.database, job.name)
        with self._lock:
            cancel = self._cancels.get(key)
        try:
            rows = self.backend.refresh_batch_view(job.database, job.name, job.columns, job.query,
                                                   cancel)
        except BaseException as exc:  # the run's failure is recorded, never lost
            err = as_pg_error(exc)
            if failure is not None:
                failure.append(err)
            status, error, sqlstate = "failed", err.message, err.sqlstate
            if cancel is not None and cancel.cancelled:  # a drop, its client, or shutdown
                status = "cancelled"
                if self._stopping:
                    error, sqlstate = SHUTDOWN, "57P01"
            done = self._finish(job, run, lambda s: js.refresh_failed(s, run.run_id, error),
                                status, error=error, sqlstate=sqlstate)
            if done.status == "failed":
                log.warning('refresh run %d of "%s" in database "%s" (%s) failed: %s',
                            run.run_id, job.name, job.database, run.trigger, err.message,
                            extra={"event": "refresh_failed", "database": job.database,
                                   "sqlstate": err.sqlstate})
        else:
            done = self._finish(job, run, lambda s: js.refresh_committed(s, run.run_id),
                                "succeeded", rows=rows)
        with self._lock:
            fut = self._running.pop(key, None)
            self._cancels.pop(key, None)
        if fut is not None:
            fut.set_result(done)
        if done.status == "failed":  # its view may be gone (dropped by cascade, say)
            self._pool.submit(self._forget_if_vanished, job.database, job.name)
        return done

    def _forget_if_vanished(self, database: str, name: str) -> None:
        try:
            self.forget_vanished(database, name, lambda f: f.result(timeout=_LAND_S))
        except PgError as exc:  # the backend unreachable, say: looked at again next time
            log.info("checking whether %s.%s still exists failed: %s", database, name,
                     exc.message)
        except Exception:  # noqa: BLE001 - looked at again on the next failure
            log.exception("checking whether %s.%s still exists failed", database, name)

    def _finish(self, job: BatchRefreshJob, run: RefreshRun, transition: Callable[[js.JobStatus], js.JobStatus],
                status: str, *, rows: int | None = None, error: str | None = None,
                sqlstate: str | None = None) -> RefreshRun:
        """Where every run that started ends: the job's new state (with its failure count
        and, at ``refresh.max_failures``, its suspension) and the run's history row, on a
        barrier, durably; then the job's next slot."""
        outcome: dict[str, RefreshRun] = {}

        def apply(_info: BarrierInfo) -> None:
            current = self.registry.get(job.database, job.name)
            if current is None or isinstance(current.status, js.Dropping):
                outcome["run"] = self.history.finish(run, "cancelled", self.now(), error=error,
                                                     sqlstate=sqlstate)
                return
            changes = self._outcome_changes(current, run, status, error, sqlstate)
            new = self.registry.transition(job.database, job.name, transition, **changes)
            outcome["run"] = self.history.finish(run, status, self.now(), rows=rows, error=error,
                                                 sqlstate=sqlstate)
            if "suspend_reason" in changes:
                log.warning('batch refresh job "%s" in database "%s" %s', job.name,
                            job.database, changes["suspend_reason"],
                            extra={"event": "job_suspended", "database": job.database})
                if self.on_suspended is not None:
                    self.on_suspended(job.database, job.name, changes["suspend_reason"])
            self.track(new)

        name = "CommitRefresh" if status == "succeeded" else "FailRefresh"
        try:
            self.barrier.schedule(job.database, Custom(name, on_collect=apply)).wait()
        except PgError as exc:  # database dropped or shutting down
            log.warning("could not record refresh of %s.%s: %s", job.database, job.name, exc.message)
            return self.history.finish(run, "cancelled", self.now(), error=exc.message,
                                       sqlstate=exc.sqlstate)
        return outcome["run"]

    def _outcome_changes(self, job: BatchRefreshJob, run: RefreshRun, status: str,
                         error: str | None, sqlstate: str | None) -> dict[str, Any]:
        """The job's fields a run's end changes: a success resets the failure count, a
        failed scheduled run adds one and may suspend the view (jobs/policy.py)."""
        now = self.now()
        if status == "succeeded":
            return {"last_refreshed_at": now, "consecutive_failures": 0}
        if status != "failed" or run.trigger == "manual":
            return {}
        failures = job.consecutive_failures + 1
        changes: dict[str, Any] = {"consecutive_failures": failures}
        if policy.failure_suspends(job, failures, sqlstate):
            changes.update(suspended_at=now, suspended_by=policy.AUTO_SUSPENDER,
                           suspend_reason=policy.suspend_reason(failures, error or ""))
        return changes

    # ------------------------------------------------------------------ statements

    def created(self, job: BatchRefreshJob, rows: int) -> BatchRefreshJob:
        """The create's snapshot is in place: idle at its snapshot epoch, scheduled."""
        now = self.now()
        run = self.history.start(job.database, job.name, "create", job.snapshot_epoch, job.created_at)
        new = self.registry.transition(job.database, job.name, lambda s: js.created(s),
                                       last_refreshed_at=now)
        self.history.finish(run, "succeeded", now, rows=rows)
        self.track(new)
        return new

    def refresh(self, database: str, name: str, wait: Wait,
                on_run: Callable[[RefreshCancel | None], None] | None = None) -> RefreshRun:
        """``REFRESH MATERIALIZED VIEW``: a run now, returning when committed.

        55000 while paused (``paused_error``); waits for a run in progress first. A run
        that fails raises the backend's own error (its SQLSTATE: 42P01 when an input was
        dropped, 57014 when cancelled...), after it was recorded as failed (``cancelled``
        when its cancel fired). ``on_run`` gets the run's cancel before the backend query
        starts (and None after it), so the caller's CancelRequest and statement_timeout
        reach the query.
        """
        while True:
            def begin(info: BarrierInfo) -> tuple[str, Any]:
                job = self.registry.get(database, name)
                if job is None:
                    raise UndefinedTable(f'materialized view "{name}" does not exist')
                with self._lock:
                    running = self._running.get((database, name))
                if running is not None:
                    return "busy", running
                return "started", (job, self._start(job, info.prev_epoch, "manual"))

            cmd = Custom("Refresh", on_collect=begin,
                         requires_unpaused_error=lambda db, paused: paused_error(
                f'cannot refresh materialized view "{name}" while database barrier is paused',
                db, paused))
            collected = self.barrier.schedule(database, cmd).collected
            try:
                kind, value = wait(collected)
            except PgError:
                # cancelled (or timed out) while the command was on its way: a run it
                # started must still end, as cancelled, or the job would stay refreshing
                if _done_within(collected, _LAND_S) and collected.exception() is None:
                    kind, value = collected.result()
                    if kind == "started":
                        job, run = value
                        with self._lock:
                            pending = self._cancels.get((database, name))
                        if pending is not None:
                            pending.cancel()
                        self._execute(job, run)
                raise
            if kind == "busy":
                wait(value)
                continue
            job, run = value
            failure: list[PgError] = []
            if on_run is not None:
                with self._lock:
                    on_run(self._cancels.get((database, name)))
            try:
                done = self._execute(job, run, failure)
            finally:
                if on_run is not None:
                    on_run(None)
            if done.status in ("failed", "cancelled") and failure:
                err = failure[0]
                err.position = None  # a position in the view's query, not the REFRESH
                err.detail = err.detail or (f'refresh run {done.run_id} of "{name}" failed; '
                                            "the view keeps its last committed result.")
                raise err
            return done

    def drop(self, database: str, name: str, wait: Wait, *, backend: bool = True,
             cascade: bool = False) -> None:
        """Mark the job dropping (on a barrier, durably), cancel a running refresh, drop its
        backend table, then forget the job. A crash anywhere in between leaves the
        ``dropping`` record, which recovery finishes; a drop the backend refuses (an
        upstream object depends on the view) puts the job back as it was.
        ``backend=False`` (DROP DATABASE: the whole backend database goes next) leaves the
        table to that drop, so views that depend on it cannot refuse it one by one."""
        def mark(_info: BarrierInfo) -> tuple[Future[Any] | None, RefreshCancel | None]:
            self.registry.transition(database, name, js.drop)
            with self._lock:
                return self._running.get((database, name)), self._cancels.get((database, name))

        cmd = Custom("DropJob", on_collect=mark)
        # the mark must land even if this statement is cancelled meanwhile: wait it out
        future = self.barrier.schedule(database, cmd).collected
        try:
            running, cancel = wait(future)
        except PgError:
            if not _done_within(future, _LAND_S) or future.exception() is not None:
                raise
            running, cancel = future.result()
            self._undrop(database, name, running, cancel)
            raise
        testpoint.reached("drop:after-intent")
        self._end_run(running, cancel)
        try:
            if backend:
                if cascade:  # what depends on it upstream goes too (PostgreSQL's CASCADE)
                    self.backend.drop_batch_view(database, name, cascade=True)
                else:
                    self.backend.drop_batch_view(database, name)
        except BaseException:
            self._undrop(database, name, None, None)
            raise
        testpoint.reached("drop:after-backend")
        self.registry.release(database, name)
        with self._lock:
            self._latest.pop((database, name), None)
            self._slots.pop((database, name), None)

    # ------------------------------------------------------------------ rename

    def rename(self, database: str, old: str, new: str, wait: Wait,
               backend: Callable[[], None]) -> BatchRefreshJob:
        """ALTER MATERIALIZED VIEW ... RENAME TO / SET SCHEMA of a job's view (the caller
        holds both names' locks, so no manual refresh, drop or create runs meanwhile): no
        scheduled run starts while ``backend()`` renames the view, a run under way is
        waited for first; then the job and its runs are ``new``'s, durably, and it is
        scheduled under that name. If ``backend()`` fails nothing changed. A crash between
        the backend's rename and the record's leaves a job whose view has vanished (its
        schedule is lost, the view and its data stay under the new name)."""
        key = (database, old)
        with self._lock:
            self._held.add(key)
            running = self._running.get(key)
        try:
            if running is not None:
                wait(running)
            backend()
            job = self.registry.rename(database, old, new)
        except BaseException:
            with self._lock:
                self._held.discard(key)
            job = self.registry.get(database, old)
            if job is not None:
                self.track(job)
            raise
        self.history.rename(database, old, new)
        with self._lock:
            self._held.discard(key)
            self._slots.pop(key, None)
            latest = self._latest.pop(key, None)
            if latest is not None:
                self._latest[(database, new)] = latest
        self.track(job)
        return job

    # ------------------------------------------------------------------ vanished views

    def vanished(self, job: BatchRefreshJob) -> bool:
        """Whether the job's view is gone from the backend: a statement pgbarrier did not
        run dropped it (upstream: ``DROP TABLE ... CASCADE`` of what it reads, ``DROP
        SCHEMA ... CASCADE``, ``DROP OWNED``, a direct client). Only a job whose view was
        made (idle, refreshing, failed) can have lost it; one being created has none yet."""
        return isinstance(job.status, (js.Idle, js.Refreshing, js.Failed)) and \
            not self.backend.relation_exists(job.database, job.name)

    def forget_vanished(self, database: str, name: str, wait: Wait) -> bool:
        """If the job's view has vanished: record why in its history (a run of trigger
        ``vanished``, status ``cancelled``), then drop the job as DROP does, the backend
        untouched. True when it had (the name is free again)."""
        job = self.registry.get(database, name)
        if job is None or (database, name) in self._held or not self.vanished(job):
            return False
        log.warning('batch refresh job "%s" in database "%s": %s', name, database, VANISHED,
                    extra={"event": "job_vanished", "database": database})
        now = self.now()
        run = self.history.start(database, name, "vanished",
                                 js.last_committed_epoch(job.status) or job.snapshot_epoch, now)
        self.history.finish(run, "cancelled", now, error=VANISHED)
        try:
            self.drop(database, name, wait, backend=False)
        except (js.IllegalTransition, PgError):  # dropped meanwhile by someone else
            return self.registry.get(database, name) is None
        return True

    @staticmethod
    def _end_run(running: Future[Any] | None, cancel: RefreshCancel | None) -> None:
        if running is None:
            return
        if cancel is not None:
            # interrupt the backend query (the old result stays); PostgreSQL ignores a
            # cancel that reaches it before the query starts, so repeat until it ends
            cancel.cancel()
            while not _done_within(running, _CANCEL_REPEAT_S):
                cancel.cancel()
        running.exception()  # its commit sees Dropping and records the run cancelled

    def _undrop(self, database: str, name: str, running: Future[Any] | None,
                cancel: RefreshCancel | None) -> None:
        """The drop did not happen: the job goes back to the state it left, rescheduled."""
        self._end_run(running, cancel)
        self.track(self.registry.transition(database, name, js.undrop))

    def stop(self, grace_s: float = 0.0) -> None:
        """Shutdown: no new runs; running ones get ``grace_s`` seconds, then are cancelled."""
        deadline = time.monotonic() + grace_s
        with self._lock:
            self._stopping = True
        if self._alarm is not None:
            self._alarm.stop()
        with self._lock:
            running = list(self._running.values())
        for fut in running:
            _done_within(fut, max(0.0, deadline - time.monotonic()))
        with self._lock:
            left = [(fut, self._cancels.get(key)) for key, fut in self._running.items()]
        if left:
            log.info("grace period over: cancelling %d refresh run(s)", len(left))
        give_up = time.monotonic() + _CANCEL_TIMEOUT_S
        for fut, cancel in left:
            if cancel is None:
                continue
            cancel.cancel()  # repeated: PostgreSQL ignores a cancel that precedes its query
            while not _done_within(fut, _CANCEL_REPEAT_S):
                if time.monotonic() > give_up:
                    log.warning("a cancelled refresh run did not end; not waiting for it")
                    break
                cancel.cancel()
        self._pool.shutdown(wait=not left or time.monotonic() <= give_up, cancel_futures=True)
