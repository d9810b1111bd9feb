"""PgBouncer's way for statements that are not pgbarrier's: client messages relayed as bytes.

A session on an upstream PostgreSQL read as raw bytes (:mod:`pgbarrier.backends.pg_relay`)
gets a :class:`SessionRelay`; the server (:mod:`pgbarrier.server.connection`) gives it each client message as a whole
frame (type byte, length, payload). Rules it keeps:

* What is relayed is :func:`pgbarrier.sql.route.route`'s decision, read here and never
  made again: a simple Query whose route is ``relayable`` (no statement of it is
  pgbarrier's: no control statement, no mention of ``rw_catalog``, no SET/SHOW/RESET of
  pgbarrier's own settings), and a Parse whose route is ``relayable_parse`` (the same,
  COPY ... FROM STDIN excepted: through the extended protocol it takes the full path,
  which refuses it with 0A000). A Bind, Describe, Execute or Close follows its name.
  Only the type byte, the names and, for Query/Parse, the SQL text are read.
* Everything else takes the full path (decoded, :meth:`Session.handle`). Names are
  routed: a statement or portal lives upstream or in the session, never both; a Parse or
  Bind that replaces a name moves it. A name the session does not hold is the upstream's,
  whether a relayed Parse or Bind made it or the upstream did (SQL ``PREPARE``, a
  ``DECLARE ... CURSOR``'s portal, which psycopg's named cursors describe and fetch), so
  an unknown name gets PostgreSQL's own 26000/34000.
* Relayed extended-protocol messages are held until Sync or Flush and sent in one write;
  Sync's replies are passed back up to ReadyForQuery. Before a full-path message the
  relayed ones are flushed upstream and their replies passed back first, so the client
  sees replies in the order of its messages, and the upstream stream is in step when the
  full path uses it. Inside a batch the full path ends with Flush (see pg_relay), so the
  Executes up to the client's Sync are one upstream transaction whichever path ran them.
* Errors skip to Sync on both sides: an upstream ErrorResponse makes the session skip its
  own messages, and a full-path error inside an open upstream batch or transaction block
  makes the upstream fail too (an Execute of a portal that does not exist, whose error is
  not passed on), so the batch is rolled back or the block is aborted as in PostgreSQL.
* The session's transaction status is the upstream's last ReadyForQuery (between Syncs,
  the relayed Executes' BEGIN/COMMIT/errors move it as they complete); ParameterStatus
  messages passed on update what the client was told.
* COPY in a relayed Query: CopyInResponse is passed on, then the client's CopyData,
  CopyDone or CopyFail are relayed until the upstream answers; COPY TO STDOUT is relayed
  like any reply.
* Client encoding: relayed bytes are never converted (the upstream converts them from
  the client_encoding in force, as PostgreSQL does). To route it, a Query's or Parse's
  text is read as UTF-8 under UTF8 or SQL_ASCII (text that is not UTF-8 takes the full
  path: 22021, as PostgreSQL on a UTF8 database), and under any other client_encoding
  (LATIN1...) as its bytes read as latin-1: statements are told apart by ASCII words,
  which every client encoding PostgreSQL takes spells in ASCII. pgbarrier's own
  statements (the full path) speak UTF-8 to the upstream, so under such an encoding one
  whose text is not ASCII is refused with 0A000 rather than mistranslated.
* A Query arriving in an unfinished batch first ends that batch (its replies are passed
  on, its ReadyForQuery is not), as pgbarrier's full path always did.
"""

from __future__ import annotations

import functools
from collections.abc import Generator
from time import monotonic
from typing import TYPE_CHECKING, Any

