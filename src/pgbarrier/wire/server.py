"""The listening server: buenavista's threading socketserver with pgbarrier's handler.

One thread per connection (buenavista's model). The server keeps the sessions
by backend process id, so a CancelRequest on another connection can find the
one it names. It also holds what every connection's start-up needs: the
:class:`~pgbarrier.wire.auth.Authenticator` (None means trust) and the
:class:`~pgbarrier.wire.tls.TlsConfig` (None means SSLRequest gets ``N``).

Shutdown (:meth:`PgBarrierServer.stop_accepting`, then :meth:`PgBarrierServer.drain`)
keeps PostgreSQL's rules for a fast shutdown, with a grace period for running
statements:

* The listening socket closes at once: new connections are refused.
* Every connection's read side is shut, so one waiting for its client's next
  message ends at once; a connection running a statement goes on with it. A
  statement that finishes within the grace period sends its result as usual
  (with what the client had already sent after it, such as its Sync).
* A connection that was not running a statement when shutdown began starts none:
  the handler's per-statement hook (``server.hangups.begin``) refuses it, and a
  connection that finishes its start-up is refused too.
* When the grace period is over, the statements still running are cancelled
  through the sessions' own cancel path (repeated until they end, since a cancel
  that lands before a backend query starts is lost); what they would have sent
  is dropped.
* Every connection ends with one ErrorResponse, FATAL 57P01 ``terminating
  connection due to administrator command``, as PostgreSQL's backends do.

Limits, as PostgreSQL's (see also :mod:`pgbarrier.wire.handler`):

* ``max_connections`` sessions at most, those still authenticating included: the
  handler takes a slot after reading the StartupMessage and before authentication, and
  one more gets FATAL 53300 ``sorry, too many clients already``. CancelRequests take no
  slot, so they work at the limit.
* At most ``2 * max_connections + 10`` connections are served at once, start-ups included
  (PostgreSQL's postmaster bounds its children the same way); one more is sent FATAL 53300
  from the accepting thread and closed, without a thread of its own. Each start-up is
  bounded in time by ``authentication_timeout_s``.

The connection registry is kept through socketserver's ``setup``/``finish``
hooks of a handler subclass, and the statement gate through the
``hangups.begin``/``end`` calls the handler makes around each Query and Execute:
:mod:`pgbarrier.wire.handler` stays free of shutdown logic.
"""

from __future__ import annotations

import logging
import os
import socket
import socketserver
import threading
import time
from collections.abc import Callable

from buenavista.postgres import BuenaVistaServer

from pgbarrier.errors import AdminShutdown, TooManyConnections
from pgbarrier.session.session import Session
from pgbarrier.wire import messages as m
from pgbarrier.wire.auth import Authenticator
from pgbarrier.wire.handler import STARTUP_TIMEOUT_S, PgBarrierHandler
from pgbarrier.wire.hangup import HangupWatcher
from pgbarrier.wire.tls import TlsConfig

log = logging.getLogger(__name__)

DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
#: PostgreSQL's max_connections default
DEFAULT_MAX_CONNECTIONS = 100
#: how often a cancel is repeated while a cancelled statement has not ended
CANCEL_REPEAT_S = 0.2
#: after the grace period, how long cancelled connections get to end before their
#: sockets are shut both ways (a client that does not read can block a write)
CANCEL_TIMEOUT_S = 10.0

_TERMINATING = "terminating connection due to administrator command"


def _admin_shutdown() -> AdminShutdown:
    return AdminShutdown(_TERMINATING)


class _Connection:
    """One accepted connection, as shutdown sees it."""

    __slots__ = ("handler", "session", "in_statement", "busy_at_shutdown", "cancelled", "told")

    def __init__(self, handler: PgBarrierHandler) -> None:
        self.handler = handler
        self.session: Session | None = None
        #: between the handler's hangups.begin and hangups.end
        self.in_statement = False
        #: it was running a statement when shutdown began: it may go on until the deadline
        self.busy_at_shutdown = False
        #: the grace period ran out while it was connected: its output is dropped
        self.cancelled = False
        #: it has been (or is being) sent its FATAL 57P01
        self.told = False


class _ServerHandler(PgBarrierHandler):
    """PgBarrierHandler, registered with its server for shutdown (socketserver hooks only)."""

    server: PgBarrierServer

    def setup(self) -> None:
        super().setup()
        self.server._opened(self)

    def finish(self) -> None:
        try:
            if self.server._closing(self):
                try:
                    self.wfile.write(m.error_response(_admin_shutdown()))
                    self.wfile.flush()
                except (OSError, ValueError):
                    pass
        finally:
            try:
                super().finish()
            finally:
                self.server._closed(self)


