"""The relay's protocol state toward the upstream, written only by its transitions.

Issue 30 gathers every field of the relay's protocol state into one object whose
methods are its only writers. :class:`RelayState` holds where the client's
extended-protocol batch stands and what the upstream makes of it, and the relay's own
bookkeeping of what goes up: the client bytes queued for the upstream, the replies
expected, the statements and portals that live upstream, the Parse texts already routed
and whether the client is sending COPY data. The upstream's socket
(:class:`pgbarrier.backends.pg_relay.Upstream`) holds one as ``state``; the pump, the
connection's fast path (:mod:`pgbarrier.server.core`) and the session relay
(:mod:`pgbarrier.session.relay`) read its fields and change them through these methods.

Rules this module keeps:

* ``phase``: the upstream's batch, one of :class:`Phase`: ``IDLE`` (nothing sent since
  its last ReadyForQuery is left open: no batch, or one that ends with its own Sync,
  ``sent(synced=True)``), ``OPEN`` (messages went up without a Sync after them, so a
  batch is open upstream: :meth:`sent`, :meth:`batch_sent`) and ``SKIPPING`` (an error
  in that batch: the upstream discards everything up to the next Sync, as PostgreSQL
  does: :meth:`failed`). A ReadyForQuery (:meth:`ready`) makes it ``IDLE``. These are
  PostgreSQL's own states of a backend in the extended protocol, and exclusive; what is
  not the upstream's phase has its own field, as it varies apart from it: the client's
  batch (``in_batch``: a client whose batch is open may have sent nothing up yet), the
  session's wait (``busy``) and COPY (``copy_drain``: the client sends COPY data
  whatever the upstream has said meanwhile).
* ``in_batch``: the client sent extended-protocol messages since its last Sync, so the
  full path ends its own messages with Flush, not Sync, and they stay in the client's
  upstream transaction (:meth:`batch_opened`, :meth:`batch_closed`).
* ``status``: the transaction status of the upstream's last ReadyForQuery (PostgreSQL's
  ``I``, ``T`` or ``E``).
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
* Queued messages (the rules are :mod:`pgbarrier.session.relay`'s module docstring;
  this holds the part every relayed batch runs). A Parse whose text was routed as
  relayed, and a Bind, Describe, Execute or Close of a statement or portal that lives
  upstream, are queued for the upstream (``wbuf``, and ``expect`` for their replies)
  until the client's Sync or Flush: one message at a time (:meth:`queue`), or a whole
  client read at once (:meth:`fast_batch`). Each either queues and returns True (or the
  bytes taken), or changes nothing: the relay's steps then take the message (a name the
  session's full path holds, a text not routed yet, a malformed message, which the
  decoder answers 08P01). After an error everything up to Sync is skipped (nothing
  queued), as upstream does. ``stmts``/``portals`` are the names that live upstream
  (name -> SQL), ``verdicts`` the routed Parse texts (bytes -> (relayed, text)), and
  ``copy_drain`` the pump's target while the client sends COPY data (None: not in COPY).
* :meth:`settled` is what a ReadyForQuery (or a drain's last reply) means for the
  expected replies: those from the first failure on created nothing upstream.
* Compiled: Cython builds this source into ``_state_c`` (its C types, a ``cdef class``
  with typed fields, are in ``_state_c.pxd`` beside it) when pgbarrier is installed, and
  :func:`pgbarrier.accel.load` picks the extension or this source: the users take the
  class from :data:`pgbarrier.relay.RelayState`. The same code either way (the tests run
  both); nothing here may depend on being compiled.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from pgbarrier import accel
from pgbarrier.pgproto import codes
from pgbarrier.sql.route import CACHED_TEXT, MAY_BE_OURS_ASCII

try:
    import cython

    #: True in the compiled extension: the branches under it use C (names of the .pxd)
    _COMPILED = cython.compiled
except ImportError:  # run as Python without Cython installed
    _COMPILED = False

_scan = accel.load("pgbarrier.pgproto.scan")

#: PostgreSQL's ReadyForQuery status of a session outside a transaction block (``I``)
_IDLE = 73
#: what :meth:`RelayState.scan` stops at (:mod:`pgbarrier.pgproto.scan`'s codes)
READY, DRAINED, COPY_IN, PARAMETER, MORE = (_scan.READY, _scan.DRAINED, _scan.COPY_IN,
                                            _scan.PARAMETER, _scan.MORE)
_ERROR = _scan.ERROR

#: the message types compared here, from :mod:`pgbarrier.pgproto.codes`, as module names
#: the compiled build declares ``cdef int`` (each comparison is one C comparison)
_PARSE, _BIND, _DESCRIBE, _EXECUTE, _CLOSE, _SYNC, _QUERY = (
    codes.PARSE, codes.BIND, codes.DESCRIBE, codes.EXECUTE, codes.CLOSE, codes.SYNC,
    codes.QUERY)
#: what a Describe or Close names
_STATEMENT, _PORTAL = codes.STATEMENT, codes.PORTAL


class Phase(IntEnum):
    """The upstream's batch (:attr:`RelayState.phase`; module rules)."""

    #: nothing sent since its last ReadyForQuery is left open
    IDLE = 0
    #: messages went up without a Sync after them: a batch is open upstream
    OPEN = 1
    #: an error in its open batch: it discards everything up to the next Sync
    SKIPPING = 2


