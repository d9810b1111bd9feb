"""PostgreSQL type OIDs, and how values cross the wire in text and binary format.

Rules this module keeps:

* Text output is what PostgreSQL 15 prints with ``DateStyle=ISO, MDY``,
  ``IntervalStyle=postgres``, ``TimeZone=UTC`` and ``extra_float_digits=1``:
  booleans ``t``/``f``; floats in the shortest form that reads back exactly
  (fixed notation for decimal exponents -4..14, else ``1e+15``; ``real`` with
  float4 precision, exponent -4..5); ``Infinity``/``NaN``; numerics never in
  exponent form; timestamps with a space and trailing fractional zeros trimmed;
  ``timestamptz`` printed in the zone the value carries (DuckDB gives values in the
  session's TimeZone) with its offset (``+09``, ``+05:30``; ``+00`` in UTC); intervals as
  ``1 year 2 mons 3 days 04:05:06.5``; bytea as ``\\x..``; arrays as ``{...}``
  literals (nested lists are multi-dimensional arrays; elements quoted as
  PostgreSQL quotes them); jsonb in PostgreSQL's canonical form
  (:func:`pgbarrier.pgproto.jsonb.jsonb_text`: keys sorted and unique, ``", "`` and
  ``": "``), whatever JSON text the backend holds; json as its text.
* Binary output is PostgreSQL's ``*send`` format for every type listed in
  ``_BINARY_OUT``: bool, int2/4/8, oid, float4/8, numeric (base-10000 digits
  with weight, sign and dscale), text/varchar/name/bpchar/char, bytea, date,
  time, timetz, timestamp, timestamptz (microseconds since 2000-01-01),
  interval (microseconds, days, months), uuid, json, jsonb (version byte 1) and
  one- or multi-dimensional arrays of these (PostgreSQL's array format: ndim,
  has-null flag, element OID, dimensions with lower bound 1, then each element
  length-prefixed, -1 for NULL). Any other OID has no binary form here
  (:func:`supports_binary` is False) and the session sends it in text.
* Decoding (Bind parameters, and upstream text turned binary) is the inverse,
  for both formats: :func:`decode_text` and :func:`decode_binary`. An interval
  with months decodes to :class:`Interval` (Python's ``timedelta`` has no
  months); without months it decodes to ``timedelta``. Json/jsonb decode to
  their text. Arrays decode to (nested) lists.
* :func:`decode_param` turns a Bind parameter into a Python value by the type
  OID the client sent (or the one pgbarrier inferred). OID 0 (unspecified) in
  text format stays a ``str`` for the backend to cast, as PostgreSQL treats
  ``unknown``. A text parameter of a known OID that this module cannot parse
  (PostgreSQL accepts spellings this module does not, e.g. ``infinity`` or BC
  dates) is also left as its text for the backend to cast or reject; malformed
  binary data is 22P03, as in PostgreSQL.
* Known limits of Python values: dates and timestamps outside years 1..9999 and ``infinity``
  cannot be represented (a DuckDB ``infinity`` arrives as year 9999: the columnar path,
  :mod:`pgbarrier.pgproto.columnar`, prints it as PostgreSQL does, and keeps a result
  holding one off this module's path); DuckDB hands intervals over as ``timedelta`` with
  months folded into 30-day days.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import re
import struct
import uuid
from collections.abc import Callable
from typing import Any, NamedTuple

from pgbarrier.errors import InvalidParameterValue, PgError
from pgbarrier.pgproto.jsonb import jsonb_text

BOOL, BYTEA, CHAR, NAME, INT8, INT2, INT4, TEXT, OID = 16, 17, 18, 19, 20, 21, 23, 25, 26
JSON, FLOAT4, FLOAT8, UNKNOWN = 114, 700, 701, 705
BPCHAR, VARCHAR, DATE, TIME, TIMESTAMP, TIMESTAMPTZ, INTERVAL = 1042, 1043, 1082, 1083, 1114, 1184, 1186
TIMETZ, NUMERIC, UUID, JSONB = 1266, 1700, 2950, 3802
INT2VECTOR, OIDVECTOR = 22, 30
ARRAY_OF = {BOOL: 1000, INT2: 1005, INT4: 1007, INT8: 1016, TEXT: 1009, VARCHAR: 1015,
            FLOAT4: 1021, FLOAT8: 1022, NUMERIC: 1231, DATE: 1182, TIMESTAMP: 1115,
            TIMESTAMPTZ: 1185, UUID: 2951, BYTEA: 1001, JSON: 199, JSONB: 3807,
            TIME: 1183, INTERVAL: 1187, TIMETZ: 1270, NAME: 1003, CHAR: 1002,
            BPCHAR: 1014, OID: 1028}
ELEMENT_OF = {v: k for k, v in ARRAY_OF.items()}

TYPE_SIZE = {BOOL: 1, INT2: 2, INT4: 4, INT8: 8, FLOAT4: 4, FLOAT8: 8, DATE: 4,
             TIME: 8, TIMETZ: 12, TIMESTAMP: 8, TIMESTAMPTZ: 8, INTERVAL: 16, UUID: 16, OID: 4,
             CHAR: 1, NAME: 64, 2205: 4, 2206: 4}  # regclass, regtype (OIDs)

#: type names, for error messages worded as PostgreSQL's
TYPE_NAME = {BOOL: "boolean", BYTEA: "bytea", INT2: "smallint", INT4: "integer", INT8: "bigint",
             FLOAT4: "real", FLOAT8: "double precision", NUMERIC: "numeric", TEXT: "text",
             VARCHAR: "character varying", DATE: "date", TIME: "time without time zone",
             TIMETZ: "time with time zone", TIMESTAMP: "timestamp without time zone",
             TIMESTAMPTZ: "timestamp with time zone", INTERVAL: "interval", UUID: "uuid",
             JSON: "json", JSONB: "jsonb", OID: "oid"}

_PG_EPOCH_DATE = dt.date(2000, 1, 1)
_PG_EPOCH = dt.datetime(2000, 1, 1)
_PG_EPOCH_TZ = dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)
_UTC = dt.timezone.utc
_US = dt.timedelta(microseconds=1)


class Interval(NamedTuple):
    """A PostgreSQL interval with its three fields (for values that have months)."""

    months: int = 0
    days: int = 0
    microseconds: int = 0

    @classmethod
    def of(cls, v: Interval | dt.timedelta) -> Interval:
        if isinstance(v, Interval):
            return v
        # one sign for days and time, as PostgreSQL keeps '-1 hour' (not '-1 days +23:00')
        if v < dt.timedelta(0):
            neg = -v
            return cls(0, -neg.days, -(neg.seconds * 1_000_000 + neg.microseconds))
        return cls(0, v.days, v.seconds * 1_000_000 + v.microseconds)

    def simplest(self) -> Interval | dt.timedelta:
        """``timedelta`` when there are no months, else the interval itself."""
        if self.months:
            return self
        return dt.timedelta(days=self.days, microseconds=self.microseconds)


# --------------------------------------------------------------------------- text out


def _frac(micros: int) -> str:
    return f".{micros:06d}".rstrip("0") if micros else ""


def _hms(total_us: int) -> str:
    sign = "-" if total_us < 0 else ""
    total_us = abs(total_us)
    secs, us = divmod(total_us, 1_000_000)
    h, rem = divmod(secs, 3600)
    m, s = divmod(rem, 60)
    return f"{sign}{h:02d}:{m:02d}:{s:02d}{_frac(us)}"


def _plural(n: int, unit: str) -> str:
    return f"{n} {unit}" + ("" if n == 1 else "s")


def interval_text(v: Interval | dt.timedelta) -> str:
    """IntervalStyle ``postgres``: ``1 year 2 mons -3 days +04:05:06``, as PostgreSQL's
    ``EncodeInterval``: a positive field after a negative one is marked ``+``."""
    iv = Interval.of(v)
    years, months = divmod(abs(iv.months), 12)
    msign = -1 if iv.months < 0 else 1
    parts: list[str] = []
    before_negative = False
    for value, unit in ((msign * years, "year"), (msign * months, "mon"), (iv.days, "day")):
        if value:
            parts.append(("+" if before_negative and value > 0 else "") + _plural(value, unit))
            before_negative = value < 0
    if iv.microseconds or not parts:
        t = _hms(iv.microseconds)
        if before_negative and iv.microseconds > 0:
            t = "+" + t
        parts.append(t)
    return " ".join(parts)


def _tz_offset(off: dt.timedelta | None) -> str:
    off = off or dt.timedelta(0)
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


def _date_text(v: dt.date) -> str:
    return f"{v.year:04d}-{v.month:02d}-{v.day:02d}"


def _time_text(v: dt.time) -> str:
    base = f"{v.hour:02d}:{v.minute:02d}:{v.second:02d}{_frac(v.microsecond)}"
    return base + _tz_offset(v.utcoffset()) if v.tzinfo is not None else base


def _datetime_text(v: dt.datetime) -> str:
    if v.tzinfo is not None:  # in its own zone (the session's, from DuckDB), as PostgreSQL
        return f"{_date_text(v)} {_time_text(v.time())}{_tz_offset(v.utcoffset())}"
    return f"{_date_text(v)} {_time_text(v.time())}"


def _shortest_digits(v: float, float4: bool) -> tuple[str, int]:
    """Shortest decimal digits that read back as ``v`` (``v > 0``; as float4 when asked),
    and the decimal exponent of the first digit."""
    if float4:
        target = struct.unpack("!f", struct.pack("!f", v))[0]
        for p in range(9):
            s = f"{target:.{p}e}"
            try:
                if struct.unpack("!f", struct.pack("!f", float(s)))[0] == target:
                    break
            except OverflowError:  # rounded past float4's largest (3.4028235e+38)
                continue
        mant, exp = s.split("e")
        return mant.replace(".", "").rstrip("0") or "0", int(exp)
    _, digits, e = decimal.Decimal(repr(v)).as_tuple()
    ds = "".join(map(str, digits))
    return ds.rstrip("0") or "0", len(ds) + int(e) - 1


def float_text(v: float, float4: bool = False) -> str:
    """PostgreSQL's ``float8out``/``float4out`` with ``extra_float_digits`` > 0."""
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:
        return "-0" if str(v).startswith("-") else "0"
    sign = "-" if v < 0 else ""
    digits, exp = _shortest_digits(abs(v), float4)
    if -4 <= exp < (6 if float4 else 15):
        if exp >= 0:
            if len(digits) <= exp + 1:
                return sign + digits + "0" * (exp + 1 - len(digits))
            return sign + digits[: exp + 1] + "." + digits[exp + 1:]
        return sign + "0." + "0" * (-exp - 1) + digits
    mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{mant}e{'-' if exp < 0 else '+'}{abs(exp):02d}"


