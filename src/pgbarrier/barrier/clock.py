"""Physical time, injected.

Rules this module keeps:

* Everything in ``pgbarrier.barrier`` that needs the wall clock asks a
  :class:`Clock` for unix milliseconds; nothing calls ``time.time()`` itself,
  so tests drive time with a :class:`ManualClock` and never sleep.
* A clock may stand still or go backwards (NTP steps, tests); code that needs
  monotonic values (epochs) enforces that itself, see ``epoch.next_epoch``.
* Interval timing (when the next periodic barrier is due) is not wall time and
  uses ``time.monotonic`` instead.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Protocol, runtime_checkable

_UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@runtime_checkable
class Clock(Protocol):
    """A source of wall-clock time."""

    def now_ms(self) -> int:
        """Milliseconds since 1970-01-01T00:00:00Z."""
        ...


class SystemClock:
    """The machine's wall clock."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def __repr__(self) -> str:
        return "SystemClock()"


class ManualClock:
    """A clock that moves only when told to (for tests); it may go backwards."""

    def __init__(self, start_ms: int) -> None:
        self._lock = threading.Lock()
        self._now_ms = int(start_ms)

    def now_ms(self) -> int:
        with self._lock:
            return self._now_ms

    def advance(self, ms: int) -> int:
        """Move the clock by ``ms`` (may be negative); return the new time."""
        with self._lock:
            self._now_ms += int(ms)
            return self._now_ms

    def set(self, ms: int) -> None:
        """Set the clock to ``ms``, earlier or later than now."""
        with self._lock:
            self._now_ms = int(ms)

    def __repr__(self) -> str:
        return f"ManualClock({self._now_ms})"


def datetime_from_unix_ms(ms: int) -> datetime:
    """``ms`` unix milliseconds as an aware UTC datetime (exact, no float rounding)."""
    return _UNIX_EPOCH + timedelta(milliseconds=ms)
