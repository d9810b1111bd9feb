"""Two-phase notifiers for scheduled commands (after RisingWave's ``notifier.rs``).

Rules this module keeps:

* ``started`` resolves with the :class:`BarrierInfo` of the barrier that
  carries the command (it got its epoch); ``collected`` resolves with the
  command's result once that barrier is collected (for checkpoints: once it
  has committed, including the durable ``on_commit`` hook).
* Every failure is a :class:`PgError` and goes into each future not yet
  resolved: a command refused while applying fails both; a command whose
  barrier was injected but whose commit failed has ``started`` resolved and
  ``collected`` failed.
* Each future resolves exactly once; later notifications are ignored.
  Waiters cannot cancel them (they are marked running at creation), so the
  worker never trips over a cancelled future.
* A notifier is never left pending: a worker that stops, or drops a command
  for any other reason, fails it (:meth:`Notifier.notify_dropped`,
  57P01 ``AdminShutdown``). Waiting therefore ends with a result or an error,
  or with ``TimeoutError`` only when the caller asked for a timeout.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING

from pgbarrier.barrier.info import BarrierInfo
from pgbarrier.errors import AdminShutdown, as_pg_error

if TYPE_CHECKING:
    from pgbarrier.barrier.command import Command


class Notifier:
    """The issuer's handle on one scheduled command."""

    def __init__(self, database: str, command: Command | None = None) -> None:
        self.database = database
        self.command = command
        self.started: Future[BarrierInfo] = Future()
        self.collected: Future[object] = Future()
        self.started.set_running_or_notify_cancel()
        self.collected.set_running_or_notify_cancel()
        self._lock = threading.Lock()

    # -- worker side --------------------------------------------------------

    def notify_started(self, info: BarrierInfo) -> None:
        """The command got its barrier ``info``."""
        with self._lock:
            if not self.started.done():
                self.started.set_result(info)

    def notify_collected(self, result: object) -> None:
        """The command's barrier was collected; ``result`` is the command's result."""
        with self._lock:
            if not self.collected.done():
                self.collected.set_result(result)

    def notify_failed(self, error: BaseException) -> None:
        """Fail every phase not yet resolved with ``error`` (made a PgError)."""
        err = as_pg_error(error)
        with self._lock:
            for fut in (self.started, self.collected):
                if not fut.done():
                    fut.set_exception(err)

    def notify_dropped(self, reason: str | None = None) -> None:
        """The worker gave the command up (stopping): fail with 57P01."""
        self.notify_failed(
            AdminShutdown(
                reason
                or f'terminating command: barrier worker of database "{self.database}" stopped'
            )
        )

    @property
    def done(self) -> bool:
        """Whether both phases are resolved (with a result or an error)."""
        return self.started.done() and self.collected.done()

    # -- issuer side --------------------------------------------------------

    def wait_started(self, timeout: float | None = None) -> BarrierInfo:
        """The command's barrier; raises the command's PgError or ``TimeoutError``."""
        return self.started.result(timeout)

    def wait(self, timeout: float | None = None) -> object:
        """The command's result once collected; raises its PgError or ``TimeoutError``."""
        return self.collected.result(timeout)

    def __repr__(self) -> str:
        state = "collected" if self.collected.done() else "started" if self.started.done() else "pending"
        return f"Notifier({self.database!r}, {self.command!r}, {state})"

