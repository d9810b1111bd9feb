"""The driver of a session's batches on a worker thread: every session not relayed as bytes.

A session answered by pgbarrier itself (the embedded DuckDB, an upstream read through
psycopg, the control plane) may block: on DuckDB, on the upstream's socket, on a client
that does not read its rows. So each batch of whole client frames the connection holds
goes, in order, to one piece of work on the server's worker pool, and its outcome comes
back to the event loop. Rules this module keeps:

* :class:`WorkerDriver` holds only what runs a batch: its host (the connection: all I/O
  is the host's, :class:`Host` lists what the driver uses of it), the session, and the
  lock that orders the session's work on workers.
* :meth:`WorkerDriver.run` marks the host busy and hands the batch to the pool; on the
  worker, each frame is decoded and given to the session (a statement waits at the
  server's gate first); the output is written when the batch ends, and within it after
  each message the client waits on (Query, Sync, Flush, FunctionCall) that has frames
  behind it, or once ``MAX_CHUNKS`` chunks have gathered (the session's ``spill``: the
  host's blocking write, which waits while the client does not read). A Terminate ends
  the connection after what came before it is written.
* A failure that is not the session's (a bug) is logged and answered with the session's
  ErrorResponse for it (XX000), and the connection goes on; a Fatal ends it.
* After the outcome is handed to the loop, the worker frames a suspended portal's next
  rows while the client reads (``Session.frame_ahead``), still holding the lock: the
  session's next batch, on another worker, waits for that framing.

Unit-tested with a fake host and session (``tests/unit/test_worker_driver.py``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol

from pgbarrier.errors import Fatal, as_pg_error
from pgbarrier.pgproto import messages as m
from pgbarrier.pgproto.codes import ANSWERED_WITH_READY, STARTS_STATEMENT, TERMINATE, WAITED_ON
from pgbarrier.server.relay_driver import MAX_CHUNKS

#: the connection's logger: a failure is logged under the name it always had
log = logging.getLogger("pgbarrier.server.connection")


class Host(Protocol):
    """What the driver uses of its connection."""

    server: Any  # gate(conn), pool.call(fn, *args)
    loop: Any  # call_soon_threadsafe
    in_batch: bool
    _busy: bool

    def _end(self, error: BaseException | None = None) -> None: ...
    def _guard(self, fn: Callable[..., None], *args: Any) -> None: ...
    def _advance(self) -> None: ...
    def _batch_ended(self, out: bytes | None, idle: bool) -> None: ...


class WorkerDriver:
    """Runs a session's batches on the server's worker pool (module rules)."""

    __slots__ = ("host", "session", "lock")

    def __init__(self, host: Host, session: Any) -> None:
        self.host = host
        self.session = session
        #: held by the worker running a batch, and by the framing ahead after it
        self.lock = threading.Lock()

    def run(self, batch: list[bytes]) -> None:
        """Hand ``batch`` (whole frames) to a worker; the loop hears of it when it ends."""
        host = self.host
        host._busy = True
        host.server.pool.call(self._run_reported, batch)

    def _run_reported(self, batch: list[bytes]) -> None:
        """On a worker thread: :meth:`run_frames`, its outcome handed to the loop."""
        ran: tuple[bytes, bool, bool] | None = None
        failed: BaseException | None = None
        host = self.host
        with self.lock:
            try:
                ran = self.run_frames(batch)
            except BaseException as exc:  # noqa: BLE001 - raised again on the loop
                failed = exc
            try:
                host.loop.call_soon_threadsafe(host._guard, self._ran, ran, failed)
            except RuntimeError:  # the loop is closed: the server is gone
                pass
            # its output is on its way: a suspended portal's next rows are framed while the
            # client reads (the next batch, on another worker, waits for the lock)
            self.session.frame_ahead()

    def _ran(self, ran: tuple[bytes, bool, bool] | None, failed: BaseException | None) -> None:
        """On the loop: the batch's outcome."""
        host = self.host
        host._busy = False
        if failed is not None:
            host.in_batch = False
            raise failed
        assert ran is not None
        out, idle, terminate = ran
        host._batch_ended(out, idle)
        if terminate:
            host._end()
            return
        host._advance()

    def run_frames(self, batch: list[bytes]) -> tuple[bytes, bool, bool]:
        """On a worker thread: hand each frame to the session; returns (output, idle,
        terminate)."""
        session = self.session
        out = session.out
        gate = self.host.server.gate
        spill = session.spill
        last = len(batch) - 1
        code = 0
        for i, frame in enumerate(batch):
            code = frame[0]
            if code == TERMINATE:
                return out.take(), False, True
            if code in STARTS_STATEMENT:
                gate(self.host)
            msg = m.decode_message(frame[:1], frame[5:], session.encoding.codec)
            try:
                session.handle(msg)
            except Fatal:
                raise
            except Exception as exc:  # a bug must not kill the connection silently
                log.exception("unexpected failure handling %s", type(msg).__name__)
                out.add(session.error_message(as_pg_error(exc)))
            if i < last and out.chunks and (code in WAITED_ON or len(out.chunks) > MAX_CHUNKS):
                assert spill is not None
                spill(out.take())
        return out.take(), code in ANSWERED_WITH_READY, False
