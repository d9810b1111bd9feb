"""PostgreSQL type OIDs, and how values cross the wire in text and binary format.

Rules this module keeps:

* Text output is what PostgreSQL prints with ``DateStyle=ISO, MDY`` and
  ``IntervalStyle=postgres``: booleans ``t``/``f``, timestamps with a space,
  ``timestamptz`` with its offset, arrays as ``{...}`` literals, bytea as ``\\x..``.
* Binary output is produced for the fixed-width scalar types, text, bytea and
  uuid; a client that asks binary for another type gets text-format-compatible
  bytes only where PostgreSQL's binary form is the same (json).
* Parameter decoding turns the client's bytes into Python values by the type
  OID the client sent; OID 0 (unspecified) stays text and is left to the backend
  to cast, as PostgreSQL does with ``unknown``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import struct
import uuid
from collections.abc import Callable
from typing import Any

from pgbarrier.errors import InvalidParameterValue, ProtocolViolation

BOOL, BYTEA, CHAR, NAME, INT8, INT2, INT4, TEXT, OID = 16, 17, 18, 19, 20, 21, 23, 25, 26
JSON, FLOAT4, FLOAT8, UNKNOWN = 114, 700, 701, 705
BPCHAR, VARCHAR, DATE, TIME, TIMESTAMP, TIMESTAMPTZ, INTERVAL = 1042, 1043, 1082, 1083, 1114, 1184, 1186
TIMETZ, NUMERIC, UUID, JSONB = 1266, 1700, 2950, 3802
ARRAY_OF = {BOOL: 1000, INT2: 1005, INT4: 1007, INT8: 1016, TEXT: 1009, VARCHAR: 1015,
            FLOAT4: 1021, FLOAT8: 1022, NUMERIC: 1231, DATE: 1182, TIMESTAMP: 1115,
            TIMESTAMPTZ: 1185, UUID: 2951, BYTEA: 1001, JSON: 199, JSONB: 3807,
            TIME: 1183, INTERVAL: 1187}
ELEMENT_OF = {v: k for k, v in ARRAY_OF.items()}

TYPE_SIZE = {BOOL: 1, INT2: 2, INT4: 4, INT8: 8, FLOAT4: 4, FLOAT8: 8, DATE: 4,
             TIME: 8, TIMESTAMP: 8, TIMESTAMPTZ: 8, INTERVAL: 16, UUID: 16, OID: 4}

_PG_EPOCH_DATE = dt.date(2000, 1, 1)
_PG_EPOCH = dt.datetime(2000, 1, 1)
_PG_EPOCH_TZ = dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)


# --------------------------------------------------------------------------- text out


def _interval_text(v: dt.timedelta) -> str:
    days, secs, micros = v.days, v.seconds, v.microseconds
    parts = []
    if days:
        parts.append(f"{days} day" + ("" if abs(days) == 1 else "s"))
    if secs or micros or not days:
        h, rem = divmod(secs, 3600)
        m, s = divmod(rem, 60)
        t = f"{h:02d}:{m:02d}:{s:02d}"
        if micros:
            t += f".{micros:06d}".rstrip("0")
        parts.append(t)
    return " ".join(parts)


def _tz_offset(v: dt.datetime) -> str:
    off = v.utcoffset() or dt.timedelta(0)
    sign = "+" if off >= dt.timedelta(0) else "-"
    total = abs(int(off.total_seconds()))
    h, rem = divmod(total, 3600)
    m, s = divmod(rem, 60)
    out = f"{sign}{h:02d}"
    if m or s:
        out += f":{m:02d}"
    if s:
        out += f":{s:02d}"
    return out


def _time_text(v: dt.time) -> str:
    return v.isoformat()


def _array_elem(v: Any) -> str:
    if v is None:
        return "NULL"
    s = to_text(v)
    if s == "" or any(c in s for c in '{},"\\ ') or s.upper() == "NULL":
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return s


def to_text(v: Any) -> str:
    """PostgreSQL's text output for a Python value."""
    if isinstance(v, bool):
        return "t" if v else "f"
    if isinstance(v, (int, str)):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return "NaN"
        if v in (float("inf"), float("-inf")):
            return "Infinity" if v > 0 else "-Infinity"
        return repr(v)
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, dt.datetime):
        base = v.replace(tzinfo=None).isoformat(sep=" ")
        return base + _tz_offset(v) if v.tzinfo is not None else base
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, dt.time):
        return _time_text(v)
    if isinstance(v, dt.timedelta):
        return _interval_text(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "\\x" + bytes(v).hex()
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, (list, tuple)):
        return "{" + ",".join(_array_elem(x) for x in v) + "}"
    if isinstance(v, dict):
        return json.dumps(v)
    return str(v)


# --------------------------------------------------------------------------- binary out


def _bin_int(fmt: str) -> Callable[[Any], bytes]:
    return lambda v: struct.pack(fmt, int(v))


