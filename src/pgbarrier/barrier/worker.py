"""One database's barrier state: the deterministic core the barrier scheduler drives.

Rules this module keeps:

* :class:`DatabaseBarrierState` is the deterministic core: no threads, no
  sleeping, no clock of its own (``inject`` is given the wall time). Each
  ``inject`` is one barrier: the epoch advances through ``next_epoch`` (so
  epochs strictly increase, also when restored from a persisted
  ``prev_epoch``), the barrier is a checkpoint every
  ``checkpoint_frequency``-th barrier since the last checkpoint or when its
  command forces one, the command is applied (in memory: its ``on_apply``),
  and the barrier is collected in memory: on a checkpoint the committed epoch
  becomes the barrier's ``prev_epoch``.
* ``inject`` is all or nothing: when applying the command raises (a command
  refused while paused, an ``on_apply`` that fails), the error propagates and
  epochs, counters, pause state and committed epoch are exactly as before.
* What is durable (``on_commit``, a command's ``on_collect``) and the
  threads that drive states belong to :mod:`pgbarrier.barrier.scheduler`:
  one scheduler thread for every database, not a thread per database.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from pgbarrier.barrier.clock import datetime_from_unix_ms
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
from pgbarrier.barrier.pause import Paused, PauseState, Running, pause, resume

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
            deadline = command.resumes_at_ms
            new_pause, changed = pause(
                self.pause_state, at=datetime_from_unix_ms(now_ms), by=command.by,
                reason=command.reason,
                resumes_at=None if deadline is None else datetime_from_unix_ms(deadline),
            )
            result = PauseResult(changed=changed, state=new_pause,
                                 replaced=not changed and new_pause != self.pause_state)
        elif isinstance(command, Resume):
            new_pause, changed = resume(self.pause_state, command.deadline)
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
            pause_reason=p.reason if isinstance(p, Paused) else None,
            resumes_at=p.resumes_at if isinstance(p, Paused) else None,
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
