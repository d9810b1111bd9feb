"""Choosing the leader among processes on one PostgreSQL meta store: an advisory lock.

Rules this module keeps (the design is docs/SCALE_OUT.md):

* The lock is held by a dedicated session to the meta store's database: autocommit, never
  pooled (a transaction-pooling PgBouncer would break a session-level lock), with
  ``application_name`` :data:`APPLICATION_NAME` so an operator finds it in
  ``pg_stat_activity``. The key is ``hashtextextended('<schema>', 0)``: deployments in
  other schemas (or other databases: advisory locks are per database) do not contend.
* TCP keepalives on both ends (libpq's ``keepalives_*`` and the server's
  ``tcp_keepalives_*``, set for this session) bound how long a dead peer holds the lock:
  about ``KEEPALIVE_IDLE_S + KEEPALIVE_INTERVAL_S * KEEPALIVE_COUNT`` seconds, and
  ``tcp_user_timeout`` how long a check sent into a partition may go unanswered. A process
  killed on a live host is quicker still: its kernel closes the connection at once.
* ``pg_try_advisory_lock`` never blocks: a follower retries it every ``retry_interval_s``
  on a daemon thread. The leader checks its session every ``check_interval_s`` with
  ``SELECT 1``, and at once when its socket turns readable (the server ending the session
  — ``pg_terminate_backend``, a restart, a crash — is seen when it happens, not at the next
  check); any error means the lock is lost: the session is closed and ``on_lost`` is
  called (on this thread), then the election goes on as a follower. :meth:`verify` makes
  the same check on demand (``rw_leader`` asks before it answers ``leader``).
* ``on_elected`` runs on the election thread after the lock was won; it returns whether
  the process took office. When it did not, the session is closed (the lock freed) and the
  election goes on. :meth:`resign` gives the lock up from any thread (stepping down after
  a fenced write): the session is closed at once and the election goes on.
* **A process that lost or gave up the lock lets others lead**: its next attempt comes no
  sooner than :data:`HOLD_OFF` times ``retry_interval_s`` later (a random point in that
  range), while followers keep trying every ``retry_interval_s``; so a healthy follower
  takes over from a process whose store session flaps, and a lone process still leads
  again about a second and a half after the store is back.
* :meth:`stop` ends the thread; :meth:`close` then closes the session (freeing the lock,
  so a follower takes over at once after a clean shutdown).
"""

from __future__ import annotations

import logging
import os
import random
import select
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

log = logging.getLogger(__name__)

APPLICATION_NAME = "pgbarrier-leader-lock"
RETRY_INTERVAL_S = 1.0
CHECK_INTERVAL_S = 1.0
CONNECT_TIMEOUT_S = 5
KEEPALIVE_IDLE_S = 2
KEEPALIVE_INTERVAL_S = 1
KEEPALIVE_COUNT = 3
#: unacknowledged data (the leader's ``SELECT 1`` into a partition) fails the session after this
USER_TIMEOUT_MS = 5000
#: after losing or giving up the lock, the next attempt comes this many retry intervals later
#: (uniformly in the range): never before a follower's next attempt, which is at most one
#: interval after the lock was freed
HOLD_OFF = (1.25, 1.75)


def _usable(conn: psycopg.Connection[Any]) -> bool:
    """Whether an idle session is still there: one the server ended (a restart of the
    store, ``pg_terminate_backend``) has its FATAL and the close waiting in the socket."""
    if conn.closed or conn.broken:
        return False
    try:  # nothing else ever comes unasked on this session (no LISTEN, no SET)
        return not select.select([conn.fileno()], [], [], 0)[0]
    except (OSError, ValueError):
        return False