_EXACT = decimal.Context(prec=200)


def natural_numeric(value: Any) -> Any:
    """``value`` without trailing fractional zeros (``Decimal('1.5000') -> 1.5``, ``10.00
    -> 10``, exactly: no digit is rounded): how an unconstrained numeric stored at a fixed
    scale prints (``backends.duckdb_numeric``)."""
    if not isinstance(value, decimal.Decimal) or not value.is_finite():
        return value
    if value.as_tuple().exponent >= 0:  # type: ignore[operator]
        return value
    if not value:
        return decimal.Decimal(0)
    shown = value.normalize(_EXACT)
    if shown.as_tuple().exponent > 0:  # type: ignore[operator]
        shown = shown.quantize(decimal.Decimal(1), context=_EXACT)
    return shown


def _numeric_text(v: Any) -> str:
    if isinstance(v, decimal.Decimal):
        if v.is_nan():
            return "NaN"
        if v.is_infinite():
            return "Infinity" if v > 0 else "-Infinity"
        return format(v, "f")
    if isinstance(v, float):
        return _numeric_text(decimal.Decimal(repr(v)))
    return str(v)


def _array_elem(v: Any, elem_oid: int | None) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, (list, tuple)):
        return _array_text(v, elem_oid)
    s = to_text(v, elem_oid)
    if s == "" or s.upper() == "NULL" or any(c in s for c in '{},"\\ \t\n\r\f\v'):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return s


