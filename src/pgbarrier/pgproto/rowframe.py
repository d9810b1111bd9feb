# cython: boundscheck=False, wraparound=False, cdivision=True
"""The per-value loops of the columnar result path: writing a batch's columns into wire bytes.

:mod:`pgbarrier.pgproto.columnar` turns a batch of rows (an Arrow record batch) into one
column of wire values at a time, each column as ``offsets`` (int64, one more than the
rows: value ``r`` is ``data[offsets[r]:offsets[r + 1]]``), ``data`` (uint8) and
``valid`` (uint8, 0 where the value is NULL). This module holds the loops that are left
per value once that is done. Rules it keeps:

* Pure functions over arrays (numpy, or anything with the buffer protocol): no I/O, no
  state, no knowledge of types beyond what each function's name says.
* The writers (:func:`put_fields`, :func:`put_copy_fields`, :func:`put_csv_fields`)
  fill a buffer whose size the caller computed, at per-row positions ``cursor`` it
  advances: columns are written one after the other, each row's fields landing in order.
  A DataRow field is a big-endian int32 length (-1 for NULL) and the bytes; a COPY text
  field is the value escaped as PostgreSQL's COPY TO escapes it (a byte table: 0 = as is,
  else the byte written after a backslash) or the NULL string, then a separator byte (the
  delimiter, or the newline after the last column); a CSV field is the value as it is or
  quoted (:func:`csv_sizes` says which), or the NULL string, then the separator.
* :func:`float8_text` is PostgreSQL's ``float8out`` with ``extra_float_digits`` > 0 (the
  shortest text that reads back, Python's ``repr``, printed in PostgreSQL's notation);
  :func:`numeric_binary` is ``numeric_send`` of decimals given as int64 unscaled values
  and their scale (up to 18 digits). :func:`pgbarrier.pgproto.types.float_text` and
  :func:`~pgbarrier.pgproto.types.numeric_send` are their per-value references (the
  differential tests hold them to the same bytes).
* This source is compiled by Cython when pgbarrier is installed (``setup.py``; its C
  types are in ``_rowframe_c.pxd`` beside it) and is the same module run as Python where
  it was not: one implementation either way (:func:`pgbarrier.accel.load` picks which);
  the ``if _COMPILED:`` branches are the same steps with C calls. Compiled, integer
  division is C's (``cdivision``): every division here has a non-negative dividend, or
  is floored by hand.
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:
    import cython

    #: True in the compiled extension: the branches under it use C (names of the .pxd)
    _COMPILED = cython.compiled
except ImportError:  # run as Python without Cython installed
    _COMPILED = False

#: numeric_send's sign words
_POS, _NEG = 0x0000, 0x4000
#: microseconds of a day
_DAY_US = 86_400_000_000
#: the most base-10000 digits an 18-digit decimal has (5 before the point, 5 after)
_NUMERIC_MAX = 8 + 2 * 10
#: DuckDB's infinite dates (days) and timestamps (microseconds): its ``infinity`` is the
#: largest value, ``-infinity`` its negation
_DATE_INF = 2_147_483_647
_TS_INF = 9_223_372_036_854_775_807


def put_fields(buf: Any, cursor: Any, offsets: Any, data: Any, valid: Any, n: int) -> None:
    """DataRow fields of one column: at ``cursor[r]`` the length word and the value's bytes."""
    for r in range(n):
        p = cursor[r]
        if valid[r]:
            a = offsets[r]
            length = offsets[r + 1] - a
            buf[p] = (length >> 24) & 0xFF
            buf[p + 1] = (length >> 16) & 0xFF
            buf[p + 2] = (length >> 8) & 0xFF
            buf[p + 3] = length & 0xFF
            p += 4
            if length:
                if _COMPILED:
                    memcpy(cython.address(buf[p]), cython.address(data[a]), length)
                else:
                    buf[p:p + length] = data[a:a + length]
                p += length
        else:
            buf[p] = 0xFF
            buf[p + 1] = 0xFF
            buf[p + 2] = 0xFF
            buf[p + 3] = 0xFF
            p += 4
        cursor[r] = p


