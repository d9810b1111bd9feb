"""Epochs, the barrier scheduler (every database on a few threads), commands, notifiers, pause state.

Modelled on RisingWave's meta barrier manager (``src/meta/src/barrier``).
This package never blocks on a backend query: commands apply in memory when
their barrier is injected, their durable side effects run when it is
collected, off the injecting thread, and refresh runs (``pgbarrier.jobs``)
happen beside the barrier loop. See each module's docstring for the rules it
keeps.
"""

from pgbarrier.barrier.clock import Clock, ManualClock, SystemClock, datetime_from_unix_ms
from pgbarrier.barrier.command import (
    Command,
    CreateBatchRefreshJob,
    Custom,
    CustomCommand,
    Flush,
    Pause,
    PauseResult,
    Resume,
    forces_checkpoint,
    paused_error,
)
from pgbarrier.barrier.epoch import (
    EPOCH_INC,
    EPOCH_ORIGIN_MS,
    epoch_from_unix_ms,
    epoch_to_datetime,
    epoch_to_unix_ms,
    next_epoch,
)
from pgbarrier.barrier.info import BarrierInfo, BarrierKind, DatabaseSnapshot
from pgbarrier.barrier.manager import BarrierManager
from pgbarrier.barrier.notifier import Notifier
from pgbarrier.barrier.pause import Paused, PauseState, Running, is_paused
from pgbarrier.barrier.scheduler import BarrierScheduler
from pgbarrier.barrier.worker import DatabaseBarrierState, Listener, OnCommit

__all__ = [
    "EPOCH_INC",
    "EPOCH_ORIGIN_MS",
    "BarrierInfo",
    "BarrierKind",
    "BarrierManager",
    "BarrierScheduler",
    "Clock",
    "Command",
    "CreateBatchRefreshJob",
    "Custom",
    "CustomCommand",
    "DatabaseBarrierState",
    "DatabaseSnapshot",
    "Flush",
    "Listener",
    "ManualClock",
    "Notifier",
    "OnCommit",
    "Pause",
    "PauseResult",
    "PauseState",
    "Paused",
    "Resume",
    "Running",
    "SystemClock",
    "datetime_from_unix_ms",
    "epoch_from_unix_ms",
    "epoch_to_datetime",
    "epoch_to_unix_ms",
    "forces_checkpoint",
    "is_paused",
    "next_epoch",
    "paused_error",
]