_BINARY_OUT: dict[int, Callable[[Any], bytes]] = {
    BOOL: lambda v: b"\x01" if v else b"\x00",
    INT2: _bin_int("!h"),
    INT4: _bin_int("!i"),
    INT8: _bin_int("!q"),
    OID: _bin_int("!I"),
    FLOAT4: lambda v: struct.pack("!f", v),
    FLOAT8: lambda v: struct.pack("!d", v),
    TEXT: lambda v: to_text(v).encode(),
    VARCHAR: lambda v: to_text(v).encode(),
    NAME: lambda v: to_text(v).encode(),
    JSON: lambda v: to_text(v).encode(),
    JSONB: lambda v: b"\x01" + to_text(v).encode(),
    BYTEA: lambda v: bytes(v),
    UUID: lambda v: (v if isinstance(v, uuid.UUID) else uuid.UUID(str(v))).bytes,
    DATE: lambda v: struct.pack("!i", (v - _PG_EPOCH_DATE).days),
    TIMESTAMP: lambda v: struct.pack("!q", (v - _PG_EPOCH) // dt.timedelta(microseconds=1)),
    TIMESTAMPTZ: lambda v: struct.pack("!q", (v - _PG_EPOCH_TZ) // dt.timedelta(microseconds=1)),
    TIME: lambda v: struct.pack(
        "!q", ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
    ),
    INTERVAL: lambda v: struct.pack(
        "!qii", v.seconds * 1_000_000 + v.microseconds, v.days, 0
    ),
}


def encoder(type_oid: int, fmt: int) -> Callable[[Any], bytes]:
    """A function encoding one non-NULL value of ``type_oid`` in format ``fmt``."""
    if fmt == 1:
        enc = _BINARY_OUT.get(type_oid)
        if enc is not None:
            return enc
    return lambda v: to_text(v).encode("utf-8")


def supports_binary(type_oid: int) -> bool:
    return type_oid in _BINARY_OUT


# --------------------------------------------------------------------------- params in


def _parse_bool(s: str) -> bool:
    low = s.strip().lower()
    if low in ("t", "true", "yes", "on", "1", "y"):
        return True
    if low in ("f", "false", "no", "off", "0", "n"):
        return False
    raise InvalidParameterValue(f'invalid input syntax for type boolean: "{s}"', sqlstate="22P02")


def _parse_ts(s: str) -> dt.datetime:
    text = s.strip().replace(" ", "T", 1)
    if text.endswith(("+00", "-00")) or (len(text) > 3 and text[-3] in "+-" and text[-2:].isdigit()):
        text += ":00"
    return dt.datetime.fromisoformat(text)


_TEXT_IN: dict[int, Callable[[str], Any]] = {
    BOOL: _parse_bool,
    INT2: int,
    INT4: int,
    INT8: int,
    OID: int,
    FLOAT4: float,
    FLOAT8: float,
    NUMERIC: decimal.Decimal,
    DATE: dt.date.fromisoformat,
    TIMESTAMP: _parse_ts,
    TIMESTAMPTZ: _parse_ts,
    TIME: dt.time.fromisoformat,
    UUID: uuid.UUID,
    BYTEA: lambda s: bytes.fromhex(s[2:]) if s.startswith("\\x") else s.encode(),
}

_BINARY_IN: dict[int, Callable[[bytes], Any]] = {
    BOOL: lambda b: b != b"\x00",
    INT2: lambda b: struct.unpack("!h", b)[0],
    INT4: lambda b: struct.unpack("!i", b)[0],
    INT8: lambda b: struct.unpack("!q", b)[0],
    OID: lambda b: struct.unpack("!I", b)[0],
    FLOAT4: lambda b: struct.unpack("!f", b)[0],
    FLOAT8: lambda b: struct.unpack("!d", b)[0],
    TEXT: lambda b: b.decode(),
    VARCHAR: lambda b: b.decode(),
    NAME: lambda b: b.decode(),
    UNKNOWN: lambda b: b.decode(),
    JSON: lambda b: b.decode(),
    JSONB: lambda b: b[1:].decode(),
    BYTEA: bytes,
    UUID: lambda b: uuid.UUID(bytes=b),
    DATE: lambda b: _PG_EPOCH_DATE + dt.timedelta(days=struct.unpack("!i", b)[0]),
    TIMESTAMP: lambda b: _PG_EPOCH + dt.timedelta(microseconds=struct.unpack("!q", b)[0]),
    TIMESTAMPTZ: lambda b: _PG_EPOCH_TZ + dt.timedelta(microseconds=struct.unpack("!q", b)[0]),
}


def decode_param(raw: bytes | None, type_oid: int, fmt: int) -> Any:
    """A Bind parameter as a Python value for the backend."""
    if raw is None:
        return None
    if fmt == 1:
        dec = _BINARY_IN.get(type_oid)
        if dec is None:
            raise ProtocolViolation(
                f"binary format for parameters of type {type_oid} is not supported",
                severity="ERROR",
            )
        try:
            return dec(raw)
        except (struct.error, ValueError) as exc:
            raise InvalidParameterValue(
                f"incorrect binary data format in bind parameter", sqlstate="22P03"
            ) from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolViolation('invalid byte sequence for encoding "UTF8"', severity="ERROR") from exc
    conv = _TEXT_IN.get(type_oid)
    if conv is None:
        return text
    try:
        return conv(text)
    except (ValueError, decimal.InvalidOperation) as exc:
        raise InvalidParameterValue(
            f'invalid input syntax for type {type_oid}: "{text}"', sqlstate="22P02"
        ) from exc
