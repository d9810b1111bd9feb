"""The event loop's side of an upstream socket the relay reads as bytes.

Rules this module keeps:

* While the loop owns the socket it is non-blocking and watched by one reader callback
  for the whole session (no epoll registration per statement): what arrives is appended
  to the :class:`~pgbarrier.backends.pg_relay.Upstream`'s buffer at once, whether or not a
  relay step is waiting for it. End of stream or an error marks the upstream lost and
  stops the watching.
* :meth:`UpstreamIO.detach` hands the socket to a worker thread (the full path: blocking
  reads and writes through the same buffer); :meth:`UpstreamIO.attach` takes it back.
  They are only called between relay steps, when every relayed message has its reply.
* Writes are tried at once; only what the kernel did not take waits for the socket to be
  writable.
"""

from __future__ import annotations

import asyncio
import logging

from pgbarrier.backends.pg_relay import Upstream

log = logging.getLogger(__name__)

_RECV = 65536


class UpstreamIO:
    __slots__ = ("loop", "up", "sock", "fd", "watching", "fresh", "_waiter")

    def __init__(self, loop: asyncio.AbstractEventLoop, up: Upstream) -> None:
        self.loop = loop
        self.up = up
        self.sock = up.sock
        self.fd = up.sock.fileno()
        self.watching = False
        #: bytes arrived since the relay step last ran
        self.fresh = False
        self._waiter: asyncio.Future[None] | None = None

    def attach(self) -> None:
        self.sock.setblocking(False)
        self.up.blocking = False
        if self.up.lost is None and not self.watching:
            self.loop.add_reader(self.fd, self._readable)
            self.watching = True

    def detach(self) -> None:
        if self.watching:
            self.loop.remove_reader(self.fd)
            self.watching = False
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
            up.received(data)
        if up.lost is not None and self.watching:
            self.loop.remove_reader(self.fd)
            self.watching = False
        self.fresh = True
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def waiter(self) -> asyncio.Future[None]:
        """A future done when bytes (or the end) arrive; await it only when nothing arrived
        since the relay step last ran (``fresh`` false, the upstream not lost)."""
        waiter = self._waiter = self.loop.create_future()
        return waiter

    def send_now(self) -> bool:
        """Write what the relay queued for the upstream; False when the kernel did not take
        all of it (then :meth:`flush_rest` must be awaited)."""
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

    async def flush_rest(self) -> None:
        data = self.up.take_writes()
        try:
            await self.loop.sock_sendall(self.sock, data)
        except OSError as exc:
            log.info("upstream send failed: %s", exc)
