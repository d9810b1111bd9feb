"""Meta commands that ride on barriers.

Rules this module keeps:

* A command is a frozen value; scheduling one injects a barrier for it at once
  (one command per barrier) and the command is applied when that barrier is.
* Every command barrier is a checkpoint (as RisingWave's ``need_checkpoint``),
  so that what the command changed is committed, and handed to the durable
  ``on_commit`` hook, before the command's issuer hears back. Only a
  :class:`Custom` built with ``checkpoint=False`` rides an ordinary barrier.
* :class:`Pause`, :class:`Resume` and :class:`Flush` are built into the
  barrier scheduler. Every other command is (or turns into, via ``as_custom()``)
  a :class:`Custom` with two optional callbacks. New features add commands
  this way without touching the scheduler:

  - ``on_apply(info)`` runs on the barrier scheduler's thread when the barrier
    is injected, optionally refused while the database is paused. It is
    cheap, in memory and never blocks (no backend queries, no meta-store
    writes, no waiting on other commands). When it raises, the barrier is
    not injected and nothing in the barrier state changes; the exception goes
    to the command's issuer.
  - ``on_collect(info)`` is the command's durable side effect (a meta-store
    write): it runs off the scheduler thread, after the barrier's checkpoint
    was recorded (``on_commit``) and before the issuer hears back, in barrier
    order with the other barriers of the same database (see
    ``scheduler.py``). When it raises, the barrier stays injected and the
    command fails with that error.

  The command's result is what ``on_collect`` returned when it has one, else
  what ``on_apply`` returned.
* A command refused because the database is paused raises one typed error
  (55000 for the built-in ones, see :func:`paused_error`) and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from dataclasses import dataclass
from typing import Protocol, TypeAlias, runtime_checkable

from pgbarrier.barrier.info import BarrierInfo
from pgbarrier.barrier.pause import Paused, PauseState
from pgbarrier.errors import ObjectNotInPrerequisiteState, PgError


@dataclass(frozen=True)
class Pause:
    """``ALTER DATABASE d PAUSE [FOR interval] [REASON 'text']``: idempotent; a paused
    database keeps its original at/by and takes this pause's reason and deadline.

    Result: :class:`PauseResult` (``changed=False`` when it was already paused).
    """

    by: str
    reason: str | None = None
    #: unix ms at which it resumes by itself (None: until RESUME)
    resumes_at_ms: int | None = None


@dataclass(frozen=True)
class Resume:
    """``ALTER DATABASE d RESUME``: idempotent.

    Result: :class:`PauseResult` (``changed=False`` when it was not paused).
    ``by`` is kept for logging; a running database records no resumer. ``deadline``: a
    timed pause's own resume, which resumes only the pause with that ``resumes_at``.
    """

    by: str
    deadline: datetime | None = None


@dataclass(frozen=True)
class Flush:
    """``FLUSH``: forces a checkpoint barrier; collected once it has committed.

    Result: the committed epoch (``int``), the ``prev_epoch`` of that barrier.
    Allowed while paused (barriers keep flowing).
    """


def _nothing(_info: BarrierInfo) -> None:
    return None


@dataclass(frozen=True)
class Custom:
    """A generic command: ``on_apply(info)`` when its barrier is injected (in memory),
    ``on_collect(info)`` when it is collected (durable), see the module rules.

    ``requires_unpaused_error``: when given and the database is paused, the
    command is refused with ``requires_unpaused_error(database, paused)`` and
    neither callback is called. When ``None`` the command also applies while
    paused (``info.paused`` tells it). ``checkpoint``: whether its barrier is
    a checkpoint (default yes, see the module rules).
    """

    name: str
    on_apply: Callable[[BarrierInfo], object] = _nothing
    requires_unpaused_error: Callable[[str, Paused], PgError] | None = None
    checkpoint: bool = True
    on_collect: Callable[[BarrierInfo], object] | None = None

    def as_custom(self) -> Custom:
        return self


@dataclass(frozen=True)
class CreateBatchRefreshJob:
    """Create a batch-refresh job at ``info.prev_epoch`` of its barrier.

    ``on_apply`` / ``on_collect`` as for :class:`Custom` (the job's durable
    record belongs in ``on_collect``). Refused while the database is paused
    with 55000 ``cannot create batch refresh job while database barrier is
    paused`` (DETAIL who paused it and when, HINT how to resume); then neither
    callback is called and nothing changes. Result: as for :class:`Custom`.
    """

    name: str
    on_apply: Callable[[BarrierInfo], object] = _nothing
    on_collect: Callable[[BarrierInfo], object] | None = None

    def as_custom(self) -> Custom:
        return Custom(
            name=f"create batch refresh job {self.name}",
            on_apply=self.on_apply,
            requires_unpaused_error=_create_job_while_paused,
            on_collect=self.on_collect,
        )


@runtime_checkable
class CustomCommand(Protocol):
    """Anything the worker can apply as a :class:`Custom`."""

    def as_custom(self) -> Custom: ...


Command: TypeAlias = Pause | Resume | Flush | Custom | CreateBatchRefreshJob | CustomCommand


@dataclass(frozen=True)
class PauseResult:
    """Result of :class:`Pause` / :class:`Resume`: whether it changed anything, and the state now."""

    changed: bool
    state: PauseState
    #: a PAUSE of a paused database that replaced its reason and deadline
    replaced: bool = False


def forces_checkpoint(command: Command) -> bool:
    """Whether the barrier carrying ``command`` must be a checkpoint."""
    if isinstance(command, (Pause, Resume, Flush)):
        return True
    return command.as_custom().checkpoint


def paused_error(message: str, database: str, paused: Paused) -> ObjectNotInPrerequisiteState:
    """The 55000 error for ``message`` on a paused database, with SPEC's DETAIL and HINT.

    For example ``paused_error(f'cannot refresh materialized view "{v}" while
    database barrier is paused', db, paused)`` for a manual refresh.
    """
    detail = (f'database "{database}" was paused at {_pg_time(paused.at)} by {paused.by}'
              + (f": {paused.reason}" if paused.reason else ""))
    if paused.resumes_at is not None:
        detail += f"; it resumes at {_pg_time(paused.resumes_at)}"
    return ObjectNotInPrerequisiteState(
        message,
        detail=detail,
        hint=f"Resume the database with ALTER DATABASE {database} RESUME, then retry.",
    )


def _pg_time(at: datetime) -> str:
    """PostgreSQL's text form of a timestamptz in UTC, as psql would print it."""
    return f"{at.astimezone(timezone.utc):%Y-%m-%d %H:%M:%S}+00"


def _create_job_while_paused(database: str, paused: Paused) -> PgError:
    return paused_error(
        "cannot create batch refresh job while database barrier is paused", database, paused
    )