#: :class:`Phase` as the module names the compiled build declares ``cdef int``
_UP_IDLE, _UP_OPEN, _UP_SKIPPING = int(Phase.IDLE), int(Phase.OPEN), int(Phase.SKIPPING)


def _queued_types() -> bytes:
    table = bytearray(256)
    for code in codes.EXTENDED:
        table[code] = 1
    return bytes(table)


#: 1 at the type bytes of messages :meth:`RelayState.queue` may take (a look-up table)
_QUEUED = _queued_types()


def _length_at(data: bytes, pos: int) -> int:
    """The length word of the message at ``pos``, unsigned (as pgproto.scan.length_at)."""
    top = data[pos + 1]
    return (top << 24) | (data[pos + 2] << 16) | (data[pos + 3] << 8) | data[pos + 4]


def _nul(data: bytes, start: int, end: int) -> int:
    """The offset of the first NUL byte of ``data[start:end]``, or -1."""
    if _COMPILED:
        if end <= start:
            return -1
        base = PyBytes_AS_STRING(data)  # noqa: F821
        hit = memchr(base + start, 0, end - start)  # noqa: F821
        if hit == cython.NULL:
            return -1
        return cython.cast(cython.p_char, hit) - base
    return data.find(b"\0", start, end)


def _sub(data: bytes, start: int, end: int) -> bytes:
    """``data[start:end]`` (compiled: without a slice object)."""
    if _COMPILED:
        return PyBytes_FromStringAndSize(PyBytes_AS_STRING(data) + start,  # noqa: F821
                                         end - start)
    return data[start:end]


#: :data:`pgbarrier.sql.route.MAY_BE_OURS_ASCII`: the words an ASCII text is relayed without
_WORDS = MAY_BE_OURS_ASCII
#: Parse and Query verdicts a session remembers (``verdicts``, forgotten all at once
#: past this), and the longest text remembered (the route cache's bound: memory stays
#: bounded)
VERDICTS = 256
VERDICT_TEXT = CACHED_TEXT


def _by_first_letter() -> tuple[tuple[bytes, ...], ...]:
    table: list[list[bytes]] = [[] for _ in range(256)]
    for word in MAY_BE_OURS_ASCII:
        table[word[0]].append(word)
        if 65 <= word[0] <= 90:
            table[word[0] + 32].append(word)  # its lower case
    return tuple(tuple(words) for words in table)


#: route's words by the byte they begin with, in upper or lower case (a look-up table)
_BY_FIRST = _by_first_letter()


