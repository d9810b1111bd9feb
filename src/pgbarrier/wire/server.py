"""The listening server: buenavista's threading socketserver with pgbarrier's handler.

One thread per connection (buenavista's model). The server keeps the sessions
by backend process id, so a CancelRequest on another connection can find the
one it names. It also holds what every connection's start-up needs: the
:class:`~pgbarrier.wire.auth.Authenticator` (None means trust) and the
:class:`~pgbarrier.wire.tls.TlsConfig` (None means SSLRequest gets ``N``).
"""

from __future__ import annotations

import logging
import socketserver
import threading
from collections.abc import Callable

from buenavista.postgres import BuenaVistaServer

from pgbarrier.session.session import Session
from pgbarrier.wire.auth import Authenticator
from pgbarrier.wire.handler import PgBarrierHandler
from pgbarrier.wire.hangup import HangupWatcher
from pgbarrier.wire.tls import TlsConfig

log = logging.getLogger(__name__)

DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024


class PgBarrierServer(BuenaVistaServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], session_factory: Callable[[], Session],
                 *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                 authenticator: Authenticator | None = None,
                 tls: TlsConfig | None = None) -> None:
        # BuenaVistaServer.__init__ hard-wires its own handler; set up ours instead.
        socketserver.ThreadingTCPServer.__init__(self, address, PgBarrierHandler)
        self.conn = None
        self.rewriter = None
        self.extensions = {}
        self.auth = None
        self.ctxts = {}
        self.session_factory = session_factory
        self.max_message_bytes = max_message_bytes
        self.authenticator = authenticator
        self.tls = tls
        log.info("authentication: %s; TLS: %s",
                 f"{authenticator.method} ({authenticator.user_count} users)"
                 if authenticator is not None else "trust", "on" if tls else "off")
        self._sessions: dict[int, Session] = {}
        self._lock = threading.Lock()
        #: cancels the running statement of a client that hung up
        self.hangups = HangupWatcher()

    def server_close(self) -> None:
        self.hangups.stop()
        super().server_close()

    def verify_request(self, request: object, client_address: object) -> bool:
        # buenavista only lets 127.0.0.1 in; pgbarrier decides by --host and auth.
        return True

    def new_session(self) -> Session:
        return self.session_factory()

    def register(self, session: Session) -> None:
        with self._lock:
            self._sessions[session.process_id] = session

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
