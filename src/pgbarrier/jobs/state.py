"""The batch-refresh job lifecycle as data (after RisingWave's BatchRefreshJobStatus).

::

    Creating(snapshot) ──created──► Idle(last) ──start──► Refreshing(last, target, run)
                                     ▲    ▲                    │        │
                                     │    └─────committed──────┘        │ failed
                                     │                                  ▼
                                     └──────────start / committed── Failed(last, error, at)
    any state but Dropping ──drop──► Dropping(previous) ──undrop──► previous
                                                              (Refreshing: Idle)

Each state is a frozen dataclass carrying its own data; a transition is a
function returning a new state. An illegal one raises :class:`IllegalTransition`
and changes nothing. ``Failed`` keeps the last committed epoch (readers still
see that result) and the epoch of the failed attempt, from which the next
scheduled run is counted, so a failing job retries once per interval.
``Dropping`` remembers the state it left, so a drop the backend refuses (a
dependent object upstream) puts the job back (``undrop``) instead of leaving it
half-dropped; its run, if it was refreshing, was cancelled by the drop, so it
comes back ``Idle`` at its last committed epoch.
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


@dataclass(frozen=True)
class Refreshing:
    last_committed_epoch: int
    target_epoch: int
    run_id: int
    name: str = "refreshing"


@dataclass(frozen=True)
class Failed:
    last_committed_epoch: int
    error: str
    failed_epoch: int
    name: str = "failed"


@dataclass(frozen=True)
class Dropping:
    #: the state the drop left (None: loaded from the meta store, which keeps only "dropping")
    previous: Creating | Idle | Refreshing | Failed | None = None
    name: str = "dropping"


JobStatus = Creating | Idle | Refreshing | Failed | Dropping


def created(state: JobStatus) -> Idle:
    """The first snapshot is in place: the job is idle at its snapshot epoch."""
    if not isinstance(state, Creating):
        raise IllegalTransition(f"cannot finish creating a job that is {state.name}")
    return Idle(last_committed_epoch=state.snapshot_epoch)


def start_refresh(state: JobStatus, target_epoch: int, run_id: int) -> Refreshing:
    """A run starts reading the snapshot at ``target_epoch`` (at most one run at a time)."""
    if not isinstance(state, (Idle, Failed)):
        raise IllegalTransition(f"cannot start a refresh of a job that is {state.name}")
    return Refreshing(state.last_committed_epoch, target_epoch, run_id)


def refresh_committed(state: JobStatus, run_id: int) -> Idle:
    """Run ``run_id``'s result is committed: readers now see ``target_epoch``."""
    if not isinstance(state, Refreshing) or state.run_id != run_id:
        raise IllegalTransition(f"run {run_id} cannot commit a job that is {state.name}")
    return Idle(last_committed_epoch=state.target_epoch)


def refresh_failed(state: JobStatus, run_id: int, error: str) -> Failed:
    """Run ``run_id`` failed: keep the last committed result, remember the attempt."""
    if not isinstance(state, Refreshing) or state.run_id != run_id:
        raise IllegalTransition(f"run {run_id} cannot fail a job that is {state.name}")
    return Failed(state.last_committed_epoch, error, state.target_epoch)


def drop(state: JobStatus) -> Dropping:
    if isinstance(state, Dropping):
        raise IllegalTransition("the job is already being dropped")
    return Dropping(state)


def undrop(state: JobStatus) -> JobStatus:
    """The backend refused the drop: back to the state the drop left."""
    if not isinstance(state, Dropping) or state.previous is None:
        raise IllegalTransition(f"cannot undo a drop of a job that is {state.name}")
    prev = state.previous
    if isinstance(prev, Refreshing):  # its run was cancelled by the drop
        return Idle(prev.last_committed_epoch)
    return prev


def schedule_base_epoch(state: JobStatus) -> int | None:
    """The epoch the next scheduled run is counted from (None: not schedulable now)."""
    if isinstance(state, Idle):
        return state.last_committed_epoch
    if isinstance(state, Failed):
        return state.failed_epoch
    return None


def last_committed_epoch(state: JobStatus) -> int | None:
    if isinstance(state, Creating):
        return None
    if isinstance(state, Dropping):
        return None if state.previous is None else last_committed_epoch(state.previous)
    return state.last_committed_epoch
