"""The upstream PostgreSQL spoken in raw protocol: the relay's byte pump and the full path.

libpq (psycopg) opens the upstream connection (authentication, start-up options), then
hands over its socket; from then on every byte on it is written and read here. libpq
keeps only two jobs: sending cancel requests with the upstream's own BackendKeyData, and
closing the connection. A TLS upstream cannot be read as raw bytes, so there
:class:`~pgbarrier.backends.postgres.PostgresSession` (libpq for everything) stays in use.

Rules this module keeps:

* One reader, one stream: the relay (client messages passed on as bytes, the upstream's
  replies passed back as bytes, :meth:`Upstream.pump`) and the full path (statements
  pgbarrier runs itself: :class:`RelaySession`'s ``execute``/``describe_*``) use the same
  socket and buffer. The full path runs only when every relayed message sent before it has
  its reply (the session relay drains first), so replies are never taken by the wrong side.
* The pump looks at each reply's type byte and length only; it decodes ParameterStatus
  (so the session knows what the client was told), ReadyForQuery's transaction status,
  and counts the replies that complete an extended-protocol message (ParseComplete,
  BindComplete, CloseComplete, NoData, RowDescription, CommandComplete,
  EmptyQueryResponse, PortalSuspended) or fail one (ErrorResponse). Rows are never
  decoded. It stops at ReadyForQuery, when a given number of messages is complete (a
  Flush), at the first error while draining, or at CopyInResponse (the client sends the
  data next).
* Inside an extended-protocol batch (``in_batch``: messages since the last Sync) the full
  path ends its messages with Flush, not Sync, so the Executes up to the client's Sync stay
  one upstream transaction, as in PostgreSQL, and an error leaves the upstream skipping
  until that Sync exactly as the session does; outside a batch it ends with Sync. It uses
  its own statement and portal names (closed first, so a leftover never collides), never
  the client's unnamed ones.
* The full path returns rows as the upstream's bytes (``Result.raw_format`` 0, or 1 when
  every column was asked in binary) and refuses COPY with the client (0A000) without
  sending it (messages queued behind its Execute would make PostgreSQL end the
  connection); should the upstream still start a COPY, it gets CopyFail.
* ``interrupt`` (any thread): while the upstream works for this session, send it a cancel
  request, re-sent with back-off until that exchange ends (a cancel reaching the server
  before the statement is dropped by PostgreSQL). Idle, it does nothing.
* Between statements, what the upstream sends by itself (NotificationResponse,
  NoticeResponse, ParameterStatus) is taken whole from the head of what was read
  (:meth:`Upstream.take_asynchronous`) and passed on at once, as PostgreSQL delivers a
  NOTIFY to an idle client.
* A lost upstream is :class:`UpstreamLost` (FATAL 08006, a :class:`~pgbarrier.errors.Fatal`):
  the stream can no longer be trusted, so the client connection ends.
"""

from __future__ import annotations

import logging
import os
import socket
import struct
import threading
from collections.abc import Generator
from typing import Any

import psycopg

from pgbarrier import accel
from pgbarrier.backends.base import REPORTED_PARAMETERS, WireParams
from pgbarrier.backends.upstream_session import UpstreamSession
from pgbarrier.errors import Fatal, FeatureNotSupported, InFailedSqlTransaction, Notice, PgError
from pgbarrier.relay.effects import NEED_BYTES, Spill
from pgbarrier.relay import RelayState, UpstreamCore
from pgbarrier.pgproto.codes import (
    ASYNCHRONOUS,
    BIND,
    CLOSE,
    COMMAND_COMPLETE,
    COMPLETES_A_MESSAGE,
    COPY_BOTH_RESPONSE,
    COPY_DATA,
    COPY_DONE,
    COPY_FAIL,
    COPY_IN_RESPONSE,
    COPY_OUT_RESPONSE,
    DATA_ROW,
    DESCRIBE,
    ERROR_RESPONSE,
    EXECUTE,
    FLUSH,
    NOTICE_RESPONSE,
    PARAMETER_DESCRIPTION,
    PARAMETER_STATUS,
    PARSE,
    PORTAL,
    READY_FOR_QUERY,
    ROW_DESCRIPTION,
    STATEMENT,
    SYNC,
    type_byte,
)
from pgbarrier.result import Column, Result
from pgbarrier.sql.startup_params import StartupSettings
from pgbarrier.sql.classify import leading_words
from pgbarrier.pgproto.types import to_text

