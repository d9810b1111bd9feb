"""Set-up DuckDB connections kept ready for a database's next session.

A session's DuckDB connection (a cursor of its database) is set up before its first
statement: pgbarrier's temporary macros (``version()``, the path shadows of
:mod:`pgbarrier.backends.duckdb_config`) and the ``jsonb`` type, some 2-4 ms of DuckDB's
own work that a new connection's first statement waited for. A database keeps one such
connection made ahead of time, on a thread of its own, so the next session's first
statement finds it ready and only sets what is its own (the user, a TimeZone other than
the default UTC, search_path). Rules this module keeps:

* What a spare holds is the same for every session of the database (nothing of a user;
  the sessions' default TimeZone): ``backends.duckdb.prepare_connection`` is the one
  definition, used by spares and by a session that finds none.
* Bounded: at most :data:`PER_DATABASE` spares per database and :data:`TOTAL` over the
  whole process (about 80 KB each), so a thousand databases do not hold a thousand of
  them; a database past the total opens its sessions' connections itself, as before.
* One making at a time per database, started :data:`MAKE_AFTER` seconds after a spare
  is taken (or asked for and none is there): after the taking session's first statement,
  as a rule, whose CPU it would otherwise share. A database that has no new sessions
  makes none; connections that come faster than that set up their own, as before.
* :meth:`SpareCursors.close` (its database is dropped, renamed or the backend stops)
  closes the spares, waits for one being made and makes no more, so none keeps a dropped
  database's DuckDB open (DuckDB would hand a new database of that path the old one).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import duckdb

#: spares one database keeps ready
PER_DATABASE = 1
#: spares the process keeps over all its databases
TOTAL = 64
#: seconds after a spare is taken (or missed) that the next one is made
MAKE_AFTER = 0.05

_held = 0
_held_lock = threading.Lock()


def _reserve() -> bool:
    global _held
    with _held_lock:
        if _held >= TOTAL:
            return False
        _held += 1
        return True


def _release(n: int = 1) -> None:
    global _held
    with _held_lock:
        _held -= n


def _close(cur: Any) -> None:
    try:
        cur.close()
    except duckdb.Error:
        pass


class SpareCursors:
    """One database's spare set-up connections (module rules)."""

    def __init__(self, conn: Any, prepare: Callable[[Any], None]) -> None:
        self._conn = conn
        self._prepare = prepare
        self._ready: list[Any] = []
        self._lock = threading.Lock()
        self._made = threading.Condition(self._lock)
        self._making = False
        self._closed = False

    def take(self) -> Any | None:
        """A set-up connection if one is ready (None: the caller opens its own); another
        is made in the background either way."""
        with self._lock:
            cur = self._ready.pop() if self._ready else None
            start = not self._making and not self._closed
            if start:
                self._making = True
        if cur is not None:
            _release()
        if start:
            # after the taker's first statement, as a rule: made beside it, the spare would
            # take the CPU that statement waits for
            maker = threading.Timer(MAKE_AFTER, self._make)
            maker.name, maker.daemon = "pgbarrier-spare-connection", True
            maker.start()
        return cur

    def _make(self) -> None:
        cur = None
        try:
            with self._lock:
                wanted = not self._closed and len(self._ready) < PER_DATABASE
            if wanted and _reserve():
                try:
                    cur = self._conn.cursor()
                    self._prepare(cur)
                except Exception:  # noqa: BLE001 - the database went away: no spare
                    _release()
                    if cur is not None:
                        _close(cur)
                    cur = None
        finally:
            with self._lock:
                self._making = False
                if cur is not None and not self._closed:
                    self._ready.append(cur)
                    cur = None
                self._made.notify_all()
            if cur is not None:  # closed while it was made
                _release()
                _close(cur)

    @property
    def ready(self) -> int:
        return len(self._ready)

    def settled(self, timeout: float) -> bool:
        """Wait until no spare is being made (True), or ``timeout`` seconds (False)."""
        with self._made:
            return self._made.wait_for(lambda: not self._making, timeout)

    def close(self) -> None:
        """No more spares; the ready ones are closed, and one being made is waited for
        (it holds its database's DuckDB open, which the caller is about to close)."""
        with self._made:
            self._closed = True
            self._made.wait_for(lambda: not self._making, 10)
            ready, self._ready = self._ready, []
        if ready:
            _release(len(ready))
        for cur in ready:
            _close(cur)
