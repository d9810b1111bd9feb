"""The socket side of a connection: frames in, bytes out (buenavista's handler, replaced).

Rules this module keeps:

* Only framing and I/O live here; what messages mean is :mod:`pgbarrier.session`.
* SSLRequest and GSSENCRequest are answered ``N`` on the same socket, and the
  client's next startup message is read from it.
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
import struct

from buenavista.postgres import BuenaVistaHandler

from pgbarrier.errors import Fatal, PgError, ProtocolViolation, as_pg_error
from pgbarrier.session.session import Session
from pgbarrier.wire import messages as m

log = logging.getLogger(__name__)

_WRITE_THRESHOLD = 64 * 1024


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

    def _startup(self) -> Session | None:
        limit = self.server.max_message_bytes  # type: ignore[attr-defined]
        while True:
            (length,) = struct.unpack("!i", self._read_exact(4))
            if length < 8 or length > limit:
                raise ProtocolViolation("invalid length of startup packet")
            first = m.decode_startup(self._read_exact(length - 4))
            if isinstance(first, (m.SSLRequest, m.GSSENCRequest)):
                self._write(b"N")
                continue
            if isinstance(first, m.CancelRequest):
                self.server.cancel(first.process_id, first.secret_key)  # type: ignore[attr-defined]
                return None
            session = self.server.new_session()  # type: ignore[attr-defined]
            try:
                session.start(first)
            except PgError as err:
                if not isinstance(err, Fatal):
                    err.severity = "FATAL"  # type: ignore[misc]
                raise
            self.server.register(session)  # type: ignore[attr-defined]
            self._write(session.out.take())
            return session

    def _serve(self, session: Session) -> None:
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
            try:
                session.handle(msg)
            except Fatal:
                raise
            except Exception as exc:  # a bug must not kill the connection silently
                log.exception("unexpected failure handling %s", type(msg).__name__)
                session.out.add(m.error_response(as_pg_error(exc)))
            if isinstance(msg, (m.Query, m.Sync, m.Flush)) or len(session.out.chunks) > 256:
                self._write(session.out.take())