def copy_sizes(sizes: Any, extra: Any, offsets: Any, data: Any, valid: Any, n: int,
               escapes: Any, null_length: int, scan: bool) -> None:
    """Add each row's COPY text field of one column (escaped, or the NULL string) and its
    separator byte to ``sizes``; ``extra[r]``: the backslashes its escaping adds (``scan``
    False: the caller knows no byte of the column needs one)."""
    for r in range(n):
        if valid[r]:
            a = offsets[r]
            b = offsets[r + 1]
            more = 0
            if scan:
                for i in range(a, b):
                    if escapes[data[i]]:
                        more += 1
            extra[r] = more
            sizes[r] += b - a + more + 1
        else:
            extra[r] = 0
            sizes[r] += null_length + 1


def put_copy_fields(buf: Any, cursor: Any, extra: Any, offsets: Any, data: Any, valid: Any,
                    n: int, escapes: Any, null: Any, separator: int) -> None:
    """COPY text fields of one column, each followed by ``separator`` (``extra``: from
    :func:`copy_sizes`, 0 where a value is copied as it is; ``null``: the NULL string's
    bytes, a uint8 array)."""
    null_length = len(null)
    for r in range(n):
        p = cursor[r]
        if valid[r]:
            a = offsets[r]
            length = offsets[r + 1] - a
            if extra[r] == 0:
                if length:
                    if _COMPILED:
                        memcpy(cython.address(buf[p]), cython.address(data[a]), length)
                    else:
                        buf[p:p + length] = data[a:a + length]
                    p += length
            else:
                for i in range(a, a + length):
                    c = data[i]
                    e = escapes[c]
                    if e:
                        buf[p] = 0x5C
                        buf[p + 1] = e
                        p += 2
                    else:
                        buf[p] = c
                        p += 1
        else:
            for i in range(null_length):
                buf[p + i] = null[i]
            p += null_length
        buf[p] = separator
        cursor[r] = p + 1


def csv_sizes(sizes: Any, extra: Any, offsets: Any, data: Any, valid: Any, n: int,
              special: Any, doubled: Any, null: Any, scan: bool, force: bool,
              lone: bool) -> None:
    """Add each row's COPY CSV field of one column and its separator byte to ``sizes``.
    A value is quoted, as PostgreSQL's ``CopyAttributeOutCSV`` quotes it, where ``force``
    says so, where it is the NULL string's bytes (``null``), where it is ``\\.`` alone on
    its line (``lone``: the result's only column), or where one of its bytes is
    ``special`` (the delimiter, the quote, CR, LF; ``scan`` False: the caller knows the
    column has none). ``extra[r]``: 0 where the value is written as it is, else 1 plus
    the escape bytes its quoting puts before each ``doubled`` byte (the quote and the
    escape)."""
    null_length = len(null)
    for r in range(n):
        if valid[r]:
            a = offsets[r]
            b = offsets[r + 1]
            quoted = force
            if not quoted and b - a == null_length:
                quoted = True
                for i in range(null_length):
                    if data[a + i] != null[i]:
                        quoted = False
                        break
            if not quoted and lone and b - a == 2 and data[a] == 0x5C and data[a + 1] == 0x2E:
                quoted = True
            if not quoted and scan:
                for i in range(a, b):
                    if special[data[i]]:
                        quoted = True
                        break
            if quoted:
                more = 0
                for i in range(a, b):
                    if doubled[data[i]]:
                        more += 1
                extra[r] = more + 1
                sizes[r] += b - a + more + 3
            else:
                extra[r] = 0
                sizes[r] += b - a + 1
        else:
            extra[r] = 0
            sizes[r] += null_length + 1


def put_csv_fields(buf: Any, cursor: Any, extra: Any, offsets: Any, data: Any, valid: Any,
                   n: int, doubled: Any, null: Any, quote: int, escape: int,
                   separator: int) -> None:
    """COPY CSV fields of one column, each followed by ``separator`` (``extra``: from
    :func:`csv_sizes`; ``null``: the NULL string's bytes, a uint8 array)."""
    null_length = len(null)
    for r in range(n):
        p = cursor[r]
        if valid[r]:
            a = offsets[r]
            length = offsets[r + 1] - a
            quoted = extra[r]
            if quoted:
                buf[p] = quote
                p += 1
            if quoted <= 1:
                if length:
                    if _COMPILED:
                        memcpy(cython.address(buf[p]), cython.address(data[a]), length)
                    else:
                        buf[p:p + length] = data[a:a + length]
                    p += length
            else:
                for i in range(a, a + length):
                    c = data[i]
                    if doubled[c]:
                        buf[p] = escape
                        p += 1
                    buf[p] = c
                    p += 1
            if quoted:
                buf[p] = quote
                p += 1
        else:
            for i in range(null_length):
                buf[p + i] = null[i]
            p += null_length
        buf[p] = separator
        cursor[r] = p + 1


