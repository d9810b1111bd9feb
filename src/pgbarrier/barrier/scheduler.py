"""One barrier scheduler for every database, and the collectors that commit its barriers.

RisingWave runs every database's barrier worker as a task of one runtime; here
one scheduler thread plays that part, so the threads of the barrier manager do
not grow with the number of databases. Rules this module keeps:

* **Injection is in memory, on one thread.** The scheduler thread owns a
  deadline heap of (next periodic barrier, database) and one command queue
  per database. It injects a periodic barrier for a database every
  ``barrier_interval_ms`` (``time.monotonic``, on a grid of that interval
  shared by all databases, so one wake serves them all; the first one comes
  one to two intervals after the database starts) and a barrier AT ONCE for
  each command that arrives, one command per barrier, in arrival order per
  database (databases with queued commands take turns, one command each).
  Injecting runs :meth:`DatabaseBarrierState.inject`, i.e. the command's
  in-memory ``on_apply``; nothing on this thread touches the meta store.
* **A command for an idle database runs on its issuer's thread.** When a
  command that its issuer waits for at once (``submit(..., inline=True)``: PAUSE,
  RESUME, FLUSH) arrives for a database with nothing queued and nothing injected
  (no barrier in flight), the thread that submits it injects its barrier (under
  the scheduler's lock, so no other barrier of that database can come between)
  and collects it itself before ``submit`` returns: a PAUSE is then one thread's
  work instead of a hand-off to the scheduler thread, one to a collector and one
  back, each a wake-up that waits for a core when the box is busy. The issuer
  is a worker thread, never the scheduler thread (which does no durable work);
  a command submitted from a collector, from an issuer's own collect, or while
  the database is busy takes the queue as below.
* **Durable work is collected off that thread, in database order.** Each
  injected barrier goes to its database's lane; a fixed pool of ``collectors``
  threads drains the lanes, at most one thread per lane at a time, so one
  database's barriers are collected strictly in order while a slow meta-store
  write of one database holds up only that database (and one collector).
  Collecting a barrier: ``on_commit(snapshot)`` after a checkpoint, then the
  command's ``on_collect`` (its durable side effect), then the issuer hears
  back (``collected``), then each listener is called with the barrier's
  :class:`BarrierInfo`. Listeners must not wait for commands; their
  exceptions are logged and ignored.
* If ``on_commit`` raises, that barrier's command fails (its ``on_collect``
  is not run); if ``on_collect`` raises, the command fails. Either way the
  barrier stays injected and later barriers go on. A :class:`PgError` from
  ``on_commit`` (the meta store refusing: a deposed leader's fenced write, a
  full disk) is not logged here with a traceback: whoever refused logs why,
  once. A PAUSE or RESUME whose ``on_commit`` failed is undone in memory (its
  issuer hears the error; nothing shows the change, no later checkpoint records
  it), unless a later command changed the state again meanwhile.
* While a database has a barrier injected but not yet collected, its periodic
  barrier is skipped (re-armed for one interval later): a database whose
  meta-store writes are slow does not pile up barriers. Commands and
  requested checkpoints (:meth:`BarrierScheduler.request_checkpoints`) are
  never held back.
* No notifier is ever left pending: :meth:`BarrierScheduler.stop` ends the
  scheduler thread promptly (the barrier it is injecting finishes), fails
  every command still queued with 57P01, lets the collectors finish what was
  injected (up to the timeout; what is left then is failed with 57P01) and
  ends them. Commands submitted after ``stop()`` fail at once. Removing a
  database fails its queued commands (57P01) and waits until its injected
  barriers are collected.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from pgbarrier.barrier.clock import Clock
from pgbarrier.barrier.command import (Command, Custom, CustomCommand, Flush, Pause,
                                       PauseResult, Resume)
from pgbarrier.barrier.info import BarrierInfo, DatabaseSnapshot
from pgbarrier.barrier.notifier import Notifier
from pgbarrier.barrier.pause import PauseState
from pgbarrier.barrier.worker import DatabaseBarrierState, Listener, OnCommit
from pgbarrier.errors import InternalError, PgError

log = logging.getLogger(__name__)

#: collector threads by default (independent of the number of databases); concurrent
#: collectors share meta-store transactions (group commit), so a burst of checkpoint writes
#: takes fewer fsyncs with more of them
DEFAULT_COLLECTORS = 8

#: ``on_collected(database, kind, seconds)``: a barrier is collected, ``seconds`` after its
#: injection (metrics; called on the collector thread, must be cheap)
OnCollected = Callable[[str, str, float], None]


#: what a requested checkpoint rides: a checkpoint barrier that changes nothing
_CHECKPOINT = Custom("RequestedCheckpoint")


@dataclass
class _Collect:
    """One injected barrier waiting for its durable work and acknowledgement."""

    info: BarrierInfo
    snapshot: DatabaseSnapshot | None
    result: object
    notifier: Notifier | None
    on_collect: Callable[[BarrierInfo], object] | None
    #: ``time.perf_counter()`` at injection (the ``on_collected`` hook's start)
    injected_at: float = 0.0
    #: a PAUSE/RESUME that changed the state: undoes it in memory when ``on_commit`` fails
    undo: Callable[[], None] | None = None


class _Database:
    """One database's entry: its state, command queue and collect lane."""

    def __init__(self, state: DatabaseBarrierState) -> None:
        self.state = state
        self.state_lock = threading.Lock()  # inject vs snapshot
        self.commands: deque[tuple[Command, Notifier]] = deque()
        self.requested = 0  # checkpoints asked for by request_checkpoints
        self.ready = False  # in the scheduler's ready queue
        self.removed = False
        #: barriers handed to the scheduler thread and not yet collected
        self.inflight = 0
        self.lane: deque[_Collect] = deque()
        self.lane_busy = False  # a collector owns the lane
        self.deadline: float | None = None  # next periodic barrier (monotonic)

    @property
    def name(self) -> str:
        return self.state.database


