"""pgbarrier's sessions seen from DuckDB: ``pg_stat_activity`` rows and ``pgb_signal``.

The DuckDB backend must not know the server, so the App hands it a :class:`SessionsHook`
(two callables the server answers). Rules this module keeps:

* ``pg_stat_activity`` is built at query time from ``hook.activity()`` (records by
  column name), as a derived table in the catalog rewrite, like ``pg_settings``.
* ``pg_cancel_backend(x)`` / ``pg_terminate_backend(x)`` are rewritten to
  ``pgb_signal(<caller pid>, 'cancel'|'terminate', x)``, a DuckDB Python function
  (``side_effects=True``, so it runs once per row, as in ``SELECT
  pg_terminate_backend(pid) FROM pg_stat_activity WHERE ...``) registered on each
  database's connection, so it works on whichever DuckDB thread runs it. The caller's pid
  comes in the call, not from thread state.
* A pid that is no session answers false with WARNING ``PID n is not a PostgreSQL
  backend process`` (PostgreSQL 15's words). The function runs inside DuckDB, so the
  warning is kept under the caller's pid and the session adds it to the statement's
  notices as its rows are fetched: it reaches the client before CommandComplete (after
  the rows fetched so far, where PostgreSQL sends it before the row that called). A
  statement that returns no rows drops it.
* An error of the signal (42501) cannot cross DuckDB as a PgError: it is kept here under
  the caller's pid, the function raises, and the session (:meth:`take_error`) raises the
  kept PgError instead of DuckDB's wrapping of it.
* DuckDB's Python functions need numpy; without it ``pgb_signal`` is not registered and
  the two functions are 0A000.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import duckdb

from pgbarrier.errors import Notice, PgError

log = logging.getLogger(__name__)


@dataclass
class SessionsHook:
    #: pg_stat_activity's records by column name, one per session
    activity: Callable[[], list[dict[str, Any]]]
    #: (caller pid, 'cancel' | 'terminate', pid) -> True, None for no session; raises PgError
    signal: Callable[[int, str, int], bool | None]


class Signals:
    """The backend's side of ``pgb_signal`` (one per backend)."""

    def __init__(self) -> None:
        self.hook: SessionsHook | None = None
        #: pgb_signal is defined on the databases' connections
        self.registered = False
        self._errors: dict[int, PgError] = {}
        self._notices: dict[int, list[Notice]] = {}
        self._lock = threading.Lock()

    def register(self, conn: duckdb.DuckDBPyConnection) -> bool:
        """Define ``pgb_signal`` on ``conn`` (False when DuckDB cannot: no numpy)."""
        from duckdb import sqltypes as t

        try:
            conn.create_function("pgb_signal", self._call, [t.INTEGER, t.VARCHAR, t.INTEGER],
                                 t.BOOLEAN, side_effects=True, null_handling="special")
        except duckdb.Error as exc:
            log.info("pg_cancel_backend/pg_terminate_backend are off on DuckDB: %s", exc)
            return False
        self.registered = True
        return True

    def _call(self, caller: int | None, action: str | None, pid: int | None) -> bool | None:
        if pid is None or caller is None or action is None:
            return None  # PostgreSQL's functions are strict
        hook = self.hook
        if hook is None:
            return False
        try:
            done = hook.signal(caller, action, pid)
        except PgError as err:
            with self._lock:
                self._errors[caller] = err
            raise
        if done is None:
            with self._lock:
                self._notices.setdefault(caller, []).append(Notice(
                    f"PID {pid} is not a PostgreSQL backend process", sqlstate="01000",
                    severity="WARNING"))
        return done is True

    @property
    def kept(self) -> bool:
        """Something is kept for some session (a cheap test before :meth:`forget`)."""
        return bool(self._notices or self._errors)

    def forget(self, caller: int) -> None:
        """Drop what a statement of ``caller`` left behind (its rows were not read)."""
        with self._lock:
            self._notices.pop(caller, None)
            self._errors.pop(caller, None)

    def take_notices(self, caller: int) -> list[Notice]:
        """The warnings kept for session ``caller`` since the last call."""
        if not self._notices:
            return []
        with self._lock:
            return self._notices.pop(caller, [])

    def take_error(self, caller: int) -> PgError | None:
        """The signal error kept for session ``caller``'s statement, if any (once)."""
        if not self._errors:
            return None
        with self._lock:
            return self._errors.pop(caller, None)
