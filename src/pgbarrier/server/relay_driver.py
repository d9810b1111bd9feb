"""The one driver of a relayed batch's steps: it carries out the relay's actions.

A session relayed as bytes to an upstream (:mod:`pgbarrier.session.relay`) answers each
client frame the connection's fast path (:mod:`pgbarrier.server.core`) did not take with
a step generator. Its requests are the relay's actions (:mod:`pgbarrier.relay.effects`):

* ``NEED_BYTES``: write what the relay queued for the upstream, then wait until the
  upstream's socket has sent more (its reader, :mod:`pgbarrier.server.upstream_io`, calls
  back);
* :class:`~pgbarrier.relay.effects.Spill`: write the chunks to the client; wait while the
  client does not read (the upstream is not read meanwhile either);
* anything else is full-path work (``RunLocal``): it runs on a worker thread, which owns
  the upstream socket until it is done.

Rules this module keeps:

* :class:`RelayDriver` holds the batch being relayed (its frames, the next one's index,
  the step running) and nothing else: the relay's protocol state is
  :class:`pgbarrier.relay.state.RelayState`'s, the session's its own.
* Its host is the connection (:class:`Host` lists what it uses of it): the host does all
  I/O to the client and says when the client's socket takes writes again; the driver
  tells it when a step waits (:meth:`Host.relay_waits`), goes on
  (:meth:`Host.relay_goes_on`) and when the batch is over (``_batch_ended``).
* Output is written after each frame the client waits on (Query, Sync, Flush...) that
  has frames behind it, or when it grows past ``MAX_CHUNKS`` chunks, and when the batch
  ends. A Terminate ends the connection after what came before it is written.
* A failure that is not the session's (a bug) ends the connection with XX000: the
  upstream's stream cannot be trusted after it.

Unit-tested with a fake host and a socket pair as the upstream
(``tests/unit/test_relay_driver.py``).
"""

from __future__ import annotations

import concurrent.futures
import logging
from collections.abc import Callable
from typing import Any, Protocol

from pgbarrier.errors import Fatal
from pgbarrier.pgproto.codes import ANSWERED_WITH_READY, EXTENDED, SENDS_UPSTREAM, TERMINATE
from pgbarrier.relay.effects import NEED_BYTES, Spill
from pgbarrier.session.session import ClientGone

#: the connection's logger: a relay failure is logged under the name it always had
log = logging.getLogger("pgbarrier.server.connection")

#: output chunks gathered before they are written mid-batch
MAX_CHUNKS = 256
#: a step that waits: it goes on from a callback
_PENDING = object()


class Host(Protocol):
    """What the driver uses of its connection."""

    server: Any  # terminating, logs_statements, gate(conn), pool.submit(fn, *args)
    loop: Any  # call_soon_threadsafe
    transport: Any  # is_closing()
    in_batch: bool
    _write_paused: bool

    def _write(self, data: bytes) -> None: ...
    def _end(self, error: BaseException | None = None) -> None: ...
    def _guard(self, fn: Callable[..., None], *args: Any) -> None: ...
    def _advance(self) -> None: ...
    def _batch_ended(self, out: bytes | None, idle: bool) -> None: ...
    def _upstream_spoke(self) -> None: ...
    def relay_waits(self, on_writable: Callable[[], None] | None = None) -> None: ...
    def relay_goes_on(self) -> None: ...


