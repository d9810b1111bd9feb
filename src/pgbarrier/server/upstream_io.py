"""The event loop's side of an upstream socket the relay reads as bytes.

Rules this module keeps:

* While the loop owns the socket it is non-blocking and watched by one reader callback
  for the whole session (no epoll registration per statement): what arrives is appended
  to the :class:`~pgbarrier.backends.pg_relay.Upstream`'s buffer at once, whether or not a
  relay step is waiting for it, and the step waiting (``waiting``, a callback) is called;
  with no step waiting, ``idle`` is (the connection passes on what PostgreSQL sends by
  itself, such as a NOTIFY, at once).
  End of stream or an error marks the upstream lost and stops the watching.
* :meth:`UpstreamIO.detach` hands the socket to a worker thread (the full path: blocking
  reads and writes through the same buffer); :meth:`UpstreamIO.attach` takes it back.
  They are only called between relay steps, when every relayed message has its reply.
* Writes are tried at once; only what the kernel did not take waits for the socket to be
  writable (:meth:`UpstreamIO.send_later`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from pgbarrier.backends.pg_relay import Upstream

log = logging.getLogger(__name__)

_RECV = 65536


class UpstreamIO:
    __slots__ = ("loop", "up", "sock", "fd", "watching", "fresh", "waiting", "idle",
                 "paused", "_rest", "_then")

    def __init__(self, loop: asyncio.AbstractEventLoop, up: Upstream) -> None:
        self.loop = loop
        self.up = up
        self.sock = up.sock
        self.fd = up.sock.fileno()
        self.watching = False
        #: bytes arrived since the relay step last ran
        self.fresh = False
        #: called once when bytes (or the end) arrive: set only while ``fresh`` is false
        self.waiting: Callable[[], None] | None = None
        #: called when bytes (or the end) arrive and no step waits
        self.idle: Callable[[], None] | None = None
        #: not read while the client does not read what it sent by itself (see pause)
        self.paused = False
        #: what send_later still has to write, and what it calls when done
        self._rest = b""
        self._then: Callable[[], None] | None = None

    def attach(self) -> None:
        self.sock.setblocking(False)
        self.up.blocking = False
        self.paused = False
        if self.up.lost is None and not self.watching:
            self.loop.add_reader(self.fd, self._readable)
            self.watching = True

    def pause(self) -> None:
        """Stop reading between statements (the client does not read what was passed on)."""
        if self.watching:
            self.loop.remove_reader(self.fd)
            self.watching = False
        self.paused = True

    def resume(self) -> None:
        self.paused = False
        if self.up.lost is None and not self.watching and not self.up.blocking:
            self.loop.add_reader(self.fd, self._readable)
            self.watching = True

    def detach(self) -> None:
        if self.watching:
            self.loop.remove_reader(self.fd)
            self.watching = False
        if self._then is not None:
            self.loop.remove_writer(self.fd)
            self._then = None
        self.sock.setblocking(True)
        self.up.blocking = True

    def _readable(self) -> None:
        up = self.up
        try:
            data = self.sock.recv(_RECV)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            up.received(b"", str(exc))
        else:
            if data and up.pos >= len(up.buf):  # Upstream.received's common case, inline
                up.buf = data
                up.pos = 0
            else:
                up.received(data)
        if up.lost is not None and self.watching:
            self.loop.remove_reader(self.fd)
            self.watching = False
        self.fresh = True
        waiting = self.waiting
        if waiting is not None:
            self.waiting = None
            waiting()
        elif self.idle is not None:
            self.idle()

    def send_now(self) -> bool:
        """Write what the relay queued for the upstream; False when the kernel did not take
        all of it (then :meth:`send_later` must be called)."""
        data = self.up.take_writes()
        try:
            sent = self.sock.send(data)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError as exc:
            # the upstream may have said why before it went: the next read finds it
            log.info("upstream send failed: %s", exc)
            return True
        if sent == len(data):
            return True
        self.up.pending_writes.insert(0, data[sent:])
        return False

    def send_later(self, then: Callable[[], None]) -> None:
        """Write the rest as the socket takes it, then call ``then`` (on the loop)."""
        self._rest = self.up.take_writes()
        self._then = then
        self.loop.add_writer(self.fd, self._writable)

    def _writable(self) -> None:
        try:
            sent = self.sock.send(self._rest)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            log.info("upstream send failed: %s", exc)
            sent = len(self._rest)
        self._rest = self._rest[sent:]
        if self._rest:
            return
        self.loop.remove_writer(self.fd)
        then, self._then = self._then, None
        if then is not None:
            then()
