"""A database's pause state, as data.

Rules this module keeps:

* The state is one of two frozen values: :class:`Running` or
  :class:`Paused` (which remembers when and by whom).
* Transitions are pure functions returning ``(new_state, changed)``; they never
  raise. Both are idempotent: pausing a paused database keeps the ORIGINAL
  ``at``/``by`` and reports ``changed=False``; resuming a running database
  reports ``changed=False``.
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


PauseState: TypeAlias = Running | Paused


def is_paused(state: PauseState) -> bool:
    return isinstance(state, Paused)


def pause(state: PauseState, at: datetime, by: str) -> tuple[PauseState, bool]:
    """Pause: ``Running -> Paused(at, by)``; ``Paused`` stays as it was (changed False)."""
    if isinstance(state, Paused):
        return state, False
    return Paused(at=at, by=by), True


def resume(state: PauseState) -> tuple[PauseState, bool]:
    """Resume: ``Paused -> Running``; ``Running`` stays (changed False)."""
    if isinstance(state, Paused):
        return Running(), True
    return state, False
