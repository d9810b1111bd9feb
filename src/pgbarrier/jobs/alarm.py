"""Wakes a database's barriers when a batch refresh falls due.

Scheduled refreshes start on barriers (a committed epoch past the due time), so
on their own they start up to a barrier interval late, and a little more since
the committed epoch is the *previous* barrier's. The alarm closes that gap: at a
job's due time (by the injected clock) it calls ``poke(database)``, which asks
the barrier manager for two checkpoints at once (``request_checkpoints``; the
alarm itself never injects barriers); the second of them commits an epoch at
or past the due time, and the scheduler's barrier listener starts the run.

Rules: one poke per (database, due time), however many jobs share it; a poke is
only a hint (the listener still checks the job is due and the database is not
paused), so a stale or early alarm does nothing harmful; the thread never
holds its lock while poking.
"""

from __future__ import annotations

import heapq
import logging
import threading
from collections.abc import Callable

from pgbarrier.barrier.clock import Clock

log = logging.getLogger(__name__)

_MAX_WAIT_MS = 60_000


class DueAlarm:
    def __init__(self, clock: Clock, poke: Callable[[str], None]) -> None:
        self._clock = clock
        self._poke = poke
        self._cond = threading.Condition()
        self._alarms: list[tuple[int, str]] = []
        self._stopped = False
        self._thread = threading.Thread(target=self._loop, name="refresh-alarm", daemon=True)
        self._thread.start()

    def set(self, database: str, due_ms: int) -> None:
        with self._cond:
            heapq.heappush(self._alarms, (due_ms, database))
            if self._alarms[0] == (due_ms, database):
                self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._stopped:
                    if not self._alarms:
                        self._cond.wait()
                        continue
                    wait_ms = self._alarms[0][0] - self._clock.now_ms()
                    if wait_ms <= 0:
                        break
                    # bounded, so a wall clock that jumps is noticed within a minute
                    self._cond.wait(min(wait_ms, _MAX_WAIT_MS) / 1000)
                if self._stopped:
                    return
                now = self._clock.now_ms()
                due: set[str] = set()
                while self._alarms and self._alarms[0][0] <= now:
                    due.add(heapq.heappop(self._alarms)[1])
            for database in sorted(due):
                try:
                    self._poke(database)
                except Exception:  # a dropped database, a stopping manager: only a hint
                    log.debug("refresh alarm for %s not delivered", database, exc_info=True)
