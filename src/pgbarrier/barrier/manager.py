"""The barrier manager: one barrier worker per database, and the scheduler handle.

Rules this module keeps:

* Thread-safe: connection threads call :meth:`BarrierManager.schedule` (the
  sender side); each database's :class:`BarrierWorker` owns the receiving side
  of its own queue (RisingWave's ``schedule.rs``). The manager's lock is never
  held while waiting on a command.
* A database added with persisted state (``prev_epoch``, ``pause``,
  ``committed_epoch``) only issues epochs above ``prev_epoch`` and keeps its
  pause state (with when and by whom). A fresh database starts at the epoch
  of the clock's current time.
* Unknown databases raise 3D000 ``database "x" does not exist``; adding an
  existing one raises 42P04.
* Workers run between :meth:`start` and :meth:`stop`; a database added while
  the manager runs starts at once; commands scheduled before :meth:`start`
  wait in the queue. A stopped manager stays stopped: its commands, also for
  databases added later, fail at once. Removing a database or stopping the manager
  fails that database's queued commands (57P01); snapshots stay readable
  after :meth:`stop`, so shutdown can persist them.
* ``on_commit`` (after every checkpoint, with the database's snapshot) and
  listeners (after every collected barrier) run in the worker threads and must
  not block; see ``worker.py`` for what happens when they raise.
"""

from __future__ import annotations

import itertools
import threading

from pgbarrier.barrier.clock import Clock
from pgbarrier.barrier.command import Command, Flush, Pause, PauseResult, Resume
from pgbarrier.barrier.epoch import epoch_from_unix_ms
from pgbarrier.barrier.info import DatabaseSnapshot
from pgbarrier.barrier.notifier import Notifier
from pgbarrier.barrier.pause import PauseState, Running
from pgbarrier.barrier.worker import (
    BarrierWorker,
    DatabaseBarrierState,
    Listener,
    OnCommit,
)
from pgbarrier.errors import DuplicateDatabase, InvalidCatalogName


class BarrierManager:
    """Per-database barrier workers behind one thread-safe handle."""

    def __init__(
        self,
        clock: Clock,
        barrier_interval_ms: int = 1000,
        checkpoint_frequency: int = 1,
        on_commit: OnCommit | None = None,
    ) -> None:
        if barrier_interval_ms < 1:
            raise ValueError(f"barrier_interval_ms must be at least 1, got {barrier_interval_ms}")
        if checkpoint_frequency < 1:
            raise ValueError(f"checkpoint_frequency must be at least 1, got {checkpoint_frequency}")
        self.clock = clock
        self.barrier_interval_ms = barrier_interval_ms
        self.checkpoint_frequency = checkpoint_frequency
        self._on_commit = on_commit
        self._lock = threading.Lock()
        self._workers: dict[str, BarrierWorker] = {}
        self._listeners: list[Listener] = []
        self._running = False
        self._stopped = False
        self._generations = itertools.count(1)

    # -- databases -----------------------------------------------------------

    def add_database(
        self,
        name: str,
        *,
        prev_epoch: int | None = None,
        pause: PauseState = Running(),
        committed_epoch: int | None = None,
    ) -> None:
        """Add ``name`` (restoring persisted state when given); starts its worker if running."""
        with self._lock:
            if name in self._workers:
                raise DuplicateDatabase(f'database "{name}" already exists')
            if prev_epoch is None:
                prev_epoch = max(epoch_from_unix_ms(self.clock.now_ms()), committed_epoch or 0)
            state = DatabaseBarrierState(
                name,
                prev_epoch=prev_epoch,
                pause=pause,
                committed_epoch=committed_epoch,
                checkpoint_frequency=self.checkpoint_frequency,
                barrier_interval_ms=self.barrier_interval_ms,
                generation=next(self._generations),
            )
            worker = BarrierWorker(
                state, clock=self.clock, on_commit=self._on_commit, listeners=self._listeners
            )
            self._workers[name] = worker
            if self._running:
                worker.start()
            elif self._stopped:
                worker.request_stop()  # a stopped manager never runs barriers again

    def remove_database(self, name: str) -> None:
        """Stop ``name``'s worker (its queued commands fail with 57P01) and forget it."""
        with self._lock:
            worker = self._workers.pop(name, None)
        if worker is None:
            raise _unknown(name)
        worker.stop()

    def has_database(self, name: str) -> bool:
        with self._lock:
            return name in self._workers

    def databases(self) -> list[str]:
        """Database names, sorted."""
        with self._lock:
            return sorted(self._workers)

    # -- commands (sender side) ----------------------------------------------

    def schedule(self, database: str, command: Command) -> Notifier:
        """Inject a barrier carrying ``command`` into ``database`` at once; never blocks."""
        return self._worker(database).submit(command)

    def pause(self, database: str, by: str, *, timeout: float | None = None) -> PauseResult:
        """Schedule :class:`Pause` and wait until collected."""
        result = self.schedule(database, Pause(by=by)).wait(timeout)
        assert isinstance(result, PauseResult)
        return result

    def resume(self, database: str, by: str, *, timeout: float | None = None) -> PauseResult:
        """Schedule :class:`Resume` and wait until collected."""
        result = self.schedule(database, Resume(by=by)).wait(timeout)
        assert isinstance(result, PauseResult)
        return result

    def flush(self, database: str, *, timeout: float | None = None) -> int:
        """Schedule :class:`Flush`; return the committed epoch once its checkpoint committed."""
        result = self.schedule(database, Flush()).wait(timeout)
        assert isinstance(result, int)
        return result

    # -- state -----------------------------------------------------------------

    def snapshot(self, database: str) -> DatabaseSnapshot:
        return self._worker(database).snapshot()

    def snapshots(self) -> list[DatabaseSnapshot]:
        """Snapshots of all databases, sorted by name."""
        with self._lock:
            workers = [self._workers[n] for n in sorted(self._workers)]
        return [w.snapshot() for w in workers]

    def add_listener(self, fn: Listener) -> None:
        """Call ``fn(info)`` after every collected barrier of every database (must not block)."""
        with self._lock:
            self._listeners.append(fn)
            for worker in self._workers.values():
                worker.add_listener(fn)

    # -- lifecycle ---------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._running

    def start(self) -> None:
        """Start every database's worker (idempotent; a stopped manager stays stopped)."""
        with self._lock:
            if self._stopped:
                return
            self._running = True
            workers = list(self._workers.values())
        for worker in workers:
            worker.start()

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stop every worker and fail queued commands (57P01); idempotent."""
        with self._lock:
            self._running = False
            self._stopped = True
            workers = list(self._workers.values())
        for worker in workers:
            worker.request_stop()  # all stop at once, then join one by one
        for worker in workers:
            worker.stop(timeout)

    def _worker(self, name: str) -> BarrierWorker:
        with self._lock:
            worker = self._workers.get(name)
        if worker is None:
            raise _unknown(name)
        return worker


def _unknown(name: str) -> InvalidCatalogName:
    return InvalidCatalogName(f'database "{name}" does not exist')