class RelayDriver:
    """Runs a relayed batch's frames through the session's relay (module rules)."""

    __slots__ = ("host", "relay", "io", "batch", "next", "steps")

    def __init__(self, host: Host, relay: Any, io: Any) -> None:
        self.host = host
        #: the session's SessionRelay, and the loop's side of its upstream socket
        self.relay = relay
        self.io = io
        #: the batch being relayed: its frames, the next one's index, the step running
        self.batch: list[bytes] = []
        self.next = 0
        self.steps: Any = None

    def run(self, batch: list[bytes]) -> None:
        """Relay ``batch`` (whole frames) from its first frame; returns when it ends or a
        step waits (the host is told, and a callback goes on)."""
        self.batch = batch
        self.next = 0
        self._frames(None)

    def _frames(self, ended: Any) -> None:
        """The batch's frames from ``next`` on, each to the session's relay. ``ended``:
        the answer of the step that just ended after waiting (None: none did)."""
        host = self.host
        relay = self.relay
        out = relay.session.out
        server = host.server
        relay_now = relay.relay_now
        batch = self.batch
        last = len(batch) - 1
        while True:
            if ended is not None:  # the frame before ``next`` has been handled
                if self.next <= last and out.chunks and (ended or len(out.chunks) > MAX_CHUNKS):
                    host._write(out.take())
                    if host._write_paused:
                        host.relay_waits(self._step_written)
                        return
                ended = None
            i = self.next
            if i > last:
                break
            frame = batch[i]
            self.next = i + 1
            code = frame[0]
            if code in EXTENDED and relay_now(code, frame):
                continue  # queued for the upstream until Sync or Flush: nothing to write
            if code == TERMINATE:
                host.in_batch = False
                host._write(out.take())
                host._end()
                return
            if code in SENDS_UPSTREAM and (server.terminating or server.logs_statements):
                server.gate(host)
            self.steps = relay.steps(code, frame)
            ended = self._drive(None, None)
            if ended is _PENDING:
                host.relay_waits()
                return
        self.batch = []
        host._batch_ended(out.take(), batch[-1][0] in ANSWERED_WITH_READY)
        up = relay.up
        if up.pos < len(up.buf) or up.lost is not None:  # it said more after its last reply
            host._upstream_spoke()

    def _step_written(self) -> None:
        """The client reads again: the frames after the step that ended go on."""
        self._step_ended(None)

    def _step_ended(self, answer: Any) -> None:
        self.host.relay_goes_on()
        self._frames(answer)
        self.host._advance()

    def _resume(self, value: Any = None, exc: BaseException | None = None) -> None:
        """A waiting step goes on (a callback's entry point)."""
        try:
            answer = self._drive(value, exc)
            if answer is not _PENDING:
                self._step_ended(answer)
        except BaseException as err:  # noqa: BLE001 - the connection's run() sorts it out
            self.host._end(err)

    def _drive(self, value: Any, exc: BaseException | None) -> Any:
        """Run the step generator until it ends (its answer) or waits (``_PENDING``; a
        callback resumes it). See the module rules for its requests."""
        host = self.host
        io = self.io
        up = io.up
        steps = self.steps
        try:
            try:
                io.fresh = False
                request = steps.throw(exc) if exc is not None else steps.send(value)
                while True:
                    if request is NEED_BYTES:
                        if up.pending_writes and not io.send_now():
                            io.send_later(self._sent_then_read)
                            return _PENDING
                        if not io.fresh and up.lost is None:
                            io.waiting = self._resume
                            return _PENDING
                        io.fresh = False
                        request = steps.send(None)
                    elif type(request) is Spill:
                        chunks = request.chunks
                        host._write(b"".join(chunks))
                        chunks.clear()
                        if host.transport.is_closing():
                            raise ClientGone()
                        if host._write_paused:  # the client does not read: nor does the relay
                            io.pause()
                            host.relay_waits(self._resume)
                            return _PENDING
                        io.fresh = False
                        request = steps.send(None)
                    else:
                        if up.pending_writes and not io.send_now():
                            local = request
                            io.send_later(lambda: host._guard(self._run_local, local))
                            return _PENDING
                        self._run_local(request)
                        return _PENDING
            except StopIteration as stop:
                self.steps = None
                if up.pending_writes and not io.send_now():
                    answer = stop.value
                    io.send_later(lambda: host._guard(self._step_ended, answer))
                    return _PENDING
                return stop.value
        except (Fatal, ClientGone):
            raise
        except Exception as err:  # a bug: the upstream stream cannot be trusted now
            log.exception("unexpected failure relaying a message")
            raise Fatal(f"internal error: {err}", sqlstate="XX000") from None

    def _sent_then_read(self) -> None:
        io = self.io
        if io.fresh or io.up.lost is not None:
            self._resume()
        else:
            io.waiting = self._resume

    def _run_local(self, request: Any) -> None:
        """Full-path work on a worker, which owns the upstream socket until it is done."""
        self.io.detach()
        future = self.host.server.pool.submit(request.fn, *request.args)
        future.add_done_callback(self._local_ran_threadsafe)

    def _local_ran_threadsafe(self, future: concurrent.futures.Future[Any]) -> None:
        try:
            self.host.loop.call_soon_threadsafe(self._local_ran, future)
        except RuntimeError:  # the loop is closed: the server is gone
            pass

    def _local_ran(self, future: concurrent.futures.Future[Any]) -> None:
        self.io.attach()
        exc = future.exception()
        if exc is not None:
            self._resume(None, exc)
        else:
            self._resume(future.result())
