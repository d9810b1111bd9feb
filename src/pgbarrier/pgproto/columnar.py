"""Wire bytes of a batch of rows, a column at a time: the columnar result path (issue 27).

A DuckDB result read as Arrow record batches (:class:`pgbarrier.result.BatchStream`) is
written out here: each column of a batch becomes its PostgreSQL text or binary values in
one step (pyarrow's compute kernels and numpy for most types, the compiled loops of
:mod:`pgbarrier.pgproto.rowframe` for the rest), and the batch's DataRow messages (or
COPY TO's text rows) are framed together into one buffer. Python works per batch, not
per value. Rules this module keeps:

* The bytes are exactly those of the per-value encoders of :mod:`pgbarrier.pgproto.types`
  (``tests/unit/test_columnar.py`` feeds random values of every type through both). A
  column this module has no columnar form for is encoded by that per-value encoder from
  the column's Python values (:func:`_values`), in the same batch. That is left for: jsonb
  (its text is re-normalised, :func:`~pgbarrier.pgproto.jsonb.jsonb_text`), arrays of
  more than one dimension or of elements that are left per value themselves, numerics of
  more than 18 digits in binary (``numeric_send`` of an int128; unconstrained numerics'
  too, each at its own scale), text of timestamps with time zone in a zone ``zoneinfo``
  does not know (or in a batch reaching within a day of years 1 and 9999), and any (type,
  Arrow type) pair not in the tables below.
* Timestamps with time zone in a zone other than UTC: the row path prints DuckDB's Python
  values, whose offsets are ``zoneinfo``'s (not pyarrow's tz database, nor DuckDB's ICU);
  each value's offset is looked up with ``zoneinfo`` once per hour of the batch
  (:func:`_zoned_text`), and a compiled loop prints the local times and offsets. Inside
  a columnar column, a few values still take the per-value function: float4 values
  printed in exponent form (|v| < 1e-4 or >= 1e6, infinities, NaN: ``float_text``) and
  numerics of more than 18 digits that pyarrow would print in exponent form (|v| < 1e-6
  at a larger scale).
* One-dimensional arrays: their elements are one column (the list's child values),
  written by the element type's columnar encoder, and the compiled loops put each row's
  braces, commas, quotes and NULLs (text) or dimensions and lengths (binary) around them.
* Intervals arrive as their three fields (:data:`INTERVAL_PARTS`), printed by a compiled
  loop (text) or packed (binary).
* Which results come here at all is the backend's choice (:func:`servable`: Arrow types
  whose Python values are DuckDB's own, so the per-value fallback prints what it always
  did); the session's DateStyle/IntervalStyle other than the defaults keep the per-value
  path (:mod:`pgbarrier.session.session`). A client encoding other than UTF8 does not
  (:class:`DataRows`' ``codec``): a batch's column whose values are all ASCII goes as it
  is, one with other characters is converted a value at a time (:func:`_in_client_encoding`).
* pyarrow is imported with this module, which the DuckDB backend loads on a thread of its
  own as it starts (not on the way to listening, and not in the first client's result,
  where half a second would count against its statement_timeout).
"""

from __future__ import annotations

import datetime as dt
import functools
import zoneinfo
import zoneinfo._zoneinfo as zoneinfo_py  # the transitions of a zone (_zone)
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pgbarrier import accel
from pgbarrier.pgproto import transcode
from pgbarrier.pgproto import types as pgt
from pgbarrier.pgproto.column import Column
from pgbarrier.pgproto.rowframe import _DATE_INF, _TS_INF  # DuckDB's infinities (one place)

_frame = accel.load("pgbarrier.pgproto.rowframe")

#: a column's wire values: offsets (int64, rows + 1), data (uint8), valid (uint8, rows)
Wire = tuple[Any, Any, Any]
Encode = Callable[[Any], Wire]

_PG_EPOCH_DAYS = 10957
_PG_EPOCH_US = 946_684_800_000_000
_TEXTUAL = frozenset({pgt.TEXT, pgt.VARCHAR, pgt.NAME, pgt.UNKNOWN, pgt.JSON, pgt.CHAR,
                      pgt.BPCHAR})
_INT_WIDTH = {pgt.INT2: ">i2", pgt.INT4: ">i4", pgt.INT8: ">i8", pgt.OID: ">u4"}
_UTC_NAMES = frozenset({"UTC", "Etc/UTC", "GMT", "Etc/GMT", "+00:00", "Z"})


# ------------------------------------------------------------------ which results

def _servable_type(t: pa.DataType) -> bool:
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _servable_type(t.value_type)
    if pa.types.is_dictionary(t):
        return pa.types.is_string(t.value_type) or pa.types.is_large_string(t.value_type)
    return (pa.types.is_boolean(t) or pa.types.is_integer(t) or pa.types.is_floating(t)
            or pa.types.is_decimal(t) or pa.types.is_string(t) or pa.types.is_large_string(t)
            or pa.types.is_string_view(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t) or pa.types.is_date32(t)
            or pa.types.is_timestamp(t) or (pa.types.is_time64(t) and t.unit == "us")
            or pa.types.is_null(t))


def servable(schema: pa.Schema) -> bool:
    """Whether every column of ``schema`` can take this path (its Python values, for the
    per-value fallback, are those DuckDB's ``fetchmany`` gives; an interval's three
    fields, :data:`INTERVAL_PARTS`, become a :class:`~pgbarrier.pgproto.types.Interval`)."""
    return all(_servable_type(f.type) or is_interval_parts(f.type) for f in schema)


#: an interval column as its three fields: a struct of these int64 children, in order
#: (``backends.duckdb_intervals.parts_query``; Arrow's own interval type holds the time
#: in nanoseconds, which overflows past 2,562,047 hours)
INTERVAL_PARTS = ("months", "days", "micros")


def is_interval_parts(t: pa.DataType) -> bool:
    return pa.types.is_struct(t) and t.num_fields == 3 and all(
        t.field(i).name == name and pa.types.is_int64(t.field(i).type)
        for i, name in enumerate(INTERVAL_PARTS))