log = logging.getLogger(__name__)
_scan = accel.load("pgbarrier.pgproto.scan")

_ENCODING = "utf-8"
_RECV = 65536
#: relayed reply bytes held before they are written to the client mid-reply
SPILL_BYTES = 256 * 1024
_CANCEL_FIRST_RETRY_S = 0.05
_CANCEL_MAX_RETRY_S = 1.0
_CANCEL_TIMEOUT_S = 5.0
_COPY_REFUSED = "COPY to or from the client is supported only in a simple Query"
#: statement and portal of the full path (the client's unnamed ones are never touched)
_OWN = b"pgbarrier_full_path"

_INT = struct.Struct("!i")
_unpack_int = _INT.unpack_from
#: replies that complete one extended-protocol message
_DONE = COMPLETES_A_MESSAGE
#: what pump() and scan() stopped at (-1 for scan: the held bytes ended first)
READY, DRAINED, COPY_IN = _scan.READY, _scan.DRAINED, _scan.COPY_IN


#: command tags after which reported parameters may have changed
_MAY_CHANGE_PARAMS = ("SET", "RESET", "DISCARD", "COMMIT", "ROLLBACK")


class UpstreamLost(Fatal):
    """The upstream connection is gone (08006); the client connection ends too."""

    def __init__(self, message: str = "server closed the connection unexpectedly") -> None:
        super().__init__(f"upstream connection lost: {message}", sqlstate="08006")


# --------------------------------------------------------------------------- messages


def frame(code: bytes | int, body: bytes = b"") -> bytes:
    """A message: its type (a name of :mod:`pgbarrier.pgproto.codes`, or its byte), its
    length word and ``body``."""
    if isinstance(code, int):
        code = type_byte(code)
    return code + _INT.pack(len(body) + 4) + body


def _parse_msg(name: bytes, sql: bytes, oids: tuple[int, ...]) -> bytes:
    return frame(PARSE, name + b"\0" + sql + b"\0" + struct.pack(f"!h{len(oids)}I", len(oids), *oids))


def _bind_msg(name: bytes, values: list[bytes | None], formats: tuple[int, ...],
              result_format: int) -> bytes:
    parts = [name, b"\0", name, b"\0", struct.pack(f"!h{len(formats)}h", len(formats), *formats),
             struct.pack("!h", len(values))]
    for v in values:
        if v is None:
            parts.append(b"\xff\xff\xff\xff")
        else:
            parts.append(_INT.pack(len(v)))
            parts.append(v)
    parts.append(struct.pack("!hh", 1, result_format))
    return frame(BIND, b"".join(parts))


_SYNC = frame(SYNC)
_FLUSH = frame(FLUSH)
_OWN_PORTAL = type_byte(PORTAL) + _OWN + b"\0"
_OWN_STATEMENT = type_byte(STATEMENT) + _OWN + b"\0"
_CLOSE_OWN = frame(CLOSE, _OWN_PORTAL) + frame(CLOSE, _OWN_STATEMENT)
_CLOSE_OWN_STMT = frame(CLOSE, _OWN_STATEMENT)


def _cstrings(payload: bytes) -> list[bytes]:
    return payload.split(b"\0")


def error_fields(payload: bytes) -> dict[str, str]:
    """The fields of an ErrorResponse/NoticeResponse body, by their one-letter code."""
    out: dict[str, str] = {}
    for part in payload.split(b"\0"):
        if part:
            out[chr(part[0])] = part[1:].decode(_ENCODING, "replace")
    return out


def error_from_fields(fields: dict[str, str]) -> PgError:
    pos = fields.get("P")
    sqlstate = fields.get("C", "XX000")
    cls = PgError.by_sqlstate(sqlstate)
    err = cls(fields.get("M", ""), detail=fields.get("D"), hint=fields.get("H"),
              position=int(pos) if pos and pos.isdigit() else None, sqlstate=sqlstate,
              severity=fields.get("V") or fields.get("S") or "ERROR")
    err.fields = {k: v for k, v in fields.items() if k not in _OWN_FIELDS}
    return err


