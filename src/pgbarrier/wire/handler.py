"""The socket side of a connection: frames in, bytes out (buenavista's handler, replaced).

Rules this module keeps:

* Only framing and I/O live here; what messages mean is :mod:`pgbarrier.session`.
* SSLRequest is answered ``S`` when the server has TLS (then the handshake runs on the
  same socket and the real startup message is read over TLS), ``N`` otherwise;
  GSSENCRequest is always ``N``. Start-up packets are read straight from the socket, never
  through a buffer, so no plaintext sent after an SSLRequest is taken as if encrypted; a
  second SSLRequest on a TLS connection is 08P01.
* With a password source configured, the client authenticates (see
  :mod:`pgbarrier.wire.auth`) between its StartupMessage and ``Session.start``; only ``p``
  messages are accepted until then (anything else is 08P01). Start-up and authentication
  together must finish within ``STARTUP_TIMEOUT_S`` or the connection is dropped.
* A CancelRequest cancels the running statement of the session with that
  backend key and nothing else; a wrong key does nothing.
* A frame longer than ``max_message_bytes``, or one that does not decode, gets
  08P01 and closes this connection only. FATAL errors close it after sending.
* Output is buffered and written when the client waits for it (Query, Sync,
  Flush) or when the buffer grows large; rows are also written while they are
  produced, through the session's ``spill`` hook (a blocking write: a client
  that does not read holds the statement, not the server's memory).
"""

from __future__ import annotations

import logging
import socket
import socketserver
import ssl
import struct
import time

from buenavista.postgres import BuenaVistaHandler