def _pg_float(s: str) -> str:
    """Python's ``repr`` of a float in PostgreSQL's notation (fixed for decimal exponents
    -4..14, ``1e+15`` from there, ``Infinity``/``NaN``)."""
    if s.endswith(".0"):
        s = s[:len(s) - 2]
    if "e" in s:
        return s
    if s.endswith("f") or s.endswith("n"):  # inf, -inf, nan
        return "NaN" if s == "nan" else ("-Infinity" if s.startswith("-") else "Infinity")
    sign = ""
    if s.startswith("-"):
        sign = "-"
        s = s[1:]
    point = s.find(".")
    whole = s if point < 0 else s[:point]
    if len(whole) < 16 or whole[0] == "0":
        return sign + s
    # 1e15 <= |v| < 1e16: Python prints it fixed, PostgreSQL in exponent form
    digits = (whole + ("" if point < 0 else s[point + 1:])).rstrip("0")
    mant = digits[:1] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{mant}e+15"


def float8_text(values: Any, valid: Any, n: int) -> tuple[Any, Any]:
    """``float8out`` of each valid value: (offsets, data) of their texts."""
    offsets = np.zeros(n + 1, dtype=np.int64)
    offsets_v = offsets
    out = bytearray()
    for r in range(n):
        if valid[r]:
            out += _pg_float(repr(float(values[r]))).encode("ascii")
        offsets_v[r + 1] = len(out)
    return offsets, np.frombuffer(bytes(out), dtype=np.uint8)


def numeric_binary(unscaled: Any, valid: Any, n: int, scale: int, scales: Any = None
                   ) -> tuple[Any, Any]:
    """``numeric_send`` of each valid decimal ``unscaled * 10**-scale`` (at most 18 digits,
    ``0 <= scale <= 18``), or of scale ``scales[r]`` each when ``scales`` is given:
    (offsets, data)."""
    offsets = np.zeros(n + 1, dtype=np.int64)
    data = np.zeros(n * _NUMERIC_MAX, dtype=np.uint8)
    ov = offsets
    dv = data
    groups = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]  # a C array, compiled
    each = scales is not None
    at = -1  # the scale the figures below are for
    pad = nfrac = power = widen = tail = 0
    p = 0
    for r in range(n):
        if valid[r]:
            if each:
                scale = scales[r]
            if scale != at:
                at = scale
                pad = (4 - scale % 4) % 4
                nfrac = (scale + pad) // 4
                power = 1
                for i in range(scale):
                    power *= 10
                widen = 1
                for i in range(pad):
                    widen *= 10
                tail = 10000 // widen
            u = int(unscaled[r])
            negative = u < 0
            a = -u if negative else u
            whole = a // power
            frac = a % power
            # the whole part's groups, least significant first, then reversed into place
            nint = 0
            rest = whole
            while rest > 0:
                rest //= 10000
                nint += 1
            for i in range(nint):
                groups[nint - 1 - i] = whole % 10000
                whole //= 10000
            for i in range(nfrac):  # the last group holds 4 - pad digits, then pad zeros
                if i == 0:
                    groups[nint + nfrac - 1] = (frac % tail) * widen
                    frac //= tail
                else:
                    groups[nint + nfrac - 1 - i] = frac % 10000
                    frac //= 10000
            first = 0
            last = nint + nfrac
            weight = nint - 1
            while first < last and groups[first] == 0:
                first += 1
                weight -= 1
            while last > first and groups[last - 1] == 0:
                last -= 1
            ndigits = last - first
            if ndigits == 0:
                weight = 0
            sign = _NEG if negative else _POS
            dv[p] = (ndigits >> 8) & 0xFF
            dv[p + 1] = ndigits & 0xFF
            dv[p + 2] = (weight >> 8) & 0xFF
            dv[p + 3] = weight & 0xFF
            dv[p + 4] = (sign >> 8) & 0xFF
            dv[p + 5] = sign & 0xFF
            dv[p + 6] = (scale >> 8) & 0xFF
            dv[p + 7] = scale & 0xFF
            p += 8
            for i in range(first, last):
                dv[p] = (groups[i] >> 8) & 0xFF
                dv[p + 1] = groups[i] & 0xFF
                p += 2
        ov[r + 1] = p
    return offsets, data[:p]