from pgbarrier.backends.pg_relay import COPY_IN, Upstream, frame
from pgbarrier.errors import FeatureNotSupported
from pgbarrier.metrics.statements import RELAYED
from pgbarrier.relay.effects import RunLocal
from pgbarrier.relay.state import VERDICT_TEXT, VERDICTS
from pgbarrier.session.transaction import TxState
from pgbarrier.sql.route import route
from pgbarrier.pgproto import messages as m
from pgbarrier.pgproto.codes import (
    BIND,
    COPY_DATA,
    ERROR_RESPONSE,
    EXECUTE,
    EXTENDED,
    FLUSH,
    FUNCTION_CALL,
    PARSE,
    QUERY,
    READY_FOR_QUERY,
    SYNC,
    TX_IN_BLOCK,
)

if TYPE_CHECKING:
    from pgbarrier.session.session import Session


_FLUSH = frame(FLUSH)
_SYNC = frame(SYNC)
#: fails the upstream's batch or block after a full-path error (its error is swallowed)
_POISON = frame(EXECUTE, b"pgbarrier_abort\0\0\0\0\0")
#: CopyData held before it is written upstream
_COPY_CHUNK = 256 * 1024
#: client encodings whose text is read as UTF-8 (SQL_ASCII: PostgreSQL converts nothing)
_READ_AS_UTF8 = frozenset({"UTF8", "SQL_ASCII"})


#: what a relay step is: a generator of requests to the event loop (NEED_BYTES, Spill,
#: RunLocal; see :mod:`pgbarrier.relay.effects`) that returns its answer
Steps = Generator[Any, Any, Any]


