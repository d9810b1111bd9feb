"""The listening server: one event loop (uvloop when installed) for every connection.

The loop runs in the thread that calls :meth:`PgBarrierServer.serve_forever`; other
threads talk to it only through the thread-safe methods named below. Each accepted
connection is a :class:`~pgbarrier.server.connection.Connection` (its asyncio protocol);
blocking work goes to one :class:`~pgbarrier.server.pool.WorkerPool` (see its rules for
the bound).

The server keeps the sessions by backend process id, so a CancelRequest on another
connection can find the one it names. It also holds what every connection's start-up
needs: the :class:`~pgbarrier.server.auth.Authenticator` (None means trust) and the
:class:`~pgbarrier.server.tls.TlsConfig` (None means SSLRequest gets ``N``).

Shutdown (:meth:`PgBarrierServer.stop_accepting`, then :meth:`PgBarrierServer.drain`,
both thread-safe) keeps PostgreSQL's rules for a fast shutdown, with a grace period for
running statements:

* The listening socket closes at once: new connections are refused.
* A connection waiting for its client's next message (or still in start-up) ends at
  once; a connection running a batch goes on with it, and what the client had already
  sent after it (such as its Sync) is handled, but nothing more is read.
* A connection that was not running a statement when shutdown began starts none
  (:meth:`gate`, called by the worker before each statement, refuses it), and a
  connection that finishes its start-up is refused too.
* When the grace period is over, the statements still running are cancelled through the
  sessions' own cancel path (repeated until they end, since a cancel that lands before a
  backend query starts is lost); what they would have sent is dropped.
* Every connection ends with one ErrorResponse, FATAL 57P01 ``terminating connection due
  to administrator command``, as PostgreSQL's backends do.

Stepping down (a follower again, see :mod:`pgbarrier.leadership`) ends every session the
same way, but keeps the socket listening
(:meth:`PgBarrierServer.end_sessions`); ``admit``, called at each start-up before the
connection takes a slot, refuses connections while the process does not lead (FATAL 57P03).

Limits, as PostgreSQL's:

* Every refusal comes after the start-up packet, as PostgreSQL's: an SSLRequest or
  GSSENCRequest is answered first (``N``/``S``), so a libpq client of any ``sslmode``
  reads PostgreSQL's FATAL, never an error in place of the SSL answer.
* ``max_connections`` sessions at most, those still authenticating included: a
  connection takes a slot after reading the StartupMessage and before authentication,
  and one more gets FATAL 53300 ``sorry, too many clients already``. CancelRequests take
  no slot, so they work at the limit.
* The last ``reserved_connections`` slots (PostgreSQL's ``superuser_reserved_connections``)
  are for superusers and the admin CLI (:meth:`may_use_reserved`): past ``max_connections
  - reserved_connections`` sessions anyone else gets FATAL 53300 ``remaining connection
  slots are reserved for non-replication superuser connections`` after AuthenticationOk.
  A superuser is a user named in ``superusers`` or, with ``superuser_from_backend``
  (sessions run upstream as the client's own role), a role the upstream reports
  ``is_superuser`` for; the admin CLI is a session whose application_name is
  ``pgbarrier-admin``.
* At most ``2 * max_connections + 10`` connections are served at once, start-ups included
  (PostgreSQL's postmaster bounds its children the same way); past that a connection is a
  *dead end*: its start-up packet is read (SSLRequest answered) and it gets FATAL 53300
  ``sorry, too many clients already`` (a CancelRequest on it still works). As many dead
  ends again may be open at once; past those a connection is sent the FATAL and closed
  at once. Each start-up is bounded in time by ``authentication_timeout_s``.
* Every refusal is counted by reason through ``on_refused`` (the metrics):
  ``too_many_clients``, ``reserved_connections``, ``connections_served``, ``not_leader``,
  ``startup_timeout``.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from pgbarrier.errors import AdminShutdown
from pgbarrier.server import activity
from pgbarrier.server.connection import STARTUP_TIMEOUT_S, Connection
from pgbarrier.server.pool import WorkerPool
from pgbarrier.session.session import Session
from pgbarrier.server.auth import Authenticator
from pgbarrier.server.tls import TlsConfig

try:  # a C event loop: several times less CPU per message than asyncio's own
    import uvloop
except ImportError:  # pragma: no cover - uvloop is a dependency; kept importable without it
    uvloop = None

log = logging.getLogger(__name__)

DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
#: PostgreSQL's max_connections default
DEFAULT_MAX_CONNECTIONS = 100
#: PostgreSQL's superuser_reserved_connections default
DEFAULT_RESERVED_CONNECTIONS = 3
#: the admin CLI's application_name (pgbarrier.admin): it may take a reserved slot
ADMIN_APPLICATION_NAME = "pgbarrier-admin"
#: how often a cancel is repeated while a cancelled statement has not ended
CANCEL_REPEAT_S = 0.2
#: after the grace period, how long cancelled connections get to end before their
#: sockets are closed (a client that does not read can block a write)
CANCEL_TIMEOUT_S = 10.0
#: the listen backlog (a burst of connections must not be dropped at the door)
LISTEN_BACKLOG = 512

_TERMINATING = "terminating connection due to administrator command"


def new_event_loop() -> asyncio.AbstractEventLoop:
    return uvloop.new_event_loop() if uvloop is not None else asyncio.new_event_loop()


class PgBarrierServer:
    def __init__(self, address: tuple[str, int], session_factory: Callable[[], Session],
                 *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                 authenticator: Authenticator | None = None,
                 tls: TlsConfig | None = None,
                 max_connections: int = DEFAULT_MAX_CONNECTIONS,
                 authentication_timeout_s: float = STARTUP_TIMEOUT_S,
                 require_tls: bool = False, log_min_duration_ms: int = -1,
                 admit: Callable[[], None] | None = None,
                 reserved_connections: int = DEFAULT_RESERVED_CONNECTIONS,
                 superusers: frozenset[str] = frozenset(),
                 superuser_from_backend: bool = False,
                 on_refused: Callable[[str], None] | None = None) -> None:
        self.session_factory = session_factory
        #: slots kept for superusers and the admin CLI (see the module rules)
        self.reserved_connections = reserved_connections
        #: the user names that are superusers, and whether the backend's is_superuser
        #: makes one too (an upstream that runs sessions as the client's own role)
        self.superusers = superusers
        self.superuser_from_backend = superuser_from_backend
        #: a refusal's reason, counted (see the module rules)
        self.on_refused = on_refused or (lambda reason: None)
        #: raises the FATAL PgError a start-up gets while this process may not serve
        self.admit = admit or (lambda: None)
        #: log_min_duration_statement (see Connection._log_duration); -1: off
        self.log_min_duration_ms = log_min_duration_ms
        self.max_message_bytes = max_message_bytes
        self.authenticator = authenticator
        self.tls = tls
        self.max_connections = max_connections
        self.authentication_timeout_s = authentication_timeout_s
        self.require_tls = require_tls
        self._max_live = 2 * max_connections + 10
        #: dead-end connections open (see the module rules; the loop's)
        self._dead_ends = 0
        # each connection has at most one piece of work in flight (see pool's rules)
        self.pool = WorkerPool(self._max_live + 4)
        self.socket = _listen(address)
        self.server_address = self.socket.getsockname()
        log.info("authentication: %s; TLS: %s",
                 f"{authenticator.method} ({authenticator.user_count} users)"
                 if authenticator is not None else "trust", "on" if tls else "off")
        self._lock = threading.Lock()
        self._sessions: dict[int, Session] = {}
        self._slots = 0
        #: live connections (the loop's; read from other threads only under _lock)
        self._conns: set[Connection] = set()
        self.terminating = False
        #: :meth:`gate` logs each statement's start (DEBUG, read once at start-up)
        self.logs_statements = log.isEnabledFor(logging.DEBUG)
        self._loop = new_event_loop()
        self._server: asyncio.AbstractServer | None = None
        self._serving = False
        self._accepting_stopped = False
        self._done = threading.Event()
        self._empty: asyncio.Event | None = None

    @property
    def port(self) -> int:
        return self.server_address[1]

    def admin_shutdown(self) -> AdminShutdown:
        return AdminShutdown(_TERMINATING)

    def run_blocking(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        """``fn(*args)`` on the worker pool, awaitable from the loop."""
        return asyncio.wrap_future(self.pool.submit(fn, *args), loop=self._loop)

    # ------------------------------------------------------------------ the loop

    def serve_forever(self) -> None:
        """Run the event loop in this thread until :meth:`server_close`."""
        with self._lock:
            if self._accepting_stopped:
                return
            self._serving = True
        loop = self._loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._start())
            loop.run_forever()
        finally:
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()
                self._done.set()

    async def _start(self) -> None:
        self._empty = asyncio.Event()
        self._empty.set()
        self._server = await self._loop.create_server(
            lambda: Connection(self), sock=self.socket, backlog=LISTEN_BACKLOG)
        if self._accepting_stopped:
            self._server.close()

    @property
    def max_served(self) -> int:
        """Connections served at once, start-ups included (dead ends apart)."""
        return self._max_live

    def refused(self, reason: str) -> None:
        """A connection was refused (any thread): counted by ``reason``."""
        try:
            self.on_refused(reason)
        except Exception:  # noqa: BLE001 - counting never fails a connection
            log.exception("counting a refusal failed")

    def accepted(self, conn: Connection) -> bool:
        """A new connection (on the loop): past the connections served at once it is a
        dead end (``conn.dead_end``: refused after its start-up packet); False when even
        the dead ends are full and it must be refused at once (FATAL 53300)."""
        if len(self._conns) - self._dead_ends >= self._max_live:
            if self._dead_ends >= self._max_live:
                log.info("connection from %s refused at once: %d connections served and "
                         "%d refused ones still open", conn.peer, self._max_live,
                         self._dead_ends)
                self.refused("connections_served")
                return False
            conn.dead_end = True
            self._dead_ends += 1
        with self._lock:
            self._conns.add(conn)
        assert self._empty is not None
        self._empty.clear()
        if self.terminating and self._accepting_stopped:  # just before the socket closed
            conn.shut_read = True
        return True

    def closed(self, conn: Connection) -> None:
        """The connection's last act (on the loop)."""
        if conn.dead_end:
            conn.dead_end = False
            self._dead_ends -= 1
        with self._lock:
            self._conns.discard(conn)
            empty = not self._conns
        if empty and self._empty is not None:
            self._empty.set()

    def connection_states(self) -> list[tuple[str, str]]:
        """(database, state) of each connection past start-up (any thread; metrics): its
        pg_stat_activity state (server/activity.py), a failed transaction counted as
        ``idle in transaction``."""
        with self._lock:
            conns = list(self._conns)
        out = []
        for conn in conns:
            current = activity.state(conn)
            if current is not None:
                out.append((current[0], current[1].removesuffix(" (aborted)")))
        return out

    def activity(self) -> list[dict[str, Any]]:
        """pg_stat_activity's rows by column name, one per session past start-up (any
        thread; :mod:`pgbarrier.server.activity`)."""
        with self._lock:
            conns = list(self._conns)
        return activity.records(conns)

    def signal(self, caller_pid: int, action: str, pid: int) -> bool | None:
        """pg_cancel_backend / pg_terminate_backend (``action``: ``cancel`` or
        ``terminate``) of session ``pid`` by session ``caller_pid``, from any thread: True
        when signalled, None when ``pid`` is no session, 42501 when not allowed."""
        with self._lock:
            victim = self._sessions.get(pid)
            caller = self._sessions.get(caller_pid)
            conn = next((c for c in self._conns if c.session is victim), None) \
                if victim is not None and action == "terminate" else None
        if victim is None:
            return None
        activity.check_signal(caller, victim, action)
        if action == "cancel":
            victim.cancel()
        elif conn is not None:
            self._loop.call_soon_threadsafe(conn.terminate)
        return True

    # ------------------------------------------------------------------ limits, registry

    def take_slot(self) -> bool:
        """One of the ``max_connections`` slots for a starting session, if one is free."""
        with self._lock:
            if self._slots >= self.max_connections:
                return False
            self._slots += 1
            return True

    def in_reserved_slots(self) -> bool:
        """Whether the sessions holding slots (a starting one's included) have reached the
        reserved ones: fewer than ``reserved_connections`` slots are free."""
        with self._lock:
            return self.max_connections - self._slots < self.reserved_connections

    def may_use_reserved(self, user: str, application_name: str | None) -> bool | None:
        """Whether a session of ``user`` may take a reserved slot: True for the admin CLI
        and a named superuser, None when the backend must say (``superuser_from_backend``),
        else False."""
        if application_name == ADMIN_APPLICATION_NAME or user in self.superusers:
            return True
        return None if self.superuser_from_backend else False

    def limits(self) -> dict[str, int]:
        """The connection limits and their use, for the metrics (any thread)."""
        with self._lock:
            slots = self._slots
            conns = len(self._conns)
        return {"max_connections": self.max_connections,
                "reserved_connections": self.reserved_connections,
                "slots_used": slots, "max_served": self._max_live,
                "served": conns - self._dead_ends}

    def release_slot(self) -> None:
        with self._lock:
            self._slots -= 1

    def register(self, conn: Connection, session: Session) -> None:
        """A session has started; refused (FATAL 57P01) once shutdown has begun."""
        with self._lock:
            if not self.terminating:
                self._sessions[session.process_id] = session
                return
        conn.told = True
        session.out.take()
        raise self.admin_shutdown()

    def unregister(self, session: Session) -> None:
        with self._lock:
            if self._sessions.get(session.process_id) is session:
                del self._sessions[session.process_id]

    def cancel(self, process_id: int, secret_key: int) -> bool:
        """A CancelRequest (any thread): cancel that session's running statement."""
        with self._lock:
            session = self._sessions.get(process_id)
        if session is None or session.secret_key != secret_key:
            return False
        session.cancel()
        return True

    def gate(self, conn: Connection) -> None:
        """Called by a worker before each statement: FATAL 57P01 once shutdown has begun,
        unless the connection was running one then and the grace period is not over."""
        if not self.terminating or (conn.busy_at_shutdown and not conn.cancelled):
            if conn.session is not None and log.isEnabledFor(logging.DEBUG):
                log.debug("connection %d: statement started", conn.session.process_id)
            return
        conn.told = True
        if conn.session is not None:
            conn.session.out.take()
        raise self.admin_shutdown()

    # ------------------------------------------------------------------ shutdown

    def stop_accepting(self) -> None:
        """Close the listening socket (any thread): new connections are refused."""
        with self._lock:
            self._accepting_stopped = True
            serving = self._serving
        if serving and self._loop.is_running():
            asyncio.run_coroutine_threadsafe(self._stop_accepting(), self._loop).result()
        else:
            self.socket.close()

    async def _stop_accepting(self) -> None:
        if self._server is not None:
            self._server.close()
        self.socket.close()

    def drain(self, grace_s: float) -> None:
        """End every connection (see the module rules), from any thread; returns when all
        have ended, or when they still have not ``CANCEL_TIMEOUT_S`` after the grace period."""
        if not self._loop.is_running():
            self.terminating = True
            return
        asyncio.run_coroutine_threadsafe(self._drain(grace_s), self._loop).result()

    def end_sessions(self, grace_s: float) -> None:
        """Every connection ends with FATAL 57P01 as at shutdown (running statements get
        ``grace_s``), but the socket goes on listening (any thread); returns when they
        have ended."""
        if self._loop.is_running():
            asyncio.run_coroutine_threadsafe(self._end_sessions(grace_s), self._loop).result()

    async def _end_sessions(self, grace_s: float) -> None:
        try:
            await self._drain(grace_s, why="stepping down")
        finally:
            with self._lock:
                self.terminating = False

    async def _drain(self, grace_s: float, why: str = "shutting down: not accepting "
                     "connections") -> None:
        assert self._empty is not None
        with self._lock:
            self.terminating = True
            conns = list(self._conns)
        busy = 0
        for c in conns:
            c.busy_at_shutdown = c.in_batch
            c.shut_read = True
            if c.in_batch:
                busy += 1
            else:
                c.end_input()
        log.info("%s; %d connection(s), %d running a statement; grace period %g s",
                 why, len(conns), busy, grace_s)
        try:
            await asyncio.wait_for(self._empty.wait(), grace_s)
            return
        except asyncio.TimeoutError:
            pass
        log.info("grace period over: cancelling the statements of %d connection(s)",
                 len(self._conns))
        deadline = time.monotonic() + CANCEL_TIMEOUT_S
        while time.monotonic() < deadline:
            conns = list(self._conns)
            if not conns:
                return
            for c in conns:
                c.cancelled = True
                if c.session is not None:
                    self.pool.submit(c.session.cancel)
                if not c.in_batch:
                    c.end_input()  # one still in start-up
            try:
                await asyncio.wait_for(self._empty.wait(), CANCEL_REPEAT_S)
                return
            except asyncio.TimeoutError:
                pass
        log.warning("%d connection(s) did not end after their statements were cancelled; "
                    "closing their sockets", len(self._conns))
        for c in list(self._conns):
            c.transport.abort()
        try:
            await asyncio.wait_for(self._empty.wait(), 1.0)
        except asyncio.TimeoutError:
            pass

    def server_close(self) -> None:
        """Stop the loop (any thread) and wait for it; the listening socket is closed."""
        with self._lock:
            self._accepting_stopped = True
        try:
            self.socket.close()
        except OSError:
            pass
        if self._serving and not self._done.is_set():
            try:
                self._loop.call_soon_threadsafe(self._loop.stop)
            except RuntimeError:  # already closed
                pass
            self._done.wait(5.0)
        self.pool.shutdown()


def _listen(address: tuple[str, int]) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(LISTEN_BACKLOG)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock
