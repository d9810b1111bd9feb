"""PostgreSQL protocol 3.0 messages: decoding what clients send, encoding what we answer.

Rules this module keeps:

* No I/O. Functions take payload bytes and return dataclasses, or take values and
  return the complete framed message (type byte, length, body).
* A message type PostgreSQL does not know is FATAL 08P01 ``invalid frontend message
  type N`` (:class:`pgbarrier.errors.ProtocolViolation`). A known message whose body does
  not parse is ERROR 08P01, as PostgreSQL's ``pq_getmsg*`` errors are: :func:`decode_message`
  returns it as an :class:`Undecodable` message (never ``struct.error``/``IndexError``/
  ``UnicodeDecodeError``), so the session answers it in order and the connection stays.
* FunctionCall (``F``, libpq's fast path) decodes to :class:`FunctionCall`; pgbarrier
  answers it with an ERROR and ReadyForQuery, as PostgreSQL does for a call it refuses.
* A string that is not UTF-8 is PostgreSQL's ERROR 22021 ``invalid byte sequence for
  encoding "UTF8": 0x..`` (the bytes of the first bad sequence, as many as its lead byte
  announces), not a protocol violation: :func:`decode_message` returns it as an
  :class:`Undecodable` message, so the session answers it in order and the connection
  stays. Under another client encoding (a :class:`~pgbarrier.pgproto.encodings.Codec`)
  every string is read in it, as PostgreSQL converts them all (``pq_getmsgstring``):
  bad bytes are its 22021, a character with no UTF8 equivalent its 22P05, answered
  the same way. The builders of messages with text (ErrorResponse, NoticeResponse,
  RowDescription, ParameterStatus) take the ``cstr`` that writes a string in the client
  encoding (UTF-8 by default); CommandComplete is ASCII and PostgreSQL sends it as is.
  CopyData/CopyDone/CopyFail outside COPY decode to :class:`CopyOutsideCopy`, which
  PostgreSQL ignores.
* Start-up (:func:`decode_startup`, PostgreSQL 15's ``ProcessStartupPacket``): protocol
  major 3 with any minor is accepted; a minor above 0 or ``_pq_.`` options are recorded
  for NegotiateProtocolVersion (newest version 3.0, the ``_pq_.`` options listed as
  unrecognized); another major is FATAL 0A000, below 3 in protocol 2.0's format; a packet
  whose parameters do not end exactly at its last byte is FATAL 08P01.
* Every ErrorResponse and NoticeResponse carries S, V, C and M, plus D, H and P
  when the error has them, so psql prints ``ERROR:``/``DETAIL:``/``HINT:`` and,
  with ``VERBOSITY verbose``, the SQLSTATE.

The message-type codes are buenavista's (``ServerResponse``/``ClientCommand``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from buenavista.postgres import ClientCommand, ServerResponse

from pgbarrier.errors import CharacterNotInRepertoire as InvalidEncoding
from pgbarrier.errors import (
    FeatureNotSupported,
    MalformedMessage,
    Notice,
    PgError,
    ProtocolViolation,
    UntranslatableCharacter,
)

from pgbarrier.pgproto.codes import NOTIFICATION_RESPONSE

if TYPE_CHECKING:
    from pgbarrier.pgproto.encodings import Codec

_NOTIFICATION = bytes((NOTIFICATION_RESPONSE,))

PROTOCOL_3_0 = 196608
SSL_REQUEST = 80877103
GSSENC_REQUEST = 80877104
CANCEL_REQUEST = 80877102


# --------------------------------------------------------------------------- frontend


@dataclass(frozen=True)
class StartupMessage:
    parameters: dict[str, str]
    #: the protocol version the client asked for (3.x)
    protocol: int = PROTOCOL_3_0
    #: ``_pq_.`` options the client sent (none is recognized, as in PostgreSQL 15)
    protocol_options: tuple[str, ...] = ()

    @property
    def needs_negotiation(self) -> bool:
        """Whether NegotiateProtocolVersion must be sent (a minor above 0, or options)."""
        return self.protocol != PROTOCOL_3_0 or bool(self.protocol_options)


@dataclass(frozen=True)
class SSLRequest:
    pass


@dataclass(frozen=True)
class GSSENCRequest:
    pass


@dataclass(frozen=True)
class CancelRequest:
    process_id: int
    secret_key: int
    #: the packet was exactly a CancelRequest's 16 bytes (PostgreSQL ignores any other)
    complete: bool = True


@dataclass(frozen=True)
class Query:
    sql: str


@dataclass(frozen=True)
class Parse:
    statement: str
    sql: str
    param_oids: tuple[int, ...]


@dataclass(frozen=True)
class Bind:
    portal: str
    statement: str
    param_formats: tuple[int, ...]
    params: tuple[bytes | None, ...]
    result_formats: tuple[int, ...]


@dataclass(frozen=True)
class Describe:
    kind: str  # "S" statement or "P" portal
    name: str


@dataclass(frozen=True)
class Execute:
    portal: str
    max_rows: int


@dataclass(frozen=True)
class Close:
    kind: str  # "S" or "P"
    name: str


@dataclass(frozen=True)
class Sync:
    pass


@dataclass(frozen=True)
class Flush:
    pass


@dataclass(frozen=True)
class Terminate:
    pass


@dataclass(frozen=True)
class PasswordMessage:
    data: bytes


@dataclass(frozen=True)
class FunctionCall:
    """FunctionCall (``F``): call function ``oid`` (libpq's ``PQfn``, large objects)."""

    oid: int


@dataclass(frozen=True)
class CopyOutsideCopy:
    """CopyData, CopyDone or CopyFail: PostgreSQL ignores them when no COPY runs; during
    COPY FROM STDIN the session reads ``payload`` (the data, or CopyFail's message)."""

    type_code: bytes
    payload: bytes = b""


@dataclass(frozen=True)
class Undecodable:
    """A known message that cannot be read: text that is not valid UTF-8 (22021) or a body
    that does not parse (08P01, ERROR); answered with ``error``."""

    type_code: bytes
    error: PgError


FrontendMessage = (Query | Parse | Bind | Describe | Execute | Close | Sync | Flush | Terminate
                   | PasswordMessage | CopyOutsideCopy | FunctionCall | Undecodable)


def _utf8_sequence_length(lead: int) -> int:
    """PostgreSQL's pg_utf_mblen: how many bytes a UTF-8 sequence starting with ``lead`` has."""
    if lead & 0x80 == 0:
        return 1
    if lead & 0xE0 == 0xC0:
        return 2
    if lead & 0xF0 == 0xE0:
        return 3
    if lead & 0xF8 == 0xF0:
        return 4
    return 1


def invalid_encoding(raw: bytes, start: int) -> InvalidEncoding:
    """PostgreSQL's report_invalid_encoding for the bad sequence at ``raw[start]``."""
    bad = raw[start:start + _utf8_sequence_length(raw[start])]
    shown = " ".join(f"0x{b:02x}" for b in bad)
    return InvalidEncoding(f'invalid byte sequence for encoding "UTF8": {shown}')


class _Reader:
    """Bounds-checked reads over one payload; any overrun is a protocol violation.
    ``codec``: the client encoding strings are in (None: UTF-8)."""

    __slots__ = ("data", "pos", "codec")

    def __init__(self, data: bytes, codec: Codec | None = None) -> None:
        self.data = data
        self.pos = 0
        self.codec = codec

    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ProtocolViolation("insufficient data left in message")  # PostgreSQL's words
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def int16(self) -> int:
        return struct.unpack("!h", self._take(2))[0]

    def int32(self) -> int:
        return struct.unpack("!i", self._take(4))[0]

    def byte(self) -> str:
        return self._take(1).decode("latin-1")

    def cstring(self) -> str:
        end = self.data.find(b"\x00", self.pos)
        if end < 0:
            raise ProtocolViolation("invalid string in message")
        raw = self.data[self.pos : end]
        self.pos = end + 1
        codec = self.codec
        if codec is not None:
            return codec.decode(raw)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise invalid_encoding(raw, exc.start) from None

    def rest(self) -> bytes:
        chunk = self.data[self.pos :]
        self.pos = len(self.data)
        return chunk

    def done(self) -> None:
        if self.pos != len(self.data):
            raise ProtocolViolation("invalid message format")


class UnsupportedProtocol(FeatureNotSupported):
    """FATAL 0A000 for a start-up asking for a protocol major other than 3. Below 3 it is
    written in protocol 2.0's format (``old_format``), as PostgreSQL 15 answers a 2.0
    client (:func:`startup_error_response`)."""

    def __init__(self, code: int) -> None:
        super().__init__(f"unsupported frontend protocol {code >> 16}.{code & 0xFFFF}: "
                         "server supports 3.0 to 3.0", severity="FATAL")
        self.old_format = code != 0 and (code >> 16) < 3  # 0.0 is answered in 3.0


#: PostgreSQL's ``replication`` start-up values (``parse_bool`` and ``database``)
_REPLICATION_TRUE = ("on", "true", "yes", "1")
_REPLICATION_FALSE = ("off", "false", "no", "0")


def _bool_prefix(value: str, words: tuple[str, ...]) -> bool:
    """PostgreSQL's ``parse_bool``: case-insensitive, a unique prefix of the word will do
    (``t``, ``tr``, ``of``...)."""
    v = value.lower()
    if not v:
        return False
    if v in ("on", "off", "0", "1"):
        return v in words
    if v in ("o",):  # ambiguous between on and off
        return False
    return any(w.startswith(v) and len(w) > 1 and not w.isdigit() for w in words)


def replication_mode(value: str) -> str | None:
    """What a ``replication`` start-up value asks for: ``physical``, ``database`` (logical),
    or None (a plain session); FATAL 22023 for a value PostgreSQL does not take."""
    if value == "database":
        return "database"
    if _bool_prefix(value, _REPLICATION_TRUE):
        return "physical"
    if _bool_prefix(value, _REPLICATION_FALSE):
        return None
    raise PgError(f'invalid value for parameter "replication": "{value}"', sqlstate="22023",
                  severity="FATAL",
                  hint='Valid values are: "false", 0, "true", 1, "database".')


def decode_startup(payload: bytes) -> StartupMessage | SSLRequest | GSSENCRequest | CancelRequest:
    """Decode the body of the untyped first message (after its length word, at least 4
    bytes), as PostgreSQL 15's ``ProcessStartupPacket`` reads it:

    * a CancelRequest of another length than 16 bytes has ``complete`` False (PostgreSQL
      ignores it); an SSLRequest or GSSENCRequest is known by its code alone;
    * a major other than 3 is :class:`UnsupportedProtocol`;
    * parameters are name/value pairs of NUL-terminated strings up to an empty name, which
      must be the packet's last byte (else FATAL 08P01 ``invalid startup packet layout:
      expected terminator as last byte``); a name without its value ends the scan there
      (and so fails that check);
    * ``replication`` must be a boolean or ``database`` (FATAL 22023), ``_pq_.`` names are
      protocol options (none is recognized, as in PostgreSQL 15).

    Strings are not checked for encoding here (PostgreSQL does not either): ``user`` and
    ``database`` keep bytes that are not UTF-8 as surrogate escapes (the start-up answers
    that no such role or database exists, with the bytes as sent), other values have them
    replaced (U+FFFD)."""
    if len(payload) < 4:
        raise ProtocolViolation("invalid length of startup packet")
    (code,) = struct.unpack_from("!i", payload)
    if code == CANCEL_REQUEST:
        fields = (payload[4:12] + bytes(8))[:8]
        pid, key = struct.unpack("!II", fields)
        return CancelRequest(pid, key, complete=len(payload) == 12)
    if code == SSL_REQUEST:
        return SSLRequest()
    if code == GSSENC_REQUEST:
        return GSSENCRequest()
    if code >> 16 != 3:
        raise UnsupportedProtocol(code & 0xFFFFFFFF)
    n = len(payload)
    buf = payload + b"\x00"  # PostgreSQL's extra NUL: every string ends inside the buffer
    params: dict[str, str] = {}
    options: list[str] = []
    offset = 4
    while offset < n:
        end = buf.index(b"\x00", offset)
        if end == offset:
            break  # the terminator
        name = buf[offset:end]
        valoffset = end + 1
        if valoffset >= n:
            break  # a name without its value: the layout check below fails
        vend = buf.index(b"\x00", valoffset)
        raw = buf[valoffset:vend]
        key = name.decode("utf-8", "replace")
        if key in ("user", "database"):
            value = raw.decode("utf-8", "surrogateescape")
        else:
            value = raw.decode("utf-8", "replace")
        if key == "replication":
            replication_mode(value)
        if key.startswith("_pq_."):
            options.append(key)
        else:
            params[key] = value
        offset = vend + 1
    if offset != n - 1:
        raise ProtocolViolation("invalid startup packet layout: expected terminator as last "
                                "byte")
    return StartupMessage(params, code, tuple(options))


def startup_error_response(err: PgError) -> bytes:
    """An error before the session exists: an ErrorResponse (``raw_cstr``: a name the client
    sent that is not UTF-8 goes back as its bytes), or protocol 2.0's ``E`` and one
    NUL-terminated line for :class:`UnsupportedProtocol` below 3.0, as PostgreSQL 15
    answers an old client."""
    if getattr(err, "old_format", False):
        return b"E" + raw_cstr(f"{err.severity}:  {err.message}\n")
    return error_response(err, raw_cstr)


def decode_message(type_code: bytes, payload: bytes,
                   codec: Codec | None = None) -> FrontendMessage:
    """Decode one typed frontend message, its strings in client encoding ``codec`` (None:
    UTF-8); text that is not valid in it, or that has no UTF8 equivalent, is an
    :class:`Undecodable` with PostgreSQL's 22021 or 22P05."""
    try:
        return _decode_message(type_code, payload, codec)
    except (InvalidEncoding, UntranslatableCharacter) as exc:
        return Undecodable(type_code, exc)
    except ProtocolViolation as exc:
        if type_code not in _KNOWN_CODES:
            raise
        return Undecodable(type_code, MalformedMessage(exc.message))


_COPY_CODES = (b"d", b"c", b"f")
_FUNCTION_CALL = b"F"
#: what a client may send after start-up (any other type is FATAL)
_KNOWN_CODES = frozenset({ClientCommand.QUERY, ClientCommand.PARSE, ClientCommand.BIND,
                          ClientCommand.DESCRIBE, ClientCommand.EXECUTE, ClientCommand.CLOSE,
                          ClientCommand.SYNC, ClientCommand.FLUSH, ClientCommand.TERMINATE,
                          ClientCommand.PASSWORD_MESSAGE, _FUNCTION_CALL, *_COPY_CODES})


def _decode_message(type_code: bytes, payload: bytes, codec: Codec | None) -> FrontendMessage:
    r = _Reader(payload, codec)
    if type_code == ClientCommand.QUERY:
        msg: FrontendMessage = Query(r.cstring())
    elif type_code == ClientCommand.PARSE:
        name, sql = r.cstring(), r.cstring()
        oids = tuple(r.int32() & 0xFFFFFFFF for _ in range(r.int16()))
        msg = Parse(name, sql, oids)
    elif type_code == ClientCommand.BIND:
        portal, stmt = r.cstring(), r.cstring()
        fmts = tuple(r.int16() for _ in range(r.int16()))
        values: list[bytes | None] = []
        for _ in range(r.int16()):
            n = r.int32()
            values.append(None if n == -1 else r._take(n))
        rfmts = tuple(r.int16() for _ in range(r.int16()))
        msg = Bind(portal, stmt, fmts, tuple(values), rfmts)
    elif type_code == ClientCommand.DESCRIBE:
        kind = r.byte()
        if kind not in ("S", "P"):
            raise ProtocolViolation(f"invalid DESCRIBE message subtype {ord(kind)}")
        msg = Describe(kind, r.cstring())
    elif type_code == ClientCommand.EXECUTE:
        msg = Execute(r.cstring(), r.int32())
    elif type_code == ClientCommand.CLOSE:
        kind = r.byte()
        if kind not in ("S", "P"):
            raise ProtocolViolation(f"invalid CLOSE message subtype {ord(kind)}")
        msg = Close(kind, r.cstring())
    elif type_code == ClientCommand.SYNC:
        msg = Sync()
    elif type_code == ClientCommand.FLUSH:
        msg = Flush()
    elif type_code == ClientCommand.TERMINATE:
        msg = Terminate()
    elif type_code == ClientCommand.PASSWORD_MESSAGE:
        return PasswordMessage(r.rest())
    elif type_code in _COPY_CODES:
        return CopyOutsideCopy(type_code, bytes(payload))
    elif type_code == _FUNCTION_CALL:
        return FunctionCall(r.int32() & 0xFFFFFFFF)  # arguments are not read: it is refused
    else:
        raise ProtocolViolation(f"invalid frontend message type {type_code[0] if type_code else 0}")
    r.done()
    return msg


# --------------------------------------------------------------------------- backend


def _frame(code: bytes, body: bytes = b"") -> bytes:
    return code + struct.pack("!i", len(body) + 4) + body


def _cstr(value: str) -> bytes:
    return value.encode("utf-8").replace(b"\x00", b"") + b"\x00"


def raw_cstr(value: str) -> bytes:
    """:func:`_cstr`, with surrogate escapes written back as the bytes they stand for."""
    return value.encode("utf-8", "surrogateescape").replace(b"\x00", b"") + b"\x00"


#: a string as a message field: its bytes in the client encoding and a NUL
CString = Callable[[str], bytes]


def authentication_ok() -> bytes:
    return _frame(ServerResponse.AUTHENTICATION_REQUEST, struct.pack("!i", 0))


def parameter_status(name: str, value: str, cstr: CString = _cstr) -> bytes:
    return _frame(ServerResponse.PARAMETER_STATUS, cstr(name) + cstr(value))


def notification_response(process_id: int, channel: str, payload: str,
                          cstr: CString = _cstr) -> bytes:
    """NotificationResponse: a LISTENed channel's notification (the sender's process id)."""
    return _frame(_NOTIFICATION, struct.pack("!i", process_id) + cstr(channel) + cstr(payload))


def backend_key_data(process_id: int, secret_key: int) -> bytes:
    return _frame(ServerResponse.BACKEND_KEY_DATA, struct.pack("!II", process_id, secret_key))


def negotiate_protocol_version(newest: int, unrecognized: tuple[str, ...]) -> bytes:
    body = struct.pack("!ii", newest, len(unrecognized)) + b"".join(_cstr(o) for o in unrecognized)
    return _frame(b"v", body)


def ready_for_query(status: bytes) -> bytes:
    return _frame(ServerResponse.READY_FOR_QUERY, status)


def parse_complete() -> bytes:
    return _frame(ServerResponse.PARSE_COMPLETE)


def bind_complete() -> bytes:
    return _frame(ServerResponse.BIND_COMPLETE)


def close_complete() -> bytes:
    return _frame(ServerResponse.CLOSE_COMPLETE)


def no_data() -> bytes:
    return _frame(ServerResponse.NO_DATA)


def portal_suspended() -> bytes:
    return _frame(ServerResponse.PORTAL_SUSPENDED)


def empty_query_response() -> bytes:
    return _frame(ServerResponse.EMPTY_QUERY_RESPONSE)


def _copy_response(code: bytes, fmt: int, ncols: int) -> bytes:
    return _frame(code, struct.pack("!bh", fmt, ncols) + struct.pack("!h", fmt) * ncols)


def copy_in_response(fmt: int, ncols: int) -> bytes:
    return _copy_response(b"G", fmt, ncols)


def copy_out_response(fmt: int, ncols: int) -> bytes:
    return _copy_response(b"H", fmt, ncols)


def copy_data(data: bytes) -> bytes:
    return _frame(b"d", data)


def copy_done() -> bytes:
    return _frame(b"c")


def command_complete(tag: str) -> bytes:
    return _frame(ServerResponse.COMMAND_COMPLETE, _cstr(tag))


def parameter_description(oids: list[int] | tuple[int, ...]) -> bytes:
    body = struct.pack("!h", len(oids)) + b"".join(struct.pack("!I", o) for o in oids)
    return _frame(ServerResponse.PARAMETER_DESCRIPTION, body)


@dataclass(frozen=True)
class FieldDescription:
    name: str
    type_oid: int
    type_size: int = -1
    type_modifier: int = -1
    format: int = 0
    table_oid: int = 0
    column_number: int = 0


def row_description(fields: list[FieldDescription], cstr: CString = _cstr) -> bytes:
    parts = [struct.pack("!h", len(fields))]
    for f in fields:
        parts.append(cstr(f.name))
        parts.append(
            struct.pack(
                "!ihIhih",
                f.table_oid,
                f.column_number,
                f.type_oid,
                f.type_size,
                f.type_modifier,
                f.format,
            )
        )
    return _frame(ServerResponse.ROW_DESCRIPTION, b"".join(parts))


_NULL = struct.pack("!i", -1)


def data_row(values: list[bytes | None]) -> bytes:
    parts = [struct.pack("!h", len(values))]
    for v in values:
        if v is None:
            parts.append(_NULL)
        else:
            parts.append(struct.pack("!i", len(v)))
            parts.append(v)
    return _frame(ServerResponse.DATA_ROW, b"".join(parts))


#: PostgreSQL's order of the fields after P (elog.c's send_message_to_frontend)
_MORE_FIELDS = "pqWstcdnFLR"


def _fields(severity: str, sqlstate: str, message: str, detail: str | None,
            hint: str | None, position: int | None,
            more: dict[str, str] | None = None, cstr: CString = _cstr) -> bytes:
    parts = [
        b"S" + cstr(severity),
        b"V" + cstr(severity),
        b"C" + cstr(sqlstate),
        b"M" + cstr(message),
    ]
    if detail:
        parts.append(b"D" + cstr(detail))
    if hint:
        parts.append(b"H" + cstr(hint))
    if position:
        parts.append(b"P" + cstr(str(position)))
    if more:
        for code in _MORE_FIELDS:
            value = more.get(code)
            if value is not None:
                parts.append(code.encode() + cstr(value))
    parts.append(b"\x00")
    return b"".join(parts)


def error_response(err: PgError, cstr: CString = _cstr) -> bytes:
    return _frame(
        ServerResponse.ERROR_RESPONSE,
        _fields(err.severity, err.sqlstate, err.message, err.detail, err.hint, err.position,
                getattr(err, "fields", None), cstr),
    )


def notice_response(notice: Notice, cstr: CString = _cstr) -> bytes:
    return _frame(
        ServerResponse.NOTICE_RESPONSE,
        _fields(notice.severity, notice.sqlstate, notice.message, notice.detail, notice.hint,
                None, None, cstr),
    )


@dataclass
class Outbox:
    """Encoded backend messages waiting to be written, in order."""

    chunks: list[bytes] = field(default_factory=list)

    def add(self, chunk: bytes) -> None:
        self.chunks.append(chunk)

    def take(self) -> bytes:
        data = b"".join(self.chunks)
        self.chunks.clear()
        return data