def _interval_fields(a: pa.Array) -> tuple[Any, Any, Any, Any]:
    """int64 months, days and microseconds of an interval-parts array (NULLs as zeros)
    and its validity (an interval's fields are NULL together)."""
    months, days, micros = a.flatten()
    valid = _valid(months)
    return tuple(np.ascontiguousarray((f.fill_null(0) if f.null_count else f).to_numpy(
        zero_copy_only=False), dtype=np.int64) for f in (months, days, micros)) + (valid,)


def _values(a: pa.Array) -> list[Any]:
    """The column's Python values, as the row path has them."""
    if is_interval_parts(a.type):
        months, days, micros = (f.to_pylist() for f in a.flatten())
        return [None if mo is None else pgt.Interval(mo, d, us)
                for mo, d, us in zip(months, days, micros)]
    return a.to_pylist()


def has_infinity(batch: pa.RecordBatch) -> bool:
    """Whether a date or timestamp column of ``batch`` holds DuckDB's ``infinity`` or
    ``-infinity`` (which its Python values cannot show: :func:`to_rows` has year 9999)."""
    for a in batch.columns:
        if pa.types.is_date32(a.type):
            limit, as_int = _DATE_INF, pa.int32()
        elif pa.types.is_timestamp(a.type) and a.type.unit == "us":
            limit, as_int = _TS_INF, pa.int64()
        else:
            continue
        if _ends(np.asarray(a.cast(as_int).fill_null(0)), limit).any():
            return True
    return False


def _ends(raw: Any, infinity: int) -> Any:
    """Where ``raw`` holds DuckDB's ``infinity`` or ``-infinity`` (``infinity`` negated)."""
    return (raw == infinity) | (raw == -infinity)


def to_rows(batch: pa.RecordBatch) -> list[tuple[Any, ...]]:
    """The batch as rows of Python values (for consumers of rows: cursors, COPY CSV...)."""
    return list(zip(*[_values(c) for c in batch.columns]))


# ------------------------------------------------------------------ columns

def _valid(arr: pa.Array) -> Any:
    if arr.null_count == 0:
        return np.ones(len(arr), dtype=np.uint8)
    return np.asarray(arr.is_valid()).view(np.uint8)


def _strings(arr: pa.Array) -> Wire:
    """A string or binary array's own buffers (sliced arrays included)."""
    t = arr.type
    if pa.types.is_string_view(t) or pa.types.is_dictionary(t):
        arr = arr.cast(pa.string())
        t = arr.type
    n = len(arr)
    bufs = arr.buffers()
    wide = pa.types.is_large_string(t) or pa.types.is_large_binary(t)
    offsets = np.frombuffer(bufs[1], dtype=np.int64 if wide else np.int32,
                            count=arr.offset + n + 1)[arr.offset:].astype(np.int64)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None and bufs[2].size \
        else np.zeros(1, dtype=np.uint8)
    return offsets, data, _valid(arr)


def _fixed(values: Any, width: int, valid: Any) -> Wire:
    data = np.ascontiguousarray(values).view(np.uint8)
    return np.arange(len(valid) + 1, dtype=np.int64) * width, data, valid


def _numbers(arr: pa.Array, dtype: str) -> Wire:
    """Big-endian numbers of ``dtype`` (NULLs as zeros, masked)."""
    valid = _valid(arr)
    filled = arr.fill_null(0) if arr.null_count else arr
    values = filled.to_numpy(zero_copy_only=False).astype(dtype)
    return _fixed(values, np.dtype(dtype).itemsize, valid)


def _micros(arr: pa.Array) -> Any:
    """int64 microseconds of a timestamp or time64[us] array (NULLs as zeros)."""
    if pa.types.is_timestamp(arr.type) and arr.type.unit != "us":
        arr = arr.cast(pa.timestamp("us", arr.type.tz), safe=False)
    filled = arr.fill_null(0) if arr.null_count else arr
    return filled.cast(pa.int64()).to_numpy(zero_copy_only=False)


def _unscaled(a: pa.Array) -> Any:
    """int64 unscaled values of a decimal128 array of at most 18 digits."""
    n = len(a)
    raw = np.frombuffer(a.buffers()[1], dtype=np.int64, count=2 * (a.offset + n))
    return np.ascontiguousarray(raw[2 * a.offset::2])


def _unscaled_int64(a: pa.Array, valid: Any) -> Any:
    """int64 unscaled values of a decimal128 array of any precision (NULLs as zeros), or
    None when a value does not fit (or is int64's lowest, which has no positive twin)."""
    n = len(a)
    raw = np.frombuffer(a.buffers()[1], dtype=np.int64, count=2 * (a.offset + n))
    low, high = raw[2 * a.offset::2], raw[2 * a.offset + 1::2]
    shown = valid.astype(bool)
    if not np.array_equal(high[shown], low[shown] >> 63):
        return None
    unscaled = np.where(shown, low, 0)
    if np.any(unscaled == np.iinfo(np.int64).min):
        return None
    return unscaled


def _wide_decimal_binary(column: Column, scale: int) -> Encode:
    """numeric_send of decimals of more than 18 digits: the compiled loop where a batch's
    values fit an int64 (as data usually does), per value otherwise."""
    wide = _per_value(column, 1)

    def encode(a: pa.Array) -> Wire:
        valid = _valid(a)
        unscaled = _unscaled_int64(a, valid)
        if unscaled is None:
            return wide(a)
        offsets, data = _frame.numeric_binary(unscaled, valid, len(a), scale)
        return offsets, data if len(data) else np.zeros(1, np.uint8), valid
    return encode


def _decimal_text(scale: int) -> Encode:
    """numeric_out of decimals of ``scale``: never in exponent form (pyarrow's cast is)."""
    def encode(a: pa.Array) -> Wire:
        valid = _valid(a)
        offsets, data = _frame.decimal_text(_unscaled(a), valid, len(a), scale)
        return offsets, data, valid
    return encode