#: the ErrorResponse fields PgError holds as attributes (the rest go in ``fields``)
_OWN_FIELDS = frozenset("SVCMDHP")


def _notice(fields: dict[str, str]) -> Notice:
    return Notice(fields.get("M", ""), detail=fields.get("D"), hint=fields.get("H"),
                  sqlstate=fields.get("C", "00000"),
                  severity=fields.get("V") or fields.get("S") or "NOTICE")


def _columns(payload: bytes) -> list[Column]:
    (n,) = struct.unpack_from("!h", payload, 0)
    pos = 2
    cols = []
    for _ in range(n):
        end = payload.index(b"\0", pos)
        name = payload[pos:end].decode(_ENCODING, "replace")
        table, attnum, oid, _size, typmod, _fmt = struct.unpack_from("!ihIhih", payload, end + 1)
        cols.append(Column(name, oid, typmod, table, attnum))
        pos = end + 19
    return cols


def _row(payload: bytes) -> tuple[bytes | None, ...]:
    (n,) = struct.unpack_from("!h", payload, 0)
    pos = 2
    values: list[bytes | None] = []
    for _ in range(n):
        (ln,) = _unpack_int(payload, pos)
        pos += 4
        if ln < 0:
            values.append(None)
        else:
            values.append(payload[pos:pos + ln])
            pos += ln
    return tuple(values)


# --------------------------------------------------------------------------- the socket


