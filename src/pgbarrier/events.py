"""Events of the control plane for ``LISTEN`` clients: ``rw_refresh`` and ``rw_barrier``.

Rules this module keeps:

* Two channels. ``rw_refresh`` carries one JSON object per finished refresh run, built by
  :func:`refresh_payload` (the one place that decides its fields); ``rw_barrier`` one per
  database pause and resume and per view suspend and resume, built by
  :func:`barrier_payload`. A PAUSE that replaces a paused database's reason or deadline,
  and a SUSPEND that replaces a suspended view's reason, are events too (the state
  changed); a statement that changes nothing (its NOTICE says so) is none.
* Events are per database: one of database ``d`` reaches only sessions connected to
  ``d``. What carries them is the data backend's
  (:meth:`pgbarrier.backends.base.Backend.notify`): on DuckDB pgbarrier's own
  LISTEN/NOTIFY (:mod:`pgbarrier.backends.duckdb_notify`), upstream PostgreSQL's own
  ``pg_notify`` in that database, so PostgreSQL delivers them with its own rules
  (transactions, ``UNLISTEN *``) beside every other channel.
* :meth:`EventBus.publish` never blocks and never raises: it is called on barrier threads
  and the refresh pool. It puts the event in a bounded queue (:data:`QUEUE_EVENTS`); when
  the queue is full the oldest event is dropped (counted in ``dropped``, logged once per
  burst), so a slow carrier (an upstream that does not answer) never stalls a refresh or
  a barrier. One thread of its own hands the queued events, in order, to the carrier; an
  event the carrier fails to deliver is dropped with a log line.
* Only the process that leads serves clients and runs barriers and refreshes
  (:mod:`pgbarrier.leadership`), so delivery within the process is all there is: events
  of a term are published by the process in office, and an event queued when a process
  stops is lost with it.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

#: the channels
REFRESH = "rw_refresh"
BARRIER = "rw_barrier"
#: events held for the carrier before the oldest is dropped
QUEUE_EVENTS = 10_000

#: what carries an event: (database, channel, payload text)
Carrier = Callable[[str, str, str], None]

_SQLSTATE = re.compile(r"\b([0-9A-Z]{5})\b")


def _iso(at: dt.datetime | None) -> str | None:
    return None if at is None else at.astimezone(dt.timezone.utc).isoformat()


def _sqlstate(run: Any) -> str | None:
    """The run's SQLSTATE: its own field when the history keeps one, else one its error
    text names (``SQLSTATE 42P01``), else None."""
    own = getattr(run, "sqlstate", None)
    if own:
        return own
    error = getattr(run, "error", None)
    if not error or "SQLSTATE" not in error:
        return None
    found = _SQLSTATE.search(error[error.index("SQLSTATE") + 8:])
    return found.group(1) if found else None


def _duration_ms(run: Any) -> float | None:
    own = getattr(run, "duration_ms", None)
    if own is not None:
        return own
    if run.finished_at is None or run.started_at is None:
        return None
    return round((run.finished_at - run.started_at).total_seconds() * 1000, 3)


def refresh_payload(run: Any) -> dict[str, Any]:
    """``rw_refresh``'s object for one finished run (a history run: ``database``, ``job``,
    ``run_id``, ``trigger``, ``status``, ``rows``, ``error``, ``started_at``,
    ``finished_at``, ``target_epoch``; ``sqlstate`` and ``duration_ms`` are read when the
    run has them, else derived)."""
    return {
        "database": run.database,
        "view": run.job,
        "run_id": run.run_id,
        "trigger": run.trigger,
        "status": run.status,
        "sqlstate": _sqlstate(run),
        "rows": run.rows,
        "duration_ms": _duration_ms(run),
        "epoch": run.target_epoch,
    }


def barrier_payload(database: str, event: str, by: str | None, *, view: str | None = None,
                    reason: str | None = None, resumes_at: dt.datetime | None = None
                    ) -> dict[str, Any]:
    """``rw_barrier``'s object: ``event`` is ``pause`` or ``resume`` of the database
    (``view`` null), ``suspend`` or ``resume`` of a view."""
    return {"database": database, "view": view, "event": event, "by": by, "reason": reason,
            "resumes_at": _iso(resumes_at)}


class EventBus:
    """Publishes events to a carrier from a thread of its own (see the module rules)."""

    def __init__(self, carrier: Carrier, capacity: int = QUEUE_EVENTS) -> None:
        self._carrier = carrier
        self._queue: deque[tuple[str, str, str]] = deque()
        self._capacity = max(1, capacity)
        self._cond = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None
        #: events dropped because the queue was full
        self.dropped = 0
        self._told_dropped = False

    def start(self) -> None:
        with self._cond:
            if self._thread is not None:
                return
            self._stopping = False
            self._thread = threading.Thread(target=self._loop, name="pgbarrier-events",
                                            daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Deliver what is queued (for up to ``timeout``), then stop."""
        with self._cond:
            thread, self._thread = self._thread, None
            self._stopping = True
            self._cond.notify_all()
        if thread is not None:
            thread.join(timeout)

    def publish(self, database: str, channel: str, payload: dict[str, Any]) -> None:
        """Queue one event; never blocks (the oldest is dropped when the queue is full)."""
        try:
            text = json.dumps(payload, separators=(", ", ": "), default=str)
        except (TypeError, ValueError):  # pragma: no cover - the builders make plain values
            log.exception("event of %s not published", channel)
            return
        with self._cond:
            if len(self._queue) >= self._capacity:
                self._queue.popleft()
                self.dropped += 1
                if not self._told_dropped:
                    self._told_dropped = True
                    log.warning("events dropped: %d were waiting for delivery (the oldest "
                                "goes first)", self._capacity)
            self._queue.append((database, channel, text))
            self._cond.notify()

    def refresh_finished(self, run: Any) -> None:
        """A refresh run ended (any status): its ``rw_refresh`` event."""
        self.publish(run.database, REFRESH, refresh_payload(run))

    def barrier_event(self, database: str, event: str, by: str | None, *,
                      view: str | None = None, reason: str | None = None,
                      resumes_at: dt.datetime | None = None) -> None:
        self.publish(database, BARRIER, barrier_payload(database, event, by, view=view,
                                                        reason=reason, resumes_at=resumes_at))

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._stopping:
                    self._cond.wait()
                if not self._queue:
                    return
                database, channel, text = self._queue.popleft()
                if not self._queue:
                    self._told_dropped = False
            try:
                self._carrier(database, channel, text)
            except Exception as exc:  # noqa: BLE001 - one lost event, the next may go
                log.warning("event on %s for database %r not delivered: %s", channel, database,
                            getattr(exc, "message", exc))
