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
* Compiled: Cython builds this source into ``_upstream_io_c`` (C types in
  ``_upstream_io_c.pxd`` beside it) when pgbarrier is installed, and
  :func:`pgbarrier.accel.load` picks the extension or this source. The compiled build
  reads the socket with ``recv(2)`` into one buffer of the module's and keeps only what
  arrived (the socket is non-blocking while the loop owns it: nothing waits with the GIL
  held, and the loop's callbacks run one at a time); the source calls the socket's
  ``recv``. The same code either way (the tests run both).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable

from pgbarrier.backends.pg_relay import Upstream

try:
    import cython

    #: True in the compiled extension: the branches under it use C (names of the .pxd)
    _COMPILED = cython.compiled
except ImportError:  # run as Python without Cython installed
    _COMPILED = False

log = logging.getLogger("pgbarrier.server.upstream_io")

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
        if _COMPILED:
            got = recv(self.fd, _BUF, _RECV, 0)  # noqa: F821
            if got < 0:
                err = errno  # noqa: F821
                if err == EAGAIN or err == EINTR:  # noqa: F821 - EWOULDBLOCK is EAGAIN
                    return
                failed: str | None = f"[Errno {err}] {os.strerror(err)}"
                data = b""
            else:
                failed = None
                data = PyBytes_FromStringAndSize(_BUF, got)  # noqa: F821
        else:
            try:
                data = self.sock.recv(_RECV)
                failed = None
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                failed = str(exc)
                data = b""
        if failed is not None:
            up.received(b"", failed)
        elif data and up.pos >= len(up.buf):  # Upstream.received's common case, inline
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