class Upstream(UpstreamCore):
    """The upstream socket after libpq's start-up, and what the relay must know of it.
    The fields every relayed batch reads (``buf``, ``pos``, ``lost``, ``param_events``,
    ``pending_writes``, ``blocking``, ``state``) are its base class's,
    :class:`pgbarrier.relay.state.UpstreamCore` (C fields where compiled); slotted."""

    __slots__ = ("sock", "params")

    def __init__(self, sock: socket.socket, params: dict[str, str]) -> None:
        UpstreamCore.__init__(self, RelayState())
        self.sock = sock
        #: the upstream's current values of the reported parameters
        self.params: dict[str, str] = dict(params)

    @classmethod
    def of_connection(cls, conn: psycopg.Connection[Any]) -> Upstream:
        """The socket of a connection libpq has started (a duplicate descriptor)."""
        sock = socket.socket(fileno=os.dup(conn.pgconn.socket))
        sock.setblocking(True)
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, True)
        params = {}
        for name in REPORTED_PARAMETERS:
            value = conn.pgconn.parameter_status(name.encode())
            if value is not None:
                params[name] = value.decode(_ENCODING, "replace")
        return cls(sock, params)

    # ------------------------------------------------------------------ raw I/O

    def send(self, data: bytes) -> None:
        """Blocking mode (the full path, on a worker): write now. Otherwise the bytes wait
        in ``pending_writes`` for the event loop (see :mod:`pgbarrier.session.relay`)."""
        if self.lost is not None:
            raise self.lost
        if not self.blocking:
            self.pending_writes.append(data)
            return
        try:
            self.sock.sendall(data)
        except OSError as exc:
            # the upstream may have said why before it went (an admin terminated it): let
            # the reader find that message; a later read then fails as lost
            log.info("upstream send failed: %s", exc)

    def take_writes(self) -> bytes:
        data = b"".join(self.pending_writes)
        self.pending_writes.clear()
        return data

    def received(self, data: bytes, reason: str = "server closed the connection unexpectedly"
                 ) -> None:
        """Bytes read from the socket (``b""``: it closed); appended to ``buf[pos:]``."""
        if not data:
            self.lost = UpstreamLost(reason)
            return
        pos = self.pos
        if pos < len(self.buf):
            self.buf = self.buf[pos:] + data
        else:
            self.buf = data
        self.pos = 0

    def _recv(self) -> None:
        """Blocking mode: append what the socket has to the unread bytes."""
        if self.lost is not None:
            raise self.lost
        try:
            data = self.sock.recv(_RECV)
        except OSError as exc:
            self.received(b"", str(exc))
        else:
            self.received(data)
        if self.lost is not None:
            raise self.lost

    def _next(self) -> tuple[int, bytes] | None:
        buf, pos = self.buf, self.pos
        if len(buf) - pos >= 5:
            end = pos + 1 + _unpack_int(buf, pos + 1)[0]
            if len(buf) >= end:
                self.pos = end
                return buf[pos], buf[pos + 5:end]
        return None

    def read(self) -> tuple[int, bytes]:
        """Blocking mode: the next whole upstream message, (type byte, payload)."""
        while True:
            msg = self._next()
            if msg is not None:
                return msg
            self._recv()

    def read_steps(self) -> Generator[Any, None, tuple[int, bytes]]:
        """:meth:`read` for the event loop: yields NEED_BYTES until a message is whole."""
        while True:
            msg = self._next()
            if msg is not None:
                return msg
            if self.lost is not None:
                raise self.lost
            yield NEED_BYTES
            if self.lost is not None:
                raise self.lost

    def parameter_status(self, payload: bytes) -> None:
        """A ParameterStatus the upstream sent (its body): the parameter's value now, and
        an event for the session (what the client was told)."""
        name, value = payload.split(b"\0")[:2]
        pair = (name.decode(_ENCODING, "replace"), value.decode(_ENCODING, "replace"))
        self.params[pair[0]] = pair[1]
        self.param_events.append(pair)

    def take_asynchronous(self, everything: bool = False) -> bytes:
        """Between statements: the whole messages at the head of what was read that the
        upstream sends by itself (stopping at any other), or with ``everything`` every
        whole message (the upstream is lost: what it said last)."""
        buf, pos = self.buf, self.pos
        start = pos
        n = len(buf)
        while n - pos >= 5:
            end = pos + 1 + _unpack_int(buf, pos + 1)[0]
            if end > n:
                break
            t = buf[pos]
            if t == PARAMETER_STATUS:
                self.parameter_status(buf[pos + 5:end - 1])
            elif t not in ASYNCHRONOUS and not everything:
                break
            pos = end
        self.pos = pos
        return buf[start:pos]

    # ------------------------------------------------------------------ the relay's pump

    def scan(self, drain: int = 0) -> int:
        """Account for the whole replies held from ``pos`` on, moving ``pos`` past them:
        the one reading of reply types that :meth:`pump` and the connection's fast path
        share (the loop itself is :func:`pgbarrier.pgproto.scan.replies`). Stops after
        ReadyForQuery (READY), after the ``drain``-th completed message or an error while
        draining (DRAINED), or after CopyInResponse/CopyBothResponse (COPY_IN); returns
        -1 when the held bytes end first."""
        stop, _start, self.pos = self.state.scan(self.buf, self.pos, drain,
                                                 self.parameter_status)
        return stop

    def pump(self, out: list[Any], drain: int = 0) -> Generator[Any, None, int]:
        """Pass upstream replies into ``out`` (whole messages, as bytes) until ReadyForQuery
        (``drain == 0``), or until ``self.state.done`` reaches ``drain`` or an error arrives.

        A generator for the event loop: it yields NEED_BYTES when it has to wait for the
        socket, and a :class:`Spill` when ``out`` holds more than ``SPILL_BYTES`` mid-reply.
        Returns READY, DRAINED or COPY_IN (a CopyInResponse was passed on: the client sends
        the data next). ``self.state`` (its status, ``done``, ``failed_at``) and
        ``self.param_events`` say what happened.
        """
        held = 0
        self.state.waiting()
        try:
            while True:
                start = self.pos
                stop = self.scan(drain)
                pos = self.pos
                if pos > start:
                    buf = self.buf
                    out.append(buf if start == 0 and pos == len(buf) else buf[start:pos])
                    held += pos - start
                if stop == COPY_IN:
                    # what the upstream said by itself right after (a BEFORE STATEMENT
                    # trigger's notice, say) goes with it, as a direct client reads it
                    tail = self.take_asynchronous()
                    if tail:
                        out.append(tail)
                if stop >= 0:
                    return stop
                if held > SPILL_BYTES:
                    yield Spill(out)
                    held = 0
                    continue  # what arrived while the client was written to is held: scan it
                if self.lost is not None:
                    raise self.lost
                yield NEED_BYTES
                if self.lost is not None:
                    raise self.lost
        finally:
            self.state.waited()