from pgbarrier.errors import (
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
from pgbarrier.session.session import ClientGone, Session
from pgbarrier.wire import messages as m
from pgbarrier.session.transaction import TxState
from pgbarrier.sql.identifiers import truncate_identifier
from pgbarrier.wire.lognames import for_log
from pgbarrier.wire.startup_params import check_startup_parameters
from pgbarrier.wire.tls import TlsConfig

log = logging.getLogger(__name__)

_WRITE_THRESHOLD = 64 * 1024
_LENGTH = struct.Struct("!i")
_TERMINATE = ord("X")
_READ_CHUNK = 65536
#: relayed messages during which a statement may run: a client hang-up then cancels it
#: (a full-path Execute is watched by the relay itself, through ``wait_hooks``)
_WATCHED = frozenset(b"QSH")
#: messages answered with ReadyForQuery: after them the idle timeouts apply
_READY_CODES = frozenset(b"QSF")
#: PostgreSQL's authentication_timeout (the default of --authentication-timeout-sec)
STARTUP_TIMEOUT_S = 60.0
#: PostgreSQL's MAX_STARTUP_PACKET_LENGTH (the body, after the length word)
MAX_STARTUP_PACKET_BYTES = 10000
#: PostgreSQL's PG_MAX_AUTH_TOKEN_LENGTH
_MAX_AUTH_MESSAGE_BYTES = 65535


class _Closed(Exception):
    """The peer went away."""


class PgBarrierHandler(BuenaVistaHandler):
    server: "socketserver.BaseServer"  # a PgBarrierServer

    def _read_exact(self, n: int) -> bytes:
        data = self.rfile.read(n)
        if data is None or len(data) < n:
            raise _Closed()
        return data

    def _write(self, data: bytes) -> None:
        if data:
            self.wfile.write(data)
            self.wfile.flush()

    def handle(self) -> None:  # noqa: D401 - socketserver entry point
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, True)
        session: Session | None = None
        try:
            session = self._startup()
            if session is not None:
                self._serve(session)
        except (_Closed, ClientGone):
            pass
        except TimeoutError:
            if self._deadline is not None:  # PostgreSQL's authentication_timeout: just close
                log.info("connection from %s closed: start-up and authentication did not "
                         "finish within %g s", self.client_address[0], self._startup_timeout())
        except (ConnectionError, OSError):
            pass
        except PgError as err:
            try:
                self._write((session.out.take() if session else b"") + m.error_response(err))
            except OSError:
                pass
        except Exception:
            log.exception("connection failed")
        finally:
            if session is not None:
                self.server.unregister(session)  # type: ignore[attr-defined]
                session.close()
            if self._slot:
                self._slot = False
                self.server.release_slot()  # type: ignore[attr-defined]

    _tls_socket: ssl.SSLSocket | None = None
    #: while in start-up: when it must be over (time.monotonic())
    _deadline: float | None = None
    #: this connection holds one of the server's --max-connections slots
    _slot = False

    def _startup_timeout(self) -> float:
        return getattr(self.server, "authentication_timeout_s", STARTUP_TIMEOUT_S)

    def _arm(self) -> None:
        """Before a start-up read: the socket times out when the start-up deadline passes."""
        if self._deadline is not None:
            left = self._deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError()
            self.request.settimeout(left)

    def _startup(self) -> Session | None:
        tls: TlsConfig | None = getattr(self.server, "tls", None)
        self._deadline = time.monotonic() + self._startup_timeout()
        self._arm()
        while True:
            (length,) = struct.unpack("!i", self._recv_exact(4))
            if length < 8 or length - 4 > MAX_STARTUP_PACKET_BYTES:
                raise ProtocolViolation("invalid length of startup packet")
            first = m.decode_startup(self._recv_exact(length - 4))
            if isinstance(first, m.SSLRequest) and tls is not None:
                if self._tls_socket is not None:
                    raise ProtocolViolation("SSL negotiation requested on an SSL connection")
                self._write(b"S")
                self._arm()
                self._start_tls(tls)
                continue
            if isinstance(first, (m.SSLRequest, m.GSSENCRequest)):
                self._write(b"N")
                continue
            if isinstance(first, m.CancelRequest):
                self.server.cancel(first.process_id, first.secret_key)  # type: ignore[attr-defined]
                return None
            if first.needs_negotiation:
                self._write(m.negotiate_protocol_version(m.PROTOCOL_3_0, first.protocol_options))
            self._admit(first)
            password = self._authenticate(first, tls)
            try:
                check_startup_parameters(first.parameters)
            except PgError:
                self._write(m.authentication_ok())  # PostgreSQL finds it after authentication
                raise
            session = self.server.new_session()  # type: ignore[attr-defined]
            try:
                session.start(first, password)
            except PgError as err:
                if not isinstance(err, Fatal):
                    err.severity = "FATAL"  # type: ignore[misc]
                raise
            self.server.register(session)  # type: ignore[attr-defined]
            self._write(session.out.take())
            self._deadline = None
            self.request.settimeout(None)
            return session

    def _admit(self, startup: m.StartupMessage) -> None:
        """Before authentication, as PostgreSQL: a free --max-connections slot (53300), then
        TLS when --require-tls (28000, PostgreSQL's words for an hba with only hostssl)."""
        server = self.server
        params = startup.parameters
        user = params.get("user", "")
        database = params.get("database") or user
        if not server.take_slot():  # type: ignore[attr-defined]
            log.info('connection from %s refused: too many clients already (user "%s", '
                     'database "%s")', self.client_address[0], for_log(user), for_log(database))
            raise TooManyConnections("sorry, too many clients already")
        self._slot = True
        if getattr(server, "require_tls", False) and self._tls_socket is None:
            log.info('connection from %s refused: no TLS (--require-tls), user "%s", '
                     'database "%s"', self.client_address[0], for_log(user), for_log(database))
            raise InvalidAuthorizationSpecification(
                f'no pg_hba.conf entry for host "{self.client_address[0]}", '
                f'user "{truncate_identifier(user)}", database "{truncate_identifier(database)}", no encryption')

    def _recv_exact(self, n: int) -> bytes:
        """Read ``n`` bytes from the socket itself (no read-ahead buffer)."""
        chunks: list[bytes] = []
        while n:
            self._arm()
            chunk = self.request.recv(n)
            if not chunk:
                raise _Closed()
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def _start_tls(self, tls: TlsConfig) -> None:
        """Server-side handshake on this socket; reads and writes go through TLS after it."""
        self.rfile.close()
        self.wfile.close()
        conn = tls.context.wrap_socket(self.request, server_side=True)
        self._tls_socket = conn
        self.request = self.connection = conn
        self.rfile = conn.makefile("rb")
        self.wfile = conn.makefile("wb")

    def _authenticate(self, startup: m.StartupMessage, tls: TlsConfig | None) -> str | None:
        """Run the password exchange, if one is configured; return once the client passed,
        with its password when pgbarrier keeps it for an upstream login (else None)."""
        authenticator = getattr(self.server, "authenticator", None)
        user = startup.parameters.get("user")
        if authenticator is None or not user:  # trust; a missing user is Session.start's 28000
            return None
        cert_pem = tls.cert_pem if tls is not None and self._tls_socket is not None else None
        exchange = authenticator.begin(user, cert_pem=cert_pem)
        self._write(exchange.start())
        try:
            while not exchange.done:
                self._write(exchange.receive(self._read_password_message()))
        except InvalidPassword:
            log.info('password authentication failed for user "%s" (%s)', for_log(user),
                     type(exchange).__name__)
            raise
        return exchange.password

    def _read_password_message(self) -> bytes:
        # straight from the socket: nothing may sit in a read-ahead buffer when the
        # session loop (which reads the socket itself in the relay's case) begins
        header = self._recv_exact(5)
        (length,) = struct.unpack("!i", header[1:])
        if header[:1] == b"X":  # the client gave up (e.g. to ask its user for a password)
            raise _Closed()
        if header[:1] != b"p":
            raise ProtocolViolation(f"expected password response, got message type {header[0]}")
        if length < 4 or length > _MAX_AUTH_MESSAGE_BYTES:
            raise ProtocolViolation(f"invalid message length {length}")
        return self._recv_exact(length - 4) if length > 4 else b""

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            if self._tls_socket is not None:  # the server closes only the plain socket it gave us
                self._close_tls(self._tls_socket)

    @staticmethod
    def _close_tls(conn: ssl.SSLSocket) -> None:
        """Send close_notify (clients such as libpq's cancel wait for it), then close."""
        try:
            conn.settimeout(0)  # send our close_notify; do not wait for the peer's
            conn.unwrap()
        except (OSError, ValueError):
            pass
        conn.close()

    def _serve(self, session: Session) -> None:
        if session.relay is not None:
            self._serve_relay(session)
            return
        limit = self.server.max_message_bytes  # type: ignore[attr-defined]
        read = self._read_exact
        write = self._write

        def spill(data: bytes) -> None:  # rows written as they are produced (back-pressure)
            try:
                write(data)
            except (OSError, ValueError):  # reset, or closed by shutdown
                raise ClientGone() from None

        session.spill = spill
        idle = False  # a ReadyForQuery went out: the idle timeouts apply
        while True:
            if idle:
                self._wait_for_input(session)
            header = read(5)
            type_code = header[:1]
            (length,) = struct.unpack("!i", header[1:])
            if length < 4 or length > limit:
                raise ProtocolViolation(f"invalid message length {length}")
            payload = read(length - 4) if length > 4 else b""
            msg = m.decode_message(type_code, payload)
            if isinstance(msg, m.Terminate):
                self._write(session.out.take())
                return
            watched = isinstance(msg, (m.Query, m.Execute))
            if watched:
                self.server.hangups.begin(id(self), self.request, session.cancel)  # type: ignore[attr-defined]
            try:
                session.handle(msg)
            except Fatal:
                raise
            except Exception as exc:  # a bug must not kill the connection silently
                log.exception("unexpected failure handling %s", type(msg).__name__)
                session.out.add(m.error_response(as_pg_error(exc)))
            finally:
                if watched:
                    self.server.hangups.end(id(self))  # type: ignore[attr-defined]
            idle = isinstance(msg, (m.Query, m.Sync, m.FunctionCall)) or (
                isinstance(msg, m.Undecodable) and msg.type_code in (b"Q", b"F"))
            if idle or isinstance(msg, m.Flush) or len(session.out.chunks) > 256:
                self._write(session.out.take())

    @staticmethod
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

    def _wait_for_input(self, session: Session) -> None:
        """Wait for the client's next message; FATAL when an idle timeout runs out first."""
        limit = self._idle_limit(session)
        if limit is None:
            return
        self.request.settimeout(limit[0])
        try:
            self.rfile.peek(1)  # returns at once when input is buffered already
        except TimeoutError:
            log.info("connection %d: %s", session.process_id, limit[1].message)
            raise limit[1] from None
        finally:
            self.request.settimeout(None)

    def _serve_relay(self, session: Session) -> None:
        """The loop of a session whose upstream is relayed as bytes: frames go to
        :class:`~pgbarrier.session.relay.SessionRelay` undecoded. Input is read from the
        socket in chunks (every whole frame in one is handled before the next read), and
        output is written before the loop would block on input, when the relay asked for it
        (Query, Sync, Flush), or when it piles up."""
        relay = session.relay
        assert relay is not None
        limit = self.server.max_message_bytes  # type: ignore[attr-defined]
        hangups = self.server.hangups  # type: ignore[attr-defined]
        sock = self.request
        recv = sock.recv
        sendall = sock.sendall
        out = session.out
        chunks = out.chunks
        key = id(self)
        cancel = session.cancel
        unpack = _LENGTH.unpack_from

        def spill(pending: list[bytes]) -> None:
            sendall(b"".join(pending))
            pending.clear()

        def begin() -> None:
            hangups.begin(key, sock, cancel)

        def end() -> None:
            hangups.end(key)

        relay.up.spill = spill
        relay.wait_hooks = (begin, end)  # around full-path Executes (they may wait long)
        buf = b""
        pos = 0
        flush = False
        idle = False  # the last message was a Query or Sync: the idle timeouts apply
        while True:
            have = len(buf) - pos
            stop = 0
            if have >= 5:
                length = unpack(buf, pos + 1)[0]
                if length < 4 or length > limit:
                    raise ProtocolViolation(f"invalid message length {length}")
                stop = pos + 1 + length
            if have < 5 or stop > len(buf):
                if flush:
                    sendall(out.take())
                    flush = False
                if have >= 5 and stop - len(buf) > _READ_CHUNK:  # a long frame: the rest at once
                    more = self._recv_exact(stop - len(buf))
                else:
                    waiting = self._idle_limit(session) if idle and not have else None
                    if waiting is None:
                        more = recv(_READ_CHUNK)
                    else:
                        sock.settimeout(waiting[0])
                        try:
                            more = recv(_READ_CHUNK)
                        except TimeoutError:
                            log.info("connection %d: %s", session.process_id, waiting[1].message)
                            raise waiting[1] from None
                        finally:
                            sock.settimeout(None)
                    if not more:
                        raise _Closed()
                buf = buf[pos:] + more if have else more
                pos = 0
                continue
            code = buf[pos]
            frame = buf[pos:stop]
            pos = stop
            idle = code in _READY_CODES
            if code == _TERMINATE:
                sendall(out.take())
                return
            watched = code in _WATCHED
            if watched:
                begin()
            try:
                if relay.feed(code, frame):
                    flush = True
            except Fatal:
                raise
            except Exception as exc:  # a bug: the upstream stream cannot be trusted any more
                log.exception("unexpected failure relaying message type %r", chr(code))
                raise Fatal(f"internal error: {exc}", sqlstate="XX000") from None
            finally:
                if watched:
                    end()
            if len(chunks) > 256:
                sendall(out.take())
