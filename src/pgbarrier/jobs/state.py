"""The batch-refresh job lifecycle as data (after RisingWave's BatchRefreshJobStatus).

``Creating(snapshot_epoch)`` → ``Idle(last_committed_epoch)``. Each state is a
frozen dataclass carrying its own data; a transition is a function returning a
new state, and an illegal one raises :class:`IllegalTransition` and changes
nothing. (Refreshing, failed and dropping arrive with scheduled refreshes.)
"""

from __future__ import annotations

from dataclasses import dataclass


class IllegalTransition(Exception):
    """A job was asked to move along an edge its lifecycle does not have."""


@dataclass(frozen=True)
class Creating:
    snapshot_epoch: int
    name: str = "creating"


@dataclass(frozen=True)
class Idle:
    last_committed_epoch: int
    name: str = "idle"


JobStatus = Creating | Idle


def created(state: JobStatus) -> Idle:
    """The snapshot of a creating job is in place: it becomes idle at its snapshot epoch."""
    if not isinstance(state, Creating):
        raise IllegalTransition(f"cannot finish creating a job that is {state.name}")
    return Idle(last_committed_epoch=state.snapshot_epoch)
