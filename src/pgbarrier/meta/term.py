"""Fencing by term: a deposed leader cannot commit a meta-store write.

Rules this module keeps (the design is docs/SCALE_OUT.md):

* The term lives in the one-row ``leader`` table (schema migration 4), with who holds it
  and since when. :func:`take_office` increments it in its own committed transaction,
  right after the process won the leader lock and before recovery reads anything.
* A :class:`TermFence` installed in a :class:`~pgbarrier.meta.sqlbase.SqlMetaStore` makes
  every write transaction begin with ``SELECT term FROM leader WHERE id = 1 FOR SHARE``.
  The row lock orders it against :func:`take_office`'s ``UPDATE``: a write that took the
  share lock first commits before the new term exists (and the new leader's recovery sees
  it); one that comes after sees the new term and fails. With group commit that is one
  statement per batch.
* A write whose check fails raises the fence's ``error`` (a :class:`FencedWrite`; the
  process's is :class:`pgbarrier.leadership.NotLeader`, SQLSTATE 25006, since this package
  imports no error classes) to every caller in the batch, so the client whose statement needed it gets an error, never a
  success; then ``on_fenced`` is called (once per term; it must not block: it is called on
  the writing thread, which may be one that stepping down stops).
* Without a term (:meth:`TermFence.vacate`, a follower) every write fails the same way
  without asking the store.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from typing import Any


class FencedWrite(Exception):
    """A meta-store write by a process that does not lead (its term is not the stored one)."""

    def __init__(self, message: str, *, detail: str | None = None,
                 hint: str | None = None, **_: Any) -> None:
        super().__init__(message)
        self.message, self.detail, self.hint = message, detail, hint


TAKE_OFFICE_LOCK_TIMEOUT_S = 10


def now_text() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat()


def take_office(store: Any, holder: str) -> tuple[int, str]:
    """Increment the stored term (committed before this returns); the new term and since."""
    since = now_text()
    with store._tx() as cur:
        # a write of the old leader holding the row (FOR SHARE) commits first; one that never
        # does (its process stopped mid-transaction) fails this attempt rather than hang it
        cur.execute(f"SET LOCAL lock_timeout = {int(TAKE_OFFICE_LOCK_TIMEOUT_S * 1000)}")
        cur.execute(store._sql("UPDATE {p}leader SET term = term + 1, holder = ?, since = ? "
                               "WHERE id = 1 RETURNING term"), (holder, since))
        row = cur.fetchone()
    if row is None:  # pragma: no cover - migration 4 inserts the row
        raise RuntimeError("the meta store has no leader row")
    return int(row[0]), since


def read_leader(store: Any) -> tuple[int, str | None, str | None]:
    """The stored (term, holder, since)."""
    rows = store._query("SELECT term, holder, since FROM {p}leader WHERE id = 1")
    return (int(rows[0][0]), rows[0][1], rows[0][2]) if rows else (0, None, None)


class TermFence:
    def __init__(self, on_fenced: Callable[[int, str], None], *,
                 error: Callable[..., FencedWrite] = FencedWrite) -> None:
        self._on_fenced = on_fenced
        self._error = error
        self._lock = threading.Lock()
        self.term: int | None = None
        self._told: int | None = None

    def hold(self, term: int) -> None:
        with self._lock:
            self.term = term

    def vacate(self) -> None:
        with self._lock:
            self.term = None

    def check(self, cur: Any, sql: Callable[[str], str]) -> None:
        """The first statement of a write transaction; raises the fence's error."""
        mine = self.term
        if mine is None:
            raise self._error("cannot record this change: this pgbarrier process is not the "
                            "leader", hint="Connect to the leader (see README, several "
                            "processes).")
        cur.execute(sql("SELECT term FROM {p}leader WHERE id = 1 FOR SHARE"))
        row = cur.fetchone()
        stored = int(row[0]) if row else 0
        if stored == mine:
            return
        reason = f"term {mine} was superseded by term {stored}"
        with self._lock:
            tell = self._told != mine
            self._told = mine
            if self.term == mine:
                self.term = None
        if tell:
            self._on_fenced(mine, reason)
        raise self._error("cannot record this change: this pgbarrier process is no longer the "
                        "leader", detail=f"Its {reason}; nothing was recorded.",
                        hint="Reconnect: another pgbarrier process leads now.")