def warm_up() -> None:
    """What a first result would pay once, paid now: pyarrow's conversion to numpy loads
    its pandas shim (half a second where pandas is installed)."""
    pa.array([1, None]).to_numpy(zero_copy_only=False)


def _int_text(a: pa.Array) -> Wire:
    """int4out/int8out: the compiled digits (int64's lowest value, which has no positive
    counterpart, through pyarrow's cast)."""
    valid = _valid(a)
    values = np.ascontiguousarray((a.fill_null(0) if a.null_count else a).to_numpy(
        zero_copy_only=False), dtype=np.int64)
    if pa.types.is_int64(a.type) and len(values) and values.min() == np.iinfo(np.int64).min:
        return _strings(a.cast(pa.string()))
    offsets, data = _frame.decimal_text(values, valid, len(a), 0)
    return offsets, data, valid


def _datetime_text(kind: int) -> Encode:
    """Dates (0), timestamps (1), times (2), timestamps with time zone in UTC (3)."""
    def encode(a: pa.Array) -> Wire:
        valid = _valid(a)
        if kind == 0:
            values = (a.fill_null(0) if a.null_count else a).cast(pa.int32()).to_numpy(
                zero_copy_only=False).astype(np.int64)
        else:
            values = np.ascontiguousarray(_micros(a), dtype=np.int64)
        offsets, data = _frame.datetime_text(values, valid, len(a), kind)
        return offsets, data, valid
    return encode


_HOUR_US = 3_600_000_000
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
#: the instants whose local time is surely inside Python's years 1 to 9999 (every UTC
#: offset is less than a day): the row path's values; a batch past them goes per value
_ZONED_LOW_US = (dt.datetime(1, 1, 2, tzinfo=dt.timezone.utc) - _EPOCH) // dt.timedelta(
    microseconds=1)
_ZONED_HIGH_US = (dt.datetime(9999, 12, 30, tzinfo=dt.timezone.utc) - _EPOCH) // dt.timedelta(
    microseconds=1)


@functools.lru_cache(maxsize=64)
def _zone(name: str) -> Any:
    """The row path's zone of a TimeZone (DuckDB's Python values carry
    ``zoneinfo.ZoneInfo(TimeZone)``), when an hour never holds two of its changes of
    offset: None (per value) for a name zoneinfo does not know, or whose transitions it
    does not show (the pure-Python ``zoneinfo`` reads them; CPython's own does)."""
    try:
        zone = zoneinfo.ZoneInfo(name)
        transitions = zoneinfo_py.ZoneInfo.no_cache(name)._trans_utc
    except Exception:  # noqa: BLE001 - not a zone, or no transitions to read: per value
        return None
    if any(b - a < 3600 for a, b in zip(transitions, transitions[1:])):
        return None
    return zone


def _offset(zone: Any, second: int) -> int:
    """The UTC offset (seconds) of ``zone`` at the instant ``second`` (since 1970), as the
    row path's value has it: ``astimezone`` of the UTC time (fold included)."""
    off = (_EPOCH + dt.timedelta(seconds=second)).astimezone(zone).utcoffset()
    return 0 if off is None else off.days * 86400 + off.seconds