def _plain(data: bytes, start: int, end: int) -> bool:
    """Whether the statement text ``data[start:end]`` is relayed as :func:`pgbarrier.sql.
    route.route` decides, read from its bytes: True when they are ASCII and hold none of
    route's words (``route.MAY_BE_OURS_ASCII``) in any case; False: route decides (the text
    is decoded first), which it also does for every text this says True of, the same way.
    Compiled, one pass over the bytes in C (this runs for every simple Query whose text
    is new, and a literal in it makes most texts new)."""
    if _COMPILED:
        p = cython.cast(cython.p_uchar, PyBytes_AS_STRING(data))  # noqa: F821
        i = start
        while i < end:
            if p[i] >= 128:
                return False
            i += 1
        i = start
        while i < end:
            words = _BY_FIRST[p[i]]
            if words:
                for word in words:
                    w = cython.cast(cython.p_uchar, PyBytes_AS_STRING(word))  # noqa: F821
                    k = len(word)
                    if end - i >= k:
                        j = 0
                        while j < k:
                            c = p[i + j]
                            if 97 <= c <= 122:
                                c -= 32
                            if c != w[j]:
                                break
                            j += 1
                        if j == k:
                            return False
            i += 1
        return True
    text = _sub(data, start, end)
    if not text.isascii():
        return False
    upper = text.upper()
    for word in _WORDS:
        if upper.find(word) >= 0:  # not ``in``: bytes' tries the word as an int first
            return False
    return True