class BarrierScheduler:
    """Every database's barriers on one thread plus ``collectors`` threads (see module rules)."""

    def __init__(
        self,
        *,
        clock: Clock,
        on_commit: OnCommit | None = None,
        listeners: Iterable[Listener] = (),
        collectors: int = DEFAULT_COLLECTORS,
        on_collected: OnCollected | None = None,
    ) -> None:
        if collectors < 1:
            raise ValueError(f"collectors must be at least 1, got {collectors}")
        self._clock = clock
        self._on_commit = on_commit
        self._listeners: tuple[Listener, ...] = tuple(listeners)
        self._on_collected = on_collected
        self._n_collectors = collectors
        self._cond = threading.Condition()  # guards everything below, and _Database fields
        self._dbs: dict[str, _Database] = {}
        self._heap: list[tuple[float, int, _Database]] = []
        self._seq = itertools.count()
        self._ready: deque[_Database] = deque()
        self._lanes: deque[_Database] = deque()  # lanes waiting for a collector
        self._lanes_cond = threading.Condition(self._cond)
        self._idle = threading.Condition(self._cond)  # a database's inflight reached 0
        self._started = False
        self._stopping = False
        self._collectors_stop = False
        self._thread: threading.Thread | None = None
        self._collectors: list[threading.Thread] = []

    # -- databases -----------------------------------------------------------

    def add(self, state: DatabaseBarrierState) -> None:
        """Drive ``state`` from now on (its periodic barriers start when running)."""
        db = _Database(state)
        with self._cond:
            if state.database in self._dbs:
                raise ValueError(f"database {state.database!r} is already scheduled")
            self._dbs[state.database] = db
            if self._started and not self._stopping:
                self._arm(db, time.monotonic(), first=True)
                self._cond.notify_all()

    def remove(self, name: str, timeout: float | None = 10.0) -> bool:
        """Forget ``name``: fail its queued commands (57P01), wait for its injected barriers.

        Returns False when ``name`` is not scheduled.
        """
        db = self.detach(name)
        if db is None:
            return False
        self.wait_collected(db, timeout)
        return True

    def detach(self, name: str) -> _Database | None:
        """The first half of :meth:`remove`: forget ``name`` and fail its queued commands."""
        with self._cond:
            db = self._dbs.pop(name, None)
            if db is None:
                return None
            db.removed = True
            dropped = list(db.commands)
            db.commands.clear()
            db.requested = 0
        for _command, notifier in dropped:
            notifier.notify_dropped()
        return db

    def wait_collected(self, db: _Database, timeout: float | None = 10.0) -> None:
        """The second half: wait until what ``db`` had injected is collected."""
        if threading.current_thread() in self._collectors or \
                getattr(_collecting, "depth", 0):  # a listener may drop one
            return
        with self._cond:
            self._idle.wait_for(lambda: db.inflight == 0, timeout)

    def snapshot(self, name: str) -> DatabaseSnapshot | None:
        with self._cond:
            db = self._dbs.get(name)
        if db is None:
            return None
        with db.state_lock:
            return db.state.snapshot()

    def add_listener(self, fn: Listener) -> None:
        """Call ``fn(info)`` after each collected barrier (must not wait for commands)."""
        with self._cond:
            self._listeners = (*self._listeners, fn)

    # -- sender side ---------------------------------------------------------

    def submit(self, name: str, command: Command, *, inline: bool = False) -> Notifier | None:
        """Queue ``command`` for its own barrier of ``name``; None when ``name`` is unknown.

        ``inline``: the caller is going to wait for it anyway, so when ``name`` is idle the
        command may run on the caller's thread before this returns (module rules). Fails at
        once (57P01) after ``stop()``.
        """
        notifier = Notifier(name, command)
        task: _Collect | None = None
        with self._cond:
            db = self._dbs.get(name)
            if db is None:
                return None
            if self._stopping:
                pass
            elif inline and self._may_run_inline(db):
                db.inflight += 1
                db.lane_busy = True  # collectors leave the lane to this thread
                task = self._inject(db, command, notifier)
                if task is None:  # it failed in on_apply: the notifier says so
                    self._lane_done(db, 1)
                    return notifier
            else:
                db.commands.append((command, notifier))
                self._make_ready(db)
                return notifier
        if task is None:
            notifier.notify_dropped()
            return notifier
        _collecting.depth = getattr(_collecting, "depth", 0) + 1
        try:
            self._collect(task)
        finally:
            _collecting.depth -= 1
            with self._cond:
                self._lane_done(db, 1)
        return notifier

    def _may_run_inline(self, db: _Database) -> bool:
        """Under the lock: whether a command for ``db`` may run on the submitting thread
        (module rules): running, ``db`` idle, and the thread is neither the scheduler's
        nor a collector nor inside a collect already."""
        if not self._started or db.removed or db.commands or db.requested or db.ready \
                or db.inflight or db.lane or db.lane_busy:
            return False
        if getattr(_collecting, "depth", 0):
            return False
        me = threading.current_thread()
        return me is not self._thread and me not in self._collectors

    def _lane_done(self, db: _Database, n: int) -> None:
        """Under the lock: ``n`` barriers of ``db``'s lane, collected by a thread that held
        the lane, are done; what came into the lane meanwhile goes to a collector."""
        self._release(db, n)
        if db.lane:
            self._lanes.append(db)
            self._lanes_cond.notify()
        else:
            db.lane_busy = False

    def request_checkpoints(self, name: str, count: int = 1) -> None:
        """Inject ``count`` checkpoint barriers of ``name`` at once (no command, no notifier).

        A hint: nothing happens for an unknown database or a stopped scheduler.
        """
        with self._cond:
            db = self._dbs.get(name)
            if db is None or self._stopping:
                return
            db.requested += count
            self._make_ready(db)

    def _make_ready(self, db: _Database) -> None:
        if not db.ready:
            db.ready = True
            self._ready.append(db)
            self._cond.notify_all()

    # -- lifecycle -----------------------------------------------------------

    @property
    def stopping(self) -> bool:
        return self._stopping

    def is_alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def threads(self) -> list[threading.Thread]:
        """The scheduler thread and the collectors (for tests and benchmarks)."""
        return [t for t in (self._thread, *self._collectors) if t is not None]

    def start(self) -> None:
        """Start the scheduler thread and the collectors (once; a stopped one stays stopped)."""
        with self._cond:
            if self._started or self._stopping:
                return
            self._started = True
            now = time.monotonic()
            for db in self._dbs.values():
                self._arm(db, now, first=True)
            self._collectors = [
                threading.Thread(target=self._collect_loop, name=f"pgbarrier-collect-{i}",
                                 daemon=True)
                for i in range(self._n_collectors)
            ]
            self._thread = threading.Thread(target=self._run, name="pgbarrier-barrier",
                                            daemon=True)
        for t in self._collectors:
            t.start()
        self._thread.start()

    def request_stop(self) -> None:
        """Stop injecting and fail queued commands (57P01) without waiting."""
        with self._cond:
            self._stopping = True
            dropped = []
            for db in self._dbs.values():
                dropped.extend(db.commands)
                db.commands.clear()
                db.requested = 0
            self._ready.clear()
            self._cond.notify_all()
        for _command, notifier in dropped:
            notifier.notify_dropped()

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stop (see the module rules); idempotent. Waits up to ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        self.request_stop()
        me = threading.current_thread()
        thread = self._thread
        if thread is not None and thread is not me:
            thread.join(_left(deadline))
        with self._cond:
            if me not in self._collectors:
                self._idle.wait_for(
                    lambda: all(db.inflight == 0 for db in self._dbs.values()), _left(deadline))
            self._collectors_stop = True
            left = []
            for db in self._dbs.values():
                left.extend(db.lane)
                db.inflight -= len(db.lane)
                db.lane.clear()
            self._lanes_cond.notify_all()
        for task in left:  # only when a collector was stuck past the timeout
            if task.notifier is not None:
                task.notifier.notify_dropped()
        for t in self._collectors:
            if t is not me:
                t.join(_left(deadline))

    # -- the scheduler thread --------------------------------------------------

    def _arm(self, db: _Database, now: float, *, first: bool = False) -> None:
        """Schedule ``db``'s next periodic barrier: the next multiple of its interval
        (``time.monotonic``) after ``now``, or after ``now`` + one interval for its first.

        Databases with the same interval share the grid, so one wake of the
        scheduler injects all their periodic barriers together, and a scheduler
        that fell behind skips to the next grid point instead of bursting.
        """
        interval = db.state.barrier_interval_ms / 1000.0
        after = now + interval if first else now
        db.deadline = (math.floor(after / interval) + 1) * interval
        heapq.heappush(self._heap, (db.deadline, next(self._seq), db))

    def _run(self) -> None:
        try:
            while True:
                work: list[tuple[_Database, Command | None, Notifier | None]] = []
                with self._cond:
                    while not self._stopping:
                        now = time.monotonic()
                        if self._ready or (self._heap and self._heap[0][0] <= now):
                            break
                        self._cond.wait(self._heap[0][0] - now if self._heap else None)
                    if self._stopping:
                        return
                    self._take(work, time.monotonic())
                tasks: list[tuple[_Database, _Collect | None]] = []
                for db, command, notifier in work:
                    tasks.append((db, self._inject(db, command, notifier)))
                self._hand_over(tasks)
        except BaseException:  # pragma: no cover - defensive: never hang waiters
            log.exception("barrier scheduler crashed")
            self.request_stop()
            raise

    def _take(self, work: list[tuple[_Database, Command | None, Notifier | None]],
              now: float) -> None:
        """Under the lock: one command (or requested checkpoint) of each ready database,
        then every periodic barrier that is due."""
        for _ in range(len(self._ready)):
            db = self._ready.popleft()
            if db.removed:
                db.ready = False
                continue
            if db.commands:
                command, notifier = db.commands.popleft()
                work.append((db, command, notifier))
            elif db.requested:
                db.requested -= 1
                work.append((db, _CHECKPOINT, None))
            else:
                db.ready = False
                continue
            db.inflight += 1
            if db.commands or db.requested:
                self._ready.append(db)  # its next command waits for the others' turn
            else:
                db.ready = False
        while self._heap and self._heap[0][0] <= now:
            deadline, _, db = heapq.heappop(self._heap)
            if db.removed or deadline != db.deadline:
                continue  # dropped, or re-armed since
            if db.inflight == 0:
                db.inflight += 1
                work.append((db, None, None))
            self._arm(db, now)

    def _inject(self, db: _Database, command: Command | None,
                notifier: Notifier | None) -> _Collect | None:
        """Inject one barrier in memory; its collect task, or None when it failed. Never raises."""
        try:
            now_ms = self._clock.now_ms()
            with db.state_lock:
                before = db.state.pause_state
                try:
                    info = db.state.inject(now_ms, command)
                except Exception as exc:
                    if notifier is None:
                        log.exception("periodic barrier of database %r failed", db.name)
                    else:
                        if not isinstance(exc, PgError):
                            log.exception("command %r on database %r failed", command, db.name)
                        notifier.notify_failed(exc)
                    return None
                result = db.state.last_result
                snapshot = db.state.snapshot() if info.is_checkpoint else None
            undo = None
            if isinstance(result, PauseResult) and result.changed:
                undo = _undo_pause(db, before, result.state)
            if notifier is not None:
                notifier.notify_started(info)
            return _Collect(info, snapshot, result, notifier, _on_collect(command),
                            time.perf_counter(), undo)
        except Exception as exc:  # pragma: no cover - defensive
            log.exception("barrier of database %r failed", db.name)
            if notifier is not None:
                notifier.notify_failed(exc)
            return None

    def _hand_over(self, tasks: list[tuple[_Database, _Collect | None]]) -> None:
        """Put injected barriers in their lanes (one lock, one wake-up for the batch)."""
        woken = 0
        with self._cond:
            for db, task in tasks:
                if task is None:
                    self._release(db, 1)
                    continue
                db.lane.append(task)
                if not db.lane_busy:
                    db.lane_busy = True
                    self._lanes.append(db)
                    woken += 1
            if woken:
                self._lanes_cond.notify(min(woken, self._n_collectors))

    def _release(self, db: _Database, n: int) -> None:
        """Under the lock: ``n`` of ``db``'s barriers are done."""
        db.inflight -= n
        if db.inflight == 0:
            self._idle.notify_all()

    # -- the collectors --------------------------------------------------------

    def _collect_loop(self) -> None:
        db: _Database | None = None
        done = 0
        while True:
            with self._cond:
                if db is not None:  # the lane just collected; more that came meanwhile
                    self._lane_done(db, done)  # waits behind the other lanes
                while not self._lanes and not self._collectors_stop:
                    self._lanes_cond.wait()
                if not self._lanes:
                    return
                db = self._lanes.popleft()
                tasks = list(db.lane)  # all that is queued: collected in order, in one go
                db.lane.clear()
            for task in tasks:
                self._collect(task)
            done = len(tasks)

    def _collect(self, task: _Collect) -> None:
        """Durable work, acknowledgement and listeners of one barrier; never raises."""
        notifier, info = task.notifier, task.info
        try:
            result = task.result
            ok = True
            if task.snapshot is not None and self._on_commit is not None:
                try:
                    self._on_commit(task.snapshot)
                except Exception as exc:
                    if isinstance(exc, PgError):  # the store's refusal (NotLeader, 53100...):
                        # its own one line says why (the step-down, the store going bad)
                        log.debug("on_commit failed for database %r: %s", info.database, exc)
                    else:
                        log.exception("on_commit failed for database %r", info.database)
                    ok = False
                    if task.undo is not None:
                        task.undo()
                    if notifier is not None:
                        notifier.notify_failed(exc)
            if ok and task.on_collect is not None:
                try:
                    result = task.on_collect(info)
                except Exception as exc:
                    if not isinstance(exc, PgError):
                        log.exception("on_collect of %r on database %r failed",
                                      notifier.command if notifier else None, info.database)
                    if notifier is not None:
                        notifier.notify_failed(exc)
            if notifier is not None:
                notifier.notify_collected(result)
            for listener in self._listeners:
                try:
                    listener(info)
                except Exception:
                    log.exception("barrier listener %r failed", listener)
            if self._on_collected is not None:
                try:
                    self._on_collected(info.database, info.kind,
                                       time.perf_counter() - task.injected_at)
                except Exception:
                    log.exception("on_collected failed")
        except Exception as exc:  # pragma: no cover - defensive
            log.exception("collecting a barrier of database %r failed", info.database)
            if notifier is not None:
                notifier.notify_failed(exc)
        finally:
            if notifier is not None and not notifier.done:  # pragma: no cover - defensive
                notifier.notify_failed(InternalError("barrier command was dropped"))


#: ``depth`` > 0 while this thread collects a barrier it injected itself (``submit``)
_collecting = threading.local()


def _undo_pause(db: _Database, before: PauseState, after: PauseState) -> Callable[[], None]:
    """Put ``db``'s pause state back to ``before`` if it is still ``after`` (a PAUSE or
    RESUME whose record failed: the issuer hears an error, so nothing may show it, and no
    later checkpoint may record it)."""
    def undo() -> None:
        with db.state_lock:
            if db.state.pause_state is after:
                db.state.pause_state = before
    return undo


def _on_collect(command: Command | None) -> Callable[[BarrierInfo], object] | None:
    if command is None or isinstance(command, (Pause, Resume, Flush)):
        return None
    if isinstance(command, CustomCommand):
        return command.as_custom().on_collect
    return None  # pragma: no cover - every command is one of the above


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())
