"""What a barrier and a database look like from outside the worker.

Rules this module keeps:

* :class:`BarrierInfo` describes one injected barrier: it moved ``database``
  from ``prev_epoch`` to ``curr_epoch`` (``prev_epoch < curr_epoch``);
  ``kind`` is ``"checkpoint"`` when collecting it commits ``prev_epoch``;
  ``paused`` is the pause state AFTER the barrier's command was applied.
* :class:`DatabaseSnapshot` is an immutable copy of one database's barrier
  state, what ``rw_catalog.rw_databases`` shows and what the meta store
  persists. ``prev_epoch`` is the prev epoch of the NEXT barrier (RisingWave's
  ``in_flight_prev_epoch``), i.e. the highest epoch handed out so far, so a
  database restored from it only issues higher epochs. ``generation`` tells
  apart two databases that had the same name (dropped and created again); it
  does not take part in equality.
* Both are frozen values: safe to hand to any thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, TypeAlias

BarrierKind: TypeAlias = Literal["barrier", "checkpoint"]


@dataclass(frozen=True)
class BarrierInfo:
    """One barrier: ``prev_epoch -> curr_epoch`` of ``database``."""

    database: str
    prev_epoch: int
    curr_epoch: int
    kind: BarrierKind
    paused: bool

    @property
    def is_checkpoint(self) -> bool:
        return self.kind == "checkpoint"


@dataclass(frozen=True)
class DatabaseSnapshot:
    """One database's barrier state at one instant (see module rules)."""

    name: str
    paused: bool
    paused_at: datetime | None
    paused_by: str | None
    barrier_interval_ms: int
    checkpoint_frequency: int
    prev_epoch: int
    committed_epoch: int | None
    committed_at: datetime | None
    #: which incarnation of ``name`` (the manager numbers every database it adds)
    generation: int = field(default=0, compare=False)
    #: a paused database's ``REASON`` and automatic resume time (``PAUSE FOR``)
    pause_reason: str | None = None
    resumes_at: datetime | None = None
