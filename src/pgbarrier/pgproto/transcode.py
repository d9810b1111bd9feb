"""What the wire converts for a client whose encoding is not UTF8, where PostgreSQL does.

The conversions themselves are :mod:`pgbarrier.pgproto.encodings`'; this module says which
text crosses them. Nothing here runs for a UTF8 (or SQL_ASCII) session: the session holds
no codec then and calls none of this. Rules it keeps (PostgreSQL 15's):

* In: every string of every message (``pq_getmsgstring``: SQL text, statement and portal
  names; :func:`pgbarrier.pgproto.messages.decode_message` with the codec). A Bind value in
  text format, of any type, is converted before its type reads it (:func:`param_to_utf8`);
  one in binary format only where the type's receive function reads text
  (``pq_getmsgtext``): text, varchar, bpchar, name, unknown, json, jsonb (after its version
  byte) and arrays of them (:func:`binary_to_utf8`); bytea, numbers, dates and the rest
  are bytes, never converted.
* Out: ErrorResponse and NoticeResponse fields, RowDescription column names and
  ParameterStatus values (:func:`cstring`); CommandComplete is ASCII and goes as it is.
  Result values (:func:`result_encoder`): every one in text format (those of types whose
  text is always ASCII, numbers, dates and times, uuid, bytea's hex, need nothing), in
  binary format the same text types as above (``pq_sendtext``). An error whose text the
  client encoding cannot hold is replaced by the 22P05 that says so
  (:func:`error_response`; PostgreSQL does the same); a notice, a column name or a value
  that cannot be converted fails its statement with that 22P05.
* COPY: text and CSV data are converted as a stream, before they are parsed (from) or
  after they are written (to), in the COPY's ``ENCODING`` when it has one; binary COPY
  converts the fields of the text types, in the client encoding (as PostgreSQL's send and
  receive functions do whatever ``ENCODING`` says).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from pgbarrier.errors import Notice, PgError
from pgbarrier.pgproto import messages as m
from pgbarrier.pgproto import types as pgt
from pgbarrier.pgproto.encodings import Codec

#: types whose binary form is their text (textsend / textrecv and their kin)
_TEXT_TYPES = frozenset({pgt.TEXT, pgt.VARCHAR, pgt.BPCHAR, pgt.NAME, pgt.UNKNOWN, pgt.JSON})
#: arrays of those, and of jsonb
_TEXT_ARRAYS = frozenset(a for e, a in pgt.ARRAY_OF.items() if e in _TEXT_TYPES or e == pgt.JSONB)
#: types whose text form is ASCII whatever the value (and DateStyle): nothing to convert
_ASCII_TEXT = frozenset({pgt.BOOL, pgt.INT2, pgt.INT4, pgt.INT8, pgt.OID, pgt.FLOAT4,
                         pgt.FLOAT8, pgt.NUMERIC, pgt.DATE, pgt.TIME, pgt.TIMETZ, pgt.TIMESTAMP,
                         pgt.TIMESTAMPTZ, pgt.INTERVAL, pgt.UUID, pgt.BYTEA})
_ASCII_TEXT = _ASCII_TEXT | frozenset(pgt.ARRAY_OF[e] for e in _ASCII_TEXT if e in pgt.ARRAY_OF)
_ARRAY_HEAD = struct.Struct("!iiI")
_I32 = struct.Struct("!i")

_WRITERS: dict[str, m.CString] = {}


def cstring(codec: Codec) -> m.CString:
    """A message string writer for ``codec`` (22P05 for a character it lacks)."""
    writer = _WRITERS.get(codec.name)
    if writer is None:
        encode = codec.encode

        def writer(value: str) -> bytes:
            if value.isascii():
                return value.encode("ascii").replace(b"\x00", b"") + b"\x00"
            return encode(value.replace("\x00", "")) + b"\x00"

        _WRITERS[codec.name] = writer
    return writer


def error_response(err: PgError, codec: Codec) -> bytes:
    """``err`` in the client encoding; when its text cannot be, the 22P05 saying why (as
    PostgreSQL reports it: the original error is lost)."""
    try:
        return m.error_response(err, cstring(codec))
    except PgError as failed:
        failed.severity = err.severity  # type: ignore[misc]  # a FATAL stays one
        return m.error_response(failed)


def notice_response(notice: Notice, codec: Codec) -> bytes:
    return m.notice_response(notice, cstring(codec))


def parameter_status(name: str, value: str, codec: Codec) -> bytes:
    return m.parameter_status(name, value, cstring(codec))


def notification_response(process_id: int, channel: str, payload: str, codec: Codec) -> bytes:
    return m.notification_response(process_id, channel, payload, cstring(codec))


def row_description(fields: list[m.FieldDescription], codec: Codec) -> bytes:
    return m.row_description(fields, cstring(codec))


# --------------------------------------------------------------------------- values


def _convert_array(raw: bytes, convert: Callable[[int, bytes], bytes]) -> bytes:
    """A binary array with each element's bytes converted (``convert(element oid, bytes)``);
    a malformed one is left as it is, for the type's own reading to refuse."""
    if len(raw) < 12:
        return raw
    ndim, _flags, elem = _ARRAY_HEAD.unpack_from(raw)
    if ndim <= 0 or ndim > 6 or len(raw) < 12 + 8 * ndim:
        return raw
    total = 1
    for i in range(ndim):
        total *= _I32.unpack_from(raw, 12 + 8 * i)[0]
    pos = 12 + 8 * ndim
    parts = [raw[:pos]]
    for _ in range(max(total, 0)):
        if pos + 4 > len(raw):
            return raw
        (n,) = _I32.unpack_from(raw, pos)
        pos += 4
        if n < 0:
            parts.append(b"\xff\xff\xff\xff")
            continue
        if pos + n > len(raw):
            return raw
        value = convert(elem, raw[pos:pos + n])
        parts.append(_I32.pack(len(value)))
        parts.append(value)
        pos += n
    parts.append(raw[pos:])
    return b"".join(parts)


