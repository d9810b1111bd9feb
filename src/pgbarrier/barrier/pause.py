"""A database's pause state, as data.

Rules this module keeps:

* The state is one of two frozen values: :class:`Running` or
  :class:`Paused` (which remembers when and by whom).
* Transitions are pure functions returning ``(new_state, changed)``; they never
  raise. Both are idempotent: pausing a paused database keeps the ORIGINAL
  ``at``/``by`` and reports ``changed=False`` (its ``reason`` and ``resumes_at``
  are the new pause's: a PAUSE replaces the deadline and reason); resuming a
  running database reports ``changed=False``.
* A timed pause (``resumes_at``) ends with a Resume carrying that deadline
  (:func:`resume` with ``deadline``): it resumes only the pause that had it, so a
  deadline replaced meanwhile resumes nothing.
* ``Paused.at`` is an aware datetime (UTC).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TypeAlias


@dataclass(frozen=True)
class Running:
    """Barriers flow and data flows into jobs."""


@dataclass(frozen=True)
class Paused:
    """Barriers flow, epochs advance, but data does not flow into jobs."""

    at: datetime
    by: str
    #: ``PAUSE ... REASON 'text'``
    reason: str | None = None
    #: ``PAUSE FOR interval``: when it resumes by itself (aware, UTC)
    resumes_at: datetime | None = None


PauseState: TypeAlias = Running | Paused


def is_paused(state: PauseState) -> bool:
    return isinstance(state, Paused)


def pause(state: PauseState, at: datetime, by: str, reason: str | None = None,
          resumes_at: datetime | None = None) -> tuple[PauseState, bool]:
    """Pause: ``Running -> Paused(at, by, reason, resumes_at)``; ``Paused`` keeps its
    ``at``/``by`` and takes the new reason and deadline (changed False)."""
    if isinstance(state, Paused):
        if (state.reason, state.resumes_at) == (reason, resumes_at):
            return state, False
        return Paused(at=state.at, by=state.by, reason=reason, resumes_at=resumes_at), False
    return Paused(at=at, by=by, reason=reason, resumes_at=resumes_at), True


def resume(state: PauseState, deadline: datetime | None = None) -> tuple[PauseState, bool]:
    """Resume: ``Paused -> Running``; ``Running`` stays (changed False). With ``deadline``
    (a timed pause's own resume) only a pause with that deadline resumes."""
    if isinstance(state, Paused):
        if deadline is not None and state.resumes_at != deadline:
            return state, False
        return Running(), True
    return state, False
