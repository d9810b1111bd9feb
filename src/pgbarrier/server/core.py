"""A client connection's hot fields and the relay's fast path, compiled: the base of Connection.

Issue 30 asks for the relay's serving core as typed, compiled state in asyncpg's way
(``CoreProtocol``, a ``cdef class`` under its Python protocol). :class:`ConnectionCore`
is that base of :class:`pgbarrier.server.connection.Connection`: the fields every
client read and every upstream reply reads (whether the connection serves, is busy,
paused, at its end; the batch's bookkeeping) and the methods a relayed batch runs from
the client's read to the upstream's ReadyForQuery. Everything else about the connection
(start-up, authentication, the worker's batches, the relay's steps, shutdown) is the
subclass's, in Python; the methods here call it for anything out of the ordinary.

Rules this module keeps:

* The fast path (:meth:`ConnectionCore._relay_fast`): a client read that is one whole
  relayed batch (``RelayState.fast_batch`` says so) goes upstream as it came, and the
  replies go to the client as they arrive, up to the batch's ReadyForQuery (or
  CopyInResponse), with no steps, no frame list and no outbox, as PgBouncer relays. The
  read takes the usual path whenever anything is out of the ordinary (bytes held,
  reading or writing paused, the client gone, shutdown, statement logging, the
  upstream's own bytes unread); it then has changed nothing.
* A batch's start and end (:meth:`ConnectionCore._batch_began`,
  :meth:`ConnectionCore._batch_ended`) record what pg_stat_activity and the duration log
  read, whichever path ran the batch.
* Compiled: Cython builds this source into ``_core_c`` (its C types are in ``_core_c.pxd``
  beside it) when pgbarrier is installed, and :func:`pgbarrier.accel.load` picks the
  extension or this source: the connection takes its base class from
  :data:`pgbarrier.server.connection.ConnectionCore`. The compiled build writes with
  ``send(2)`` on the sockets' descriptors (non-blocking while the loop owns them, so
  nothing waits with the GIL held), the source with ``os.write``. The same code either
  way (the tests run both).
* A reply's bytes go to the client's socket directly while its transport holds nothing
  unwritten and is not closing (never over TLS: the connection passes no descriptor
  then); what the kernel does not take goes to the transport, which keeps the order and
  the flow control (``pause_writing``) from there (:meth:`ConnectionCore._to_client`).
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from pgbarrier.backends.pg_relay import COPY_IN
from pgbarrier.pgproto.codes import QUERY, SYNC
from pgbarrier.server.statement_text import frames_of
from pgbarrier.session.transaction import TxState

try:
    import cython

    #: True in the compiled extension: the branches under it use C (names of the .pxd)
    _COMPILED = cython.compiled
except ImportError:  # run as Python without Cython installed
    _COMPILED = False

log = logging.getLogger("pgbarrier.server.connection")

#: a hang-up during a batch cancels its statement if the batch runs this much longer
HANGUP_GRACE_S = 0.25
_IDLE = TxState.IDLE
_monotonic = time.monotonic


class ConnectionCore:
    """The connection's hot fields and the relayed batch's fast path (module rules)."""

    __slots__ = ("server", "loop", "transport", "session", "frames", "upstream_io",
                 "in_batch", "cancelled", "shut_read", "eof", "batches", "began", "ended",
                 "xact_began", "last_batch", "_serving", "_busy", "_finished", "_idle",
                 "_idle_timer", "_read_paused", "_write_paused", "_on_writable", "_timing",
                 "_fast", "_fast_query", "_fast_replied_cb", "_up_fd", "_up", "_on_parameter",
                 "_client_fd", "_state", "_limit", "_log_durations", "_logs_statements",
                 "_info", "_stats")

    def __init__(self, server: Any, loop: Any, frames: Any) -> None:
        self.server = server
        self.loop = loop
        self.transport: Any = None
        self.session: Any = None
        self.frames = frames
        #: fixed for the server's life, read once: the largest message a client may send,
        #: whether each batch's duration is timed (log_min_duration_statement) and whether
        #: each relayed statement is logged (the log level): the fast path reads these
        #: at every batch
        self._limit = frames.limit
        self._log_durations = server.log_min_duration_ms >= 0
        self._logs_statements = server.logs_statements
        #: the loop's side of the upstream socket, for a session relayed as bytes
        self.upstream_io: Any = None
        #: a batch of its messages is running
        self.in_batch = False
        #: the grace period ran out while it was connected: its output is dropped
        self.cancelled = False
        #: shutdown: read nothing more from the client (what it sent already is handled)
        self.shut_read = False
        #: the client closed its side
        self.eof = False
        #: batches started (a hang-up cancels the batch it happened in, not a later one)
        self.batches = 0
        #: for pg_stat_activity (server/activity.py): when the running or last batch began
        #: and ended and when the batch that opened its transaction began (monotonic), and
        #: the frames of the running or last batch that was not a lone Sync
        self.began: float | None = None
        self.ended: float | None = None
        self.xact_began: float | None = None
        self.last_batch: list[bytes] | None = None
        #: after start-up, bytes drive the session (see Connection._advance)
        self._serving = False
        #: something is in flight for the batch (a relay step waiting, a worker running)
        self._busy = False
        #: the serving phase has ended (or failed)
        self._finished = False
        #: a ReadyForQuery went out last: the idle timeouts apply
        self._idle = True
        self._idle_timer: Any = None
        self._read_paused = False
        self._write_paused = False
        #: called when the client's socket takes writes again (a waiting step or batch)
        self._on_writable: Any = None
        #: with log_min_duration_statement: when the running batch began, and its frames
        self._timing: tuple[float, list[bytes]] | None = None
        #: the session's relay, for the fast path of a whole relayed batch (None: no relay)
        self._fast: Any = None
        #: the fast path's batch in flight is a simple Query (else extended, up to Sync)
        self._fast_query = False
        #: ``_fast_replied`` bound once (the upstream's waiting callback, every batch)
        self._fast_replied_cb: Any = None
        #: the upstream socket's descriptor (the fast path writes to it itself), the
        #: upstream, and its ParameterStatus reader bound once (the reply scan's, every batch)
        self._up_fd = -1
        self._up: Any = None
        self._on_parameter: Any = None
        #: the relay's protocol state (the upstream's RelayState)
        self._state: Any = None
        #: the client socket's descriptor, for the replies' writes (-1: through the
        #: transport only, as over TLS)
        self._client_fd = -1
        #: the session's SessionInfo (its idle timeouts) and statement counts (None:
        #: metrics off), fixed once it is served: the fast path reads them at every batch
        self._info: Any = None
        self._stats: Any = None

    def relay_fast(self, relay: Any, io: Any, client_fd: int) -> None:
        """Serve a session relayed as bytes: ``relay`` its SessionRelay, ``io`` the loop's
        side of its upstream socket (attached), ``client_fd`` the client socket's
        descriptor when the fast path may write replies to it itself (-1: it may not)."""
        self._client_fd = client_fd
        self.upstream_io = io
        self._fast = relay
        self._up_fd = io.fd
        self._up = io.up
        self._state = io.up.state
        self._on_parameter = io.up.parameter_status
        self._fast_replied_cb = self._fast_replied
        session = self.session
        self._info = session.executor.info
        self._stats = session.stats

    # ------------------------------------------------------------------ the client's bytes

    def data_received(self, data: bytes) -> None:
        timer = self._idle_timer
        if timer is not None:
            timer.cancel()
            self._idle_timer = None
        if self._fast is not None and not self._busy:
            try:
                if self._relay_fast(data):
                    return
            except BaseException as exc:  # noqa: BLE001 - run() sorts it out
                self._end(exc)
                return
        self._received(data)

    def _write(self, data: bytes) -> None:
        transport = self.transport
        if data and not transport.is_closing():
            transport.write(data)

    # ------------------------------------------------------------------ a batch's bookkeeping

    def _batch_began(self, session: Any, batch: list[bytes]) -> None:
        """What a batch's start records: pg_stat_activity's times and text (``batch``: its
        frames, or reads holding them whole), the duration log's start, a hang-up."""
        self.in_batch = True
        self.batches += 1
        now = _monotonic()
        self.began = now
        if self._state is not None:  # a relayed session's statement durations start here
            self._state.received(now)
        if session.tx is _IDLE:
            self.xact_began = now
        first = batch[0]
        if len(batch) > 1 or first[0] != SYNC or len(first) > 5:  # not a lone Sync
            self.last_batch = batch
        if self._log_durations:
            self._timing = (now, batch)
        if self.eof:  # it hung up before this batch began (behind its start-up, say)
            self.loop.call_later(HANGUP_GRACE_S, self._hung_up, self.batches)

    def _batch_ended(self, out: bytes | None, idle: bool) -> None:
        """The batch is over: ``out`` is its output still to write (None: written already)."""
        self.in_batch = False
        self.ended = _monotonic()
        session = self.session
        if self.cancelled:  # shutdown's grace period ran out: the output is dropped
            session.out.take()
            raise self.server.admin_shutdown()
        if out:
            self._write(out)
        self._idle = idle
        timing = self._timing
        if timing is not None:
            self._timing = None
            self._log_duration(session, timing[0], timing[1])

    # ------------------------------------------------------------------ the relay's fast path

    def _relay_fast(self, data: bytes) -> bool:
        """A client read that is one whole relayed batch (module rules): True when this
        took it; False (nothing changed): the usual path takes it."""
        if (not self._serving or self._finished or self._read_paused or self._write_paused
                or self.eof or self.shut_read):
            return False
        frames = self.frames
        if frames.head:
            return False
        server = self.server
        if self._logs_statements or self._log_durations or server.terminating:
            return False
        relay = self._fast
        session = self.session
        up = self._up
        taken = self._state.fast_batch(session, relay, up, data, self._limit)
        if taken < 0:
            return False
        n = len(data)
        self._batch_began(session, [data])
        if taken < n:  # the messages from ``taken`` on need the steps
            self._guard(self._driver.run, frames_of([data[taken:]]))
            if not self._busy:
                self._guard(self._advance)
            return True
        self._busy = True
        self._fast_query = data[0] == QUERY
        io = self.upstream_io
        io.fresh = False
        sent = self._send(self._up_fd, data)
        if sent < 0:  # it may have said why before it went: the read finds it
            log.info("upstream send failed: %s", os.strerror(-sent))
            sent = n
        if sent < n:
            up.pending_writes.append(data[sent:])
            io.send_later(self._fast_sent)
        else:
            io.waiting = self._fast_replied_cb
        return True

    def _send(self, fd: int, data: bytes) -> int:
        """Write ``data`` to socket ``fd`` at once (non-blocking): how much the kernel
        took, 0 when its buffer is full, minus the errno after another error (the caller
        decides what it means)."""
        if _COMPILED:
            sent = send(fd, PyBytes_AS_STRING(data), len(data), MSG_NOSIGNAL)  # noqa: F821
            if sent >= 0:
                return sent
            err = errno  # noqa: F821
            if err == EAGAIN or err == EINTR:  # noqa: F821 - EWOULDBLOCK is EAGAIN on Linux
                return 0
            return -err
        try:
            return os.write(fd, data)
        except (BlockingIOError, InterruptedError):
            return 0
        except OSError as exc:
            return -(exc.errno or 1)

    def _to_client(self, data: bytes) -> None:
        """A reply's bytes to the client: straight to its socket while the transport holds
        nothing unwritten (what the kernel does not take goes to the transport, behind
        nothing, which then also sees any error), else through the transport. uvloop
        queues every write to the end of the loop's iteration; the fast path's one
        write per upstream read need not wait for that."""
        transport = self.transport
        fd = self._client_fd
        if fd >= 0 and not transport.get_write_buffer_size():
            sent = self._send(fd, data)
            if sent == len(data):
                return
            if sent > 0:
                data = data[sent:]
        transport.write(data)

    def _fast_sent(self) -> None:
        """The fast path's batch is all written upstream, or the client reads again:
        replies that came meanwhile are passed on now, else when they come."""
        io = self.upstream_io
        up = io.up
        if io.fresh or up.pos < len(up.buf) or up.lost is not None:
            self._fast_replied()
        else:
            io.waiting = self._fast_replied_cb

    def _fast_replied(self) -> None:
        """The upstream's replies to the fast path's batch: passed on as they arrive; the
        batch ends at ReadyForQuery (or CopyInResponse)."""
        io = self.upstream_io
        up = self._up
        try:
            start = up.pos
            buf = up.buf
            stop, _start, pos = self._state.scan(buf, start, 0, self._on_parameter)
            up.pos = pos
            if stop == COPY_IN:
                pos = pos + len(up.take_asynchronous())  # said with it: goes with it
                up.pos = pos
            if pos > start and not self.cancelled and not self.transport.is_closing():
                self._to_client(buf if start == 0 and pos == len(buf) else buf[start:pos])
            if stop < 0:
                if up.lost is not None:
                    raise up.lost
                if self._write_paused:  # the client does not read: neither does the relay
                    io.pause()
                    self._on_writable = self._fast_writable
                else:
                    io.waiting = self._fast_replied_cb
                return
            relay = self._fast
            session = self.session
            if stop == COPY_IN:
                relay.fast_copy()
            elif up.param_events:  # the session relay passes them on
                relay.fast_ready(self._fast_query)
            else:
                stats = self._stats
                if stats is not None:
                    relay.record(stats, self._fast_query)
                self._state.fast_ready(session)
            self._busy = False
            self._batch_ended(None, True)
            if up.pos < len(up.buf) or up.lost is not None:  # it said more after its last reply
                self._upstream_spoke()
            if self.frames.head or self.eof or self.shut_read or self._write_paused:
                self._advance()
            else:
                info = self._info
                if info.idle_session_timeout_ms or info.idle_in_transaction_timeout_ms:
                    self._arm_idle_timer(session)
        except BaseException as err:  # noqa: BLE001 - run() sorts it out
            up.state.waited()
            self._end(err)

    def _fast_writable(self) -> None:
        """The client reads again: so does the fast path's batch."""
        self.upstream_io.resume()
        self._fast_sent()