class SessionRelay:
    """Routes one session's client messages: relayed as bytes, or the session's full path.
    Slotted: the fast path reads its fields on every batch."""

    __slots__ = ("session", "up", "state", "relay_now", "_copy_bytes")

    def __init__(self, session: Session, upstream: Upstream) -> None:
        self.session = session
        self.up = upstream
        #: the relay's protocol state (the upstream's): what is queued, expected and
        #: tracked upstream, written by its transitions (:mod:`pgbarrier.relay.state`)
        self.state = state = upstream.state
        #: queue one Parse, Bind, Describe, Execute or Close that is relayed (True), or
        #: change nothing (False: :meth:`steps` takes it): ``RelayState.queue``
        self.relay_now = functools.partial(state.queue, session)
        self._copy_bytes = 0

    # ------------------------------------------------------------------ entry point

    def feed(self, code: int, frame: bytes) -> Steps:
        """Handle one client message (``frame``: type byte, length, payload): the steps,
        whose answer is True when the output should be written now."""
        if self.relay_now(code, frame):
            return False
        return (yield from self.steps(code, frame))

    def steps(self, code: int, frame: bytes) -> Steps:
        """:meth:`feed` for a message :meth:`relay_now` did not queue."""
        if self.state.copy_drain is not None:
            return (yield from self._copy(code, frame))
        if code == BIND:
            yield from self._bind(frame)
            return False
        if code == SYNC:
            return (yield from self._sync(frame))
        if code == PARSE:
            yield from self._parse(frame)
            return False
        if code == QUERY:
            return (yield from self._query(frame))
        if code == FUNCTION_CALL:
            return (yield from self._function_call(frame))
        if code == FLUSH:
            if self.state.expect:
                yield from self._drain()
            return True
        return (yield from self._local(code, frame))  # Execute, Describe, Close, others

    # ------------------------------------------------------------------ the fast path

    def query_relayed(self, text: bytes, sql: str | None = None) -> bool:
        """Whether a simple Query of ``text`` (its SQL bytes) is relayed: its route's
        ``relayable``, remembered per text (``sql``: the text as routed, when decoded);
        False for text that is not UTF-8 where it is read so (the full path's 22021)."""
        relayable = self.state.query_verdicts.get(text)
        if relayable is None:
            if sql is None:
                sql = self._routed_text(text)
                if sql is None:
                    return False
            relayable = route(sql).relayable
            self.state.remember_query(text, relayable)
        return relayable

    def fast_ready(self, query: bool) -> None:
        """The fast path's batch got its ReadyForQuery (``query``: it was a simple Query)."""
        state = self.state
        state.waited()
        self._after_ready(query)
        state.batch_closed()

    def fast_copy(self) -> None:
        """The fast path's batch got CopyInResponse: the client's COPY data comes next."""
        self.up.state.waited()
        self._enter_copy(0)
        self.up.state.batch_closed()

    # ------------------------------------------------------------------ extended protocol

    def _parse(self, frame: bytes) -> Steps:
        """A Parse :meth:`relay_now` did not queue: its text not decided yet (decided here,
        then relayed if it may be), a name the session's full path holds (42P05 there), or
        a statement that is pgbarrier's."""
        i = frame.find(b"\0", 5)
        j = frame.find(b"\0", i + 1) if i >= 0 else -1
        if j < 0:
            yield from self._local(PARSE, frame)  # malformed: the decoder says 08P01
            return
        text = frame[i + 1:j]
        verdict = self.state.verdicts.get(text)
        if verdict is None:
            sql = self._routed_text(text)
            if sql is None:
                yield from self._local(PARSE, frame)
                return
            verdict = (route(sql).relayable_parse, sql)
            if len(self.state.verdicts) >= VERDICTS:
                self.state.verdicts.clear()
            self.state.verdicts[text] = verdict
            relayed = self.relay_now(PARSE, frame)
            if len(text) > VERDICT_TEXT:
                del self.state.verdicts[text]  # decided each time, as the route of such a text
            if relayed:
                return
        name = frame[5:i]
        if not verdict[0]:
            if name and name in self.state.stmts:
                yield from self._local_error(
                    f'prepared statement "{name.decode("utf-8", "replace")}" already exists',
                    "42P05")
                return
            if not name:
                self.state.stmts.pop(b"", None)
        yield from self._local(PARSE, frame)

    def _bind(self, frame: bytes) -> Steps:
        """A Bind of a statement that does not live upstream: the full path's."""
        i = frame.find(b"\0", 5)
        j = frame.find(b"\0", i + 1) if i >= 0 else -1
        if j >= 0:
            self.state.portals.pop(frame[5:i], None)
        yield from self._local(BIND, frame)

    def _sync(self, frame: bytes) -> Steps:
        up = self.up
        s = self.session
        if self.state.wbuf or self.state.expect or up.state.open_upstream():
            self.state.queued(frame)
            self._send()
            up.state.exchange()
            if (yield from up.pump(s.out.chunks)) == COPY_IN:
                self._enter_copy(0)
                return True
            self._after_ready()
        else:
            yield RunLocal(s.handle, m.Sync())
        up.state.batch_closed()
        return True

    def _send(self) -> None:
        self.up.send(self.state.take_queued())

    def _drain(self) -> Steps:
        """Flush the relayed messages upstream and pass their replies on (before a
        full-path message, or at the client's Flush)."""
        up = self.up
        self.state.queued(_FLUSH)
        self._send()
        up.state.exchange()
        if (yield from up.pump(self.session.out.chunks, len(self.state.expect))) == COPY_IN:
            self._enter_copy(len(self.state.expect))
            return
        self._settle()

    def _settle(self) -> None:
        """Account for the replies of ``expect`` read by the last pump (no ReadyForQuery)."""
        s = self.session
        failed_at = self.up.state.failed_at
        stats = s.stats
        if stats is not None:
            self._count_batch(stats)
        for i, (code, name, sql) in enumerate(self.state.take_expected()):
            if failed_at is not None and i >= failed_at:
                self.state.forget(code, name)
            elif code == EXECUTE and sql is not None:
                s.relay_completed(sql)
        if failed_at is not None:
            self.up.state.failed()
            s.relay_failed()
        self.take_params()

    def _after_ready(self, query: bool = False) -> None:
        """The upstream's ReadyForQuery ended the exchange: metrics (``query``: a simple
        Query's, one observation), the expected replies settled, the session told its
        transaction status, the ParameterStatus messages passed on."""
        s = self.session
        stats = s.stats
        if stats is not None:
            self.record(stats, query)
        self.state.finished(s)
        if self.up.param_events:
            self.take_params()

    def record(self, stats: Any, query: bool) -> None:
        """Metrics of the exchange that just ended, before its replies are settled: a
        simple Query's (``query``) is one observation, a batch's one per statement."""
        state = self.state
        if query:
            self._count(stats, state.commands)
        elif state.expect:
            self._count_batch(stats)

    def take_params(self) -> None:
        """ParameterStatus messages passed on update what the client was told."""
        events = self.up.param_events
        if events:
            self.session.relay_reported(events)
            events.clear()

    # ------------------------------------------------------------------ simple query

    def _query(self, frame: bytes) -> Steps:
        if frame[-1] != 0:
            return (yield from self._local(QUERY, frame))
        sql = self._routed_text(frame[5:-1])
        if sql is None:
            return (yield from self._local(QUERY, frame))
        up = self.up
        if self.state.wbuf or self.state.expect or up.state.open_upstream():
            yield from self._end_batch()
        up.state.batch_closed()
        if not self.query_relayed(frame[5:-1], sql):
            return (yield from self._local(QUERY, frame))
        self.session.relay_sent()
        up.send(frame)
        up.state.exchange()
        if (yield from up.pump(self.session.out.chunks)) == COPY_IN:
            self._enter_copy(0)
            return True
        self._after_ready(query=True)
        return True

    def _count(self, stats: Any, ok: int) -> None:
        """Metrics: ``ok`` relayed statements succeeded, then one failed if the upstream
        said so. A relayed Query or batch is one duration observation, from when the
        connection read it (``RelayState.received_at``) to its last reply."""
        state = self.up.state
        seconds = monotonic() - state.received_at
        if state.failed_at is not None:
            if ok:
                stats.ok_many(RELAYED, ok, seconds)
            stats.failed(RELAYED, state.failed_sqlstate, seconds)
        else:
            stats.ok_many(RELAYED, max(ok, 1), seconds)

    def _count_batch(self, stats: Any) -> None:
        """Metrics of the relayed extended messages in ``expect``: each statement that
        completed (the upstream's CommandComplete, counted by the pump) is one, and a
        failure (of any message of the batch) one failed statement. The success path is
        one frame and one ``ok_many``: it runs once per relayed batch."""
        state = self.up.state
        ok = state.take_commands()  # a later pump of the same batch counts only its own
        if state.failed_at is None:
            if ok:
                stats.ok_many(RELAYED, ok, monotonic() - state.received_at)
            return
        self._count(stats, ok)

    def _function_call(self, frame: bytes) -> Steps:
        """FunctionCall (libpq's fast path, large objects) is the upstream's, relayed like
        a Query: its answer ends with ReadyForQuery. The upstream checks the client's own
        role's privileges on the function."""
        yield from self._end_batch()
        up = self.up
        self.session.relay_sent()
        up.send(frame)
        up.state.exchange()
        yield from up.pump(self.session.out.chunks)
        self._after_ready()
        return True

    def _end_batch(self) -> Steps:
        """A Query in an unfinished batch: end the batch upstream first (Sync), passing its
        replies on but not its ReadyForQuery."""
        up = self.up
        if self.state.wbuf or self.state.expect or up.state.open_upstream():
            self.state.queued(_SYNC)
            self._send()
            out = self.session.out.chunks
            up.state.exchange()
            yield from up.pump(out)
            last = out[-1]
            out[-1] = last[:-6]  # ReadyForQuery is the last 6 bytes
            self._after_ready()
        up.state.batch_closed()

    # ------------------------------------------------------------------ COPY

    def _enter_copy(self, drain: int) -> None:
        self.state.copy_began(drain)
        self._copy_bytes = 0

    def _copy(self, code: int, frame: bytes) -> Steps:
        """Client messages while the upstream waits for COPY data: relayed as they are."""
        self.state.queued(frame)
        if code == COPY_DATA:
            self._copy_bytes += len(frame)
            if self._copy_bytes > _COPY_CHUNK:
                self._send()
                self._copy_bytes = 0
            return False
        if code in (SYNC, FLUSH):
            return False  # PostgreSQL ignores them during COPY FROM STDIN
        # CopyDone, CopyFail, or anything else (which makes the upstream abort the COPY)
        self._send()
        drain = self.state.copy_ended()
        up = self.up
        if (yield from up.pump(self.session.out.chunks, drain)) == COPY_IN:
            self._enter_copy(drain)
            return True
        if drain:
            self._settle()
        else:
            self._after_ready()
        return True

    # ------------------------------------------------------------------ the full path

    def _local(self, code: int, frame: bytes) -> Steps:
        """A message for the session's full path, after the relayed ones before it: run on
        a worker thread (RunLocal), the upstream socket in blocking mode meanwhile."""
        s = self.session
        if self.state.expect:
            yield from self._drain()
        msg = m.decode_message(frame[:1], frame[5:])
        if (code == QUERY or code == PARSE) and not self._reads_utf8() \
                and not _raw_text(code, frame).isascii():
            msg = m.Undecodable(frame[:1], FeatureNotSupported(
                "pgbarrier runs its own statements in UTF8: this one has text that is not "
                f'ASCII under client_encoding "{self.up.params.get("client_encoding")}"',
                hint="SET client_encoding = 'UTF8' to run it."))
        if code in EXTENDED:
            self.up.state.batch_opened()
        skipping = s.skip_until_sync
        if skipping and code in EXTENDED:
            pass  # skipped until Sync: nothing for a worker to do
        else:
            yield RunLocal(s.handle, msg)
        if code == QUERY:
            if s.tx is TxState.FAILED and self.up.state.status == TX_IN_BLOCK:
                yield from self._poison()
        elif not skipping and s.skip_until_sync:
            yield from self._poison()
        return code == QUERY or code == SYNC or code == FLUSH or code == FUNCTION_CALL

    def _reads_utf8(self) -> bool:
        return self.up.params.get("client_encoding", "UTF8").upper() in _READ_AS_UTF8

    def _routed_text(self, raw: bytes) -> str | None:
        """A Query's or Parse's text as it is routed (module rules); None: not UTF-8."""
        if not self._reads_utf8():
            return raw.decode("latin-1")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def _local_error(self, text: str, sqlstate: str) -> Steps:
        from pgbarrier.errors import PgError

        s = self.session
        if self.state.expect:
            yield from self._drain()
        self.up.state.batch_opened()
        if s.skip_until_sync:
            return
        s.relay_refused(PgError(text, sqlstate=sqlstate))
        yield from self._poison()

    def _poison(self) -> Steps:
        """Fail the upstream's open batch or block after a full-path error, silently."""
        up = self.up
        state = up.state
        if state.skipping() or not (state.open_upstream() or state.status == TX_IN_BLOCK):
            return
        if state.in_batch:
            up.send(_POISON + _FLUSH)
            state.sent()
            while (yield from up.read_steps())[0] != ERROR_RESPONSE:
                pass
            state.failed()
        else:
            up.send(_POISON + _SYNC)
            while True:
                t, body = yield from up.read_steps()
                if t == READY_FOR_QUERY:
                    state.ready(body[0])
                    break


def _raw_text(code: int, frame: bytes) -> bytes:
    """The SQL text bytes of a Query or Parse frame."""
    if code == QUERY:
        return frame[5:-1]
    i = frame.find(b"\0", 5)
    j = frame.find(b"\0", i + 1) if i >= 0 else -1
    return frame[i + 1:j] if j >= 0 else b""