def _array_text(v: Any, elem_oid: int | None) -> str:
    return "{" + ",".join(_array_elem(x, elem_oid) for x in v) + "}"


def to_text(v: Any, type_oid: int | None = None) -> str:
    """PostgreSQL's text output for a Python value (of column type ``type_oid`` if known)."""
    if type_oid == JSONB and isinstance(v, str):
        return jsonb_text(v)
    if isinstance(v, bool):
        return "t" if v else "f"
    if isinstance(v, str):
        return v
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if type_oid == NUMERIC:
            return _numeric_text(v)
        return float_text(v, type_oid == FLOAT4)
    if isinstance(v, decimal.Decimal):
        return _numeric_text(v)
    if isinstance(v, dt.datetime):
        return _datetime_text(v)
    if isinstance(v, dt.date):
        return _date_text(v)
    if isinstance(v, dt.time):
        return _time_text(v)
    if isinstance(v, (dt.timedelta, Interval)):
        return interval_text(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "\\x" + bytes(v).hex()
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, (list, tuple)):
        if type_oid in (INT2VECTOR, OIDVECTOR):  # catalog vectors: "1 2", not "{1,2}"
            return " ".join("" if x is None else str(x) for x in v)
        return _array_text(v, ELEMENT_OF.get(type_oid or 0, type_oid))
    if isinstance(v, dict):
        return json.dumps(v)
    return str(v)


# --------------------------------------------------------------------------- binary out


def _bin_int(fmt: str) -> Callable[[Any], bytes]:
    s = struct.Struct(fmt)
    return lambda v: s.pack(int(v))


def _as_decimal(v: Any) -> decimal.Decimal:
    if isinstance(v, decimal.Decimal):
        return v
    if isinstance(v, float):
        return decimal.Decimal(repr(v))
    return decimal.Decimal(v)


_NUMERIC_POS, _NUMERIC_NEG, _NUMERIC_NAN = 0x0000, 0x4000, 0xC000
_NUMERIC_PINF, _NUMERIC_NINF = 0xD000, 0xF000


def numeric_send(v: Any) -> bytes:
    """PostgreSQL's binary numeric: ndigits, weight, sign, dscale, base-10000 digits."""
    d = _as_decimal(v)
    if d.is_nan():
        return struct.pack("!hhHh", 0, 0, _NUMERIC_NAN, 0)
    if d.is_infinite():
        return struct.pack("!hhHh", 0, 0, _NUMERIC_PINF if d > 0 else _NUMERIC_NINF, 0)
    sign, digits, exp = d.as_tuple()
    exp = int(exp)
    dscale = max(0, -exp)
    ds = "".join(map(str, digits))
    if exp > 0:
        ds += "0" * exp
        exp = 0
    int_part = ds[: len(ds) + exp] if exp < 0 else ds
    frac_part = ds[len(ds) + exp:] if exp < 0 else ""
    if len(int_part) < 0:
        int_part = ""
    if exp < 0 and len(ds) < -exp:  # more fractional digits than digits: leading zeros
        frac_part = "0" * (-exp - len(ds)) + ds
        int_part = ""
    int_part = int_part.lstrip("0")
    int_part = "0" * (-len(int_part) % 4) + int_part
    frac_part = frac_part + "0" * (-len(frac_part) % 4)
    groups = [int(int_part[i:i + 4]) for i in range(0, len(int_part), 4)]
    weight = len(groups) - 1
    groups += [int(frac_part[i:i + 4]) for i in range(0, len(frac_part), 4)]
    # strip leading zero groups (each lowers the weight) and trailing zero groups
    while groups and groups[0] == 0:
        groups.pop(0)
        weight -= 1
    while groups and groups[-1] == 0:
        groups.pop()
    if not groups:
        weight = 0
    return struct.pack(f"!hhHh{len(groups)}H", len(groups), weight,
                       _NUMERIC_NEG if sign else _NUMERIC_POS, dscale, *groups)


