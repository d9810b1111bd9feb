"""The relay's protocol state toward the upstream, written only by its transitions.

Issue 30 gathers every field of the relay's protocol state into one object whose
methods are its only writers; this is the first part of it: where the client's
extended-protocol batch stands and what the upstream makes of it. The upstream's socket
(:class:`pgbarrier.backends.pg_relay.Upstream`) holds one as ``state``; the pump, the
full path, the session relay and its compiled queue (:mod:`pgbarrier.session.relay_queue`)
read its fields and change them through these methods only.

Rules this module keeps:

* ``in_batch``: the client sent extended-protocol messages since its last Sync, so the
  full path ends its own messages with Flush, not Sync, and they stay in the client's
  upstream transaction (:meth:`batch_opened`, :meth:`batch_closed`).
* ``dirty``: messages went upstream since its last ReadyForQuery (:meth:`sent`; a
  message sent with its own Sync leaves nothing open, ``sent(synced=True)``).
* ``skipping``: an error in the upstream's open batch makes it discard everything up to
  the next Sync (:meth:`failed`), as PostgreSQL does.
* ``status``: the transaction status of the upstream's last ReadyForQuery (PostgreSQL's
  ``I``, ``T`` or ``E``); a ReadyForQuery (:meth:`ready`) also ends ``dirty`` and
  ``skipping``.
* The replies of one exchange (the messages sent since :meth:`exchange`): ``done``
  extended-protocol messages completed, ``commands`` CommandCompletes (metrics; taken
  with :meth:`take_commands`), ``failed_at`` the index of the first that failed (None:
  none) and its ``failed_sqlstate`` (:meth:`counted`, :meth:`errored`).
* ``busy`` while the session waits for the upstream's replies (what a cancel
  interrupts), ``generation`` counting those waits: a cancel re-sent later is for the
  wait it was meant for only (:meth:`waiting`, :meth:`waited`).
* :meth:`scan` reads the upstream's replies (the byte loop is
  :func:`pgbarrier.pgproto.scan.replies`) and makes the transitions they call for
  (``counted``, ``ready``, ``errored``) itself: the one reading of reply types that the
  pump and the connection's fast path share.
* Compiled: Cython builds this source into ``_state_c`` (its C types, a ``cdef class``
  with typed fields, are in ``_state_c.pxd`` beside it) when pgbarrier is installed, and
  :func:`pgbarrier.accel.load` picks the extension or this source: the users take the
  class from :data:`pgbarrier.relay.RelayState`. The same code either way (the tests run
  both).
"""

from __future__ import annotations

from pgbarrier import accel

_scan = accel.load("pgbarrier.pgproto.scan")

#: PostgreSQL's ReadyForQuery status of a session outside a transaction block (``I``)
_IDLE = 73
#: what :meth:`RelayState.scan` stops at (:mod:`pgbarrier.pgproto.scan`'s codes)
READY, DRAINED, COPY_IN, PARAMETER, MORE = (_scan.READY, _scan.DRAINED, _scan.COPY_IN,
                                            _scan.PARAMETER, _scan.MORE)
_ERROR = _scan.ERROR


class RelayState:
    """Where the client's batch and the upstream's protocol stand (module rules)."""

    def __init__(self) -> None:
        self.in_batch = False
        self.dirty = False
        self.skipping = False
        self.status = _IDLE
        self.done = 0
        self.commands = 0
        self.failed_at: int | None = None
        self.failed_sqlstate = ""
        self.busy = False
        self.generation = 0

    def batch_opened(self) -> None:
        """A client extended-protocol message was taken: the batch lasts until its Sync."""
        self.in_batch = True

    def batch_closed(self) -> None:
        """The client's Sync (or a simple Query) ended its batch."""
        self.in_batch = False

    def sent(self, synced: bool = False) -> None:
        """Messages went upstream; ``synced``: they end with a Sync of their own, which
        leaves nothing open once its ReadyForQuery is read."""
        self.dirty = not synced

    def batch_sent(self) -> None:
        """A whole client batch, its Sync included, went upstream at once (the fast path)."""
        self.in_batch = True
        self.dirty = True

    def failed(self) -> None:
        """The upstream answered an error in its open batch: it skips to the next Sync."""
        self.skipping = True

    def ready(self, status: int) -> None:
        """The upstream's ReadyForQuery with transaction ``status``: nothing is open or
        skipped upstream any more."""
        self.status = status
        self.dirty = False
        self.skipping = False

    def exchange(self) -> None:
        """Messages went upstream whose replies are counted from here: none completed yet,
        none failed."""
        self.done = 0
        self.commands = 0
        self.failed_at = None

    def counted(self, done: int, commands: int) -> None:
        """The replies read so far: ``done`` messages of the exchange completed in all,
        ``commands`` more CommandCompletes."""
        self.done = done
        self.commands += commands

    def errored(self, sqlstate: str) -> None:
        """An ErrorResponse after ``done`` completed messages: the first one is kept."""
        if self.failed_at is None:
            self.failed_at = self.done
            self.failed_sqlstate = sqlstate

    def take_commands(self) -> int:
        """The CommandCompletes counted since the last take (a later pump of the same
        batch counts only its own)."""
        ok = self.commands
        self.commands = 0
        return ok

    def waiting(self) -> None:
        """The session waits for the upstream's replies (a cancel may interrupt it)."""
        self.busy = True
        self.generation += 1

    def waited(self) -> None:
        """The wait ended (replies read, or it failed)."""
        self.busy = False

    def scan(self, buf: bytes, pos: int, drain: int) -> tuple[int, int, int]:
        """Account for the whole replies in ``buf`` from ``pos`` on: returns ``(stop, start,
        end)``, ``buf[start:end]`` the message it stopped at and ``end`` where the next
        scan starts. Stops at ReadyForQuery (READY, the status recorded), after the
        ``drain``-th completed message or at an error while draining (DRAINED), at
        CopyInResponse/CopyBothResponse (COPY_IN), at a ParameterStatus (PARAMETER: the
        caller records it and scans on) and where the held whole messages end (MORE). An
        error is recorded (the first one's SQLSTATE kept) and, not draining, passed."""
        while True:
            stop, start, pos, done, commands = _scan.replies(buf, pos, drain, self.done)
            self.done = done
            self.commands += commands
            if stop == READY:
                self.ready(buf[pos - 1])
            elif stop == _ERROR:
                if self.failed_at is None:
                    self.failed_at = done
                    self.failed_sqlstate = _scan.sqlstate(buf, start + 5, pos)
                if not drain:
                    continue
                stop = DRAINED
            return stop, start, pos