def _zoned_text(name: str) -> Encode | None:
    """timestamptz_out in TimeZone ``name`` (other than UTC): each value's local time and
    offset, as the row path prints its Python value (``zoneinfo``'s rules, which are not
    pyarrow's, nor DuckDB's ICU's, for every date). An offset only changes at a whole
    second and never twice within an hour (:func:`_zone`), so it is looked up once at
    each end of each hour the batch's values fall in; an hour whose ends differ holds a
    change, and its values are looked up one by one."""
    zone = _zone(name)
    if zone is None:
        return None
    per_value = _per_value(Column("", pgt.TIMESTAMPTZ), 0)

    def encode(a: pa.Array) -> Wire:
        valid = _valid(a)
        raw = np.ascontiguousarray(_micros(a), dtype=np.int64)  # NULLs as 1970
        infinite = _ends(raw, _TS_INF)  # written as they are
        finite = not infinite.any()
        micros = raw if finite else np.where(infinite, 0, raw)
        if len(micros) and (micros.min() < _ZONED_LOW_US or micros.max() > _ZONED_HIGH_US):
            return per_value(a)
        hours, where = np.unique(micros // _HOUR_US, return_inverse=True)
        starts = np.array([_offset(zone, h * 3600) for h in hours.tolist()], dtype=np.int64)
        ends = np.array([_offset(zone, h * 3600 + 3599) for h in hours.tolist()],
                        dtype=np.int64)
        zones = starts[where]
        changing = np.nonzero((starts != ends)[where])[0]
        if len(changing):
            seconds = micros[changing] // 1_000_000
            zones[changing] = [_offset(zone, s) for s in seconds.tolist()]
        local = micros + zones * 1_000_000
        if not finite:  # the kernel prints an infinity given as the local time
            local = np.where(infinite, raw, local)
        offsets, data = _frame.datetime_text(local, valid, len(a), 4,
                                             np.ascontiguousarray(zones, dtype=np.int32))
        return offsets, data, valid
    return encode


def _exponents(text: pa.Array) -> Any:
    """Which of pyarrow's float texts are in exponent form: none, as a rule, inside the
    fixed range the callers already sorted out, which one scan of the bytes shows (a
    per-string match only where an ``e`` is there at all)."""
    data = text.buffers()[2]
    if data is None or not np.any(np.frombuffer(data, dtype=np.uint8) == ord("e")):
        return np.zeros(len(text), dtype=bool)
    return np.asarray(pc.fill_null(pc.match_substring(text, "e"), False))


def _float8_text(a: pa.Array) -> Wire:
    """float8out: pyarrow's shortest digits (double-conversion, the same digits as Python's
    ``repr``) where its notation is PostgreSQL's (fixed, for 1e-4 <= |v| < 1e15); the
    other values (exponents, infinities, NaN) through :func:`rowframe.float8_text`."""
    valid = _valid(a)
    values = np.ascontiguousarray((a.fill_null(0) if a.null_count else a).to_numpy(
        zero_copy_only=False), dtype=np.float64)
    text = a.cast(pa.string())
    with np.errstate(invalid="ignore"):
        mag = np.abs(values)
        odd = ~((mag >= 1e-4) & (mag < 1e15)) & (mag != 0)
    odd |= _exponents(text)
    odd &= valid.astype(bool)
    if odd.any():
        index = np.flatnonzero(odd)
        cuts, fixed = _frame.float8_text(np.ascontiguousarray(values[index]),
                                         np.ones(len(index), np.uint8), len(index))
        shown = bytes(fixed).decode("ascii")
        pieces = [shown[cuts[i]:cuts[i + 1]] for i in range(len(index))]
        text = pc.replace_with_mask(text, pa.array(odd), pa.array(pieces, pa.string()))
    offsets, data, _ = _strings(text)
    return offsets, data, valid


def _float4_text(a: pa.Array) -> Wire:
    """float4out: pyarrow's shortest float32 digits where its notation is PostgreSQL's
    (fixed, for 1e-4 <= |v| < 1e6); the other values through ``float_text`` itself."""
    valid = _valid(a)
    values = np.ascontiguousarray((a.fill_null(0) if a.null_count else a).to_numpy(
        zero_copy_only=False), dtype=np.float32)
    text = a.cast(pa.string())
    with np.errstate(invalid="ignore"):
        mag = np.abs(values)
        odd = ~((mag >= np.float32(1e-4)) & (mag < np.float32(1e6))) & (mag != 0)
    odd |= _exponents(text)
    odd &= valid.astype(bool)
    if odd.any():
        pieces = [pgt.float_text(float(v), True) for v in values[np.flatnonzero(odd)]]
        text = pc.replace_with_mask(text, pa.array(odd), pa.array(pieces, pa.string()))
    offsets, data, _ = _strings(text)
    return offsets, data, valid


def _bool_text(a: pa.Array) -> Wire:
    """boolout: one byte a value, ``t`` or ``f`` (a NULL's byte is never written)."""
    valid = _valid(a)
    values = (a.fill_null(False) if a.null_count else a).to_numpy(zero_copy_only=False)
    return _fixed(np.where(values, np.uint8(ord("t")), np.uint8(ord("f"))), 1, valid)


def _bytea_text(a: pa.Array) -> Wire:
    """byteaout (hex): ``\\x`` and two hex digits a byte (the compiled loop)."""
    offsets, data, valid = _strings(a)
    out_offsets, out = _frame.hex_text(np.ascontiguousarray(offsets), data, valid, len(a))
    return out_offsets, out, valid


#: where the 32 hex digits of a uuid's 36 characters are
_UUID_DIGITS = np.array([i for i in range(36) if i not in (8, 13, 18, 23)], dtype=np.int64)
_UNHEX = np.zeros(256, dtype=np.uint8)
_UNHEX[np.frombuffer(b"0123456789", np.uint8)] = np.arange(10)
_UNHEX[np.frombuffer(b"abcdef", np.uint8)] = np.arange(10, 16)
_UNHEX[np.frombuffer(b"ABCDEF", np.uint8)] = np.arange(10, 16)


def _uuid_binary(column: Column) -> Encode:
    """uuid_send: the 16 bytes of each uuid's canonical text (DuckDB's Arrow form); a
    batch with another text shape goes per value."""
    fallback = _per_value(column, 1)

    def encode(a: pa.Array) -> Wire:
        offsets, data, valid = _strings(a)
        shown = valid.astype(bool)
        starts = offsets[:-1][shown]
        if not np.all(offsets[1:][shown] - starts == 36):
            return fallback(a)
        nibbles = _UNHEX[data[starts[:, None] + _UUID_DIGITS]]
        out = np.zeros((len(valid), 16), dtype=np.uint8)
        out[shown] = (nibbles[:, 0::2] << 4) | nibbles[:, 1::2]
        return _fixed(out.reshape(-1), 16, valid)
    return encode


def _wide_decimal_strings(a: pa.Array, enc: Callable[[Any], bytes]) -> pa.Array:
    """numeric_out of decimals of more than 18 digits: pyarrow's text, which is PostgreSQL's
    but for the tiny values it prints in exponent form (``1E-7``): those by ``enc``, per
    value."""
    text = a.cast(pa.string())
    odd = np.asarray(pc.fill_null(pc.match_substring(text, "E"), False))
    if odd.any():
        index = np.flatnonzero(odd)
        pieces = [enc(v).decode("ascii") for v in a.take(pa.array(index)).to_pylist()]
        text = pc.replace_with_mask(text, pa.array(odd), pa.array(pieces, pa.string()))
    return text


def _wide_decimal_text(column: Column) -> Encode:
    enc = pgt.encoder(column.type_oid, 0, None, column.type_modifier)
    return lambda a: _strings(_wide_decimal_strings(a, enc))


def _natural(fmt: int) -> Encode:
    """Unconstrained numerics (stored as ``DECIMAL(38,s)``, ``s`` >= 10, see
    ``backends.duckdb_numeric``): printed without the storage scale's trailing zeros, as
    ``natural_converter`` prints them on the row path. Text: pyarrow's, its zeros cut by
    two RE2 replacements (``1.5000000000`` -> ``1.5``, ``10.0000000000`` -> ``10``);
    binary: ``numeric_send`` at each value's own scale (its trailing zeros counted off a
    column at a time), per value for a batch with values past int64."""
    enc = pgt.encoder(pgt.NUMERIC, fmt, None, -1)
    natural = pgt.natural_numeric
    if fmt == 1:
        wide = _per_value_of(lambda v: enc(natural(v)))

        def binary(a: pa.Array) -> Wire:
            scale = a.type.scale
            valid = _valid(a)
            n = len(a)
            unscaled = _unscaled_int64(a, valid)
            if unscaled is None:
                return wide(a)  # past int64: per value
            # each value's own scale: the storage's less its trailing zeros
            scales = np.full(n, scale, dtype=np.int64)
            for _ in range(scale):
                zero = (unscaled % 10 == 0) & (scales > 0)
                if not zero.any():
                    break
                unscaled = np.where(zero, unscaled // 10, unscaled)
                scales -= zero
            offsets, data = _frame.numeric_binary(np.ascontiguousarray(unscaled), valid, n, 0,
                                                  scales)
            return offsets, data if len(data) else np.zeros(1, np.uint8), valid
        return binary

    def encode(a: pa.Array) -> Wire:
        text = _wide_decimal_strings(a, lambda v: enc(natural(v)))
        text = pc.replace_substring_regex(text, r"(\.[0-9]*?)0+$", r"\1")
        return _strings(pc.replace_substring_regex(text, r"\.$", ""))
    return encode


def _is_natural(column: Column, t: pa.DataType) -> bool:
    return column.type_oid == pgt.NUMERIC and column.type_modifier == -1 \
        and pa.types.is_decimal(t) and t.precision == 38 and t.scale >= 10


def _text_encoder(oid: int, t: pa.DataType) -> Encode | None:
    """The columnar text encoder of ``oid`` values arriving as ``t`` (None: per value)."""
    if oid in _TEXTUAL or oid == pgt.UUID:
        if pa.types.is_string(t) or pa.types.is_large_string(t) or \
                pa.types.is_string_view(t) or pa.types.is_dictionary(t):
            return _strings
        return None
    if oid == pgt.BYTEA and (pa.types.is_binary(t) or pa.types.is_large_binary(t)):
        return _bytea_text
    if oid == pgt.FLOAT4 and pa.types.is_float32(t):
        return _float4_text
    if oid == pgt.BOOL and pa.types.is_boolean(t):
        return _bool_text
    if oid in _INT_WIDTH or oid == pgt.NUMERIC:
        if pa.types.is_integer(t) and t.bit_width <= 32 or pa.types.is_int64(t):
            return _int_text
        if pa.types.is_integer(t):
            return lambda a: _strings(a.cast(pa.string()))
        if oid == pgt.NUMERIC and pa.types.is_decimal(t) and t.precision <= 18 and \
                0 <= t.scale <= 18 and t.bit_width == 128:
            return _decimal_text(t.scale)
        return None
    if oid == pgt.FLOAT8 and pa.types.is_float64(t):
        return _float8_text
    if oid == pgt.DATE and pa.types.is_date32(t):
        return _datetime_text(0)
    if oid == pgt.TIMESTAMP and pa.types.is_timestamp(t) and t.tz is None:
        return _datetime_text(1)
    if oid == pgt.TIMESTAMPTZ and pa.types.is_timestamp(t) and t.tz in _UTC_NAMES:
        return _datetime_text(3)
    if oid == pgt.TIMESTAMPTZ and pa.types.is_timestamp(t) and t.tz:
        return _zoned_text(t.tz)
    if oid == pgt.TIME and pa.types.is_time64(t) and t.unit == "us":
        return _datetime_text(2)
    return None


def _binary_encoder(oid: int, t: pa.DataType) -> Encode | None:
    """The columnar binary encoder of ``oid`` values arriving as ``t`` (None: per value)."""
    if oid in _TEXTUAL:
        return _text_encoder(oid, t)  # the text's UTF-8 bytes, as text_send
    if oid == pgt.BYTEA and (pa.types.is_binary(t) or pa.types.is_large_binary(t)):
        return _strings  # bytea_send: the bytes as they are
    if oid == pgt.NUMERIC and pa.types.is_integer(t):
        wide = _per_value(Column("", oid), 1)

        def integral(a: pa.Array) -> Wire:  # numeric_send of integers: scale 0
            valid = _valid(a)
            raw = (a.fill_null(0) if a.null_count else a).to_numpy(zero_copy_only=False)
            if len(raw) and (raw.max() > np.iinfo(np.int64).max
                             or raw.min() == np.iinfo(np.int64).min):
                return wide(a)  # past int64 (ubigint), or int64's lowest (no positive twin)
            values = np.ascontiguousarray(raw, dtype=np.int64)
            offsets, data = _frame.numeric_binary(values, valid, len(a), 0)
            return offsets, data if len(data) else np.zeros(1, np.uint8), valid
        return integral
    if oid == pgt.BOOL and pa.types.is_boolean(t):
        return lambda a: _numbers(a.cast(pa.uint8()), "u1")
    if oid in _INT_WIDTH and pa.types.is_integer(t):
        dtype = _INT_WIDTH[oid]
        return lambda a: _numbers(a, dtype)
    if oid == pgt.FLOAT8 and pa.types.is_floating(t):
        return lambda a: _numbers(a, ">f8")
    if oid == pgt.FLOAT4 and pa.types.is_floating(t):
        return lambda a: _numbers(a, ">f4")
    if oid == pgt.NUMERIC and pa.types.is_decimal(t) and t.precision <= 18 and \
            0 <= t.scale <= 18 and t.bit_width == 128:
        scale = t.scale

        def numeric(a: pa.Array) -> Wire:
            valid = _valid(a)
            n = len(a)
            offsets, data = _frame.numeric_binary(_unscaled(a), valid, n, scale)
            return offsets, data if len(data) else np.zeros(1, np.uint8), valid
        return numeric
    if oid == pgt.DATE and pa.types.is_date32(t):
        def date(a: pa.Array) -> Wire:
            valid = _valid(a)
            days = (a.fill_null(0) if a.null_count else a).cast(pa.int32())
            raw = days.to_numpy(zero_copy_only=False).astype(np.int64)
            values = _infinities(raw, raw - _PG_EPOCH_DAYS, _DATE_INF, np.iinfo(np.int32))
            return _fixed(values.astype(">i4"), 4, valid)
        return date
    if oid in (pgt.TIMESTAMP, pgt.TIMESTAMPTZ) and pa.types.is_timestamp(t):
        def timestamp(a: pa.Array) -> Wire:
            raw = _micros(a)
            values = _infinities(raw, raw - _PG_EPOCH_US, _TS_INF, np.iinfo(np.int64))
            return _fixed(values.astype(">i8"), 8, _valid(a))
        return timestamp
    if oid == pgt.TIME and pa.types.is_time64(t) and t.unit == "us":
        return lambda a: _fixed(_micros(a).astype(">i8"), 8, _valid(a))
    return None


def _infinities(raw: Any, shifted: Any, infinity: int, limits: Any) -> Any:
    """``shifted`` (the values from PostgreSQL's epoch) with DuckDB's infinities in ``raw``
    (``infinity`` and its negation) as PostgreSQL sends its own: the type's largest and
    smallest values."""
    if not _ends(raw, infinity).any():
        return shifted
    return np.where(raw == infinity, limits.max, np.where(raw == -infinity, limits.min, shifted))


def _per_value(column: Column, fmt: int) -> Encode:
    """The per-value encoder of :mod:`pgbarrier.pgproto.types` over the column's values."""
    return _per_value_of(pgt.encoder(column.type_oid, fmt, None, column.type_modifier))


def _per_value_of(enc: Callable[[Any], bytes]) -> Encode:
    """``enc`` over each of the column's values (its Python values, :func:`_values`)."""
    def encode(a: pa.Array) -> Wire:
        return _wire([None if v is None else enc(v) for v in _values(a)])
    return encode


def _wire(values: list[bytes | None]) -> Wire:
    """A column's wire values from each row's bytes (None: NULL)."""
    valid = np.fromiter((v is not None for v in values), dtype=np.uint8, count=len(values))
    lengths = np.fromiter((0 if v is None else len(v) for v in values), dtype=np.int64,
                          count=len(values))
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    data = np.frombuffer(b"".join(v for v in values if v is not None) or b"\0", dtype=np.uint8)
    return offsets, data, valid


def _in_client_encoding(encode: Encode, fmt: int, oid: int, codec: Any) -> Encode:
    """``encode``'s values (UTF-8) in the client encoding ``codec``, where
    :func:`pgbarrier.pgproto.transcode.result_converter` converts them: a batch whose
    values are all ASCII goes as it is (every client encoding PostgreSQL has writes ASCII
    as ASCII); one with other characters is converted a value at a time, a character the
    encoding lacks failing with its 22P05 as on the row path."""
    convert = transcode.result_converter(fmt, oid, codec)
    if convert is None:
        return encode

    def encoded(a: pa.Array) -> Wire:
        offsets, data, valid = encode(a)
        start, end = int(offsets[0]), int(offsets[-1])
        if end <= start or int(np.asarray(data[start:end]).max()) < 0x80:
            return offsets, data, valid
        return _wire([convert(bytes(data[offsets[r]:offsets[r + 1]])) if valid[r] else None
                      for r in range(len(valid))])
    return encoded


def _interval_text(a: pa.Array) -> Wire:
    """interval_out (IntervalStyle postgres) from the three fields: the compiled loop."""
    months, days, micros, valid = _interval_fields(a)
    offsets, data = _frame.interval_text(months, days, micros, valid, len(a))
    return offsets, data, valid


_INTERVAL_BINARY = np.dtype([("micros", ">i8"), ("days", ">i4"), ("months", ">i4")])


def _interval_binary(a: pa.Array) -> Wire:
    """interval_send: microseconds (int64), days, months (int32), big-endian."""
    months, days, micros, valid = _interval_fields(a)
    out = np.zeros(len(a), dtype=_INTERVAL_BINARY)
    out["micros"], out["days"], out["months"] = micros, days, months
    return _fixed(out.view(np.uint8), 16, valid)


def _array(column: Column, t: pa.DataType, fmt: int) -> Encode | None:
    """One-dimensional arrays whose elements have a columnar encoder: the elements written
    a column at a time, then each row's array around them (the compiled loops); None
    otherwise (per value: nested lists, elements of other types)."""
    element = pgt.ELEMENT_OF.get(column.type_oid)
    if element is None or not (pa.types.is_list(t) or pa.types.is_large_list(t)):
        return None
    vt = t.value_type
    if pa.types.is_list(vt) or pa.types.is_large_list(vt) or pa.types.is_null(vt):
        return None
    elements = _binary_encoder(element, vt) if fmt == 1 else _text_encoder(element, vt)
    if elements is None:
        return None

    def encode(a: pa.Array) -> Wire:
        valid = _valid(a)
        bounds = np.asarray(a.offsets).astype(np.int64)
        first = int(bounds[0]) if len(bounds) else 0
        values = a.values.slice(first, int(bounds[-1]) - first if len(bounds) else 0)
        lists = np.ascontiguousarray(bounds - first)
        e_offsets, e_data, e_valid = elements(values)
        e_offsets = np.ascontiguousarray(e_offsets, dtype=np.int64)
        e_data = np.ascontiguousarray(e_data, dtype=np.uint8) if len(e_data) \
            else np.zeros(1, np.uint8)
        e_valid = np.ascontiguousarray(e_valid, dtype=np.uint8)
        if fmt == 1:
            offsets, data = _frame.array_binary(lists, valid, len(a), e_offsets, e_data,
                                                e_valid, element)
        else:
            offsets, data = _frame.array_text(lists, valid, len(a), e_offsets, e_data, e_valid)
        return offsets, data, valid
    return encode


def _null_column(a: pa.Array) -> Wire:
    n = len(a)
    return np.zeros(n + 1, np.int64), np.zeros(1, np.uint8), np.zeros(n, np.uint8)


def _is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or \
        pa.types.is_string_view(t) or pa.types.is_dictionary(t)


def _padded(width: int) -> Encode:
    """``char(n)``: each value blank-padded to ``width`` characters (``str.ljust``)."""
    def encode(a: pa.Array) -> Wire:
        if not (pa.types.is_string(a.type) or pa.types.is_large_string(a.type)):
            a = a.cast(pa.string())
        return _strings(pc.utf8_rpad(a, width=width, padding=" "))
    return encode


def _rounded(t: pa.DataType, digits: int, then: Encode) -> Encode:
    """Timestamps and times of a declared precision (``timestamp(2)``): rounded to
    ``digits`` fractional digits, half away from zero (``types._rounded``: a time that would
    round past midnight stays as it was), then written by ``then``."""
    step = 10 ** (6 - digits)
    is_time = pa.types.is_time64(t)
    us_type = pa.time64("us") if is_time else pa.timestamp("us", t.tz)

    def encode(a: pa.Array) -> Wire:
        micros = np.asarray(_micros(a), dtype=np.int64)
        rest = micros % step  # floored: the fraction's own remainder, before or after 1970
        rounded = micros - rest + np.where(rest * 2 >= step, step, 0)
        if is_time:
            rounded = np.where(rounded >= 86_400_000_000, micros, rounded)
        mask = None if a.null_count == 0 else np.asarray(a.is_null())
        return then(pa.array(rounded, pa.int64(), mask=mask).cast(us_type))
    return encode


def column_encoder(column: Column, t: pa.DataType, fmt: int) -> Encode:
    """How a column of ``column``'s type arriving as ``t`` is written in format ``fmt``."""
    if pa.types.is_null(t):
        return _null_column
    oid, typmod = column.type_oid, column.type_modifier
    if is_interval_parts(t):
        if oid != pgt.INTERVAL:
            return _per_value(column, fmt)
        return _interval_binary if fmt == 1 else _interval_text
    if oid == pgt.BPCHAR and typmod > 4:
        return _padded(typmod - 4) if _is_text(t) else _per_value(column, fmt)
    if oid in pgt._PRECISE and 0 <= typmod < 6:
        if pa.types.is_timestamp(t) or (pa.types.is_time64(t) and t.unit == "us"):
            us = pa.time64("us") if pa.types.is_time64(t) else pa.timestamp("us", t.tz)
            plain = _binary_encoder(oid, us) if fmt == 1 else _text_encoder(oid, us)
            if plain is not None:
                return _rounded(t, typmod, plain)
        return _per_value(column, fmt)
    if fmt == 1 and oid == pgt.UUID and _is_text(t):
        return _uuid_binary(column)
    if _is_natural(column, t):
        return _natural(fmt)
    enc = _binary_encoder(oid, t) if fmt == 1 else _text_encoder(oid, t)
    if enc is None:
        enc = _array(column, t, fmt)
    if enc is None and fmt == 1 and oid == pgt.NUMERIC and pa.types.is_decimal(t) and \
            t.bit_width == 128 and 0 <= t.scale <= 18:
        return _wide_decimal_binary(column, t.scale)
    if enc is None and fmt == 0 and oid == pgt.NUMERIC and pa.types.is_decimal(t):
        return _wide_decimal_text(column)
    return enc if enc is not None else _per_value(column, fmt)


# ------------------------------------------------------------------ framing

class DataRows:
    """Writes batches of one result as DataRow messages, a column at a time."""

    #: the message type byte of each row (``D``)
    kind = 0x44

    def __init__(self, columns: list[Column], formats: list[int], codec: Any = None) -> None:
        self.columns = columns
        self.formats = formats
        #: the client encoding's codec (:class:`pgbarrier.pgproto.encodings.Codec`; None:
        #: UTF-8): the values are converted as :mod:`pgbarrier.pgproto.transcode` says
        self.codec = codec
        #: what the bytes depend on besides the rows: framed rows are the same for an
        #: equal key (a suspended portal's rows framed ahead, ``result.BatchStream``)
        self.key = (type(self), tuple(formats), None if codec is None else codec.name)
        self._encoders: list[Encode] | None = None

    def frame(self, batch: pa.RecordBatch) -> bytearray:
        return self.frame_rows(batch)[0]

    def frame_rows(self, batch: pa.RecordBatch) -> tuple[bytearray, Any]:
        """The batch's messages, and where each row's ends in them (int64, cumulative)."""
        n = batch.num_rows
        ncols = batch.num_columns
        if self._encoders is None:
            self._encoders = [column_encoder(c, f.type, fmt) for c, f, fmt
                              in zip(self.columns, batch.schema, self.formats)]
            if self.codec is not None:
                self._encoders = [_in_client_encoding(enc, fmt, c.type_oid, self.codec)
                                  for enc, c, fmt in zip(self._encoders, self.columns,
                                                         self.formats)]
        wires = [enc(col) for enc, col in zip(self._encoders, batch.columns)]
        sizes = np.full(n, 7 + 4 * ncols, dtype=np.int64)
        for offsets, _data, valid in wires:
            _frame.add_field_sizes(sizes, offsets, valid, n)
        frames = bytearray(int(sizes.sum()))
        out = np.frombuffer(frames, dtype=np.uint8)
        cursor = np.empty(n, dtype=np.int64)
        _frame.put_headers(out, cursor, sizes, n, self.kind, ncols)
        put = _frame.put_fields
        for offsets, data, valid in wires:
            put(out, cursor, offsets, data, valid, n)
        return frames, np.cumsum(sizes)


class CopyBinaryRows(DataRows):
    """Writes batches of one result as COPY TO's binary-format CopyData messages, one a
    row: a binary COPY row (field count, then each field's length and bytes, -1 for NULL)
    is a binary DataRow's body, under the type byte ``d``. The file header goes in the
    first row's message (:func:`with_header`), as PostgreSQL sends it."""

    kind = 0x64

    def __init__(self, columns: list[Column]) -> None:
        super().__init__(columns, [1] * len(columns))


def with_header(frames: bytearray, header: bytes) -> bytearray:
    """``frames`` (CopyData messages) with ``header`` at the start of the first one's data."""
    length = int.from_bytes(frames[1:5], "big") + len(header)
    return bytearray(b"d" + length.to_bytes(4, "big") + header) + frames[5:]


#: types whose text is digits, signs, ``.:-+ e``, ``t``/``f``, ``NaN``/``Infinity``
_NO_ESCAPES = frozenset({pgt.BOOL, pgt.INT2, pgt.INT4, pgt.INT8, pgt.OID, pgt.FLOAT4,
                         pgt.FLOAT8, pgt.NUMERIC, pgt.DATE, pgt.TIMESTAMP, pgt.TIMESTAMPTZ,
                         pgt.TIME})
_COPY_SPECIAL = {ord("\\"): ord("\\"), 8: ord("b"), 12: ord("f"), 10: ord("n"), 13: ord("r"),
                 9: ord("t"), 11: ord("v")}


class CopyTextRows:
    """Writes batches of one result as COPY TO's text-format CopyData messages (one a row,
    as :class:`pgbarrier.pgproto.copy_data.TextWriter` writes them)."""

    def __init__(self, columns: list[Column], delimiter: str, null: str) -> None:
        self.columns = columns
        table = np.zeros(256, dtype=np.uint8)
        for c, e in _COPY_SPECIAL.items():
            table[c] = e
        d = delimiter.encode("utf-8")
        if len(d) == 1 and not table[d[0]]:
            table[d[0]] = d[0]
        self.escapes = table
        self.delimiter = d[0]
        # the text of numbers, dates and times has no byte to escape, unless the delimiter
        # is one of its characters
        plain = not set(delimiter) & set("0123456789 -+:.eEaINfinityt")
        self.scan = [not (plain and c.type_oid in _NO_ESCAPES) for c in columns]
        self.null = np.frombuffer(null.encode("utf-8") or b"\0", dtype=np.uint8)[
            :len(null.encode("utf-8"))].copy()
        self._encoders: list[Encode] | None = None

    def frame(self, batch: pa.RecordBatch) -> bytearray:
        n = batch.num_rows
        ncols = batch.num_columns
        if self._encoders is None:
            self._encoders = [column_encoder(c, f.type, 0)
                              for c, f in zip(self.columns, batch.schema)]
        wires = [enc(col) for enc, col in zip(self._encoders, batch.columns)]
        sizes = np.full(n, 5, dtype=np.int64)
        escapes = self.escapes
        extras = [np.empty(n, dtype=np.int64) for _ in wires]
        for (offsets, data, valid), extra, scan in zip(wires, extras, self.scan):
            _frame.copy_sizes(sizes, extra, offsets, data, valid, n, escapes, len(self.null),
                              scan)
        if ncols == 0:
            sizes += 1
        frames = bytearray(int(sizes.sum()))
        out = np.frombuffer(frames, dtype=np.uint8)
        cursor = np.empty(n, dtype=np.int64)
        _frame.put_headers(out, cursor, sizes, n, 0x64, -1)  # 'd'
        if ncols == 0:
            out[cursor] = 0x0A
        for i, ((offsets, data, valid), extra) in enumerate(zip(wires, extras)):
            _frame.put_copy_fields(out, cursor, extra, offsets, data, valid, n, escapes,
                                   self.null, 0x0A if i == ncols - 1 else self.delimiter)
        return frames


class CopyCsvRows:
    """Writes batches of one result as COPY TO's CSV-format CopyData messages (one a row,
    as :class:`pgbarrier.pgproto.copy_data.CsvWriter` writes them): each column's text
    (:func:`column_encoder`), quoted where ``CsvWriter.field`` quotes it (``force``
    columns, the NULL string, a delimiter, quote, CR or LF; a lone column's ``\\.``),
    sized and written by the compiled loops (``rowframe.csv_sizes``,
    ``rowframe.put_csv_fields``) as the text format's are."""

    def __init__(self, columns: list[Column], delimiter: str, null: str, quote: str,
                 escape: str, force: set[int]) -> None:
        self.columns = columns
        # COPY's delimiter, quote and escape are single one-byte characters
        # (sql.copy_options checks): bytes here, as the loops compare them
        d, q, e = delimiter.encode("utf-8")[0], quote.encode("utf-8")[0], \
            escape.encode("utf-8")[0]
        self.delimiter, self.quote, self.escape = d, q, e
        self.special = np.zeros(256, dtype=np.uint8)
        for byte in (d, q, 0x0A, 0x0D):
            self.special[byte] = 1
        self.doubled = np.zeros(256, dtype=np.uint8)
        self.doubled[q] = self.doubled[e] = 1
        encoded = null.encode("utf-8")
        self.null = np.frombuffer(encoded or b"\0", dtype=np.uint8)[:len(encoded)].copy()
        self.force = [i in force for i in range(len(columns))]
        self.lone = len(columns) == 1
        # the text of numbers, dates and times has no character to quote, unless the
        # delimiter or quote is one of its characters: only the NULL string to compare
        plain = not set(delimiter + quote) & set("0123456789 -+:.eEaINfinityt")
        self.scan = [not (plain and c.type_oid in _NO_ESCAPES) for c in columns]
        self._encoders: list[Encode] | None = None

    def frame(self, batch: pa.RecordBatch) -> bytearray:
        n = batch.num_rows
        ncols = batch.num_columns
        if self._encoders is None:
            self._encoders = [column_encoder(c, f.type, 0)
                              for c, f in zip(self.columns, batch.schema)]
        wires = [enc(col) for enc, col in zip(self._encoders, batch.columns)]
        sizes = np.full(n, 5, dtype=np.int64)
        extras = [np.empty(n, dtype=np.int64) for _ in wires]
        for i, ((offsets, data, valid), extra) in enumerate(zip(wires, extras)):
            _frame.csv_sizes(sizes, extra, offsets, data, valid, n, self.special,
                             self.doubled, self.null, self.scan[i], self.force[i], self.lone)
        if ncols == 0:
            sizes += 1
        frames = bytearray(int(sizes.sum()))
        out = np.frombuffer(frames, dtype=np.uint8)
        cursor = np.empty(n, dtype=np.int64)
        _frame.put_headers(out, cursor, sizes, n, 0x64, -1)  # 'd'
        if ncols == 0:
            out[cursor] = 0x0A
        for i, ((offsets, data, valid), extra) in enumerate(zip(wires, extras)):
            _frame.put_csv_fields(out, cursor, extra, offsets, data, valid, n, self.doubled,
                                  self.null, self.quote, self.escape,
                                  0x0A if i == ncols - 1 else self.delimiter)
        return frames