def binary_to_utf8(oid: int, raw: bytes, codec: Codec) -> bytes:
    """A binary value from the client as its type reads it (module rules)."""
    if oid in _TEXT_TYPES or oid == 0:
        return codec.to_utf8(raw)
    if oid == pgt.JSONB:
        return raw[:1] + codec.to_utf8(raw[1:]) if raw[:1] == b"\x01" else raw
    if oid in _TEXT_ARRAYS:
        return _convert_array(raw, lambda elem, b: binary_to_utf8(elem, b, codec))
    return raw


def binary_from_utf8(oid: int, raw: bytes, codec: Codec) -> bytes:
    """A binary value for the client, as its type sends it (module rules)."""
    if oid in _TEXT_TYPES:
        return codec.from_utf8(raw)
    if oid == pgt.JSONB:
        return raw[:1] + codec.from_utf8(raw[1:])
    if oid in _TEXT_ARRAYS:
        return _convert_array(raw, lambda elem, b: binary_from_utf8(elem, b, codec))
    return raw


def param_to_utf8(raw: bytes | None, fmt: int, oid: int, codec: Codec) -> bytes | None:
    """A Bind value as its type reads it: text format always converted, binary where the
    type's receive function reads text."""
    if raw is None:
        return None
    if fmt == 0:
        return codec.to_utf8(raw)
    return binary_to_utf8(oid, raw, codec)


def converts_binary(oid: int) -> bool:
    """Whether a binary value of ``oid`` holds text the client encoding applies to."""
    return oid in _TEXT_TYPES or oid == pgt.JSONB or oid in _TEXT_ARRAYS


def result_converter(fmt: int, oid: int, codec: Codec) -> Callable[[bytes], bytes] | None:
    """What turns a result value's wire bytes in UTF-8 (format ``fmt``, type ``oid``) into
    the client's (module rules); None when they go as they are."""
    if fmt == 0:
        return None if oid in _ASCII_TEXT else codec.from_utf8
    if converts_binary(oid):
        return lambda raw: binary_from_utf8(oid, raw, codec)
    return None


def result_encoder(encode: Callable[[Any], bytes], fmt: int, oid: int,
                   codec: Codec) -> Callable[[Any], bytes]:
    """``encode`` (a value to its wire bytes in UTF-8) for a client in ``codec``."""
    convert = result_converter(fmt, oid, codec)
    if convert is None:
        return encode
    return lambda v: convert(encode(v))
