"""One client connection on the event loop: start-up, then its messages, a batch at a time.

Rules this module keeps:

* Only framing and I/O live here; what messages mean is :mod:`pgbarrier.session` (and,
  for an upstream read as bytes, :mod:`pgbarrier.session.relay`).
* SSLRequest is answered ``S`` when the server has TLS (the handshake then runs on the
  same connection and the real StartupMessage is read over TLS), ``N`` otherwise;
  GSSENCRequest is always ``N``. Bytes that arrive after an SSLRequest before its answer
  are 08P01 (PostgreSQL's ``received unencrypted data after SSL request``): nothing sent
  in plaintext is ever taken as if encrypted. A second SSLRequest on a TLS connection is
  08P01.
* With a password source configured, the client authenticates (:mod:`pgbarrier.server.auth`)
  between its StartupMessage and ``Session.start``; only ``p`` messages are accepted until
  then (anything else is 08P01). Start-up and authentication together must finish within
  the server's ``authentication_timeout_s`` or the connection is dropped without a word
  (PostgreSQL's authentication_timeout).
* A CancelRequest cancels the running statement of the session with that backend key and
  nothing else; a wrong key does nothing.
* Messages are handed to the session in batches: every whole frame received so far goes,
  in order, to one piece of work on the server's worker pool (blocking work never runs on
  the loop). Output is written when the batch ends, and within it after each message the
  client waits on (Query, Sync, Flush, FunctionCall) that has messages behind it, and
  while rows are produced (the session's ``spill``, which waits while the client does not
  read: a slow client holds its statement, not the server's memory).
* A batch still running at the server's next tick (every ``WATCH_TICK_S``) makes the
  connection go on reading (up to ``_READ_AHEAD`` bytes held) until it ends: a client that
  hangs up has its running statement cancelled (PostgreSQL notices it through
  ``client_connection_check_interval``; pgbarrier always watches).
* A frame longer than ``max_message_bytes``, or a FATAL error, ends this connection only,
  after the error is sent. Between messages the session's idle timeouts apply
  (``idle_session_timeout``, ``idle_in_transaction_session_timeout``: FATAL 57P05/25P03).
"""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pgbarrier.backends.pg_relay import NEED_BYTES, Spill
from pgbarrier.errors import (
    AdminShutdown,
    Fatal,
    IdleInTransactionTimeout,
    IdleSessionTimeout,
    InvalidAuthorizationSpecification,
    InvalidPassword,
    PgError,
    ProtocolViolation,
    TooManyConnections,
    as_pg_error,
)
from pgbarrier.server.frames import FrameBuffer
from pgbarrier.server.upstream_io import UpstreamIO
from pgbarrier.session.session import ClientGone, Session
from pgbarrier.session.transaction import TxState
from pgbarrier.sql.identifiers import truncate_identifier
from pgbarrier.pgproto import messages as m
from pgbarrier.server.lognames import for_log
from pgbarrier.server.startup_params import check_startup_parameters

if TYPE_CHECKING:
    from pgbarrier.server.listener import PgBarrierServer

log = logging.getLogger(__name__)

_READ_CHUNK = 65536
#: bytes a connection reads ahead while its batch runs (then it waits for the batch)
_READ_AHEAD = 1024 * 1024
#: PostgreSQL's MAX_STARTUP_PACKET_LENGTH (the body, after the length word)
MAX_STARTUP_PACKET_BYTES = 10000
#: PostgreSQL's PG_MAX_AUTH_TOKEN_LENGTH
_MAX_AUTH_MESSAGE_BYTES = 65535
#: PostgreSQL's authentication_timeout (the default of --authentication-timeout-sec)
STARTUP_TIMEOUT_S = 60.0
#: messages the client waits on: output is written after them
_WAITED_ON = frozenset(b"QSHF")
#: messages answered with ReadyForQuery: after them the idle timeouts apply
_READY_CODES = frozenset(b"QSF")
#: messages that may start a statement: shutdown refuses them (see listener)
_GATED = frozenset(b"QEF")
#: relayed messages that may run upstream work (the relay sends at Sync and Flush)
_GATED_RELAY = frozenset(b"QEFSH")
_TERMINATE = ord("X")
#: what the relay may queue without waiting (see SessionRelay.relay_now)
_QUEUED = frozenset(b"PBDEC")
#: output chunks gathered before they are written mid-batch
_MAX_CHUNKS = 256
_INT = struct.Struct("!i")


class _Closed(Exception):
    """The peer went away."""