class RelayState:
    """Where the client's batch and the upstream's protocol stand (module rules)."""

    def __init__(self) -> None:
        self.in_batch = False
        #: the upstream's batch, a :class:`Phase` (as its int)
        self.phase = _UP_IDLE
        self.status = _IDLE
        self.done = 0
        self.commands = 0
        self.failed_at: int | None = None
        self.failed_sqlstate = ""
        self.busy = False
        self.generation = 0
        #: relayed client bytes not sent yet
        self.wbuf: list[bytes] = []
        #: relayed extended messages whose reply has not been read: (type, name, SQL)
        self.expect: list[tuple[int, bytes, str | None]] = []
        #: statements and portals that live upstream: name -> SQL text
        self.stmts: dict[bytes, str] = {}
        self.portals: dict[bytes, str] = {}
        #: Parse's SQL bytes -> (its route's relayable_parse, text): clients parse the same
        #: texts again and again, and this spares the decode and the route cache lookup
        self.verdicts: dict[bytes, tuple[bool, str]] = {}
        #: a simple Query's text bytes -> whether it is relayed (its route's ``relayable``)
        self.query_verdicts: dict[bytes, bool] = {}
        #: the pump's target while the client sends COPY data (None: not in COPY)
        self.copy_drain: int | None = None
        #: ``time.monotonic()`` when the connection read the client's batch being relayed:
        #: where a relayed statement's duration starts (metrics)
        self.received_at = 0.0

    def received(self, now: float) -> None:
        """The connection read a client batch at ``now`` (``time.monotonic()``)."""
        self.received_at = now

    def batch_opened(self) -> None:
        """A client extended-protocol message was taken: the batch lasts until its Sync."""
        self.in_batch = True

    def batch_closed(self) -> None:
        """The client's Sync (or a simple Query) ended its batch."""
        self.in_batch = False

    def sent(self, synced: bool = False) -> None:
        """Messages went upstream: a batch is open there (``OPEN``), unless ``synced``:
        they end with a Sync of their own, which leaves nothing open (``IDLE``). A
        batch that is ``SKIPPING`` stays so until its ReadyForQuery."""
        if self.phase != _UP_SKIPPING:
            self.phase = _UP_IDLE if synced else _UP_OPEN

    def batch_sent(self) -> None:
        """A whole client batch, its Sync included, went upstream at once (the fast path,
        from ``IDLE``): open until its ReadyForQuery."""
        self.in_batch = True
        self.phase = _UP_OPEN

    def failed(self) -> None:
        """The upstream answered an error in its open batch: it skips to the next Sync."""
        self.phase = _UP_SKIPPING

    def ready(self, status: int) -> None:
        """The upstream's ReadyForQuery with transaction ``status``: nothing is open or
        skipped upstream any more."""
        self.status = status
        self.phase = _UP_IDLE

    def open_upstream(self) -> bool:
        """Whether a batch is open upstream (``OPEN`` or ``SKIPPING``): a Sync must end it."""
        return self.phase != _UP_IDLE

    def skipping(self) -> bool:
        """Whether the upstream discards everything up to the next Sync."""
        return self.phase == _UP_SKIPPING

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

    # ------------------------------------------------------------------ queued messages

    def queue(self, session: Any, code: int, frame: bytes) -> bool:
        """Queue one client message (``frame``: type byte, length, body) if it is relayed
        (module rules; ``session`` holds the full path's own names and its skipping)."""
        if self.copy_drain is not None or not _QUEUED[code]:
            return False
        skipping = session.skip_until_sync
        if not _one(code, frame, 0, len(frame), self.stmts, self.portals, self.verdicts,
                    session.statements, session.portals, session, skipping, self.expect):
            return False
        self.in_batch = True
        if not skipping:
            self.wbuf.append(frame)
        return True

    def fast_batch(self, session: Any, relay: Any, up: Any, data: bytes, limit: int) -> int:
        """A client read that is whole messages, a relayed simple Query alone or relayed
        extended messages ending in one Sync, taken at once (``relay``: the session's
        relay, which routes a Query text not seen before; ``up``: the upstream, which
        must hold nothing unread).

        Returns how many bytes of ``data`` it queued: -1 when it declined, having changed
        nothing (a partial message, a length below 4 or above ``limit``, other shapes, or
        the relay in the middle of something); ``len(data)`` when the whole read is queued
        and sent: the caller writes ``data`` upstream as it is and passes the replies on
        until ReadyForQuery; less when the message at that offset must take the steps,
        those before it queued as :meth:`queue` queues them. The state after it is what
        feeding the messages one by one would leave up to that point."""
        wbuf = self.wbuf
        expect = self.expect
        buf = up.buf
        if (self.copy_drain is not None or wbuf or expect or self.phase != _UP_IDLE
                or session.skip_until_sync or up.lost is not None or up.pos < len(buf)):
            return -1
        n = len(data)
        queued = _QUEUED
        # framing, before anything changes: whole messages of the accepted shapes only
        last = 0
        while True:
            if n - last < 5:
                return -1
            length = _length_at(data, last)
            if length < 4 or length > limit:
                return -1
            end = last + 1 + length
            if end == n:
                break
            if end > n or not queued[data[last]]:
                return -1
            last = end
        code = data[last]
        if code == _QUERY:
            if last or data[n - 1] != 0:
                return -1
            text = _sub(data, 5, n - 1)
            relayable = self.query_verdicts.get(text)
            if relayable is None:
                if _plain(data, 5, n - 1):
                    self.remember_query(text, True)
                elif not relay.query_relayed(text):
                    return -1
            elif not relayable:
                return -1
            # the session is not skipping (checked above): nothing of it to change
            self.in_batch = False
        elif code != _SYNC or not last:
            return -1
        else:
            statements = session.statements
            held = session.portals
            pos = 0
            while pos < last:
                end = pos + 1 + _length_at(data, pos)
                if not _one(data[pos], data, pos, end, self.stmts, self.portals,
                            self.verdicts, statements, held, session, False, expect):
                    if pos:  # the messages before it are queued: for the steps' Sync
                        self.in_batch = True
                        wbuf.append(_sub(data, 0, pos))
                    return pos
                pos = end
            # the caller writes ``data`` itself: those messages and the Sync, as they came
            self.batch_sent()
        self.exchange()
        self.waiting()
        return n

    def queued(self, frame: bytes) -> None:
        """Client bytes (a message, or one of the relay's own: Sync, Flush) go upstream
        with the next write."""
        self.wbuf.append(frame)

    def take_queued(self) -> bytes:
        """The bytes queued for the upstream, taken for one write: they are sent, and what
        they leave open is open until the upstream's ReadyForQuery (:meth:`sent`)."""
        data = b"".join(self.wbuf)
        self.wbuf.clear()
        self.sent()
        return data

    def take_expected(self) -> list[tuple[int, bytes, str | None]]:
        """The expected replies, all read by a drain (no ReadyForQuery): the caller
        accounts for each; none is expected any more."""
        expected = self.expect
        self.expect = []
        return expected

    def remember_query(self, text: bytes, relayable: bool) -> None:
        """Whether a simple Query of ``text`` is relayed, as decided once (a text longer
        than VERDICT_TEXT is decided each time; past VERDICTS all are forgotten at once)."""
        if len(text) <= VERDICT_TEXT:
            verdicts = self.query_verdicts
            if len(verdicts) >= VERDICTS:
                verdicts.clear()
            verdicts[text] = relayable

    def forget(self, code: int, name: bytes) -> None:
        """A relayed Parse/Bind that failed or was skipped created nothing upstream."""
        if code == _PARSE:
            self.stmts.pop(name, None)
        elif code == _BIND:
            self.portals.pop(name, None)

    def settled(self) -> None:
        """The replies ``expect`` waited for are all read, up to a ReadyForQuery: the
        messages from the first that failed on (skipped upstream) created nothing; none
        is expected any more."""
        expect = self.expect
        failed_at = self.failed_at
        if failed_at is not None:
            for i in range(failed_at, len(expect)):
                item = expect[i]
                self.forget(item[0], item[1])
        expect.clear()

    def finished(self, session: Any) -> None:
        """The upstream's ReadyForQuery ended the exchange (its skipping ended with it,
        :meth:`ready`): the expected replies are settled and ``session`` is told the
        transaction status (``Session.relay_ready``)."""
        self.settled()
        session.relay_ready(self.status)

    def fast_ready(self, session: Any) -> None:
        """The connection's fast path got its batch's ReadyForQuery, with nothing for the
        session's relay to record (no metrics, no ParameterStatus): the wait is over, the
        exchange :meth:`finished`, the client's batch closed (``SessionRelay.fast_ready``
        is the same with those)."""
        self.waited()
        self.finished(session)
        self.batch_closed()

    def copy_began(self, drain: int) -> None:
        """The upstream waits for the client's COPY data; ``drain``: the pump's target
        when it ends (the expected replies before it)."""
        self.copy_drain = drain

    def copy_ended(self) -> int:
        """The client's COPY data ended (CopyDone, CopyFail or another message): the
        pump's target it was started with."""
        drain = self.copy_drain
        self.copy_drain = None
        return drain or 0

    def scan(self, buf: bytes, pos: int, drain: int, on_parameter: Any = None
             ) -> tuple[int, int, int]:
        """Account for the whole replies in ``buf`` from ``pos`` on: returns ``(stop, start,
        end)``, ``buf[start:end]`` the message it stopped at and ``end`` where the next
        scan starts. Stops at ReadyForQuery (READY, the status recorded), after the
        ``drain``-th completed message or at an error while draining (DRAINED), at
        CopyInResponse/CopyBothResponse (COPY_IN), at a ParameterStatus (PARAMETER: the
        caller records it and scans on; with ``on_parameter``, that is called with the
        message's body instead and the scan goes on) and where the held whole messages
        end (MORE). An error is recorded (the first one's SQLSTATE kept) and, not
        draining, passed."""
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
            elif stop == PARAMETER and on_parameter is not None:
                on_parameter(buf[start + 5:pos - 1])
                continue
            return stop, start, pos


