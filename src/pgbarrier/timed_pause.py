"""Timed pauses end by themselves: ``ALTER DATABASE d PAUSE FOR interval`` (issue 29, item 2).

Rules this module keeps:

* A paused database whose pause has a deadline (``resumes_at``, in its pause state and in
  the meta store) is resumed at that deadline exactly as ``ALTER DATABASE d RESUME`` would
  resume it: a Resume command riding a barrier of ``d``, so the resume is a checkpoint,
  written before anyone hears of it, and everything waiting for RESUME wakes. The Resume
  carries the deadline and resumes only the pause that had it: a PAUSE that replaced the
  deadline (or a RESUME and a new PAUSE) meanwhile is left alone.
* Two ways notice a deadline, both only hints (the Resume decides): an alarm at the
  deadline by the injected clock (:class:`pgbarrier.jobs.alarm.DueAlarm`), armed when a
  barrier of a paused database shows a deadline and, when this process takes office, for
  every database (so a deadline that passed while pgbarrier was down, or while another
  process led, resumes at start-up and after a failover); and every barrier of a paused
  database whose deadline has passed (the periodic barriers; with a test clock, FLUSH).
* At most one automatic Resume per database is in flight; nothing here blocks a barrier
  listener (the Resume is scheduled, not waited for).
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime
from typing import TYPE_CHECKING

from pgbarrier.barrier.command import Resume
from pgbarrier.barrier.info import BarrierInfo
from pgbarrier.errors import PgError
from pgbarrier.jobs.alarm import DueAlarm

if TYPE_CHECKING:
    from pgbarrier.barrier.clock import Clock
    from pgbarrier.barrier.manager import BarrierManager
    from pgbarrier.events import EventBus

log = logging.getLogger(__name__)

#: who the log names for an automatic resume
RESUMER = "pgbarrier (timed pause)"


def _ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)


class PauseTimer:
    def __init__(self, barrier: BarrierManager, clock: Clock, *,
                 events: EventBus | None = None) -> None:
        self.barrier = barrier
        self.clock = clock
        #: the automatic resume is an ``rw_barrier`` event (pgbarrier.events)
        self.events = events
        self._lock = threading.Lock()
        self._armed: set[tuple[str, int]] = set()
        self._resuming: set[str] = set()
        self._alarm: DueAlarm | None = None

    def start(self) -> None:
        """Taking office: arm every database's deadline (passed ones resume now)."""
        self._alarm = DueAlarm(self.clock, self.check)
        for snap in self.barrier.snapshots():
            if snap.paused and snap.resumes_at is not None:
                self._arm(snap.name, _ms(snap.resumes_at))

    def stop(self) -> None:
        if self._alarm is not None:
            self._alarm.stop()

    def on_barrier(self, info: BarrierInfo) -> None:
        """Barrier listener: a paused database's deadline is armed, or acted on if passed."""
        if info.paused:
            self.check(info.database)

    def _arm(self, database: str, due_ms: int) -> None:
        with self._lock:
            if (database, due_ms) in self._armed:
                return
            self._armed.add((database, due_ms))
        if due_ms <= self.clock.now_ms():
            self.check(database)
        elif self._alarm is not None:
            self._alarm.set(database, due_ms)

    def check(self, database: str) -> None:
        """Resume ``database`` if its pause's deadline has passed (arm it if not)."""
        try:
            snap = self.barrier.snapshot(database)
        except PgError:
            return  # dropped
        if not snap.paused or snap.resumes_at is None:
            return
        due_ms = _ms(snap.resumes_at)
        if due_ms > self.clock.now_ms():
            self._arm(database, due_ms)
            return
        with self._lock:
            if database in self._resuming:
                return
            self._resuming.add(database)
        try:
            handle = self.barrier.schedule(database, Resume(by=RESUMER, deadline=snap.resumes_at))
        except PgError as exc:  # stopping, or the database is being dropped
            log.debug("timed resume of %s not scheduled: %s", database, exc.message)
            with self._lock:
                self._resuming.discard(database)
            return

        def done(future: object) -> None:
            with self._lock:
                self._resuming.discard(database)
                self._armed.discard((database, due_ms))
            try:
                outcome = handle.collected.result()
            except Exception as exc:  # noqa: BLE001 - the next barrier looks again
                log.warning("timed resume of database %r failed: %s", database, exc)
                return
            if outcome.changed:
                if self.events is not None:
                    self.events.barrier_event(database, "resume", RESUMER)
                log.info('database "%s" running by %s: its pause ended at %s', database,
                         RESUMER, snap.resumes_at.isoformat() if snap.resumes_at else "",
                         extra={"event": "resume", "database": database, "user": RESUMER})

        handle.collected.add_done_callback(done)