def numeric_recv(b: bytes) -> decimal.Decimal:
    ndigits, weight, sign, dscale = struct.unpack("!hhHh", b[:8])
    if sign == _NUMERIC_NAN:
        return decimal.Decimal("NaN")
    if sign == _NUMERIC_PINF:
        return decimal.Decimal("Infinity")
    if sign == _NUMERIC_NINF:
        return decimal.Decimal("-Infinity")
    if sign not in (_NUMERIC_POS, _NUMERIC_NEG) or len(b) != 8 + 2 * ndigits or ndigits < 0:
        raise ValueError("invalid numeric")
    groups = struct.unpack(f"!{ndigits}H", b[8:])
    if any(g > 9999 for g in groups):
        raise ValueError("invalid numeric digit")
    ds = "".join(f"{g:04d}" for g in groups) or "0"
    # the value is ds * 10000^(weight - ndigits + 1)
    exp10 = 4 * (weight - ndigits + 1)
    value = decimal.Decimal(f"{'-' if sign == _NUMERIC_NEG else ''}{ds}E{exp10}")
    with decimal.localcontext() as ctx:
        ctx.prec = max(len(ds) + abs(exp10) + dscale + 5, 28)
        return value.quantize(decimal.Decimal(1).scaleb(-dscale))


def _micros_of_day(v: dt.time) -> int:
    return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond


def _interval_send(v: Any) -> bytes:
    iv = Interval.of(v)
    return struct.pack("!qii", iv.microseconds, iv.days, iv.months)


def _timetz_send(v: dt.time) -> bytes:
    off = v.utcoffset() or dt.timedelta(0)
    return struct.pack("!qi", _micros_of_day(v), -int(off.total_seconds()))