def datetime_text(values: Any, valid: Any, n: int, kind: int, zones: Any = None
                  ) -> tuple[Any, Any]:
    """Text of int64 values: ``kind`` 0 dates (days since 1970-01-01, ``YYYY-MM-DD``),
    1 timestamps (microseconds since 1970, ``YYYY-MM-DD HH:MM:SS[.ffffff]``), 2 times
    (microseconds into the day), 3 timestamps with time zone in UTC (``...+00``), 4
    timestamps with time zone in another zone: ``values`` the local times and ``zones``
    (int32) each one's UTC offset in seconds, written after it as PostgreSQL writes an
    offset (``+01``, ``-03:30``, ``+00:53:28``); trailing fractional zeros dropped, as
    PostgreSQL prints them (:func:`pgbarrier.pgproto.types._datetime_text`, for years 1 to
    9999). The civil date is H. Hinnant's ``civil_from_days``; the clock is
    :func:`_put_clock`, as an interval's. DuckDB's infinities (:data:`_DATE_INF`,
    :data:`_TS_INF` and their negations; for ``kind`` 4 the local time is the infinity
    itself) are ``infinity`` and ``-infinity``, as PostgreSQL prints them."""
    offsets = np.zeros(n + 1, dtype=np.int64)
    data = np.zeros(n * (40 if kind == 4 else 32) + 1, dtype=np.uint8)
    ov = offsets
    dv = data
    p = 0
    for r in range(n):
        if valid[r]:
            v = int(values[r])
            if kind == 0 and (v == _DATE_INF or v == -_DATE_INF) or \
                    kind != 0 and kind != 2 and (v == _TS_INF or v == -_TS_INF):
                p = _put_infinity(dv, p, v < 0)
                ov[r + 1] = p
                continue
            micros = 0
            if kind == 0:
                days = v
            elif kind == 2:
                days = 0
                micros = v
            else:
                days = v // 1_000_000 // 86_400  # constant divisors: compiled, no idiv
                if days * _DAY_US > v:  # compiled, division truncates: floor it
                    days -= 1
                micros = v - days * _DAY_US
            if kind != 2:
                z = days + 719468
                era = (z if z >= 0 else z - 146096) // 146097
                doe = z - era * 146097
                yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
                year = yoe + era * 400
                doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
                mp = (5 * doy + 2) // 153
                day = doy - (153 * mp + 2) // 5 + 1
                month = mp + 3 if mp < 10 else mp - 9
                if month <= 2:
                    year += 1
                width = 4
                rest = year // 10000
                while rest > 0:
                    width += 1
                    rest //= 10
                for i in range(width - 1, -1, -1):
                    dv[p + i] = 48 + year % 10
                    year //= 10
                p += width
                dv[p] = 45  # -
                p = _put_two(dv, p + 1, month)
                dv[p] = 45
                p = _put_two(dv, p + 1, day)
                if kind != 0:
                    dv[p] = 32  # space
                    p += 1
            if kind != 0:
                p = _put_clock(dv, p, micros)
                if kind == 3:
                    dv[p] = 43  # +
                    dv[p + 1] = 48
                    dv[p + 2] = 48
                    p += 3
                elif kind == 4:
                    zone = int(zones[r])
                    dv[p] = 43 if zone >= 0 else 45  # + or -
                    if zone < 0:
                        zone = -zone
                    minutes = zone // 60 % 60
                    seconds = zone % 60
                    p = _put_two(dv, p + 1, zone // 3600)
                    if minutes or seconds:
                        dv[p] = 58  # :
                        p = _put_two(dv, p + 1, minutes)
                    if seconds:
                        dv[p] = 58
                        p = _put_two(dv, p + 1, seconds)
        ov[r + 1] = p
    return offsets, data


def decimal_text(unscaled: Any, valid: Any, n: int, scale: int) -> tuple[Any, Any]:
    """``numeric_out`` of decimals ``unscaled * 10**-scale`` (at most 18 digits): every
    fractional digit of the scale, never an exponent."""
    offsets = np.zeros(n + 1, dtype=np.int64)
    data = np.zeros(n * 22 + 1, dtype=np.uint8)
    ov = offsets
    dv = data
    power = 1
    for i in range(scale):
        power *= 10
    p = 0
    for r in range(n):
        if valid[r]:
            u = int(unscaled[r])
            if u < 0:
                dv[p] = 45  # -
                p += 1
                u = -u
            frac = u % power
            p = _put_int(dv, p, u // power)
            if scale:
                dv[p] = 46  # .
                for i in range(scale, 0, -1):
                    dv[p + i] = 48 + frac % 10
                    frac //= 10
                p += scale + 1
        ov[r + 1] = p
    return offsets, data


def _put_int(dv: Any, p: int, v: int) -> int:
    """The decimal digits of ``v`` (a minus sign first when negative) at ``dv[p]``; returns
    the position after them."""
    if v < 0:
        dv[p] = 45  # -
        p += 1
        u = -(v + 1)  # compiled, unsigned: int64's lowest has no positive twin
        u += 1
    else:
        u = v
    width = 1
    rest = u // 10
    while rest > 0:
        width += 1
        rest //= 10
    for i in range(width - 1, -1, -1):
        dv[p + i] = 48 + u % 10
        u //= 10
    return p + width


def _put_infinity(dv: Any, p: int, negative: bool) -> int:
    """``infinity`` (``-infinity`` when ``negative``) at ``dv[p]``; returns the position
    after it."""
    if negative:
        dv[p] = 45  # -
        p += 1
    dv[p] = 105  # i
    dv[p + 1] = 110  # n
    dv[p + 2] = 102  # f
    dv[p + 3] = 105  # i
    dv[p + 4] = 110  # n
    dv[p + 5] = 105  # i
    dv[p + 6] = 116  # t
    dv[p + 7] = 121  # y
    return p + 8


def _put_two(dv: Any, p: int, v: int) -> int:
    """``v`` (0 to 99) as two digits at ``dv[p]``; returns the position after them."""
    dv[p] = 48 + v // 10
    dv[p + 1] = 48 + v % 10
    return p + 2


def _put_clock(dv: Any, p: int, micros: int) -> int:
    """``HH:MM:SS`` of ``micros`` (>= 0; the hours in two digits or more), then ``.`` and
    the fraction's digits without trailing zeros, if any: a time of day's and an
    interval's clock alike; returns the position after it."""
    secs = micros // 1_000_000
    frac = micros % 1_000_000
    hour = secs // 3600
    minute = secs // 60 % 60
    second = secs % 60
    if hour < 10:
        dv[p] = 48
        p += 1
    p = _put_int(dv, p, hour)
    dv[p] = 58  # :
    p = _put_two(dv, p + 1, minute)
    dv[p] = 58
    p = _put_two(dv, p + 1, second)
    if frac:
        width = 6
        while frac % 10 == 0:
            frac //= 10
            width -= 1
        dv[p] = 46  # .
        for i in range(width, 0, -1):
            dv[p + i] = 48 + frac % 10
            frac //= 10
        p += width + 1
    return p


def _put_unit(dv: Any, p: int, v: int, unit: bytes, first: bool, before_negative: bool
              ) -> int:
    """`` 1 year``'s part of an interval: a space unless ``first``, ``+`` when a negative
    field came before a positive one, the number, the unit, ``s`` unless the number is 1."""
    if not first:
        dv[p] = 32  # space
        p += 1
    if before_negative and v > 0:
        dv[p] = 43  # +
        p += 1
    p = _put_int(dv, p, v)
    dv[p] = 32
    p += 1
    for i in range(len(unit)):
        dv[p + i] = unit[i]
    p += len(unit)
    if v != 1:
        dv[p] = 115  # s
        p += 1
    return p


def interval_text(months: Any, days: Any, micros: Any, valid: Any, n: int
                  ) -> tuple[Any, Any]:
    """``interval_out`` in IntervalStyle ``postgres`` of intervals given as their three
    fields (int64 arrays): ``1 year 2 mons -3 days +04:05:06.5``, a positive field after a
    negative one marked ``+``, hours past 24 kept in the time
    (:func:`pgbarrier.pgproto.types.interval_text` is the per-value reference)."""
    offsets = np.zeros(n + 1, dtype=np.int64)
    data = np.zeros(n * 80 + 1, dtype=np.uint8)
    ov = offsets
    dv = data
    p = 0
    for r in range(n):
        if valid[r]:
            start = p
            m = int(months[r])
            years = (-m if m < 0 else m) // 12
            mons = (-m if m < 0 else m) % 12
            if m < 0:
                years = -years
                mons = -mons
            d = int(days[r])
            before_negative = False
            if years:
                p = _put_unit(dv, p, years, b"year", p == start, before_negative)
                before_negative = years < 0
            if mons:
                p = _put_unit(dv, p, mons, b"mon", p == start, before_negative)
                before_negative = mons < 0
            if d:
                p = _put_unit(dv, p, d, b"day", p == start, before_negative)
                before_negative = d < 0
            v = int(micros[r])
            if v or p == start:
                if p != start:
                    dv[p] = 32
                    p += 1
                if v < 0:
                    dv[p] = 45  # -
                    p += 1
                    u = -(v + 1)  # compiled, unsigned: int64's lowest has no positive twin
                    u += 1
                else:
                    if before_negative and v > 0:
                        dv[p] = 43  # +
                        p += 1
                    u = v
                p = _put_clock(dv, p, u)
        ov[r + 1] = p
    return offsets, data


def hex_text(offsets: Any, data: Any, valid: Any, n: int) -> tuple[Any, Any]:
    """``byteaout`` (hex): ``\\x`` and two lowercase hex digits a byte."""
    size = 1
    for r in range(n):
        if valid[r]:
            size += 2 + 2 * (offsets[r + 1] - offsets[r])
    out_offsets = np.zeros(n + 1, dtype=np.int64)
    out = np.zeros(size, dtype=np.uint8)
    ov = out_offsets
    dv = out
    p = 0
    for r in range(n):
        if valid[r]:
            dv[p] = 92  # backslash
            dv[p + 1] = 120  # x
            p += 2
            for i in range(offsets[r], offsets[r + 1]):
                c = data[i]
                h = c >> 4
                lo = c & 15
                dv[p] = 48 + h if h < 10 else 87 + h
                dv[p + 1] = 48 + lo if lo < 10 else 87 + lo
                p += 2
        ov[r + 1] = p
    return out_offsets, out


def array_text(lists: Any, present: Any, n: int, offsets: Any, data: Any, valid: Any
               ) -> tuple[Any, Any]:
    """``array_out`` of one-dimensional arrays: row ``r`` holds elements ``lists[r]`` to
    ``lists[r + 1]`` (``present[r]``: not NULL) of the elements' wire text (``offsets``,
    ``data``, ``valid``): ``{1,NULL,"a b"}``, an element quoted when it is empty, is
    ``NULL`` in any case or holds ``{},"\\`` or white space, with ``"`` and ``\\`` escaped
    (:func:`pgbarrier.pgproto.types._array_text` is the per-value reference)."""
    size = 2 * n + 1
    for r in range(n):
        if present[r]:
            for j in range(lists[r], lists[r + 1]):
                size += 2 * (offsets[j + 1] - offsets[j]) + 6
    out_offsets = np.zeros(n + 1, dtype=np.int64)
    out = np.zeros(size, dtype=np.uint8)
    ov = out_offsets
    dv = out
    p = 0
    for r in range(n):
        if present[r]:
            dv[p] = 123  # {
            p += 1
            for j in range(lists[r], lists[r + 1]):
                if j > lists[r]:
                    dv[p] = 44  # ,
                    p += 1
                if not valid[j]:
                    dv[p] = 78  # NULL
                    dv[p + 1] = 85
                    dv[p + 2] = 76
                    dv[p + 3] = 76
                    p += 4
                    continue
                a = offsets[j]
                b = offsets[j + 1]
                quote = a == b or (b - a == 4 and data[a] | 32 == 110 and data[a + 1] | 32 == 117
                                   and data[a + 2] | 32 == 108 and data[a + 3] | 32 == 108)
                for i in range(a, b):
                    c = data[i]
                    if c == 123 or c == 125 or c == 44 or c == 34 or c == 92 or c == 32 \
                            or (9 <= c <= 13):
                        quote = True
                        break
                if quote:
                    dv[p] = 34  # "
                    p += 1
                    for i in range(a, b):
                        c = data[i]
                        if c == 34 or c == 92:
                            dv[p] = 92  # backslash
                            p += 1
                        dv[p] = c
                        p += 1
                    dv[p] = 34
                    p += 1
                else:
                    for i in range(a, b):
                        dv[p] = data[i]
                        p += 1
            dv[p] = 125  # }
            p += 1
        ov[r + 1] = p
    return out_offsets, out


def array_binary(lists: Any, present: Any, n: int, offsets: Any, data: Any, valid: Any,
                 element: int) -> tuple[Any, Any]:
    """``array_send`` of one-dimensional arrays (as :func:`array_text` gives them) of
    elements of type ``element`` in their binary wire form: dimensions (none for an empty
    array), a has-NULLs flag, the element type, the length and lower bound 1, then each
    element's length (-1 for NULL) and bytes."""
    size = 1
    for r in range(n):
        if present[r]:
            size += 20
            for j in range(lists[r], lists[r + 1]):
                size += 4 + offsets[j + 1] - offsets[j]
    out_offsets = np.zeros(n + 1, dtype=np.int64)
    out = np.zeros(size, dtype=np.uint8)
    ov = out_offsets
    dv = out
    p = 0
    for r in range(n):
        if present[r]:
            count = lists[r + 1] - lists[r]
            nulls = 0
            for j in range(lists[r], lists[r + 1]):
                if not valid[j]:
                    nulls = 1
                    break
            _put_int32(dv, p, 1 if count else 0)
            _put_int32(dv, p + 4, nulls)
            _put_int32(dv, p + 8, element)
            p += 12
            if count:
                _put_int32(dv, p, count)
                _put_int32(dv, p + 4, 1)
                p += 8
            for j in range(lists[r], lists[r + 1]):
                if not valid[j]:
                    _put_int32(dv, p, -1)
                    p += 4
                    continue
                a = offsets[j]
                length = offsets[j + 1] - a
                _put_int32(dv, p, length)
                p += 4
                for i in range(length):
                    dv[p + i] = data[a + i]
                p += length
        ov[r + 1] = p
    return out_offsets, out


def _put_int32(dv: Any, p: int, v: int) -> None:
    """A big-endian int32 at ``dv[p]`` (two's complement)."""
    dv[p] = (v >> 24) & 0xFF  # shifts floor (Python) or are arithmetic (C): the same bytes
    dv[p + 1] = (v >> 16) & 0xFF
    dv[p + 2] = (v >> 8) & 0xFF
    dv[p + 3] = v & 0xFF


def add_field_sizes(sizes: Any, offsets: Any, valid: Any, n: int) -> None:
    """Add each row's DataRow field of one column (its value's bytes) to ``sizes``."""
    for r in range(n):
        if valid[r]:
            sizes[r] += offsets[r + 1] - offsets[r]


def put_headers(buf: Any, cursor: Any, sizes: Any, n: int, kind: int, ncols: int) -> None:
    """Each row's message header from ``cursor[r]`` on: the type byte ``kind``, the length
    (``sizes[r]`` less the type byte) and, for a DataRow (``ncols`` >= 0), the column
    count; ``cursor`` is set to each row's start in ``buf`` and advanced past its header."""
    p = 0
    for r in range(n):
        length = sizes[r] - 1
        buf[p] = kind
        buf[p + 1] = (length >> 24) & 0xFF
        buf[p + 2] = (length >> 16) & 0xFF
        buf[p + 3] = (length >> 8) & 0xFF
        buf[p + 4] = length & 0xFF
        if ncols >= 0:
            buf[p + 5] = (ncols >> 8) & 0xFF
            buf[p + 6] = ncols & 0xFF
            cursor[r] = p + 7
        else:
            cursor[r] = p + 5
        p += sizes[r]
