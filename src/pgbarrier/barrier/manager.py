"""The barrier manager: every database on one barrier scheduler, behind one handle.

Rules this module keeps:

* Thread-safe: connection threads call :meth:`BarrierManager.schedule` (the
  sender side); one :class:`~pgbarrier.barrier.scheduler.BarrierScheduler`
  owns the receiving side, a queue per database (RisingWave's
  ``schedule.rs``), and drives every database on a fixed number of threads
  (one scheduler thread, a few collectors), however many databases there
  are. The manager's lock is never held while waiting on a command.
* A database added with persisted state (``prev_epoch``, ``pause``,
  ``committed_epoch``) only issues epochs above ``prev_epoch`` and keeps its
  pause state (with when and by whom). A fresh database starts at the epoch
  of the clock's current time.
* Unknown databases raise 3D000 ``database "x" does not exist``; adding an
  existing one raises 42P04.
* Barriers run between :meth:`start` and :meth:`stop`; a database added while
  the manager runs gets barriers at once; commands scheduled before
  :meth:`start` wait in the queue. A stopped manager stays stopped: its
  commands, also for databases added later, fail at once. Removing a database
  or stopping the manager fails that database's queued commands (57P01);
  snapshots stay readable after :meth:`stop`, so shutdown can persist them.
* ``on_commit`` (after every checkpoint, with the database's snapshot), a
  command's ``on_collect`` and listeners (after every collected barrier) run
  on the scheduler's collector threads, in barrier order per database, never
  on the thread that injects barriers; see ``scheduler.py`` for what happens
  when they raise.
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
from pgbarrier.barrier.scheduler import DEFAULT_COLLECTORS, BarrierScheduler, OnCollected
from pgbarrier.barrier.worker import DatabaseBarrierState, Listener, OnCommit
from pgbarrier.errors import DuplicateDatabase, InvalidCatalogName


class BarrierManager:
    """Every database's barriers on one scheduler, behind one thread-safe handle."""

    def __init__(
        self,
        clock: Clock,
        barrier_interval_ms: int = 1000,
        checkpoint_frequency: int = 1,
        on_commit: OnCommit | None = None,
        collectors: int = DEFAULT_COLLECTORS,
        on_collected: OnCollected | None = None,
    ) -> None:
        if barrier_interval_ms < 1:
            raise ValueError(f"barrier_interval_ms must be at least 1, got {barrier_interval_ms}")
        if checkpoint_frequency < 1:
            raise ValueError(f"checkpoint_frequency must be at least 1, got {checkpoint_frequency}")
        self.clock = clock
        self.barrier_interval_ms = barrier_interval_ms
        self.checkpoint_frequency = checkpoint_frequency
        self._lock = threading.Lock()
        self._names: set[str] = set()
        self._scheduler = BarrierScheduler(clock=clock, on_commit=on_commit,
                                           collectors=collectors, on_collected=on_collected)
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
        """Add ``name`` (restoring persisted state when given); it gets barriers if running."""
        with self._lock:
            if name in self._names:
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
            self._scheduler.add(state)
            self._names.add(name)

    def remove_database(self, name: str) -> None:
        """Forget ``name``: its queued commands fail with 57P01; waits for its barriers in flight."""
        with self._lock:
            db = self._scheduler.detach(name) if name in self._names else None
            self._names.discard(name)
        if db is None:
            raise _unknown(name)
        self._scheduler.wait_collected(db)

    def has_database(self, name: str) -> bool:
        with self._lock:
            return name in self._names

    def databases(self) -> list[str]:
        """Database names, sorted."""
        with self._lock:
            return sorted(self._names)

    # -- commands (sender side) ----------------------------------------------

    def schedule(self, database: str, command: Command) -> Notifier:
        """Inject a barrier carrying ``command`` into ``database`` at once; never blocks."""
        notifier = self._scheduler.submit(database, command)
        if notifier is None:
            raise _unknown(database)
        return notifier

    def run(self, database: str, command: Command) -> Notifier:
        """:meth:`schedule` for a caller that waits for the command at once: when
        ``database`` is idle the command's barrier is injected and collected on the
        caller's thread before this returns (no hand-off to the scheduler's threads; its
        durable write then cannot be cancelled while it runs, like PostgreSQL's fsync)."""
        notifier = self._scheduler.submit(database, command, inline=True)
        if notifier is None:
            raise _unknown(database)
        return notifier

    def request_checkpoints(self, database: str, count: int = 1) -> None:
        """Inject ``count`` checkpoint barriers of ``database`` at once, without a command.

        A hint for whoever needs a committed epoch soon (a refresh falling
        due): nothing to wait on; an unknown database or a stopped manager
        ignores it.
        """
        self._scheduler.request_checkpoints(database, count)

    def pause(self, database: str, by: str, *, timeout: float | None = None) -> PauseResult:
        """Schedule :class:`Pause` and wait until collected."""
        result = self.run(database, Pause(by=by)).wait(timeout)
        assert isinstance(result, PauseResult)
        return result

    def resume(self, database: str, by: str, *, timeout: float | None = None) -> PauseResult:
        """Schedule :class:`Resume` and wait until collected."""
        result = self.run(database, Resume(by=by)).wait(timeout)
        assert isinstance(result, PauseResult)
        return result

    def flush(self, database: str, *, timeout: float | None = None) -> int:
        """Schedule :class:`Flush`; return the committed epoch once its checkpoint committed."""
        result = self.run(database, Flush()).wait(timeout)
        assert isinstance(result, int)
        return result

    # -- state -----------------------------------------------------------------

    def snapshot(self, database: str) -> DatabaseSnapshot:
        snap = self._scheduler.snapshot(database)
        if snap is None:
            raise _unknown(database)
        return snap

    def snapshots(self) -> list[DatabaseSnapshot]:
        """Snapshots of all databases, sorted by name."""
        snaps = (self._scheduler.snapshot(n) for n in self.databases())
        return [s for s in snaps if s is not None]

    def add_listener(self, fn: Listener) -> None:
        """Call ``fn(info)`` after every collected barrier of every database (must not block
        on commands)."""
        self._scheduler.add_listener(fn)

    def threads(self) -> list[threading.Thread]:
        """The threads that run barriers (a fixed number, whatever the databases)."""
        return self._scheduler.threads()

    # -- lifecycle ---------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._running

    def start(self) -> None:
        """Start the scheduler (idempotent; a stopped manager stays stopped)."""
        with self._lock:
            if self._stopped:
                return
            self._running = True
        self._scheduler.start()

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stop the scheduler and fail queued commands (57P01); idempotent."""
        with self._lock:
            self._running = False
            self._stopped = True
        self._scheduler.stop(timeout)


def _unknown(name: str) -> InvalidCatalogName:
    return InvalidCatalogName(f'database "{name}" does not exist')