class LeaderElection:
    def __init__(self, dsn: str, schema: str, *, on_elected: Callable[[], bool],
                 on_lost: Callable[[str], None], retry_interval_s: float = RETRY_INTERVAL_S,
                 check_interval_s: float = CHECK_INTERVAL_S) -> None:
        self._dsn = dsn
        self._schema = schema
        self._on_elected = on_elected
        self._on_lost = on_lost
        self.retry_interval_s = retry_interval_s
        self.check_interval_s = check_interval_s
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None
        self.leading = False
        self._stopped = False
        #: a pipe the election thread waits on (with the lock session's socket, when leading)
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._thread: threading.Thread | None = None
        self._failing = False  # a connect error is logged once until one succeeds
        #: no attempt at the lock before this (time.monotonic): set when it was lost or given up
        self._hold_off_until = 0.0

    # ------------------------------------------------------------------ the session

    def _connect(self) -> psycopg.Connection[Any]:
        extra: dict[str, Any] = {
            "autocommit": True, "application_name": APPLICATION_NAME,
            "keepalives": 1, "keepalives_idle": KEEPALIVE_IDLE_S,
            "keepalives_interval": KEEPALIVE_INTERVAL_S, "keepalives_count": KEEPALIVE_COUNT,
            "tcp_user_timeout": USER_TIMEOUT_MS}
        if "connect_timeout" not in conninfo_to_dict(self._dsn):
            extra["connect_timeout"] = CONNECT_TIMEOUT_S
        conn = psycopg.connect(self._dsn, **extra)
        for name, value in (("tcp_keepalives_idle", KEEPALIVE_IDLE_S),
                            ("tcp_keepalives_interval", KEEPALIVE_INTERVAL_S),
                            ("tcp_keepalives_count", KEEPALIVE_COUNT),
                            ("tcp_user_timeout", USER_TIMEOUT_MS)):
            conn.execute(sql.SQL("SET {} = {}").format(sql.Identifier(name), sql.Literal(value)))
        return conn

    def try_lock(self) -> bool:
        """One attempt (never blocks on the lock): True when this process now holds it."""
        with self._lock:
            if self._stopped:
                return False
            if self.leading:
                return True
            try:
                if self._conn is not None and not _usable(self._conn):
                    self._drop()  # ended by the server while this process followed
                if self._conn is None or self._conn.closed:
                    self._conn = self._connect()
                row = self._conn.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))",
                                         (self._schema,)).fetchone()
            except psycopg.Error as exc:
                if not self._failing:
                    log.warning("leader election: cannot reach the meta store: %s",
                                " ".join(str(exc).split()))
                self._failing = True
                self._drop()
                return False
            self._failing = False
            self.leading = bool(row and row[0])
            return self.leading

    def lock_backend_pid(self) -> int | None:
        """The PostgreSQL backend pid of the lock session (None without one)."""
        with self._lock:
            conn = self._conn
            return None if conn is None or conn.closed else conn.info.backend_pid

    def _alive(self) -> bool:
        try:
            assert self._conn is not None
            self._conn.execute("SELECT 1")
            return True
        except Exception:  # any error: the lock may be gone
            return False

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if self.leading:  # lost or given up: let a follower take it first
            low, high = HOLD_OFF
            self._hold_off_until = time.monotonic() + self.retry_interval_s * random.uniform(
                low, high)
        self.leading = False
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - already broken
                pass

    # ------------------------------------------------------------------ the loop

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="pgbarrier-election",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopped:
            if self.leading:
                with self._lock:
                    fd = self._conn.fileno() if self._conn is not None and self.leading else None
                if fd is not None:
                    self._sleep(self.check_interval_s, fd)
                with self._lock:
                    if self._stopped or not self.leading:
                        continue
                    lost = not self._alive()
                    if lost:
                        self._drop()
                if lost:
                    self._call(self._on_lost, "lost its leader lock session")
                continue
            held_off = self._hold_off_until - time.monotonic()
            if held_off > 0:
                self._sleep(held_off)
                continue
            if self.try_lock():
                if not self._call(self._on_elected):
                    self.resign()
                continue
            self._sleep(self.retry_interval_s)

    def _sleep(self, seconds: float, fd: int | None = None) -> None:
        """Wait up to ``seconds``, less when woken (:meth:`_nudge`) or ``fd`` turns readable."""
        watched = [self._wake_r] if fd is None else [self._wake_r, fd]
        try:
            ready, _, _ = select.select(watched, [], [], max(0.0, seconds))
        except (OSError, ValueError):  # the session's socket closed meanwhile: check it now
            return
        if self._wake_r in ready:
            try:
                os.read(self._wake_r, 512)
            except OSError:  # pragma: no cover - closed by close()
                pass

    def _nudge(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except OSError:  # full (already woken) or closed
            pass

    def verify(self) -> bool:
        """Whether this process holds the lock, checked now with a round trip on the lock
        session; when it does not (any more), the lock counts as lost: the session is
        closed (the election goes on after the hold-off) and False is returned. The
        caller steps down (``on_lost`` is not called for this)."""
        with self._lock:
            if not self.leading or self._stopped:
                return False
            if self._alive():
                return True
            self._drop()
            return False

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except Exception:
            log.exception("leader election: %r failed", fn)
            return False

    def resign(self) -> None:
        """Give the lock up (any thread); the election goes on unless stopped."""
        with self._lock:
            self._drop()
        self._nudge()

    def stop(self) -> None:
        """End the election thread (the lock, if held, is kept until :meth:`close`)."""
        with self._lock:
            self._stopped = True
        self._nudge()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(30)

    def close(self) -> None:
        with self._lock:
            self._stopped = True
            self._drop()
        self._nudge()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(30)
        if self._thread is None or not self._thread.is_alive():
            for fd in (self._wake_r, self._wake_w):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._wake_r = self._wake_w = -1
