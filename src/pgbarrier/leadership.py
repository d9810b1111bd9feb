"""This process's role on a shared PostgreSQL meta store: leader or follower, and the moves.

Rules this module keeps (the design is docs/SCALE_OUT.md; the lock is
:mod:`pgbarrier.meta.election`, the fencing :mod:`pgbarrier.meta.term`):

* A process starts as a follower. :meth:`Leadership.begin` makes one attempt at the lock on
  the starting thread (so a lone process is leader by the time it logs ready);
  :meth:`Leadership.start` then runs the election on its own thread.
* **Taking office** (the lock won): migrate the store's schema, increment the term (its own
  transaction), install it in the store's fence, then the App's ``take_office`` (recovery,
  barrier workers, schedulers). Only then is the role ``leader`` and are connections
  admitted; until then every start-up gets FATAL 57P03 ``the database system is starting
  up`` (:meth:`admit`), what a PostgreSQL standby says, so libpq multi-host strings and load
  balancers move on to the leader. A failure while taking office leaves office again and
  frees the lock.
* **Stepping down** (a write fenced by a newer term, or the lock session lost): the role is
  ``follower`` at once (new connections get 57P03, every further write fails), then the
  App's ``leave_office`` (sessions end with 57P01, barrier workers and schedulers stop, the
  in-memory state is dropped: a next term starts from the store alone), then the lock is
  given up and the election goes on. A step-down names the term it ends, so one reported
  twice (fenced write and lost session) happens once.
* ``--follow-only``: never tries the lock.
* Every role change is logged on one line: ``role: leader, term N, since T`` or
  ``role: follower since T (...)``.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from pgbarrier.errors import CannotConnectNow, PgError, ReadOnlySqlTransaction
from pgbarrier.meta.election import LeaderElection
from pgbarrier.meta.postgres import PostgresMetaStore
from pgbarrier.meta.term import FencedWrite, TermFence, take_office

log = logging.getLogger(__name__)


class NotLeader(ReadOnlySqlTransaction, FencedWrite):
    """A meta-store write by a process that no longer leads: SQLSTATE 25006
    (``read_only_sql_transaction``, what a PostgreSQL standby answers a write with), ERROR
    for the statement that needed the write; its session then ends with 57P01 as every
    session of a process stepping down does. Nothing of the change was recorded."""


@dataclass(frozen=True)
class Role:
    name: str  # "leader" or "follower"
    term: int | None
    since: dt.datetime
    follow_only: bool = False

    def describe(self) -> str:
        if self.name == "leader":
            return f"leader, term {self.term}, since {self.since.isoformat()}"
        return (f"follower{' (--follow-only)' if self.follow_only else ''} since "
                f"{self.since.isoformat()}")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


class Leadership:
    def __init__(self, store: PostgresMetaStore, *, holder: str,
                 take_office: Callable[[], None], leave_office: Callable[[], None],
                 follow_only: bool = False, check_interval_s: float = 1.0) -> None:
        self.store = store
        self.holder = holder
        self._take_office = take_office
        self._leave_office = leave_office
        self.follow_only = follow_only
        self.fence = TermFence(self._fenced, error=NotLeader)
        self.fence.vacate()
        store.set_fence(self.fence)
        self.election = LeaderElection(store.dsn, store.schema, on_elected=self._elected,
                                       on_lost=self._lost, check_interval_s=check_interval_s)
        self.role = Role("follower", None, _now(), follow_only)
        self._moves = threading.RLock()
        self._stopping = False

    # ------------------------------------------------------------------ lifecycle

    def begin(self) -> None:
        if not self.follow_only and self.election.try_lock() and not self._elected():
            self.election.resign()

    def start(self) -> None:
        if not self.follow_only:
            self.election.start()

    def stop(self) -> None:
        """No more moves (waits for one under way); the election thread ends."""
        with self._moves:
            self._stopping = True
        self.election.stop()

    def close(self) -> None:
        """After the App stopped: the lock session closes, so a follower takes over."""
        self.election.close()

    # ------------------------------------------------------------------ queries

    def admit(self) -> None:
        """The listener's check of every start-up: FATAL 57P03 unless this process leads."""
        if self.role.name != "leader":
            raise CannotConnectNow("the database system is starting up")

    def catalog_row(self) -> tuple[str, int | None, dt.datetime, str | None]:
        """``rw_leader``'s row. ``leader`` only after the lock session answered just now: a
        process never shows itself leading under a term it has lost (it then steps down, on
        another thread: the step-down ends the very session asking)."""
        role = self.role
        if role.name == "leader" and not self.election.verify():
            self.fence.vacate()
            self._step_down_soon(role.term, "lost its leader lock session")
            role = Role("follower", None, _now())
        return (role.name, role.term, role.since, self.holder if role.name == "leader" else None)

    # ------------------------------------------------------------------ moves

    def _elected(self) -> bool:
        with self._moves:
            if self._stopping:
                return False
            try:
                self.store.migrate()
                term, since = take_office(self.store, self.holder)
                self.fence.hold(term)
                self._take_office()
            except Exception as exc:
                if isinstance(exc, PgError):  # the store refusing: it logged why, once
                    log.warning("taking office failed; following again: %s", exc.message)
                else:
                    log.exception("taking office failed; following again")
                self.fence.vacate()
                try:
                    self._leave_office()
                except Exception:
                    log.exception("leaving office after a failed start failed")
                return False
            self.role = Role("leader", term, dt.datetime.fromisoformat(since))
            log.info("role: %s (%s)", self.role.describe(), self.holder)
            return True

    def _fenced(self, term: int, reason: str) -> None:
        """The fence saw a newer term (on a writing thread, which must not block)."""
        self._step_down_soon(term, f"a meta-store write was fenced: {reason}")

    def _step_down_soon(self, term: int | None, reason: str) -> None:
        threading.Thread(target=self.step_down, args=(term, reason),
                         name="pgbarrier-step-down", daemon=True).start()

    def _lost(self, reason: str) -> None:
        self.step_down(self.role.term, reason)

    def step_down(self, term: int | None, reason: str) -> None:
        with self._moves:
            role = self.role
            if self._stopping or role.name != "leader" or role.term != term:
                return
            self.fence.vacate()
            self.role = Role("follower", None, _now())
            log.warning("role: %s (stepped down from term %s: %s)", self.role.describe(),
                        term, reason)
            try:
                self._leave_office()
            except Exception:
                log.exception("stepping down failed")
            self.election.resign()