def _timestamp_send(v: dt.datetime) -> bytes:
    if v.tzinfo is not None:
        v = v.astimezone(_UTC).replace(tzinfo=None)
    return struct.pack("!q", (v - _PG_EPOCH) // _US)


def _timestamptz_send(v: dt.datetime) -> bytes:
    if v.tzinfo is None:
        v = v.replace(tzinfo=_UTC)
    return struct.pack("!q", (v - _PG_EPOCH_TZ) // _US)


def _text_send(v: Any) -> bytes:
    return to_text(v).encode("utf-8")


def _float4_send(v: Any) -> bytes:
    return struct.pack("!f", float(v))


def _float8_send(v: Any) -> bytes:
    return struct.pack("!d", float(v))


def _json_text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


_BINARY_OUT: dict[int, Callable[[Any], bytes]] = {
    BOOL: lambda v: b"\x01" if v else b"\x00",
    INT2: _bin_int("!h"),
    INT4: _bin_int("!i"),
    INT8: _bin_int("!q"),
    OID: _bin_int("!I"),
    FLOAT4: _float4_send,
    FLOAT8: _float8_send,
    NUMERIC: numeric_send,
    TEXT: _text_send,
    VARCHAR: _text_send,
    NAME: _text_send,
    BPCHAR: _text_send,
    CHAR: _text_send,
    UNKNOWN: _text_send,
    JSON: lambda v: _json_text(v).encode("utf-8"),
    JSONB: lambda v: b"\x01" + jsonb_text(_json_text(v)).encode("utf-8"),
    BYTEA: lambda v: bytes(v) if isinstance(v, (bytes, bytearray, memoryview)) else _text_send(v),
    UUID: lambda v: (v if isinstance(v, uuid.UUID) else uuid.UUID(str(v))).bytes,
    DATE: lambda v: struct.pack("!i", ((v.date() if isinstance(v, dt.datetime) else v)
                                       - _PG_EPOCH_DATE).days),
    TIMESTAMP: _timestamp_send,
    TIMESTAMPTZ: _timestamptz_send,
    TIME: lambda v: struct.pack("!q", _micros_of_day(v)),
    TIMETZ: _timetz_send,
    INTERVAL: _interval_send,
}


def _array_dims(v: Any) -> list[int]:
    dims = []
    while isinstance(v, (list, tuple)):
        dims.append(len(v))
        if not v:
            break
        v = v[0]
    return dims


def _flatten(v: Any, depth: int, out: list[Any]) -> None:
    for x in v:
        if depth > 1:
            if not isinstance(x, (list, tuple)):
                raise ValueError("multidimensional arrays must have sub-arrays with matching dimensions")
            _flatten(x, depth - 1, out)
        else:
            out.append(x)


def _array_send(elem_oid: int) -> Callable[[Any], bytes]:
    enc = _BINARY_OUT[elem_oid]

    def send(v: Any) -> bytes:
        dims = _array_dims(v)
        if not dims or dims == [0]:
            return struct.pack("!iiI", 0, 0, elem_oid)
        flat: list[Any] = []
        _flatten(v, len(dims), flat)
        expected = 1
        for d in dims:
            expected *= d
        if len(flat) != expected:
            raise ValueError("multidimensional arrays must have sub-arrays with matching dimensions")
        parts = [struct.pack("!iiI", len(dims), 1 if any(x is None for x in flat) else 0, elem_oid)]
        parts += [struct.pack("!ii", d, 1) for d in dims]
        for x in flat:
            if x is None:
                parts.append(b"\xff\xff\xff\xff")
            else:
                b = enc(x)
                parts.append(struct.pack("!i", len(b)))
                parts.append(b)
        return b"".join(parts)
    return send


for _elem, _arr in ARRAY_OF.items():
    _BINARY_OUT[_arr] = _array_send(_elem)


def _text_encoder(type_oid: int) -> Callable[[Any], bytes]:
    if type_oid in (FLOAT4, NUMERIC, INT2VECTOR, OIDVECTOR, JSONB) or type_oid in ELEMENT_OF:
        return lambda v: to_text(v, type_oid).encode("utf-8")
    return lambda v: to_text(v).encode("utf-8")


#: time types whose type modifier is a precision of fractional seconds
_PRECISE = frozenset({TIMESTAMP, TIMESTAMPTZ, TIME, 1266})


def _rounded(v: Any, digits: int) -> Any:
    """``v`` (a datetime or time) rounded to ``digits`` fractional digits of a second,
    half away from zero as PostgreSQL rounds (``time`` past midnight stays 24:00 short)."""
    micros = getattr(v, "microsecond", None)
    if not micros:
        return v
    step = 10 ** (6 - digits)
    down = micros - micros % step
    up = micros % step * 2 >= step
    if isinstance(v, dt.datetime):
        return v.replace(microsecond=0) + dt.timedelta(microseconds=down + (step if up else 0))
    if isinstance(v, dt.time):
        total = ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + down + (step if up else 0)
        if total >= 86_400_000_000:
            return v
        return v.replace(hour=total // 3_600_000_000, minute=total // 60_000_000 % 60,
                         second=total // 1_000_000 % 60, microsecond=total % 1_000_000)
    return v


def encoder(type_oid: int, fmt: int, styles: tuple[str, str] | None = None,
            typmod: int = -1) -> Callable[[Any], bytes]:
    """A function encoding one non-NULL value of ``type_oid`` in format ``fmt``;
    ``styles``: the session's (DateStyle, IntervalStyle) when not the default. A
    ``char(n)`` value (``bpchar`` with ``typmod`` n + 4) is blank-padded to ``n``
    characters, as PostgreSQL stores and prints it (a backend may keep it unpadded)."""
    if type_oid == BPCHAR and typmod > 4:
        width = typmod - 4
        return lambda v: str(v).ljust(width).encode("utf-8")
    if type_oid in _PRECISE and 0 <= typmod < 6:
        # a declared precision (timestamp(2)...) that the backend may keep finer: PostgreSQL
        # rounds to it
        plain = encoder(type_oid, fmt, styles)
        return lambda v: plain(_rounded(v, typmod))
    if fmt == 1:
        enc = _BINARY_OUT.get(type_oid)
        if enc is not None:
            return enc
    if styles is not None:
        from pgbarrier.pgproto.datestyle import text_encoder

        styled = text_encoder(type_oid, *styles)
        if styled is not None:
            return styled
    return _text_encoder(type_oid)


def encode_binary(type_oid: int, v: Any) -> bytes:
    return _BINARY_OUT[type_oid](v)


def supports_binary(type_oid: int) -> bool:
    return type_oid in _BINARY_OUT


# --------------------------------------------------------------------------- text in


def _parse_bool(s: str) -> bool:
    low = s.strip().lower()
    if low in ("t", "true", "yes", "on", "1", "y", "tr", "tru", "ye"):
        return True
    if low in ("f", "false", "no", "off", "0", "n", "fa", "fal", "fals", "of"):
        return False
    raise ValueError(s)


def _parse_float(s: str) -> float:
    low = s.strip().lower()
    if low in ("infinity", "+infinity", "inf", "+inf"):
        return float("inf")
    if low in ("-infinity", "-inf"):
        return float("-inf")
    if low == "nan":
        return float("nan")
    return float(low)


def _parse_numeric(s: str) -> decimal.Decimal:
    low = s.strip()
    if low.lower() in ("infinity", "+infinity", "inf"):
        return decimal.Decimal("Infinity")
    if low.lower() in ("-infinity", "-inf"):
        return decimal.Decimal("-Infinity")
    return decimal.Decimal(low)


_TZ_SHORT = re.compile(r"([+-]\d{2})$")


def _iso(s: str) -> str:
    text = s.strip()
    if _TZ_SHORT.search(text) and len(text) > 8:
        text += ":00"
    return text


def _parse_date(s: str) -> dt.date:
    return dt.date.fromisoformat(s.strip())


def _parse_ts(s: str) -> dt.datetime:
    return dt.datetime.fromisoformat(_iso(s))


def _parse_tstz(s: str) -> dt.datetime:
    v = dt.datetime.fromisoformat(_iso(s))
    return v if v.tzinfo is not None else v.replace(tzinfo=_UTC)


def _parse_time(s: str) -> dt.time:
    v = dt.time.fromisoformat(_iso(s))
    return v.replace(tzinfo=None)


def _parse_timetz(s: str) -> dt.time:
    v = dt.time.fromisoformat(_iso(s))
    return v if v.tzinfo is not None else v.replace(tzinfo=_UTC)


def _parse_bytea(s: str) -> bytes:
    if s.startswith("\\x"):
        return bytes.fromhex(s[2:])
    out = bytearray()
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
        elif s[i + 1: i + 2] == "\\":
            out.append(0x5C)
            i += 2
        elif re.fullmatch(r"[0-3][0-7]{2}", s[i + 1: i + 4]):
            out.append(int(s[i + 1: i + 4], 8))
            i += 4
        else:
            raise ValueError("invalid input syntax for type bytea")
    return bytes(out)


_IV_UNITS = {
    "millennium": ("m", 12000), "millennia": ("m", 12000), "millenniums": ("m", 12000),
    "century": ("m", 1200), "centuries": ("m", 1200), "decade": ("m", 120), "decades": ("m", 120),
    "year": ("m", 12), "years": ("m", 12), "y": ("m", 12), "yr": ("m", 12), "yrs": ("m", 12),
    "mon": ("m", 1), "mons": ("m", 1), "month": ("m", 1), "months": ("m", 1),
    "week": ("d", 7), "weeks": ("d", 7), "w": ("d", 7),
    "day": ("d", 1), "days": ("d", 1), "d": ("d", 1),
    "hour": ("u", 3_600_000_000), "hours": ("u", 3_600_000_000), "h": ("u", 3_600_000_000),
    "hr": ("u", 3_600_000_000), "hrs": ("u", 3_600_000_000),
    "minute": ("u", 60_000_000), "minutes": ("u", 60_000_000), "min": ("u", 60_000_000),
    "mins": ("u", 60_000_000), "m": ("u", 60_000_000),
    "second": ("u", 1_000_000), "seconds": ("u", 1_000_000), "sec": ("u", 1_000_000),
    "secs": ("u", 1_000_000), "s": ("u", 1_000_000),
    "millisecond": ("u", 1000), "milliseconds": ("u", 1000), "ms": ("u", 1000),
    "microsecond": ("u", 1), "microseconds": ("u", 1), "us": ("u", 1),
}
_IV_TOKEN = re.compile(
    r"\s*(?:(?P<time>[+-]?\d+:\d{1,2}(?::\d{1,2}(?:\.\d+)?)?)"
    r"|(?P<num>[+-]?\d+(?:\.\d+)?)\s*(?P<unit>[a-z]+))\s*,?", re.I)
_ISO_IV = re.compile(
    r"^P(?:(?P<y>-?\d+(?:\.\d+)?)Y)?(?:(?P<mo>-?\d+(?:\.\d+)?)M)?(?:(?P<w>-?\d+(?:\.\d+)?)W)?"
    r"(?:(?P<d>-?\d+(?:\.\d+)?)D)?(?:T(?:(?P<h>-?\d+(?:\.\d+)?)H)?(?:(?P<mi>-?\d+(?:\.\d+)?)M)?"
    r"(?:(?P<s>-?\d+(?:\.\d+)?)S)?)?$", re.I)


def _time_us(token: str) -> int:
    sign = -1 if token.startswith("-") else 1
    parts = token.lstrip("+-").split(":")
    h, m = int(parts[0]), int(parts[1])
    sec = decimal.Decimal(parts[2]) if len(parts) > 2 else decimal.Decimal(0)
    return sign * (h * 3_600_000_000 + m * 60_000_000 + int(sec * 1_000_000))


def parse_interval(s: str) -> Interval:
    """PostgreSQL interval input: ``postgres``/``postgres_verbose`` styles, ``HH:MM:SS``,
    and ISO 8601 ``P1Y2M3DT4H5M6S``."""
    text = s.strip()
    m = _ISO_IV.match(text)
    if m and text.upper() != "P":
        def num(key: str) -> decimal.Decimal:
            return decimal.Decimal(m.group(key) or 0)
        months = num("y") * 12 + num("mo")
        days = num("w") * 7 + num("d")
        us = (num("h") * 3600 + num("mi") * 60 + num("s")) * 1_000_000
        return Interval(int(months), int(days), int(us))
    ago = False
    if text.startswith("@"):
        text = text[1:]
    if text.lower().endswith(" ago"):
        ago, text = True, text[:-4]
    months = days = 0
    us = 0
    pos = 0
    found = False
    while pos < len(text):
        tm = _IV_TOKEN.match(text, pos)
        if not tm or tm.end() == pos:
            raise ValueError(f"invalid input syntax for type interval: {s!r}")
        pos = tm.end()
        found = True
        if tm.group("time"):
            us += _time_us(tm.group("time"))
            continue
        unit = _IV_UNITS.get(tm.group("unit").lower())
        if unit is None:
            raise ValueError(f"invalid interval unit {tm.group('unit')!r}")
        qty = decimal.Decimal(tm.group("num"))
        kind, scale = unit
        if kind == "m":
            whole = int(qty * scale)
            months += whole
            days += int((qty * scale - whole) * 30)
        elif kind == "d":
            whole = int(qty * scale)
            days += whole
            us += int((qty * scale - whole) * 86_400_000_000)
        else:
            us += int(qty * scale)
    if not found:
        raise ValueError(f"invalid input syntax for type interval: {s!r}")
    if ago:
        months, days, us = -months, -days, -us
    return Interval(months, days, us)


def _parse_interval_value(s: str) -> Interval | dt.timedelta:
    return parse_interval(s).simplest()


def _parse_json(s: str) -> str:
    json.loads(s)  # validate, keep the text
    return s


def parse_array(s: str, elem: Callable[[str], Any]) -> list[Any]:
    """A PostgreSQL array literal (``{1,2,NULL}``, ``{{1,2},{3,4}}``, ``[0:1]={...}``)."""
    text = s.strip()
    if text.startswith("["):  # explicit bounds: ignored, PostgreSQL's lower bound 1 assumed
        eq = text.find("=")
        if eq < 0:
            raise ValueError("malformed array literal")
        text = text[eq + 1:].strip()
    pos = 0

    def parse_level() -> list[Any]:
        nonlocal pos
        if text[pos:pos + 1] != "{":
            raise ValueError("malformed array literal")
        pos += 1
        out: list[Any] = []
        if text[pos:pos + 1] == "}":
            pos += 1
            return out
        while True:
            while pos < len(text) and text[pos].isspace():
                pos += 1
            c = text[pos:pos + 1]
            if c == "{":
                out.append(parse_level())
            elif c == '"':
                pos += 1
                buf = []
                while True:
                    if pos >= len(text):
                        raise ValueError("malformed array literal")
                    ch = text[pos]
                    if ch == "\\":
                        buf.append(text[pos + 1: pos + 2])
                        pos += 2
                    elif ch == '"':
                        pos += 1
                        break
                    else:
                        buf.append(ch)
                        pos += 1
                out.append(elem("".join(buf)))
            else:
                start = pos
                buf = []
                while pos < len(text) and text[pos] not in ",}":
                    if text[pos] == "\\":
                        buf.append(text[pos + 1: pos + 2])
                        pos += 2
                    else:
                        buf.append(text[pos])
                        pos += 1
                raw = "".join(buf).strip()
                if not raw and start == pos:
                    raise ValueError("malformed array literal")
                out.append(None if raw.upper() == "NULL" else elem(raw))
            while pos < len(text) and text[pos].isspace():
                pos += 1
            c = text[pos:pos + 1]
            pos += 1
            if c == "}":
                return out
            if c != ",":
                raise ValueError("malformed array literal")

    result = parse_level()
    if text[pos:].strip():
        raise ValueError("malformed array literal")
    return result


_TEXT_IN: dict[int, Callable[[str], Any]] = {
    BOOL: _parse_bool,
    INT2: int,
    INT4: int,
    INT8: int,
    OID: int,
    FLOAT4: _parse_float,
    FLOAT8: _parse_float,
    NUMERIC: _parse_numeric,
    TEXT: str,
    VARCHAR: str,
    NAME: str,
    BPCHAR: str,
    CHAR: str,
    UNKNOWN: str,
    DATE: _parse_date,
    TIMESTAMP: _parse_ts,
    TIMESTAMPTZ: _parse_tstz,
    TIME: _parse_time,
    TIMETZ: _parse_timetz,
    INTERVAL: _parse_interval_value,
    UUID: uuid.UUID,
    JSON: _parse_json,
    JSONB: _parse_json,
    BYTEA: _parse_bytea,
}
for _elem, _arr in ARRAY_OF.items():
    _TEXT_IN[_arr] = (lambda conv: lambda s: parse_array(s, conv))(_TEXT_IN[_elem])


def decode_text(type_oid: int, text: str) -> Any:
    """A value from PostgreSQL's text output of ``type_oid`` (ValueError when malformed)."""
    conv = _TEXT_IN.get(type_oid)
    if conv is None:
        return text
    try:
        return conv(text)
    except (ArithmeticError, KeyError, IndexError) as exc:
        raise ValueError(str(exc)) from exc


def supports_text_decode(type_oid: int) -> bool:
    return type_oid in _TEXT_IN


# --------------------------------------------------------------------------- binary in


def _exact(n: int, fn: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    def dec(b: bytes) -> Any:
        if len(b) != n:
            raise ValueError(f"expected {n} bytes, got {len(b)}")
        return fn(b)
    return dec


def _interval_recv(b: bytes) -> Interval | dt.timedelta:
    us, days, months = struct.unpack("!qii", b)
    return Interval(months, days, us).simplest()


def _time_of(us: int) -> dt.time:
    secs, micro = divmod(us, 1_000_000)
    h, rem = divmod(secs, 3600)
    m, s = divmod(rem, 60)
    return dt.time(h, m, s, micro)


def _timetz_recv(b: bytes) -> dt.time:
    us, zone = struct.unpack("!qi", b)
    return _time_of(us).replace(tzinfo=dt.timezone(dt.timedelta(seconds=-zone)))


def _jsonb_recv(b: bytes) -> str:
    if b[:1] != b"\x01":
        raise ValueError("unsupported jsonb version number")
    return b[1:].decode("utf-8")


_BINARY_IN: dict[int, Callable[[bytes], Any]] = {
    BOOL: _exact(1, lambda b: b != b"\x00"),
    INT2: _exact(2, lambda b: struct.unpack("!h", b)[0]),
    INT4: _exact(4, lambda b: struct.unpack("!i", b)[0]),
    INT8: _exact(8, lambda b: struct.unpack("!q", b)[0]),
    OID: _exact(4, lambda b: struct.unpack("!I", b)[0]),
    FLOAT4: _exact(4, lambda b: struct.unpack("!f", b)[0]),
    FLOAT8: _exact(8, lambda b: struct.unpack("!d", b)[0]),
    NUMERIC: numeric_recv,
    TEXT: lambda b: b.decode("utf-8"),
    VARCHAR: lambda b: b.decode("utf-8"),
    NAME: lambda b: b.decode("utf-8"),
    BPCHAR: lambda b: b.decode("utf-8"),
    CHAR: lambda b: b.decode("utf-8"),
    UNKNOWN: lambda b: b.decode("utf-8"),
    JSON: lambda b: b.decode("utf-8"),
    JSONB: _jsonb_recv,
    BYTEA: bytes,
    UUID: _exact(16, lambda b: uuid.UUID(bytes=b)),
    DATE: _exact(4, lambda b: _PG_EPOCH_DATE + dt.timedelta(days=struct.unpack("!i", b)[0])),
    TIMESTAMP: _exact(8, lambda b: _PG_EPOCH + dt.timedelta(microseconds=struct.unpack("!q", b)[0])),
    TIMESTAMPTZ: _exact(8, lambda b: _PG_EPOCH_TZ
                        + dt.timedelta(microseconds=struct.unpack("!q", b)[0])),
    TIME: _exact(8, lambda b: _time_of(struct.unpack("!q", b)[0])),
    TIMETZ: _exact(12, _timetz_recv),
    INTERVAL: _exact(16, _interval_recv),
}


def _array_recv(b: bytes) -> list[Any]:
    ndim, _flags, elem_oid = struct.unpack("!iiI", b[:12])
    if ndim == 0:
        return []
    if ndim < 0 or ndim > 6:
        raise ValueError("invalid number of dimensions")
    dims = [struct.unpack("!ii", b[12 + 8 * i: 20 + 8 * i])[0] for i in range(ndim)]
    dec = _BINARY_IN.get(elem_oid)
    if dec is None:
        raise ValueError(f"no binary input function available for type {elem_oid}")
    pos = 12 + 8 * ndim
    flat: list[Any] = []
    total = 1
    for d in dims:
        total *= d
    for _ in range(total):
        (n,) = struct.unpack("!i", b[pos:pos + 4])
        pos += 4
        if n == -1:
            flat.append(None)
        else:
            if n < 0 or pos + n > len(b):
                raise ValueError("insufficient data left in message")
            flat.append(dec(b[pos:pos + n]))
            pos += n
    if pos != len(b):
        raise ValueError("incorrect binary data format")
    for d in reversed(dims[1:]):
        flat = [flat[i:i + d] for i in range(0, len(flat), d)]
    return flat


for _arr in ELEMENT_OF:
    _BINARY_IN[_arr] = _array_recv


def decode_binary(type_oid: int, raw: bytes) -> Any:
    """A value from PostgreSQL's binary ``*send`` form of ``type_oid`` (ValueError/struct.error)."""
    dec = _BINARY_IN.get(type_oid)
    if dec is None:
        raise KeyError(type_oid)
    return dec(raw)


# --------------------------------------------------------------------------- params in


def decode_param(raw: bytes | None, type_oid: int, fmt: int, *, strict: bool = True) -> Any:
    """A Bind parameter as a Python value for the backend.

    ``strict=False`` is for a type pgbarrier inferred itself (the client sent OID
    0): text that does not parse under it stays text, for the backend to cast.
    """
    if raw is None:
        return None
    if fmt == 1:
        dec = _BINARY_IN.get(type_oid)
        if dec is None:
            if type_oid == 0 and not strict:
                dec = _BINARY_IN[TEXT]
            else:
                raise PgError(
                    f"no binary input function available for type {TYPE_NAME.get(type_oid, type_oid)}",
                    sqlstate="42883")
        try:
            return dec(raw)
        except (struct.error, ValueError, UnicodeDecodeError, IndexError) as exc:
            raise InvalidParameterValue(
                f'incorrect binary data format in bind parameter', sqlstate="22P03") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PgError('invalid byte sequence for encoding "UTF8"', sqlstate="22021") from exc
    conv = _TEXT_IN.get(type_oid)
    if conv is None:
        return text
    try:
        return conv(text)
    except (ValueError, ArithmeticError, KeyError, IndexError) as exc:
        if not strict or type_oid not in (BOOL, INT2, INT4, INT8, OID, FLOAT4, FLOAT8, NUMERIC,
                                          UUID, BYTEA, JSON, JSONB):
            # dates, times and intervals have spellings only the backend knows; arrays too
            return text
        raise InvalidParameterValue(
            f'invalid input syntax for type {TYPE_NAME.get(type_oid, type_oid)}: "{text}"',
            sqlstate="22P02") from exc