# --------------------------------------------------------------------------- full path


class RelaySession(UpstreamSession):
    """A client's upstream connection in raw protocol: the relay's and the full path's."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        super().__init__()
        self._conn = conn
        self.upstream = Upstream.of_connection(conn)
        self._cancel_lock = threading.Lock()
        self._resending = -1

    def relayed_upstream(self) -> Upstream:
        return self.upstream

    # ------------------------------------------------------------------ exchanges

    def _exchange(self, messages: bytes, expected: int) -> list[tuple[int, bytes]]:
        """Send the full path's messages and read their replies: up to ReadyForQuery outside
        a batch (Sync appended), else until ``expected`` messages completed or one failed
        (Flush appended). COPY with the client is refused on the way."""
        up = self.upstream
        state = up.state
        sync = not state.in_batch
        if state.skipping() and not sync:
            # the upstream discards everything until the client's Sync (an error in its open
            # batch): no reply would ever come, so PostgreSQL's answer for such a statement
            raise InFailedSqlTransaction(
                "current transaction is aborted, commands ignored until end of transaction block")
        up.send(messages + (_SYNC if sync else _FLUSH))
        state.sent(synced=sync)
        replies: list[tuple[int, bytes]] = []
        done = 0
        copy = False
        state.waiting()
        try:
            while True:
                t, payload = up.read()
                if t == READY_FOR_QUERY:
                    state.ready(payload[0])
                    break
                if t == PARAMETER_STATUS:
                    name, value = payload.split(b"\0")[:2]
                    up.params[name.decode(_ENCODING, "replace")] = value.decode(_ENCODING, "replace")
                    continue
                if t == COPY_IN_RESPONSE or t == COPY_BOTH_RESPONSE:  # CopyIn/CopyBoth: refuse
                    copy = True
                    up.send(frame(COPY_FAIL, b"COPY from the client is not supported here\0")
                            + (_SYNC if sync else b""))
                    continue
                if t == COPY_OUT_RESPONSE:  # CopyOutResponse: its data is drained and dropped
                    copy = True
                    continue
                if t == COPY_DATA or t == COPY_DONE:
                    continue
                replies.append((t, payload))
                if t in _DONE:
                    done += 1
                    if not sync and done >= expected:
                        break
                elif t == ERROR_RESPONSE and not sync:
                    state.failed()
                    break
        finally:
            state.waited()
        if copy:
            raise FeatureNotSupported(_COPY_REFUSED)
        return replies

    @staticmethod
    def _fail_on_error(replies: list[tuple[int, bytes]]) -> list[Notice]:
        notices = []
        for t, payload in replies:
            if t == ERROR_RESPONSE:
                raise error_from_fields(error_fields(payload))
            if t == NOTICE_RESPONSE:
                notices.append(_notice(error_fields(payload)))
        return notices

    # ------------------------------------------------------------------ BackendSession

    def apply_startup(self, startup: StartupSettings) -> None:
        """Only an empty ``application_name`` is left to set (see
        :mod:`pgbarrier.backends.postgres`); the rest came with the login."""
        name = startup.get("application_name") or ""
        if self.upstream.params.get("application_name") != name:
            self.execute("SELECT pg_catalog.set_config('application_name', $1, false)", [name])

    def execute(self, sql: str, params: list[Any] | WireParams | None = None,
                result_formats: tuple[int, ...] = ()) -> Result:
        oids: tuple[int, ...] = ()
        formats: tuple[int, ...] = ()
        if isinstance(params, WireParams):
            values = list(params.values)
            oids = params.oids
            formats = params.formats if any(params.formats) else ()
        else:
            values = [None if v is None else to_text(v).encode(_ENCODING) for v in params or ()]
        result_format = 1 if result_formats and all(f == 1 for f in result_formats) else 0
        if leading_words(sql, 1) == ("COPY",) and ("STDIN" in sql.upper() or "STDOUT" in sql.upper()):
            # never sent: messages queued behind a COPY FROM STDIN's Execute would break the
            # upstream's COPY (PostgreSQL ends the connection over it)
            raise FeatureNotSupported(_COPY_REFUSED)
        messages = b"".join((
            _CLOSE_OWN,
            _parse_msg(_OWN, sql.encode(_ENCODING), tuple(oids)),
            _bind_msg(_OWN, values, formats, result_format),
            frame(DESCRIBE, _OWN_PORTAL),
            frame(EXECUTE, _OWN + b"\0" + _INT.pack(0)),
            _CLOSE_OWN,
        ))
        replies = self._exchange(messages, 8)
        notices = self._fail_on_error(replies)
        columns: list[Column] | None = None
        rows: list[tuple[bytes | None, ...]] = []
        tag = ""
        for t, payload in replies:
            if t == DATA_ROW:
                rows.append(_row(payload))
            elif t == ROW_DESCRIPTION:
                columns = _columns(payload)
            elif t == COMMAND_COMPLETE:
                tag = payload[:-1].decode(_ENCODING, "replace")
        result = Result(tag=tag, columns=columns, row_source=rows, notices=notices,
                        raw_format=result_format if columns is not None else 0, exact_tag=True)
        if tag.startswith(_MAY_CHANGE_PARAMS):
            result.parameter_status = self.reported_parameters()
        return result

    def reported_parameters(self) -> dict[str, str]:
        return dict(self.upstream.params)

    def describe_statement(self, sql: str, param_oids: tuple[int, ...] = ()
                           ) -> tuple[list[int], list[Column] | None]:
        """Parameter types and row shape from the upstream's Describe; nothing runs."""
        messages = b"".join((
            _CLOSE_OWN_STMT,
            _parse_msg(_OWN, sql.encode(_ENCODING), tuple(param_oids)),
            frame(DESCRIBE, _OWN_STATEMENT),
            _CLOSE_OWN_STMT,
        ))
        replies = self._exchange(messages, 4)
        self._fail_on_error(replies)
        oids: list[int] = []
        columns: list[Column] | None = None
        for t, payload in replies:
            if t == PARAMETER_DESCRIPTION:  # ParameterDescription
                (n,) = struct.unpack_from("!h", payload, 0)
                oids = list(struct.unpack_from(f"!{n}I", payload, 2))
            elif t == ROW_DESCRIPTION:
                columns = _columns(payload)
        return oids, columns

    def describe(self, sql: str, params: list[Any] | WireParams | None = None
                 ) -> list[Column] | None:
        oids = params.oids if isinstance(params, WireParams) else ()
        return self.describe_statement(sql, tuple(oids))[1]

    def param_types(self, sql: str, param_oids: tuple[int, ...]) -> list[int]:
        return self.describe_statement(sql, param_oids)[0]

    def describe_params(self, sql: str) -> list[int]:
        return self.describe_statement(sql)[0]

    # ------------------------------------------------------------------ cancel, close

    def _send_cancel(self) -> None:
        try:
            self._conn.cancel_safe(timeout=_CANCEL_TIMEOUT_S)
        except Exception as exc:  # a failed cancel must never break the caller
            log.warning("upstream cancel request failed: %s", exc)

    def interrupt(self) -> None:
        state = self.upstream.state
        if not state.busy:
            return
        generation = state.generation
        self._send_cancel()
        with self._cancel_lock:
            if self._resending == generation:
                return
            self._resending = generation
        threading.Thread(target=self._resend_cancel, args=(generation,), daemon=True,
                         name="upstream-cancel").start()

    def _resend_cancel(self, generation: int) -> None:
        """Re-send the cancel with back-off until the exchange it was meant for has ended."""
        state = self.upstream.state
        delay = _CANCEL_FIRST_RETRY_S
        ended = threading.Event()
        while not ended.wait(delay):
            if not state.busy or state.generation != generation:
                return
            self._send_cancel()
            delay = min(delay * 2, _CANCEL_MAX_RETRY_S)

    def close(self) -> None:
        try:
            self.upstream.sock.close()
        except OSError:
            pass
        try:
            self._conn.close()
        except psycopg.Error:
            pass
