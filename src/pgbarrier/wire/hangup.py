"""Cancels the running statement of a client that hung up.

A connection's thread is busy while its statement runs, so it would only notice
a closed socket when the statement ends: a long query, or a wait on a paused
database, would hold its DuckDB cursor or upstream connection for nothing.

Rules this module keeps:

* The hot path pays two dict operations per statement (:meth:`begin`/:meth:`end`).
* One thread looks, every ``interval_s``, at the sockets of statements that have
  run for at least that long: a socket that is readable and at end-of-file means
  the client is gone, and the statement is cancelled (it then fails with 57014,
  and the connection closes as usual, releasing its resources).
* A socket with data waiting (a client that pipelines) or one that cannot be
  peeked (TLS) is left alone: the hang-up is noticed when the statement ends.
"""

from __future__ import annotations

import logging
import select
import socket
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)


class HangupWatcher:
    def __init__(self, interval_s: float = 1.0) -> None:
        self._interval = interval_s
        self._running: dict[int, tuple[socket.socket, float, Callable[[], None]]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="hangup-watcher", daemon=True)
        self._thread.start()

    def begin(self, key: int, sock: socket.socket, on_hangup: Callable[[], None]) -> None:
        self._running[key] = (sock, time.monotonic(), on_hangup)

    def end(self, key: int) -> None:
        self._running.pop(key, None)

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            cutoff = time.monotonic() - self._interval
            for key, (sock, started, on_hangup) in list(self._running.items()):
                if started <= cutoff and _hung_up(sock):
                    log.info("client hung up during a statement; cancelling it")
                    self._running.pop(key, None)
                    try:
                        on_hangup()
                    except Exception:  # pragma: no cover - cancel must not kill the watcher
                        log.exception("cancelling the statement of a hung-up client failed")


def _hung_up(sock: socket.socket) -> bool:
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except (BlockingIOError, InterruptedError):
        return False
    except ValueError:  # TLS sockets cannot peek
        return False
    except OSError:  # reset by the peer: gone as well
        return True