class UpstreamCore:
    """The fields of an upstream that every relayed batch reads: the compiled base class
    of :class:`pgbarrier.backends.pg_relay.Upstream` (which holds the rest and the
    methods), so that the serving core and the upstream's reader, compiled against this
    type (:data:`pgbarrier.accel.REQUIRES`), reach them without an attribute lookup."""

    __slots__ = ("buf", "pos", "lost", "param_events", "pending_writes", "blocking",
                 "state")

    def __init__(self, state: RelayState) -> None:
        #: bytes read from the socket; ``buf[pos:]`` are not handled yet
        self.buf = b""
        self.pos = 0
        #: the upstream's loss (an ``UpstreamLost``) once its socket ended or failed
        self.lost: Any = None
        #: ParameterStatus (name, value) relayed to the client since the session last looked
        self.param_events: list[tuple[str, str]] = []
        #: relayed bytes for the event loop to write upstream (non-blocking mode)
        self.pending_writes: list[bytes] = []
        #: True while a worker thread owns the socket (the full path): reads and writes
        #: block; False while the event loop owns it (the relay)
        self.blocking = True
        #: the client's batch and the upstream's protocol (batch open, messages sent since
        #: ReadyForQuery, skipping to Sync, transaction status, the replies counted, the
        #: session waiting): read here, written only by its transitions
        self.state = state