class _StatementHooks:
    """``server.hangups``: what the handler calls around each Query and Execute.

    The hang-up watcher (see :mod:`pgbarrier.wire.hangup`), and shutdown's gate:
    ``begin`` refuses a statement once shutdown has begun, ``end`` ends a
    connection whose statement was cancelled by shutdown (dropping its output).
    Either raises FATAL 57P01, which the handler sends before closing.
    """

    def __init__(self, server: PgBarrierServer) -> None:
        self._server = server
        self.watcher = HangupWatcher()

    def begin(self, key: int, sock: socket.socket, on_hangup: Callable[[], None]) -> None:
        self._server._statement_begins(key)
        self.watcher.begin(key, sock, on_hangup)

    def end(self, key: int) -> None:
        self.watcher.end(key)
        self._server._statement_ends(key)

    def stop(self) -> None:
        self.watcher.stop()


class PgBarrierServer(BuenaVistaServer):
    daemon_threads = True
    allow_reuse_address = True
    #: the listen backlog (socketserver's 5 drops a burst of connections at the door)
    request_queue_size = 512

    def __init__(self, address: tuple[str, int], session_factory: Callable[[], Session],
                 *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                 authenticator: Authenticator | None = None,
                 tls: TlsConfig | None = None,
                 max_connections: int = DEFAULT_MAX_CONNECTIONS,
                 authentication_timeout_s: float = STARTUP_TIMEOUT_S,
                 require_tls: bool = False) -> None:
        # BuenaVistaServer.__init__ hard-wires its own handler; set up ours instead.
        socketserver.ThreadingTCPServer.__init__(self, address, _ServerHandler)
        self.conn = None
        self.rewriter = None
        self.extensions = {}
        self.auth = None
        self.ctxts = {}
        self.session_factory = session_factory
        self.max_message_bytes = max_message_bytes
        self.authenticator = authenticator
        self.tls = tls
        self.max_connections = max_connections
        self.authentication_timeout_s = authentication_timeout_s
        self.require_tls = require_tls
        #: connections being served (threads), and sessions holding a slot
        self._live = 0
        self._slots = 0
        self._max_live = 2 * max_connections + 10
        log.info("authentication: %s; TLS: %s",
                 f"{authenticator.method} ({authenticator.user_count} users)"
                 if authenticator is not None else "trust", "on" if tls else "off")
        self._sessions: dict[int, Session] = {}
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        #: live connections by id(handler), and by the thread serving them
        self._conns: dict[int, _Connection] = {}
        self._by_thread: dict[int, _Connection] = {}
        self._terminating = False
        self._serving = False
        self._accepting_stopped = False
        #: cancels the running statement of a client that hung up; gates statements at shutdown
        self.hangups = _StatementHooks(self)

    def server_close(self) -> None:
        self.hangups.stop()
        super().server_close()

    def verify_request(self, request: object, client_address: object) -> bool:
        # buenavista only lets 127.0.0.1 in; pgbarrier decides by --host and auth.
        return True

    def new_session(self) -> Session:
        return self.session_factory()

    # ------------------------------------------------------------------ limits

    def take_slot(self) -> bool:
        """One of the ``max_connections`` slots for a starting session, if one is free."""
        with self._lock:
            if self._slots >= self.max_connections:
                return False
            self._slots += 1
            return True

    def release_slot(self) -> None:
        with self._lock:
            self._slots -= 1

    def process_request(self, request: socket.socket, client_address: object) -> None:
        """The accepting thread: a thread per connection, unless too many are served."""
        with self._lock:
            full = self._live >= self._max_live
            if not full:
                self._live += 1
        if full:
            self._refuse(request, client_address)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            with self._lock:
                self._live -= 1
            raise

    def process_request_thread(self, request: socket.socket, client_address: object) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._lock:
                self._live -= 1

    def _refuse(self, request: socket.socket, client_address: object) -> None:
        log.info("connection from %s refused: %d connections served already",
                 client_address[0] if isinstance(client_address, tuple) else client_address,
                 self._max_live)
        try:
            request.setblocking(False)  # a fresh socket's send buffer is empty: never blocks
            request.send(m.error_response(TooManyConnections("sorry, too many clients already")))
        except OSError:
            pass
        self.shutdown_request(request)

    def register(self, session: Session) -> None:
        """Called by the handler once ``session`` has started; refused (FATAL 57P01,
        the session closed) when shutdown has begun."""
        with self._lock:
            conn = self._by_thread.get(threading.get_ident())
            if not self._terminating:
                self._sessions[session.process_id] = session
                if conn is not None:
                    conn.session = session
                return
            if conn is not None:
                conn.told = True
        session.out.take()
        session.close()
        raise _admin_shutdown()

    def unregister(self, session: Session) -> None:
        with self._lock:
            if self._sessions.get(session.process_id) is session:
                del self._sessions[session.process_id]

    def cancel(self, process_id: int, secret_key: int) -> bool:
        with self._lock:
            session = self._sessions.get(process_id)
        if session is None or session.secret_key != secret_key:
            return False
        session.cancel()
        return True

    @property
    def port(self) -> int:
        return self.server_address[1]

    # ------------------------------------------------------------------ shutdown

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        with self._lock:
            if self._accepting_stopped:
                return
            self._serving = True
        super().serve_forever(poll_interval)

    def stop_accepting(self) -> None:
        """Stop ``serve_forever`` and close the listening socket: new connections are refused."""
        with self._lock:
            self._accepting_stopped = True
            serving = self._serving
        if serving:  # socketserver's shutdown() would wait forever for a loop that never ran
            self.shutdown()
        self.socket.close()

    def drain(self, grace_s: float) -> None:
        """End every connection (see the module rules); returns when all have ended,
        or when they still have not ``CANCEL_TIMEOUT_S`` after the grace period."""
        with self._lock:
            self._terminating = True
            conns = list(self._conns.values())
            for c in conns:
                c.busy_at_shutdown = c.in_statement
        busy = sum(1 for c in conns if c.busy_at_shutdown)
        log.info("shutting down: not accepting connections; %d connection(s), %d running a "
                 "statement; grace period %g s", len(conns), busy, grace_s)
        self._shut_all(socket.SHUT_RD)
        with self._lock:
            if self._changed.wait_for(lambda: not self._conns, timeout=grace_s):
                return
            left = len(self._conns)
        log.info("grace period over: cancelling the statements of %d connection(s)", left)
        deadline = time.monotonic() + CANCEL_TIMEOUT_S
        while time.monotonic() < deadline:
            with self._lock:
                conns = list(self._conns.values())
                for c in conns:
                    c.cancelled = True
            if not conns:
                return
            for c in conns:
                if c.session is not None:
                    c.session.cancel()
            self._shut_all(socket.SHUT_RD)  # one still in start-up when shutdown began
            with self._lock:
                if self._changed.wait_for(lambda: not self._conns, timeout=CANCEL_REPEAT_S):
                    return
        with self._lock:
            left = len(self._conns)
        log.warning("%d connection(s) did not end after their statements were cancelled; "
                    "closing their sockets", left)
        self._shut_all(socket.SHUT_RDWR)

    def _shut_all(self, how: int) -> None:
        with self._lock:  # a registered connection's socket is still open (closed after _closed)
            for c in self._conns.values():
                _shutdown_socket(c.handler.request, how)

    # -- hooks of _ServerHandler and _StatementHooks (the connection's own thread)

    def _opened(self, handler: PgBarrierHandler) -> None:
        conn = _Connection(handler)
        with self._lock:
            self._conns[id(handler)] = conn
            self._by_thread[threading.get_ident()] = conn
            if self._terminating:  # accepted just before the listening socket closed
                _shutdown_socket(handler.request, socket.SHUT_RD)

    def _closing(self, handler: PgBarrierHandler) -> bool:
        """Whether the connection still has to be told it is terminated."""
        with self._lock:
            conn = self._conns.get(id(handler))
            if conn is None or not self._terminating or conn.told:
                return False
            conn.told = True
            return True

    def _closed(self, handler: PgBarrierHandler) -> None:
        with self._lock:
            self._conns.pop(id(handler), None)
            self._by_thread.pop(threading.get_ident(), None)
            self._changed.notify_all()

    def _statement_begins(self, key: int) -> None:
        # Fast path, no lock (it ran twice per statement on every connection): mark the
        # statement, then look again. drain() sets _terminating before it reads in_statement
        # (under its lock), so either it sees this statement as running or this thread sees
        # _terminating and takes the locked path below.
        conn = self._conns.get(key)
        if conn is None:
            return
        if not self._terminating:
            conn.in_statement = True
            if not self._terminating:
                if conn.session is not None and log.isEnabledFor(logging.DEBUG):
                    log.debug("connection %d: statement started", conn.session.process_id)
                return
        with self._lock:
            if not self._terminating or (conn.busy_at_shutdown and not conn.cancelled):
                conn.in_statement = True
                if conn.session is not None and log.isEnabledFor(logging.DEBUG):
                    log.debug("connection %d: statement started", conn.session.process_id)
                return
            conn.in_statement = False
            conn.told = True
            session = conn.session
        if session is not None:
            session.out.take()
        raise _admin_shutdown()

    def _statement_ends(self, key: int) -> None:
        conn = self._conns.get(key)  # no lock: `cancelled` is only ever set, by drain()
        if conn is None:
            return
        conn.in_statement = False
        if not conn.cancelled:
            return
        with self._lock:
            conn.told = True
            session = conn.session
        if session is not None:
            session.out.take()  # the cancelled statement's own error (57014) and anything else
        raise _admin_shutdown()


def _shutdown_socket(sock: socket.socket, how: int) -> None:
    """``shutdown(how)`` on ``sock``'s connection through a duplicate descriptor: works for
    TLS sockets too, whose own ``shutdown`` would drop their TLS state."""
    try:
        fd = sock.fileno()
        if fd < 0:
            return
        dup = socket.socket(fileno=os.dup(fd))
    except OSError:
        return
    try:
        dup.shutdown(how)
    except OSError:
        pass
    finally:
        dup.close()
