"""One database's barrier state and the thread that drives it.

Rules this module keeps:

* :class:`DatabaseBarrierState` is the deterministic core: no threads, no
  sleeping, no clock of its own (``inject`` is given the wall time). Each
  ``inject`` is one barrier: the epoch advances through ``next_epoch`` (so
  epochs strictly increase, also when restored from a persisted
  ``prev_epoch``), the barrier is a checkpoint every
  ``checkpoint_frequency``-th barrier since the last checkpoint or when its
  command forces one, the command is applied, and the barrier is collected:
  on a checkpoint the committed epoch becomes the barrier's ``prev_epoch``.
* ``inject`` is all or nothing: when applying the command raises (a command
  refused while paused, an ``on_apply`` that fails), the error propagates and
  epochs, counters, pause state and committed epoch are exactly as before.
* :class:`BarrierWorker` owns a state, the receiving end of the database's
  command queue and one daemon thread. It injects a periodic barrier every
  ``barrier_interval_ms`` (``time.monotonic``) and a barrier AT ONCE for each
  command that arrives, one command per barrier, in arrival order.
* After a checkpoint the worker calls ``on_commit(snapshot)`` (the durable
  meta store) before telling the command's issuer it is collected; if
  ``on_commit`` raises, that barrier's command fails, the thread goes on.
  Then it calls each listener with the barrier's :class:`BarrierInfo`;
  listeners must not block, and their exceptions are logged and ignored.
* No notifier is ever left pending: ``stop()`` ends the thread promptly (the
  barrier in progress finishes) and fails every command still queued with
  57P01; commands submitted after ``stop()`` fail at once.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable
from datetime import datetime

from pgbarrier.barrier.clock import Clock, datetime_from_unix_ms
from pgbarrier.barrier.command import (
    Command,
    Flush,
    Pause,
    PauseResult,
    Resume,
    forces_checkpoint,
)
from pgbarrier.barrier.epoch import epoch_to_datetime, next_epoch
from pgbarrier.barrier.info import BarrierInfo, BarrierKind, DatabaseSnapshot
from pgbarrier.barrier.notifier import Notifier
from pgbarrier.barrier.pause import Paused, PauseState, Running, pause, resume
from pgbarrier.errors import InternalError, PgError

log = logging.getLogger(__name__)

OnCommit = Callable[[DatabaseSnapshot], None]
Listener = Callable[[BarrierInfo], None]


class DatabaseBarrierState:
    """The pure barrier state of one database (see module rules)."""

    def __init__(
        self,
        database: str,
        *,
        prev_epoch: int,
        pause: PauseState = Running(),
        committed_epoch: int | None = None,
        checkpoint_frequency: int = 1,
        barrier_interval_ms: int = 1000,
        generation: int = 0,
    ) -> None:
        if checkpoint_frequency < 1:
            raise ValueError(f"checkpoint_frequency must be at least 1, got {checkpoint_frequency}")
        if barrier_interval_ms < 1:
            raise ValueError(f"barrier_interval_ms must be at least 1, got {barrier_interval_ms}")
        if prev_epoch < 0:
            raise ValueError(f"prev_epoch must not be negative, got {prev_epoch}")
        if committed_epoch is not None and committed_epoch > prev_epoch:
            raise ValueError(
                f"committed epoch {committed_epoch} is above prev_epoch {prev_epoch}"
            )
        self.database = database
        self.generation = generation
        self.checkpoint_frequency = checkpoint_frequency
        self.barrier_interval_ms = barrier_interval_ms
        #: prev epoch of the next barrier = curr epoch of the last one (RisingWave's
        #: ``in_flight_prev_epoch``): the highest epoch handed out so far.
        self.prev_epoch: int = prev_epoch
        #: the last barrier injected (``None`` before the first).
        self.last_barrier: BarrierInfo | None = None
        #: barriers injected since this state was created.
        self.barrier_count: int = 0
        #: barriers injected since the last checkpoint.
        self.barriers_since_checkpoint: int = 0
        self.pause_state: PauseState = pause
        self.committed_epoch: int | None = committed_epoch
        #: the result of the last barrier's command (``None`` for plain barriers).
        self.last_result: object = None

    @property
    def paused(self) -> bool:
        return isinstance(self.pause_state, Paused)

    @property
    def committed_at(self) -> datetime | None:
        """Physical time of the committed epoch (aware UTC datetime) or ``None``."""
        return None if self.committed_epoch is None else epoch_to_datetime(self.committed_epoch)

    def inject(self, now_ms: int, command: Command | None = None) -> BarrierInfo:
        """Inject, apply and collect one barrier at wall time ``now_ms``.

        Returns the barrier; the command's result is in :attr:`last_result`
        (Pause/Resume: :class:`PauseResult`; Flush: the committed epoch;
        custom commands: what ``on_apply`` returned). Raises the command's
        error and then changes nothing.
        """
        prev = self.prev_epoch
        curr = next_epoch(prev, now_ms)
        since = self.barriers_since_checkpoint + 1
        forced = command is not None and forces_checkpoint(command)
        kind: BarrierKind = (
            "checkpoint" if forced or since >= self.checkpoint_frequency else "barrier"
        )

        new_pause = self.pause_state
        result: object = None
        on_apply: Callable[[BarrierInfo], object] | None = None
        if command is None or isinstance(command, Flush):
            pass
        elif isinstance(command, Pause):
            new_pause, changed = pause(
                self.pause_state, at=datetime_from_unix_ms(now_ms), by=command.by
            )
            result = PauseResult(changed=changed, state=new_pause)
        elif isinstance(command, Resume):
            new_pause, changed = resume(self.pause_state)
            result = PauseResult(changed=changed, state=new_pause)
        else:
            custom = command.as_custom()
            if isinstance(self.pause_state, Paused) and custom.requires_unpaused_error:
                raise custom.requires_unpaused_error(self.database, self.pause_state)
            on_apply = custom.on_apply

        info = BarrierInfo(
            database=self.database,
            prev_epoch=prev,
            curr_epoch=curr,
            kind=kind,
            paused=isinstance(new_pause, Paused),
        )
        if on_apply is not None:
            result = on_apply(info)  # may raise: nothing has changed yet

        # -- nothing below raises: commit the barrier -------------------------
        self.prev_epoch = curr
        self.pause_state = new_pause
        self.barrier_count += 1
        self.barriers_since_checkpoint = since
        self.last_barrier = info
        self._collect(info)
        if isinstance(command, Flush):
            result = self.committed_epoch
        self.last_result = result
        return info

    def _collect(self, info: BarrierInfo) -> None:
        if info.kind == "checkpoint":
            self.committed_epoch = info.prev_epoch
            self.barriers_since_checkpoint = 0

    def snapshot(self) -> DatabaseSnapshot:
        p = self.pause_state
        return DatabaseSnapshot(
            name=self.database,
            paused=isinstance(p, Paused),
            paused_at=p.at if isinstance(p, Paused) else None,
            paused_by=p.by if isinstance(p, Paused) else None,
            barrier_interval_ms=self.barrier_interval_ms,
            checkpoint_frequency=self.checkpoint_frequency,
            prev_epoch=self.prev_epoch,
            committed_epoch=self.committed_epoch,
            committed_at=self.committed_at,
            generation=self.generation,
        )

    def __repr__(self) -> str:
        return (
            f"DatabaseBarrierState({self.database!r}, prev_epoch={self.prev_epoch}, "
            f"barriers={self.barrier_count}, paused={self.paused}, "
            f"committed_epoch={self.committed_epoch})"
        )


_WAKE = object()  # queue item that only wakes the thread (stop)


class BarrierWorker:
    """Drives one :class:`DatabaseBarrierState` from a daemon thread (see module rules)."""

    def __init__(
        self,
        state: DatabaseBarrierState,
        *,
        clock: Clock,
        on_commit: OnCommit | None = None,
        listeners: Iterable[Listener] = (),
    ) -> None:
        self._state = state
        self._clock = clock
        self._on_commit = on_commit
        self._listeners: tuple[Listener, ...] = tuple(listeners)
        self._queue: queue.Queue[tuple[Command, Notifier] | object] = queue.Queue()
        self._state_lock = threading.RLock()  # guards _state (inject vs snapshot)
        self._submit_lock = threading.Lock()  # orders submit() against stop()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def database(self) -> str:
        return self._state.database

    @property
    def state(self) -> DatabaseBarrierState:
        """The core state; read it only through :meth:`snapshot` while the thread runs."""
        return self._state

    @property
    def barrier_interval_ms(self) -> int:
        return self._state.barrier_interval_ms

    def is_alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def add_listener(self, fn: Listener) -> None:
        """Call ``fn(info)`` after each collected barrier (must not block)."""
        with self._submit_lock:
            self._listeners = (*self._listeners, fn)

    def snapshot(self) -> DatabaseSnapshot:
        with self._state_lock:
            return self._state.snapshot()

    # -- sender side ---------------------------------------------------------

    def submit(self, command: Command) -> Notifier:
        """Queue ``command`` for its own barrier; fails at once after ``stop()``."""
        notifier = Notifier(self.database, command)
        with self._submit_lock:
            if self._stopping.is_set():
                notifier.notify_dropped()
            else:
                self._queue.put((command, notifier))
        return notifier

    # -- lifecycle -----------------------------------------------------------

    def start(self) -> None:
        """Start the thread (once); a stopped worker does not restart."""
        with self._submit_lock:
            if self._thread is not None or self._stopping.is_set():
                return
            self._thread = threading.Thread(
                target=self._run, name=f"pgbarrier-barrier-{self.database}", daemon=True
            )
            self._thread.start()

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stop the thread and fail queued commands; idempotent.

        Waits up to ``timeout`` seconds for the barrier in progress; queued
        commands are failed whether or not the thread has ended by then.
        """
        self.request_stop()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        self._drain()

    def request_stop(self) -> None:
        """Ask the thread to stop without waiting; new commands fail from now on."""
        with self._submit_lock:
            self._stopping.set()
            self._queue.put(_WAKE)

    def _drain(self) -> None:
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if isinstance(item, tuple):
                item[1].notify_dropped()

    # -- receiving side: the barrier loop ------------------------------------

    def _run(self) -> None:
        interval = self._state.barrier_interval_ms / 1000.0
        deadline = time.monotonic() + interval
        try:
            while not self._stopping.is_set():
                now = time.monotonic()
                if now >= deadline:
                    self._barrier(None, None)
                    deadline += interval
                    if deadline <= time.monotonic():  # fell behind: no burst of barriers
                        deadline = time.monotonic() + interval
                    continue
                try:
                    item = self._queue.get(timeout=deadline - now)
                except queue.Empty:
                    continue
                if not isinstance(item, tuple):
                    continue  # _WAKE
                command, notifier = item
                if self._stopping.is_set():
                    notifier.notify_dropped()
                    break
                self._barrier(command, notifier)
        except BaseException:  # pragma: no cover - defensive: never hang waiters
            log.exception("barrier worker of database %r crashed", self.database)
            raise
        finally:
            with self._submit_lock:
                self._stopping.set()
            self._drain()

    def _barrier(self, command: Command | None, notifier: Notifier | None) -> None:
        """Inject, collect and report one barrier; never raises."""
        try:
            now_ms = self._clock.now_ms()
            with self._state_lock:
                try:
                    info = self._state.inject(now_ms, command)
                except Exception as exc:
                    if notifier is None:
                        log.exception("periodic barrier of database %r failed", self.database)
                    else:
                        if not isinstance(exc, PgError):
                            log.exception("command %r on database %r failed", command, self.database)
                        notifier.notify_failed(exc)
                    return
                result = self._state.last_result
                snapshot = self._state.snapshot() if info.is_checkpoint else None
            if notifier is not None:
                notifier.notify_started(info)
            if snapshot is not None and self._on_commit is not None:
                try:
                    self._on_commit(snapshot)
                except Exception as exc:
                    log.exception("on_commit failed for database %r", self.database)
                    if notifier is not None:
                        notifier.notify_failed(exc)
            if notifier is not None:
                notifier.notify_collected(result)
            for listener in self._listeners:
                try:
                    listener(info)
                except Exception:
                    log.exception("barrier listener %r failed", listener)
        except Exception as exc:  # pragma: no cover - defensive
            log.exception("barrier of database %r failed", self.database)
            if notifier is not None:
                notifier.notify_failed(exc)
        finally:
            if notifier is not None and not notifier.done:  # pragma: no cover - defensive
                notifier.notify_failed(InternalError("barrier command was dropped"))