def _one(code: int, data: bytes, pos: int, end: int, stmts: dict[bytes, str],
         portals: dict[bytes, str], verdicts: dict[bytes, tuple[bool, str]],
         statements: dict[str, Any], held: dict[str, Any], session: Any, skipping: bool,
         expect: list[Any]) -> bool:
    """Account for one message, ``data[pos:end]``: ``stmts``/``portals`` are the names
    that live upstream (name -> SQL), ``verdicts`` the relay's routed Parse texts,
    ``statements``/``held`` the session's full-path statements and portals (by str name),
    read here and changed only through ``session``'s methods (``relay_replaced_*``),
    ``skipping`` whether the session skips to Sync. True: it is relayed (its reply
    expected unless skipping); the caller queues its bytes and marks the upstream's batch
    open."""
    body = pos + 5
    if code == _BIND:
        i = _nul(data, body, end)
        j = _nul(data, i + 1, end) if i >= 0 else -1
        if j < 0:
            return False  # malformed: the decoder says 08P01
        statement = _sub(data, i + 1, j)
        sql = stmts.get(statement)
        if sql is None:
            if statement.decode("utf-8", "replace") in statements:
                return False
            sql = ""  # the upstream's own (SQL PREPARE), or its 26000
        name = _sub(data, body, i)
        if held:
            portal = name.decode("utf-8", "replace")
            if portal in held:
                session.relay_replaced_portal(portal)
        if not skipping:
            portals[name] = sql
            expect.append((_BIND, name, sql))
        return True
    if code == _EXECUTE:
        i = _nul(data, body, end)
        if i < 0:
            return False  # malformed: the decoder says 08P01
        name = _sub(data, body, i)
        sql = portals.get(name)
        if sql is None:
            if held and name.decode("utf-8", "replace") in held:
                return False
            sql = ""  # the upstream's own (a cursor's portal), or its 34000
        if not skipping:
            expect.append((_EXECUTE, name, sql))
        return True
    if code == _PARSE:
        i = _nul(data, body, end)
        j = _nul(data, i + 1, end) if i >= 0 else -1
        if j < 0:
            return False
        text = _sub(data, i + 1, j)
        verdict = verdicts.get(text)
        if verdict is None:
            if not _plain(data, i + 1, j):
                return False  # not decided yet: the steps have the rules
            verdict = (True, text.decode("ascii"))
            if j - i - 1 <= VERDICT_TEXT:  # remembered, as the steps remember theirs
                if len(verdicts) >= VERDICTS:
                    verdicts.clear()
                verdicts[text] = verdict
        elif not verdict[0]:
            return False  # not relayed: the steps have the rules
        name = _sub(data, body, i)
        if name:
            if statements and name.decode("utf-8", "replace") in statements:
                return False  # 42P05 from the session
        elif statements and "" in statements:
            session.relay_replaced_statement("")
        if not skipping:
            stmts[name] = verdict[1]
            expect.append((_PARSE, name, verdict[1]))
        return True
    # Describe or Close: a statement (S) or a portal (P), its name up to the last byte
    if end - pos < 7 or data[end - 1] != 0:
        return False  # malformed: the decoder says 08P01
    kind = data[body]
    if kind == _STATEMENT:
        names = stmts
        local = statements
    elif kind == _PORTAL:
        names = portals
        local = held
    else:
        return False  # the decoder says 08P01
    if _nul(data, body + 1, end - 1) >= 0:
        return False
    name = _sub(data, body + 1, end - 1)
    if name not in names and local and name.decode("utf-8", "replace") in local:
        return False
    if not skipping:
        expect.append((code, name, None))
        if code == _CLOSE:
            names.pop(name, None)
    return True