class Connection:
    """One accepted client connection (see module rules)."""

    __slots__ = ("server", "reader", "writer", "peer", "session", "frames", "in_batch",
                 "busy_at_shutdown", "cancelled", "told", "shut_read", "eof", "tls", "slot",
                 "_watch", "upstream_io", "batches", "seen_batches")

    def __init__(self, server: PgBarrierServer, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.server = server
        self.reader = reader
        self.writer = writer
        peer = writer.get_extra_info("peername")
        self.peer = peer[0] if isinstance(peer, tuple) else str(peer or "local")
        self.session: Session | None = None
        self.frames = FrameBuffer(server.max_message_bytes)
        #: a batch of its messages is running on the worker pool
        self.in_batch = False
        #: it was running a batch when shutdown began: it may go on until the deadline
        self.busy_at_shutdown = False
        #: the grace period ran out while it was connected: its output is dropped
        self.cancelled = False
        #: it has been (or is being) sent its FATAL 57P01
        self.told = False
        #: shutdown: read nothing more from the client (what it sent already is handled)
        self.shut_read = False
        #: the client closed its side
        self.eof = False
        self.tls = False
        #: it holds one of the server's --max-connections slots
        self.slot = False
        self._watch: asyncio.Task[None] | None = None
        #: batches started, and the count the server's last tick saw (see start_watch)
        self.batches = 0
        self.seen_batches = -1
        #: the loop's side of the upstream socket, for a session relayed as bytes
        self.upstream_io: UpstreamIO | None = None

    # ------------------------------------------------------------------ the whole life

    async def run(self) -> None:
        server = self.server
        sock = self.writer.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, True)
        session: Session | None = None
        try:
            try:
                session = await asyncio.wait_for(self._startup(), server.authentication_timeout_s)
            except asyncio.TimeoutError:
                if not (server.terminating or self.eof):
                    log.info("connection from %s closed: start-up and authentication did "
                             "not finish within %g s", self.peer, server.authentication_timeout_s)
                return
            if session is not None:
                await self._serve(session)
        except (_Closed, ClientGone, ConnectionError, OSError, asyncio.IncompleteReadError):
            pass
        except PgError as err:
            if isinstance(err, AdminShutdown):
                self.told = True
            out = b"" if session is None or self.cancelled else session.out.take()
            self._write(out + m.error_response(err))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("connection failed")
        finally:
            await self._finish(session)

    async def _finish(self, session: Session | None) -> None:
        server = self.server
        if self._watch is not None:
            self._watch.cancel()
        if server.terminating and not self.told:
            self.told = True
            self._write(m.error_response(server.admin_shutdown()))
        try:
            self.writer.close()  # flushes what is buffered (TLS: then close_notify)
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
        if data and not self.writer.is_closing():
            self.writer.write(data)

    # ------------------------------------------------------------------ start-up

    async def _read_exact(self, n: int) -> bytes:
        try:
            return await self.reader.readexactly(n)
        except asyncio.IncompleteReadError:
            self.eof = True
            raise _Closed() from None

    async def _startup(self) -> Session | None:
        server = self.server
        tls = server.tls
        while True:
            (length,) = _INT.unpack(await self._read_exact(4))
            if length < 8 or length - 4 > MAX_STARTUP_PACKET_BYTES:
                raise ProtocolViolation("invalid length of startup packet")
            first = m.decode_startup(await self._read_exact(length - 4))
            if isinstance(first, m.SSLRequest) and tls is not None:
                if self.tls:
                    raise ProtocolViolation("SSL negotiation requested on an SSL connection")
                if _buffered(self.reader):
                    raise ProtocolViolation("received unencrypted data after SSL request")
                self.writer.write(b"S")
                await self.writer.drain()
                await self.writer.start_tls(tls.context)
                self.tls = True
                continue
            if isinstance(first, (m.SSLRequest, m.GSSENCRequest)):
                self.writer.write(b"N")
                continue
            if isinstance(first, m.CancelRequest):
                await server.run_blocking(server.cancel, first.process_id, first.secret_key)
                return None
            if first.needs_negotiation:
                self._write(m.negotiate_protocol_version(m.PROTOCOL_3_0, first.protocol_options))
            self._admit(first)
            password = await self._authenticate(first)
            try:
                check_startup_parameters(first.parameters)
            except PgError:
                self._write(m.authentication_ok())  # PostgreSQL finds it after authentication
                raise
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
            try:
                server.register(self, session)  # FATAL 57P01 once shutdown has begun
            except PgError:
                await server.run_blocking(session.close)
                raise
            self._write(session.out.take())
            return session

    def _admit(self, startup: m.StartupMessage) -> None:
        """Before authentication, as PostgreSQL: a free --max-connections slot (53300), then
        TLS when --require-tls (28000, PostgreSQL's words for an hba with only hostssl)."""
        server = self.server
        params = startup.parameters
        user = params.get("user", "")
        database = params.get("database") or user
        if not server.take_slot():
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
            log.info('password authentication failed for user "%s" (%s)', for_log(user),
                     type(exchange).__name__)
            raise
        return exchange.password

    async def _read_password_message(self) -> bytes:
        header = await self._read_exact(5)
        (length,) = _INT.unpack_from(header, 1)
        if header[:1] == b"X":  # the client gave up (e.g. to ask its user for a password)
            raise _Closed()
        if header[:1] != b"p":
            raise ProtocolViolation(f"expected password response, got message type {header[0]}")
        if length < 4 or length > _MAX_AUTH_MESSAGE_BYTES:
            raise ProtocolViolation(f"invalid message length {length}")
        return await self._read_exact(length - 4) if length > 4 else b""

    # ------------------------------------------------------------------ serving

    async def _serve(self, session: Session) -> None:
        loop = asyncio.get_running_loop()
        relay = session.relay
        if relay is not None:
            self.upstream_io = UpstreamIO(loop, relay.up)
            self.upstream_io.attach()
        else:
            session.spill = self._spiller(loop)
        frames = self.frames
        server = self.server
        transport = self.writer.transport
        idle = True  # a ReadyForQuery went out: the idle timeouts apply
        while True:
            batch = frames.frames()
            if not batch:
                if self.eof or self.shut_read:
                    return
                await self._receive(session, idle)
                continue
            self.in_batch = True
            self.batches += 1
            try:
                try:
                    if relay is not None:
                        out, idle, terminate = await self._relay_batch(session, batch)
                    else:
                        out, idle, terminate = await asyncio.wrap_future(
                            server.pool.submit(self._run_batch, session, batch))
                finally:
                    if self._watch is not None:
                        await self._stop_watch()
            finally:
                self.in_batch = False
            if self.cancelled:  # shutdown's grace period ran out: the output is dropped
                session.out.take()
                raise server.admin_shutdown()
            if out:
                self.writer.write(out)
            if terminate:
                return
            if transport.get_write_buffer_size() > _READ_CHUNK:
                await self.writer.drain()

    async def _receive(self, session: Session, idle: bool) -> None:
        """Wait for more of the client's bytes; FATAL when an idle timeout runs out first."""
        want = max(_READ_CHUNK, self.frames.missing())
        limit = _idle_limit(session) if idle else None
        if limit is None:
            data = await self.reader.read(want)
        else:
            try:
                data = await asyncio.wait_for(self.reader.read(want), limit[0])
            except asyncio.TimeoutError:
                log.info("connection %d: %s", session.process_id, limit[1].message)
                raise limit[1] from None
        if not data:
            self.eof = True
            raise _Closed()
        self.frames.feed(data)

    def start_watch(self) -> None:
        """Called by the server's tick for a batch that has run since the last tick: read
        ahead from now on, and notice a hang-up."""
        session = self.session
        if self.in_batch and self._watch is None and not self.shut_read and session is not None:
            self._watch = asyncio.get_running_loop().create_task(self._watch_client(session))

    async def _stop_watch(self) -> None:
        """End the read-ahead before anything else reads the stream (one reader at a time)."""
        task = self._watch
        if task is None:
            return
        self._watch = None
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            if not task.cancelled():  # this coroutine itself is being cancelled
                raise
        except Exception:  # noqa: BLE001 - a read error shows again on the next read
            pass

    async def _watch_client(self, session: Session) -> None:
        """While a batch runs: read ahead, and cancel the statement if the client hangs up."""
        frames = self.frames
        while frames.pending < _READ_AHEAD and not self.shut_read:
            data = await self.reader.read(max(_READ_CHUNK, frames.missing()))
            if not data:
                self.eof = True
                log.info("connection %d: client hung up during a statement; cancelling it",
                         session.process_id)
                self.server.pool.submit(session.cancel)
                return
            frames.feed(data)

    async def _drain(self) -> None:
        transport = self.writer.transport
        if transport.get_write_buffer_size() > _READ_CHUNK:
            await self.writer.drain()

    def _spiller(self, loop: asyncio.AbstractEventLoop) -> Callable[[bytes], None]:
        """The worker's write to the client: waits until the loop has the bytes out
        (or buffered below the high-water mark); ClientGone when the client is gone."""
        writer = self.writer

        async def write(data: bytes) -> None:
            if writer.is_closing():
                raise ClientGone()
            writer.write(data)
            await writer.drain()

        def spill(data: bytes) -> None:
            if not data:
                return
            if self.cancelled:
                raise ClientGone()
            try:
                asyncio.run_coroutine_threadsafe(write(data), loop).result()
            except (ConnectionError, OSError, RuntimeError):
                raise ClientGone() from None

        return spill

    # ------------------------------------------------------------------ the upstream relay

    async def _relay_batch(self, session: Session, batch: list[bytes]) -> tuple[bytes, bool, bool]:
        """On the loop: each frame to the session's relay, its steps driven here."""
        relay = session.relay
        assert relay is not None
        out = session.out
        server = self.server
        relay_now = relay.relay_now
        last = len(batch) - 1
        code = 0
        for i, frame in enumerate(batch):
            code = frame[0]
            if code in _QUEUED and relay_now(code, frame):
                continue  # queued for the upstream until Sync or Flush: nothing to write
            if code == _TERMINATE:
                return out.take(), False, True
            if code in _GATED_RELAY and (server.terminating or server.logs_statements):
                server.gate(self)
            try:
                waited = await self._drive(self.upstream_io, relay.steps(code, frame))
            except (Fatal, ClientGone):
                raise
            except Exception as exc:  # a bug: the upstream stream cannot be trusted now
                log.exception("unexpected failure relaying message type %r", chr(code))
                raise Fatal(f"internal error: {exc}", sqlstate="XX000") from None
            if i < last and out.chunks and (waited or len(out.chunks) > _MAX_CHUNKS):
                self._write(out.take())
                await self._drain()
        return out.take(), code in _READY_CODES, False

    async def _drive(self, io: UpstreamIO, steps: Any) -> Any:
        """Run one relay step generator: its requests are the upstream's bytes (NEED_BYTES,
        after writing what it queued), a client write (Spill) and full-path work (RunLocal,
        on a worker that owns the upstream socket meanwhile)."""
        up = io.up
        try:
            io.fresh = False
            request = steps.send(None)
            while True:
                if request is NEED_BYTES:
                    if up.pending_writes and not io.send_now():
                        await io.flush_rest()
                    if not io.fresh and up.lost is None:
                        await io.waiter()
                    io.fresh = False
                    request = steps.send(None)
                elif type(request) is Spill:
                    chunks = request.chunks
                    self._write(b"".join(chunks))
                    chunks.clear()
                    if self.writer.is_closing():
                        raise ClientGone()
                    await self.writer.drain()
                    io.fresh = False
                    request = steps.send(None)
                else:
                    if up.pending_writes and not io.send_now():
                        await io.flush_rest()
                    io.detach()
                    try:
                        result = await self.server.run_blocking(request.fn, *request.args)
                    except BaseException as exc:  # noqa: BLE001 - the step's to handle
                        io.attach()
                        io.fresh = False
                        request = steps.throw(exc)
                        continue
                    io.attach()
                    io.fresh = False
                    request = steps.send(result)
        except StopIteration as stop:
            if up.pending_writes and not io.send_now():
                await io.flush_rest()
            return stop.value

    # ------------------------------------------------------------------ the worker's side

    def _run_batch(self, session: Session, batch: list[bytes]) -> tuple[bytes, bool, bool]:
        """On a worker thread: hand each frame to the session; returns (output, idle,
        terminate)."""
        out = session.out
        gate = self.server.gate
        spill = session.spill
        last = len(batch) - 1
        code = 0
        for i, frame in enumerate(batch):
            code = frame[0]
            if code == _TERMINATE:
                return out.take(), False, True
            if code in _GATED:
                gate(self)
            msg = m.decode_message(frame[:1], frame[5:])
            try:
                session.handle(msg)
            except Fatal:
                raise
            except Exception as exc:  # a bug must not kill the connection silently
                log.exception("unexpected failure handling %s", type(msg).__name__)
                out.add(m.error_response(as_pg_error(exc)))
            if i < last and out.chunks and (code in _WAITED_ON or len(out.chunks) > _MAX_CHUNKS):
                assert spill is not None
                spill(out.take())
        return out.take(), code in _READY_CODES, False


def _buffered(reader: asyncio.StreamReader) -> bool:
    """Whether the reader holds bytes not read yet (asyncio keeps them in ``_buffer``)."""
    return bool(getattr(reader, "_buffer", b""))


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

