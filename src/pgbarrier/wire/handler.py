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
  Flush) or when the buffer grows large.
"""

from __future__ import annotations

import logging
import socket
import socketserver
import ssl
import struct

from buenavista.postgres import BuenaVistaHandler

from pgbarrier.errors import Fatal, InvalidPassword, PgError, ProtocolViolation, as_pg_error
from pgbarrier.session.session import Session
from pgbarrier.wire import messages as m
from pgbarrier.wire.tls import TlsConfig

log = logging.getLogger(__name__)

_WRITE_THRESHOLD = 64 * 1024
_LENGTH = struct.Struct("!i")
_TERMINATE = ord("X")
_READ_CHUNK = 65536
#: relayed messages during which a statement may run: a client hang-up then cancels it
#: (a full-path Execute is watched by the relay itself, through ``wait_hooks``)
_WATCHED = frozenset(b"QSH")
#: PostgreSQL's authentication_timeout
STARTUP_TIMEOUT_S = 60.0
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
        except _Closed:
            pass
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

    _tls_socket: ssl.SSLSocket | None = None

    def _startup(self) -> Session | None:
        limit = self.server.max_message_bytes  # type: ignore[attr-defined]
        tls: TlsConfig | None = getattr(self.server, "tls", None)
        self.request.settimeout(STARTUP_TIMEOUT_S)
        while True:
            (length,) = struct.unpack("!i", self._recv_exact(4))
            if length < 8 or length > limit:
                raise ProtocolViolation("invalid length of startup packet")
            first = m.decode_startup(self._recv_exact(length - 4))
            if isinstance(first, m.SSLRequest) and tls is not None:
                if self._tls_socket is not None:
                    raise ProtocolViolation("SSL negotiation requested on an SSL connection")
                self._write(b"S")
                self._start_tls(tls)
                continue
            if isinstance(first, (m.SSLRequest, m.GSSENCRequest)):
                self._write(b"N")
                continue
            if isinstance(first, m.CancelRequest):
                self.server.cancel(first.process_id, first.secret_key)  # type: ignore[attr-defined]
                return None
            password = self._authenticate(first, tls)
            session = self.server.new_session()  # type: ignore[attr-defined]
            try:
                session.start(first, password)
            except PgError as err:
                if not isinstance(err, Fatal):
                    err.severity = "FATAL"  # type: ignore[misc]
                raise
            self.server.register(session)  # type: ignore[attr-defined]
            self._write(session.out.take())
            self.request.settimeout(None)
            return session

    def _recv_exact(self, n: int) -> bytes:
        """Read ``n`` bytes from the socket itself (no read-ahead buffer)."""
        chunks: list[bytes] = []
        while n:
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
            log.info('password authentication failed for user "%s" (%s)', user,
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
        while True:
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
            if isinstance(msg, (m.Query, m.Sync, m.Flush)) or len(session.out.chunks) > 256:
                self._write(session.out.take())

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
                    more = recv(_READ_CHUNK)
                    if not more:
                        raise _Closed()
                buf = buf[pos:] + more if have else more
                pos = 0
                continue
            code = buf[pos]
            frame = buf[pos:stop]
            pos = stop
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
