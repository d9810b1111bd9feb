"""One client connection on the event loop: start-up, then its messages, a batch at a time.

A :class:`Connection` is the connection's asyncio protocol. Start-up and authentication
run as one coroutine reading from the protocol's buffer; after them the connection is
driven by callbacks (bytes from the client, bytes from the upstream, a worker's result,
the client's socket writable again): no task wakes per message, which is most of what a
relayed statement cost when each connection was a coroutine over a StreamReader.

Rules this module keeps:

* Only framing and I/O live here; what messages mean is :mod:`pgbarrier.session` (and,
  for an upstream read as bytes, :mod:`pgbarrier.session.relay`). One driver carries out
  each session's batches: :mod:`pgbarrier.server.worker_driver` hands them to workers,
  :mod:`pgbarrier.server.relay_driver` runs a relayed session's steps, and the
  whole-batch fast path is the compiled base class's, :mod:`pgbarrier.server.core`.
* Start-up is PostgreSQL 15's, step for step (:meth:`Connection._startup`). SSLRequest is
  answered ``S`` when the server has TLS (the handshake then runs on the same connection
  and the real StartupMessage is read over TLS), ``N`` otherwise; GSSENCRequest is always
  ``N``. A refused one of either kind may be followed by the other; one more of the same
  kind is read as a protocol version (0A000 ``unsupported frontend protocol 1234.5679``).
  Bytes that arrive after a negotiation request before its answer are 08P01
  (``received unencrypted data after SSL request``): nothing sent in plaintext is ever
  taken as if encrypted. Every refusal (57P03, 53300, 28000, a timeout) comes after the
  negotiation answer, so every libpq ``sslmode`` reads it. A length word PostgreSQL would
  not read, or a CancelRequest of another length, closes without a word (logged).
* With a password source configured, the client authenticates (:mod:`pgbarrier.server.auth`)
  between its StartupMessage and ``Session.start``; only ``p`` messages are accepted until
  then (anything else is 08P01). Start-up and authentication together must finish within
  the server's ``authentication_timeout_s`` or the connection is dropped without a word
  (PostgreSQL's authentication_timeout).
* A CancelRequest cancels the running statement of the session with that backend key and
  nothing else; a wrong key does nothing.
* Messages are handed to the session's driver in batches: every whole frame received so
  far, in order (on a worker for a session that may block: blocking work never runs on
  the loop). A worker's writes to the client while rows are produced are the session's
  ``spill`` (:meth:`Connection._spill`), which waits while the client does not read: a
  slow client holds its statement, not the server's memory.
* The client is always read, up to ``_READ_AHEAD`` bytes held beyond the message being
  received (then reading pauses until the session takes frames). A client that hangs up
  while a batch runs has its running statement cancelled if the batch is still running
  ``HANGUP_GRACE_S`` later (PostgreSQL notices it through
  ``client_connection_check_interval``; pgbarrier always watches).
* Notifications a backend keeps itself (DuckDB's LISTEN, :mod:`pgbarrier.backends.duckdb_notify`)
  are written between batches, after a ReadyForQuery, outside a transaction block and
  while the client reads (the backend's wake-up schedules one look on the loop); within a
  batch the session puts them before its ReadyForQuery. An upstream's own are relayed.
* A frame longer than ``max_message_bytes``, or a FATAL error, ends this connection only,
  after the error is sent. Between messages the session's idle timeouts apply
  (``idle_session_timeout``, ``idle_in_transaction_session_timeout``: FATAL 57P05/25P03).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import socket
import struct
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pgbarrier import accel
from pgbarrier.errors import (
    AdminShutdown,
    Fatal,
    IdleInTransactionTimeout,
    IdleSessionTimeout,
    InvalidAuthorizationSpecification,
    InvalidCatalogName,
    InvalidPassword,
    PgError,
    ProtocolViolation,
    TooManyConnections,
)
from pgbarrier.server.core import HANGUP_GRACE_S
from pgbarrier.server.frames import FrameBuffer
from pgbarrier.server.relay_driver import RelayDriver
from pgbarrier.server.worker_driver import WorkerDriver
from pgbarrier.session.session import ClientGone, Session
from pgbarrier.session.transaction import TxState
from pgbarrier.sql.identifiers import truncate_identifier
from pgbarrier.pgproto import messages as m
from pgbarrier.pgproto.codes import PASSWORD_MESSAGE, TERMINATE
from pgbarrier.logs import session_fields
from pgbarrier.server.lognames import for_log
from pgbarrier.server.statement_text import statement_text

if TYPE_CHECKING:
    from pgbarrier.server.listener import PgBarrierServer

log = logging.getLogger(__name__)

#: the connection's hot fields and the relay's fast path (compiled where it could be)
ConnectionCore = accel.load("pgbarrier.server.core").ConnectionCore
#: the loop's side of an upstream socket (compiled where it could be)
UpstreamIO = accel.load("pgbarrier.server.upstream_io").UpstreamIO

#: bytes held beyond the message being received before reading pauses
_READ_AHEAD = 1024 * 1024
#: PostgreSQL's MAX_STARTUP_PACKET_LENGTH (the body, after the length word)
MAX_STARTUP_PACKET_BYTES = 10000
#: PostgreSQL's PG_MAX_AUTH_TOKEN_LENGTH
_MAX_AUTH_MESSAGE_BYTES = 65535
#: PostgreSQL's authentication_timeout (the default of --authentication-timeout-sec)
STARTUP_TIMEOUT_S = 60.0
_INT = struct.Struct("!i")
#: how often pg_terminate_backend repeats its cancel while the batch has not ended
_TERMINATE_REPEAT_S = 0.2
#: PostgreSQL's DETAIL for bytes sent behind an SSLRequest or GSSENCRequest
_MITM = ("This could be either a client-software bug or evidence of an attempted "
         "man-in-the-middle attack.")
#: PostgreSQL 15's words past max_connections - superuser_reserved_connections
RESERVED_MESSAGE = ("remaining connection slots are reserved for non-replication superuser "
                    "connections")


class _Closed(Exception):
    """The peer went away."""


class Connection(ConnectionCore, asyncio.Protocol):
    """One accepted client connection (see module rules). Slotted: a server holds
    thousands at once, mostly idle, and a per-instance ``__dict__`` was 1.5 KB of each."""

    __slots__ = ("peer", "busy_at_shutdown", "told", "tls", "slot", "_want", "_waiter", "_done",
                 "_drain_waiters", "_driver", "started_at", "peer_addr",
                 "peer_port", "dead_end", "_notify_pending")

    def __init__(self, server: PgBarrierServer) -> None:
        ConnectionCore.__init__(self, server, asyncio.get_running_loop(),
                                FrameBuffer(server.max_message_bytes))
        self.peer = "local"
        #: it was running a batch when shutdown began: it may go on until the deadline
        self.busy_at_shutdown = False
        #: it has been (or is being) sent its FATAL 57P01
        self.told = False
        self.tls = False
        #: it holds one of the server's --max-connections slots
        self.slot = False
        #: accepted past the bound of connections served at once: its start-up is read
        #: (SSLRequest answered) and then refused with FATAL 53300, as PostgreSQL's
        #: postmaster does past MaxLivePostmasterChildren
        self.dead_end = False
        #: start-up's wait for bytes: how many, and the future the bytes complete
        self._want = 0
        self._waiter: asyncio.Future[None] | None = None
        #: the serving phase has ended (or failed): the future run() waits on
        self._done: asyncio.Future[None] | None = None
        #: workers' spills waiting for the client's socket to take writes again
        self._drain_waiters: list[concurrent.futures.Future[None]] = []
        #: carries out the session's batches: on workers (WorkerDriver), or relayed as
        #: bytes (RelayDriver); None until the session serves
        self._driver: RelayDriver | WorkerDriver | None = None
        #: for pg_stat_activity (server/activity.py): when it connected (wall clock), the
        #: peer's address and port (None for none)
        self.started_at = time.time()
        self.peer_addr: str | None = None
        self.peer_port: int | None = None
        #: a notification wake-up is scheduled on the loop (one at a time)
        self._notify_pending = False

    # ------------------------------------------------------------------ protocol callbacks

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        peer = transport.get_extra_info("peername")
        self.peer = peer[0] if isinstance(peer, tuple) else str(peer or "local")
        if isinstance(peer, tuple):
            self.peer_addr, self.peer_port = peer[0], peer[1]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, True)
        if not self.server.accepted(self):  # past even the dead-end bound: no start-up read
            transport.write(m.error_response(TooManyConnections("sorry, too many clients already")))
            transport.close()
            return
        self.loop.create_task(self.run())

    def _received(self, data: bytes) -> None:
        """Client bytes the fast path did not take (ConnectionCore.data_received)."""
        frames = self.frames
        frames.feed(data)
        if frames.holds_more_than(_READ_AHEAD) and not self._read_paused:
            self._read_paused = True
            self.transport.pause_reading()
        if self._serving:
            if not self._busy:
                self._guard(self._advance)
        elif self._waiter is not None and frames.pending >= self._want:
            self._wake()

    def eof_received(self) -> bool:
        self._lost()
        return not self.tls  # keep the socket open to write the answers (not over TLS)

    def connection_lost(self, exc: Exception | None) -> None:
        self._write_paused = False  # nothing is written any more: nothing waits to write
        waiters, self._drain_waiters = self._drain_waiters, []
        for w in waiters:
            if not w.done():
                w.set_exception(ClientGone())
        self._lost()
        if self._on_writable is not None:  # a step waiting to write finds the client gone
            self._guard(self._writable_again)

    def pause_writing(self) -> None:
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        if self.upstream_io is not None and self.upstream_io.paused:
            self.upstream_io.resume()
        waiters, self._drain_waiters = self._drain_waiters, []
        for w in waiters:
            if not w.done():
                w.set_result(None)
        if self._on_writable is not None:
            self._guard(self._writable_again)
        elif self._serving and not self._busy:
            self._guard(self._advance)

    def _writable_again(self) -> None:
        then, self._on_writable = self._on_writable, None
        if then is not None:
            then()

    def _lost(self) -> None:
        if self.eof:
            return
        self.eof = True
        self._wake()
        if not self._serving:
            return
        if self.in_batch:
            self.loop.call_later(HANGUP_GRACE_S, self._hung_up, self.batches)
        elif not self._busy:
            self._guard(self._advance)

    def _hung_up(self, batch: int) -> None:
        session = self.session
        if self.in_batch and self.batches == batch and not self._finished and session:
            log.info("connection %d: client hung up during a statement; cancelling it",
                     session.process_id)
            self.server.pool.submit(session.cancel)

    def end_input(self) -> None:
        """Shutdown: read nothing more; a connection waiting for its client ends."""
        self.shut_read = True
        if not self._read_paused and self.transport is not None:
            self._read_paused = True
            try:
                self.transport.pause_reading()
            except (RuntimeError, AttributeError):
                pass
        self._wake()
        if self._serving and not self._busy:
            self._guard(self._advance)

    def terminate(self) -> None:
        """pg_terminate_backend (on the loop): FATAL 57P01 and the connection ends; a
        running batch is cancelled first and its output dropped, as at shutdown's end (the
        cancel is repeated until the batch ends: one that lands before a backend query
        starts is lost)."""
        if self._finished or self.told:
            return
        session = self.session
        if self.in_batch:
            self.cancelled = True  # _batch_ended sends the FATAL
            if session is not None:
                self.server.pool.submit(session.cancel)
            self.loop.call_later(_TERMINATE_REPEAT_S, self.terminate)
            return
        self.told = True
        self._end(self.server.admin_shutdown())

    # ------------------------------------------------------------------ the whole life

    async def run(self) -> None:
        server = self.server
        session: Session | None = None
        try:
            try:
                session = await asyncio.wait_for(self._startup(), server.authentication_timeout_s)
            except asyncio.TimeoutError:
                if not (server.terminating or self.eof):
                    log.info("connection from %s closed: start-up and authentication did "
                             "not finish within %g s", self.peer, server.authentication_timeout_s)
                    server.refused("startup_timeout")
                return
            if session is not None:
                self._done = self.loop.create_future()
                self._start_serving(session)
                await self._done
        except (_Closed, ClientGone, ConnectionError, OSError):
            pass
        except PgError as err:
            if isinstance(err, AdminShutdown):
                self.told = True
            said = session or self.session  # one whose start failed may have said more
            out = b"" if said is None or self.cancelled else said.out.take()
            self._write(out + (m.startup_error_response(err) if said is None
                               else said.error_message(err)))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("connection failed")
        finally:
            await self._finish(session)

    async def _finish(self, session: Session | None) -> None:
        server = self.server
        self._finished = True
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        if server.terminating and not self.told:
            self.told = True
            self._write(m.error_response(server.admin_shutdown()))
        try:
            self.transport.close()  # flushes what is buffered (TLS: then close_notify)
        except (OSError, RuntimeError):
            pass
        if self.upstream_io is not None:
            self.upstream_io.detach()  # the loop lets go of the socket before it is closed
        if session is not None:
            server.unregister(session)
            try:
                await server.run_blocking(session.close)
            except Exception:
                log.exception("closing a session failed")
        if self.slot:
            self.slot = False
            server.release_slot()
        server.closed(self)

    def _write(self, data: bytes) -> None:
        if data and not self.transport.is_closing():
            self.transport.write(data)

    def _end(self, error: BaseException | None = None) -> None:
        """The serving phase is over (``error``: what ends it, handled by run)."""
        if self._finished:
            return
        self._finished = True
        done = self._done
        if done is not None and not done.done():
            if error is None:
                done.set_result(None)
            else:
                done.set_exception(error)

    def _guard(self, fn: Callable[..., None], *args: Any) -> None:
        """Run a serving callback; what it raises ends the connection (see run)."""
        try:
            fn(*args)
        except BaseException as exc:  # noqa: BLE001 - run() sorts it out
            self._end(exc)

    # ------------------------------------------------------------------ start-up

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def _read_exact(self, n: int) -> bytes:
        frames = self.frames
        while frames.pending < n:
            if self.eof or self.shut_read:
                self.eof = True
                raise _Closed()
            if self._read_paused:
                self._read_paused = False
                self.transport.resume_reading()
            self._want = n
            self._waiter = self.loop.create_future()
            await self._waiter
        return frames.take(n)

    async def _startup(self) -> Session | None:
        """PostgreSQL 15's start-up, step by step (``ProcessStartupPacket``, then
        ``InitPostgres``): the packet (SSLRequest and GSSENCRequest answered first, whatever
        comes after), its checks, the refusals that need no password (57P03, 53300, 28000),
        authentication, then what PostgreSQL finds after AuthenticationOk (no such role,
        the reserved slots, no such database, a bad setting)."""
        server = self.server
        tls = server.tls
        ssl_done = gss_done = False
        while True:
            (length,) = _INT.unpack(await self._read_exact(4))
            if length < 8 or length - 4 > MAX_STARTUP_PACKET_BYTES:
                # PostgreSQL logs it (COMMERROR) and closes without a word
                log.info("connection from %s closed: invalid length of startup packet (%d)",
                         self.peer, length)
                raise _Closed()
            first = m.decode_startup(await self._read_exact(length - 4))
            if isinstance(first, m.CancelRequest):
                if first.complete:
                    await server.run_blocking(server.cancel, first.process_id, first.secret_key)
                else:
                    log.info("connection from %s closed: invalid length of startup packet "
                             "(a CancelRequest of %d bytes)", self.peer, length)
                return None
            if isinstance(first, m.SSLRequest) and not ssl_done:
                # a GSSENCRequest may follow a refused SSLRequest, not an accepted one
                ssl_done, gss_done = True, tls is not None
                if tls is not None:
                    if self.frames.pending:
                        raise ProtocolViolation("received unencrypted data after SSL request",
                                                detail=_MITM)
                    self.transport.write(b"S")
                    self.transport = await self.loop.start_tls(
                        self.transport, self, tls.context, server_side=True)
                    self.tls = True
                    continue
                self.transport.write(b"N")
                if self.frames.pending:
                    raise ProtocolViolation("received unencrypted data after SSL request",
                                            detail=_MITM)
                continue
            if isinstance(first, m.GSSENCRequest) and not gss_done:
                # pgbarrier has no GSSAPI encryption; an SSLRequest may follow, again
                ssl_done, gss_done = False, True
                self.transport.write(b"N")
                if self.frames.pending:
                    raise ProtocolViolation("received unencrypted data after GSSAPI "
                                            "encryption request", detail=_MITM)
                continue
            if isinstance(first, m.SSLRequest):  # a second one: read as a protocol version
                raise m.UnsupportedProtocol(m.SSL_REQUEST)
            if isinstance(first, m.GSSENCRequest):
                raise m.UnsupportedProtocol(m.GSSENC_REQUEST)
            if first.needs_negotiation:
                self._write(m.negotiate_protocol_version(m.PROTOCOL_3_0, first.protocol_options))
            if not first.parameters.get("user"):
                raise InvalidAuthorizationSpecification(
                    "no PostgreSQL user name specified in startup packet")
            self._admit(first)
            password = await self._authenticate(first)
            params = first.parameters
            user = params["user"]
            if _not_utf8(user):  # no role has such a name (pgbarrier's names are text)
                self._write(m.authentication_ok())
                raise InvalidAuthorizationSpecification(f'role "{_cut(user)}" does not exist')
            superuser = server.may_use_reserved(user, params.get("application_name"))
            if superuser is False:
                self._refuse_reserved(user)
            database = params.get("database") or user
            if _not_utf8(database):
                self._write(m.authentication_ok())
                raise InvalidCatalogName(f'database "{_cut(database)}" does not exist',
                                         severity="FATAL")
            session = server.session_factory()
            self.session = session
            started = server.pool.submit(session.start, first, password)
            try:
                await asyncio.shield(asyncio.wrap_future(started))
            except asyncio.CancelledError:
                # the start-up deadline passed (or the server stops) while the backend
                # session was still opening: close it once it has opened
                started.add_done_callback(
                    lambda f: f.cancelled() or f.exception() is not None or session.close())
                raise
            except PgError as err:
                if not isinstance(err, Fatal):
                    err.severity = "FATAL"  # type: ignore[misc]
                raise
            if superuser is None and session.reported.get("is_superuser") != "on":
                # the backend said who the role is: a reserved slot only for a superuser
                try:
                    self._refuse_reserved(user)  # writes AuthenticationOk itself
                except PgError:
                    session.out.take()  # what the started session would have said
                    await server.run_blocking(session.close)
                    raise
            try:
                server.register(self, session)  # FATAL 57P01 once shutdown has begun
            except PgError:
                await server.run_blocking(session.close)
                raise
            self._write(session.out.take())
            return session

    def _refuse_reserved(self, user: str) -> None:
        """PostgreSQL's ``superuser_reserved_connections``: past ``max_connections -
        reserved_connections`` sessions (this one counted), FATAL 53300 after
        AuthenticationOk for a role that may not take a reserved slot."""
        server = self.server
        if not server.in_reserved_slots():
            return
        server.refused("reserved_connections")
        log.info('connection from %s refused: the remaining connection slots are reserved '
                 '(user "%s")', self.peer, for_log(user))
        self._write(m.authentication_ok())
        raise TooManyConnections(RESERVED_MESSAGE)

    def _admit(self, startup: m.StartupMessage) -> None:
        """Before authentication, as PostgreSQL: the process may serve (57P03 while it
        follows), the connection is not past the bound of connections served at once and
        takes a free --max-connections slot (53300), then what an hba check refuses (TLS
        when --require-tls, and replication: 28000)."""
        server = self.server
        try:
            server.admit()  # FATAL 57P03 while this process follows (pgbarrier.leadership)
        except PgError:
            server.refused("not_leader")
            raise
        params = startup.parameters
        user = params.get("user", "")
        database = params.get("database") or user
        if self.dead_end:
            server.refused("connections_served")
            log.info('connection from %s refused: %d connections served already (user "%s", '
                     'database "%s")', self.peer, server.max_served, for_log(user),
                     for_log(database))
            raise TooManyConnections("sorry, too many clients already")
        if not server.take_slot():
            server.refused("too_many_clients")
            log.info('connection from %s refused: too many clients already (user "%s", '
                     'database "%s")', self.peer, for_log(user), for_log(database))
            raise TooManyConnections("sorry, too many clients already")
        self.slot = True
        if server.require_tls and not self.tls:
            log.info('connection from %s refused: no TLS (--require-tls), user "%s", '
                     'database "%s"', self.peer, for_log(user), for_log(database))
            raise InvalidAuthorizationSpecification(
                f'no pg_hba.conf entry for host "{self.peer}", '
                f'user "{truncate_identifier(user)}", database "{truncate_identifier(database)}", '
                "no encryption")
        if m.replication_mode(params.get("replication", "off")) == "physical":
            # pgbarrier is no replication source: as a pg_hba.conf without replication lines
            raise InvalidAuthorizationSpecification(
                f'no pg_hba.conf entry for replication connection from host "{self.peer}", '
                f'user "{truncate_identifier(user)}", '
                f"{'SSL encryption' if self.tls else 'no encryption'}")

    async def _authenticate(self, startup: m.StartupMessage) -> str | None:
        """Run the password exchange, if one is configured; return once the client passed,
        with its password when pgbarrier keeps it for an upstream login (else None)."""
        server = self.server
        authenticator = server.authenticator
        user = startup.parameters.get("user")
        if authenticator is None or not user:  # trust; a missing user is Session.start's 28000
            return None
        tls = server.tls
        cert_pem = tls.cert_pem if tls is not None and self.tls else None
        exchange = authenticator.begin(user, cert_pem=cert_pem)
        self._write(exchange.start())
        try:
            while not exchange.done:
                payload = await self._read_password_message()
                # SCRAM's key derivation takes milliseconds of CPU: off the loop
                self._write(await server.run_blocking(exchange.receive, payload))
        except InvalidPassword:
            # PostgreSQL's FATAL line; the method and the client as fields
            log.error('password authentication failed for user "%s"', for_log(user),
                      extra={"event": "auth_failed", "user": user, "sqlstate": "28P01",
                             "client": self.peer})
            raise
        return exchange.password

    async def _read_password_message(self) -> bytes:
        header = await self._read_exact(5)
        (length,) = _INT.unpack_from(header, 1)
        if header[0] == TERMINATE:  # the client gave up (e.g. to ask its user for a password)
            raise _Closed()
        if header[0] != PASSWORD_MESSAGE:
            raise ProtocolViolation(f"expected password response, got message type {header[0]}")
        if length < 4 or length > _MAX_AUTH_MESSAGE_BYTES:
            raise ProtocolViolation(f"invalid message length {length}")
        return await self._read_exact(length - 4) if length > 4 else b""

    # ------------------------------------------------------------------ serving

    def _start_serving(self, session: Session) -> None:
        if session.relay is not None:
            io = UpstreamIO(self.loop, session.relay.up)
            io.idle = self._upstream_spoke
            io.attach()
            self._driver = RelayDriver(self, session.relay, io)
            sock = None if self.tls else self.transport.get_extra_info("socket")
            self.relay_fast(session.relay, io, sock.fileno() if sock is not None else -1)
        else:
            self._driver = WorkerDriver(self, session)
            session.spill = self._spill
            assert session.executor is not None
            session.executor.backend.on_notification(self._notified_threadsafe)
        self._serving = True
        self._guard(self._advance)  # what the client sent behind its start-up

    def _advance(self) -> None:
        """Start on the frames held while nothing is in flight: the serving phase's loop.
        Returns when it waits (for the client, a relay step, a worker, a writable socket)."""
        frames = self.frames
        session = self.session
        assert session is not None
        while not self._busy and not self._finished:
            if self._write_paused:
                return  # resume_writing goes on
            batch = frames.frames()
            if self._read_paused and not frames.holds_more_than(_READ_AHEAD) \
                    and not self.shut_read:
                self._read_paused = False
                self.transport.resume_reading()
            if not batch:
                if self.eof or self.shut_read:
                    self._end()
                elif self._idle:
                    self._arm_idle_timer(session)
                    self._deliver_notifications()
                return
            self._batch_began(session, batch)
            driver = self._driver
            assert driver is not None
            driver.run(batch)

    def _log_duration(self, session: Session, began: float, batch: list[bytes]) -> None:
        """log_min_duration_statement: a batch (a Query, or extended messages up to their
        Sync) that took at least the setting is logged as PostgreSQL logs a statement,
        ``duration: 1.234 ms  statement: ...`` (``execute <name>: ...`` for a Bind and
        Execute of a statement parsed before)."""
        ms = (time.monotonic() - began) * 1000
        if ms < self.server.log_min_duration_ms:
            return
        info = session.executor.info if session.executor is not None else None
        fields = session_fields(info) if info is not None else {"pid": session.process_id}
        log.info("duration: %.3f ms  %s", ms, statement_text(batch, session),
                 extra={"event": "statement", "duration_ms": round(ms, 3), **fields})

    def _arm_idle_timer(self, session: Session) -> None:
        limit = _idle_limit(session)
        if limit is not None and self._idle_timer is None:
            self._idle_timer = self.loop.call_later(limit[0], self._idle_expired, limit[1])

    def _idle_expired(self, error: Fatal) -> None:
        self._idle_timer = None
        if self._busy or self._finished or self.in_batch or self.session is None:
            return
        log.info("connection %d: %s", self.session.process_id, error.message)
        self._end(error)

    def _notified_threadsafe(self) -> None:
        """The backend received a notification for this session (any thread, never
        blocks): the loop looks at it once (see :meth:`_deliver_notifications`)."""
        if self._notify_pending or self._finished:
            return
        self._notify_pending = True
        try:
            self.loop.call_soon_threadsafe(self._deliver_notifications)
        except RuntimeError:  # the loop is closed: the server is gone
            pass

    def _deliver_notifications(self) -> None:
        """Between batches, after a ReadyForQuery, outside a transaction block (the
        session decides that) and while the client reads: the notifications the backend
        received are written at once, as PostgreSQL writes a NOTIFY to an idle client. In
        a batch they go before its ReadyForQuery (the session's ``_ready``), or here when
        it ends."""
        self._notify_pending = False
        session = self.session
        if (self._busy or self.in_batch or self._finished or not self._serving
                or not self._idle or self._write_paused or session is None
                or session.relay is not None):
            return
        data = session.notifications()
        if data:
            self._write(data)

    def _upstream_spoke(self) -> None:
        """The upstream sent bytes no relay step waits for. Between batches, what it sends
        by itself (a NOTIFY, a notice, a ParameterStatus) goes to the client at once, also
        while it waits for COPY data (PostgreSQL sends a trigger's notices during COPY FROM
        STDIN); if it has gone, what it said last goes, then the connection ends (FATAL
        08006)."""
        session = self.session
        if self._busy or self.in_batch or self._finished or session is None:
            return  # the running batch's steps read it
        relay = session.relay
        assert relay is not None
        up = relay.up
        lost = up.lost
        data = up.take_asynchronous(everything=lost is not None)
        if data:
            self._write(data)
            relay.take_params()
        if lost is not None:
            self._end(lost)
        elif self._write_paused:  # the client does not read: hold the upstream too
            io = self.upstream_io
            assert io is not None
            io.pause()

    # ------------------------------------------------------------------ the worker's writes

    def _spill(self, data: bytes) -> None:
        """The worker's write to the client: waits until the loop has the bytes out (or
        buffered below the high-water mark); ClientGone when the client is gone."""
        if not data:
            return
        if self.cancelled:
            raise ClientGone()
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        try:
            self.loop.call_soon_threadsafe(self._spill_on_loop, data, done)
            done.result()
        except (ConnectionError, OSError, RuntimeError):
            raise ClientGone() from None

    def _spill_on_loop(self, data: bytes, done: concurrent.futures.Future[None]) -> None:
        transport = self.transport
        if transport.is_closing():
            done.set_exception(ClientGone())
            return
        transport.write(data)
        if self._write_paused:
            self._drain_waiters.append(done)
        else:
            done.set_result(None)

    # ------------------------------------------------------------------ the relay driver's host

    def relay_waits(self, on_writable: Callable[[], None] | None = None) -> None:
        """A relayed batch's step waits (the driver goes on from a callback); with
        ``on_writable``, for the client's socket to take writes again."""
        self._busy = True
        if on_writable is not None:
            self._on_writable = on_writable

    def relay_goes_on(self) -> None:
        """The waiting step of a relayed batch has ended."""
        self._busy = False

def _not_utf8(name: str) -> bool:
    """A start-up name holding bytes that are not UTF-8 (kept as surrogate escapes)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _cut(name: str) -> str:
    """A start-up name cut to PostgreSQL's 63 bytes as sent (NAMEDATALEN - 1)."""
    return name.encode("utf-8", "surrogateescape")[:63].decode("utf-8", "surrogateescape")


def _idle_limit(session: Session) -> tuple[float, Fatal] | None:
    """The idle timeout that applies now (seconds) and its FATAL error, or None."""
    info = session.executor.info if session.executor is not None else None
    if info is None:
        return None
    if session.tx is TxState.IDLE:
        ms = info.idle_session_timeout_ms
        if ms:
            return ms / 1000, IdleSessionTimeout(
                "terminating connection due to idle-session timeout")
    else:
        ms = info.idle_in_transaction_timeout_ms
        if ms:
            return ms / 1000, IdleInTransactionTimeout(
                "terminating connection due to idle-in-transaction timeout")
    return None
